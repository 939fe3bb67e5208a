#!/usr/bin/python3
"""cli_messages — what the CLI says of files that are not (whole) onnxzip
archives, for every command that reads one.

    cli_messages.py ONNXZIP_EXE [--keep DIR]

Every input is written by Python's zipfile or by onnx, never by onnxzip. For
`ls`, `verify`, `extract`, `unpack`, `view` and `repack`, each case must exit 1
with one line "onnxzip: FILE: ... [ONNXZIP_STATUS]" naming the file, with the
status and key phrases below, and leave no file behind:
  * a plain zip of two text files: ENOTONNXZIP, "a zip archive, but not an
    onnxzip archive: it has no __MODEL_PROTO entry (2 entries, e.g. 'a.txt')";
  * a PyTorch-like legacy zip (__MODEL_PROTO first, deflated, its weight in
    entry w0): EMETHOD, "written by another tool", "'__MODEL_PROTO' is
    deflated", "convert it with: onnxzip repack FILE -o OUT.onnxzip"; repack
    itself converts it (exit 0): `verify` passes and zipfile reads back the
    same model and weight bytes;
  * a tf2onnx-like zip (__MODEL_PROTO.onnx, stored, unaligned): ENOTONNXZIP
    naming that entry and repack; repack converts it;
  * a stored zip cut short at several points, from 2 bytes (in the first
    signature: "PK" was read as a classic model) on, and one with zip64
    end records cut in those: ETRUNC, "truncated: C bytes,
    but its local headers describe at least N bytes", "cut short"; N exactly
    the least size a zip of the entries begun before the cut can have (their
    local headers and data, a central record of 46 bytes and the name each,
    the 22-byte end record: sizes read from the whole file with struct) when
    the cut falls in an entry, else C < N <= the whole size;
  * pack of an empty zip and of a plain zip: EUNSUPPORTED, "already a zip
    archive" (the empty zip was read as a protobuf);
  * a classic model whose external data file is missing: ENOTFOUND,
    "external data file 'x.bin' does not exist" (repack: not a zip, ENOTZIP);
  * a FIFO (no writer) or a directory in place of the archive, and a FIFO as
    pack's input: ENOTREG, "not a regular file" / "a directory", at once; an
    empty folder as pack's input: ENOMODEL, "no .onnx model in the folder"
    (a FIFO must not wait for a writer);
  * `set-model` with an empty model (a 0-byte file: the empty ModelProto):
    exit 1 with the very line `verify` prints for an archive with that model
    (but for the file name), ONNXZIP_EPROTO; the archive byte-identical;
    `unpack` and `view` of that archive print the very line `verify`
    prints (the archive named, nothing written).
Prints "cli_messages: N passed, M failed"; exits 1 on any failure.
"""
import os
import re
import struct
import subprocess
import sys
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402

ERROR_LINE = re.compile(r"^onnxzip: (.*) \[(ONNXZIP_[A-Z0-9_]+)\]$")
COMMANDS = ("ls", "verify", "extract", "unpack", "view", "repack")
W = np.arange(16, dtype=np.float32)


def model(external=None):
    """A model onnx.checker accepts; its initializer 'w' inline, or external
    data at `external` (as PyTorch's zip export refers to its entries)."""
    t = numpy_helper.from_array(W, "w")
    if external:
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=external)
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])], [t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    if not external:  # (the checker would look for the external file)
        onnx.checker.check_model(m)
    return m


def args_of(cmd, path, d):
    out = {"extract": ["w", "-o", os.path.join(d, "w.bin")], "unpack": ["-o", os.path.join(d, "u", "m.onnx")],
           "view": ["-o", os.path.join(d, "v.onnx")], "repack": ["-o", os.path.join(d, "r.onnxzip")]}
    return [cmd, path] + out.get(cmd, [])


def files_under(d):
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, ds, fs in os.walk(d) for n in ds + fs)


def expect(t, exe, what, argv, d, status, phrases, path):
    """The command fails with one error line naming `path`, `status` and the
    phrases; no file appears under d. Returns the message."""
    before = files_under(d)
    r = ozcommon.run([exe] + argv, timeout=10)
    err = r.stderr.decode("utf-8", "replace")
    lines = err.splitlines()
    m = ERROR_LINE.match(lines[0]) if len(lines) == 1 else None
    t.check(r.returncode == 1 and m is not None, f"{what}: exit 1, one error line", f"{r.returncode} {err!r}")
    t.check(files_under(d) == before, f"{what}: no file left", f"{sorted(set(files_under(d)) - set(before))}")
    if not m:
        return ""
    t.check(m.group(2) == "ONNXZIP_" + status, f"{what}: status {status}", m.group(2))
    t.check(m.group(1).startswith(path + ": "), f"{what}: names the file", m.group(1))
    for p in phrases:
        t.check(p in m.group(1), f"{what}: says '{p}'", m.group(1))
    return m.group(1)


def every_command(t, exe, what, path, d, status, phrases, repack=None):
    """expect() for each command; repack's own expectation, if given, is
    (status, phrases), or "converts" when it must succeed."""
    for cmd in COMMANDS:
        if cmd == "repack" and repack is not None:
            if repack == "converts":
                continue
            expect(t, exe, f"{what}: repack", args_of(cmd, path, d), d, repack[0], repack[1], path)
            continue
        expect(t, exe, f"{what}: {cmd}", args_of(cmd, path, d), d, status, phrases, path)


def converted(t, exe, what, path, d, model_bytes, weights):
    """repack converts the zip: verify passes, and zipfile reads back the
    model and the weight entries unchanged."""
    out = os.path.join(d, "converted.onnxzip")
    r = ozcommon.run([exe, "repack", path, "-o", out])
    t.check(r.returncode == 0, f"{what}: repack converts it", r.stderr)
    r = ozcommon.run([exe, "verify", out])
    t.check(r.returncode == 0, f"{what}: the converted archive verifies", r.stderr)
    if os.path.exists(out):
        with zipfile.ZipFile(out) as z:
            t.check(z.read("__MODEL_PROTO") == model_bytes, f"{what}: the same model after repack")
            for name, data in weights.items():
                t.check(z.read(name) == data, f"{what}: entry {name} unchanged")
            t.check(all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()), f"{what}: all stored")
        os.unlink(out)


def plain_zip(t, exe, d):
    p = os.path.join(d, "plain.zip")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", "hello\n")
        z.writestr("b.txt", "world\n")
    every_command(t, exe, "plain zip", p, d, "ENOTONNXZIP",
                  ["a zip archive, but not an onnxzip archive: it has no __MODEL_PROTO entry "
                   "(2 entries, e.g. 'a.txt')"])


def legacy_zip(t, exe, d):
    p = os.path.join(d, "legacy.zip")
    mb = model(external="w0").SerializeToString()
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:  # PyTorch's old ZIP_ARCHIVE export
        z.writestr("__MODEL_PROTO", mb)
        z.writestr("w0", W.tobytes())
    every_command(t, exe, "legacy zip", p, d, "EMETHOD",
                  ["written by another tool (or re-zipped)", "entry '__MODEL_PROTO' is deflated",
                   f"convert it with: onnxzip repack {p} -o OUT.onnxzip"], repack="converts")
    converted(t, exe, "legacy zip", p, d, mb, {"w0": W.tobytes()})


def tf2onnx_zip(t, exe, d):
    p = os.path.join(d, "tf2onnx.zip")
    mb = model().SerializeToString()
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        z.writestr("__MODEL_PROTO.onnx", mb)
    every_command(t, exe, "tf2onnx zip", p, d, "ENOTONNXZIP",
                  ["its model entry is named '__MODEL_PROTO.onnx'",
                   f"convert it with: onnxzip repack {p} -o OUT.onnxzip"], repack="converts")
    converted(t, exe, "tf2onnx zip", p, d, mb, {})


def local_entries(whole):
    """(header offset, header length, data length, name length) of each
    local header, in file order, read with struct."""
    out, pos = [], 0
    while whole[pos:pos + 4] == b"PK\x03\x04":
        size, nlen, elen = struct.unpack_from("<I", whole, pos + 18)[0], *struct.unpack_from("<HH", whole, pos + 26)
        out.append((pos, 30 + nlen + elen, size, nlen))
        pos += 30 + nlen + elen + size
    return out


def least_size(entries, cut):
    """The least size of a zip of the entries begun before `cut` when the cut
    falls in one (its header or data); None when it falls after them all."""
    central = 0
    for off, hlen, size, nlen in entries:
        if cut - off < 4:
            return off + central + 22  # this header's signature is not there: the entries before
        if cut - off < 30:
            return off + 30 + central + 46 + 22  # its fixed header part is cut: its name length unknown
        central += 46 + nlen
        if off + hlen + size > cut:
            return off + hlen + size + central + 22
    return None


def whole_zip(path, zip64_end):
    """Three stored entries; with zip64_end, zipfile also writes the zip64
    end record and locator (it does past 65535 entries: the limit lowered)."""
    limit = zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP_FILECOUNT_LIMIT = 0 if zip64_end else limit
    try:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr("w0", b"\1" * 5000)
            z.writestr("w1", b"\2" * 3000)
            z.writestr("__MODEL_PROTO", model().SerializeToString())
    finally:
        zipfile.ZIP_FILECOUNT_LIMIT = limit


def truncated(t, exe, d):
    for zip64_end in (False, True):
        truncated_zip(t, exe, d, zip64_end)


def truncated_zip(t, exe, d, zip64_end):
    whole_path = os.path.join(d, "whole.zip")
    whole_zip(whole_path, zip64_end)
    with open(whole_path, "rb") as f:
        whole = f.read()
    os.unlink(whole_path)
    entries = local_entries(whole)
    t.check(len(entries) == 3, "the whole zip has 3 local headers")
    model_off = entries[2][0]
    cd = struct.unpack_from("<I", whole, len(whole) - 22 + 16)[0]
    cuts = [2, 3, 10, 29, 100, 2000, entries[1][0] + 20, model_off + 40, cd - 5, cd + 10, len(whole) - 22, len(whole) - 1]
    if zip64_end:  # in the zip64 end record (56 bytes), in its locator (20), in the end record
        end64 = len(whole) - 22 - 20 - 56
        t.check(whole[end64:end64 + 4] == b"PK\6\6", "zipfile wrote a zip64 end record")
        cuts = [end64 + 2, end64 + 30, end64 + 56, end64 + 60, end64 + 76 + 10, len(whole) - 1]
    p = os.path.join(d, "cut.onnxzip")
    for cut in cuts:
        with open(p, "wb") as f:
            f.write(whole[:cut])
        what = f"cut at {cut} of {len(whole)}{' (zip64 end records)' if zip64_end else ''}"
        for cmd in COMMANDS:
            msg = expect(t, exe, f"{what}: {cmd}", args_of(cmd, p, d), d, "ETRUNC",
                         [f"truncated: {cut} bytes, but its local headers describe at least ",
                          "the download or copy was cut short"], p)
            m = re.search(r"at least (\d+) bytes", msg)
            if not m:
                continue
            least, want = int(m.group(1)), least_size(entries, cut)
            if want is not None:
                t.check(least == want, f"{what}: {cmd}: at least {want} bytes", msg)
            else:
                t.check(cut < least <= len(whole), f"{what}: {cmd}: a true lower bound", msg)
    os.unlink(p)


def pack_of_a_zip(t, exe, d):
    """pack refuses any zip, an empty one (an end record only) included, as
    'already a zip archive' (the empty zip was read as a protobuf: EPROTO)."""
    for what, write in (("an empty zip", lambda z: None), ("a plain zip", lambda z: z.writestr("a.txt", "hi"))):
        p = os.path.join(d, "some.zip")
        with zipfile.ZipFile(p, "w") as z:
            write(z)
        expect(t, exe, f"pack of {what}", ["pack", p, "-o", os.path.join(d, "p", "x.onnxzip")], d, "EUNSUPPORTED",
               ["already a zip archive; pack takes a classic .onnx model (use repack"], p)
        os.unlink(p)


def missing_external(t, exe, d):
    p = os.path.join(d, "ext.onnx")
    onnx.save(model(external="x.bin"), p)
    every_command(t, exe, "missing external data", p, d, "ENOTFOUND",
                  ["tensor 'w': external data file 'x.bin' does not exist (resolved in "],
                  repack=("ENOTZIP", ["cannot open as a zip archive"]))
    os.unlink(p)


def not_regular(t, exe, d):
    """A FIFO nobody writes to, a directory: refused at once by every
    command that reads an archive, and by pack (a timeout is a failure)."""
    fifo, folder = os.path.join(d, "pipe.onnxzip"), os.path.join(d, "folder.onnxzip")
    os.mkfifo(fifo)
    os.mkdir(folder)
    for path, phrase in ((fifo, "not a regular file (a device, FIFO or socket)"), (folder, "a directory")):
        # pack takes a folder as a repository (spec 19.6): an empty one has no model
        pack = (["pack", path, "-o", os.path.join(d, "p.onnxzip")], "ENOMODEL", "no .onnx model in the folder")
        for argv, status, said in [(args_of(cmd, path, d), "ENOTREG", phrase) for cmd in COMMANDS] + \
                [pack if path == folder else (pack[0], "ENOTREG", phrase)]:
            try:
                expect(t, exe, f"{os.path.basename(path)}: {argv[0]}", argv, d, status, [said], path)
            except subprocess.TimeoutExpired:
                t.check(False, f"{os.path.basename(path)}: {argv[0]}: refused at once", "no answer in 10 s")
    t.check(not os.path.exists(os.path.join(d, "p.onnxzip")), "pack of an empty folder: no output")
    os.unlink(fifo)
    os.rmdir(folder)


def set_model_empty(t, exe, d):
    src, archive, empty = (os.path.join(d, n) for n in ("m.onnx", "a.onnxzip", "empty.onnx"))
    onnx.save(model(), src)
    r = ozcommon.run([exe, "pack", src, "-o", archive])
    t.check(r.returncode == 0, "set-model: pack the archive", r.stderr)
    open(empty, "wb").close()
    with open(archive, "rb") as f:
        before = f.read()
    said = expect(t, exe, "set-model with an empty model", ["set-model", archive, empty], d, "EPROTO",
                  ["entry '__MODEL_PROTO': no ir_version, no graph"], archive)
    with open(archive, "rb") as f:
        t.check(f.read() == before, "set-model with an empty model: archive byte-identical")
    other = os.path.join(d, "empty_model.zip")  # an archive with the empty model, by another writer
    with zipfile.ZipFile(other, "w", zipfile.ZIP_STORED) as z:
        z.writestr("__MODEL_PROTO", b"")
    verify_said = expect(t, exe, "verify of an archive with an empty model", ["verify", other], d, "EPROTO",
                         ["entry '__MODEL_PROTO': no ir_version, no graph"], other)
    t.check(said[len(archive):] == verify_said[len(other):] != "", "set-model says what verify says",
            f"{said!r} vs {verify_said!r}")
    for cmd in ("unpack", "view"):  # each writes that model out: refused as verify refuses it
        argv = args_of(cmd, other, d) + (["--layout", "safetensors"] if cmd == "unpack" else [])
        writer_said = expect(t, exe, f"{cmd} of an archive with an empty model", argv, d, "EPROTO", [], other)
        t.check(writer_said == verify_said, f"{cmd} says what verify says", f"{writer_said!r} vs {verify_said!r}")
    for f in (src, archive, empty, other):
        os.unlink(f)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    exe = argv[1]
    t = ozcommon.Tally()
    with ozcommon.workdir(argv, "oz-messages-") as d:
        for case in (plain_zip, legacy_zip, tf2onnx_zip, truncated, pack_of_a_zip, missing_external, not_regular,
                     set_model_empty):
            case(t, exe, d)
    print(f"cli_messages: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
