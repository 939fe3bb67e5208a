#!/bin/bash
# Run by tests/dist/bare_debian.sh inside its bare Debian, from /work/bare:
#
#   bare_checks.sh VERSION URL ONNX_REQUIREMENT
#
# /work/bare holds dist/ (the wheels and the static CLI) and
# readme_install.sh (the README's "Install" block). URL is the base URL of
# /work/bare/www on the host's nginx. Each check says what it checked; the
# first failure ends the script with exit status 1.
set -euo pipefail
version=$1 url=$2 onnx_req=$3
cd /work/bare
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== the README's Install block, as written ($(python3 --version))"
cat readme_install.sh
SECONDS=0
bash -e readme_install.sh || fail "the README's Install block (above)"
echo "TIME README install: $SECONDS s"
venv=~/onnxzip-venv
cli=/usr/local/bin/onnxzip
[ -x "$venv/bin/onnxzip" ] && [ -x "$cli" ] || fail "the Install block did not install $venv/bin/onnxzip and $cli"
"$venv/bin/pip" install -q --disable-pip-version-check "$onnx_req"
"$venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -Ei '^(onnxzip|numpy|onnx) '
ok "installed as the README says; $onnx_req added as the oracle"

echo "== the wheel's onnxzip command"
v=$("$venv/bin/onnxzip" --version) || fail "$venv/bin/onnxzip --version: exit $?"
echo "$v"
[[ $v == "onnxzip $version "* ]] || fail "$venv/bin/onnxzip --version does not say $version"
ok "onnxzip --version says $version"

echo "== Python: import, open, views, verify, trust, fetch, open_url (bare_checks.py)"
"$venv/bin/python" bare_checks.py "$version" "$url" || fail "bare_checks.py"

echo "== the static CLI (cli_checks.sh)"
bash /work/bare/cli_checks.sh "$cli" "$version" "$url" /work/bare/www /work/bare/keys "$venv/bin/python" \
    /work/bare/make_example_model.py /work/bare/cli || fail "cli_checks.sh"
echo "all checks passed"
