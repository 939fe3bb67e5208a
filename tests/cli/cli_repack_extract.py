#!/usr/bin/python3
"""cli_repack_extract — `onnxzip repack` and `onnxzip extract` end to end.

    cli_repack_extract.py ONNXZIP_EXE [--keep DIR]

Builds a small model with the onnx package, packs it (`onnxzip pack
--size-threshold 0`), re-zips the archive with Python's zipfile and
ZIP_DEFLATED (once to a seekable file, once through an unseekable stream, which
makes zipfile write data descriptors), checks that `onnxzip verify` refuses
the deflated copies, `onnxzip repack`s them at --align 4096 and 64, checks the
result with `onnxzip verify`, the alignment of every entry (local headers
parsed here) and the model bytes, then `onnxzip extract`s every initializer
and compares the bytes with numpy_helper's. Failures must exit 1 with one
line "onnxzip: ... [ONNXZIP_E...]", bad command lines 2; a failed command
leaves neither its output nor a temporary file.
Prints "cli_repack_extract: N passed, M failed"; exits 1 on any failure.
"""
import io
import os
import re
import struct
import sys
import tempfile
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402

MODEL = "__MODEL_PROTO"
ERROR_LINE = re.compile(r"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")


def make_model():
    r = np.random.default_rng(11)
    inits = [numpy_helper.from_array(r.standard_normal(64).astype(np.float32), "a"),
             numpy_helper.from_array(r.integers(-1000, 1000, 100, dtype=np.int32), "b"),
             numpy_helper.from_array(r.integers(0, 255, 4097, dtype=np.uint8), "odd.name/c"),
             numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty"),
             numpy_helper.from_array(np.arange(5000, dtype=np.float64), "big"),
             numpy_helper.from_array(np.array([7], np.int8), "one")]
    g = helper.make_graph([helper.make_node("Identity", ["a"], ["y"])], "repack", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


class Unseekable(io.RawIOBase):
    """A write-only stream without seek/tell: zipfile then writes data descriptors."""

    def __init__(self):
        super().__init__()
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


def deflate_copy(src, dst, unseekable):
    with zipfile.ZipFile(src) as zin:
        items = [(i.filename, zin.read(i.filename)) for i in zin.infolist()]
    sink = Unseekable() if unseekable else open(dst, "wb")
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        for name, data in items:
            if unseekable:
                with zout.open(name, "w") as f:  # streamed: sizes and CRC after the data
                    f.write(data)
            else:
                zout.writestr(name, data)
    if unseekable:
        with open(dst, "wb") as f:
            f.write(sink.buf)
    else:
        sink.close()


def data_offsets(path):
    """(name, data offset, size) of every entry, from its local header."""
    out = []
    with open(path, "rb") as f, zipfile.ZipFile(path) as z:
        for i in z.infolist():
            f.seek(i.header_offset)
            h = f.read(30)
            sig, nlen, xlen = struct.unpack("<I22xHH", h)
            assert sig == 0x04034B50, f"{i.filename}: no local header"
            out.append((i.filename, i.header_offset + 30 + nlen + xlen, i.file_size, i.compress_type))
    return out


class Runner:
    def __init__(self, exe, work):
        self.exe, self.work = exe, work
        self.passed = self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
            print(f"ok   {what}")
        else:
            self.failed += 1
            print(f"FAIL {what}")
        return ok

    def run(self, *args):
        p = ozcommon.run([self.exe] + list(args))
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def expect_ok(self, what, *args, stdout_re=None):
        rc, out, err = self.run(*args)
        ok = rc == 0 and (stdout_re is None or re.fullmatch(stdout_re, out, re.S) is not None)
        if not ok:
            print(f"     exit {rc}; stdout {out!r}; stderr {err!r}")
        return self.check(ok, what)

    def expect_fail(self, what, status, *args, rc_want=1):
        rc, out, err = self.run(*args)
        lines = err.strip().splitlines()
        if rc_want == 1:
            m = ERROR_LINE.match(lines[0]) if len(lines) == 1 else None
            ok = rc == 1 and m is not None and m.group(1) == status
        else:
            ok = rc == rc_want
        if not ok:
            print(f"     exit {rc} (want {rc_want} {status or ''}); stderr {err!r}")
        return self.check(ok, what)

    def no_leftovers(self, what, *paths):
        tmp = [n for n in os.listdir(self.work) if ".tmp-" in n]
        present = [p for p in paths if os.path.exists(p)]
        if tmp or present:
            print(f"     temporary files {tmp}; outputs present {present}")
        return self.check(not tmp and not present, what)


def main(argv):
    args = argv[1:]
    keep = None
    if len(args) == 3 and args[1] == "--keep":
        keep = args[2]
        args = args[:1]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="onnxzip-repack-") as tmp:
        work = keep or tmp
        os.makedirs(work, exist_ok=True)
        t = Runner(args[0], work)
        j = lambda n: os.path.join(work, n)  # noqa: E731
        model = make_model()
        onnx.save(model, j("m.onnx"))
        if not t.expect_ok("pack the model", "pack", j("m.onnx"), "-o", j("m.onnxzip"),
                           "--size-threshold", "0", "-q", stdout_re=""):
            print(f"cli_repack_extract: {t.passed} passed, {t.failed} failed")
            return 1
        with zipfile.ZipFile(j("m.onnxzip")) as z:
            model_bytes = z.read(MODEL)
            names = [i.filename for i in z.infolist()]

        for variant, unseekable in (("deflated", False), ("streamed", True)):
            src = j(f"{variant}.zip")
            deflate_copy(j("m.onnxzip"), src, unseekable)
            info = data_offsets(src)
            t.check(all(c == zipfile.ZIP_DEFLATED for _, _, _, c in info),
                    f"{variant}: zipfile deflated every entry")
            if unseekable:
                with zipfile.ZipFile(src) as z:
                    t.check(all(i.flag_bits & 8 for i in z.infolist()),
                            f"{variant}: every entry has a data descriptor")
            t.expect_fail(f"{variant}: verify refuses the deflated copy", "ONNXZIP_EMETHOD", "verify", src)
            for align in (4096, 64):
                out = j(f"{variant}-{align}.onnxzip")
                t.expect_ok(f"{variant}: repack --align {align}", "repack", src, "-o", out,
                            "--align", str(align),
                            stdout_re=re.escape(f"repacked {src} -> {out}: ") + r"\d+ tensors in \d+ entries, \d+ bytes\n")
                t.expect_ok(f"{variant}: verify the repacked archive ({align})", "verify", out)
                got = data_offsets(out)
                kept = [(n, off) for n, off, _, c in got if not n.startswith("__PAD_")]
                t.check([n for n, _ in kept] == [n for n in names if not n.startswith("__PAD_")],
                        f"{variant}: entries in input order, model last ({align})")
                t.check(all(off % align == 0 for _, off in kept) and
                        all(c == zipfile.ZIP_STORED for _, _, _, c in got),
                        f"{variant}: every entry stored and {align}-aligned")
                with zipfile.ZipFile(out) as z:
                    t.check(z.read(MODEL) == model_bytes, f"{variant}: model bytes unchanged ({align})")

        out = j("deflated-4096.onnxzip")
        t.expect_ok("repack --quiet prints nothing", "repack", j("deflated.zip"), "-o", j("q.onnxzip"),
                    "--quiet", stdout_re="")
        for init in model.graph.initializer:
            arr = numpy_helper.to_array(init)
            want = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
            f = j("t.bin")
            t.expect_ok(f"extract {init.name!r}", "extract", out, init.name, "-o", f,
                        stdout_re=re.escape(f"extracted {init.name} ({len(want)} bytes) -> {f}") + r"\n")
            with open(f, "rb") as fh:
                t.check(fh.read() == want, f"extract {init.name!r}: bytes equal numpy_helper's")
            os.unlink(f)
        t.expect_ok("extract --quiet prints nothing", "extract", out, "a", "-o", j("q.bin"), "-q",
                    stdout_re="")

        # failures: exit 1 and one tagged line, nothing left behind
        with open(j("text.txt"), "w") as f:
            f.write("not a zip archive at all, just some text that is long enough\n")
        t.expect_fail("repack refuses a non-zip", "ONNXZIP_ENOTZIP", "repack", j("text.txt"), "-o", j("x.onnxzip"))
        with zipfile.ZipFile(j("nomodel.zip"), "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("a", b"x" * 100)
        t.expect_fail("repack refuses a zip without __MODEL_PROTO", "ONNXZIP_ENOTONNXZIP", "repack",
                      j("nomodel.zip"), "-o", j("x.onnxzip"))
        t.expect_fail("repack refuses OUT == IN", "ONNXZIP_ESAMEFILE", "repack", j("deflated.zip"),
                      "-o", j("deflated.zip"))
        t.check(zipfile.ZipFile(j("deflated.zip")).testzip() is None, "the input survives OUT == IN")
        t.expect_fail("extract refuses a missing tensor", "ONNXZIP_ENOTFOUND", "extract", out, "nope",
                      "-o", j("x.bin"))
        t.expect_fail("extract refuses FILE == ARCHIVE", "ONNXZIP_ESAMEFILE", "extract", out, "a", "-o", out)
        t.expect_ok("the archive survives FILE == ARCHIVE", "verify", out)
        t.no_leftovers("no output and no temporary file after the failures", j("x.onnxzip"), j("x.bin"))

        # bad command lines: exit 2
        t.expect_fail("repack without -o", None, "repack", j("deflated.zip"), rc_want=2)
        t.expect_fail("repack --align 100", None, "repack", j("deflated.zip"), "-o", j("x.onnxzip"),
                      "--align", "100", rc_want=2)
        t.expect_fail("repack with two inputs", None, "repack", "a", "b", "-o", j("x.onnxzip"), rc_want=2)
        t.expect_fail("extract without a tensor", None, "extract", out, "-o", j("x.bin"), rc_want=2)
        t.expect_fail("extract without -o", None, "extract", out, "a", rc_want=2)
        t.expect_ok("repack --help", "repack", "--help", stdout_re=r"usage: onnxzip repack .*")
        t.expect_ok("extract --help", "extract", "--help", stdout_re=r"usage: onnxzip extract .*")
        t.no_leftovers("no output after the usage errors", j("x.onnxzip"), j("x.bin"))
    print(f"cli_repack_extract: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
