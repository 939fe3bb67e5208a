"""One model of a package in ONNX Runtime (issue 30), on the repository
layouts of tests/packages/make_repos.py packed by `onnxzip pack`:

* onnxzip.ort_session(PKG, model=M) for every model of every layout: ONNX
  Runtime's outputs on the folder's model (onnx's own loader of its external
  data), bit for bit.
* From the local Hugging Face Hub (tests/remote/hub.py: nginx behind the
  Hub's 302 to a signed CDN URL, as test_hf_hub.py starts it):
  huggingface_hub's hf_hub_download of the package, then ort_session(path,
  model=M) of each model that is not the default; open_url(resolve URL,
  model=M) and `onnxzip fetch --model M` of the resolve URL, their bytes
  counted by the CDN server: at most 1.01x what M needs (its entries, the
  manifest, the directory; tests/remote/packages.needed) beyond the first
  request's fixed tail, the fetched archive running as the folder's model.

Skipped without tokenizers (make_repos.py) or huggingface_hub: Debian's
python has neither; the pinned venv runs these."""
import dataclasses
import os
import re
import sys
import time
import zipfile

import pytest

import onnxzip
from _helpers import REPO, cli, same_outputs
from test_hf_hub import REPO_ID, hf, hf_download  # noqa: F401  (hf: a fixture)

sys.path.insert(0, str(REPO / "tests" / "packages"))
sys.path.insert(0, str(REPO / "tests" / "remote"))
from hub import HubRedirector  # noqa: E402
from packages import needed  # noqa: E402
from servers import NGINX, Nginx  # noqa: E402

CPU = ["CPUExecutionProvider"]
KINDS = ["transformers_js", "encoder_decoder", "genai", "diffusers"]
TAIL = 65536  # the first request of an open: the file's last bytes, whatever the model


@pytest.fixture(scope="module")
def make_repos():
    pytest.importorskip("tokenizers", reason="make_repos.py writes tokenizers with `tokenizers` (the pinned venv)")
    import make_repos as m
    return m


@pytest.fixture(scope="module")
def packed(make_repos, onnxzip_cli, tmp_path_factory):
    """{kind: (folder, package)}."""
    root = tmp_path_factory.mktemp("layouts")
    out = {}
    for kind in KINDS:
        folder = make_repos.make(kind, root / kind)
        pkg = root / f"{kind}.onnxzip"
        p = cli(onnxzip_cli, "pack", folder, "-o", pkg, "-q")
        assert p.returncode == 0, p.stderr
        out[kind] = (folder, pkg)
    return out


def folder_outputs(ort, make_repos, folder, m):
    feeds = make_repos.sample_inputs(folder / m)
    return feeds, ort.InferenceSession(str(folder / m), providers=CPU).run(None, feeds)


@pytest.mark.parametrize("kind", KINDS)
def test_ort_session_of_every_model(ort, make_repos, packed, kind):
    folder, pkg = packed[kind]
    models = make_repos.model_paths(folder)
    assert len(models) >= 1
    for m in models:
        feeds, want = folder_outputs(ort, make_repos, folder, m)
        got = onnxzip.ort_session(pkg, providers=CPU, model=m).run(None, feeds)
        assert same_outputs(want, got) is None, (kind, m, same_outputs(want, got))


@pytest.fixture(scope="module")
def hub_site(packed, remote_build, tmp_path_factory):
    """(docroot, HubRedirector) serving the diffusers package (four models)
    as REPO_ID's model.onnxzip."""
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no origin for the local Hub")
    docroot = tmp_path_factory.mktemp("hub-www")
    os.link(packed["diffusers"][1], docroot / "model.onnxzip")
    with Nginx(str(docroot)) as ng, HubRedirector(str(docroot), ng.url("files")) as hub:
        yield docroot, hub


def infos(a):
    return [dataclasses.replace(t, alignment=None) for t in a.tensor_infos]


def cdn_spans(hub):
    """[(first, last)] byte ranges the CDN answered (206), oldest first, once
    every body is sent (the server counts after the client may have read)."""
    deadline = time.monotonic() + 10
    while True:
        spans, done = [], True
        for r in hub.requests("cdn"):
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", r.range or "")
            assert r.status in (0, 206) and m, r
            a, b = (int(m[1]), int(m[2])) if m[1] else (-int(m[2]), -1)
            spans.append((a, b))
            done = done and r.status == 206 and r.sent == b - a + 1
        if done or time.monotonic() > deadline:
            return spans
        time.sleep(0.05)


def other_models(pkg, m):
    """[(first, last)] bytes of the model entries of `pkg` other than m's."""
    with zipfile.ZipFile(pkg) as z:
        infos = sorted(z.infolist(), key=lambda i: i.header_offset)
    ends = [i.header_offset for i in infos[1:]] + [os.path.getsize(pkg)]
    return [(i.header_offset, end - 1) for i, end in zip(infos, ends)
            if i.filename.endswith(".onnx") and i.filename != m]


def transferred(hub, pkg, m):
    """Bytes the CDN sent; after the first request (the file's end) no byte
    of another model's entry."""
    spans = cdn_spans(hub)
    assert spans and spans[0][0] < 0, spans  # the tail, by suffix range
    for a, b in spans[1:]:
        for x, y in other_models(pkg, m):
            assert b < x or a > y, f"{m}: bytes={a}-{b} read another model's entry at {x}-{y}"
    return sum(b - a + 1 for a, b in spans)


def test_hf_hub_download_then_each_model(hf, ort, make_repos, packed, hub_site, tmp_path):  # noqa: F811
    folder, _ = packed["diffusers"]
    _, hub = hub_site
    (path, _), = hf_download(hub, tmp_path, "model.onnxzip")
    with onnxzip.open(path) as a:
        others = [m for m in a.models if m != a.model_path]
    assert len(others) >= 3
    for m in others:
        feeds, want = folder_outputs(ort, make_repos, folder, m)
        got = onnxzip.ort_session(path, providers=CPU, model=m).run(None, feeds)
        assert same_outputs(want, got) is None, (m, same_outputs(want, got))


def test_open_url_and_fetch_of_one_model_through_the_hub(ort, make_repos, packed, hub_site, onnxzip_cli, tmp_path):
    folder, pkg = packed["diffusers"]
    _, hub = hub_site
    url = hub.url("your-org", "model.onnxzip", repo=REPO_ID.split("/")[1])
    lines = []
    for m in make_repos.model_paths(folder):
        hub.reset()
        with onnxzip.open_url(url, allow_http=True, model=m) as a, onnxzip.open(pkg, model=m) as local:
            # alignment aside: an inline tensor's is its address's, in a model copied at open
            assert a.model_path == m and infos(a) == infos(local)
        opened = transferred(hub, pkg, m)
        hub.reset()
        out = tmp_path / (m.replace("/", "_") + "zip")
        p = cli(onnxzip_cli, "fetch", "--allow-http", "--model", m, url, "-o", out, "-q")
        assert p.returncode == 0, p.stderr
        got, need = transferred(hub, pkg, m), needed(str(pkg), str(onnxzip_cli), m)
        lines.append(f"{m}: open_url {opened} bytes, fetch --model {got} ({need} needed), package "
                     f"{os.path.getsize(pkg)}")
        assert got <= 1.01 * need + TAIL, lines[-1]
        assert opened <= got, lines[-1]  # the open reads no tensor
        feeds, want = folder_outputs(ort, make_repos, folder, m)
        assert same_outputs(want, onnxzip.ort_session(out, providers=CPU).run(None, feeds)) is None, m
    print("\n" + "\n".join(lines))
