#!/usr/bin/env python3
"""The library's layers (src/README.md): a file of src/LAYER/ includes only
headers of its own layer or of the layers it stands on (BELOW), by their
layer-qualified names ("common/buf.h"); the Python binding (src/python)
and the WebAssembly binding (src/js/wasm) include only the public headers
(include/onnxzip/) and their own; every .c has at most ~800 lines and the
median .c at most 300. Prints one line per check and "N passed, N failed".

    check_layers.py SRC_DIR
"""
import re
import statistics
import sys
from pathlib import Path

# lowest first; each layer may include its own headers and those of the
# layers it stands on. The network (net) sits on common only and is used by
# the reader (remote archives) and the converters (fetch), never by onnx or
# the writer. trust (signatures) stands on everything else.
LAYERS = ["common", "net", "onnx", "read", "write", "convert", "trust"]
BELOW = {
    "common": set(),
    "net": {"common"},
    "onnx": {"common"},
    "read": {"common", "net", "onnx"},
    "write": {"common", "onnx", "read"},
    "convert": {"common", "net", "onnx", "read", "write"},
    # signatures over packages: parses bundles, checks them with libcrypto
    # and hashes the files convert's plans say unpack would write
    "trust": {"common", "net", "onnx", "read", "write", "convert"},
}
# bindings: directories whose C files use the library through its public
# headers only (and headers of their own directory)
BINDINGS = ["python/onnxzip", "js/wasm"]
MAX_LINES, MAX_MEDIAN = 800, 300
GENERATED = {"onnx.pb-c.h", "onnx_schema_table.h"}  # proto/meson.build
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def main() -> int:
    src = Path(sys.argv[1])
    passed = failed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        if not ok:
            print(f"FAIL: {what}")

    stray = sorted(p.name for p in src.glob("*.[ch]"))
    check(not stray, f"files of no layer directly in {src}: {stray}")
    lines = []
    for layer in LAYERS:
        files = sorted((src / layer).glob("*.[ch]"))
        check(bool(files), f"layer {layer}: no files in {src / layer}")
        for f in files:
            text = f.read_text()
            if f.suffix == ".c":
                lines.append(text.count("\n"))
                check(text.count("\n") <= MAX_LINES, f"{f}: {text.count(chr(10))} lines, over {MAX_LINES}")
            for inc in INCLUDE.findall(text):
                head = inc.split("/")[0]
                if "/" not in inc:
                    # generated from proto/onnx.proto, or an unqualified name
                    check(inc in GENERATED, f"{f}: #include \"{inc}\" does not name its layer")
                elif head in LAYERS:
                    check(head == layer or head in BELOW[layer],
                          f"{f} ({layer}) includes {inc}, a header of layer {head}, which {layer} does not stand on")
                else:
                    check(head == "onnxzip", f"{f}: #include \"{inc}\" is of no layer")
    for binding in BINDINGS:
        files = sorted((src / binding).glob("*.[ch]"))
        check(bool(files), f"binding {binding}: no C files in {src / binding}")
        own = {f.name for f in files}
        for f in files:
            for inc in INCLUDE.findall(f.read_text()):
                check(inc.startswith("onnxzip/") or inc in own,
                      f"{f} (a binding) includes {inc}: bindings use the public headers (include/onnxzip/) only")
    median = statistics.median(lines) if lines else 0
    check(median <= MAX_MEDIAN, f"median .c file: {median} lines, over {MAX_MEDIAN}")
    print(f"layers: {len(lines)} .c files, median {median} lines, largest {max(lines, default=0)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
