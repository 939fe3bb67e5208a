#!/usr/bin/python3
"""zip_readers — a package's names and fillers as other zip readers read them (spec 7.3, 4.3).

    zip_readers.py ONNXZIP_EXE [--keep DIR]

Names: `pack DIR` of a folder with non-ASCII paths (café.txt, 模型/config.json)
is read by Python's zipfile, Node's yauzl and fflate (tests/js/zip_names.mjs,
tests/js/node_modules), 7-Zip (7z), libarchive (bsdtar), Java's
java.util.zip.ZipFile (a single-file source program) and Info-ZIP unzip,
each naming every file as the folder does (readers that follow the zip
specification read a name without general purpose bit 11 as CP437:
'caf├⌐.txt'). Extracted by unzip and bsdtar in LC_ALL=C.UTF-8, and by unzip
in LC_ALL=C, the files have the folder's bytes and names, in LC_ALL=C as
Info-ZIP unzip spells a character the locale cannot: 'caf#U00e9.txt',
'#U6a21#U578b/config.json' (its escape for a UTF-8-marked name whose entry
carries an extra field, as 7-Zip's do and ours always do); bsdtar refuses to list the names (exit 1, "cannot be converted from UTF-8 to
current locale"), as it does for any zip whose names are marked UTF-8: an
ASCII locale cannot spell them, and refusing beats a wrong name (spec 7.3).
Repack and set-model rewrite the package with the same flags.

Our reader (spec 7.3): the Info-ZIP Unicode Path field (0x7075) repeating a
name, with bit 11 clear, is accepted (central and local, the local one
carved from the alignment padding so the data offset stays); one whose CRC
is not the name's, or naming the entry otherwise, is refused (ENAME,
central or local: a rule of names, spec 7.3), as is one of another version.

Fillers (spec 4.3): a package packed at --align 65536 that needs a filler
passes `zipalign -c 65536` (every stored entry, fillers too) and `onnxzip
verify`; `unzip -t` accepts it and lists the files, the manifest and the
fillers, which spec 4.3 says extract as empty files.
Prints "zip_readers: N passed, M failed"; exits 1 on any failure.
"""
import json
import os
import shutil
import struct
import sys
import zipfile
import zlib

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import ozcommon  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
JS_DIR = os.path.join(HERE, "..", "js")
FILES = {"café.txt": b"hi\n", "模型/config.json": b"{}\n", "plain.txt": b"ascii\n"}
UTF8 = dict(os.environ, LC_ALL="C.UTF-8")
C_LOCALE = dict(os.environ, LC_ALL="C")

JAVA = """import java.util.zip.*; import java.util.*; import java.nio.charset.StandardCharsets;
public class Names { public static void main(String[] a) throws Exception {
  try (ZipFile z = new ZipFile(a[0])) { for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements();) {
    StringBuilder s = new StringBuilder();
    for (byte b : e.nextElement().getName().getBytes(StandardCharsets.UTF_8)) s.append(String.format("%02x", b));
    System.out.println(s); } } } }
"""


def make_folder(d, extra=None):
    os.makedirs(os.path.join(d, "模型"), exist_ok=True)
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    onnx.save(helper.make_model(g), os.path.join(d, "model.onnx"))
    for name, data in {**FILES, **(extra or {})}.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def folder_names(d):
    out = []
    for root, _, files in os.walk(d):
        out += [os.path.relpath(os.path.join(root, f), d) for f in files]
    return sorted(out)


def members(names):
    """The folder's files among a reader's names (the manifest and fillers left out)."""
    return sorted(n for n in names if not n.startswith("__"))


def run_ok(cmd, env=None):
    p = ozcommon.run(cmd, env=env)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd[:2])}: exit {p.returncode}: {p.stderr.decode(errors='replace')[-300:]}")
    return p.stdout.decode("utf-8")


def reader_names(arc, work):
    """Every reader's names for `arc`, by reader."""
    out = {}
    with zipfile.ZipFile(arc) as z:
        out["zipfile"] = z.namelist()
    if not all(os.path.isdir(os.path.join(JS_DIR, "node_modules", m)) for m in ("yauzl", "fflate")):
        raise RuntimeError("tests/js/node_modules lacks yauzl or fflate: run .ci/install-deps "
                           "(npm ci in tests/js from its package-lock.json)")
    js = json.loads(run_ok(["node", os.path.join(JS_DIR, "zip_names.mjs"), arc]))
    out["yauzl"], out["fflate"] = js["yauzl"], js["fflate"]
    slt = run_ok(["7z", "l", "-slt", "-sccUTF-8", arc], UTF8)
    out["7z"] = [ln[7:] for ln in slt.splitlines() if ln.startswith("Path = ")][1:]  # [0]: the archive
    out["bsdtar"] = run_ok(["bsdtar", "-tf", arc], UTF8).splitlines()
    java = os.path.join(work, "Names.java")
    with open(java, "w") as f:
        f.write(JAVA)
    out["java"] = [bytes.fromhex(x).decode() for x in run_ok(["java", java, arc], UTF8).split()]
    out["unzip -Z1"] = run_ok(["unzip", "-Z1", arc], UTF8).splitlines()
    return out


def unzip_c_name(name):
    """Info-ZIP unzip's name in an ASCII locale: #Uxxxx for a character of the BMP, #Lxxxxxx beyond."""
    return "".join(c if c.isascii() else f"#U{ord(c):04x}" if ord(c) < 0x10000 else f"#L{ord(c):06x}"
                   for c in name)


def check_extracted(t, what, d, want_dir, spell=lambda n: n):
    got = {n: open(os.path.join(d, n), "rb").read() for n in members(folder_names(d))}
    want = {spell(n): open(os.path.join(want_dir, n), "rb").read() for n in folder_names(want_dir)}
    t.check(got == want, what, f"files {sorted(got)} != {sorted(want)}")


def check_names(t, exe, work):
    src = os.path.join(work, "repo")
    make_folder(src)
    want = folder_names(src)
    arc = os.path.join(work, "names.onnxzip")
    # 4096: café.txt's alignment padding has room for a local 0x7075 field (check_upath)
    run_ok([exe, "pack", src, "-o", arc, "--align", "4096", "--no-sync", "-q"])
    run_ok([exe, "verify", arc])
    try:
        got = reader_names(arc, work)
    except (RuntimeError, OSError, ValueError) as e:
        t.check(False, "readers", str(e))
        return arc
    for reader, names in got.items():
        t.check(members(names) == want, f"names by {reader}", f"{members(names)} != {want}")
    with zipfile.ZipFile(arc) as z:
        flags = {i.filename: i.flag_bits & 0x800 for i in z.infolist()}
    t.check(all(bool(f) == (not n.isascii()) for n, f in flags.items()), "bit 11 on exactly the non-ASCII names",
            str(flags))
    for tool, env in (("unzip", UTF8), ("unzip", C_LOCALE), ("bsdtar", UTF8)):
        d = os.path.join(work, f"x-{tool}-{env['LC_ALL']}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        cmd = ["unzip", "-q", arc, "-d", d] if tool == "unzip" else ["bsdtar", "-xf", arc, "-C", d]
        p = ozcommon.run(cmd, env=env)
        if t.check(p.returncode == 0, f"{tool} LC_ALL={env['LC_ALL']}", p.stderr.decode(errors="replace")):
            check_extracted(t, f"{tool} LC_ALL={env['LC_ALL']} extracts the folder's names and bytes", d, src,
                            unzip_c_name if env is C_LOCALE else lambda n: n)
    p = ozcommon.run(["bsdtar", "-tf", arc], env=C_LOCALE)
    t.check(p.returncode == 1 and b"cannot be converted from UTF-8 to current locale" in p.stderr,
            "bsdtar LC_ALL=C refuses the UTF-8 names (documented, spec 7.3)",
            f"exit {p.returncode}: {p.stderr[-200:]!r}")
    for what in ("repack", "set-model"):  # the package rewritten: the same flags
        out = os.path.join(work, f"{what}.onnxzip")
        if what == "repack":
            p = ozcommon.run([exe, "repack", arc, "-o", out, "-q"])
        else:
            shutil.copyfile(arc, out)
            p = ozcommon.run([exe, "set-model", out, os.path.join(src, "model.onnx"), "--model", "model.onnx", "-q"])
        if t.check(p.returncode == 0, what, p.stderr.decode(errors="replace")):
            with zipfile.ZipFile(out) as z:
                t.check(members(z.namelist()) == want, f"{what}: names by zipfile", str(z.namelist()))
    return arc


# --- the Info-ZIP Unicode Path field (0x7075) in our reader -------------------------------

def upath_field(name, crc=None, version=1):
    body = bytes([version]) + struct.pack("<I", zlib.crc32(name) if crc is None else crc) + name
    return struct.pack("<HH", 0x7075, len(body)) + body


def rewrite(src, dst, target, local=None, central=None):
    """Copies zip `src` to `dst` with entry `target`'s bit 11 cleared and the
    given 0x7075 fields: `central` inserted in its central record, `local`
    carved from its local alignment padding (data offsets unchanged)."""
    b = bytearray(open(src, "rb").read())
    eocd = b.rfind(b"PK\x05\x06")
    n, cd_size, cd_off = struct.unpack_from("<HII", b, eocd + 10)
    cd, pos = bytearray(), cd_off
    for _ in range(n):
        nlen, xlen, clen = struct.unpack_from("<HHH", b, pos + 28)
        size = 46 + nlen + xlen + clen
        rec = bytearray(b[pos:pos + size])
        name, lho = bytes(rec[46:46 + nlen]), struct.unpack_from("<I", rec, 42)[0]
        if name.decode() == target:
            struct.pack_into("<H", rec, 8, struct.unpack_from("<H", rec, 8)[0] & ~0x800)
            if central is not None:
                rec[46 + nlen:46 + nlen] = central
                struct.pack_into("<H", rec, 30, xlen + len(central))
            lnlen, lxlen = struct.unpack_from("<HH", b, lho + 26)
            struct.pack_into("<H", b, lho + 6, struct.unpack_from("<H", b, lho + 6)[0] & ~0x800)
            if local is not None:
                x = lho + 30 + lnlen
                al = b.find(b"\x35\xd9", x, x + lxlen)  # the alignment field, last
                pad = struct.unpack_from("<H", b, al + 2)[0] - 2
                if pad < len(local):
                    raise RuntimeError(f"{target}: {pad} padding bytes, the field needs {len(local)}")
                claim = struct.unpack_from("<H", b, al + 4)[0]
                b[al:x + lxlen] = local + struct.pack("<HHH", 0xD935, 2 + pad - len(local), claim) + \
                    bytes(pad - len(local))
        cd += rec
        pos += size
    out = b[:cd_off] + cd + b[cd_off + cd_size:]
    e = len(out) - (len(b) - eocd)
    struct.pack_into("<I", out, e + 12, len(cd))
    open(dst, "wb").write(out)


def check_upath(t, exe, work, arc):
    name = "café.txt".encode()
    cases = [  # (what, local field, central field, status or None)
        ("0x7075 repeating the name, bit 11 clear", upath_field(name), upath_field(name), None),
        ("0x7075 in the central record only", None, upath_field(name), None),
        ("central 0x7075 with another name's CRC", None, upath_field(name, crc=zlib.crc32(b"cafe.txt")),
         "ONNXZIP_ENAME"),
        ("central 0x7075 naming another file", None, upath_field("cafè.txt".encode(), crc=zlib.crc32(name)),
         "ONNXZIP_ENAME"),
        ("central 0x7075 of version 2", None, upath_field(name, version=2), "ONNXZIP_ENAME"),
        ("local 0x7075 with another name's CRC", upath_field(name, crc=1), upath_field(name), "ONNXZIP_ENAME"),
        ("local 0x7075 naming another file", upath_field("cafè.txt".encode(), crc=zlib.crc32(name)),
         upath_field(name), "ONNXZIP_ENAME"),
    ]
    for i, (what, local, central, status) in enumerate(cases):
        dst = os.path.join(work, f"upath{i}.onnxzip")
        try:
            rewrite(arc, dst, "café.txt", local, central)
        except RuntimeError as e:
            t.check(False, what, str(e))
            continue
        for cmd in (["verify", dst], ["ls", dst]):
            p = ozcommon.run([exe] + cmd)
            err = p.stderr.decode(errors="replace")
            if status is None:
                t.check(p.returncode == 0, f"{what}: {cmd[0]} accepts it", err)
            else:
                t.check(p.returncode != 0 and status in err and "Unicode Path" in err and "caf" in err,
                        f"{what}: {cmd[0]} refuses it ({status})", f"exit {p.returncode}: {err}")
        if status is None:
            with zipfile.ZipFile(dst) as z:  # the bit really is clear: zipfile reads CP437
                t.check("caf├⌐.txt" in z.namelist(), f"{what}: bit 11 cleared", str(z.namelist()))
            got = json.loads(run_ok(["node", os.path.join(JS_DIR, "zip_names.mjs"), dst]))["yauzl"]
            t.check("café.txt" in got, f"{what}: yauzl reads the field", str(got))


# --- fillers -------------------------------------------------------------------------------

def check_fillers(t, exe, work):
    """a.bin (65496 bytes, data at 65536) ends at 131032, where b.bin's header
    would need 65535 padding bytes: a filler goes first."""
    src = os.path.join(work, "filler_repo")
    make_folder(src, {"a.bin": bytes(range(256)) * 255 + bytes(216), "b.bin": b"b"})
    arc = os.path.join(work, "filler.onnxzip")
    p = ozcommon.run([exe, "pack", src, "-o", arc, "--align", "65536", "--no-sync", "-q"])
    if not t.check(p.returncode == 0, "pack --align 65536", p.stderr.decode(errors="replace")):
        return
    with zipfile.ZipFile(arc) as z:
        names = z.namelist()
    fillers = [n for n in names if n.startswith("__PAD_")]
    # spec 4.3's example: b.bin's header would be at H = 131032 (N = 65535); __PAD_0 there would need
    # 65533 padding bytes, so the filler's number takes four more digits
    t.check(fillers == ["__PAD_10000"], "the filler of spec 4.3's example", str(names))
    p = ozcommon.run(["zipalign", "-c", "-v", "65536", arc])
    bad = [ln for ln in p.stdout.decode(errors="replace").splitlines() if "(BAD" in ln]
    t.check(p.returncode == 0 and not bad, "zipalign -c 65536 (fillers included)", "; ".join(bad[:3]))
    p = ozcommon.run([exe, "verify", arc])
    t.check(p.returncode == 0, "verify", p.stderr.decode(errors="replace"))
    p = ozcommon.run(["unzip", "-t", "-q", arc])
    t.check(p.returncode == 0, "unzip -t", p.stdout.decode(errors="replace"))
    d = os.path.join(work, "x-filler")
    shutil.rmtree(d, ignore_errors=True)
    p = ozcommon.run(["unzip", "-q", arc, "-d", d], env=UTF8)
    if t.check(p.returncode == 0, "unzip", p.stderr.decode(errors="replace")):
        check_extracted(t, "unzip of a package with fillers: the folder's files", d, src)
        extra = sorted(set(folder_names(d)) - set(folder_names(src)))
        t.check(extra == sorted(["__PACKAGE"] + fillers), "unzip adds only __PACKAGE and the fillers (spec 4.3)",
                str(extra))
        t.check(all(os.path.getsize(os.path.join(d, f)) == 0 for f in fillers), "fillers extract empty", "")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = argv[1]
    t = ozcommon.Tally()
    with ozcommon.workdir(argv, "onnxzip-zip-readers-") as work:
        arc = check_names(t, exe, work)
        check_upath(t, exe, work, arc)
        check_fillers(t, exe, work)
    print(f"zip_readers: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
