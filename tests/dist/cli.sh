#!/usr/bin/env bash
# The static CLI on this machine:
#
#   tests/dist/cli.sh DIST WORK
#
# DIST/onnxzip-VERSION-linux-x86_64 (tools/dist.sh --only cli) through
# cli_checks.sh: statically linked (ldd here, file), its version and
# features, pack, ls, verify, unpack (onnx compares), sign + verify
# --public-key (keys by openssl; another key: ESIGNATURE), ls and fetch
# over HTTP from nginx (tests/dist/serve.py, on 127.0.0.1), the fetched
# bytes compared by cmp,
# and over HTTPS (the same nginx with a certificate for 127.0.0.1 made by
# openssl, trusted through --ca-file; refused without it; trusted through
# /etc/ssl/cert.pem where /etc/ssl/certs/ca-certificates.crt is missing).
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
# Where Debian's CA bundle (libcurl's built-in path) is missing, as on Fedora
# or openSUSE, another distribution's is used: /etc/ssl replaced, in a mount
# namespace of its own (root), by a tmpfs holding only cert.pem (Alpine's name).
if unshare -m true 2> /dev/null; then
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare -m bash -c 'set -e; mount -t tmpfs tmpfs /etc/ssl; cp "$1" /etc/ssl/cert.pem
        "$2" fetch -q "$3" -o "$4"' - "$work/keys/tls.crt" "$cli" "$(cat "$work/https-url")model.onnxzip" \
        "$work/cert-pem.onnxzip" || { echo "cli.sh: FAIL: fetch over HTTPS with only /etc/ssl/cert.pem" >&2; exit 1; }
    cmp "$work/cert-pem.onnxzip" "$work/www/model.onnxzip" || { echo "cli.sh: FAIL: not the served file" >&2; exit 1; }
    echo "ok: fetch over HTTPS trusting /etc/ssl/cert.pem where Debian's bundle is missing"
else
    echo "note: no mount namespace here (unshare -m needs root): the CA bundle fallback is not checked"
fi
