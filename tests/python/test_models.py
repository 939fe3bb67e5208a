"""Models read from an archive and written back: update_model() with a
model whose weights are inline, save(model, path, source=...) of a model
whose tensors reference an archive's entries (or a classic model's side
files), and what load(save(m)) gives for m from onnx.load of an
external-data model.

Oracles: Python's zipfile (the entries, their CRCs, the bytes of
__MODEL_PROTO parsed by onnx), onnx.load and onnx.numpy_helper, file sizes
and /proc/self/status."""
import os
import warnings
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

import onnxzip
from _helpers import iter_tensors, model_of, normalize, raw_tensor

MODEL_ENTRY = "__MODEL_PROTO"
MiB = 1 << 20


def weights_model(n: int = 3, size: int = MiB) -> onnx.ModelProto:
    """n float32 initializers of ``size`` bytes each (distinct values) and a
    small one, all raw_data."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.standard_normal(size // 4).astype(np.float32), f"w{i}") for i in range(n)]
    inits.append(numpy_helper.from_array(np.arange(8, dtype=np.float32), "small"))
    return model_of(inits)


def zip_entries(path):
    """(name, size, CRC-32) of every entry but the model, by zipfile."""
    with zipfile.ZipFile(path) as z:
        return [(i.filename, i.file_size, i.CRC) for i in z.infolist() if i.filename != MODEL_ENTRY]


def stored_model(path) -> onnx.ModelProto:
    """__MODEL_PROTO as stored, read by zipfile and parsed by onnx."""
    with zipfile.ZipFile(path) as z:
        return onnx.load_from_string(z.read(MODEL_ENTRY))


def references(model):
    """{tensor name: {key: value}} of the EXTERNAL tensors."""
    return {t.name: {kv.key: kv.value for kv in t.external_data}
            for t in iter_tensors(model) if t.data_location == TensorProto.EXTERNAL}


def rss_anon() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("RssAnon:"))


# ---- update_model ---------------------------------------------------------------

def test_update_model_with_loaded_data_costs_nothing(tmp_path):
    """update_model(path, a.model(load_data=True)): the inline tensors that
    are the entries' bytes go back to being references, the archive does not
    grow by the weights (it grew by 3 MiB before), the entries stay."""
    path = tmp_path / "m.onnxzip"
    original = weights_model()
    onnxzip.save(original, path, sync=False)
    size, entries = path.stat().st_size, zip_entries(path)
    refs_before = references(stored_model(path))
    with onnxzip.open(path) as a:
        model = a.model(load_data=True)
    assert not references(model)  # every tensor inline: the case at issue
    model.doc_string = "edited"
    before = model.SerializeToString()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: nothing goes inline
        onnxzip.update_model(path, model)
    assert model.SerializeToString() == before, "update_model modified its argument"
    assert path.stat().st_size < size + 4096, (size, path.stat().st_size)
    assert zip_entries(path) == entries
    stored = stored_model(path)
    assert stored.doc_string == "edited"
    assert references(stored) == refs_before
    want = onnx.ModelProto()
    want.CopyFrom(original)
    want.doc_string = "edited"
    assert onnxzip.load(path) == want
    assert onnxzip.verify(path) is None


def test_update_model_identical_bytes_under_another_name(tmp_path):
    """A new tensor whose bytes equal an entry's references that entry."""
    path = tmp_path / "m.onnxzip"
    onnxzip.save(weights_model(), path, sync=False)
    size = path.stat().st_size
    with onnxzip.open(path) as a:
        model = a.model()
        copy = numpy_helper.from_array(np.array(a.tensors["w1"]), "w1_copy")
    model.graph.initializer.append(copy)
    onnxzip.update_model(path, model)
    assert path.stat().st_size < size + 4096
    assert references(stored_model(path))["w1_copy"] == {"location": "w1"}
    loaded = {t.name: t for t in onnxzip.load(path).graph.initializer}
    assert loaded["w1_copy"].raw_data == loaded["w1"].raw_data == copy.raw_data


def test_update_model_changed_weights_warn(tmp_path):
    """Changed weights cannot become references: they go inline (the C
    function's semantics) with a UserWarning naming the tensor and save()."""
    path = tmp_path / "m.onnxzip"
    onnxzip.save(weights_model(), path, sync=False)
    size = path.stat().st_size
    with onnxzip.open(path) as a:
        model = a.model(load_data=True)
    changed = np.frombuffer(model.graph.initializer[2].raw_data, dtype=np.float32) + 1
    model.graph.initializer[2].raw_data = changed.tobytes()
    with pytest.warns(UserWarning, match=r"tensor 'w2'.*save\(") as record:
        onnxzip.update_model(path, model)
    assert len(record) == 1
    # w2 inline (the old model's bytes are reused), w0 and w1 references
    assert size + MiB - 4096 <= path.stat().st_size < size + MiB + 65536
    assert set(references(stored_model(path))) == {"w0", "w1"}
    got = {t.name: numpy_helper.to_array(t) for t in onnxzip.load(path).graph.initializer}
    assert np.array_equal(got["w2"], changed)


# ---- save(model, path, source=...) ---------------------------------------------

def test_save_model_read_from_archive(tmp_path):
    """m = a.model(), edited (a renamed node, a new inline weight), saved as
    a new archive with source=a (the open Archive) and source=path."""
    src = tmp_path / "a.onnxzip"
    original = weights_model()
    original.graph.node.add(op_type="Identity", input=["w0"], output=["y"], name="n")
    onnxzip.save(original, src, sync=False)
    new_weight = numpy_helper.from_array(np.full(300, 2.5, dtype=np.float32), "added")
    want = onnx.ModelProto()
    want.CopyFrom(original)
    want.graph.node[0].name = "renamed"
    want.graph.initializer.append(new_weight)
    with onnxzip.open(src) as a:
        model = a.model()
        model.graph.node[0].name = "renamed"
        model.graph.initializer.append(new_weight)
        before = model.SerializeToString()
        onnxzip.save(model, tmp_path / "by_archive.onnxzip", source=a, sync=False)
        assert model.SerializeToString() == before
    onnxzip.save(model, tmp_path / "by_path.onnxzip", source=src, sync=False)
    for name in ("by_archive", "by_path"):
        out = tmp_path / f"{name}.onnxzip"
        assert onnxzip.load(out) == want, name
        with zipfile.ZipFile(out) as z:
            assert z.testzip() is None
            assert {i.filename for i in z.infolist()} == {"w0", "w1", "w2", "added", MODEL_ENTRY}
            for t in original.graph.initializer[:3]:
                assert z.read(t.name) == t.raw_data
        onnxzip.verify(out)


def test_save_model_of_open_archive_without_source(tmp_path):
    """onnxzip.save(a.model(), path) while a is open: the model finds its
    archive itself (that very object, edited in place), also with a second
    open archive whose entries have the same names and sizes but other
    bytes; a copy of the model does not, and says so."""
    first, second = tmp_path / "a.onnxzip", tmp_path / "b.onnxzip"
    original = weights_model()
    onnxzip.save(original, first, sync=False)
    other = weights_model()
    for t in other.graph.initializer:
        t.raw_data = bytes(b ^ 0xFF for b in t.raw_data)
    onnxzip.save(other, second, sync=False)
    with onnxzip.open(first) as a, onnxzip.open(second) as b:
        m_b = b.model()
        m_a = a.model()
        m_a.producer_name = "edited"
        onnxzip.save(m_a, tmp_path / "from_a.onnxzip", sync=False)
        onnxzip.save(m_b, tmp_path / "from_b.onnxzip", sync=False)
        copy = onnx.ModelProto()
        copy.CopyFrom(m_a)
        with pytest.raises(onnxzip.Error, match="source=") as e:
            onnxzip.save(copy, tmp_path / "copy.onnxzip", sync=False)
        assert isinstance(e.value, ValueError)
    assert not (tmp_path / "copy.onnxzip").exists()
    for out, want in (("from_a", original), ("from_b", other)):
        with zipfile.ZipFile(tmp_path / f"{out}.onnxzip") as z:
            assert z.testzip() is None
            for t in want.graph.initializer[:3]:
                assert z.read(t.name) == t.raw_data, (out, t.name)
    assert stored_model(tmp_path / "from_a.onnxzip").producer_name == "edited"
    with pytest.raises(onnxzip.Error, match="source="):  # a closed archive serves no bytes
        onnxzip.save(m_a, tmp_path / "closed.onnxzip", sync=False)
    assert not (tmp_path / "closed.onnxzip").exists()


def test_save_source_threshold_and_dedup(tmp_path):
    """Referenced tensors under size_threshold come back inline (raw_data,
    data_location unset as the original had it); dedup applies to them."""
    src = tmp_path / "a.onnxzip"
    model = weights_model(n=2, size=4096)
    model.graph.initializer.append(raw_tensor("same", TensorProto.FLOAT, [1024], model.graph.initializer[0].raw_data))
    onnxzip.save(model, src, sync=False)
    with onnxzip.open(src) as a:
        refs = a.model()
        onnxzip.save(refs, tmp_path / "inline.onnxzip", source=a, size_threshold=1 << 20, sync=False)
        onnxzip.save(refs, tmp_path / "dedup.onnxzip", source=a, dedup=True, sync=False)
    inline = stored_model(tmp_path / "inline.onnxzip")
    assert not references(inline) and inline == model
    with zipfile.ZipFile(tmp_path / "inline.onnxzip") as z:
        assert z.namelist() == [MODEL_ENTRY]
    assert [e[0] for e in zip_entries(tmp_path / "dedup.onnxzip")] == ["w0", "w1"]
    assert onnxzip.load(tmp_path / "dedup.onnxzip") == model


def test_save_source_classic_external(tmp_path):
    """A classic external-data model (written by onnx.save_model) loaded
    without its data: its references are resolved from the side file."""
    model = weights_model()
    onnx.save_model(model, str(tmp_path / "c.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="c.data", size_threshold=1024)
    refs = onnx.load(str(tmp_path / "c.onnx"), load_external_data=False)
    assert set(references(refs)) == {"w0", "w1", "w2"}
    onnxzip.save(refs, tmp_path / "out.onnxzip", source=tmp_path / "c.onnx", sync=False)
    assert normalize(onnxzip.load(tmp_path / "out.onnxzip")) == normalize(onnx.load(str(tmp_path / "c.onnx")))


def test_save_source_streams_from_the_mapping(tmp_path):
    """A 64 MiB referenced tensor is written from the source's mapping, not
    loaded: RssAnon grows by far less than the tensor (loading it, as
    load_data=True does, grows it by the tensor: the control)."""
    src = tmp_path / "big.onnxzip"
    onnxzip.save(weights_model(n=1, size=64 * MiB), src, sync=False)
    with onnxzip.open(src) as a:
        refs = a.model()
        before = rss_anon()
        onnxzip.save(refs, tmp_path / "out.onnxzip", source=a, sync=False)
        grown = rss_anon() - before
        loaded = a.model(load_data=True)
        control = rss_anon() - before
    assert grown < 16 * MiB, f"save(source=) grew RssAnon by {grown / MiB:.1f} MiB"
    assert control > 48 * MiB, f"the control grew RssAnon by only {control / MiB:.1f} MiB: the measurement is blind"
    assert zip_entries(tmp_path / "out.onnxzip") == zip_entries(src)
    del loaded


def test_save_references_without_source(tmp_path):
    """References and no source: an error saying how to give one, no file."""
    src = tmp_path / "a.onnxzip"
    onnxzip.save(weights_model(), src, sync=False)
    with onnxzip.open(src) as a:
        refs = a.model()
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.save(refs, tmp_path / "out.onnxzip", sync=False)
    assert "'w0'" in str(e.value) and "source=" in str(e.value), str(e.value)
    assert not (tmp_path / "out.onnxzip").exists()


@pytest.mark.parametrize("keys", [{"location": "no_such_entry"}, {"location": "w0", "offset": "64"},
                                  {"location": "w0", "offset": "x"}], ids=["entry", "offset", "bad_offset"])
def test_save_source_bad_reference(tmp_path, keys):
    """A reference the source does not hold: EREF naming the tensor and the
    location, nothing written, the source archive unchanged."""
    src = tmp_path / "a.onnxzip"
    onnxzip.save(weights_model(), src, sync=False)
    before = src.read_bytes()
    with onnxzip.open(src) as a:
        refs = a.model()
        t = refs.graph.initializer[1]
        del t.external_data[:]
        for k, v in keys.items():
            kv = t.external_data.add()
            kv.key, kv.value = k, v
        with pytest.raises(onnxzip.Error) as e:
            onnxzip.save(refs, tmp_path / "out.onnxzip", source=a, sync=False)
    assert e.value.status == "EREF" and "'w1'" in str(e.value) and keys["location"] in str(e.value), str(e.value)
    assert sorted(os.listdir(tmp_path)) == ["a.onnxzip"]
    assert src.read_bytes() == before


def test_save_source_closed_archive(tmp_path):
    src = tmp_path / "a.onnxzip"
    onnxzip.save(weights_model(), src, sync=False)
    with onnxzip.open(src) as a:
        refs = a.model()
    with pytest.raises(ValueError, match="closed"):
        onnxzip.save(refs, tmp_path / "out.onnxzip", source=a)
    assert not (tmp_path / "out.onnxzip").exists()


# ---- load(save(m)) for m from onnx.load of an external-data model ---------------

def test_load_save_of_onnx_loaded_external_model(tmp_path):
    """onnx.load of an external-data model sets data_location DEFAULT on
    each tensor it loaded. The archive keeps no trace of that (its tensors
    are plain ONNX references): load(save(m)) gives those tensors back with
    the field unset, exactly the tensors save() moved into entries, and
    equals m in everything else; for a model never read from external data
    load(save(m)) == m exactly (test_load_save_exact)."""
    model = weights_model()
    onnx.save_model(weights_model(), str(tmp_path / "c.onnx"), save_as_external_data=True,  # (changes its model)
                    all_tensors_to_one_file=True, location="c.data", size_threshold=1024)
    m = onnx.load(str(tmp_path / "c.onnx"))  # the producer: onnx itself
    explicit = {t.name for t in iter_tensors(m) if t.HasField("data_location")}
    assert explicit == {"w0", "w1", "w2"} and all(t.data_location == TensorProto.DEFAULT for t in iter_tensors(m)
                                                 if t.name in explicit)
    onnxzip.save(m, tmp_path / "m.onnxzip", sync=False)
    got = onnxzip.load(tmp_path / "m.onnxzip")
    assert got != m
    assert not any(t.HasField("data_location") for t in iter_tensors(got))
    assert set(references(stored_model(tmp_path / "m.onnxzip"))) == explicit
    assert normalize(m) == got
    assert got == model
