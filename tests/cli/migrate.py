#!/usr/bin/python3
"""migrate — packing classic external-data models, and what pack refuses.

    migrate.py ONNXZIP_EXE DUMP_TENSORS_EXE

Models are built with the onnx package (Debian python3-onnx) in temp dirs:
  * layouts onnx itself writes: one shared data file (unaligned offsets), one
    file per tensor, mixed with inline tensors, tensors without offset/length,
    data in another directory (--data-dir); packed, every tensor's bytes seen
    through the archive equal onnx's numpy values;
  * typed-field tensors (float_data, int32_data holding FLOAT16 and INT8,
    int64_data, double_data, uint64_data) become raw little-endian entries;
    --keep-typed leaves them; --no-convert-attributes leaves Constant values;
    --dedup stores identical payloads once;
  * hostile external data, one case per rule: absolute path, '..', a symlink,
    a symlinked directory, a FIFO (must not hang), a device node, a hard
    link, a directory, offset/length past the end, a missing file. Each is
    refused with its status and a message naming the tensor and the rule,
    and leaves no output and no temporary file.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL", what)


def run(*args, timeout=60):
    return subprocess.run(list(args), capture_output=True, timeout=timeout)


def model_with(inits, nodes=(), name="g"):
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(list(nodes), name, [], [out], initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def tensors_of(dump_exe, arc):
    p = run(dump_exe, arc)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


def ls_json(exe, arc):
    p = run(exe, "ls", arc, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def raw_bytes(arc, entry):
    import zipfile
    with zipfile.ZipFile(arc) as z:
        return z.read(entry)


def rng_tensor(name, shape, dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    return numpy_helper.from_array((r.standard_normal(shape) * 10).astype(dtype), name)


def external_layouts(exe, d):
    """Layouts written by onnx's own converters, packed, values compared."""
    inits = [rng_tensor(f"layer.{i}.weight", (17 + i, 33), seed=i) for i in range(5)]
    inits.append(rng_tensor("small.bias", (3,), seed=9))
    cases = {
        "single": dict(all_tensors_to_one_file=True, location="weights.bin", size_threshold=64),
        "pertensor": dict(all_tensors_to_one_file=False, size_threshold=64),
        "zero_threshold": dict(all_tensors_to_one_file=True, location="all.data", size_threshold=0),
    }
    for label, kw in cases.items():
        src = os.path.join(d, label)
        os.makedirs(src)
        m = model_with(inits)
        onnx.save_model(m, os.path.join(src, "m.onnx"), save_as_external_data=True, **kw)
        arc = os.path.join(d, label + ".onnxzip")
        p = run(exe, "pack", os.path.join(src, "m.onnx"), "-o", arc, "--size-threshold", "0")
        check(p.returncode == 0, f"{label}: pack failed: {p.stderr!r}")
        if p.returncode:
            continue
        listing = ls_json(exe, arc)
        by_name = {t["name"]: t for t in listing["tensors"]}
        for t in inits:
            e = by_name.get(t.name)
            check(e is not None and e["storage"] == "entry", f"{label}: {t.name} not an entry")
            if e:
                check(raw_bytes(arc, e["entry"]) == numpy_helper.to_array(t).tobytes(), f"{label}: {t.name} bytes")
        check(run(exe, "verify", arc).returncode == 0, f"{label}: verify")

    # offsets/lengths absent: one file per tensor whose whole content is the payload
    src = os.path.join(d, "nolength")
    os.makedirs(src)
    t = rng_tensor("w", (40, 40), seed=3)
    data = numpy_helper.to_array(t).tobytes()
    with open(os.path.join(src, "w.raw"), "wb") as f:
        f.write(data)
    ext = TensorProto()
    ext.CopyFrom(t)
    ext.ClearField("raw_data")
    ext.data_location = TensorProto.EXTERNAL
    ext.external_data.add(key="location", value="w.raw")
    onnx.save_model(model_with([ext]), os.path.join(src, "m.onnx"))
    arc = os.path.join(d, "nolength.onnxzip")
    check(run(exe, "pack", os.path.join(src, "m.onnx"), "-o", arc).returncode == 0, "nolength: pack")
    check(raw_bytes(arc, "w") == data, "nolength: bytes")

    # --data-dir: the model in one place, its data in another
    model_dir, data_dir = os.path.join(d, "model_only"), os.path.join(d, "data_elsewhere")
    os.makedirs(model_dir)
    os.makedirs(data_dir)
    onnx.save_model(model_with([t]), os.path.join(data_dir, "m.onnx"), save_as_external_data=True,
                    location="d.bin", size_threshold=0)
    os.rename(os.path.join(data_dir, "m.onnx"), os.path.join(model_dir, "m.onnx"))
    arc = os.path.join(d, "datadir.onnxzip")
    p = run(exe, "pack", os.path.join(model_dir, "m.onnx"), "-o", arc)
    check(p.returncode == 1 and b"ONNXZIP_ENOTFOUND" in p.stderr, f"data-dir: missing data not ENOTFOUND: {p.stderr!r}")
    p = run(exe, "pack", os.path.join(model_dir, "m.onnx"), "-o", arc, "--data-dir", data_dir)
    check(p.returncode == 0 and raw_bytes(arc, "w") == data, f"data-dir: {p.stderr!r}")


def typed_and_options(exe, dump, d):
    f32 = helper.make_tensor("f32", TensorProto.FLOAT, [300], np.arange(300, dtype=np.float32) / 7)
    f16v = (np.arange(600) / 9).astype(np.float16)
    f16 = helper.make_tensor("f16", TensorProto.FLOAT16, [600], f16v)  # int32_data with float16 bits
    i8 = helper.make_tensor("i8", TensorProto.INT8, [2000], (np.arange(2000) % 200 - 100).astype(np.int8))
    i64 = helper.make_tensor("i64", TensorProto.INT64, [200], np.arange(200, dtype=np.int64) * -3)
    f64 = helper.make_tensor("f64", TensorProto.DOUBLE, [200], np.arange(200, dtype=np.float64) / 3)
    u64 = helper.make_tensor("u64", TensorProto.UINT64, [200], np.arange(200, dtype=np.uint64) * 12345)
    u32 = helper.make_tensor("u32", TensorProto.UINT32, [300], np.arange(300, dtype=np.uint32) * 7)
    b = helper.make_tensor("flags", TensorProto.BOOL, [2048], (np.arange(2048) % 3 == 0))
    strs = helper.make_tensor("s", TensorProto.STRING, [2], [b"a" * 2000, b"b"])
    dup1 = rng_tensor("dup1", (64, 64), seed=5)
    dup2 = rng_tensor("dup2", (64, 64), seed=5)
    const = helper.make_node("Constant", [], ["c"], value=rng_tensor("const_val", (32, 32), seed=6))
    typed = [f32, f16, i8, i64, f64, u64, u32, b]
    m = model_with(typed + [strs, dup1, dup2], [const])
    for t in typed:
        check(not t.HasField("raw_data"), f"{t.name} should be built in typed fields")
    path = os.path.join(d, "typed.onnx")
    onnx.save_model(m, path)

    arc = os.path.join(d, "typed.onnxzip")
    check(run(exe, "pack", path, "-o", arc, "--size-threshold", "64").returncode == 0, "typed: pack")
    listing = {t["name"]: t for t in ls_json(exe, arc)["tensors"]}
    for t in typed:
        e = listing[t.name]
        check(e["storage"] == "entry", f"typed {t.name}: storage {e['storage']}")
        want = numpy_helper.to_array(t).tobytes()
        check(raw_bytes(arc, e["entry"]) == want, f"typed {t.name}: raw bytes differ from onnx's values")
    check(listing["s"]["storage"] == "typed", "strings stay typed")
    check(listing["const_val"]["storage"] == "entry", "attribute tensor converted by default")

    # the archive unzipped is a model onnx loads with the same values
    import zipfile
    out = os.path.join(d, "typed_unzipped")
    zipfile.ZipFile(arc).extractall(out)
    os.rename(os.path.join(out, "__MODEL_PROTO"), os.path.join(out, "model.onnx"))
    back = onnx.load(os.path.join(out, "model.onnx"))
    got = {t.name: numpy_helper.to_array(t) for t in back.graph.initializer}
    for t in typed + [strs, dup1]:
        check(np.array_equal(got[t.name], numpy_helper.to_array(t)), f"typed {t.name}: values after unzip")

    arc2 = os.path.join(d, "keep.onnxzip")
    check(run(exe, "pack", path, "-o", arc2, "--size-threshold", "64", "--keep-typed",
              "--no-convert-attributes", "--dedup").returncode == 0, "options: pack")
    listing = {t["name"]: t for t in ls_json(exe, arc2)["tensors"]}
    for t in typed:
        check(listing[t.name]["storage"] == "typed", f"--keep-typed: {t.name} moved")
    check(listing["const_val"]["storage"] == "typed" or listing["const_val"]["storage"] == "inline",
          "--no-convert-attributes: attribute tensor moved")
    check(listing["dup1"]["entry"] == listing["dup2"]["entry"] and listing["dup1"]["storage"] == "entry",
          f"--dedup: {listing['dup1']['entry']} vs {listing['dup2']['entry']}")
    entries = [e["name"] for e in ls_json(exe, arc2)["entries"]]
    check(len(entries) == 2, f"--dedup: one payload entry + the model expected, got {entries}")
    dump = tensors_of(dump, arc2)
    check(dump[0]["crc32"] == dump[1]["crc32"] if dump[0]["name"].startswith("dup") else True, "dedup crc")


def checksums(exe, d):
    """unpack --checksum writes ONNX's SHA-1 keys; verify checks them."""
    m = model_with([rng_tensor(f"w{i}", (32, 32), seed=i) for i in range(3)])
    src = os.path.join(d, "ck.onnx")
    onnx.save_model(m, src)
    arc = os.path.join(d, "ck.onnxzip")
    out = os.path.join(d, "ck_out")
    os.makedirs(out)
    check(run(exe, "pack", src, "-o", arc).returncode == 0, "checksum: pack")
    check(run(exe, "unpack", arc, "-o", os.path.join(out, "m.onnx"), "--checksum").returncode == 0, "checksum: unpack")
    keys = {e.key for t in onnx.load(os.path.join(out, "m.onnx"), load_external_data=False).graph.initializer
            for e in t.external_data}
    check(keys == {"location", "offset", "length", "checksum"}, f"checksum: keys {keys}")
    check(run(exe, "verify", os.path.join(out, "m.onnx")).returncode == 0, "checksum: verify of intact data")
    with open(os.path.join(out, "m.onnx.data"), "r+b") as f:
        f.seek(4100)
        b = f.read(1)
        f.seek(4100)
        f.write(bytes([b[0] ^ 1]))
    p = run(exe, "verify", os.path.join(out, "m.onnx"))
    check(p.returncode == 1 and b"[ONNXZIP_EDIGEST]" in p.stderr and b"SHA-1" in p.stderr,
          f"checksum: corrupted data not caught: {p.stderr!r}")


def hostile(exe, d):
    """One model per rule; pack and ls must refuse, naming tensor and rule."""
    t = rng_tensor("victim", (8, 8), seed=1)
    payload = numpy_helper.to_array(t).tobytes()
    root = os.path.join(d, "hostile")
    os.makedirs(root)
    outside = os.path.join(d, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "secret.bin"), "wb") as f:
        f.write(payload)

    def case(label, location, status, rule, setup=None, offset=None, length=None):
        cdir = os.path.join(root, label)
        os.makedirs(cdir)
        if setup:
            setup(cdir)
        ext = TensorProto()
        ext.CopyFrom(t)
        ext.ClearField("raw_data")
        ext.data_location = TensorProto.EXTERNAL
        ext.external_data.add(key="location", value=location)
        if offset is not None:
            ext.external_data.add(key="offset", value=str(offset))
        if length is not None:
            ext.external_data.add(key="length", value=str(length))
        mp = os.path.join(cdir, "m.onnx")
        onnx.save_model(model_with([ext]), mp)
        before = sorted(os.listdir(cdir))
        arc = os.path.join(cdir, "out.onnxzip")
        try:
            p = run(exe, "pack", mp, "-o", arc, timeout=20)
        except subprocess.TimeoutExpired:
            check(False, f"hostile {label}: pack hung")
            return
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 1 and f"[ONNXZIP_{status}]" in err,
              f"hostile {label}: expected {status}, got rc={p.returncode} {err.strip()!r}")
        check("'victim'" in err and rule in err, f"hostile {label}: message lacks tensor or rule '{rule}': {err!r}")
        check(sorted(os.listdir(cdir)) == before, f"hostile {label}: files left behind: "
              f"{sorted(set(os.listdir(cdir)) - set(before))}")
        q = run(exe, "ls", mp, timeout=20)
        check(q.returncode == 1 and f"[ONNXZIP_{status}]".encode() in q.stderr,
              f"hostile {label}: ls (classic open) did not refuse with {status}: {q.stderr!r}")

    def write_data(cdir, name="data.bin"):
        with open(os.path.join(cdir, name), "wb") as f:
            f.write(payload)

    case("absolute", os.path.join(outside, "secret.bin"), "EPATH", "absolute path")
    case("dotdot", "../../outside/secret.bin", "EPATH", "'..'")
    case("inner_dotdot", "sub/../data.bin", "EPATH", "'..'", setup=lambda c: (os.makedirs(os.path.join(c, "sub")),
                                                                              write_data(c)))
    case("symlink", "link.bin", "EPATH", "symbolic link",
         setup=lambda c: os.symlink(os.path.join(outside, "secret.bin"), os.path.join(c, "link.bin")))
    case("symlinked_dir", "ldir/secret.bin", "EPATH", "symbolic link",
         setup=lambda c: os.symlink(outside, os.path.join(c, "ldir")))
    case("fifo", "pipe", "EPATH", "not a regular file", setup=lambda c: os.mkfifo(os.path.join(c, "pipe")))
    case("directory", "subdir", "EPATH", "not a regular file", setup=lambda c: os.makedirs(os.path.join(c, "subdir")))

    def hardlink(c):
        write_data(c)
        os.link(os.path.join(c, "data.bin"), os.path.join(c, "alias.bin"))
    case("hardlink", "data.bin", "EPATH", "more than one hard link", setup=hardlink)
    case("past_end", "data.bin", "ERANGE", "run past the end", setup=write_data, offset=200, length=256)
    case("missing", "nothing.bin", "ENOTFOUND", "does not exist", setup=None)
    try:
        probe = os.path.join(d, "devprobe")
        os.mknod(probe, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.unlink(probe)
        case("device", "null", "EPATH", "not a regular file",
             setup=lambda c: os.mknod(os.path.join(c, "null"), 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
    except PermissionError:
        print("device case: not run (mknod needs CAP_MKNOD here)")


def large_no_sync(exe, d):
    """Tensors of 4 MiB and more take the kernel-copy path of pack (hashed by a
    background thread); --no-sync changes durability only, never the bytes."""
    inits = [rng_tensor("big0", (1024, 1280), seed=7), rng_tensor("small", (8, 8), seed=8),
             rng_tensor("big1", (2048, 600), seed=9)]
    src = os.path.join(d, "big.onnx")
    onnx.save_model(model_with(inits), src, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="big.onnx.data", size_threshold=1024)
    for flags in ([], ["--no-sync"]):
        arc = os.path.join(d, "big%d.onnxzip" % len(flags))
        out = os.path.join(d, "big_out%d" % len(flags))
        os.makedirs(out)
        check(run(exe, "pack", src, "-o", arc, *flags).returncode == 0, f"pack {flags}")
        check(run(exe, "verify", arc).returncode == 0, f"verify after pack {flags}")
        check(run(exe, "unpack", arc, "-o", os.path.join(out, "m.onnx"), *flags).returncode == 0,
              f"unpack {flags}")
        back = {t.name: numpy_helper.to_array(t) for t in onnx.load(os.path.join(out, "m.onnx")).graph.initializer}
        for t in inits:
            check(np.array_equal(back[t.name], numpy_helper.to_array(t)), f"{flags}: {t.name} after the round trip")


def main():
    exe, dump = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        external_layouts(exe, os.path.join(d, "layouts") if os.makedirs(os.path.join(d, "layouts")) is None else d)
        os.makedirs(os.path.join(d, "typed"))
        typed_and_options(exe, dump, os.path.join(d, "typed"))
        checksums(exe, d)
        large_no_sync(exe, d)
        hostile(exe, d)
    print(f"migrate: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
