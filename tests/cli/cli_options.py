#!/usr/bin/python3
"""cli_options — the command lines every `onnxzip` command takes (tools/options.c).

    cli_options.py ONNXZIP_EXE [--keep DIR]

Bad command lines exit 2 with one line "onnxzip CMD: ..." on stderr naming
what is wrong, followed by the command's usage — but for a bad value of a
remote option (ls, verify, extract, fetch), whose long help would push the
line off the screen — and write nothing:
  * an unknown option (long, short, a bundle "-qv" of flags), a value given
    to a flag ("--json=1"), a missing value, an operand too many (set-model's
    third too), a missing operand or -o;
  * a bad value of each kind: a power of two (--align), a byte count
    (--size-threshold), a choice (--layout, --s3-addressing), a number
    (--timeout, --connections under its old name --parallel), a size of at
    least 64K (--chunk-size), an empty text (--region=), -o given twice
    to fetch, --align with a layout that has no data file.
--help anywhere prints the usage to stdout and exits 0, whatever follows.
Values reach the command in each spelling ("--align=4096", "--align 4096",
"-oFILE", "-o FILE", operands after "--"): the archives they write are read
back with Python's zipfile and struct (the data offsets of --align, the
entry --size-threshold moves out of the model).
Prints "cli_options: N passed, M failed"; exits 1 on any failure.
"""
import os
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


def model(path):
    """Two initializers: 4000 and 600 bytes (the latter inline by default)."""
    ws = [numpy_helper.from_array(np.arange(n, dtype=np.float32), f"w{i}") for i, n in enumerate((1000, 150))]
    nodes = [helper.make_node("Identity", [w.name], [f"y{i}"]) for i, w in enumerate(ws)]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(2)]
    m = helper.make_model(helper.make_graph(nodes, "g", [], outs, ws), opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, path)


def data_offsets(path):
    """Each stored entry's data offset, from its local header (zipfile has no such field)."""
    out = {}
    with open(path, "rb") as f, zipfile.ZipFile(path) as z:
        for i in z.infolist():
            f.seek(i.header_offset)
            h = f.read(30)
            n, x = struct.unpack("<HH", h[26:30])
            out[i.filename] = i.header_offset + 30 + n + x
    return out


def main(argv):
    t = ozcommon.Tally()
    exe = os.path.abspath(argv[1])
    with ozcommon.workdir(argv, "cli-options-") as d:
        m = os.path.join(d, "m.onnx")
        model(m)
        arc = os.path.join(d, "a.onnxzip")
        subprocess.run([exe, "pack", m, "-o", arc, "-q"], check=True)

        def run(*args):
            return subprocess.run([exe, *args], cwd=d, capture_output=True, text=True, timeout=60,
                                  stdin=subprocess.DEVNULL)

        def refused(what, first, usage, *args):
            before = sorted(os.listdir(d))
            r = run(*args)
            lines = r.stderr.splitlines()
            cmd = args[0]
            t.check(r.returncode == 2 and lines[:1] == [first] and r.stdout == ""
                    and (("usage: onnxzip " + cmd) in r.stderr) == usage and (usage or len(lines) == 1)
                    and sorted(os.listdir(d)) == before,
                    what, f"exit {r.returncode}, stderr {r.stderr[:300]!r}")

        refused("unknown long option", "onnxzip pack: unknown option '--bogus'", True, "pack", m, "-o", "x",
                "--bogus=1")
        refused("unknown short option", "onnxzip view: unknown option '-x'", True, "view", arc, "-x")
        refused("flags do not bundle", "onnxzip extract: unknown option '-qv'", True, "extract", arc, "w0", "-qv")
        refused("a flag takes no value", "onnxzip ls: option '--json' takes no value", True, "ls", arc, "--json=1")
        refused("a missing value", "onnxzip repack: option '--output' needs a value", True, "repack", arc,
                "--output")
        refused("a missing short value", "onnxzip unpack: option '-o' needs a value", True, "unpack", arc, "-o")
        refused("an operand too many", "onnxzip verify: unexpected argument 'b'", True, "verify", arc, "b")
        refused("set-model's third operand", "onnxzip set-model: unexpected argument 'x'", True, "set-model", arc,
                m, "x")
        refused("set-model's second operand missing", "onnxzip set-model: expected ARCHIVE and NEW.onnx", True,
                "set-model", arc)
        refused("a missing -o", "onnxzip pack: missing -o OUT", True, "pack", m)
        refused("--align not a power of two",
                "onnxzip pack: --align: '100' is not a power of two between 64 and 65536", True,
                "pack", m, "-o", "x", "--align", "100")
        refused("unpack's --align range", "onnxzip unpack: --align: '0' is not a power of two between 1 and 65536",
                True, "unpack", arc, "-o", "u/m.onnx", "--align=0")
        refused("--size-threshold", "onnxzip pack: --size-threshold: '1X' is not a byte count (a non-negative "
                "integer, optional suffix K, M or G)", True, "pack", m, "-o", "x", "--size-threshold", "1X")
        refused("view's --size-threshold", "onnxzip view: --size-threshold: '-1' is not a byte count (e.g. 0, "
                "4096, 4K)", True, "view", arc, "-o", "v.onnx", "--size-threshold", "-1")
        refused("--layout", "onnxzip unpack: --layout: 'flat' is not one of single, per-tensor, inline, "
                "safetensors", True, "unpack", arc, "-o", "u/m.onnx", "--layout", "flat")
        refused("--align without a data file", "onnxzip unpack: --location and --align apply to --layout single "
                "and safetensors only", True, "unpack", arc, "-o", "u/m.onnx", "--layout=inline", "--align", "64")
        refused("fetch -o twice", "onnxzip fetch: -o given twice", True, "fetch", "https://127.0.0.1:9/a",
                "--output", "a", "-o", "b")
        refused("--timeout (remote: no usage)", "onnxzip ls: --timeout: '0' is not a number from 1 to 86400000",
                False, "ls", arc, "--timeout", "0")
        refused("--parallel says --connections", "onnxzip verify: --connections: '65' is not a number from 1 to 64",
                False, "verify", arc, "--parallel=65")
        refused("--chunk-size", "onnxzip extract: --chunk-size: '32K' is not a size of at least 64K (bytes, or "
                "with a K, M or G suffix)", False, "extract", arc, "w0", "-o", "x", "--chunk-size", "32K")
        refused("--s3-addressing", "onnxzip fetch: --s3-addressing: 'dns' is none of path, virtual, auto", False,
                "fetch", "s3://b/k", "-o", "x", "--s3-addressing", "dns")
        refused("an empty --region", "onnxzip ls: --region: an empty value", False, "ls", arc, "--region=")

        for args in (["pack", "--help", "--bogus"], ["ls", arc, "-h", "--timeout", "0"], ["set-model", "--help"]):
            r = run(*args)
            t.check(r.returncode == 0 and r.stdout.startswith("usage: onnxzip " + args[0]) and r.stderr == "",
                    f"{' '.join(args[:2])}: the usage on stdout, exit 0", f"exit {r.returncode} {r.stderr!r}")

        # values in every spelling reach the command
        for i, spelling in enumerate((["--align=4096", "-o", "b0.onnxzip", m], ["--align", "4096", "-ob1.onnxzip",
                                      "--", m], [m, "--output=b2.onnxzip", "--align", "4096", "-q"])):
            r = run("pack", *spelling)
            out = os.path.join(d, f"b{i}.onnxzip")
            offs = data_offsets(out) if r.returncode == 0 else {}
            t.check(len(offs) == 2 and all(o % 4096 == 0 for o in offs.values()),
                    f"pack {' '.join(spelling)}: every entry's data at a multiple of 4096", f"{r.stderr!r} {offs}")
        r = run("pack", m, "-o", "c.onnxzip", "--size-threshold", "512", "-q")
        with zipfile.ZipFile(os.path.join(d, "c.onnxzip")) as z:
            names = sorted(z.namelist())
        t.check(r.returncode == 0 and names == ["__MODEL_PROTO", "w0", "w1"],
                "--size-threshold 512: the 600-byte tensor in an entry too (not by default)", names)
    print(f"cli_options: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
