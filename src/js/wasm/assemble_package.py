#!/usr/bin/env python3
"""Assembles the npm package directory: everything in SRC (src/js) but wasm/
(the C binding, this script), meson.build and node_modules, plus the built
onnxzip.wasm at the package's top, and package.json with "version" set to
VERSION, meson.build's project() version (the source package.json has none:
one version for the library, the CLI, the wheel and the npm package). Run on every build (build_always_stale),
so that edits to the .js files show up; the new directory replaces the old
one whole (built beside it, then renamed).

    assemble_package.py SRC WASM OUT STAMP VERSION
"""
import json
import shutil
import sys
from pathlib import Path

SKIP = {"wasm", "meson.build", "node_modules"}


def main() -> int:
    src, wasm, out, stamp = (Path(a) for a in sys.argv[1:5])
    version = sys.argv[5]
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
    meta = json.loads((src / "package.json").read_text(encoding="utf-8"))
    if "version" in meta:
        print(f"assemble_package.py: {src / 'package.json'} has a version; meson.build's ({version}) is the one",
              file=sys.stderr)
        return 1
    stamped = {}
    for k, v in meta.items():
        stamped[k] = v
        if k == "name":  # "version" after "name", as npm writes it
            stamped["version"] = version
    (tmp / "package.json").write_text(json.dumps(stamped, indent=2) + "\n", encoding="utf-8")
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
