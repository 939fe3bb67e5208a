"""Checks a repaired wheel from outside and prints what it carries.

    wheel_check.py WHEEL

Extracted into a temporary directory, the extension onnxzip/_native*.so and
the tool onnxzip/_bin/onnxzip must resolve, by ldd (the dynamic loader's own
search), every library but those the wheel's manylinux policy lets it take
from the system (auditwheel's list: glibc's, libz, ...) from the wheel's
onnxzip.libs/; libcurl,
libcrypto and jansson must be among them (remote archives and signatures are
in every release wheel). Prints the wheel's size, its platform tag, each
bundled library with its size, their total, and the number of their
license files (wheel_licenses.py's).
"""
import importlib.resources
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from typing import NoReturn

NEEDED = ("libcurl", "libcrypto", "libjansson")


def fail(msg: str) -> NoReturn:
    sys.exit(f"wheel_check.py: {msg}")


def system_libs(tag: str) -> "set[str]":
    """The libraries policy `tag` (manylinux_2_N_x86_64) takes from the
    system, as auditwheel's policy file lists them, plus the loader."""
    policies = json.loads((importlib.resources.files("auditwheel.policy") / "manylinux-policy.json").read_text())
    policy = next(p for p in policies if tag == p["name"] + "_x86_64")
    return set(policy["lib_whitelist"]) | {"linux-vdso.so.1", "/lib64/ld-linux-x86-64.so.2"}


def main(wheel: str) -> None:
    name = os.path.basename(wheel)
    m = re.match(r"onnxzip-[^-]+-(cp3\d+)-(cp3\d+)-(manylinux_2_\d+_x86_64)\.whl$", name)
    if not m:
        fail(f"{name}: not an onnxzip-VERSION-cp3X-cp3X-manylinux_2_N_x86_64 wheel")
    system = system_libs(m.group(3))
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        z.extractall(tmp)
        names = z.namelist()
        for n in names:  # zipfile drops the mode bits pip restores
            mode = z.getinfo(n).external_attr >> 16
            if mode:
                os.chmod(os.path.join(tmp, n), mode & 0o777)
        libs = sorted(n for n in names if n.startswith("onnxzip.libs/") and not n.endswith("/"))
        elves = [n for n in names if re.match(r"onnxzip/_native\..*\.so$", n)] + ["onnxzip/_bin/onnxzip"]
        for elf in elves:
            if elf not in names:
                fail(f"{name}: no {elf}")
            out = subprocess.run(["ldd", os.path.join(tmp, elf)], check=True, stdout=subprocess.PIPE,
                                 text=True).stdout
            for line in out.splitlines():
                lib = line.split()[0]
                if "not found" in line:
                    fail(f"{name}: {elf}: {lib} not found (ldd)")
                where = os.path.normpath(line.split("=>")[1].split("(")[0].strip()) if "=>" in line else ""
                if lib not in system and not where.startswith(os.path.join(tmp, "onnxzip.libs") + "/"):
                    fail(f"{name}: {elf}: {lib} resolves to {where or 'the system'}, not to the wheel's onnxzip.libs/")
        for want in NEEDED:
            if not any(os.path.basename(n).startswith(want) for n in libs):
                fail(f"{name}: no {want} in onnxzip.libs/ (remote archives and signatures need it)")
        total = sum(z.getinfo(n).file_size for n in libs)
        licenses = [n for n in names if re.match(r"[^/]+\.dist-info/licenses/onnxzip\.libs/", n)]
        if not licenses:
            fail(f"{name}: no license files of onnxzip.libs/ in the dist-info (wheel_licenses.py)")
    print(f"{name}: {os.path.getsize(wheel) / 1024:.0f} KiB; tag {m.group(3)}; "
          f"{len(libs)} bundled libraries, {total / 1024:.0f} KiB uncompressed:")
    for n in libs:
        print(f"  {os.path.basename(n):44} {zipfile.ZipFile(wheel).getinfo(n).file_size / 1024:8.0f} KiB")
    print(f"  license files in the dist-info: {len(licenses)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
