#!/usr/bin/env bash
# The release artifacts on a machine where nothing else is installed:
#
#   tests/dist/bare_debian.sh DIST        (as root; DIST as tools/dist.sh writes it)
#
# A fresh minimal Debian 12 (.ci/chroot-lib.sh: debootstrap minbase) gets
# python3, python3-venv and ca-certificates from apt, and nothing else: no
# compiler, no -dev package, none of onnxzip's libraries (checked). Into it go
# DIST's wheels and static CLI (as dist/) and tests/dist/bare_checks.*. There
# the README's "Install" block runs as written (its npm line left out: no
# Node.js there; tests/dist/node.sh installs the tarball), which installs the
# wheel for Debian's Python into ~/onnxzip-venv and the CLI into
# /usr/local/bin; then the checks (onnx from PyPI added as the oracle that
# makes the model and reads it back): import, open, views, verify, sign +
# verify with a key, fetch and open_url from a local nginx (started here on
# 127.0.0.1, which the chroot shares), the wheel's `onnxzip` command; the
# static CLI's pack, ls, verify and fetch. Exit status 0 when every check
# passes.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIST" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bare_debian.sh: must run as root (chroot, mount)" >&2; exit 2; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$(cd "$1" && pwd)
version=$("$repo/tools/dist/version.sh")
cli=$dist/onnxzip-$version-linux-x86_64
wheels=("$dist"/onnxzip-"$version"-cp3*-manylinux_*_x86_64.whl)
[ -f "${wheels[0]}" ] || { echo "bare_debian.sh: no manylinux wheel of $version in $dist (tools/dist.sh)" >&2; exit 1; }
[ -x "$cli" ] || { echo "bare_debian.sh: no $cli (tools/dist.sh --only cli)" >&2; exit 1; }
command -v openssl >/dev/null || { echo "bare_debian.sh: openssl (the host's) makes the test keys" >&2; exit 1; }

keep=0 refresh=0
# shellcheck source=../../.ci/chroot-lib.sh
. "$repo/.ci/chroot-lib.sh"
nginx_pid=
stop_nginx() { [ -z "$nginx_pid" ] || { kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null || true; }; }
trap 's=$?; stop_nginx; (exit $s); cleanup' EXIT
chroot_new
chroot_setup

in_chroot() { # COMMAND...: as root in the chroot, a fresh machine's environment
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

say "apt-get install python3 python3-venv ca-certificates"
t=$(now)
in_chroot apt-get update -q
in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    python3 python3-venv ca-certificates
echo "TIME apt: $(since "$t") s"
say "nothing else"
# shellcheck disable=SC2016 # expanded in the chroot
in_chroot /bin/bash -c '
    for c in cc gcc clang ld; do ! command -v $c || { echo "a compiler or linker: $c"; exit 1; }; done
    dev=$(dpkg-query -W -f "\${Package}\n" | grep -- "-dev$" | tr "\n" " ")
    echo "-dev packages: ${dev:-none}"
    # (libxxhash is there: minbase'"'"'s apt links it)
    libs=$(ldconfig -p | grep -E "lib(protobuf-c|deflate|jansson|curl|zip)\." || true)
    [ -z "$libs" ] || { echo "onnxzip libraries present: $libs"; exit 1; }
    echo "none of libprotobuf-c, libdeflate, libjansson, libcurl, libzip; no compiler"'

work=$root/work/bare
mkdir -p "$work/www" "$work/keys"
mkdir -p "$work/dist"
cp "${wheels[@]}" "$cli" "$work/dist/"
cp "$repo/tests/dist/bare_checks.sh" "$repo/tests/dist/bare_checks.py" "$repo/tests/dist/cli_checks.sh" \
    "$repo/tools/make_example_model.py" "$work/"
# The README's "Install" block, as written, but for npm (no Node.js here)
awk '/^## Install$/ { on = 1; next } on && /^## / { exit } on && /^```sh$/ { code = 1; next }
     code && /^```$/ { exit } code' "$repo/README.md" > "$work/readme_install.all"
grep -q 'pip install' "$work/readme_install.all" || { echo "bare_debian.sh: no sh block under README's ## Install"; exit 1; }
grep -v '^npm ' "$work/readme_install.all" > "$work/readme_install.sh"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/keys/key.pem" 2>/dev/null
openssl ec -in "$work/keys/key.pem" -pubout -out "$work/keys/pub.pem" 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out "$work/keys/other.pem" 2>/dev/null
openssl ec -in "$work/keys/other.pem" -pubout -out "$work/keys/other.pub.pem" 2>/dev/null

say "nginx on 127.0.0.1 serving /work/bare/www"
python3 "$repo/tests/dist/serve.py" "$work/www" "$work/url" &
nginx_pid=$!
for _ in $(seq 100); do [ -f "$work/url" ] || sleep 0.1; done
[ -f "$work/url" ] || { echo "bare_debian.sh: nginx did not start"; exit 1; }
echo "$(cat "$work/url")"

say "checks (tests/dist/bare_checks.sh)"
t=$(now)
status=0
# onnx pinned as the Python tests pin it
onnx_req=$(grep -E '^onnx==' "$repo/tests/python/requirements.txt")
in_chroot /bin/bash /work/bare/bare_checks.sh "$version" "$(cat "$work/url")" "$onnx_req" ||
    status=$?
echo "TIME checks: $(since "$t") s"
echo "bare_debian.sh: $([ $status = 0 ] && echo "all checks passed" || echo "FAILED (exit $status)")"
exit $status
