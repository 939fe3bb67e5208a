#!/bin/bash
# The static CLI's checks, on this machine (tests/dist/cli.sh) and in the bare
# Debian (tests/dist/bare_checks.sh):
#
#   cli_checks.sh CLI VERSION URL WWW KEYS PYTHON MAKE_MODEL WORK [HTTPS_URL CA_FILE]
#
# URL is the base URL under which an HTTP server (tests/dist/serve.py's nginx)
# serves the directory WWW; KEYS holds key.pem, pub.pem and other.pub.pem (EC
# keys made by openssl); PYTHON has onnx and numpy, to run MAKE_MODEL
# (tools/make_example_model.py) for the model and, as the oracle, to compare
# what unpack gives back with it (and its zipfile reads what pack writes).
# Each check says what it checked; the first failure ends the script with
# exit status 1. HTTPS_URL serves WWW too, over TLS with a certificate that
# CA_FILE (PEM) signs and the system's CAs do not.
set -euo pipefail
[ $# -eq 8 ] || [ $# -eq 10 ] ||
    { echo "usage: $0 CLI VERSION URL WWW KEYS PYTHON MAKE_MODEL WORK [HTTPS_URL CA_FILE]" >&2; exit 2; }
cli=$1 version=$2 url=$3 www=$4 keys=$5 python=$6 make_model=$7 work=$8
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== $cli"
if command -v file > /dev/null; then  # (a bare machine has no file(1): there it runs with no library at all)
    file "$cli" | grep -q 'statically linked' || fail "$cli is not statically linked: $(file "$cli")"
fi
"$cli" --version
"$cli" --version | head -1 | grep -q "^onnxzip $version " || fail "$cli --version does not say $version"
if "$cli" --version | grep -E '\bno\b'; then fail "$cli lacks a feature (above)"; fi
for f in 'model_proto (protobuf-c)' 'repack (libzip)' 'signing (libcrypto, jansson)' 'remote (libcurl)'; do
    "$cli" --version | grep -qF "$f yes" || fail "$cli --version does not say '$f yes'"
done
mkdir -p "$work" && cd "$work"
"$python" "$make_model" model.onnx > /dev/null
"$cli" pack model.onnx -o model.onnxzip
# Python's zipfile, an independent zip reader: every entry's CRC-32 checked
"$python" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); bad = z.testzip()
sys.exit(f"zipfile: {bad} fails its CRC-32" if bad else 0)' model.onnxzip || fail "zipfile rejects model.onnxzip"
ok "pack model.onnx (zipfile reads every entry)"
"$cli" ls model.onnxzip | tee ls.txt
grep -q "fc1.weight" ls.txt || fail "ls does not list fc1.weight"
ok "ls"
"$cli" verify model.onnxzip
ok "verify"
"$cli" unpack model.onnxzip -o back/model.onnx
"$python" "$make_model" --compare model.onnx back/model.onnx || fail "unpack differs (onnx)"
ok "unpack gives back the model (onnx compares)"
mkdir -p repo && cp model.onnx repo/ && echo '{"model_type": "mlp"}' > repo/config.json
"$cli" pack repo -o pkg.onnxzip
"$cli" sign pkg.onnxzip --private-key $keys/key.pem
"$cli" verify pkg.onnxzip --public-key $keys/pub.pem
ok "sign, then verify --public-key"
if "$cli" verify pkg.onnxzip --public-key $keys/other.pub.pem 2> wrong.txt; then
    fail "verify with another key passed"
fi
grep -q ESIGNATURE wrong.txt || fail "verify with another key: $(cat wrong.txt)"
ok "verify with another key: ESIGNATURE"
cp model.onnxzip pkg.onnxzip "$www/"
"$cli" ls --allow-http "${url}model.onnxzip" > /dev/null
"$cli" fetch -q --allow-http "${url}model.onnxzip" -o fetched.onnxzip
cmp fetched.onnxzip model.onnxzip || fail "fetch: not the served file"
ok "ls and fetch over HTTP, byte for byte"
"$cli" fetch -q --allow-http "${url}pkg.onnxzip" -o fetched-pkg.onnxzip --public-key $keys/pub.pem
cmp fetched-pkg.onnxzip pkg.onnxzip || fail "fetch --public-key: not the served file"
ok "fetch --public-key over HTTP"
# Static glibc resolves through its built-in files and dns modules only: a
# name from /etc/hosts must work where the system's resolver finds it.
if getent hosts localhost > /dev/null; then
    "$cli" fetch -q --allow-http "${url/127.0.0.1/localhost}model.onnxzip" -o fetched-localhost.onnxzip
    cmp fetched-localhost.onnxzip model.onnxzip || fail "fetch through localhost: not the served file"
    ok "fetch from localhost (/etc/hosts)"
else
    echo "note: this machine resolves no 'localhost' (getent hosts): the name check cannot run"
fi
if [ $# -eq 10 ]; then
    https=$9 ca=${10}
    "$cli" fetch -q --ca-file "$ca" "${https}model.onnxzip" -o fetched-https.onnxzip
    cmp fetched-https.onnxzip model.onnxzip || fail "fetch over HTTPS: not the served file"
    ok "fetch over HTTPS (static OpenSSL, --ca-file)"
    # the system's CAs (the compiled-in /etc/ssl/certs paths) do not sign it: refused
    if "$cli" fetch -q "${https}model.onnxzip" -o refused.onnxzip 2> untrusted.txt; then
        fail "fetch over HTTPS trusted a certificate no CA of the system signs"
    fi
    [ ! -e refused.onnxzip ] || fail "a refused fetch left refused.onnxzip"
    cat untrusted.txt
    ok "fetch over HTTPS without --ca-file: refused"
fi
echo "cli_checks.sh: all passed"
