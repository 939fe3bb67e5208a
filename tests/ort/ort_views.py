"""ort_views — the "view" layout of ort_layouts.py (issue 10): ONNX Runtime runs
an archive in place through a view, a small classic model whose external data
references point into the archive file itself (location = the archive's file
name, offset = absolute file offset of the tensor's bytes, length).

For a model and its reference outputs, check_views() packs it four ways
(VIEW_PACKS: the default threshold, --size-threshold 0, --align 4096 and
--dedup), writes the view beside each archive with `onnxzip view` (the
threshold-0 pack also with `view --size-threshold 0`) and checks:
  [view=py]   the view equals the one this module builds itself with the onnx
              package from `onnxzip ls --json` (stand_in_view; compared after
              parsing, the "onnxzip.view" metadata entry aside);
  [onnx.load] every tensor of the view, read through its external data the
              way onnx.load reads it (location relative to the view's
              directory, offset, length), equals the original model's tensor
              (name, type, dims, bytes), in the same order, subgraphs and
              functions included;
  [ort path]  ORT, given the view's path, computes the original's outputs bit
              for bit;
  [ort bytes+folder]
              ORT, given the view's bytes and the session config entry
              session.model_external_initializers_file_folder_path = the
              archive's directory (run from another working directory), too;
  [ort bytes, no folder]
              ORT, given only the bytes, resolves locations relative to its
              working directory: run from a directory without the archive it
              refuses, naming the archive's file name (ORT_NO_FILE), when the
              view has any external reference (else it must run); the
              default pack is also run from the archive's own directory,
              where it works (that is what the folder entry replaces).
All ORT loads of one view run in one node process (run_model.js --load).
make_synthetic() writes a model with tensors in a model-local function and in
If branches, and two equal initializers: with it, --dedup must store two
tensors in one entry, and after `onnxzip set-model` (the same model with a new
doc_string) `onnxzip verify VIEW` must report the view stale (ONNXZIP_ESTALE);
written again, it verifies and runs.
With --size-threshold 0, shape constants become entries. `onnxzip view` copies
tensors under 1 KiB into the view by default, so that view must run (t0).
Written with `view --size-threshold 0`, the constants stay external and ORT's
shape inference refuses them (ort_layouts.py, "Known ORT limitation"): that
view (t0-view0) must then behave exactly like the classic external-data form
of the same archive (the unzipped one, run by ort_layouts.py): its outputs, or
ORT's refusal naming the same tensor, for the path and the bytes loads alike.
Without the folder entry ORT then refuses either way: for the archive's path,
or (when the shape constant is in the main graph, whose shape inference runs
before the external data paths are checked) for the same tensor.
"""
import json
import os
import re
import subprocess

# align4096 and dedup also take --size-threshold 256, so that the corpus's
# "light" models, whose tensors all stay inline at the default threshold, have
# entries there too (256 keeps their shape constants inline, see t0).
# (name, pack options, view options). `onnxzip view` copies tensors under
# 1 KiB into the view by default, so the view of a threshold-0 pack runs
# (t0); with `view --size-threshold 0` its shape constants stay external and
# ORT refuses it as it refuses the unzipped archive (t0-view0).
VIEW_PACKS = (("default", [], []), ("t0", ["--size-threshold", "0"], []),
              ("t0-view0", ["--size-threshold", "0"], ["--size-threshold", "0"]),
              ("align4096", ["--size-threshold", "256", "--align", "4096"], []),
              ("dedup", ["--size-threshold", "256", "--dedup"], []))
VIEW_THRESHOLD = 1024  # `onnxzip view`'s default --size-threshold
VIEW_KEY = "onnxzip.view"
MODEL_ENTRY = "__MODEL_PROTO"
# ORT refusing a model loaded from bytes whose external data file it cannot
# find relative to its working directory: initializers ("escapes working
# directory ... does not exist") and tensors in subgraphs ("should be stored
# in X, but it is not regular file").
ORT_NO_FILE = re.compile(
    r"External data path for model loaded from bytes escapes working directory"
    r"|should be stored in (\S+), but it is not regular file")


def view_available(onnxzip, run):
    p = run([onnxzip, "--help"], timeout=60)
    text = (p.stdout + p.stderr).decode("utf-8", "replace")
    return re.search(r"^\s+view\b", text, re.M) is not None


# ---- tensors of a model, in one fixed order (spec 8.2) ----------------------

def graph_tensors(g):
    yield from g.initializer
    for s in g.sparse_initializer:
        yield s.values
        yield s.indices
    for n in g.node:
        for a in n.attribute:
            yield from attribute_tensors(a)


def attribute_tensors(a):
    if a.HasField("t"):
        yield a.t
    yield from a.tensors
    sparse = ([a.sparse_tensor] if a.HasField("sparse_tensor") else []) + list(a.sparse_tensors)
    for s in sparse:
        yield s.values
        yield s.indices
    if a.HasField("g"):
        yield from graph_tensors(a.g)
    for g in a.graphs:
        yield from graph_tensors(g)


def model_tensors(m):
    yield from graph_tensors(m.graph)
    for ti in m.training_info:
        yield from graph_tensors(ti.initialization)
        yield from graph_tensors(ti.algorithm)
    for f in m.functions:
        for n in f.node:
            for a in n.attribute:
                yield from attribute_tensors(a)
        for a in getattr(f, "attribute_proto", ()):  # onnx >= 1.13 only
            yield from attribute_tensors(a)


def external(t):
    import onnx
    if t.data_location != onnx.TensorProto.EXTERNAL:
        return None
    return {e.key: e.value for e in t.external_data}


# ---- the stand-in view ---------------------------------------------------------

def stand_in_view(onnxzip, run, archive, out, threshold):
    """Builds the view of `archive` with the onnx package: every entry-backed
    tensor's location becomes the archive's file name, its offset the entry's
    data offset (absolute, from `onnxzip ls --json`) plus its offset in the
    entry; one under `threshold` bytes gets its bytes inline instead. Returns
    the number of tensors rewritten."""
    import onnx
    import zipfile
    p = run([onnxzip, "ls", "--json", archive])
    if p.returncode != 0:
        raise RuntimeError(f"onnxzip ls --json exited {p.returncode}")
    entries = {e["name"]: e for e in json.loads(p.stdout)["entries"]}
    with zipfile.ZipFile(archive) as z:
        m = onnx.load_from_string(z.read(MODEL_ENTRY))
    n = 0
    for t in model_tensors(m):
        ext = external(t)
        if ext is None:
            continue
        e = entries[ext["location"]]
        off = int(ext.get("offset", "0"))
        length = int(ext.get("length", e["size"] - off))
        del t.external_data[:]
        if length == 0 or length < threshold:  # inline (onnx <= 1.13 reads length 0 as "to the end")
            t.ClearField("data_location")  # as the library writes it: absent, not DEFAULT
            with open(archive, "rb") as f:
                f.seek(e["data_offset"] + off)
                t.raw_data = f.read(length)
            continue
        for k, v in (("location", os.path.basename(archive)),
                     ("offset", str(e["data_offset"] + off)), ("length", str(length))):
            kv = t.external_data.add()
            kv.key, kv.value = k, v
        n += 1
    kv = m.metadata_props.add()
    kv.key, kv.value = VIEW_KEY, "stand-in built by tests/ort/ort_views.py"
    with open(out, "wb") as f:
        f.write(m.SerializeToString())
    return n


def normalized(path):
    """The model at path as bytes protobuf writes for it, with the view's
    metadata entry dropped and every tensor's external_data keys sorted."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    keep = [(p.key, p.value) for p in m.metadata_props if p.key != VIEW_KEY]
    del m.metadata_props[:]
    for k, v in keep:
        p = m.metadata_props.add()
        p.key, p.value = k, v
    for t in model_tensors(m):
        kv = sorted((e.key, e.value) for e in t.external_data)
        del t.external_data[:]
        for k, v in kv:
            e = t.external_data.add()
            e.key, e.value = k, v
    return m, m.SerializeToString()


def compare_views(a, b):
    """None when views a and b describe the same model, else why not."""
    ma, sa = normalized(a)
    mb, sb = normalized(b)
    if sa == sb:
        return None
    ta, tb = list(model_tensors(ma)), list(model_tensors(mb))
    if len(ta) != len(tb):
        return f"{len(ta)} vs {len(tb)} tensors"
    for x, y in zip(ta, tb):
        if x.SerializeToString() != y.SerializeToString():
            return (f"tensor '{x.name}': {dict(external(x) or {})} vs "
                    f"{dict(external(y) or {})}")
    return f"the models differ outside tensors ({len(sa)} vs {len(sb)} bytes)"


# ---- tensors as onnx.load reads them ----------------------------------------------

def tensor_value(t, base):
    """(name, data_type, dims, bytes) of tensor t, external data read relative
    to directory base as onnx.load does (location, offset, length)."""
    import onnx
    from onnx import numpy_helper
    ext = external(t)
    if ext is not None:
        c = onnx.TensorProto()
        c.CopyFrom(t)
        with open(os.path.join(base, ext["location"]), "rb") as f:
            f.seek(int(ext.get("offset", "0")))
            c.raw_data = f.read(int(ext["length"])) if "length" in ext else f.read()
        del c.external_data[:]
        c.data_location = onnx.TensorProto.DEFAULT
        t = c
    a = numpy_helper.to_array(t)
    data = repr(a.tolist()).encode() if a.dtype == object else a.tobytes()
    return t.name, t.data_type, list(t.dims), data


def compare_tensors(orig, view):
    """(None, count) when every tensor of view equals orig's, else (why, count)."""
    import onnx
    mo = onnx.load(orig, load_external_data=False)
    mv = onnx.load(view, load_external_data=False)
    to, tv = list(model_tensors(mo)), list(model_tensors(mv))
    if len(to) != len(tv):
        return f"{len(tv)} tensors, the original has {len(to)}", len(to)
    bo, bv = os.path.dirname(os.path.abspath(orig)), os.path.dirname(os.path.abspath(view))
    for i, (x, y) in enumerate(zip(to, tv)):
        a, b = tensor_value(x, bo), tensor_value(y, bv)
        if a != b:
            what = ("name" if a[0] != b[0] else "type" if a[1] != b[1]
                    else "dims" if a[2] != b[2] else "bytes")
            return f"tensor #{i} '{x.name}': {what} differ", len(to)
    return None, len(to)


# ---- the checks -------------------------------------------------------------------

def view_loads(vdir, elsewhere, from_own_dir):
    """run_model.js --load arguments for a view in vdir: by path; from bytes
    with the folder entry, run from `elsewhere`; from bytes without it, from
    `elsewhere` (must be refused) and, if from_own_dir, from vdir (runs)."""
    loads = [["path"], ["bytes", "--folder", vdir, "--cwd", elsewhere],
             ["bytes", "--cwd", elsewhere]]
    if from_own_dir:
        loads.append(["bytes", "--cwd", vdir])
    return loads


def make_view(ck, rn, onnxzip, what, archive, view, has_view, view_opts):
    """Writes the view with onnxzip view and checks it against the stand-in.
    True when the view was written."""
    d = os.path.dirname(archive)
    py_view = os.path.join(d, "py.view.onnx")
    threshold = (int(view_opts[view_opts.index("--size-threshold") + 1])
                 if "--size-threshold" in view_opts else VIEW_THRESHOLD)
    try:
        n = stand_in_view(onnxzip, rn.run, archive, py_view, threshold)
    except Exception as e:  # onnx refusing the model, ls failing
        ck.fail(f"{what} [view=py]", f"cannot build the stand-in view: {e}")
        return False
    if not has_view:
        ck.fail(f"{what} [view]", "onnxzip has no view command")
        return False
    p = rn.run([onnxzip, "view", archive, "-o", view] + view_opts)
    if p.returncode != 0:
        ck.fail(f"{what} [view]", f"onnxzip view exited {p.returncode}: {rn.tail(p)}")
        return False
    why = compare_views(view, py_view)
    if why:
        ck.fail(f"{what} [view=py]", why)
    else:
        ck.ok(f"{what} [view=py]", f" ({n} tensors point into the archive)")
    return True


def check_view(ck, rn, onnxzip, label, src, work, ref, spec, pack, has_view, classic,
               synthetic=False):
    """One pack of src and its view; classic: the (outputs, error) ORT gave
    for the unzipped archive of the same pack, or None. synthetic: src is
    make_synthetic's model (--dedup must share an entry; set-model check)."""
    name, opts, view_opts = pack
    what = f"{label} view/{name}"
    d = os.path.join(work, f"view-{name}")
    os.makedirs(d)
    archive = os.path.join(d, "model.onnxzip")
    p = rn.run([onnxzip, "pack", src, "-o", archive, "-q"] + opts)
    if p.returncode != 0:
        ck.fail(f"{what} [pack]", f"onnxzip pack exited {p.returncode}: {rn.tail(p)}")
        return
    view = os.path.join(d, "model.view.onnx")
    if not make_view(ck, rn, onnxzip, what, archive, view, has_view, view_opts):
        return
    n_refs, n_entries = references(view, archive)
    print(f"     {what}: {n_refs} tensors point into the archive ({n_entries} entries)",
          flush=True)
    if synthetic and name == "dedup":
        if n_entries < n_refs:
            ck.ok(f"{what} [shared entry]", f" ({n_refs} tensors in {n_entries} entries)")
        else:
            ck.fail(f"{what} [shared entry]", f"--dedup stored {n_refs} tensors in "
                                              f"{n_entries} entries; W1 and W2 are equal")
    try:
        why, n = compare_tensors(src, view)
    except Exception as e:
        why, n = f"cannot read the view's tensors: {e}", 0
    if why:
        ck.fail(f"{what} [onnx.load]", why)
    else:
        ck.ok(f"{what} [onnx.load]", f" ({n} tensors equal the original's)")

    elsewhere = os.path.join(work, "elsewhere")
    os.makedirs(elsewhere, exist_ok=True)
    loads = view_loads(d, elsewhere, name == "default")
    got, err = rn.loads(view, os.path.join(d, "loads.json"), spec, loads)
    if got is None:
        ck.fail(f"{what} [ort]", err)
        return
    base = os.path.basename(archive)
    for load in got:
        how = load["how"].replace(d, "DIR").replace(elsewhere, "ELSEWHERE")
        lwhat = f"{what} [ort {how}]"
        if load["how"] != f"bytes --cwd {elsewhere}":
            if name == "t0-view0":
                expect_classic(ck, rn, lwhat, load, ref, classic)
            else:
                expect_ref(ck, rn, lwhat, load, ref)
        elif n_refs == 0:
            expect_ref(ck, rn, lwhat + " (no external reference)", load, ref)
        else:
            expect_no_file(ck, rn, lwhat, load, base, got[0])
    if synthetic and name == "default":
        check_stale(ck, rn, onnxzip, what, archive, view, spec, ref)
        view_control(ck, rn, what, view, spec, ref)


def view_control(ck, rn, what, view, spec, ref):
    """The view must read the archive itself: flip one exponent bit in the
    first element of its largest referenced range; the outputs must change."""
    import onnx
    m = onnx.load(view, load_external_data=False)
    refs = [(int(e["length"]), int(e["offset"]), e["location"], t.name)
            for t in model_tensors(m) for e in [external(t)] if e is not None]
    length, offset, location, name = max(refs)
    with open(os.path.join(os.path.dirname(view), location), "r+b") as f:
        f.seek(offset + 3)
        b = f.read(1)[0]
        f.seek(offset + 3)
        f.write(bytes([b ^ 0x40]))
    got, err = rn.loads(view, view + ".control.json", spec, [["path"]])
    load = got[0] if got else {"error": err}
    cw = f"{what} [control: damaged archive is noticed]"
    if "error" in load or {"inputs": load["inputs"], "outputs": load["outputs"]} != ref:
        ck.ok(cw, f" (tensor '{name}' at offset {offset}: "
                  f"{load.get('error', '')[:80] or rn.describe_diff(ref, load)})")
    else:
        ck.fail(cw, f"flipping a bit of tensor '{name}' at archive offset {offset} "
                    f"changed no output")


def check_stale(ck, rn, onnxzip, what, archive, view, spec, ref):
    """verify VIEW passes; after set-model with the same model re-serialized
    with a new doc_string it fails with ONNXZIP_ESTALE; the view written again
    passes and ORT runs it bit-identically (the weights did not move)."""
    import onnx
    import zipfile
    p = rn.run([onnxzip, "verify", view])
    if p.returncode != 0:
        ck.fail(f"{what} [verify view]", f"onnxzip verify exited {p.returncode}: {rn.tail(p)}")
        return
    ck.ok(f"{what} [verify view]")
    with zipfile.ZipFile(archive) as z:
        m = onnx.load_from_string(z.read(MODEL_ENTRY))
    m.doc_string = "the same model, re-serialized by ort_views.py with a new doc_string"
    new = os.path.join(os.path.dirname(archive), "new.onnx")
    with open(new, "wb") as f:
        f.write(m.SerializeToString())
    p = rn.run([onnxzip, "set-model", archive, new, "-q"])
    if p.returncode != 0:
        ck.fail(f"{what} [set-model]", f"onnxzip set-model exited {p.returncode}: {rn.tail(p)}")
        return
    p = rn.run([onnxzip, "verify", view])
    if p.returncode == 1 and b"[ONNXZIP_ESTALE]" in p.stderr:
        ck.ok(f"{what} [stale after set-model]", " (verify: ONNXZIP_ESTALE)")
    else:
        ck.fail(f"{what} [stale after set-model]",
                f"onnxzip verify VIEW exited {p.returncode}: {rn.tail(p)}")
    p = rn.run([onnxzip, "view", archive, "-o", view, "-q"])
    q = rn.run([onnxzip, "verify", view]) if p.returncode == 0 else p
    if q.returncode != 0:
        ck.fail(f"{what} [view again]", f"onnxzip view/verify exited {q.returncode}: {rn.tail(q)}")
        return
    got, err = rn.loads(view, view + ".json", spec, [["path"]])
    if got is None:
        ck.fail(f"{what} [view again]", err)
    else:
        expect_ref(ck, rn, f"{what} [view again, ort path]", got[0], ref)


def references(view, archive):
    """(tensors of the view with external data, tensor entries of the archive)."""
    import onnx
    import zipfile
    m = onnx.load(view, load_external_data=False)
    with zipfile.ZipFile(archive) as z:
        n_entries = len(z.namelist()) - 1
    return sum(1 for t in model_tensors(m) if external(t) is not None), n_entries


def expect_ref(ck, rn, what, load, ref):
    if "error" in load:
        ck.fail(what, load["error"][-600:])
    elif {"inputs": load["inputs"], "outputs": load["outputs"]} != ref:
        ck.fail(what, rn.describe_diff(ref, load))
    else:
        ck.ok(what, f" ({len(ref['outputs'])} outputs identical; RssAnon "
              f"{load['proc'].get('RssAnon')} kB, RssFile {load['proc'].get('RssFile')} kB)"
              if load.get("proc") else f" ({len(ref['outputs'])} outputs identical)")


def expect_no_file(ck, rn, what, load, base, by_path):
    """ORT given the bytes only, run from a directory without the archive;
    by_path: the load of the same view by path."""
    err = load.get("error")
    limit = rn.external_limit.search(err or "")
    path_limit = rn.external_limit.search(by_path.get("error") or "")
    if err is None:
        ck.fail(what, "ORT ran a view from bytes without the folder entry from a "
                      "directory that does not hold the archive")
    elif ORT_NO_FILE.search(err) and base in err:
        ck.ok(what, f" (refused as documented: {ORT_NO_FILE.search(err).group(0)[:70]})")
    elif limit and path_limit and limit.group(1) == path_limit.group(1):
        ck.ok(what, f" (refused, like by path, by shape inference: external tensor "
                    f"'{limit.group(1)}')")
    else:
        ck.fail(what, f"refused, but not for the archive's path: {err[-600:]}")


def expect_classic(ck, rn, what, load, ref, classic):
    """Threshold 0: the view must do what the unzipped archive does."""
    m = rn.external_limit.search(load.get("error") or "")
    if classic is not None:
        cgot, cerr = classic
        cm = rn.external_limit.search(cerr or "")
        if cgot is not None and "error" not in load:
            expect_ref(ck, rn, what, load, ref)
        elif cm and m and cm.group(1) == m.group(1):
            ck.ok(what, f" (refused like the unzipped archive: ORT's shape inference "
                        f"cannot read external tensor '{m.group(1)}')")
        else:
            ck.fail(what, f"the unzipped archive gave "
                          f"{'outputs' if cgot is not None else repr(cerr[-200:])}, the view "
                          f"{'outputs' if 'error' not in load else repr(load['error'][-300:])}")
    elif m:
        ck.ok(what, f" (refused: ORT's shape inference cannot read external tensor "
                    f"'{m.group(1)}')")
    else:
        expect_ref(ck, rn, what, load, ref)


def check_views(ck, rn, onnxzip, label, src, work, ref, spec, has_view, classic_t0=None,
                synthetic=False):
    for pack in VIEW_PACKS:
        check_view(ck, rn, onnxzip, label, src, work, ref, spec, pack, has_view,
                   classic_t0 if pack[0] == "t0-view0" else None, synthetic)


# ---- a model with tensors in a function and in subgraphs, shared by --dedup ----

SYNTH_N = 512  # floats per tensor: 2048 bytes, above the default threshold


def make_synthetic(path):
    """Writes a small model whose tensors above the default threshold sit in
    the main graph (W1, W2: equal bytes, so --dedup stores them once), in a
    model-local function's Constant node (C) and in the then/else branches of
    an If (T, E). out = If(cond, (AddC(x) + W1 + W2) * T, ... * E), with
    AddC(x) = x + C from the function."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto as TP

    def vals(seed):
        return (np.arange(SYNTH_N, dtype=np.float32) * np.float32(0.001 * seed)
                - np.float32(0.25 * seed))

    def const(out, name, seed):
        return helper.make_node("Constant", [], [out], name=f"{name}_const",
                                value=numpy_helper.from_array(vals(seed), name))

    f_body = [const("c", "C", 3), helper.make_node("Add", ["fx", "c"], ["fy"])]
    func = helper.make_function("local", "AddC", ["fx"], ["fy"], f_body,
                                [helper.make_opsetid("", 17)])
    vi = helper.make_tensor_value_info
    branch = {}
    for b, seed in (("then", 5), ("else", 7)):
        branch[b] = helper.make_graph(
            [const(f"{b}_t", f"{b.upper()}_T", seed),
             helper.make_node("Mul", ["z", f"{b}_t"], [f"{b}_out"])],
            f"{b}_branch", [], [vi(f"{b}_out", TP.FLOAT, [SYNTH_N])])
    nodes = [
        helper.make_node("AddC", ["x"], ["y"], domain="local"),
        helper.make_node("Add", ["y", "W1"], ["y1"]),
        helper.make_node("Add", ["y1", "W2"], ["z"]),
        helper.make_node("Greater", ["y1", "zero"], ["pos"]),
        helper.make_node("ReduceMax", ["pos_f"], ["any"], keepdims=0),
        helper.make_node("Cast", ["pos"], ["pos_f"], to=TP.FLOAT),
        helper.make_node("Cast", ["any"], ["cond"], to=TP.BOOL),
        helper.make_node("If", ["cond"], ["out"], then_branch=branch["then"],
                         else_branch=branch["else"]),
    ]
    nodes = nodes[:4] + [nodes[5], nodes[4]] + nodes[6:]  # topological order
    inits = [numpy_helper.from_array(vals(2), "W1"), numpy_helper.from_array(vals(2), "W2"),
             numpy_helper.from_array(np.zeros(1, np.float32), "zero")]
    g = helper.make_graph(nodes, "views_synthetic", [vi("x", TP.FLOAT, [SYNTH_N])],
                          [vi("out", TP.FLOAT, [SYNTH_N])], inits)
    m = helper.make_model(g, functions=[func], ir_version=8,
                          opset_imports=[helper.make_opsetid("", 17),
                                         helper.make_opsetid("local", 1)])
    onnx.checker.check_model(m)
    onnx.save(m, path)
