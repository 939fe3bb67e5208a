"""Adds the copyright and license files of the libraries auditwheel grafted
into a wheel, which auditwheel (6.x) does not: each library of
onnxzip.libs/ is traced to the Debian package it was copied from (dpkg -S on
its original file name), whose /usr/share/doc/PACKAGE/copyright goes into
the wheel as DIST-INFO/licenses/onnxzip.libs/PACKAGE.copyright, declared by
a License-File line of METADATA (core metadata 2.4, PEP 639) and hashed
into RECORD. The wheel is rewritten through a temporary file and renamed.

    wheel_licenses.py WHEEL
"""
import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from typing import Dict, List, NoReturn


def fail(msg: str) -> NoReturn:
    sys.exit(f"wheel_licenses.py: {msg}")


def package_of(grafted: str) -> str:
    """The Debian package of a grafted library: auditwheel's name is the
    original's with "-" and 8 hex digits of its hash before the first dot."""
    original = re.sub(r"-[0-9a-f]{8}(?=\.)", "", grafted, count=1)
    if original == grafted:
        fail(f"onnxzip.libs/{grafted}: not a name auditwheel gives (NAME-HASH.so...)")
    proc = subprocess.run(["dpkg", "-S", f"*/{original}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pkgs = {line.split(":")[0] for line in proc.stdout.splitlines() if line.strip()}
    if proc.returncode != 0 or len(pkgs) != 1:
        fail(f"onnxzip.libs/{grafted}: its original {original} is not in exactly one Debian package "
             f"(dpkg -S: {proc.stdout.strip() or proc.stderr.strip()})")
    return pkgs.pop()


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main(wheel: str) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        contents = {n: z.read(n) for n in names}
        infos = {n: z.getinfo(n) for n in names}
    info = next(n.split("/")[0] for n in names if re.match(r"[^/]+\.dist-info/METADATA$", n))
    libs = sorted(os.path.basename(n) for n in names if n.startswith("onnxzip.libs/") and not n.endswith("/"))
    added: Dict[str, bytes] = {}
    for lib in libs:
        pkg = package_of(lib)
        path = f"/usr/share/doc/{pkg}/copyright"
        if not os.path.isfile(path):
            fail(f"onnxzip.libs/{lib}: its package {pkg} has no {path}")
        with open(path, "rb") as f:
            added[f"{info}/licenses/onnxzip.libs/{pkg}.copyright"] = f.read()
    if any(n in contents for n in added):
        fail(f"{wheel}: already has license files of onnxzip.libs/")
    meta = contents[f"{info}/METADATA"].decode()
    head, sep, body = meta.partition("\n\n")  # the headers, then the description
    lines: List[str] = [f"License-File: {n[len(info) + len('/licenses/'):]}" for n in sorted(added)]
    contents[f"{info}/METADATA"] = (head + "\n" + "\n".join(lines) + sep + body).encode()
    record = [r for r in contents[f"{info}/RECORD"].decode().splitlines()
              if r and not r.startswith(f"{info}/METADATA,") and not r.startswith(f"{info}/RECORD,")]
    record += [record_line(f"{info}/METADATA", contents[f"{info}/METADATA"])]
    record += [record_line(n, d) for n, d in sorted(added.items())] + [f"{info}/RECORD,,"]
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(wheel)), suffix=".whl")
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
            for n in names:
                if n != f"{info}/RECORD":
                    out.writestr(infos[n], contents[n], zipfile.ZIP_DEFLATED)
            for n, d in sorted(added.items()):
                out.writestr(n, d)
            out.writestr(infos[f"{info}/RECORD"], contents[f"{info}/RECORD"], zipfile.ZIP_DEFLATED)
        os.chmod(tmp, os.stat(wheel).st_mode & 0o777)  # mkstemp's is 0600
        os.replace(tmp, wheel)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"{os.path.basename(wheel)}: the copyright files of {len(added)} Debian packages for "
          f"{len(libs)} bundled libraries")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
