"""Writable copy-on-write arrays (Archive.writable_array) and torch tensors
(Archive.torch, Archive.state_dict).

Without torch, everything but torch itself is still checked: the private
mapping (writes never reach the file, read back independently; the array
lies in a mapping of the archive file per /proc/self/maps; the pages
written are the only ones copied, per /proc/self/smaps), copies for
non-entry tensors, a refused mapping as a clear error. The torch tests need torch: Debian's python3-torch (CPU,
torch 1.13) for the pytest_debian run; PyPI's torch wheel does not import
without its CUDA packages (several GB), so the pinned venv has none and
skips them, saying so."""
import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import address, anonymous_bytes, file_mappings, inside, model_of, raw_tensor

MiB = 1 << 20
PAGE = os.sysconf("SC_PAGE_SIZE")


def digest(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns, by truncation."""
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def make_archive(path, float8: bool = True):
    """An archive: a 64 MiB float32 weight, a bfloat16 and (with float8) a
    float8 entry, an INT4 entry, a small inline tensor, a subgraph
    initializer."""
    big = numpy_helper.from_array(np.arange(16 * MiB, dtype=np.float32).reshape(4096, 4096), "big")
    # FLOAT8E4M3FN (17) and INT4 (22) by number: onnx 1.12 names neither
    bf = raw_tensor("bf", TensorProto.BFLOAT16, [2, 1000], bf16_bits(np.arange(2000) - 1000.0).tobytes())
    f8 = raw_tensor("f8", 17, [2048], bytes(range(256)) * 8)
    i4 = raw_tensor("i4", 22, [4000], bytes(range(256)) * 7 + bytes(208))
    small = numpy_helper.from_array(np.arange(4, dtype=np.float32), "small")
    sub_init = numpy_helper.from_array(np.ones(1000, dtype=np.float32), "inner")
    sub = helper.make_graph([helper.make_node("Identity", ["inner"], ["o"])], "sub", [],
                            [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1000])], initializer=[sub_init])
    cond = helper.make_node("If", ["c"], ["out"], then_branch=sub, else_branch=sub)
    model = model_of([big, bf, f8, i4, small] if float8 else [big, bf, i4, small], nodes=[cond],
                     inputs=[helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                     outputs=[helper.make_tensor_value_info("out", TensorProto.FLOAT, [1000])])
    onnxzip.save(model, path, sync=False)
    return path


@pytest.fixture
def archive_path(tmp_path):
    return make_archive(tmp_path / "m.onnxzip")


# ---- copy-on-write numpy arrays (no torch needed) ---------------------------------

def test_writable_array_is_copy_on_write(archive_path):
    before = digest(archive_path)
    with onnxzip.open(archive_path) as a:
        ro = a.tensors["big"]
        w = a.writable_array("big")
        assert w.flags.writeable and w.shape == (4096, 4096) and w.dtype == np.float32
        assert np.array_equal(w, ro)
        assert inside(w, file_mappings(archive_path)), "not a mapping of the archive file"
        assert address(w) != address(ro)
        w[0, :4] = -1
        w[-1, -1] = -2
        assert w[0, 0] == -1 and ro[0, 0] == 0 and ro[-1, -1] == 16 * MiB - 1
        assert a.writable_array("big")[0, 0] == 0  # a mapping of its own: private
        with onnxzip.open(archive_path) as b:
            assert b.tensors["big"][0, 0] == 0
        del w
    assert digest(archive_path) == before  # read independently: the file never changed


def test_writable_array_anon_memory_is_the_pages_written(archive_path):
    """Reading the whole 64 MiB array copies no page (the mapping's anonymous
    memory stays 0: page cache); writing one float in each of 100 pages
    copies exactly those 100 pages. Measured on the mapping itself (smaps),
    not the process's RssAnon, which other frees move (ASan's quarantine)."""
    with onnxzip.open(archive_path) as a:
        w = a.writable_array("big")
        flat = w.reshape(-1)
        assert anonymous_bytes(w) == 0
        assert float(flat.sum(dtype=np.float64)) == float(np.arange(16 * MiB, dtype=np.float64).sum())
        read = anonymous_bytes(w)
        assert read == 0, f"reading made {read} bytes of the mapping anonymous: the pages were copied"
        stride = PAGE // 4
        flat[: 100 * stride : stride] = 7
        written = anonymous_bytes(w)
        assert written == 100 * PAGE, f"100 pages written made {written} bytes anonymous"
        # the negative control: a copy of the same array is anonymous memory
        copy = np.array(w)
        assert anonymous_bytes(copy) >= w.nbytes
        del copy


def test_writable_array_copies_the_rest(archive_path):
    """Inline tensors, and every tensor of an archive opened from a buffer,
    are writable copies, equal to the read-only arrays."""
    data = archive_path.read_bytes()
    with onnxzip.open(archive_path) as a, onnxzip.open(data) as b:
        for arch, name in ((a, "small"), (b, "small"), (b, "bf")):
            w = arch.writable_array(name)
            assert w.flags.writeable and np.array_equal(w.view(np.uint8), arch.tensors[name].view(np.uint8))
            w.reshape(-1)[0] = 1
        assert a.tensors["small"][0] == 0 and b.tensors["bf"].view(np.uint16)[0, 0] == bf16_bits(np.array([-1000.0]))[0]
        assert a.writable_array(a.info("i4")).shape == (2000,)  # packed: its bytes, as array() gives them
    assert archive_path.read_bytes() == data


def test_writable_array_archive_replaced(archive_path, tmp_path):
    """The path now names another file: the mapping would not be the
    archive's; onnxzip.Error (ETRUNC, as check()) instead."""
    with onnxzip.open(archive_path) as a:
        os.replace(tmp_path / "m.onnxzip", tmp_path / "moved")
        (tmp_path / "m.onnxzip").write_bytes((tmp_path / "moved").read_bytes())
        with pytest.raises(onnxzip.Error) as e:
            a.writable_array("big")
        assert e.value.status == "ETRUNC", (e.value.status, str(e.value))


def test_writable_array_refused_mapping(archive_path):
    """A private writable mapping the system refuses (here: RLIMIT_AS, the
    same ENOMEM Linux's overcommit heuristic gives for one larger than RAM +
    swap) is onnxzip.Error ENOMEM naming the tensor and the way out."""
    script = textwrap.dedent(f"""
        import resource, onnxzip
        a = onnxzip.open({str(archive_path)!r})
        with open("/proc/self/status") as f:
            vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + 32 * 2**20, resource.RLIM_INFINITY))
        try:
            a.writable_array("big")
        except onnxzip.Error as e:
            print(e.status, e)
        else:
            print("MAPPED")
        print(a.writable_array("small")[0])  # small ones still map
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first.startswith("ENOMEM ") and "'big'" in first and "copy-on-write" in first \
        and "writable=False" in first, first
    assert second == "0.0"


def test_dlpack_of_arrays():
    """What DLPack does with our arrays, as the docs say: numpy refuses to
    export read-only arrays to unversioned consumers; writable arrays export."""
    ro = np.arange(4, dtype=np.float32)
    ro.flags.writeable = False
    with pytest.raises(BufferError):
        ro.__dlpack__()
    assert np.from_dlpack(np.arange(4)).tolist() == [0, 1, 2, 3]


# ---- torch ------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch", reason="torch is not installed (Debian: apt-get install python3-torch; "
                                               "PyPI's torch needs its CUDA wheels to import)")


def test_torch_read_only_shares_the_mapping(archive_path):
    torch = _torch()
    with onnxzip.open(archive_path) as a:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the read-only warning of from_numpy is ours to document
            t = a.torch("big")
        assert t.dtype == torch.float32 and tuple(t.shape) == (4096, 4096)
        assert t.data_ptr() == address(a.tensors["big"])
        assert inside(a.tensors["big"], file_mappings(archive_path))
        assert float(t[1, 2]) == 4098.0


def test_torch_dtypes(archive_path):
    torch = _torch()
    with onnxzip.open(archive_path) as a:
        bf = a.torch("bf")
        assert bf.dtype == torch.bfloat16 and tuple(bf.shape) == (2, 1000)
        want = (bf16_bits(np.arange(2000) - 1000.0).astype(np.uint32) << 16).view(np.float32)  # bits -> float32
        assert np.array_equal(bf.float().numpy().reshape(-1), want)
        i4 = a.torch("i4")
        assert i4.dtype == torch.uint8 and tuple(i4.shape) == (2000,)
        assert bytes(i4.numpy()) == bytes(range(256)) * 7 + bytes(208)
        if hasattr(torch, "float8_e4m3fn"):
            f8 = a.torch("f8")
            assert f8.dtype == torch.float8_e4m3fn and tuple(f8.shape) == (2048,)
            assert bytes(f8.view(torch.uint8).numpy()) == bytes(range(256)) * 8
        else:
            with pytest.raises(onnxzip.Error) as e:
                a.torch("f8")
            assert e.value.status == "EDTYPE" and "'f8'" in str(e.value) and "float8_e4m3fn" in str(e.value)


def test_torch_writable_is_copy_on_write(archive_path):
    torch = _torch()
    before = digest(archive_path)
    with onnxzip.open(archive_path) as a:
        t = a.torch("big", writable=True)
        t.add_(1)
        bf = a.torch("bf", writable=True)
        bf.mul_(2)
        assert float(t[0, 0]) == 1.0 and a.tensors["big"][0, 0] == 0
        assert float(bf[0, 0]) == -2000.0 and float(a.torch("bf")[0, 0]) == -1000.0
        assert t.dtype == torch.float32 and bf.dtype == torch.bfloat16
    assert digest(archive_path) == before


def test_state_dict(tmp_path):
    torch = _torch()
    with onnxzip.open(make_archive(tmp_path / "s.onnxzip", float8=False)) as a:
        sd = a.state_dict()
        assert list(sd) == ["big", "bf", "i4", "small"]  # the main graph's: not 'inner'
        assert [sd[n].dtype for n in sd] == [torch.float32, torch.bfloat16, torch.uint8, torch.float32]
        assert sd["big"].data_ptr() == address(a.tensors["big"])
        linear = torch.nn.Linear(4096, 4096, bias=False)
        with torch.no_grad():
            linear.load_state_dict({"weight": a.state_dict(writable=True)["big"]})
        assert float(linear.weight[4095, 4095]) == 16 * MiB - 1


def test_state_dict_without_float8_names_the_tensor(archive_path):
    torch = _torch()
    if hasattr(torch, "float8_e4m3fn"):
        pytest.skip(f"torch {torch.__version__} has float8_e4m3fn")
    with onnxzip.open(archive_path) as a:
        with pytest.raises(onnxzip.Error) as e:
            a.state_dict()
        assert "'f8'" in str(e.value)


def test_torch_write_to_read_only_tensor_crashes(archive_path):
    """What the docs warn of: torch has no read-only tensors, and a write
    to one over the read-only mapping kills the process (SIGSEGV)."""
    _torch()
    script = f"import onnxzip; onnxzip.open({str(archive_path)!r}).torch('big').add_(1)"
    # In the sanitizer build, ASan would catch the signal, report and abort:
    # the child leaves SIGSEGV to the system, as in a user's process.
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":handle_segv=0"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, env=env)
    assert r.returncode == -signal.SIGSEGV, (r.returncode, r.stderr[-2000:])
