"""onnxzip.Error's classes: each is also the builtin it means (by errno, else
by status), str(e) is the library's message, errno/filename are set, they
pickle; the zips are written by Python's zipfile, never by onnxzip."""
import errno
import os
import pickle
import zipfile

import pytest

import onnxzip
from onnxzip import _errors


def _raised(fn, *args, **kw):
    with pytest.raises(onnxzip.Error) as info:
        fn(*args, **kw)
    return info.value


def test_missing_file_is_file_not_found(tmp_path):
    p = str(tmp_path / "missing.onnxzip")
    for call in (lambda: onnxzip.open(p), lambda: onnxzip.load(p), lambda: onnxzip.load(p, load_external_data=False)):
        with pytest.raises(FileNotFoundError) as info:
            call()
        e = info.value
        assert isinstance(e, onnxzip.Error) and type(e) is onnxzip.NotFoundError
        assert e.errno == errno.ENOENT and e.sys_errno == errno.ENOENT
        assert e.filename == p and e.path == p
        assert str(e) == f"{p}: cannot open: {os.strerror(errno.ENOENT)}"
        assert e.status == "EIO" and e.code == -3


def test_directory_is_a_directory_error_read_and_written(tmp_path):
    d = str(tmp_path)
    for call in (lambda: onnxzip.open(d), lambda: onnxzip.load(d, load_external_data=False)):
        e = _raised(call)
        assert isinstance(e, IsADirectoryError) and type(e) is onnxzip.DirectoryError
        assert e.status == "ENOTREG" and e.errno == errno.EISDIR and str(e) == f"{d}: a directory, not a regular file"
    onnx = pytest.importorskip("onnx")
    e = _raised(onnxzip.save, onnx.ModelProto(), d)  # an output that is a directory: the same
    assert isinstance(e, IsADirectoryError) and e.status == "ENOTREG" and e.errno == errno.EISDIR


def test_plain_zip_is_value_error(tmp_path):
    p = str(tmp_path / "x.zip")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", "hello\n")
    e = _raised(onnxzip.open, p)
    assert isinstance(e, ValueError) and type(e) is onnxzip.FormatError and not isinstance(e, OSError)
    assert e.status == "ENOTONNXZIP" and e.code == -5 and e.sys_errno == 0 and e.path is None
    assert str(e) == (f"{p}: a zip archive, but not an onnxzip archive: it has no __MODEL_PROTO entry "
                      "(1 entry, e.g. 'a.txt')")


def test_legacy_zip_names_repack(tmp_path):
    p = str(tmp_path / "legacy.zip")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:  # PyTorch's old ZIP_ARCHIVE layout
        z.writestr("__MODEL_PROTO", b"\x08\x07")
        z.writestr("w0", b"\0" * 100)
    e = _raised(onnxzip.open, p)
    assert isinstance(e, ValueError) and e.status == "EMETHOD"
    assert "written by another tool (or re-zipped)" in str(e) and "entry '__MODEL_PROTO' is deflated" in str(e)
    assert str(e).endswith(f"convert it with: onnxzip repack {p} -o OUT.onnxzip")


def test_truncated_zip(tmp_path):
    p = str(tmp_path / "cut.zip")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        z.writestr("w0", b"\1" * 5000)
        z.writestr("__MODEL_PROTO", b"\x08\x07")
    data = open(p, "rb").read()
    for cut in (20, 2000, len(data) - 30):
        with open(p, "wb") as f:
            f.write(data[:cut])
        e = _raised(onnxzip.open, p)
        assert isinstance(e, ValueError) and e.status == "ETRUNC"
        assert str(e).startswith(f"{p}: truncated: {cut} bytes, but its local headers describe at least ")


def test_missing_external_data_is_file_not_found(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    t = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="x.bin")
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [t])
    p = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph), p)
    e = _raised(onnxzip.open, p)
    assert isinstance(e, FileNotFoundError) and type(e) is onnxzip.NotFoundError
    assert e.status == "ENOTFOUND" and e.errno == errno.ENOENT
    assert e.filename.endswith("x.bin") and "refused" not in str(e)
    assert f"{p}: tensor 'w': external data file 'x.bin' does not exist (resolved in " in str(e)


def test_set_model_refuses_what_verify_refuses(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    p = str(tmp_path / "a.onnxzip")
    onnxzip.save(helper.make_model(graph), p)
    before = open(p, "rb").read()
    e = _raised(onnxzip.update_model, p, b"")
    assert isinstance(e, ValueError) and e.status == "EPROTO"
    assert str(e).startswith(f"{p}: entry '__MODEL_PROTO': no ir_version, no graph")
    assert open(p, "rb").read() == before
    onnxzip.verify(p)


def test_every_status_same_class_from_c_and_python():
    for status, code in _errors.CODES.items():
        c = _errors._from_native(code, "ONNXZIP_" + status, "m", -1)
        py = onnxzip.Error("m", status=status, code=code)
        assert type(c) is type(py) is type(_errors.make(status, "m")), status
        assert str(py) == "m" and py.status == status and py.code == code
    assert isinstance(onnxzip.Error("m", status="ELIMIT"), ValueError)
    assert isinstance(onnxzip.Error("m", status="ENOTFOUND"), LookupError)
    assert isinstance(onnxzip.Error("m", status="ENOMEM"), MemoryError)
    assert isinstance(onnxzip.Error("m", status="ETIMEOUT"), TimeoutError)
    assert isinstance(onnxzip.Error("m", status="ENETWORK"), ConnectionError)
    e = onnxzip.Error("p: cannot open: denied", status="EIO", sys_errno=errno.EACCES, path="p")
    assert isinstance(e, PermissionError) and type(e) is onnxzip.PermissionDeniedError and e.filename == "p"
    e = onnxzip.Error("p: cannot write: full", status="EIO", sys_errno=errno.ENOSPC, path="p")
    assert type(e) is onnxzip.FileSystemError and e.errno == errno.ENOSPC and str(e) == "p: cannot write: full"


def test_pickle_round_trip(tmp_path):
    p = str(tmp_path / "missing")
    for e in (_raised(onnxzip.open, p), onnxzip.Error("m", status="ECRC", code=-24, offset=7)):
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e)
        assert (back.status, back.code, back.offset, back.sys_errno, back.path) == \
               (e.status, e.code, e.offset, e.sys_errno, e.path)
        if isinstance(e, OSError):
            assert (back.errno, back.filename) == (e.errno, e.filename)


def test_save_refuses_what_verify_refuses(tmp_path):
    """save() of a model verify refuses: the class, status and message verify
    gives the same archive written by zipfile (but for the file name); no
    file left."""
    onnx = pytest.importorskip("onnx")
    for model, missing in ((onnx.ModelProto(), "no ir_version, no graph"),
                           (onnx.ModelProto(ir_version=8), "no opset_import (required from ir_version 3 on, "
                                                           "the model has 8), no graph")):
        p = str(tmp_path / "out" / "m.onnxzip")
        e = _raised(onnxzip.save, model, p)
        assert type(e) is onnxzip.FormatError and isinstance(e, ValueError) and e.status == "EPROTO"
        assert str(e).startswith(f"{p}: entry '__MODEL_PROTO': {missing} (onnx.checker requires ")
        assert os.listdir(tmp_path) == []  # no file, no temporary file, no directory made
        z = str(tmp_path / "zipfile.onnxzip")
        with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as f:
            f.writestr("__MODEL_PROTO", model.SerializeToString())
        v = _raised(onnxzip.verify, z)
        assert type(v) is type(e) and (v.status, v.code) == (e.status, e.code)
        assert str(v).startswith(z + ": ") and str(e)[len(p):] == str(v)[len(z):]
        os.unlink(z)


def _valid_model_bytes(external=None):
    pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    t = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    if external:
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=external)
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [t])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def _plain(p):
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", "hello\n")
        z.writestr("b.txt", "world\n")
    return onnxzip.FormatError, "ENOTONNXZIP", [
        "a zip archive, but not an onnxzip archive: it has no __MODEL_PROTO entry (2 entries, e.g. 'a.txt')"]


def _legacy(p):
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:  # PyTorch's old export: the model first, deflated
        z.writestr("__MODEL_PROTO", _valid_model_bytes("w0"))
        z.writestr("w0", b"\0" * 16)
    return onnxzip.FormatError, "EMETHOD", ["written by another tool (or re-zipped)",
                                            "a PyTorch COMPRESSED_ZIP_ARCHIVE export (model entry "
                                            "'__MODEL_PROTO', entry 1 of 2)",
                                            "entry '__MODEL_PROTO' is deflated",
                                            f"convert it with: onnxzip repack {p} -o OUT.onnxzip"]


def _tf2onnx(p):
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        z.writestr("__MODEL_PROTO.onnx", _valid_model_bytes())
    return onnxzip.FormatError, "ENOTONNXZIP", ["a tf2onnx large-model zip (model entry '__MODEL_PROTO.onnx'",
                                                "its model entry is named '__MODEL_PROTO.onnx'",
                                                f"convert it with: onnxzip repack {p} -o OUT.onnxzip"]


def _cut(at):
    def build(p):
        with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
            z.writestr("w0", b"\1" * 5000)
            z.writestr("__MODEL_PROTO", _valid_model_bytes())
        data = open(p, "rb").read()
        cut = at if at > 0 else len(data) + at
        with open(p, "wb") as f:
            f.write(data[:cut])
        return onnxzip.FormatError, "ETRUNC", [f"truncated: {cut} bytes, but its local headers describe at least ",
                                               "the download or copy was cut short"]
    return build


def _missing_external(p):
    with open(p, "wb") as f:
        f.write(_valid_model_bytes("x.bin"))
    return onnxzip.NotFoundError, "ENOTFOUND", ["tensor 'w': external data file 'x.bin' does not exist"]


@pytest.mark.parametrize("build", [_plain, _legacy, _tf2onnx, _cut(20), _cut(2000), _cut(-30), _cut(-1),
                                   _missing_external],
                         ids=["plain", "legacy", "tf2onnx", "cut20", "cut2000", "cut-30", "cut-1", "missing_ext"])
def test_same_error_from_open_load_verify(tmp_path, build):
    """What the CLI says of these files (tests/cli/cli_messages.py), the
    Python API raises from open, load and verify: one class and message."""
    pytest.importorskip("onnx")
    p = str(tmp_path / "input.bin")
    cls, status, phrases = build(p)
    seen = []
    for call in (onnxzip.open, onnxzip.load, onnxzip.verify):
        e = _raised(call, p)
        assert type(e) is cls and e.status == status, (call.__name__, type(e), e.status, str(e))
        assert str(e).startswith(f"{p}: ") and all(ph in str(e) for ph in phrases), (call.__name__, str(e))
        seen.append(str(e))
    assert len(set(seen)) == 1, seen
    assert os.listdir(tmp_path) == ["input.bin"]
