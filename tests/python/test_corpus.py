"""Archive.tensors over real models: every shared corpus model and every
libonnx-testdata model, packed with onnxzip.pack (default threshold and
size_threshold=0) and opened as they are (classic, external data), gives
for every tensor the array onnx.numpy_helper.to_array gives for the
original (dtype, shape and bytes; _helpers.expected_array says how bfloat16,
float8, 4/2-bit and STRING are brought to the package's representation),
read-only, and, for entry, inline and external-file tensors, over the
mapped file (no copy).

The corpus and the testdata are optional inputs: when absent, their tests
are skipped saying so; the generated model (every data type, raw and typed)
always runs.
"""
import pathlib

import numpy as np
import pytest

import onnxzip
from _helpers import (address, assert_same_array, buffer_range, corpus_absent_reason, corpus_id, corpus_models,
                      dtype_tensors, file_mappings, file_params, float6_tensors, inside, iter_tensors, keyed_tensors,
                      load_classic, model_of, td_absent_reason, td_id, td_models)

CORPUS = corpus_models()
TESTDATA = td_models()
PACKS = {"default": {}, "t0": {"size_threshold": 0}}


def check_open(path: pathlib.Path, original, what: str) -> dict:
    """Opens ``path`` and checks every tensor against ``original`` (a
    ModelProto with every tensor's data in the message); returns how many
    tensors of each storage it saw."""
    tensors = list(iter_tensors(original))
    seen = {}
    with onnxzip.open(path) as a:
        infos = a.tensor_infos
        # the walk order: model order of the file, field order for files onnx wrote
        assert [(i.name, i.data_type, i.shape) for i in infos] == \
            [(t.name, t.data_type, tuple(t.dims)) for t in tensors], f"{what}: tensor_infos differ from the model's"
        assert [i.index for i in infos] == list(range(len(infos)))
        maps = file_mappings(path)
        model = buffer_range(a.model_bytes)
        base = pathlib.Path(path).parent
        side_maps = {}
        for info, t in zip(infos, tensors):
            where = f"{what}: tensor #{info.index} '{info.name}' ({info.storage})"
            arr = a.array(info)
            assert_same_array(arr, t, where)
            assert not arr.flags.writeable, f"{where}: writeable"
            seen[info.storage] = seen.get(info.storage, 0) + 1
            if arr.nbytes == 0 or info.storage == "typed":
                continue  # typed: decoded into a copy by design; empty: no address to check
            if info.storage == "entry":
                assert inside(arr, maps), f"{where}: data at {address(arr):#x} is not in a mapping of {path}"
            elif info.storage == "inline":
                # in the model bytes: the handle's copy of __MODEL_PROTO of an
                # archive, the mapped file of a classic model
                assert inside(arr, [model]), f"{where}: data not in the model bytes"
                if a.layout != "archive":
                    assert inside(arr, maps), f"{where}: data not in a mapping of {path}"
            elif info.storage == "file":
                side = base / info.entry
                if side not in side_maps:
                    side_maps[side] = file_mappings(side)
                assert inside(arr, side_maps[side]), f"{where}: data not in a mapping of {side}"
            else:
                pytest.fail(f"{where}: unknown storage")
        # the mapping: the first tensor of each key (its name; an unnamed tensor's path)
        keyed = keyed_tensors(original)
        assert [i.key for i in infos] == [k for k, _ in keyed], f"{what}: tensor keys"
        first = {}
        for key, t in keyed:
            first.setdefault(key, t)
        assert list(a.tensors) == list(first), f"{what}: Archive.tensors keys"
        assert len(a.tensors) == len(first)
        for name, t in first.items():
            arr = a.tensors[name]
            assert_same_array(arr, t, f"{what}: tensors['{name}']")
            assert not arr.flags.writeable
    return seen


def check_model(src: pathlib.Path, tmp_path: pathlib.Path, what: str) -> dict:
    """The original opened as it is, then packed both ways."""
    original = load_classic(src)
    with onnxzip.open(src) as a:
        layout = a.layout
    assert layout in ("classic", "external"), f"{what}: layout {layout}"
    counts = {"original": check_open(src, original, f"{what} ({layout})")}
    for label, options in PACKS.items():
        out = tmp_path / f"{label}.onnxzip"
        onnxzip.pack(src, out, sync=False, **options)
        counts[label] = check_open(out, original, f"{what} packed {label}")
        with onnxzip.open(out) as a:
            assert a.layout == "archive"
    return counts


@pytest.mark.skipif(not CORPUS, reason=corpus_absent_reason())
@pytest.mark.parametrize("src", file_params(CORPUS, corpus_id))
def test_corpus_model(src, tmp_path):
    counts = check_model(src, tmp_path, corpus_id(src))
    # threshold 0 puts every payload into an entry (the light_* models have
    # no tensor of 1 KiB, so the default pack may have none)
    assert counts["t0"].get("entry", 0) > 0, counts
    assert counts["t0"].get("entry", 0) >= counts["default"].get("entry", 0), counts
    if "extdata" in str(src):
        assert counts["original"].get("file", 0) > 0, counts


@pytest.mark.skipif(not TESTDATA, reason=td_absent_reason())
@pytest.mark.parametrize("src", file_params(TESTDATA, td_id))
def test_testdata_model(src, tmp_path):
    check_model(src, tmp_path, td_id(src))


def test_generated_every_dtype(tmp_path):
    """Every data type (FLOAT6 too) in raw_data and typed fields, small and
    large, packed both ways and opened as a classic file."""
    src = tmp_path / "dtypes.onnx"
    src.write_bytes(model_of(dtype_tensors() + float6_tensors()).SerializeToString())
    counts = check_model(src, tmp_path, "dtypes")
    assert counts["original"].keys() == {"inline", "typed"}, counts
    assert counts["default"]["entry"] > 0 and counts["t0"]["entry"] > counts["default"]["entry"], counts


def test_no_copy_detected(tmp_path):
    """Control for the address check: a copy of an entry's array is not in
    the mapping, and the mapping is found at all."""
    src = tmp_path / "m.onnx"
    src.write_bytes(model_of(dtype_tensors(counts=(1201,))).SerializeToString())
    onnxzip.pack(src, tmp_path / "m.onnxzip", sync=False)
    with onnxzip.open(tmp_path / "m.onnxzip") as a:
        info = next(i for i in a.tensor_infos if i.storage == "entry")
        maps = file_mappings(tmp_path / "m.onnxzip")
        assert maps, "no mapping of the archive in /proc/self/maps"
        assert inside(a.array(info), maps)
        assert not inside(np.array(a.array(info)), maps)
