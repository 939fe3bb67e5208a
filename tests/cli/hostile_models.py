#!/usr/bin/python3
"""hostile_models — hostile MODELS (not zip structure) must be refused with the
status spec sections 9, 10 and 11.2 name, without a crash or a hang.

    hostile_models.py ONNXZIP_EXE [--probe MODEL_PROTO_PROBE] [--keep DIR] [--only SUBSTRING]

Every model is written as raw protobuf bytes (the onnx package refuses most of
them) and checked twice:
  * as a classic .onnx: `onnxzip ls FILE --json` and `onnxzip verify FILE`;
  * inside an archive built with zipbuild (the model as __MODEL_PROTO, tensor
    entries as the case needs): `onnxzip verify` and `onnxzip ls --json`.
With --probe, tests/model_proto_probe also opens every file and parses its
model with onnxzip_model_proto() (protobuf-c's recursive parser), which must
not crash either. A refused case must exit 1 with one stderr line "onnxzip: ... [ONNXZIP_E...]"
naming the expected status; an accepted case must exit 0. Nothing may die from
a signal (returncode < 0) or run past its timeout.

Also: entry names that are paths ("../x", "/abs", "a\\b", NUL, 300 bytes) are
refused by `ls`, `unpack` and `extract`, and nothing appears outside (or
inside) the target directory; an archive of 70,000 tiny entries opens in
under 5 s; a sparse archive whose __MODEL_PROTO is declared > 2 GiB - 1 is
ELIMIT.

Environment: ONNXZIP_TEST_WRAPPER, when set, is split like a shell command
and put before every onnxzip and probe command (e.g. "valgrind -q
--error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite");
a wrapped run ignores the 5 s time limit and times out after 600 s.

Prints "hostile_models: N passed, M failed"; exits 1 on any failure.
"""
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zipbuild  # noqa: E402
import zipcheck  # noqa: E402

MODEL = zipcheck.MODEL_ENTRY
LINE = re.compile(r"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")
OK = "OK"  # expected: accepted
U64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# protobuf wire encoding
# ---------------------------------------------------------------------------


def varint(v: int) -> bytes:
    v &= U64  # negative int64 values: ten-byte two's complement, as protobuf writes them
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(num: int, v: int) -> bytes:
    return varint(num << 3) + varint(v)


def f_len(num: int, data: bytes) -> bytes:
    return varint(num << 3 | 2) + varint(len(data)) + data


def f_str(num: int, s) -> bytes:
    return f_len(num, s.encode() if isinstance(s, str) else s)


FLOAT, UINT8, STRING, INT64, COMPLEX128 = 1, 2, 8, 7, 15


def tensor(name, data_type, dims, raw=None, ext=None, string_data=None):
    """TensorProto: dims 1, data_type 2, string_data 6, name 8, raw_data 9,
    external_data 13 (key 1, value 2), data_location 14."""
    b = b"".join(f_varint(1, d) for d in dims) + f_varint(2, data_type)
    for s in string_data or []:
        b += f_len(6, s)
    b += f_str(8, name)
    if raw is not None:
        b += f_len(9, raw)
    if ext is not None:
        for k, v in ext:
            b += f_len(13, f_str(1, k) + f_str(2, v))
        b += f_varint(14, 1)
    return b


def graph(nodes=(), inits=(), name="g", inputs=()):
    """GraphProto: node 1, name 2, initializer 5, input 11."""
    return b"".join(f_len(1, n) for n in nodes) + f_str(2, name) + \
        b"".join(f_len(5, t) for t in inits) + b"".join(f_len(11, i) for i in inputs)


def if_node(then_graph: bytes) -> bytes:
    """NodeProto If (op_type 4, attribute 5) with then_branch (AttributeProto
    name 1, g 6, type 20 = GRAPH 5)."""
    attr = f_str(1, "then_branch") + f_len(6, then_graph) + f_varint(20, 5)
    return f_str(4, "If") + f_len(5, attr)


def model(g: bytes) -> bytes:
    """ModelProto: ir_version 1, graph 7, opset_import 8."""
    return f_varint(1, 8) + f_len(7, g) + f_len(8, f_varint(2, 13))


def nested_graphs(levels: int, inits=()) -> bytes:
    """A main graph plus `levels - 1` nested If then_branch graphs (`levels`
    graphs in all); the innermost holds `inits`."""
    g = graph(inits=inits, name=f"g{levels - 1}")
    for i in range(levels - 2, -1, -1):
        g = graph(nodes=[if_node(g)], name=f"g{i}")
    return model(g)


def nested_types(depth: int) -> bytes:
    """A graph input whose TypeProto nests sequence_type `depth` times. Built
    as prefixes (each level only adds a tag and a length before its body), so
    O(depth) to build."""
    core = f_len(1, f_varint(1, FLOAT))  # TypeProto.tensor_type { elem_type FLOAT }
    heads = []
    length = len(core)
    for _ in range(depth):
        # TypeProto.sequence_type (4) { elem_type (1) { ...inner TypeProto... } }
        inner = varint(1 << 3 | 2) + varint(length)
        length += len(inner)
        outer = varint(4 << 3 | 2) + varint(length)
        length += len(outer)
        heads.append(outer + inner)
    tp = b"".join(reversed(heads)) + core
    vi = f_str(1, "x") + f_len(2, tp)  # ValueInfoProto name 1, type 2
    return model(graph(inputs=[vi]))


def nested_unknown(depth: int) -> bytes:
    """An unknown ModelProto field (99) holding `depth` nested length-delimited
    fields: no schema says it is a message, so it is skipped as bytes."""
    body = b""
    heads = []
    length = 0
    for _ in range(depth):
        h = varint(1 << 3 | 2) + varint(length)
        length += len(h)
        heads.append(h)
    body = b"".join(reversed(heads))
    return model(graph()) + f_len(99, body)


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------


def archive(model_bytes: bytes, entries=()) -> bytes:
    es = [zipbuild.BEntry(name=n, data=d) for n, d in entries]
    es.append(zipbuild.BEntry(name=MODEL, data=model_bytes))
    return zipbuild.build(es)


class Case:
    def __init__(self, name, model_bytes, expect, entries=(), side=None, ls_check=None,
                 archive_expect=None, classic=True):
        self.name = name
        self.model = model_bytes
        self.expect = expect  # list of status names (without ONNXZIP_) or OK
        self.archive_expect = archive_expect if archive_expect is not None else expect
        self.entries = entries  # archive entries [(name, bytes)]
        self.side = side or {}  # classic: side files {location: bytes}
        self.ls_check = ls_check  # fn(stdout str) -> error or None, when accepted
        self.classic = classic


WRAPPER = shlex.split(os.environ.get("ONNXZIP_TEST_WRAPPER", ""))


def run(cmd, timeout=60):
    if WRAPPER:
        cmd, timeout = WRAPPER + list(cmd), 600
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s: {' '.join(cmd[:3])}", 0.0
    return p, None, time.monotonic() - t0


def judge(p, expect, what):
    """Error string or None."""
    err = p.stderr.decode("utf-8", "replace")
    # a wrapper's own notes ("--PID-- WARNING: unhandled syscall") are not ours
    lines = [x for x in err.splitlines() if x.strip() and not (WRAPPER and re.match(r"^--\d+-- ", x))]
    if p.returncode < 0:
        return f"{what} killed by signal {-p.returncode}"
    if expect == OK or (OK in expect and p.returncode == 0):
        if p.returncode != 0:
            return f"{what} exited {p.returncode} on an acceptable model: {err.strip()[:300]}"
        return None
    if p.returncode != 1:
        return f"{what} exited {p.returncode}, expected 1 ({err.strip()[:200]!r})"
    if len(lines) != 1 or not LINE.match(lines[0]):
        return f"{what}: stderr is not one 'onnxzip: ... [ONNXZIP_E...]' line: {err.strip()[:300]!r}"
    got = LINE.match(lines[0]).group(1)
    if got not in ["ONNXZIP_" + x for x in expect]:
        return f"{what}: got {got}, expected {'/'.join(expect)}: {lines[0][:300]}"
    return None


def check_file(onnxzip, path, expect, ls_check, timeout=60):
    for cmd in ("verify", "ls"):
        argv = [onnxzip, cmd, path] + (["--json"] if cmd == "ls" else [])
        p, terr, _ = run(argv, timeout)
        if terr:
            return terr
        e = judge(p, expect, cmd)
        if e:
            return e
        if cmd == "ls" and expect == OK and ls_check:
            e = ls_check(p.stdout.decode("utf-8", "replace"))
            if e:
                return f"ls: {e}"
    return None


def storage_is(name, storage):
    def f(out):
        if f'"name": "{name}"' not in out or f'"storage": "{storage}"' not in out:
            return f"tensor {name} not listed with storage {storage}: {out[-300:]!r}"
        return None
    return f


def cases():
    L = 64  # spec 10: graph depth <= 63, main graph depth 0
    small = b"\x00" * 16
    out = [
        Case(f"{L} nested graphs (depth {L - 1}, at the limit)", nested_graphs(L), OK),
        Case(f"{L + 1} nested graphs (depth {L}, one past the limit)", nested_graphs(L + 1), ["ELIMIT"]),
        Case("70 nested If then_branch graphs", nested_graphs(70), ["ELIMIT"]),
        Case("70 nested graphs, a tensor in the innermost",
             nested_graphs(70, inits=[tensor("deep", FLOAT, [4], raw=small)]), ["ELIMIT"]),
        # spec 10: at most 256 nested messages. nested_types(k) nests 2k + 5
        # (Model, Graph, ValueInfo, TypeProto, k x (Sequence, TypeProto), Tensor).
        Case("TypeProto sequence_type nested 100,000 times", nested_types(100000), ["ELIMIT"]),
        Case("TypeProto sequence_type nested 125 times (255 messages)", nested_types(125), OK),
        Case("TypeProto sequence_type nested 126 times (257 messages)", nested_types(126), ["ELIMIT"]),
        Case("TypeProto sequence_type nested 40 times", nested_types(40), OK),
        Case("unknown field nesting 100,000 length-delimited fields", nested_unknown(100000), OK),
        Case("rank 64 (at the limit)", model(graph(inits=[tensor("r64", FLOAT, [1] * 64, raw=b"\0" * 4)])), OK),
        Case("rank 65", model(graph(inits=[tensor("r65", FLOAT, [1] * 65, raw=b"\0" * 4)])), ["ELIMIT"]),
        Case("rank 100000 (packed dims)",
             model(graph(inits=[f_len(1, varint(1) * 100000) + f_varint(2, FLOAT) + f_str(8, "rp") +
                                f_len(9, b"\0" * 4)])), ["ELIMIT"]),
        Case("negative dim, raw_data", model(graph(inits=[tensor("neg", FLOAT, [-1, 4], raw=small)])), ["ESIZE"]),
        Case("dims product overflows u64, raw_data",
             model(graph(inits=[tensor("ovf", FLOAT, [1 << 32, 1 << 32, 2], raw=small)])), ["ESIZE"]),
        Case("element count fits, byte size overflows u64 (2^60 COMPLEX128)",
             model(graph(inits=[tensor("ovb", COMPLEX128, [1 << 60], raw=small)])), ["ESIZE"]),
        Case("dim INT64_MAX, raw_data",
             model(graph(inits=[tensor("max", UINT8, [(1 << 63) - 1], raw=small)])), ["ESIZE"]),
        Case("2^60 FLOAT elements referencing a 16-byte entry / side file",
             model(graph(inits=[tensor("huge", FLOAT, [1 << 60], ext=[("location", "w")])])), ["ESIZE"],
             entries=[("w", small)], side={"w": small}),
        Case("negative dim referencing an entry",
             model(graph(inits=[tensor("negx", FLOAT, [-4], ext=[("location", "w")])])), ["ESIZE"],
             entries=[("w", small)], side={"w": small}),
        Case("STRING tensor with raw_data",
             model(graph(inits=[tensor("sraw", STRING, [2], raw=b"abcd")])), ["EDTYPE"]),
        Case("STRING tensor with string_data (typed storage)",
             model(graph(inits=[tensor("sdat", STRING, [2], string_data=[b"ab", b"c"])])), OK,
             ls_check=storage_is("sdat", "typed")),
        Case("STRING tensor referencing an entry",
             model(graph(inits=[tensor("sext", STRING, [2], ext=[("location", "w")])])), ["EDTYPE"],
             entries=[("w", small)], side={"w": small}),
        Case("external offset UINT64_MAX",
             model(graph(inits=[tensor("o1", UINT8, [16], ext=[("location", "w"), ("offset", str(U64)),
                                                                ("length", "16")])])), ["ERANGE"],
             entries=[("w", small)], side={"w": small}),
        Case("external offset 8, length UINT64_MAX (offset + length wraps)",
             model(graph(inits=[tensor("o2", UINT8, [8], ext=[("location", "w"), ("offset", "8"),
                                                               ("length", str(U64))])])), ["ERANGE"],
             entries=[("w", small)], side={"w": small}),
        Case("external offset UINT64_MAX - 7, length 16 (wraps to 8)",
             model(graph(inits=[tensor("o3", UINT8, [16], ext=[("location", "w"), ("offset", str(U64 - 7)),
                                                                ("length", "16")])])), ["ERANGE"],
             entries=[("w", small)], side={"w": small}),
        Case("external offset 2^64 (not a u64)",
             model(graph(inits=[tensor("o4", UINT8, [16], ext=[("location", "w"), ("offset", str(U64 + 1))])])),
             ["EREF", "ERANGE"], entries=[("w", small)], side={"w": small}),
        Case("external length 99999999999999999999999 (not a u64)",
             model(graph(inits=[tensor("o5", UINT8, [16], ext=[("location", "w"),
                                                                ("length", "9" * 23)])])),
             ["EREF", "ERANGE"], entries=[("w", small)], side={"w": small}),
        Case("external location '../w' (a path, not an entry name)",
             model(graph(inits=[tensor("p1", UINT8, [16], ext=[("location", "../w")])])), ["EPATH"],
             archive_expect=["EREF"], entries=[("w", small)]),
        Case("external location '/etc/passwd'",
             model(graph(inits=[tensor("p2", UINT8, [16], ext=[("location", "/etc/passwd")])])), ["EPATH"],
             archive_expect=["EREF"], entries=[("w", small)]),
        Case("external location 'w\\0x' (NUL inside)",
             model(graph(inits=[tensor("p3", UINT8, [16], ext=[("location", "w\0x")])])), ["EPATH", "EREF"],
             archive_expect=["EREF"], entries=[("w", small)], side={"w": small}),
        Case("external offset 16, no length (empty rest, dims [0])",
             model(graph(inits=[tensor("o6", UINT8, [0], ext=[("location", "w"), ("offset", "16")])])), OK,
             entries=[("w", small)], side={"w": small}),
    ]
    return out


# ---------------------------------------------------------------------------
# special cases
# ---------------------------------------------------------------------------


def listing(d):
    res = []
    for root, dirs, files in os.walk(d):
        dirs.sort()
        for x in sorted(dirs + files):
            res.append(os.path.relpath(os.path.join(root, x), d))
    return res


BAD_NAMES = [
    ("dotdot", "../evil", ["ENAME"]),
    ("dotdot deep", "a/../../evil", ["ENAME"]),
    ("absolute", "/tmp/onnxzip-hostile-evil", ["ENAME"]),
    ("backslash", "..\\evil", ["ENAME"]),
    ("NUL byte", "evil\0.txt", ["ENAME"]),
    ("300 bytes", "e" * 300, ["ELIMIT"]),
    ("300 bytes with slashes", "../" * 100, ["ENAME", "ELIMIT"]),
]


def name_cases(onnxzip, work):
    """Yields (label, error-or-None)."""
    for label, name, expect in BAD_NAMES:
        base = os.path.join(work, "names-" + re.sub(r"\W", "_", label))
        target = os.path.join(base, "target")
        os.makedirs(target)
        arc = os.path.join(base, "bad.onnxzip")
        data = b"\x11" * 64
        m = model(graph(inits=[tensor("evil", UINT8, [64], ext=[("location", name)])]))
        with open(arc, "wb") as f:
            f.write(archive(m, [(name, data)]))
        before = listing(base)
        abs_evil = "/tmp/onnxzip-hostile-evil"
        abs_before = os.path.exists(abs_evil)
        runs = [("ls", [onnxzip, "ls", arc, "--json"]),
                ("unpack", [onnxzip, "unpack", arc, "-o", os.path.join(target, "m.onnx")]),
                ("unpack per-tensor", [onnxzip, "unpack", arc, "-o", os.path.join(target, "m.onnx"),
                                       "--layout", "per-tensor"]),
                ("extract", [onnxzip, "extract", arc, "evil", "-o", os.path.join(target, "evil.bin")])]
        err = None
        for what, argv in runs:
            p, terr, _ = run(argv)
            err = terr or judge(p, expect, what)
            if err:
                break
        after = listing(base)
        if not err and after != before:
            err = f"files changed: before {before}, after {after}"
        if not err and os.path.exists(abs_evil) and not abs_before:
            err = f"{abs_evil} was created"
        yield f"entry name {label} {name[:20]!r} refused by ls/unpack/extract [{'/'.join(expect)}]", err


def many_entries_case(onnxzip, work, n=70000):
    """n tiny tensor entries, each referenced: accepted in < 5 s."""
    es = []
    inits = []
    for i in range(n):
        nm = f"t{i}"
        es.append(zipbuild.BEntry(name=nm, data=struct.pack("<I", i)))
        inits.append(tensor(nm, UINT8, [4], ext=[("location", nm)]))
    m = model(graph(inits=inits))
    es.append(zipbuild.BEntry(name=MODEL, data=m))
    arc = os.path.join(work, "many.onnxzip")
    with open(arc, "wb") as f:
        f.write(zipbuild.build(es))
    for cmd in ("verify", "ls"):
        p, terr, dt = run([onnxzip, cmd, arc] + (["--json"] if cmd == "ls" else []), timeout=60)
        if terr:
            return terr
        e = judge(p, OK, cmd)
        if e:
            return e
        if dt >= 5.0 and not WRAPPER:
            return f"{cmd} took {dt:.1f} s (limit 5 s)"
    # the classic equivalent: n tiny inline initializers
    cl = os.path.join(work, "many.onnx")
    with open(cl, "wb") as f:
        f.write(model(graph(inits=[tensor(f"t{i}", UINT8, [4], raw=struct.pack("<I", i))
                                   for i in range(n)])))
    for cmd in ("verify", "ls"):
        p, terr, dt = run([onnxzip, cmd, cl], timeout=60)
        if terr:
            return terr
        e = judge(p, OK, "classic " + cmd)
        if e:
            return e
        if dt >= 5.0 and not WRAPPER:
            return f"classic {cmd} took {dt:.1f} s (limit 5 s)"
    return None


def oversized_model_case(onnxzip, work):
    """A sparse archive: __MODEL_PROTO's local header at 0, then 2 GiB of hole,
    then its central record declaring 2^31 bytes: ELIMIT. Also a sparse
    classic file of 2 GiB starting like a ModelProto: ELIMIT."""
    size = 1 << 31
    name = MODEL.encode()
    crc = 0
    lh = struct.pack("<IHHHHHIIIHH", zipcheck.SIG_LOCAL, 10, 0, 0, 0, 0x21, crc, size, size, len(name), 0) + name
    cd_off = len(lh) + size
    cd = struct.pack("<IHHHHHHIIIHHHHHII", zipcheck.SIG_CENTRAL, 0x032D, 10, 0, 0, 0, 0x21, crc, size, size,
                     len(name), 0, 0, 0, 0, 0o100644 << 16, 0) + name
    eocd = struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, 1, 1, len(cd), cd_off, 0)
    arc = os.path.join(work, "bigmodel.onnxzip")
    with open(arc, "wb") as f:
        f.write(lh)
        f.seek(cd_off)
        f.write(cd + eocd)
    cl = os.path.join(work, "bigmodel.onnx")
    with open(cl, "wb") as f:
        f.write(f_varint(1, 8))
        f.truncate(size + 16)
    try:
        for path in (arc, cl):
            for cmd in ("verify", "ls"):
                p, terr, _ = run([onnxzip, cmd, path], timeout=60)
                if terr:
                    return terr
                e = judge(p, ["ELIMIT"], f"{cmd} {os.path.basename(path)}")
                if e:
                    return e
        return None
    finally:
        os.unlink(arc)
        os.unlink(cl)


# ---------------------------------------------------------------------------


def main(argv):
    args = argv[1:]
    keep = only = probe = None
    while len(args) > 1 and args[-2] in ("--keep", "--only", "--probe"):
        if args[-2] == "--keep":
            keep = args[-1]
        elif args[-2] == "--probe":
            probe = args[-1]
        else:
            only = args[-1]
        del args[-2:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip = args[0]
    passed = failed = 0
    failures = []

    def report(label, err):
        nonlocal passed, failed
        if err:
            failed += 1
            failures.append(f"{label}: {err}")
            print(f"FAIL {label}: {err}", flush=True)
        else:
            passed += 1
            print(f"ok   {label}", flush=True)

    with tempfile.TemporaryDirectory(prefix="onnxzip-hmodels-") as tmp:
        work = keep or tmp
        os.makedirs(work, exist_ok=True)
        for i, c in enumerate(cases()):
            if only and only not in c.name:
                continue
            want = "accepted" if c.expect == OK else "/".join(x for x in c.expect if x != OK)
            if OK in c.expect and c.expect != OK:
                want += "/accepted"
            d = os.path.join(work, f"case{i:02d}")
            os.makedirs(d, exist_ok=True)
            cl = os.path.join(d, "model.onnx")
            with open(cl, "wb") as f:
                f.write(c.model)
            for loc, data in c.side.items():
                with open(os.path.join(d, loc), "wb") as f:
                    f.write(data)
            arc = os.path.join(d, "model.onnxzip")
            with open(arc, "wb") as f:
                f.write(archive(c.model, c.entries))
            for kind, path, expect in (("classic", cl, c.expect), ("archive", arc, c.archive_expect)):
                e = check_file(onnxzip, path, expect, c.ls_check)
                if not e and probe:
                    p, e, _ = run([probe, path])
                    if not e and p.returncode != 0:
                        e = f"model_proto_probe exited {p.returncode} " \
                            f"({p.stderr.decode(errors='replace').strip()[:200]})"
                    if not e and expect == OK and "model_proto ONNXZIP_OK" not in p.stdout.decode():
                        e = f"model_proto_probe: {p.stdout.decode().strip()}"
                report(f"case{i:02d} {kind} {c.name} [{want}]", e)
        if not only or "name" in only:
            for label, err in name_cases(onnxzip, work):
                report(label, err)
        if not only or "70000" in only:
            report("70,000 tiny entries (archive and classic) accepted in < 5 s",
                   many_entries_case(onnxzip, work))
        if not only or "oversized" in only:
            report("oversized __MODEL_PROTO (2 GiB, sparse) and 2 GiB classic file [ELIMIT]",
                   oversized_model_case(onnxzip, work))
    if failures:
        print("\nfailures:")
        for f in failures:
            print("  " + f)
    print(f"hostile_models: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
