"""The public API as a user's typed code uses it: checked by mypy --strict
(tests/python/meson.build: mypy_strict), never run. A wrong type here, or
in the package's annotations, fails the check; the reveal_type-free
assignments below pin what each call returns."""
import mmap
import pathlib
from typing import List, Mapping, Optional, Tuple

import numpy as np
import onnx
import onnxruntime
import onnxruntime_genai

import onnxzip


def use(path: pathlib.Path, raw: bytes, mapped: mmap.mmap, so: onnxruntime.SessionOptions) -> None:
    with onnxzip.open(path) as a:
        w: np.ndarray = a.tensors["w"]
        tensors: Mapping[str, np.ndarray] = a.tensors
        last: np.ndarray = a.array(-1)
        infos: List[onnxzip.TensorInfo] = a.tensor_infos
        key: str = a.info(infos[0].key).key  # an unnamed tensor's path in the model
        entries: List[onnxzip.Entry] = a.entries
        model: onnx.ModelProto = a.model()
        view: bytes = a.view(size_threshold=0)
        closed: bool = a.closed
        where: Optional[str] = a.path
        a.write_view(path.with_suffix(".view.onnx"))
        del w, tensors, last, infos, key, entries, model, view, closed, where
    onnxzip.open(raw).close()
    onnxzip.open(mapped).close()
    onnxzip.open(np.frombuffer(raw, dtype=np.uint8)).close()
    loaded: onnx.ModelProto = onnxzip.load(path)
    onnxzip.save(loaded, str(path), align=128, size_threshold=0)
    onnxzip.pack(path, b"out.onnxzip", align=64)
    onnxzip.unpack(path, "out/model.onnx", layout="per-tensor")
    onnxzip.unpack(path, "out/model.onnx", layout="per_tensor")
    onnxzip.repack(path, pathlib.Path("r.onnxzip"))
    onnxzip.update_model(path, loaded)
    onnxzip.verify(path)
    session: onnxruntime.InferenceSession = onnxzip.ort_session(path, so)
    del session
    version: str = onnxzip.__version__
    del version


def use_remote(url: str, out: pathlib.Path) -> None:
    with onnxzip.open_url(url, allow_http=True, timeout=5.0, connect_timeout=2, retries=0, max_redirects=0,
                          parallel=8, ca_file=None, token=None) as a:
        shown: str = a.url
        stats: onnxzip.RemoteStats = a.stats
        requests: int = stats.requests + stats.retries + stats.bytes_received + stats.file_size
        w: np.ndarray = a.tensors["weight"]
        base: onnxzip.Archive = a
        a.fetch(out, tensors=["w*", "b?"])
        del shown, requests, w, base

    def progress(done: int, total: int) -> None:
        print(done, total)

    onnxzip.fetch(url, out, progress=progress)
    onnxzip.fetch(url, str(out), tensors="weight", allow_http=True, ca_file=pathlib.Path("ca.pem"), token=False)
    onnxzip.open_url(url, token="hf_xyz").close()
    onnxzip.fetch(url, out, low_speed_limit=4096, low_speed_time=10, request_timeout=60.0)


def use_package(path: pathlib.Path, folder: pathlib.Path, url: str) -> None:
    onnxzip.pack(folder, path, default_model="onnx/model.onnx", sync=False)
    onnxzip.unpack(path, folder / "copy")
    onnxzip.unpack(path, folder / "one" / "model.onnx", model="onnx/model_fp16.onnx", layout="single")
    with onnxzip.open(path, model="onnx/model_fp16.onnx") as a:
        models: Mapping[str, onnxzip.Archive] = a.models
        other: onnxzip.Archive = a.models["onnx/model.onnx"]
        files: Mapping[str, memoryview] = a.files
        tokenizer: memoryview = a.files["tokenizer.json"]
        where: Optional[str] = a.model_path
        package: bool = a.is_package
        members: List[onnxzip.Member] = a.members
        first: onnxzip.Member = members[0]
        about: Tuple[str, str, int, bool] = (first.path, first.kind, first.size, first.is_default)
        del models, other, files, tokenizer, where, package, about
    try:
        onnxzip.open(path).files["vocab.txt"]
    except onnxzip.MemberNotFoundError as e:
        status: str = e.status
        missing: KeyError = e
        del status, missing
    loaded: onnx.ModelProto = onnxzip.load(path, model="onnx/model.onnx")
    session: onnxruntime.InferenceSession = onnxzip.ort_session(path, model="onnx/model_fp16.onnx")
    with onnxzip.open_url(url, model="onnx/model_fp16.onnx") as r:
        remote: Mapping[str, onnxzip.Archive] = r.models
        del remote
    genai: onnxruntime_genai.Model = onnxzip.genai_model(path, model="cpu-int4", cache_dir=pathlib.Path("c"),
                                                         prepack=True)
    del loaded, session, genai


def use_trust(path: pathlib.Path, key: pathlib.Path, url: str) -> None:
    trust = onnxzip.Trust(public_key=key, signature=key.read_bytes())
    by_root = onnxzip.Trust(certificate_chain=str(key))
    pem: Optional[bytes] = trust.public_key
    with onnxzip.open(path, model="onnx/model.onnx", trust=trust) as a:
        tokenizer: memoryview = a.files["tokenizer.json"]
        del tokenizer
    try:
        onnxzip.load(path, trust=by_root)
    except onnxzip.SignatureError as e:
        status: str = e.status
        invalid: ValueError = e
        del status, invalid
    session: onnxruntime.InferenceSession = onnxzip.ort_session(path, trust=trust)
    genai: onnxruntime_genai.Model = onnxzip.genai_model(path, trust=trust)
    with onnxzip.open_url(url, trust=trust) as r:
        remote: onnxzip.RemoteArchive = r
        r.fetch(path)
        del remote
    onnxzip.fetch(url, path, model="onnx/model.onnx", trust=trust)
    del pem, session, genai
