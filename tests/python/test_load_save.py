"""onnxzip.load() and onnxzip.save(): onnx.ModelProto in and out, and the
conversions pack / unpack / repack / update_model / verify through the
Python API.

What "equal" means here (_helpers.assert_models_equal):
- onnx.load sets data_location = DEFAULT explicitly on each tensor whose
  external data it read (and clears external_data); the package does the
  same for a classic model's side files, but leaves the field unset for a
  tensor read from an archive entry (as the model had it before save() or
  pack(): test_load_save_exact checks that with no normalization). A model
  with the field set compares equal to one without: normalize() clears an
  explicit DEFAULT on both sides. Nothing else is normalized.
- A tensor given in a typed field (float_data, int32_data, int64_data,
  double_data, uint64_data) whose payload reaches the threshold is stored as
  a raw entry and comes back as raw_data: it is compared through
  onnx.numpy_helper.to_array (dtype, shape, bits), and only then taken as
  equal. Typed tensors under the threshold come back as they were.
So, for an archive written from MODEL, onnxzip.load(archive) equals MODEL,
and what onnx.load gives for MODEL saved as a classic file with external
data, but for that explicit DEFAULT.
"""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

import onnxzip
from _helpers import (assert_models_equal, cli, corpus_absent_reason, corpus_dir, dtype_tensors, expected_array,
                      file_params, iter_tensors, load_classic, model_of, normalize, raw_tensor, structure_model)

EXTDATA = sorted(corpus_dir().glob("extdata/*/*.onnx"))
SINGLE = sorted(corpus_dir().glob("models/*.onnx"))
MODEL_ENTRY = "__MODEL_PROTO"


def every_kind_model() -> onnx.ModelProto:
    """structure_model's graph with every data type (raw and typed, small and
    large, STRING, empty, scalar, NaN payloads) added as initializers."""
    model = structure_model()
    model.graph.initializer.extend(dtype_tensors())
    return model


def save_and_check(model, path, onnxzip_cli, **options) -> onnxzip.Archive:
    """save() -> CLI verify OK -> load() equals the model; the caller's model
    unchanged. Returns the archive, open."""
    before = model.SerializeToString()
    onnxzip.save(model, path, sync=False, **options)
    assert model.SerializeToString() == before, "save() changed the caller's ModelProto"
    r = cli(onnxzip_cli, "verify", path)
    assert r.returncode == 0 and r.stdout.startswith("OK: "), f"onnxzip verify: {r.stdout}{r.stderr}"
    assert_models_equal(onnxzip.load(path), model, f"load(save(model, {options}))")
    return onnxzip.open(path)


def payload_size(t: TensorProto):
    """The bytes a tensor's payload takes in raw form, or None when it has
    none the writer can store (STRING, empty typed field)."""
    if t.data_type == TensorProto.STRING:
        return None
    if t.HasField("raw_data"):
        return len(t.raw_data)
    for field in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
        if len(getattr(t, field)):
            return expected_array(t).nbytes
    return None


# ---- load() ----------------------------------------------------------------------

@pytest.mark.skipif(not SINGLE, reason=corpus_absent_reason())
@pytest.mark.parametrize("src", file_params(SINGLE, lambda p: p.name))
def test_load_classic_single(src):
    got = onnxzip.load(src)
    assert got == onnx.load(str(src))  # nothing to load: byte for byte the same message
    assert onnxzip.load(src, load_external_data=False) == onnx.load(str(src), load_external_data=False)


@pytest.mark.skipif(not EXTDATA, reason=corpus_absent_reason())
@pytest.mark.parametrize("src", file_params(EXTDATA, lambda p: p.parent.name))
def test_load_classic_external(src):
    got = onnxzip.load(src)
    assert got == onnx.load(str(src))  # onnx.load also sets data_location DEFAULT
    assert not any(t.data_location == TensorProto.EXTERNAL for t in iter_tensors(got))
    # without data: the file as stored, references to its side files kept
    stored = onnxzip.load(src, load_external_data=False)
    assert stored == onnx.load(str(src), load_external_data=False)
    assert any(t.data_location == TensorProto.EXTERNAL for t in iter_tensors(stored))


@pytest.mark.parametrize("one_file", [True, False], ids=["one_file", "per_tensor"])
def test_load_generated_external(tmp_path, one_file):
    """A model saved by onnx with external data (every tensor of 1 KiB or
    more, in the graph, subgraphs and function where this onnx moves them):
    onnxzip.load equals onnx.load and the in-memory model."""
    model = structure_model()
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    path = tmp_path / "m.onnx"
    onnx.save_model(copy, str(path), save_as_external_data=True, all_tensors_to_one_file=one_file,
                    location="m.data" if one_file else None, size_threshold=1024,
                    convert_attribute=True)
    stored = onnxzip.load(path, load_external_data=False)
    assert sum(t.data_location == TensorProto.EXTERNAL for t in iter_tensors(stored)) >= 4
    with onnxzip.open(path) as a:
        assert a.layout == "external"
    got = onnxzip.load(path)
    assert normalize(got) == normalize(load_classic(path))
    assert_models_equal(got, model, "load(classic external)")


@pytest.mark.skipif(not (SINGLE + EXTDATA), reason=corpus_absent_reason())
@pytest.mark.parametrize("src", file_params(SINGLE + EXTDATA, lambda p: f"{p.parent.name}/{p.name}"))
@pytest.mark.parametrize("threshold", [1024, 0])
def test_load_archive(src, tmp_path, threshold):
    """An archive loads as onnx.load loads the original (with the
    normalization above); without data, large tensors reference entries
    and equal Archive.model()."""
    out = tmp_path / "a.onnxzip"
    onnxzip.pack(src, out, size_threshold=threshold, sync=False)
    assert_models_equal(onnxzip.load(out), onnx.load(str(src)), f"load(pack({src.name}))")
    refs = onnxzip.load(out, load_external_data=False)
    with onnxzip.open(out) as a:
        entries = {e.name for e in a.entries}
        assert refs == a.model()
        assert bytes(a.model_bytes) == refs.SerializeToString()
    external = [t for t in iter_tensors(refs) if t.data_location == TensorProto.EXTERNAL]
    if threshold == 0:  # (the light_* models have no tensor of 1 KiB)
        assert external, "no tensor references an entry"
    for t in external:
        keys = {kv.key: kv.value for kv in t.external_data}
        assert keys["location"] in entries and keys["location"] != MODEL_ENTRY, keys
        assert not t.HasField("raw_data")


def typed_over(model, threshold: int) -> list:
    """Names of tensors whose payload is in a typed field and reaches the
    threshold: stored as raw entries, they load back as raw_data."""
    return [t.name for t in iter_tensors(model) if not t.HasField("raw_data")
            and t.data_type != TensorProto.STRING and (payload_size(t) or 0) >= max(threshold, 1)]


def test_load_save_exact(tmp_path):
    """No normalization: a model whose tensors never named a data_location
    (numpy_helper, torch.onnx.export) loads back equal, byte for byte, after
    save() and after pack(); entries' tensors come back with data_location
    unset, not set to DEFAULT."""
    model = structure_model()
    assert not typed_over(model, 1024)
    assert not any(t.HasField("data_location") for t in iter_tensors(model))
    onnxzip.save(model, tmp_path / "s.onnxzip", sync=False)
    got = onnxzip.load(tmp_path / "s.onnxzip")
    assert got == model
    assert got.SerializeToString() == model.SerializeToString()
    assert not any(t.HasField("data_location") for t in iter_tensors(got))
    src = tmp_path / "m.onnx"
    src.write_bytes(model.SerializeToString())
    onnxzip.pack(src, tmp_path / "p.onnxzip", size_threshold=0, sync=False)
    assert onnxzip.load(tmp_path / "p.onnxzip") == model


@pytest.mark.skipif(not SINGLE, reason=corpus_absent_reason())
@pytest.mark.parametrize("src", file_params(SINGLE, lambda p: p.name))
@pytest.mark.parametrize("threshold", [1024, 0])
def test_load_save_exact_corpus(src, tmp_path, threshold):
    """onnx.load of a single-file model, save()d and pack()ed: onnxzip.load
    gives the very same ModelProto (== and serialized bytes), except for
    typed payloads over the threshold, which come back as raw_data."""
    model = onnx.load(str(src))
    onnxzip.save(model, tmp_path / "s.onnxzip", size_threshold=threshold, sync=False)
    onnxzip.pack(src, tmp_path / "p.onnxzip", size_threshold=threshold, sync=False)
    for name in ("s.onnxzip", "p.onnxzip"):
        got = onnxzip.load(tmp_path / name)
        if typed_over(model, threshold):
            assert_models_equal(got, model, f"load({name})")
        else:
            assert got == model, name
            assert got.SerializeToString() == model.SerializeToString(), name


# ---- save() ----------------------------------------------------------------------

def test_save_every_kind(tmp_path, onnxzip_cli):
    """Initializers, sparse initializers, Constant tensors (dense and sparse),
    If/Loop subgraphs, a function, every data type raw and typed, STRING,
    empty and scalar tensors, the same name in several subgraphs."""
    model = every_kind_model()
    names = [t.name for t in iter_tensors(model)]
    assert names.count("W") == 3
    with save_and_check(model, tmp_path / "m.onnxzip", onnxzip_cli) as a:
        infos = a.tensor_infos
        assert [(i.name, i.data_type, i.shape) for i in infos] == \
            [(t.name, t.data_type, tuple(t.dims)) for t in iter_tensors(model)]
        storages = {(i.kind, i.storage) for i in infos}
        for kind in ("initializer", "attribute", "sparse_values", "sparse_indices"):
            assert (kind, "entry") in storages, (kind, storages)
        # the three "W" are three entries, their arrays the three payloads
        ws = [i for i in infos if i.name == "W"]
        assert len({i.entry for i in ws}) == 3
        assert [a.array(i).tobytes() for i in ws] == \
            [numpy_helper.to_array(t).tobytes() for t in iter_tensors(model) if t.name == "W"]
        assert {i.graph_depth for i in ws} == {0, 1}
    with onnxzip.open(tmp_path / "m.onnxzip") as a:
        for t, i in zip(iter_tensors(model), a.tensor_infos):
            if t.name == "fn_c":
                assert i.storage == "entry", i  # in the function


@pytest.mark.parametrize("convert", [True, False])
def test_save_convert_attribute(tmp_path, onnxzip_cli, convert):
    """Attribute tensors (Constant values, dense and sparse, in the graph,
    the If branches, the Loop body and the function) of 1 KiB or more are
    entries exactly when convert_attribute; initializers always are."""
    model = structure_model()
    with save_and_check(model, tmp_path / "m.onnxzip", onnxzip_cli, convert_attribute=convert) as a:
        attr = [i for i in a.tensor_infos if i.kind == "attribute"]
        assert sum(i.nbytes >= 1024 for i in attr) >= 5, attr
        for i in attr:
            assert (i.storage == "entry") == (convert and i.nbytes >= 1024), i
        for i in a.tensor_infos:
            if i.kind != "attribute":
                assert (i.storage == "entry") == (i.nbytes >= 1024), i


@pytest.mark.parametrize("threshold", [0, 1, 1024, 1200, 1201, 1 << 30])
def test_save_size_threshold(tmp_path, onnxzip_cli, threshold):
    """A tensor is an entry exactly when its raw payload has at least
    size_threshold bytes (STRING and empty typed tensors never)."""
    model = every_kind_model()
    with save_and_check(model, tmp_path / "m.onnxzip", onnxzip_cli, size_threshold=threshold) as a:
        for t, i in zip(iter_tensors(model), a.tensor_infos):
            size = payload_size(t)
            want = size is not None and size >= threshold
            assert (i.storage == "entry") == want, (t.name, size, threshold, i)
        tensors_entries = [e for e in a.entries if e.name != MODEL_ENTRY]
        assert len(tensors_entries) == sum(1 for t in iter_tensors(model)
                                           if payload_size(t) is not None and payload_size(t) >= threshold)


def test_save_typed_fields(tmp_path, onnxzip_cli):
    """float_data, int32_data (float16, int8, bool, uint8, int16, uint16,
    bfloat16, float8), int64_data, double_data, uint64_data over the
    threshold become raw entries holding to_array's bytes."""
    rng = np.random.default_rng(5)
    n = 600
    tensors = [
        numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "f32"),
        numpy_helper.from_array(rng.standard_normal(n).astype(np.float64), "f64"),
        numpy_helper.from_array(rng.integers(-2**40, 2**40, n), "i64"),
        numpy_helper.from_array(rng.integers(0, 2**63, n, dtype=np.uint64), "u64"),
        numpy_helper.from_array(rng.integers(0, 2**32, n, dtype=np.uint32), "u32"),
    ]
    typed = []
    for t in tensors:  # from_array writes raw_data: move it into the typed field
        arr = numpy_helper.to_array(t)
        t.ClearField("raw_data")
        field = {np.float32: "float_data", np.float64: "double_data", np.int64: "int64_data",
                 np.uint64: "uint64_data", np.uint32: "uint64_data"}[arr.dtype.type]
        getattr(t, field).extend(arr.tolist())
        typed.append(t)
    # int32_data: float16 bit patterns, int8, bool, bfloat16, float8
    for name, dt, values in (("f16", TensorProto.FLOAT16, rng.integers(0, 65536, n)),
                             ("i8", TensorProto.INT8, rng.integers(-128, 128, 2 * n)),
                             ("b", TensorProto.BOOL, rng.integers(0, 2, 2 * n)),
                             ("bf16", TensorProto.BFLOAT16, rng.integers(0, 65536, n)),
                             ("f8", 17, rng.integers(0, 256, 2 * n))):
        t = TensorProto()
        t.name, t.data_type = name, dt
        t.dims.append(len(values))
        t.int32_data.extend(values.tolist())
        typed.append(t)
    model = model_of(typed)
    with save_and_check(model, tmp_path / "m.onnxzip", onnxzip_cli) as a:
        assert all(i.storage == "entry" for i in a.tensor_infos), a.tensor_infos
        loaded = onnxzip.load(tmp_path / "m.onnxzip")
        assert all(t.HasField("raw_data") for t in iter_tensors(loaded))
    # under the threshold they stay typed, untouched
    with save_and_check(model, tmp_path / "big.onnxzip", onnxzip_cli, size_threshold=1 << 20) as a:
        assert all(i.storage == "typed" for i in a.tensor_infos)
        assert onnxzip.load(tmp_path / "big.onnxzip") == model


def test_save_dedup(tmp_path, onnxzip_cli):
    """dedup=True: identical payloads share one entry (also across a typed
    and a raw tensor of the same bytes); without it, one entry each."""
    w = np.arange(400, dtype=np.float32)
    typed = numpy_helper.from_array(w, "typed_copy")
    typed.ClearField("raw_data")
    typed.float_data.extend(w.tolist())
    tensors = [numpy_helper.from_array(w, "a"), numpy_helper.from_array(w, "b"), typed,
               numpy_helper.from_array(w + 1, "c"), numpy_helper.from_array(w.view(np.int32), "same_bytes_int")]
    model = model_of(tensors)
    with save_and_check(model, tmp_path / "d.onnxzip", onnxzip_cli, dedup=True) as a:
        assert len(a.entries) == 2 + 1, [e.name for e in a.entries]
        infos = a.tensor_infos
        assert infos[0].entry == infos[1].entry == infos[2].entry == infos[4].entry != infos[3].entry
        assert {i.offset for i in infos if i.entry == infos[0].entry} == {infos[0].offset}
    with save_and_check(model, tmp_path / "n.onnxzip", onnxzip_cli, dedup=False) as a:
        assert len(a.entries) == 5 + 1


@pytest.mark.parametrize("align", [64, 128, 4096, 65536])
def test_save_align(tmp_path, onnxzip_cli, align):
    model = every_kind_model()
    with save_and_check(model, tmp_path / "m.onnxzip", onnxzip_cli, align=align) as a:
        data = [e for e in a.entries if e.name != MODEL_ENTRY]
        assert data
        assert all(e.data_offset % align == 0 for e in data), [(e.name, e.data_offset) for e in data]
        for i in a.tensor_infos:
            if i.storage == "entry":
                assert i.alignment >= min(align, 65536) or i.nbytes == 0, i


@pytest.mark.parametrize("names, entries", [
    # spec 7.2's table: each row one model, names in model order
    (["encoder.0.weight"], ["encoder_0_weight"]),
    (["W", "w"], ["W", "w_2"]),
    (["W", "w", "w_2"], ["W", "w_2", "w_2_2"]),
    (["conv.weight", "conv_weight"], ["conv_weight", "conv_weight_2"]),
    (["", ""], ["t_", "t__2"]),
    (["0bias"], ["t_0bias"]),
    (["__x"], ["t__x"]),
    (["a/b:0"], ["a_b_0"]),
    (["权重"], ["t______"]),
    (["a" * 300], ["a" * 240]),
    (["../../etc/passwd", "__MODEL_PROTO", "a b"], ["t______etc_passwd", "t__MODEL_PROTO", "a_b"]),
])
def test_save_entry_names(tmp_path, onnxzip_cli, names, entries):
    tensors = [raw_tensor(n, TensorProto.FLOAT, [300], np.full(300, k, np.float32).tobytes())
               for k, n in enumerate(names)]
    with save_and_check(model_of(tensors), tmp_path / "m.onnxzip", onnxzip_cli) as a:
        assert [e.name for e in a.entries if e.name != MODEL_ENTRY] == entries
        assert [i.entry for i in a.tensor_infos] == entries
        assert [i.name for i in a.tensor_infos] == names


def test_entry_name_nul(tmp_path, onnxzip_cli):
    """A NUL byte in a tensor name maps to '_' like any other byte (spec
    7.2), in save() and in pack()."""
    model = model_of([raw_tensor("a\0b", TensorProto.FLOAT, [300], bytes(1200))])
    with save_and_check(model, tmp_path / "s.onnxzip", onnxzip_cli) as a:
        assert [i.entry for i in a.tensor_infos] == ["a_b"]
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    onnxzip.pack(tmp_path / "m.onnx", tmp_path / "p.onnxzip", sync=False)
    with onnxzip.open(tmp_path / "p.onnxzip") as a:
        assert [i.entry for i in a.tensor_infos] == ["a_b"]
    assert_models_equal(onnxzip.load(tmp_path / "p.onnxzip"), model, "pack NUL name")


def _external_tensor(name):
    t = raw_tensor(name, TensorProto.FLOAT, [4], b"")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    kv = t.external_data.add()
    kv.key, kv.value = "location", "weights.bin"
    return t


@pytest.mark.parametrize("existing", [False, True], ids=["new", "over_existing"])
def test_save_external_refused(tmp_path, existing):
    """A tensor whose data is still in an external file: onnxzip.Error naming
    it, after large tensors were already written; no file at the path (or the
    old one untouched) and no temporary file left."""
    model = every_kind_model()
    model.graph.initializer.append(_external_tensor("still_outside"))
    out = tmp_path / "out.onnxzip"
    if existing:
        out.write_bytes(b"old contents")
    before_dir = sorted(os.listdir(tmp_path))
    before = model.SerializeToString()
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.save(model, out, sync=False)
    assert "still_outside" in str(e.value) and "external" in str(e.value), str(e.value)
    assert isinstance(e.value.status, str) and e.value.status
    assert sorted(os.listdir(tmp_path)) == before_dir
    if existing:
        assert out.read_bytes() == b"old contents"
    else:
        assert not out.exists()
    assert model.SerializeToString() == before


@pytest.mark.parametrize("align", [0, 1, 32, 96, 131072])
def test_save_bad_align(tmp_path, align):
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.save(structure_model(), tmp_path / "m.onnxzip", align=align)
    assert str(align) in str(e.value) and e.value.status == "EINVAL", (e.value.status, str(e.value))
    assert os.listdir(tmp_path) == []


def test_save_refuses_non_model(tmp_path):
    with pytest.raises(TypeError):
        onnxzip.save(model_of([]).graph, tmp_path / "x.onnxzip")
    assert os.listdir(tmp_path) == []


def test_save_below_a_file(tmp_path):
    # a missing directory is created (test_outputs_dirs.py); a file in its place is refused
    (tmp_path / "no").write_bytes(b"")
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.save(structure_model(), tmp_path / "no" / "such" / "m.onnxzip")
    assert "m.onnxzip" in str(e.value) and "not a directory" in str(e.value)
    assert os.listdir(tmp_path) == ["no"]


def test_save_replaces_existing(tmp_path, onnxzip_cli):
    out = tmp_path / "m.onnxzip"
    out.write_bytes(b"previous")
    save_and_check(structure_model(), out, onnxzip_cli).close()
    assert sorted(os.listdir(tmp_path)) == ["m.onnxzip"]


# ---- pack / unpack / repack / update_model / verify -------------------------------

@pytest.mark.parametrize("layout", ["single", "per_tensor", "inline"])
def test_pack_unpack_round_trip(tmp_path, onnxzip_cli, layout):
    model = every_kind_model()
    src = tmp_path / "src.onnx"
    src.write_bytes(model.SerializeToString())
    onnxzip.pack(src, tmp_path / "a.onnxzip", sync=False)
    assert cli(onnxzip_cli, "verify", tmp_path / "a.onnxzip").returncode == 0
    (tmp_path / "out").mkdir()
    dst = tmp_path / "out" / "m.onnx"
    onnxzip.unpack(tmp_path / "a.onnxzip", dst, layout=layout, sync=False)
    files = sorted(os.listdir(tmp_path / "out"))
    if layout == "inline":
        assert files == ["m.onnx"]
    elif layout == "single":
        assert files == ["m.onnx", "m.onnx.data"]
    else:
        assert len(files) > 2
    assert_models_equal(load_classic(dst), model, f"unpack {layout}")
    assert_models_equal(onnxzip.load(dst), model, f"onnxzip.load(unpack {layout})")
    # packed again from the unpacked model: the same tensors
    onnxzip.pack(dst, tmp_path / "b.onnxzip", sync=False)
    assert_models_equal(onnxzip.load(tmp_path / "b.onnxzip"), model, "pack(unpack(pack))")


def test_pack_options(tmp_path, onnxzip_cli):
    model = every_kind_model()
    src = tmp_path / "src.onnx"
    src.write_bytes(model.SerializeToString())
    onnxzip.pack(src, tmp_path / "k.onnxzip", keep_typed=True, convert_attribute=False, align=4096, sync=False)
    with onnxzip.open(tmp_path / "k.onnxzip") as a:
        assert all(i.storage != "entry" for i in a.tensor_infos if i.kind == "attribute")
        typed_names = {t.name for t in iter_tensors(model) if not t.HasField("raw_data")}
        assert all(i.storage != "entry" for i in a.tensor_infos if i.name in typed_names)
        assert all(e.data_offset % 4096 == 0 for e in a.entries if e.name != MODEL_ENTRY)
    assert_models_equal(onnxzip.load(tmp_path / "k.onnxzip"), model, "pack keep_typed")
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.pack(tmp_path / "missing.onnx", tmp_path / "x.onnxzip")
    assert "missing.onnx" in str(e.value) and e.value.code < 0
    assert not (tmp_path / "x.onnxzip").exists()


def test_save_equals_pack(tmp_path):
    """save(model) and pack(model file) store the same tensors the same way."""
    model = every_kind_model()
    src = tmp_path / "src.onnx"
    src.write_bytes(model.SerializeToString())
    onnxzip.pack(src, tmp_path / "p.onnxzip", sync=False)
    onnxzip.save(model, tmp_path / "s.onnxzip", sync=False)
    with onnxzip.open(tmp_path / "p.onnxzip") as p, onnxzip.open(tmp_path / "s.onnxzip") as s:
        assert [(i.name, i.storage, i.entry, i.nbytes) for i in p.tensor_infos] == \
            [(i.name, i.storage, i.entry, i.nbytes) for i in s.tensor_infos]
        assert [(e.name, e.size, e.crc32) for e in p.entries] == [(e.name, e.size, e.crc32) for e in s.entries]


def test_update_model(tmp_path, onnxzip_cli):
    out = tmp_path / "m.onnxzip"
    onnxzip.save(structure_model(), out, sync=False)
    with onnxzip.open(out) as a:
        refs = a.model()
        entries = [(e.name, e.size, e.crc32) for e in a.entries if e.name != MODEL_ENTRY]
    refs.doc_string = "updated"
    refs.graph.node[0].name = "renamed"
    onnxzip.update_model(out, refs)
    assert cli(onnxzip_cli, "verify", out).returncode == 0
    with onnxzip.open(out) as a:
        assert a.model() == refs
        assert [(e.name, e.size, e.crc32) for e in a.entries if e.name != MODEL_ENTRY] == entries
    want = structure_model()
    want.doc_string = "updated"
    want.graph.node[0].name = "renamed"
    assert_models_equal(onnxzip.load(out), want, "after update_model")
    # bytes are accepted too
    refs.doc_string = "bytes"
    onnxzip.update_model(out, refs.SerializeToString())
    assert onnxzip.load(out).doc_string == "bytes"
    # a reference to no entry is refused, the archive unchanged
    before = out.read_bytes()
    bad = onnx.ModelProto()
    bad.CopyFrom(refs)
    tensor = next(t for t in iter_tensors(bad) if t.data_location == TensorProto.EXTERNAL)
    tensor.external_data[0].value = "no_such_entry"
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.update_model(out, bad)
    assert "no_such_entry" in str(e.value), str(e.value)
    assert out.read_bytes() == before


def test_verify_and_flipped_byte(tmp_path, onnxzip_cli):
    out = tmp_path / "m.onnxzip"
    onnxzip.save(structure_model(), out, sync=False)
    onnxzip.verify(out)
    with onnxzip.open(out) as a:
        a.verify()
        entry = next(e for e in a.entries if e.name != MODEL_ENTRY)
    data = bytearray(out.read_bytes())
    data[entry.data_offset + entry.size // 2] ^= 0x10
    out.write_bytes(bytes(data))
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.verify(out)
    assert e.value.status == "ECRC" and e.value.code == -24, (e.value.status, e.value.code)
    assert entry.name in str(e.value), str(e.value)
    with pytest.raises(onnxzip.Error) as e2:
        onnxzip.open(out, verify=True)
    assert e2.value.status == "ECRC" and entry.name in str(e2.value)
    assert cli(onnxzip_cli, "verify", out).returncode == 1
    # without verify the archive opens, and the array shows the flipped byte
    with onnxzip.open(out) as a:
        info = next(i for i in a.tensor_infos if i.entry == entry.name)
        flipped = entry.data_offset + entry.size // 2
        assert a.array(info).tobytes()[flipped - info.offset] == data[flipped]


def test_error_attributes(tmp_path):
    (tmp_path / "junk.onnxzip").write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.open(tmp_path / "junk.onnxzip")
    err = e.value
    assert isinstance(err, Exception) and type(err).__module__ == "onnxzip"
    assert err.status.startswith("E") and not err.status.startswith("ONNXZIP_")
    assert err.code < 0 and isinstance(err.offset, int)
    assert "junk.onnxzip" in str(err)


def test_repack(tmp_path, onnxzip_cli):
    import zipfile
    out = tmp_path / "m.onnxzip"
    onnxzip.save(structure_model(), out, sync=False)
    # recompressed by another tool: deflated, unaligned
    with zipfile.ZipFile(out) as zin, zipfile.ZipFile(tmp_path / "deflated.zip", "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    onnxzip.repack(tmp_path / "deflated.zip", tmp_path / "r.onnxzip", align=4096, sync=False)
    assert cli(onnxzip_cli, "verify", tmp_path / "r.onnxzip").returncode == 0
    assert_models_equal(onnxzip.load(tmp_path / "r.onnxzip"), structure_model(), "repack")
    with onnxzip.open(tmp_path / "r.onnxzip") as a:
        assert all(e.data_offset % 4096 == 0 for e in a.entries if e.name != MODEL_ENTRY)
