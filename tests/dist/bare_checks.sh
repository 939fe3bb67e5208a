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

echo "== the static CLI $cli"
"$cli" --version
"$cli" --version | head -1 | grep -q "^onnxzip $version " || fail "$cli --version does not say $version"
if "$cli" --version | grep -E '\bno\b'; then fail "$cli lacks a feature (above)"; fi
mkdir -p cli && cd cli
"$venv/bin/python" /work/bare/make_example_model.py model.onnx > /dev/null
"$cli" pack model.onnx -o model.onnxzip
ok "pack model.onnx"
"$cli" ls model.onnxzip | tee ls.txt
grep -q "fc1.weight" ls.txt || fail "ls does not list fc1.weight"
ok "ls"
"$cli" verify model.onnxzip
ok "verify"
"$cli" unpack model.onnxzip back/model.onnx
"$venv/bin/python" /work/bare/make_example_model.py --compare model.onnx back/model.onnx || fail "unpack differs (onnx)"
ok "unpack gives back the model (onnx compares)"
mkdir -p repo && cp model.onnx repo/ && echo '{"model_type": "mlp"}' > repo/config.json
"$cli" pack repo -o pkg.onnxzip
"$cli" sign pkg.onnxzip --private-key /work/bare/keys/key.pem
"$cli" verify pkg.onnxzip --public-key /work/bare/keys/pub.pem
ok "sign, then verify --public-key"
if "$cli" verify pkg.onnxzip --public-key /work/bare/keys/other.pub.pem 2> wrong.txt; then
    fail "verify with another key passed"
fi
grep -q ESIGNATURE wrong.txt || fail "verify with another key: $(cat wrong.txt)"
ok "verify with another key: ESIGNATURE"
cp model.onnxzip pkg.onnxzip /work/bare/www/
"$cli" ls --allow-http "${url}model.onnxzip" > /dev/null
"$cli" fetch -q --allow-http "${url}model.onnxzip" -o fetched.onnxzip
cmp fetched.onnxzip model.onnxzip || fail "fetch: not the served file"
ok "ls and fetch over HTTP, byte for byte"
"$cli" fetch -q --allow-http "${url}pkg.onnxzip" -o fetched-pkg.onnxzip --public-key /work/bare/keys/pub.pem
cmp fetched-pkg.onnxzip pkg.onnxzip || fail "fetch --public-key: not the served file"
ok "fetch --public-key over HTTP"
echo "all checks passed"
