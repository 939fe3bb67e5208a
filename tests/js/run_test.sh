#!/bin/sh
# run_test.sh FILE.test.mjs — runs one node --test file of tests/js for meson,
# or skips it (exit 77, saying why) when what it needs is absent: node, the
# npm packages of tests/js (.ci/install-deps: npm ci --ignore-scripts), the
# package built with its WebAssembly (-Djs). Env: ONNXZIP_JS_PACKAGE (the
# assembled package directory), ONNXZIP_CLI.
# ONNXZIP_JS_REQUIRED=1 (.ci/run sets it) turns each reason to skip into a
# failure: CI installs all of it, so a skip there would hide a broken install.
here=$(cd "$(dirname "$0")" && pwd)
skip() {
    if [ "${ONNXZIP_JS_REQUIRED-}" = 1 ]; then echo "FAIL (ONNXZIP_JS_REQUIRED=1): $*"; exit 1; fi
    echo "SKIP: $*"; exit 77
}
command -v node >/dev/null 2>&1 || skip "node not found (Debian: apt-get install nodejs)"
[ -d "$here/node_modules/onnxruntime-node" ] ||
    skip "$here/node_modules absent: run .ci/install-deps (or cd tests/js && npm ci --ignore-scripts)"
[ -n "${ONNXZIP_JS_PACKAGE-}" ] || skip "ONNXZIP_JS_PACKAGE not set"
[ -f "$ONNXZIP_JS_PACKAGE/onnxzip.wasm" ] ||
    skip "no $ONNXZIP_JS_PACKAGE/onnxzip.wasm: the JS package is not built here (-Djs, clang-14 wasm32-wasi)"
# the spec reporter (node >= 18.15; TAP before) ends with totals meson's log shows
exec node --test --test-reporter=spec "$@"
