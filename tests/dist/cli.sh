#!/usr/bin/env bash
# The static CLI on this machine:
#
#   tests/dist/cli.sh DIST WORK
#
# DIST/onnxzip-VERSION-linux-x86_64 (tools/dist.sh --only cli) through
# cli_checks.sh: statically linked (file), its version and features, pack,
# ls, verify, unpack (onnx compares), sign + verify --public-key (keys by
# openssl; another key: ESIGNATURE), ls and fetch over HTTP from nginx
# (tests/dist/serve.py, on 127.0.0.1), the fetched bytes compared by cmp.
# Debian's /usr/bin/python3 (onnx, numpy) runs the model's maker and oracle.
set -euo pipefail
# shellcheck source=args.sh
. "$(dirname "${BASH_SOURCE[0]}")/args.sh"
cli=$dist/onnxzip-$version-linux-x86_64
[ -x "$cli" ] || { echo "cli.sh: FAIL: no $cli (tools/dist.sh --only cli)" >&2; exit 1; }
mkdir -p "$work/www" "$work/keys"
for k in key other; do
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/keys/$k.pem" 2>/dev/null
done
openssl ec -in "$work/keys/key.pem" -pubout -out "$work/keys/pub.pem" 2>/dev/null
openssl ec -in "$work/keys/other.pem" -pubout -out "$work/keys/other.pub.pem" 2>/dev/null
rm -f "$work/url"
/usr/bin/python3 "$here/serve.py" "$work/www" "$work/url" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -f "$work/url" ] || sleep 0.1; done
[ -f "$work/url" ] || { echo "cli.sh: FAIL: nginx did not start" >&2; exit 1; }
"$here/cli_checks.sh" "$cli" "$version" "$(cat "$work/url")" "$work/www" "$work/keys" /usr/bin/python3 \
    "$repo/tools/make_example_model.py" "$work/run"
