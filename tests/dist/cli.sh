#!/usr/bin/env bash
# The static CLI on this machine:
#
#   tests/dist/cli.sh DIST WORK
#
# DIST/onnxzip-VERSION-linux-x86_64 (tools/dist.sh --only cli) through
# cli_checks.sh: statically linked (ldd here, file), its version and
# features, pack, ls, verify, unpack (onnx compares), sign + verify --public-key (keys by
# openssl; another key: ESIGNATURE), ls and fetch over HTTP from nginx
# (tests/dist/serve.py, on 127.0.0.1), the fetched bytes compared by cmp,
# and over HTTPS (the same nginx with a certificate for 127.0.0.1 made by
# openssl, trusted through --ca-file; refused without it).
# Debian's /usr/bin/python3 (onnx, numpy) runs the model's maker and oracle.
set -euo pipefail
# shellcheck source=args.sh
. "$(dirname "${BASH_SOURCE[0]}")/args.sh"
cli=$dist/onnxzip-$version-linux-x86_64
[ -x "$cli" ] || { echo "cli.sh: FAIL: no $cli (tools/dist.sh --only cli)" >&2; exit 1; }
# glibc's loader, besides cli_checks.sh's file(1): no shared library at all
if ldd "$cli" > "$work/ldd.txt" 2>&1 || ! grep -q 'not a dynamic executable' "$work/ldd.txt"; then
    echo "cli.sh: FAIL: ldd $cli lists shared libraries:" >&2; cat "$work/ldd.txt" >&2; exit 1
fi
echo "ok: ldd: not a dynamic executable"
mkdir -p "$work/www" "$work/keys"
for k in key other; do
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/keys/$k.pem" 2>/dev/null
done
openssl ec -in "$work/keys/key.pem" -pubout -out "$work/keys/pub.pem" 2>/dev/null
openssl ec -in "$work/keys/other.pem" -pubout -out "$work/keys/other.pub.pem" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/keys/tls.key" -out "$work/keys/tls.crt" 2>/dev/null
servers=()
trap 'kill "${servers[@]}" 2>/dev/null; wait "${servers[@]}" 2>/dev/null || true' EXIT
serve() { # URLFILE [CERT KEY]: nginx serving WWW, its base URL in URLFILE
    rm -f "$1"
    /usr/bin/python3 "$here/serve.py" "$work/www" "$@" &
    servers+=($!)
    for _ in $(seq 100); do [ -f "$1" ] || sleep 0.1; done
    [ -f "$1" ] || { echo "cli.sh: FAIL: nginx did not start" >&2; exit 1; }
}
serve "$work/url"
serve "$work/https-url" "$work/keys/tls.crt" "$work/keys/tls.key"
"$here/cli_checks.sh" "$cli" "$version" "$(cat "$work/url")" "$work/www" "$work/keys" /usr/bin/python3 \
    "$repo/tools/make_example_model.py" "$work/run" "$(cat "$work/https-url")" "$work/keys/tls.crt"
