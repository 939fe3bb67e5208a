"""huggingface_hub's own client against a local Hub (issue 20): nginx serves
the files, tests/remote/hub.py's HubRedirector answers the Hub's resolve
URLs with a 302 to a signed URL on its CDN port, as huggingface.co does.
huggingface_hub runs in a child interpreter whose environment points it
there (HF_ENDPOINT, HF_HOME in the test's directory: no token, no user
cache; HF_HUB_OFFLINE unset; HF_HUB_DISABLE_TELEMETRY=1).

* hf_hub_download returns the snapshot's path, a link ../../blobs/SHA256
  whose bytes are the served file's; onnxzip.ort_session(that path) computes
  ONNX Runtime's outputs on the original classic model bit for bit;
  `onnxzip view` of it beside the blob runs in ONNX Runtime by path.
* onnxzip.open_url(hf_hub_url(...)): the local archive's tensor_infos and
  arrays, one redirect per open, every later request a 206 from the CDN.
* A classic model (onnx/model.onnx + onnx/model.onnx_data) downloaded into
  the cache packs from its links, with the original's outputs.
* README's "From the Hugging Face Hub": its python block runs as written
  but for one change, open_url(url) -> open_url(url, allow_http=True) (the
  local Hub is http://); its sh lines run against the local Hub
  (https://huggingface.co -> the Hub's URL, --allow-http added).

Skipped without huggingface_hub (Debian's python; the pinned venv has it)
or onnxruntime, but the open_url checks; all without nginx or a libcurl
build. The traffic of an open and a read
through the redirect is printed (pytest -s).
"""
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest

import onnxzip
from _helpers import REPO, cli, matmul_model, same_outputs

sys.path.insert(0, str(REPO / "tests" / "remote"))
from hub import HubRedirector  # noqa: E402
from servers import NGINX, Nginx  # noqa: E402

REPO_ID = "your-org/tiny-mlp"  # the README's names; the local Hub serves any ORG/REPO
CPU = ["CPUExecutionProvider"]
README_HEADING = "## From the Hugging Face Hub"


@pytest.fixture(scope="module")
def hf():
    """huggingface_hub runs in child interpreters (this one): skips without it."""
    if importlib.util.find_spec("huggingface_hub") is None:
        pytest.skip("huggingface_hub is not importable by this interpreter (Debian has none; "
                    "the pinned venv, tests/python/requirements.txt, runs these)")


@pytest.fixture(scope="module")
def site(tmp_path_factory, remote_build):
    """(originals dir, docroot, Nginx, HubRedirector). The docroot holds
    model.onnxzip (the README's tiny MLP, tools/make_example_model.py),
    large.onnxzip (a 2 MiB MatMul) and that MatMul as a classic model,
    onnx/model.onnx + onnx/model.onnx_data; originals/ the classic models."""
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no origin for the local Hub")
    root = tmp_path_factory.mktemp("hfhub")
    orig, docroot = root / "originals", root / "www"
    (docroot / "onnx").mkdir(parents=True)
    orig.mkdir()
    subprocess.run([sys.executable, str(REPO / "tools" / "make_example_model.py"), str(orig / "tiny.onnx")],
                   check=True, stdout=subprocess.DEVNULL)
    onnxzip.save(onnx.load(str(orig / "tiny.onnx")), docroot / "model.onnxzip", sync=False)
    large = matmul_model(512, 1024, seed=21)
    onnx.save(large, str(orig / "large.onnx"))
    onnxzip.save(large, docroot / "large.onnxzip", sync=False)
    onnx.save(large, str(docroot / "onnx" / "model.onnx"), save_as_external_data=True,
              location="model.onnx_data", size_threshold=1024)
    with Nginx(str(docroot)) as ng, HubRedirector(str(docroot), ng.url("files")) as hub:
        yield orig, docroot, ng, hub


def hf_env(hub, home):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGING_FACE_")) and k.lower() not in ("http_proxy", "https_proxy")}
    env.update(HF_ENDPOINT=hub.base_url, HF_HOME=str(home), HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", NO_PROXY="127.0.0.1")
    return env


def hf_download(hub, home, *filenames):
    """hf_hub_download of each file of REPO_ID (cache: HOME/cache) in a
    child interpreter: [(the path it returns, hf_hub_url(...))]."""
    code = ("import json, sys\nfrom huggingface_hub import hf_hub_download, hf_hub_url\n"
            "print(json.dumps([(hf_hub_download(repo_id=sys.argv[1], filename=f, cache_dir=sys.argv[2]),"
            " hf_hub_url(sys.argv[1], f)) for f in sys.argv[3:]]))")
    p = subprocess.run([sys.executable, "-c", code, REPO_ID, str(home / "cache"), *filenames],
                       env=hf_env(hub, home), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def outputs(session, n):
    return session.run(None, {session.get_inputs()[0].name: np.linspace(-1, 1, n, dtype=np.float32).reshape(1, n)})


def test_hf_hub_download_then_ort_session(hf, ort, site, tmp_path):
    orig, docroot, _, hub = site
    hub.reset()
    (path, url), = hf_download(hub, tmp_path, "model.onnxzip")
    assert url == f"{hub.base_url}/{REPO_ID}/resolve/main/model.onnxzip"
    digest = sha256(docroot / "model.onnxzip")
    snapshot = tmp_path / "cache" / "models--your-org--tiny-mlp" / "snapshots" / ("0" * 40)
    assert path == str(snapshot / "model.onnxzip")
    assert os.path.islink(path) and os.readlink(path) == f"../../blobs/{digest}"
    assert sha256(path) == digest
    # what it asked: one HEAD of the resolve URL (302, not followed), one GET of the CDN URL
    hubs, cdn = hub.requests("hub"), hub.requests("cdn")
    assert [(r.method, r.status) for r in hubs] == [("HEAD", 302)], hubs
    assert [(r.method, r.status, r.sent) for r in cdn] == [("GET", 200, os.path.getsize(path))], cdn
    assert all(r.authorization is None for r in hubs + cdn)
    want = outputs(ort.InferenceSession(str(orig / "tiny.onnx"), providers=CPU), 32)
    got = outputs(onnxzip.ort_session(path, providers=CPU), 32)
    assert same_outputs(want, got) is None


def test_cli_view_of_the_cache_runs_by_path(hf, ort, onnxzip_cli, site, tmp_path):
    orig, _, _, hub = site
    (path, _), = hf_download(hub, tmp_path, "model.onnxzip")
    blob = os.path.realpath(path)
    view = os.path.join(os.path.dirname(blob), "model.view.onnx")
    p = cli(onnxzip_cli, "view", path, "-o", view)
    assert p.returncode == 0, p.stderr
    want = outputs(ort.InferenceSession(str(orig / "tiny.onnx"), providers=CPU), 32)
    assert same_outputs(want, outputs(ort.InferenceSession(view, providers=CPU), 32)) is None


def read_through_hub(hub, url, local, tensor):
    """open_url(url) and one read, checked against the local archive; the
    traffic of each step (the client's stats and the servers' records)."""
    hub.reset()
    with onnxzip.open_url(url, allow_http=True) as a, onnxzip.open(local) as loc:
        opened = (a.stats, hub.requests("hub"), hub.requests("cdn"))
        assert a.tensor_infos == loc.tensor_infos
        assert np.array_equal(a.tensors[tensor], loc.tensors[tensor])
        read = a.stats
    hubs, cdn = hub.requests("hub"), hub.requests("cdn")
    assert [(r.method, r.status) for r in hubs] == [("GET", 302)], hubs  # one redirect per open
    assert cdn and all(r.status == 206 and r.query for r in cdn), cdn  # the rest: ranges, signed
    assert opened[0].redirects == read.redirects == 1
    assert read.requests + read.redirects == len(hubs) + len(cdn)  # a redirect: not in requests
    assert read.bytes_received == sum(r.sent for r in cdn)  # nor its body
    return opened, read, cdn[len(opened[2]):]


def test_open_url_through_the_redirect(site):
    _, docroot, _, hub = site
    for name, tensor in (("model.onnxzip", "fc1.weight"), ("large.onnxzip", "W")):
        (opened, _, ocdn), read, more = read_through_hub(hub, f"{hub.base_url}/{REPO_ID}/resolve/main/{name}",
                                                         docroot / name, tensor)
        size = os.path.getsize(docroot / name)
        print(f"\n{name} ({size} bytes): open_url {opened.requests + opened.redirects} requests (1 redirect "
              f"+ {len(ocdn)} to the CDN), {opened.bytes_received} bytes received; + read '{tensor}': "
              f"{read.requests - opened.requests} request(s), {read.bytes_received - opened.bytes_received} bytes")
        assert len(more) == read.requests - opened.requests >= 1


def test_pack_classic_model_from_the_cache(hf, ort, onnxzip_cli, site, tmp_path):
    orig, _, _, hub = site
    got = hf_download(hub, tmp_path, "onnx/model.onnx", "onnx/model.onnx_data")
    for path, _ in got:
        assert os.path.islink(path) and os.path.dirname(os.path.realpath(path)).endswith("blobs")
    out = tmp_path / "packed.onnxzip"
    p = cli(onnxzip_cli, "pack", got[0][0], "-o", out)
    assert p.returncode == 0, p.stderr
    want = outputs(ort.InferenceSession(str(orig / "large.onnx"), providers=CPU), 512)
    assert same_outputs(want, outputs(ort.InferenceSession(got[0][0], providers=CPU), 512)) is None
    assert same_outputs(want, outputs(onnxzip.ort_session(out, providers=CPU), 512)) is None


def readme_section():
    """The python block and the sh lines of README's section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("\n" + README_HEADING + "\n")
    section = text[start + 1:text.index("\n## ", start + 1)]
    python, = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    sh, = re.findall(r"^```sh\n(.*?)^```$", section, re.S | re.M)
    return python, [line for line in sh.splitlines() if line.startswith("onnxzip ")]


def test_readme_section_runs(hf, ort, onnxzip_cli, site, tmp_path):
    orig, docroot, _, hub = site
    python, lines = readme_section()
    assert python.count("onnxzip.open_url(url)") == 1 and REPO_ID in python
    hub.reset()
    code = python.replace("onnxzip.open_url(url)", "onnxzip.open_url(url, allow_http=True)")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=hf_env(hub, tmp_path / "home"),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    n = len(onnx.load(str(orig / "tiny.onnx")).graph.initializer)
    assert p.stdout.split() == [str(n + 1), "1"]  # the Constant's tensor too; one redirect
    snapshots = tmp_path / "home" / "hub" / "models--your-org--tiny-mlp" / "snapshots"
    assert [os.path.islink(s / "model.onnxzip") for s in snapshots.iterdir()] == [True]
    assert len(hub.requests("hub")) == 2  # hf_hub_download's HEAD, open_url's GET
    keys = [t.key for t in onnxzip.open(docroot / "model.onnxzip").tensor_infos]
    assert len(lines) == 2
    for line in lines:
        args = line.replace("https://huggingface.co", hub.base_url).split()[1:]
        p = subprocess.run([str(onnxzip_cli), args[0], "--allow-http", *args[1:]], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, (line, p.stderr)
        if args[0] == "ls":
            assert all(k in p.stdout for k in keys), p.stdout
    assert sha256(tmp_path / "tiny.onnxzip") == sha256(docroot / "model.onnxzip")


def test_messages_through_the_redirect_name_no_signature(site):
    """A CDN that refuses the signed URL (403): NetworkError naming the
    resolve URL and the redirect, never the signature."""
    _, _, _, hub = site
    hub.reset()
    with pytest.raises(onnxzip.NetworkError) as e:
        onnxzip.open_url(hub.url("forbidden", "model.onnxzip"), allow_http=True, retries=0)
    text = str(e.value)
    sigs = [r.query for r in hub.requests("cdn") if r.query]
    assert "/forbidden/repo/resolve/main/model.onnxzip" in text and "403" in text, text
    assert sigs and not any(s in text for s in sigs) and "Signature" not in text and "?" not in text, text


@pytest.fixture
def no_hf_env(monkeypatch, tmp_path):
    """None of the user's Hugging Face settings; HF_HOME an empty directory."""
    for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_ENDPOINT", "HF_HUB_DISABLE_IMPLICIT_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return monkeypatch


def open_private(hub, docroot, token, org="private"):
    """open_url() of ORG's model.onnxzip with `token`: its arrays equal the
    local file's; the token went to the Hub with every request there and
    never to the CDN."""
    hub.reset()
    with onnxzip.open_url(hub.url(org, "model.onnxzip"), token=token, allow_http=True) as a, \
            onnxzip.open(docroot / "model.onnxzip") as loc:
        assert a.tensor_infos == loc.tensor_infos
        assert all(np.array_equal(a.tensors[t.key], loc.tensors[t.key]) for t in loc.tensor_infos)
        assert a.stats.redirects == 1
    hubs, cdn = hub.requests("hub"), hub.requests("cdn")
    assert [r.authorization for r in hubs] == [f"Bearer {hub.token}"], hubs
    assert cdn and all(r.authorization is None and r.status == 206 for r in cdn), cdn


def refused(hub, token, *says, org="private"):
    """open_url() refused with NetworkError saying each of `says`, never
    showing a token."""
    with pytest.raises(onnxzip.NetworkError) as e:
        onnxzip.open_url(hub.url(org, "model.onnxzip"), token=token, allow_http=True, retries=0)
    text = str(e.value)
    assert all(s in text for s in says), text
    assert hub.token not in text and "hf_wrongToken" not in text, text
    assert all(r.authorization is None for r in hub.requests("cdn"))
    return text


def test_open_url_token_explicit(site, no_hf_env):
    """token="...": sent to the Hub (private and gated repositories open),
    never to the CDN; False: none; a wrong one: refused, saying so."""
    _, docroot, _, hub = site
    open_private(hub, docroot, hub.token)
    open_private(hub, docroot, hub.token, org="gated")
    refused(hub, None, "401", "RepoNotFound", "no token was sent")  # not a Hub URL: no token looked for
    refused(hub, False, "401", "RepoNotFound", "none was to be sent")
    refused(hub, False, "401", "GatedRepo", "Please log in", org="gated")
    refused(hub, "hf_wrongToken42", "401", "Invalid credentials", "the token given was refused")
    refused(hub, "hf_wrongToken42", "403", "GatedRepo", "not in the authorized list", "was refused", org="gated")


def test_open_url_token_default_is_the_hf_token(site, no_hf_env, tmp_path):
    """token=None: for URLs on HF_ENDPOINT's origin, HF_TOKEN, else
    HF_TOKEN_PATH, else $HF_HOME/token, as huggingface_hub reads them; none
    with HF_HUB_DISABLE_IMPLICIT_TOKEN, none for other origins."""
    _, docroot, _, hub = site
    no_hf_env.setenv("HF_TOKEN", hub.token)
    refused(hub, None, "no token was sent")  # HF_ENDPOINT unset: 127.0.0.1 is no Hub
    no_hf_env.setenv("HF_ENDPOINT", hub.base_url)
    open_private(hub, docroot, None)
    refused(hub, False, "none was to be sent")
    no_hf_env.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
    refused(hub, None, "HF_HUB_DISABLE_IMPLICIT_TOKEN is set")
    no_hf_env.delenv("HF_HUB_DISABLE_IMPLICIT_TOKEN")
    no_hf_env.setenv("HF_TOKEN", "hf_wrongToken42")
    refused(hub, None, "the token from $HF_TOKEN was refused")
    open_private(hub, docroot, hub.token)  # an explicit token first
    no_hf_env.delenv("HF_TOKEN")
    refused(hub, None, "set HF_TOKEN or run `hf auth login`", org="gated")
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "token").write_text(f"  {hub.token}\n")  # as `hf auth login` leaves it, give or take spaces
    open_private(hub, docroot, None)
    (tmp_path / "other").write_text("hf_wrongToken42")
    no_hf_env.setenv("HF_TOKEN_PATH", str(tmp_path / "other"))
    refused(hub, None, f"the token from {tmp_path / 'other'} was refused")


def test_fetch_token(site, no_hf_env, tmp_path):
    _, docroot, _, hub = site
    url, out = hub.url("private", "model.onnxzip"), tmp_path / "m.onnxzip"
    hub.reset()
    onnxzip.fetch(url, out, token=hub.token, allow_http=True)
    assert sha256(out) == sha256(docroot / "model.onnxzip")
    assert all(r.authorization is None for r in hub.requests("cdn")) and hub.requests("cdn")
    with pytest.raises(onnxzip.NetworkError, match="none was to be sent"):
        onnxzip.fetch(url, tmp_path / "none.onnxzip", token=False, allow_http=True)
    assert sorted(os.listdir(tmp_path)) == ["m.onnxzip"]


@pytest.mark.parametrize("token, error", [(True, TypeError), (1, TypeError), (b"hf_x", TypeError),
                                          ("hf_a\nb", ValueError), ("hf_a\rb", ValueError), ("hf\0", ValueError),
                                          ("", ValueError), ("hf a", onnxzip.InvalidArgumentError),
                                          ("hf_\u00e9", onnxzip.InvalidArgumentError)])
def test_open_url_bad_token(site, token, error):
    """Refused before any request, without showing the token."""
    hub = site[3]
    hub.reset()
    with pytest.raises(error) as e:
        onnxzip.open_url(hub.url("private", "model.onnxzip"), token=token, allow_http=True)
    assert hub.requests() == []
    assert not isinstance(token, str) or len(token) < 3 or token not in str(e.value), str(e.value)
