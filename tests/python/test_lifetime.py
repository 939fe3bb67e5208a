"""Lifetime of the mapping: arrays keep it alive after close() and after the
Archive is garbage-collected and still read the right data; a borrowed
buffer is held (bytearray unresizable, bytes referenced) exactly as long as
the archive or any array lives; open/close cycles leak no descriptor and no
mapping; arrays are read-only; numpy views of views keep the mapping; four
threads read while a fifth closes the archive.

Run under the ASan build of the extension too (meson's python suite in a
-Db_sanitize=address build): any use of an unmapped page aborts there."""
import ctypes
import gc
import os
import sys
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import file_mappings, inside, model_of

# entry tensors of distinct content, an inline one, a typed one (decoded
# copy) and a STRING one
ENTRY = {f"e{k}": (np.arange(5000, dtype=np.float32) * (k + 1) - k).reshape(50, 100) for k in range(4)}
INLINE = np.array([7, -7, 8], dtype=np.int32)
TYPED = np.array([1.0, 2.5, -3.0], dtype=np.float32)
STRINGS = [b"alpha", b"", b"\xff\x00"]


def expected(name):
    if name in ENTRY:
        return ENTRY[name]
    return {"inl": INLINE, "typed": TYPED}[name]


def make_model():
    inits = [numpy_helper.from_array(v, k) for k, v in ENTRY.items()]
    inits.append(numpy_helper.from_array(INLINE, "inl"))
    inits.append(helper.make_tensor("typed", TensorProto.FLOAT, [3], TYPED.tolist()))  # float_data
    s = TensorProto()
    s.name, s.data_type = "str", TensorProto.STRING
    s.dims.append(3)
    s.string_data.extend(STRINGS)
    inits.append(s)
    return model_of(inits)


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "life.onnxzip"
    onnxzip.save(make_model(), p)
    with onnxzip.open(p) as a:  # the model is what the tests assume
        assert [a.info(n).storage for n in ("e0", "inl", "typed", "str")] == ["entry", "inline", "typed", "typed"]
    return p


def check_all(arrays):
    for name, arr in arrays.items():
        if name == "str":
            assert arr.tolist() == STRINGS
        else:
            assert np.array_equal(arr, expected(name)), name


def take_all(a):
    return {name: a.tensors[name] for name in list(ENTRY) + ["inl", "typed", "str"]}


def churn():
    # reuse freed memory, so that a dangling pointer reads other bytes
    junk = [bytearray(os.urandom(64)) * 1000 for _ in range(50)]
    del junk
    gc.collect()


def test_arrays_after_close(path):
    a = onnxzip.open(path)
    arrays = take_all(a)
    mb = a.model_bytes
    model_copy = bytes(mb)
    a.close()
    churn()
    check_all(arrays)
    assert bytes(mb) == model_copy  # the model bytes view, too
    assert inside(arrays["e3"], file_mappings(path))


def test_arrays_after_gc(path):
    a = onnxzip.open(path)
    arrays = take_all(a)
    del a
    gc.collect()
    churn()
    check_all(arrays)
    # arrays made while a context manager was open
    with onnxzip.open(path) as b:
        w = b.tensors["e2"]
    del b
    gc.collect()
    churn()
    assert np.array_equal(w, ENTRY["e2"])


def test_arrays_after_file_removed(path):
    a = onnxzip.open(path)
    arrays = take_all(a)
    a.close()
    del a
    os.unlink(path)
    churn()
    check_all(arrays)


def test_views_of_views_keep_mapping(path):
    a = onnxzip.open(path)
    base = a.tensors["e1"]
    derived = {
        "slice": (base[10:20, ::3], ENTRY["e1"][10:20, ::3]),
        "reshape": (base.reshape(-1), ENTRY["e1"].reshape(-1)),
        "transpose": (base.T, ENTRY["e1"].T),
        "bytes": (base.view(np.uint8)[4::7], ENTRY["e1"].view(np.uint8)[4::7]),
        "memoryview": (np.asarray(memoryview(base.reshape(-1))[300:400]), ENTRY["e1"].reshape(-1)[300:400]),
        "frombuffer": (np.frombuffer(base, dtype=np.uint16), ENTRY["e1"].view(np.uint16).reshape(-1)),
    }
    derived["slice_of_slice"] = (derived["slice"][0][1:], ENTRY["e1"][10:20, ::3][1:])
    a.close()
    del a, base
    gc.collect()
    assert len(file_mappings(path)) >= 1, "the mapping went while views of it live"
    churn()
    for name, (got, want) in derived.items():
        assert np.array_equal(got, want), name
    del derived, got, want
    gc.collect()
    assert file_mappings(path) == [], "the mapping outlived every view"


def test_read_only(path):
    with onnxzip.open(path) as a:
        arrays = take_all(a)
        for name, arr in arrays.items():
            assert not arr.flags.writeable, name
            with pytest.raises(ValueError):
                arr[0] = arr[1]
            if name != "str":  # STRING: see test_string_array_cache_not_writable
                with pytest.raises(ValueError):
                    arr.flags.writeable = True
                assert not np.frombuffer(arr, dtype=np.uint8).flags.writeable, name
                assert memoryview(arr).readonly, name
        w = arrays["e0"]
        with pytest.raises(ValueError):
            w += 1
        with pytest.raises(ValueError):
            np.add(w, 1, out=w)
        with pytest.raises(ValueError):
            w.view(np.uint8)[0] = 1
        # the buffer under the array refuses writable requests itself
        region = w.base
        while isinstance(region, np.ndarray):
            region = region.base
        assert type(region).__name__ == "Region"
        assert memoryview(region).readonly
        with pytest.raises(TypeError):
            memoryview(region)[0] = 1
        with pytest.raises(TypeError):  # asks for a writable buffer
            ctypes.c_char.from_buffer(region)
        with pytest.raises(TypeError):
            memoryview(a.model_bytes)[0] = 0
    assert np.array_equal(w, ENTRY["e0"])
    assert path.read_bytes().count(ENTRY["e0"].tobytes()) == 1  # the file unchanged


def test_string_array_cache_not_writable(path):
    # a STRING object array owns its memory, so flags.writeable = True is
    # allowed: writing to it must not change what later tensors["str"]
    # returns (it did while Archive.array() cached the array).
    with onnxzip.open(path) as a:
        s = a.tensors["str"]
        try:
            s.flags.writeable = True
            s[0] = b"changed"
        except ValueError:
            pass
        assert a.tensors["str"].tolist() == STRINGS


def test_bytearray_held(path):
    data = bytearray(path.read_bytes())
    a = onnxzip.open(data)
    with pytest.raises(BufferError):
        data.extend(b"x")
    arrays = take_all(a)
    mb = a.model_bytes
    a.close()
    with pytest.raises(BufferError):  # the arrays still point into it
        data.extend(b"x")
    check_all(arrays)
    del arrays
    gc.collect()
    with pytest.raises(BufferError):  # model_bytes does too
        data.append(0)
    del mb
    gc.collect()
    data.extend(b"x")  # nothing holds it now
    del data[-1]
    # and after the Archive is garbage-collected rather than closed
    b = onnxzip.open(data)
    w = b.tensors["e0"]
    del b
    gc.collect()
    with pytest.raises(BufferError):
        data.append(0)
    assert np.array_equal(w, ENTRY["e0"])
    del w
    gc.collect()
    data.append(0)


def test_bytes_refcount_held(path):
    data = path.read_bytes()
    before = sys.getrefcount(data)
    a = onnxzip.open(data)
    assert sys.getrefcount(data) > before
    arrays = take_all(a)
    a.close()
    del a
    gc.collect()
    assert sys.getrefcount(data) > before, "the arrays point into data: it must stay referenced"
    check_all(arrays)
    del arrays
    gc.collect()
    assert sys.getrefcount(data) == before
    # a memoryview source: the object under it is held the same way
    view = memoryview(data)
    with onnxzip.open(view) as b:
        w = b.tensors["e1"]
    del view
    gc.collect()
    assert np.array_equal(w, ENTRY["e1"])


def test_bytes_refcount_held_in_memoryview(path):
    data = bytearray(path.read_bytes())
    view = memoryview(data)
    a = onnxzip.open(view)
    w = a.tensors["e1"]
    a.close()
    with pytest.raises(BufferError):  # exported: the memoryview cannot be released
        view.release()
    del view
    gc.collect()
    with pytest.raises(BufferError):
        data.append(0)
    assert np.array_equal(w, ENTRY["e1"])
    del w
    gc.collect()
    data.append(0)


def fd_count():
    return len(os.listdir("/proc/self/fd"))


def test_no_leak_over_cycles(path):
    gc.collect()
    fds, maps = fd_count(), len(file_mappings(path))
    assert maps == 0
    kept = []
    for k in range(200):
        a = onnxzip.open(path)
        w = a.tensors[f"e{k % 4}"]
        t = a.tensors["typed"]
        assert w[1, 2] == ENTRY[f"e{k % 4}"][1, 2] and t[1] == 2.5
        if k % 50 == 0:
            kept.append(w)  # a few outlive their archive
        if k % 2:
            a.close()
        del a, w, t
    gc.collect()
    # each live handle keeps one descriptor (for onnxzip_check): the kept
    # arrays' handles, no more
    assert fd_count() == fds + len(kept), "descriptors leaked over 200 open/close cycles"
    assert 1 <= len(file_mappings(path)) <= len(kept) * 2
    for k, w in enumerate(kept):
        assert np.array_equal(w, ENTRY[f"e{(k * 50) % 4}"])
    del kept, w
    gc.collect()
    assert file_mappings(path) == [], "mappings left after every array is gone"
    assert fd_count() == fds


def test_threads_read_while_closing(path):
    a = onnxzip.open(path)
    names = list(ENTRY) + ["inl", "typed", "str"]
    start = threading.Barrier(5)
    results = {}

    def reader(k):
        start.wait()
        got, reads = [], 0
        try:
            while reads < 100000:
                name = names[(k + reads) % len(names)]
                arr = a.tensors[name]
                got.append((name, arr))
                reads += 1
                if len(got) > 64:
                    got = got[-8:]
        except ValueError:  # closed: the expected end
            pass
        except Exception as e:  # anything else fails the test
            results[k] = e
            return
        for name, arr in got:  # arrays from before the close still read right
            if name == "str":
                ok = arr.tolist() == STRINGS
            else:
                ok = np.array_equal(arr, expected(name))
            if not ok:
                results[k] = AssertionError(f"thread {k}: {name} differs")
                return
        results[k] = reads

    def closer():
        start.wait()
        for _ in range(200):  # let the readers run a little
            if a.tensors["e0"][0, 1] != ENTRY["e0"][0, 1]:
                results["closer"] = AssertionError("e0 differs")
        a.close()
        results["closer"] = "closed"

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)] + [threading.Thread(target=closer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive()
    assert results.pop("closer") == "closed"
    for k, r in results.items():
        assert isinstance(r, int), f"reader {k}: {r!r}"
    assert len(results) == 4
    # the close came while they read (100000 reads take far longer than the
    # closer's 200), so the readers met it
    assert any(r < 100000 for r in results.values()), results
    gc.collect()
    assert file_mappings(path) == []


def test_threads_share_arrays(path):
    # arrays handed to threads after the Archive is gone
    with onnxzip.open(path) as a:
        arrays = take_all(a)
    errors = []

    def work():
        for _ in range(200):
            for name, arr in arrays.items():
                if name != "str" and not np.array_equal(arr, expected(name)):
                    errors.append(name)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
