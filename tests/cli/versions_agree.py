#!/usr/bin/env python3
"""One version: `onnxzip --version` and the assembled npm package.json both
say meson.build's project() version (given by meson, the only coordination).

    versions_agree.py VERSION ONNXZIP_CLI [PACKAGE_JSON]
"""
import json
import subprocess
import sys


def main() -> int:
    want, cli = sys.argv[1], sys.argv[2]
    bad = []
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
    first = out.splitlines()[0] if out else ""
    if want not in first.split():
        bad.append(f"{cli} --version says {first!r}, meson.build {want}")
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as f:
            got = json.load(f).get("version")
        if got != want:
            bad.append(f"{sys.argv[3]} says version {got!r}, meson.build {want}")
    for b in bad:
        print(f"versions_agree: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
