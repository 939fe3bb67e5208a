#!/usr/bin/env python3
"""Assembles the npm package directory: everything in SRC (src/js) but wasm/
(the C binding, this script), meson.build and node_modules, plus the built
onnxzip.wasm at the package's top. Run on every build (build_always_stale),
so that edits to the .js files show up; the new directory replaces the old
one whole (built beside it, then renamed).

    assemble_package.py SRC WASM OUT STAMP
"""
import shutil
import sys
from pathlib import Path

SKIP = {"wasm", "meson.build", "node_modules"}


def main() -> int:
    src, wasm, out, stamp = (Path(a) for a in sys.argv[1:5])
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for p in sorted(src.iterdir()):
        if p.name in SKIP or p.name.startswith("."):
            continue
        if p.is_dir():
            shutil.copytree(p, tmp / p.name, ignore=shutil.ignore_patterns("node_modules", ".*"))
        else:
            shutil.copy2(p, tmp / p.name)
    shutil.copy2(wasm, tmp / "onnxzip.wasm")
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    stamp.write_text("")
    return 0


if __name__ == "__main__":
    sys.exit(main())
