"""onnxzip.genai_model(): onnxruntime-genai (PyPI, pinned) on a package.

The repositories are tests/packages/make_repos.py's: "genai" (one decoder,
model.onnx + model.onnx.data), "genai_pipeline" (three models that genai
runs in turn: embeddings.onnx, transformer.onnx, lm_head.onnx) and
"genai_vision" (phi3v: vision.onnx, embedding.onnx, decoder.onnx, three
sessions), with a byte-level BPE tokenizer made by the `tokenizers`
package; each is packed by the `onnxzip` command. The oracle is onnxruntime-genai's own loader on
the folder, ``og.Model(folder)``: the same greedy token ids, the same
tokenizer encodings and decodings. Also: only plain files are written (no
model, no weights), the archive is what ONNX Runtime maps, the cache is
reused without writing, processes racing on an empty cache all succeed,
errors name the archive and the path, a cache that cannot be used says
why and the way out (run as user nobody: root passes every permission
check), and a package downloaded by huggingface_hub from the local Hub runs
the same.

Skipped where onnxruntime_genai or tokenizers is not importable (Debian's
python; the pinned venv, tests/python/requirements.txt, runs these).
"""
import importlib.util
import json
import os
import pathlib
import pwd
import shutil
import subprocess
import sys
import tempfile

import pytest

import onnxzip
from _helpers import REPO, cli

sys.path.insert(0, str(REPO / "tests" / "packages"))
sys.path.insert(0, str(REPO / "tests" / "remote"))

for _needed in ("onnxruntime_genai", "tokenizers"):
    if importlib.util.find_spec(_needed) is None:
        pytest.skip(f"{_needed} is not importable by this interpreter (the pinned venv has it)",
                    allow_module_level=True)

import make_repos  # noqa: E402
import onnxruntime_genai as og  # noqa: E402

PROMPTS = ["The tokenizer and", "ONNX models are shipped", "the lazy dog"]
MAX_LENGTH = 40
KINDS = ["genai", "genai_pipeline", "genai_vision"]
# What the test's child processes run: genai_model(PKG, cache_dir=CACHE), then greedy generation.
CHILD = """
import json, sys
import onnxruntime_genai as og
import onnxzip
m = onnxzip.genai_model(sys.argv[1], cache_dir=sys.argv[2])
tok = og.Tokenizer(m)
p = og.GeneratorParams(m)
p.set_search_options(do_sample=False, max_length=%d)
g = og.Generator(m, p)
g.append_tokens(tok.encode(sys.argv[3]))
while not g.is_done():
    g.generate_next_token()
print(json.dumps([int(t) for t in g.get_sequence(0)]))
""" % MAX_LENGTH


def generate(model, prompt):
    """Greedy token ids (prompt included) up to MAX_LENGTH."""
    tok = og.Tokenizer(model)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=MAX_LENGTH)
    gen = og.Generator(model, params)
    gen.append_tokens(tok.encode(prompt))
    while not gen.is_done():
        gen.generate_next_token()
    return [int(t) for t in gen.get_sequence(0)]


def tokenizer_results(model):
    tok = og.Tokenizer(model)
    encoded = [[int(t) for t in tok.encode(p)] for p in PROMPTS]
    return encoded, [tok.decode(ids) for ids in encoded]


def tree(root):
    """relative path -> (size, mtime_ns, inode) of every file under root."""
    root = pathlib.Path(root)
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ino)
            for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module", params=KINDS)
def repo(request, tmp_path_factory, onnxzip_cli):
    """(kind, folder, package) of one generated repository."""
    root = tmp_path_factory.mktemp(request.param)
    folder = make_repos.make(request.param, root / "folder")
    pkg = root / "repo.onnxzip"
    p = cli(onnxzip_cli, "pack", folder, "-o", pkg)
    assert p.returncode == 0, p.stderr
    return request.param, folder, pkg


def test_same_tokens_as_the_folder(repo, tmp_path):
    kind, folder, pkg = repo
    want = og.Model(str(folder))
    got = onnxzip.genai_model(pkg, cache_dir=tmp_path / "cache")
    assert isinstance(got, og.Model)
    for prompt in PROMPTS:
        expected = generate(want, prompt)
        assert len(expected) == MAX_LENGTH
        assert generate(got, prompt) == expected, (kind, prompt)
    assert tokenizer_results(got) == tokenizer_results(want)


def test_only_plain_files_written(repo, tmp_path):
    """The cache entry holds the package's files, genai_config.json with
    one session option more (the archive's folder): no model, no weights."""
    kind, folder, pkg = repo
    cache = tmp_path / "cache"
    onnxzip.genai_model(pkg, cache_dir=cache)
    entry, = cache.iterdir()
    written = {p.relative_to(entry).as_posix(): p.read_bytes() for p in entry.rglob("*") if p.is_file()}
    with onnxzip.open(pkg) as a:
        assert set(written) == set(a.files)
        assert not set(written) & set(a.models)
    original = (folder / "genai_config.json").read_bytes()
    for path, data in written.items():
        if path != "genai_config.json":
            assert data == (folder / path).read_bytes(), path
    config, base = json.loads(written["genai_config.json"]), json.loads(original)
    options = config["model"]["decoder"].pop("session_options")
    assert options == {**base["model"]["decoder"].pop("session_options"),
                       "session.model_external_initializers_file_folder_path": os.path.relpath(pkg.parent, entry)}
    assert config == base
    assert sum(len(d) for d in written.values()) < 32 * 1024 < os.path.getsize(pkg)


@pytest.mark.parametrize("prepack,option", [(False, "1"), (True, "0")])
def test_prepack(repo, tmp_path, prepack, option):
    """prepack= sets session.disable_prepacking in every session's options
    (one entry per setting); the tokens stay the folder's (fp32 MatMul)."""
    kind, folder, pkg = repo
    cache = tmp_path / "cache"
    model = onnxzip.genai_model(pkg, cache_dir=cache, prepack=prepack)
    entry, = cache.iterdir()
    config = json.loads((entry / "genai_config.json").read_text())
    assert config["model"]["decoder"]["session_options"]["session.disable_prepacking"] == option
    assert generate(model, PROMPTS[0]) == generate(og.Model(str(folder)), PROMPTS[0])
    onnxzip.genai_model(pkg, cache_dir=cache)
    assert len(list(cache.iterdir())) == 2


def test_the_archive_is_what_ort_maps(repo, tmp_path):
    """The weights come from the archive file (ONNX Runtime maps it), and
    genai still runs with the folder's model files gone."""
    kind, folder, pkg = repo
    alone = tmp_path / "alone.onnxzip"
    shutil.copy(pkg, alone)
    model = onnxzip.genai_model(alone, cache_dir=tmp_path / "cache")
    with open("/proc/self/maps") as f:
        assert str(alone) in f.read()
    assert generate(model, PROMPTS[0]) == generate(og.Model(str(folder)), PROMPTS[0])


def test_cache_reused_without_writing(repo, tmp_path):
    kind, folder, pkg = repo
    cache = tmp_path / "cache"
    first = generate(onnxzip.genai_model(pkg, cache_dir=cache), PROMPTS[1])
    before = tree(cache)
    assert len([p for p in before if "/" not in p]) == 1, before
    second = generate(onnxzip.genai_model(pkg, cache_dir=cache), PROMPTS[1])
    assert tree(cache) == before   # same files, sizes, mtimes and inodes: nothing written
    assert second == first


def test_damaged_entry_written_again(tmp_path, onnxzip_cli):
    folder = make_repos.make("genai", tmp_path / "folder")
    pkg = tmp_path / "repo.onnxzip"
    assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
    cache = tmp_path / "cache"
    onnxzip.genai_model(pkg, cache_dir=cache)
    entry, = cache.iterdir()
    (entry / "tokenizer.json").write_bytes(b"{")
    model = onnxzip.genai_model(pkg, cache_dir=cache)
    assert [p.name for p in cache.iterdir()] == [entry.name]
    assert (entry / "tokenizer.json").read_bytes() == (folder / "tokenizer.json").read_bytes()
    assert tokenizer_results(model) == tokenizer_results(og.Model(str(folder)))


def test_processes_racing_on_an_empty_cache(repo, tmp_path):
    """Four interpreters call genai_model() at once on the same empty cache:
    each succeeds with the folder's tokens; one entry, no temporary left."""
    kind, folder, pkg = repo
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(pkg), str(cache), PROMPTS[i % 3]],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for i in range(4)]
    results = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
    want = og.Model(str(folder))
    assert [json.loads(out) for out, _ in results] == [generate(want, PROMPTS[i % 3]) for i in range(4)]
    assert len(list(cache.iterdir())) == 1, list(cache.iterdir())


def test_model_chooses_one_of_two_genai_folders(tmp_path, onnxzip_cli):
    """A package of two genai folders: model= picks one (by folder, by a
    path in it); without it, a ValueError listing both."""
    root = tmp_path / "repo"
    for kind in ("genai", "genai_pipeline"):
        make_repos.make(kind, root / kind)
    pkg = tmp_path / "two.onnxzip"
    assert cli(onnxzip_cli, "pack", root, "-o", pkg).returncode == 0
    with pytest.raises(ValueError, match=r"2 genai_config\.json files \(genai/genai_config\.json, "
                                         r"genai_pipeline/genai_config\.json\): choose one with model="):
        onnxzip.genai_model(pkg, cache_dir=tmp_path / "cache")
    for kind, choice in (("genai", "genai"), ("genai_pipeline", "genai_pipeline/lm_head.onnx")):
        got = onnxzip.genai_model(pkg, model=choice, cache_dir=tmp_path / "cache")
        assert generate(got, PROMPTS[2]) == generate(og.Model(str(root / kind)), PROMPTS[2])
    with pytest.raises(FileNotFoundError, match=f"{pkg}: no genai_config.json for model 'other'"):
        onnxzip.genai_model(pkg, model="other", cache_dir=tmp_path / "cache")


def test_no_genai_config(tmp_path, onnxzip_cli):
    folder = make_repos.make("transformers_js", tmp_path / "folder")
    pkg = tmp_path / "tjs.onnxzip"
    assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
    with pytest.raises(FileNotFoundError, match=f"^{pkg}: no genai_config.json: a package without an "
                                                 "onnxruntime-genai folder$") as e:
        onnxzip.genai_model(pkg, cache_dir=tmp_path / "cache")
    assert isinstance(e.value, onnxzip.NotFoundError) and e.value.path == str(pkg)
    single = tmp_path / "single.onnxzip"
    assert cli(onnxzip_cli, "pack", folder / "onnx" / "model.onnx", "-o", single).returncode == 0
    with pytest.raises(FileNotFoundError, match=f"^{single}: no genai_config.json: not a package"):
        onnxzip.genai_model(single, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("where", ["decoder", "pipeline"])
def test_config_names_a_missing_model(tmp_path, onnxzip_cli, where):
    kind = "genai" if where == "decoder" else "genai_pipeline"
    folder = make_repos.make(kind, tmp_path / "folder")
    config = json.loads((folder / "genai_config.json").read_text())
    if where == "decoder":
        config["model"]["decoder"]["filename"] = "missing.onnx"
        field = "model.decoder.filename"
    else:
        config["model"]["decoder"]["pipeline"][1]["transformer"]["filename"] = "missing.onnx"
        field = r"model.decoder.pipeline\[1\].transformer.filename"
    (folder / "genai_config.json").write_text(json.dumps(config))
    pkg = tmp_path / "repo.onnxzip"
    assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
    with pytest.raises(ValueError, match=f"^{pkg}: genai_config.json: {field} names 'missing.onnx', a model the "
                                         r"package lacks \(its models: "):
        onnxzip.genai_model(pkg, cache_dir=tmp_path / "cache")


def test_config_names_no_model(tmp_path, onnxzip_cli):
    folder = make_repos.make("genai", tmp_path / "folder")
    config = json.loads((folder / "genai_config.json").read_text())
    del config["model"]["decoder"]["filename"]
    (folder / "genai_config.json").write_text(json.dumps(config))
    pkg = tmp_path / "repo.onnxzip"
    assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
    with pytest.raises(ValueError, match=f"^{pkg}: genai_config.json names no model"):
        onnxzip.genai_model(pkg, cache_dir=tmp_path / "cache")


def test_without_onnxruntime_genai(tmp_path):
    code = ("import sys\nsys.modules['onnxruntime_genai'] = None\nimport onnxzip\n"
            "try:\n    onnxzip.genai_model(sys.argv[1])\nexcept ImportError as e:\n    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.onnxzip")], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)), timeout=60)
    assert p.returncode == 0 and p.stdout == ("onnxzip.genai_model() needs onnxruntime-genai: pip install "
                                              "onnxruntime-genai\n"), (p.stdout, p.stderr)


def test_arguments(tmp_path):
    with pytest.raises(TypeError, match="prepack must be None or a bool"):
        onnxzip.genai_model(tmp_path / "x.onnxzip", prepack=1)
    with pytest.raises(FileNotFoundError, match="x.onnxzip"):
        onnxzip.genai_model(tmp_path / "x.onnxzip", cache_dir=tmp_path / "cache")


def test_default_cache_dir(tmp_path, monkeypatch, repo):
    """$XDG_CACHE_HOME/onnxzip/genai, or ~/.cache/onnxzip/genai."""
    from onnxzip._genai import default_cache_dir
    kind, folder, pkg = repo
    monkeypatch.delenv("ONNXZIP_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_cache_dir() == str(tmp_path / "home" / ".cache" / "onnxzip" / "genai")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    onnxzip.genai_model(pkg)
    assert len(list((tmp_path / "xdg" / "onnxzip" / "genai").iterdir())) == 1
    assert not (tmp_path / "home").exists()


def test_losing_the_race_uses_the_winners_entry(tmp_path, onnxzip_cli, monkeypatch):
    """Another process writes the entry while this one fills its temporary
    directory: the rename fails, the winner's entry is used, the temporary
    directory removed."""
    import onnxzip._genai as genai
    folder = make_repos.make("genai", tmp_path / "folder")
    pkg = tmp_path / "repo.onnxzip"
    assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
    cache = tmp_path / "cache"
    fill = genai._fill
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))

    def the_other_process_first(directory, files):
        p = subprocess.run([sys.executable, "-c", CHILD, str(pkg), str(cache), PROMPTS[0]], capture_output=True,
                           text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        fill(directory, files)
    monkeypatch.setattr(genai, "_fill", the_other_process_first)
    model = onnxzip.genai_model(pkg, cache_dir=cache)
    entry, = cache.iterdir()
    assert not entry.name.startswith(".")
    assert generate(model, PROMPTS[0]) == generate(og.Model(str(folder)), PROMPTS[0])


# -- a cache that cannot be used (issue 35, point 5) ------------------------------

# What a child running as another user prints: the tokens of PROMPTS[0], or the error's classes and message.
USER_CHILD = """
import json, sys
import onnxruntime_genai as og
import onnxzip
try:
    m = onnxzip.genai_model(sys.argv[1], **({"cache_dir": sys.argv[2]} if len(sys.argv) > 2 else {}))
except Exception as e:
    print(json.dumps({"error": str(e), "PermissionError": isinstance(e, PermissionError),
                      "onnxzip.Error": isinstance(e, onnxzip.Error)}))
else:
    tok = og.Tokenizer(m)
    p = og.GeneratorParams(m)
    p.set_search_options(do_sample=False, max_length=%d)
    g = og.Generator(m, p)
    g.append_tokens(tok.encode(%r))
    while not g.is_done():
        g.generate_next_token()
    print(json.dumps({"tokens": [int(t) for t in g.get_sequence(0)]}))
""" % (MAX_LENGTH, PROMPTS[0])
NOBODY = pwd.getpwnam("nobody")
ROOT = os.geteuid() == 0
WAY_OUT = ("pass genai_model() a cache_dir= that this user can write, or set ONNXZIP_CACHE_DIR (the cache is then "
           "$ONNXZIP_CACHE_DIR/genai)")
needs_root = pytest.mark.skipif(not ROOT, reason="another user's cache is made by root (chown), which these tests "
                                                 "are not running as")


def as_user(*args, home="/nonexistent", **env):
    """USER_CHILD's JSON, run with ``args`` as user nobody when the tests
    run as root (root passes every permission check), else as this user;
    its environment without ONNXZIP_CACHE_DIR and XDG_CACHE_HOME, plus ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in ("ONNXZIP_CACHE_DIR", "XDG_CACHE_HOME")}
    drop = dict(user=NOBODY.pw_uid, group=NOBODY.pw_gid, extra_groups=[]) if ROOT else {}
    p = subprocess.run([sys.executable, "-c", USER_CHILD, *map(str, args)], capture_output=True, text=True,
                       env=dict(base, PYTHONPATH=os.pathsep.join(sys.path), HOME=str(home), **env), timeout=120,
                       **drop)
    assert p.returncode == 0, p.stderr  # as nobody: the interpreter and build tree must be readable by others
    return json.loads(p.stdout)


def owned(path, mode):
    """``path`` made a directory of the user as_user() runs as, of ``mode``."""
    path.mkdir()
    if ROOT:
        os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)
    path.chmod(mode)
    return path


@pytest.fixture(scope="module")
def open_pkg(onnxzip_cli):
    """(folder, package, directory): the genai repository packed in a
    directory of the system's temporary directory that every user can read
    (pytest's tmp_path is its user's only); also where the tests put the
    caches."""
    root = pathlib.Path(tempfile.mkdtemp(prefix="onnxzip-genai-cache-"))
    try:
        root.chmod(0o755)
        folder = make_repos.make("genai", root / "folder")
        pkg = root / "repo.onnxzip"
        assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
        pkg.chmod(0o644)
        yield folder, pkg, root
    finally:
        for d, _, _ in os.walk(root):  # the read-only directories of the tests, made removable again
            os.chmod(d, 0o755)
        shutil.rmtree(root)


def folder_tokens(folder):
    return generate(og.Model(str(folder)), PROMPTS[0])


def test_read_only_cache_dir(open_pkg, request):
    folder, pkg, root = open_pkg
    cache = owned(root / request.node.name, 0o555)
    got = as_user(pkg, cache)
    assert got == {"error": f"{pkg}: cannot write this package's plain files (genai_config.json, tokenizer files) "
                            f"into the genai cache directory {cache} (Permission denied): {WAY_OUT}",
                   "PermissionError": True, "onnxzip.Error": True}
    assert list(cache.iterdir()) == []


def test_complete_entry_in_read_only_cache_keeps_working(open_pkg, request):
    folder, pkg, root = open_pkg
    cache = owned(root / request.node.name, 0o755)
    want = {"tokens": folder_tokens(folder)}
    assert as_user(pkg, cache) == want
    cache.chmod(0o555)
    before = tree(cache)
    assert as_user(pkg, cache) == want
    assert tree(cache) == before


def test_read_only_home(open_pkg, request):
    """The default cache directory under a HOME the user cannot write; the
    way out the message names (ONNXZIP_CACHE_DIR) then works."""
    folder, pkg, root = open_pkg
    home = owned(root / request.node.name, 0o555)
    default = home / ".cache" / "onnxzip" / "genai"
    assert as_user(pkg, home=home) == {
        "error": f"{pkg}: cannot write this package's plain files (genai_config.json, tokenizer files) into the "
                 f"genai cache directory {default} (Permission denied: {home / '.cache'}): {WAY_OUT}",
        "PermissionError": True, "onnxzip.Error": True}
    elsewhere = owned(root / (request.node.name + "-own"), 0o755)
    assert as_user(pkg, home=home, ONNXZIP_CACHE_DIR=str(elsewhere)) == {"tokens": folder_tokens(folder)}
    assert len(list((elsewhere / "genai").iterdir())) == 1


@needs_root
@pytest.mark.parametrize("mode", [0o1777, 0o777], ids=["sticky", "shared"])
def test_entry_of_another_user(open_pkg, request, mode):
    """A cache directory every user writes (as /tmp: sticky, or not)
    holding this package's entry written by root (entries are their
    writer's only: mkdtemp's mode 0700): nobody is told whose it is, and it
    is left as it is (not taken for a damaged one)."""
    folder, pkg, root = open_pkg
    cache = root / request.node.name
    cache.mkdir()
    cache.chmod(mode)
    onnxzip.genai_model(pkg, cache_dir=cache)
    entry, = cache.iterdir()
    before = tree(cache)
    got = as_user(pkg, cache)
    assert got == {"error": f"{pkg}: the genai cache entry {entry} for this package was written by user root (uid 0), "
                            f"and this user cannot use or replace it (Permission denied): {WAY_OUT}",
                   "PermissionError": True, "onnxzip.Error": True}
    assert tree(cache) == before


@needs_root
def test_cache_dir_of_another_user(open_pkg, request):
    """root's cache directory of mode 0700: the message says whose it is."""
    folder, pkg, root = open_pkg
    cache = root / request.node.name
    cache.mkdir(mode=0o700)
    got = as_user(pkg, cache)
    assert got == {"error": f"{pkg}: cannot write this package's plain files (genai_config.json, tokenizer files) "
                            f"into the genai cache directory {cache} (Permission denied; it belongs to user root "
                            f"(uid 0)): {WAY_OUT}", "PermissionError": True, "onnxzip.Error": True}


def test_tokenizer_reads_the_entry(tmp_path, onnxzip_cli):
    """og.Tokenizer(model) reads the tokenizer files from the cache entry
    when it is made (README: keep the entry while tokenizers are made); a
    tokenizer made before the entry is deleted keeps working."""
    folder = make_repos.make("genai", tmp_path / "folder")
    pkg = tmp_path / "repo.onnxzip"
    assert cli(onnxzip_cli, "pack", folder, "-o", pkg).returncode == 0
    cache = tmp_path / "cache"
    model = onnxzip.genai_model(pkg, cache_dir=cache)
    made = og.Tokenizer(model)
    entry, = cache.iterdir()
    shutil.rmtree(entry)
    with pytest.raises(RuntimeError, match=f"Cannot find the directory of {entry}"):
        og.Tokenizer(model)
    want = og.Tokenizer(og.Model(str(folder)))
    assert [int(t) for t in made.encode(PROMPTS[0])] == [int(t) for t in want.encode(PROMPTS[0])]


@pytest.fixture(scope="module")
def hub(tmp_path_factory, onnxzip_cli):
    """(folder, local Hub): the local Hub (tests/remote/hub.py: nginx behind
    a redirector, as huggingface.co) serving a packed genai repository."""
    from hub import HubRedirector
    from servers import NGINX, Nginx
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no origin for the local Hub")
    root = tmp_path_factory.mktemp("genai-hub")
    folder = make_repos.make("genai", root / "folder")
    (root / "www").mkdir()
    assert cli(onnxzip_cli, "pack", folder, "-o", root / "www" / "model.onnxzip").returncode == 0
    with Nginx(str(root / "www")) as ng, HubRedirector(str(root / "www"), ng.url("files")) as redirector:
        yield folder, redirector


def test_hf_hub_download_then_genai_model(hub, tmp_path):
    """hf_hub_download returns a link into the Hub cache's blobs: the views
    name the blob, the cache entry's folder option points there."""
    from test_hf_hub import hf_download
    folder, redirector = hub
    (path, _), = hf_download(redirector, tmp_path, "model.onnxzip")
    assert os.path.islink(path)
    model = onnxzip.genai_model(path, cache_dir=tmp_path / "cache")
    want = og.Model(str(folder))
    assert [generate(model, p) for p in PROMPTS] == [generate(want, p) for p in PROMPTS]
    assert tokenizer_results(model) == tokenizer_results(want)
