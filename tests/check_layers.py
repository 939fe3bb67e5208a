#!/usr/bin/env python3
"""The library's layers (src/README.md): a file of src/LAYER/ includes only
headers of its own layer or of layers below it, by their layer-qualified
names ("common/buf.h"); every .c has at most ~800 lines and the median .c at
most 300. Prints one line per check and "N passed, N failed".

    check_layers.py SRC_DIR
"""
import re
import statistics
import sys
from pathlib import Path

# lowest first: each layer may include its own and those before it
LAYERS = ["common", "onnx", "read", "write", "convert"]
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
    for rank, layer in enumerate(LAYERS):
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
                    check(LAYERS.index(head) <= rank, f"{f} ({layer}) includes {inc}, a header of a layer above it")
                else:
                    check(head == "onnxzip", f"{f}: #include \"{inc}\" is of no layer")
    median = statistics.median(lines) if lines else 0
    check(median <= MAX_MEDIAN, f"median .c file: {median} lines, over {MAX_MEDIAN}")
    print(f"layers: {len(lines)} .c files, median {median} lines, largest {max(lines, default=0)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
