"""onnxzip.open_url() and onnxzip.fetch() against real HTTP servers on
127.0.0.1 (tests/remote/servers.py): nginx (the request log shows what each
call cost) and the scripted FaultServer. The oracles are the local file
(onnxzip.open() of the same bytes, byte equality), onnx's numpy_helper and
Python's zipfile and fnmatch."""
import fnmatch
import os
import subprocess
import sys
import threading
import time
import zipfile

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import unnamed_listing

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "remote"))
from servers import NGINX, FaultServer, Nginx  # noqa: E402
from tamper import data_offset  # noqa: E402

SECRET = "sig=SECRET-TOKEN"
BIG = "big"  # 1 MiB + 16 KiB: past nginx /throttled/'s full-speed first MiB
BIG_SHAPE = (520, 512)

def _weights():
    rng = np.random.default_rng(7)
    return {
        "w0": rng.standard_normal((64, 300)).astype(np.float32),
        "w1": np.arange(1000, dtype=np.int64) * 3 - 7,
        "w2": rng.standard_normal((100, 100)).astype(np.float16),
        "small": np.array([1.5, -2.0, 3.25, 0.0], dtype=np.float32),  # stays inline
        BIG: rng.standard_normal(BIG_SHAPE).astype(np.float32),
    }


@pytest.fixture(scope="module")
def docroot(tmp_path_factory):
    root = tmp_path_factory.mktemp("docroot")
    w = _weights()
    const = helper.make_node("Constant", [], ["c"], name="Constant_0",
                             value=numpy_helper.from_array(np.linspace(0, 1, 600).astype(np.float32), "cval"))
    graph = helper.make_graph(
        [const, helper.make_node("Add", ["w0", "x"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 300])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 300])],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnxzip.save(model, str(root / "m.onnxzip"))
    return root


@pytest.fixture(scope="module")
def nginx(docroot, remote_build):
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no HTTP origin to test against")
    with Nginx(str(docroot)) as ng:
        yield ng


@pytest.fixture(scope="module")
def faults(docroot, remote_build):
    with FaultServer(str(docroot)) as fs:
        yield fs


@pytest.fixture()
def local(docroot):
    with onnxzip.open(str(docroot / "m.onnxzip")) as a:
        yield a


def _url(ng, location="files", tag=""):
    """The archive's URL, with a secret in its query, and `tag` first there:
    _log() counts the requests of one test only (nginx logs a request once
    it has finished, so another test's may come in late)."""
    return ng.url(location, "m.onnxzip") + "?" + (f"t={tag}&" if tag else "") + SECRET


def _log(ng, tag, wait_for=0):
    """nginx's entries for the requests of _url(ng, tag=tag)."""
    return ng.requests(f"/files/m.onnxzip?t={tag}&", wait_for=wait_for)


def _logged(ng, tag, archive):
    """nginx's entries for every request `archive` (opened with _url(ng,
    tag=tag)) has made: nginx logs a request once it has finished it, maybe
    after the client has its bytes, so this waits for as many as were made."""
    made = archive.stats.requests
    log = _log(ng, tag, wait_for=made)
    assert len(log) == made, log
    return log


def _open(url, **kw):
    return onnxzip.open_url(url, allow_http=True, **kw)


def _clean(e):
    """The message names the URL without its query: no secret."""
    text = str(e)
    assert "SECRET" not in text and "SECRET" not in repr(e.args), text
    return text


def test_metadata_equals_local_open(nginx, local):
    with _open(_url(nginx)) as a:
        assert isinstance(a, onnxzip.RemoteArchive) and isinstance(a, onnxzip.Archive)
        assert "SECRET" not in a.url and a.url.startswith(nginx.url("files", "m.onnxzip"))
        assert a.path == a.url and "SECRET" not in repr(a)
        assert a.tensor_infos == local.tensor_infos
        assert a.entries == local.entries
        for as_json in (False, True):  # the listing, inline tensors' alignments included
            assert unnamed_listing(a.listing(as_json), a.url, as_json) == \
                unnamed_listing(local.listing(as_json), local.path, as_json)
        assert bytes(a.model_bytes) == bytes(local.model_bytes)
        assert a.model().SerializeToString() == local.model().SerializeToString()
        assert a.layout == "archive"
        a.verify()
        a.check()
        assert a.stats.file_size == os.path.getsize(local.path)


def test_open_fetches_only_the_end(nginx, local):
    with _open(_url(nginx, tag="open-end")) as a:
        log = _logged(nginx, "open-end", a)
        sent = sum(e["bytes"] for e in log)
        assert 1 <= len(log) <= 2 and all(e["status"] == 206 for e in log)
        weights = sum(t.nbytes for t in local.tensor_infos if t.storage == "entry")
        assert sent <= 65536 + len(a.model_bytes) and sent < weights / 10
        assert a.stats.bytes_received == sent and a.stats.requests == len(log)
        assert a.stats.redirects == 0 and a.stats.retries == 0


def test_arrays_bit_equal_and_read_only(nginx, local):
    with _open(_url(nginx)) as a:
        assert set(a.tensors) == set(local.tensors)
        for info in local.tensor_infos:
            got, want = a.array(info.key), local.array(info.key)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), info.key
            assert not got.flags.writeable
            with pytest.raises(ValueError):
                got[...] = 0
        assert np.array_equal(a.tensors[BIG], _weights()[BIG])  # numpy_helper's bytes: the oracle
        assert np.array_equal(a.array(-1), local.array(-1))
        big = a.info(BIG)
        assert np.array_equal(a.array(big), _weights()[BIG])


def test_one_read_is_one_range_request(nginx, local):
    with _open(_url(nginx, tag="one-read")) as a:
        info = a.info(BIG)
        for attempt in range(2):  # the first read also checks the entry's local header
            before = len(_logged(nginx, "one-read", a))
            a.tensors[BIG]
            log = _logged(nginx, "one-read", a)[before:]
            carrying = [e for e in log if e["bytes"] >= info.nbytes]
            assert len(carrying) == 1 and carrying[0]["range"].startswith("bytes="), log
            assert sum(e["bytes"] for e in log) <= info.nbytes + 4096, log
            assert all(e["if_match"] for e in log)  # pinned to the file opened
            if attempt:
                assert len(log) == 1, log


def test_model_load_data_and_extract(nginx, local, tmp_path):
    with _open(_url(nginx)) as a:
        assert a.model(load_data=True) == local.model(load_data=True)
        a.extract(BIG, tmp_path / "big.bin")
    assert (tmp_path / "big.bin").read_bytes() == _weights()[BIG].tobytes()


def test_view_needs_a_local_file(nginx):
    with _open(_url(nginx)) as a:
        with pytest.raises(onnxzip.UnsupportedError) as e:
            a.view()
        _clean(e.value)
        w = a.writable_array("w0")  # a copy, not a mapping of the URL
        w[0, 0] = 42
        assert a.array("w0")[0, 0] != 42


def test_fetch_whole_archive(nginx, docroot, tmp_path):
    out = tmp_path / "sub" / "got.onnxzip"
    onnxzip.fetch(_url(nginx), out, allow_http=True)
    assert out.read_bytes() == (docroot / "m.onnxzip").read_bytes()
    assert sorted(os.listdir(out.parent)) == ["got.onnxzip"]  # no .part left
    with zipfile.ZipFile(out) as z:
        assert z.testzip() is None


def pats_of(patterns):
    return [patterns] if isinstance(patterns, str) else list(patterns)


@pytest.mark.parametrize("patterns", ["w[01]", ["big", "nothing*"], ("w*",)])
def test_fetch_tensors_subset(nginx, local, tmp_path, patterns):
    out = tmp_path / "shard.onnxzip"
    tag = "shard-" + "-".join(pats_of(patterns)).replace("*", "x").replace("[", "").replace("]", "")
    with _open(_url(nginx, tag=tag)) as a:
        before = len(_logged(nginx, tag, a))  # the open's, all logged before the fetch's are counted
        a.fetch(out, tensors=patterns)
    log = _log(nginx, tag, wait_for=before + 1)[before:]
    pats = pats_of(patterns)
    initializers = {t.name for t in local.model().graph.initializer}
    kept = {n for n in initializers if any(fnmatch.fnmatchcase(n, p) for p in pats)}
    with onnxzip.open(out, verify=True) as s:
        model = s.model()
        got = {t.name for t in model.graph.initializer}
        entries = {n for n in kept if local.info(n).storage == "entry"}
        assert entries <= got <= kept | {"small"}  # small is inline: always kept
        for n in got:
            assert s.array(n).tobytes() == local.array(n).tobytes()
        dropped = initializers - got
        assert dropped <= {i.name for i in model.graph.input}
    moved = sum(local.info(n).nbytes for n in entries)
    assert sum(e["bytes"] for e in log) <= moved + 4096 * (len(entries) + 1), log


def test_fetch_resumes_after_a_truncated_transfer(faults, docroot, tmp_path):
    url = faults.url("truncfirst", "m.onnxzip") + "?" + SECRET
    out = tmp_path / "resumed.onnxzip"
    faults.reset()
    with pytest.raises(onnxzip.NetworkError) as e:  # the tail request cut short: ENETWORK
        _open(url, retries=0)
    assert e.value.status == "ENETWORK" and isinstance(e.value, ConnectionError)
    _clean(e.value)
    with _open(url, retries=0) as a:
        faults.reset()  # the next long body is cut in half: the download's
        with pytest.raises(onnxzip.NetworkError) as e:
            a.fetch(out)
        _clean(e.value)
        assert os.path.exists(str(out) + ".part") and not out.exists()
        a.fetch(out)
    assert out.read_bytes() == (docroot / "m.onnxzip").read_bytes()
    assert not os.path.exists(str(out) + ".part") and not os.path.exists(str(out) + ".part.etag")
    last = faults.requests("truncfirst")[-1]
    assert last.range is not None and int(last.range.split("=")[1].split("-")[0]) > 0  # resumed, not restarted


@pytest.mark.parametrize("mode, cls, status", [
    ("status500", onnxzip.NetworkError, "EHTTP"),
    ("noranges", onnxzip.FormatError, "ENORANGE"),
    ("trunc", onnxzip.NetworkError, "ENETWORK"),
    ("noetag", onnxzip.NetworkError, "EHTTP"),
    ("wrong_range", onnxzip.FormatError, "EREPLY"),
])
def test_server_faults(faults, mode, cls, status):
    with pytest.raises(cls) as e:
        _open(faults.url(mode, "m.onnxzip") + "?" + SECRET, retries=0)
    assert e.value.status == status
    assert faults.url(mode, "m.onnxzip") in _clean(e.value)


@pytest.mark.parametrize("mode, cls, status", [
    ("endless200", onnxzip.FormatError, "ENORANGE"),
    ("huge200", onnxzip.FormatError, "ENORANGE"),  # Range ignored on an 8 GiB object
    ("endless403", onnxzip.NetworkError, "EHTTP"),
])
def test_replies_judged_before_their_body(faults, mode, cls, status):
    """A reply other than 206 is judged by its status: an endless or 8 GiB
    body is not read (what the server sent is socket buffers' worth), over
    http:// and through a redirect."""
    for path in (mode, f"to/{mode}"):
        faults.reset()
        t0 = time.monotonic()
        with pytest.raises(cls) as e:
            _open(faults.url(path, "m.onnxzip") + "?" + SECRET, retries=1)  # a 200 or 403 is not retried
        took = time.monotonic() - t0
        time.sleep(0.2)  # the server's handler sees the client go
        sent = sum(r.sent for r in faults.requests(mode))
        assert e.value.status == status and faults.url(path, "m.onnxzip") in _clean(e.value)
        assert took < 5 and len(faults.requests(mode)) == 1 and sent <= 64 << 20, (took, sent)


@pytest.mark.parametrize("mode, kw, words", [
    ("trickle", {"low_speed_limit": 1024, "low_speed_time": 1.5}, "under the low-speed limit of 1024 bytes/s"),
    ("crawl", {"low_speed_time": 5.0, "request_timeout": 1.5}, "not complete after 1500 ms (the request deadline"),
])
def test_slow_replies_end_within_the_bounds(faults, mode, kw, words):
    """A tail reply trickling a byte every 0.5 s (no stall: --timeout never
    fires) ends by the low-speed rule, one crawling at 4 KiB/s (above the
    rule) by the deadline: NetworkTimeoutError naming the URL, within the
    bound the options give."""
    faults.reset()
    t0 = time.monotonic()
    with pytest.raises(onnxzip.NetworkTimeoutError) as e:
        _open(faults.url(mode, "m.onnxzip") + "?" + SECRET, retries=0, timeout=1.0, **kw)
    took = time.monotonic() - t0
    assert isinstance(e.value, TimeoutError) and e.value.status == "ETIMEOUT"
    assert faults.url(mode, "m.onnxzip") in _clean(e.value) and words in str(e.value)
    assert 1.4 < took < 4, took


def test_s3_slow_reply_ends_within_the_bound(faults, monkeypatch, tmp_path):
    """s3:// goes through the same rules: FaultServer as the endpoint (it
    takes any signature) trickles the tail; fetch() raises within the
    bound, naming the s3:// URL."""
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    t0 = time.monotonic()
    with pytest.raises(onnxzip.NetworkTimeoutError) as e:
        onnxzip.fetch("s3://trickle/m.onnxzip", tmp_path / "m.onnxzip", allow_http=True, region="us-east-1",
                      endpoint_url=faults.base_url, retries=0, low_speed_limit=2048, low_speed_time=1.5)
    took = time.monotonic() - t0
    assert "s3://trickle/m.onnxzip: bytes -65536" in str(e.value) and "wJalr" not in str(e.value)
    assert 1.4 < took < 4 and os.listdir(tmp_path) == [], took


def test_http_errors(nginx):
    with pytest.raises(onnxzip.NetworkError) as e:
        _open(nginx.url("missing", "m.onnxzip") + "?" + SECRET)
    assert isinstance(e.value, ConnectionError) and e.value.status == "EHTTP" and "404" in _clean(e.value)
    with pytest.raises(onnxzip.FormatError) as e:
        _open(_url(nginx, "noranges"))
    assert e.value.status == "ENORANGE" and isinstance(e.value, ValueError)
    _clean(e.value)
    with pytest.raises(onnxzip.InvalidArgumentError) as e:  # http:// needs allow_http=True
        onnxzip.open_url(_url(nginx))
    assert e.value.status == "EINVAL" and "allow_http" in _clean(e.value)
    with pytest.raises(onnxzip.InvalidArgumentError):
        onnxzip.open_url("ftp://127.0.0.1/m.onnxzip", allow_http=True)


def test_open_names_open_url_for_a_url(nginx):
    """onnxzip.open() of a URL that names no file says to use open_url(),
    with neither the query nor a password in the message."""
    with pytest.raises(onnxzip.InvalidArgumentError) as e:
        onnxzip.open(_url(nginx).replace("://", "://user:pw@") + "?" + SECRET)
    assert "open_url" in _clean(e.value) and "pw" not in str(e.value)


def test_arguments_checked_before_any_request(nginx, tmp_path):
    url = _url(nginx, tag="args")
    for kw, cls in [({"timeout": "5"}, TypeError), ({"timeout": True}, TypeError), ({"retries": 1.0}, TypeError),
                    ({"allow_http": 1}, TypeError), ({"timeout": 0}, onnxzip.InvalidArgumentError),
                    ({"timeout": float("nan")}, onnxzip.InvalidArgumentError),
                    ({"connect_timeout": -1}, onnxzip.InvalidArgumentError),
                    ({"retries": -1}, onnxzip.InvalidArgumentError), ({"parallel": 0}, onnxzip.InvalidArgumentError),
                    ({"max_redirects": 51}, onnxzip.InvalidArgumentError), ({"ca_file": 3}, TypeError),
                    ({"low_speed_limit": 0}, onnxzip.InvalidArgumentError),
                    ({"low_speed_limit": 1 << 32}, onnxzip.InvalidArgumentError),
                    ({"low_speed_limit": 1024.0}, TypeError), ({"low_speed_limit": True}, TypeError),
                    ({"low_speed_time": 0}, onnxzip.InvalidArgumentError), ({"low_speed_time": "30"}, TypeError),
                    ({"request_timeout": float("nan")}, onnxzip.InvalidArgumentError),
                    ({"request_timeout": -1.0}, onnxzip.InvalidArgumentError),
                    ({"request_timeout": 86401}, onnxzip.InvalidArgumentError)]:
        kw.setdefault("allow_http", True)
        with pytest.raises(cls):
            onnxzip.open_url(url, **kw)
    with pytest.raises(TypeError):
        onnxzip.open_url(url.encode(), allow_http=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        onnxzip.fetch(url, tmp_path / "x", allow_http=True, tensors=[1])
    with pytest.raises(onnxzip.InvalidArgumentError):
        onnxzip.fetch(url, tmp_path / "x", allow_http=True, tensors=[])
    with pytest.raises(TypeError):
        onnxzip.fetch(url, tmp_path / "x", allow_http=True, progress=5)
    time.sleep(0.1)
    assert _log(nginx, "args") == []
    with pytest.raises(onnxzip.NameNotFoundError):
        onnxzip.fetch(url, tmp_path / "none.onnxzip", allow_http=True, tensors="nothing*")
    assert os.listdir(tmp_path) == []


def test_progress_reports_until_done(nginx, docroot, tmp_path):
    calls = []
    onnxzip.fetch(_url(nginx), tmp_path / "p.onnxzip", allow_http=True, progress=lambda d, t: calls.append((d, t)))
    size = os.path.getsize(docroot / "m.onnxzip")
    assert len(calls) >= 2 and calls[-1] == (size, size)  # > 1 MiB: a step, then the end
    assert all(t == size for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    calls.clear()
    with _open(_url(nginx)) as a:
        a.fetch(tmp_path / "s.onnxzip", tensors="big", progress=lambda d, t: calls.append((d, t)))
        others = sum(t.nbytes for t in a.tensor_infos if t.storage == "entry" and t.kind != "initializer")
        assert others and calls and calls[-1][0] == calls[-1][1] == a.info(BIG).nbytes + others  # + Constant's


class Stop(Exception):
    pass


@pytest.mark.parametrize("tensors", [None, "w*"])
def test_exception_in_progress_ends_the_transfer(nginx, tmp_path, tensors):
    seen = []

    def progress(done, total):
        seen.append(done)
        raise Stop("enough")

    out = tmp_path / "new" / "x.onnxzip"
    with pytest.raises(Stop, match="enough") as e:
        onnxzip.fetch(_url(nginx), out, allow_http=True, tensors=tensors, progress=progress)
    assert len(seen) == 1 and e.traceback[-1].name == "progress"
    assert not (tmp_path / "new").exists() or os.listdir(tmp_path / "new") == []
    onnxzip.fetch(_url(nginx), out, allow_http=True, tensors=tensors)  # the archive is still usable
    assert out.exists()


def _ticks_during(fn):
    """How often another Python thread ran (every 5 ms) while fn() ran, and
    how long fn() took."""
    ticks, stop = [0], threading.Event()

    def tick():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.005)

    t = threading.Thread(target=tick)
    t.start()
    start = time.monotonic()
    try:
        fn()
    finally:
        took = time.monotonic() - start
        stop.set()
        t.join()
    return ticks[0], took


def test_gil_released_during_transfers(nginx, tmp_path):
    """nginx's /throttled/ sends the first MiB of a response at full speed,
    then 8 KiB/s: the big tensor's 16 KiB past it take about 2 s, during
    which another thread must keep running."""
    with _open(_url(nginx, "throttled"), timeout=60) as a:
        got = []
        ticks, took = _ticks_during(lambda: got.append(a.tensors[BIG]))
        assert took > 1.0 and ticks > took * 50, (ticks, took)
        assert np.array_equal(got[0], _weights()[BIG])
        calls = []
        ticks, took = _ticks_during(lambda: a.fetch(tmp_path / "t.onnxzip", tensors=BIG,
                                                    progress=lambda d, t: calls.append(d)))
        assert took > 1.0 and ticks > took * 50 and calls, (ticks, took)


def test_cli_extract_url(nginx, onnxzip_cli, tmp_path):
    want = _weights()[BIG].tobytes()
    out = tmp_path / "big.bin"
    r = subprocess.run([str(onnxzip_cli), "extract", "--allow-http", _url(nginx), BIG, "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == want and "SECRET" not in r.stdout + r.stderr
    with open(tmp_path / "stdout.bin", "wb") as f:
        r = subprocess.run([str(onnxzip_cli), "extract", "--allow-http", _url(nginx), BIG, "-o", "-"], stdout=f,
                           stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "stdout.bin").read_bytes() == want
    r = subprocess.run([str(onnxzip_cli), "extract", "--allow-http", _url(nginx), "nope", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no tensor named 'nope'" in r.stderr and "SECRET" not in r.stderr
    r = subprocess.run([str(onnxzip_cli), "extract", _url(nginx), BIG, "-o", str(tmp_path / "y")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "[ONNXZIP_EINVAL]" in r.stderr and not (tmp_path / "y").exists()


def _tamper_model(path, name):
    inits = [numpy_helper.from_array(np.arange(4096, dtype=np.float32) * (2 if name == "wb" else 1), name)]
    graph = helper.make_graph([helper.make_node("Add", ["x", name], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4096])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())


@pytest.fixture(scope="module")
def tamper_pkg(docroot, tmp_path_factory):
    """pkg.onnxzip in the docroot: models a/ and b/ of the same size (their
    weights 'wa', 'wb'); where a/model.onnx's bytes lie and b's bytes, from
    Python's zipfile."""
    repo = tmp_path_factory.mktemp("tamper_repo")
    for d, w in (("a", "wa"), ("b", "wb")):
        (repo / d).mkdir()
        _tamper_model(repo / d / "model.onnx", w)
    pkg = docroot / "pkg.onnxzip"
    onnxzip.pack(str(repo), str(pkg))
    at, a = data_offset(str(pkg), "a/model.onnx")
    _, b = data_offset(str(pkg), "b/model.onnx")
    assert len(a) == len(b) and a != b
    return at, a, b


@pytest.mark.parametrize("change", ["another model", "one letter"])
def test_bytes_changed_in_transit_are_refused(faults, tamper_pkg, tmp_path, change):
    """A server that sends other bytes for a/model.onnx (b/'s, or one letter
    of its weight's name changed: the protobuf stays valid): open_url(model=)
    and fetch(model=) raise FormatError ECRC naming the URL (no query) and
    the entry; fetch writes nothing. Untouched, both succeed."""
    at, a, b = tamper_pkg
    url = faults.url("tamper", "pkg.onnxzip") + "?" + SECRET
    out = tmp_path / "out.onnxzip"
    with _open(url, model="a/model.onnx") as r:  # untouched: the model's own bytes
        assert bytes(r.model_bytes) == a
    onnxzip.fetch(url, str(out), model="a/model.onnx", allow_http=True)
    out.unlink()
    faults.untamper()
    if change == "another model":
        faults.tamper("pkg.onnxzip", at, b)
    else:
        i = a.index(b"wa")
        faults.tamper("pkg.onnxzip", at + i, b"wz")
    try:
        with pytest.raises(onnxzip.FormatError) as e:
            _open(url, model="a/model.onnx")
        assert e.value.status in ("ECRC", "EDIGEST")
        text = _clean(e.value)
        assert faults.url("tamper", "pkg.onnxzip") in text and "'a/model.onnx'" in text, text
        with pytest.raises(onnxzip.FormatError) as e:
            onnxzip.fetch(url, str(out), model="a/model.onnx", allow_http=True)
        assert e.value.status in ("ECRC", "EDIGEST")
        assert "'a/model.onnx'" in _clean(e.value)
        assert list(tmp_path.iterdir()) == []
    finally:
        faults.untamper()
