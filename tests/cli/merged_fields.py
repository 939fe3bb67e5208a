#!/usr/bin/python3
"""merged_fields — the library reads a model as protobuf does (issue 9, spec 8.5).

    merged_fields.py ONNXZIP_EXE [CORPUS_DIR]

In protobuf a singular message field given twice is ONE message: the copies
merge (later scalars win, repeated fields such as dims and external_data
concatenate). Each case here is raw model bytes, some with such repeats. The
oracle is the `onnx` package: ModelProto.FromString() merges as protobuf
does, and the tensors of its parse, checked here independently against the
entries (location, offset, length within the entry; bytes = dims x type; no
key twice), decide whether the model must be accepted and what every tensor
is. The model is tried

  * inside an archive (entries "a" = 256 bytes, "b" = 4096 bytes, then
    __MODEL_PROTO): `onnxzip ls --json` and `onnxzip verify`;
  * as a classic external-data model (files a and b beside it): `verify`,
    `ls --json`, then `pack` and `unpack`; the unpacked model, loaded with
    onnx.load, must hold the oracle's tensors with the same bytes.

An accepted model's tensors must equal the oracle's (name, type, dims, where
the bytes are); a refused one must exit 1 with the expected status and leave
no output file. Also: each model of CORPUS_DIR/models (when given and
present) with its graph and its first Constant's value each split in two
copies (protobuf merges them back) lists the same tensors as the onnx
package's parse, byte for byte, and verifies.

Prints "merged_fields: N passed, M failed"; exits 1 on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_models  # noqa: E402
import ozcommon  # noqa: E402
import zipbuild  # noqa: E402

import onnx  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402

EXE = sys.argv[1]
CORPUS = sys.argv[2] if len(sys.argv) > 2 else None
ENTRIES = {"a": bytes((i * 131 + 7) & 0xFF for i in range(256)),
           "b": bytes((i * 131 + 7) & 0xFF for i in range(4096))}
TALLY = ozcommon.Tally()
check = TALLY.check


# ---------------------------------------------------------------------------
# raw protobuf (hostile_models' encoders: f_varint = a varint field, f_len = a
# length-delimited one)
# ---------------------------------------------------------------------------

vi, ld = hostile_models.f_varint, hostile_models.f_len


def tensor(name=None, dtype=None, dims=(), loc=None, offset=None, length=None, raw=None):
    t = TensorProto()
    if name is not None:
        t.name = name
    if dtype is not None:
        t.data_type = dtype
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    if loc is not None or offset is not None or length is not None:
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", offset), ("length", length)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
    return t.SerializeToString()


def model(graph_fields, extra=b""):
    """ir_version 8, opset 17, a graph named g."""
    return vi(1, 8) + ld(8, ld(1, b"") + vi(2, 17)) + ld(7, ld(2, b"g") + graph_fields) + extra


def node(op, attr_fields):
    return ld(1, ld(4, op) + ld(5, attr_fields))


# ---------------------------------------------------------------------------
# the oracle: the onnx package's parse, checked here
# ---------------------------------------------------------------------------

def oracle(raw):
    """(tensors, problem): every TensorProto protobuf sees (ozcommon's walk of
    the onnx package's parse), and the status the model must be refused with
    (None when it must be accepted)."""
    m = onnx.ModelProto.FromString(raw)
    out, problems = [], []
    for t, kind, depth, _ in ozcommon.iter_tensors(m):
        keys = [e.key for e in t.external_data]
        kv = {e.key: e.value for e in t.external_data}
        need = ozcommon.spec_byte_size(t.data_type, list(t.dims))
        rec = {"name": t.name, "data_type": t.data_type, "dims": list(t.dims), "kind": ozcommon.KIND_NAMES[kind],
               "graph_depth": depth}
        if t.data_location == TensorProto.EXTERNAL:
            if len(keys) != len(set(keys)) or t.HasField("raw_data"):
                problems.append("ONNXZIP_EREF")
            loc, off = kv.get("location"), int(kv.get("offset", 0))
            size = len(ENTRIES.get(loc, b""))
            ln = int(kv.get("length", size - off))
            if loc not in ENTRIES:
                problems.append("ONNXZIP_EREF")
            elif off + ln > size:
                problems.append("ONNXZIP_ERANGE")
            elif need is None:
                problems.append("ONNXZIP_EDTYPE")
            elif ln != need:
                problems.append("ONNXZIP_ESIZE")
            rec.update(storage="entry", entry=loc, data=ENTRIES.get(loc, b"")[off:off + ln])
        elif t.HasField("raw_data"):
            if need is None:
                problems.append("ONNXZIP_EDTYPE")
            elif len(t.raw_data) != need:
                problems.append("ONNXZIP_ESIZE")
            rec.update(storage="inline", data=t.raw_data)
        else:
            rec.update(storage="typed", data=None)
        out.append(rec)
    return out, (problems[0] if problems else None)


def key(r):
    return (r["kind"], r["graph_depth"], r["name"], r["data_type"], r["dims"], r["storage"], r.get("entry") or "")


# ---------------------------------------------------------------------------
# running onnxzip
# ---------------------------------------------------------------------------

def run(*args):
    p = subprocess.run([EXE] + list(args), capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def status_of(err):
    return err.strip().rsplit("[", 1)[-1].rstrip("]") if "[" in err else err.strip()


def listed(path):
    rc, out, err = run("ls", "--json", path)
    if rc:
        return None, status_of(err)
    return json.loads(out)["tensors"], None


def same_tensors(got, want, what, form, data_of):
    g = sorted(got, key=key)
    w = sorted(want, key=key)
    ok = len(g) == len(w) and all(key(x) == key(y) for x, y in zip(g, w))
    if ok:
        ok = all(y["data"] is None or data_of(x) == y["data"] for x, y in zip(g, w))
    check(ok, f"{what} ({form}): tensors differ from protobuf's parse\n  onnxzip: {[key(x) for x in g]}\n"
              f"  onnx:    {[key(y) for y in w]}")


def try_archive(tmp, what, raw, want, problem):
    es = [zipbuild.BEntry(name=n, data=d) for n, d in ENTRIES.items()]
    es.append(zipbuild.BEntry(name="__MODEL_PROTO", data=raw))
    blob = zipbuild.build(es)
    path = os.path.join(tmp, what + ".onnxzip")
    with open(path, "wb") as f:
        f.write(blob)
    got, st = listed(path)
    vrc, _, verr = run("verify", path)
    if problem:
        check(st == problem and vrc == 1 and status_of(verr) == problem,
              f"{what} (archive): expected {problem} from ls and verify, got {st} / {status_of(verr) if vrc else 'OK'}")
        return
    check(st is None and vrc == 0, f"{what} (archive): refused ({st}, verify: {verr.strip()})")
    if got is not None:
        same_tensors(got, want, what, "archive",
                     lambda x: blob[x["offset"]:x["offset"] + x["nbytes"]] if x["storage"] != "typed" else None)


def try_classic(tmp, what, raw, want, problem):
    d = os.path.join(tmp, what)
    os.mkdir(d)
    for n, data in ENTRIES.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(data)
    src = os.path.join(d, "m.onnx")
    with open(src, "wb") as f:
        f.write(raw)
    vrc, _, verr = run("verify", src)
    out = os.path.join(d, "m.onnxzip")
    prc, _, perr = run("pack", src, "-o", out, "--size-threshold", "0", "-q")
    if problem:
        check(vrc == 1 and status_of(verr) == problem, f"{what} (classic): verify gave "
              f"{status_of(verr) if vrc else 'OK'}, expected {problem}")
        check(prc == 1 and not os.path.exists(out), f"{what} (classic): pack gave {perr.strip() or 'OK'}, "
              f"expected {problem} and no output")
        return
    check(vrc == 0, f"{what} (classic): verify refused: {verr.strip()}")
    check(prc == 0, f"{what} (classic): pack refused: {perr.strip()}")
    if prc:
        return
    got, st = listed(out)
    check(st is None, f"{what}: the packed archive does not list: {st}")
    os.mkdir(os.path.join(d, "back"))
    back = os.path.join(d, "back", "m.onnx")
    urc, _, uerr = run("unpack", out, "-o", back, "--size-threshold", "0", "-q")
    check(urc == 0, f"{what}: unpack refused: {uerr.strip()}")
    if urc:
        return
    m = onnx.load(back)  # resolves the external data the unpack wrote
    again, _ = oracle(m.SerializeToString())
    # after unpack every payload is a side file or inline: compare what and where-independent bytes
    loaded = {(r["kind"], r["name"]): r for r in again}
    for r in want:
        x = loaded.get((r["kind"], r["name"]))
        ok = x is not None and x["dims"] == r["dims"] and x["data_type"] == r["data_type"]
        if ok and r["data"] is not None:
            ok = numpy_helper_bytes(m, r) == r["data"]
        check(ok, f"{what}: tensor '{r['name']}' ({r['kind']}) differs after pack + unpack")


def numpy_helper_bytes(m, r):
    """The tensor's bytes in the onnx.load()ed model (raw_data after load)."""
    for t, _, _, _ in ozcommon.iter_tensors(m):
        if t.name == r["name"] and list(t.dims) == r["dims"]:
            return t.raw_data if t.HasField("raw_data") else numpy_helper.to_array(t).tobytes()
    return None


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------

def const(*copies):
    """A Constant whose `value` attribute tensor is given once per copy."""
    return node(b"Constant", ld(1, b"value") + b"".join(ld(5, c) for c in copies) + vi(20, 4))


def cases():
    t64 = tensor("w", 1, [64], loc="a")
    vals, idx = tensor("v", 1, [4], loc="a"), tensor("i", 7, [4], raw=bytes(32))
    sp = ld(1, vals) + ld(2, idx) + vi(3, 10)
    sub = lambda fields: ld(2, b"sub") + fields  # noqa: E731
    return {
        # the example: dims [64] + dims [64] = [64, 64], 16 KiB from a 256-byte entry
        "value_twice_dims": model(const(t64, tensor(dims=[64]))),
        # valid split: dims and type, then raw_data (onnx.checker accepts it)
        "value_twice_raw": model(const(tensor("k", 1, [4]), tensor(raw=bytes(range(16))))),
        # data_type again: DOUBLE [64] = 512 bytes
        "value_twice_dtype": model(const(t64, tensor(dtype=11))),
        # location again: the merged external_data has two
        "value_twice_location": model(const(t64, tensor(loc="b"))),
        # offset again
        "value_twice_offset": model(const(tensor("w", 1, [16], loc="b", offset=0), tensor(offset=64))),
        # valid split: where (b at 1024) first, type and dims second
        "value_twice_split": model(const(tensor("s", loc="b", offset=1024, length=256), tensor(dtype=1, dims=[8, 8]))),
        # raw_data in the first copy, EXTERNAL in the second: both, refused
        "value_raw_then_external": model(const(tensor("r", 1, [4], raw=bytes(16)), tensor(loc="a", length=16))),
        "initializers_plain": model(ld(5, tensor("w0", 1, [64], loc="a")) + ld(5, tensor("w1", 1, [16, 16], loc="b"))),
        # a sparse initializer whose values come twice: dims [4] + [2] = [4, 2], 32 bytes, but the
        # reference (no length) covers all 256 bytes of "a"
        "sparse_values_twice": model(ld(15, sp + ld(1, tensor(dims=[2])))),
        # ... and one where the merged values need more than the entry
        "sparse_values_twice_past": model(ld(15, sp + ld(1, tensor(dims=[64])))),
        # an attribute's sparse_tensor twice: values' keys repeat
        "sparse_attr_twice": model(node(b"Constant", ld(1, b"sparse_value") + ld(22, sp) + ld(22, ld(1, vals))
                                        + vi(20, 11))),
        # subgraph attribute twice: one merged graph with both initializers
        "subgraph_twice": model(node(b"If", ld(1, b"then_branch") + ld(6, sub(ld(5, tensor("s0", 1, [16], loc="a"))))
                                     + ld(6, ld(5, tensor("s1", 1, [8], loc="b"))) + vi(20, 5))),
        # a subgraph's Constant given twice inside the merged graph
        "subgraph_const_twice": model(node(b"If", ld(1, b"then_branch")
                                           + ld(6, sub(const(tensor("c", 1, [16], loc="a"))))
                                           + ld(6, const(tensor(dims=[4]))) + vi(20, 5))),
        # the model's graph twice
        "graph_twice": model(ld(5, t64), ld(7, ld(5, tensor("w2", 1, [2, 2], loc="b")))),
        # a function's attribute default tensor given twice
        "function_attr_twice": model(b"", ld(25, ld(1, b"F") + ld(10, b"local") + ld(11, ld(1, b"k")
                                                + ld(5, tensor("fk", 1, [8], loc="b")) + ld(5, tensor(dims=[2]))
                                                + vi(20, 4)))),
    }


def protobuf_c_refuses():
    """Models protobuf-c (onnxzip_model_proto) cannot parse: the library must
    refuse them at open (ONNXZIP_EPROTO), not accept what it cannot then parse."""
    w = tensor("w", 1, [2], raw=bytes(8))
    return {
        "wrong_wire_type": vi(1, 8)[:0] + ld(1, b"x") + model(ld(5, w))[2:],  # ir_version as a string
        "packed_floats_cut": model(ld(5, tensor("f", 1, [1]) + ld(4, bytes(5)))),  # float_data: 5 bytes
        # a tensor's name (field 8) behind a 6-byte tag
        "long_tag": model(ld(5, w + bytes([0xC2, 0x80, 0x80, 0x80, 0x80, 0x00, 1]) + b"n")),
        "type_twice_empty": model(ld(11, ld(1, b"x") + ld(2, b"") + ld(2, b"")) + ld(5, w)),
        "attr_type_twice_empty": model(node(b"Cast", ld(1, b"tp") + ld(14, b"") + ld(14, b"") + vi(20, 13)) + ld(5, w)),
    }


def split_model(raw):
    """The corpus model with its graph given as two copies (the first without
    initializers, the second with them) and its first Constant's `value`
    given as two copies (dims and raw_data in the second): protobuf merges
    both back, so the onnx package parses the same tensors. None when the
    model has no graph."""
    m = onnx.ModelProto.FromString(raw)
    if not m.HasField("graph"):
        return None
    g = m.graph
    const_raw = b""
    for i, nd in enumerate(g.node):
        hit = [j for j, a in enumerate(nd.attribute) if a.HasField("t") and a.t.HasField("raw_data")]
        if hit:
            a = onnx.AttributeProto()
            a.CopyFrom(nd.attribute[hit[0]])
            tail = TensorProto(dims=a.t.dims, raw_data=a.t.raw_data)
            a.t.ClearField("dims")
            a.t.ClearField("raw_data")
            n2 = onnx.NodeProto()
            n2.CopyFrom(nd)
            del n2.attribute[hit[0]]
            const_raw = ld(1, n2.SerializeToString() + ld(5, a.SerializeToString() + ld(5, tail.SerializeToString())))
            del g.node[i]
            break
    inits = onnx.GraphProto()
    inits.initializer.extend(g.initializer)
    g.ClearField("initializer")
    first = g.SerializeToString()
    m.ClearField("graph")
    return m.SerializeToString() + ld(7, first) + ld(7, inits.SerializeToString() + const_raw)


def main():
    with tempfile.TemporaryDirectory(prefix="merged-fields-") as tmp:
        for what, raw in cases().items():
            if what.startswith("function_attr") and not hasattr(onnx.FunctionProto(), "attribute_proto"):
                # onnx < 1.13 has no FunctionProto.attribute_proto: it cannot be the oracle here
                # (fuzz_model_diff checks this case against protobuf-c, whose schema has it)
                print(f"merged_fields: {what}: not run, onnx {onnx.__version__} has no FunctionProto.attribute_proto")
                continue
            want, problem = oracle(raw)
            try_archive(tmp, what, raw, want, problem)
            try_classic(tmp, what, raw, want, problem)
        for what, raw in protobuf_c_refuses().items():
            path = os.path.join(tmp, what + ".onnx")
            with open(path, "wb") as f:
                f.write(raw)
            rc, _, err = run("verify", path)
            check(rc == 1 and status_of(err) == "ONNXZIP_EPROTO", f"{what}: verify gave {status_of(err) if rc else 'OK'}, "
                  "expected ONNXZIP_EPROTO (protobuf-c cannot parse it)")
        models = os.path.join(CORPUS or "", "models")
        if CORPUS and os.path.isdir(models):
            for name in sorted(os.listdir(models)):
                with open(os.path.join(models, name), "rb") as f:
                    raw = f.read()
                split = split_model(raw)
                if split is None:
                    continue
                want, problem = oracle(split)
                before, _ = oracle(raw)
                # the construction itself: protobuf must see the same tensors
                check(sorted(map(key, want)) == sorted(map(key, before)), f"corpus {name}: the split changed the model")
                path = os.path.join(tmp, "split_" + name)
                with open(path, "wb") as f:
                    f.write(split)
                got, st = listed(path)
                vrc, _, verr = run("verify", path)
                check(st is None and vrc == 0, f"corpus {name} split: refused ({st}; verify: {verr.strip()})")
                if got is not None:
                    same_tensors(got, want, name, "corpus split",
                                 lambda x: split[x["offset"]:x["offset"] + x["nbytes"]] if x["storage"] != "typed" else None)
        else:
            print("merged_fields: corpus absent (no CORPUS_DIR/models): only the crafted cases ran")
    print(f"merged_fields: {TALLY.passed} passed, {TALLY.failed} failed")
    return 1 if TALLY.failed else 0


if __name__ == "__main__":
    sys.exit(main())
