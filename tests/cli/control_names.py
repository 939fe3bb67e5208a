#!/usr/bin/python3
"""control_names — file names with control characters never reach the
terminal raw.

    control_names.py ONNXZIP_EXE [--keep DIR]

Every file here is named with a newline, a carriage return, a tab, an ESC
sequence, a DEL byte and a C1 control character (U+0085, bytes c2 85) in it.
`pack`, `verify` (archive and classic model), `unpack`, `extract`,
`set-model`, `ls`, an unknown command, a
failing `verify` of a truncated archive, a failing `pack` of a missing file
and a failing `verify` whose message also quotes a tensor name must each
print exactly one line per
message, with every control character written as \\xHH (the path's
ordinary characters unchanged), and `ls --json` must be valid JSON whose
"archive" string decodes to the exact name. A tensor name that oz_printable()
already escaped must not be escaped twice.
Prints "control_names: N passed, M failed"; exits 1 on any failure.
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402

STEM = "m\n\r\t\x1b[2J\x7f\u0085x"
SHOWN = "m\\x0a\\x0d\\x09\\x1b[2J\\x7f\\xc2\\x85x"  # how every line must show STEM
ERROR_LINE = re.compile(rb"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")
# C0 controls, DEL, and the C1 range as UTF-8 (c2 80..c2 9f)
RAW_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def make_model(tensor_name="a"):
    inits = [numpy_helper.from_array(np.arange(64, dtype=np.float32), tensor_name),
             numpy_helper.from_array(np.arange(100, dtype=np.int32), "b")]
    g = helper.make_graph([helper.make_node("Identity", [tensor_name], ["y"])], "names", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def clean_lines(t, what, out, n_lines):
    """out is n_lines lines, each ended by \\n, with no raw control byte."""
    lines = out.split(b"\n")
    t.check(out.endswith(b"\n") and len(lines) == n_lines + 1, f"{what}: {n_lines} line(s)",
            repr(out[:400]))
    t.check(not RAW_CONTROL.search(out.replace(b"\n", b"")), f"{what}: no raw control byte",
            repr(out[:400]))
    return lines[:-1]


def shows_name(t, what, line, name=STEM):
    t.check(name.replace(STEM, SHOWN).encode() in line, f"{what}: name shown escaped", repr(line))


def run(exe, *args):
    return ozcommon.run([exe, *args])


def check_ok(t, exe, d, classic, archive):
    r = run(exe, "pack", classic, "-o", archive, "--size-threshold", "0")
    t.check(r.returncode == 0, "pack exits 0", r.stderr)
    line = (clean_lines(t, "pack stdout", r.stdout, 1) or [b""])[0]
    t.check(line.startswith(b"packed "), "pack line", repr(line))
    shows_name(t, "pack line (input)", line, os.path.basename(classic))
    shows_name(t, "pack line (output)", line, os.path.basename(archive))

    for what, path in (("verify archive", archive), ("verify classic", classic)):
        r = run(exe, "verify", path)
        t.check(r.returncode == 0, f"{what} exits 0", r.stderr)
        line = (clean_lines(t, what, r.stdout, 1) or [b""])[0]
        t.check(line.startswith(b"OK: "), f"{what}: OK line", repr(line))
        shows_name(t, what, line, os.path.basename(path))

    out = os.path.join(d, STEM + ".unpacked.onnx")
    r = run(exe, "unpack", archive, "-o", out)
    t.check(r.returncode == 0, "unpack exits 0", r.stderr)
    line = (clean_lines(t, "unpack stdout", r.stdout, 1) or [b""])[0]
    t.check(line.startswith(b"unpacked "), "unpack line", repr(line))
    shows_name(t, "unpack line (input)", line, os.path.basename(archive))
    shows_name(t, "unpack line (output)", line, os.path.basename(out))

    out = os.path.join(d, STEM + ".a.bin")
    r = run(exe, "extract", archive, "a", "-o", out)
    t.check(r.returncode == 0, "extract exits 0", r.stderr)
    line = (clean_lines(t, "extract stdout", r.stdout, 1) or [b""])[0]
    t.check(line.startswith(b"extracted a "), "extract line", repr(line))
    shows_name(t, "extract line (output)", line, os.path.basename(out))

    copy = os.path.join(d, STEM + ".copy.onnxzip")
    with open(archive, "rb") as f, open(copy, "wb") as g:
        g.write(f.read())
    r = run(exe, "set-model", copy, classic)
    t.check(r.returncode == 0, "set-model exits 0", r.stderr)
    line = (clean_lines(t, "set-model stdout", r.stdout, 1) or [b""])[0]
    t.check(line.startswith(b"updated "), "set-model line", repr(line))
    shows_name(t, "set-model line (archive)", line, os.path.basename(copy))
    shows_name(t, "set-model line (model)", line, os.path.basename(classic))

    r = run(exe, STEM)
    t.check(r.returncode == 2, "unknown command exits 2", r.returncode)
    line = r.stderr.split(b"\n", 1)[0]
    t.check(not RAW_CONTROL.search(line), "unknown command: no raw control byte", repr(line))
    shows_name(t, "unknown command", line)

    r = run(exe, "ls", archive)
    t.check(r.returncode == 0, "ls exits 0", r.stderr)
    first = r.stdout.split(b"\n", 1)[0]
    t.check(not RAW_CONTROL.search(r.stdout.replace(b"\n", b"")), "ls: no raw control byte",
            repr(r.stdout[:400]))
    shows_name(t, "ls header", first, os.path.basename(archive))

    r = run(exe, "ls", "--json", archive)
    t.check(r.returncode == 0, "ls --json exits 0", r.stderr)
    t.check(not RAW_CONTROL.search(r.stdout.replace(b"\n", b"")), "ls --json: no raw control byte",
            repr(r.stdout[:400]))
    try:
        doc = json.loads(r.stdout.decode("utf-8"))
        t.check(doc["archive"] == archive, "ls --json: archive decodes to the name",
                repr(doc["archive"]))
        t.check([e["name"] for e in doc["entries"]] == ["a", "b", "__MODEL_PROTO"],
                "ls --json: entries", repr(doc["entries"]))
    except (ValueError, KeyError) as e:
        t.check(False, "ls --json parses", f"{e}: {r.stdout[:400]!r}")


def check_failure(t, what, r, name, status):
    t.check(r.returncode == 1, f"{what} exits 1", r.returncode)
    line = (clean_lines(t, what, r.stderr, 1) or [b""])[0]
    m = ERROR_LINE.match(line)
    t.check(m is not None and m.group(1) == status.encode(), f"{what}: [{status}]", repr(line))
    shows_name(t, what, line, name)
    return line


def check_errors(t, exe, d, archive):
    cut = os.path.join(d, STEM + ".cut")
    with open(archive, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:200])
    check_failure(t, "verify of a truncated archive", run(exe, "verify", cut),
                  os.path.basename(cut), "ONNXZIP_ETRUNC")
    missing = os.path.join(d, STEM + ".missing.onnx")
    check_failure(t, "pack of a missing file", run(exe, "pack", missing, "-o", archive + "2"),
                  os.path.basename(missing), "ONNXZIP_EIO")
    t.check(not os.path.exists(archive + "2"), "failed pack leaves no output")
    # Printable UTF-8 (and quotes, backslashes) is not escaped: ordinary messages are unchanged.
    plain = os.path.join(d, "modèle 模型 'q' \\.onnx")
    line = check_failure(t, "pack of a missing UTF-8 name", run(exe, "pack", plain, "-o", archive + "3"),
                         os.path.basename(plain), "ONNXZIP_EIO")
    t.check(line.startswith(f"onnxzip: {plain}: ".encode()) and b"\\x" not in line,
            "UTF-8 name shown as is", repr(line))

    # A classic model whose tensor "t<LF>n" points at a missing data file: the
    # message quotes the path (escaped by oz_err) and the tensor name (escaped
    # by oz_printable), which must show as \x0a, never as \x5cx0a.
    m = make_model("t\nn")
    onnx.external_data_helper.convert_model_to_external_data(
        m, all_tensors_to_one_file=True, location="gone.bin", size_threshold=0)
    ext = os.path.join(d, STEM + ".ext.onnx")
    onnx.save_model(m, ext)
    os.remove(os.path.join(d, "gone.bin"))  # save_model wrote it
    r = run(exe, "verify", ext)
    line = check_failure(t, "verify of a model whose data file is missing", r,
                         os.path.basename(ext), "ONNXZIP_ENOTFOUND")
    t.check(b"t\\x0an" in line and b"\\x5c" not in line, "tensor name escaped once", repr(line))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    exe = argv[1]
    t = ozcommon.Tally()
    with ozcommon.workdir(argv, "oz-names-") as d:
        classic = os.path.join(d, STEM + ".onnx")
        archive = os.path.join(d, STEM + ".onnxzip")
        onnx.save_model(make_model(), classic)
        check_ok(t, exe, d, classic, archive)
        check_errors(t, exe, d, archive)
    print(f"control_names: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
