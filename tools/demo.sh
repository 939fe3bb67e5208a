#!/usr/bin/env bash
# The demo: installs the dependencies (.ci/install-deps), builds onnxzip into
# build/, writes a small real ONNX model and packs, lists and verifies it.
# Then it shows that the archive is an ordinary zip: `unzip` it, rename
# __MODEL_PROTO to model.onnx, and the `onnx` Python package loads the
# result as a classic external-data model with the same weights.
# Everything it writes goes to build/example/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
py=/usr/bin/python3   # Debian's python, the one with python3-onnx
out=build/example

step() { printf '\n$ %s\n' "$*"; "$@"; }

"$root/.ci/install-deps"

if [ -f build/meson-private/coredata.dat ]; then
    meson setup --reconfigure build || meson setup --wipe build
else
    meson setup build
fi
meson compile -C build

rm -rf "$out"
mkdir -p "$out"
step "$py" tools/make_example_model.py "$out/tiny.onnx"
step build/tools/onnxzip pack "$out/tiny.onnx" -o "$out/tiny.onnxzip"
step build/tools/onnxzip ls "$out/tiny.onnxzip"
step build/tools/onnxzip verify "$out/tiny.onnxzip"

# Any zip tool reads it: every entry is STORED, __MODEL_PROTO comes last.
step unzip -v "$out/tiny.onnxzip"
step unzip -q "$out/tiny.onnxzip" -d "$out/unzipped"
step mv "$out/unzipped/__MODEL_PROTO" "$out/unzipped/model.onnx"
step "$py" tools/make_example_model.py --compare "$out/tiny.onnx" "$out/unzipped/model.onnx"

printf '\nDemo done: files are in %s/\n' "$out"
