"""Packages (format 1.2, spec section 19; issue 29): `onnxzip pack DIR` of
repository folders laid out as transformers.js, encoder-decoder (Optimum),
onnxruntime-genai and diffusers repositories (make_repos.py), each package
checked by readers that share no code with onnxzip:

* Python's zipfile and a local-header walk: every entry STORED, the names of
  spec 19.1/19.2, files, tensors, models, manifest in that order, `__PACKAGE`
  last, every tensor entry's data at a multiple of 64, every digest record
  of generation 2 with the XXH3-64 of libxxhash; every file entry the file's
  bytes; the manifest listing exactly the folder's models (with their data
  files) and plain files, and where each tensor was in them; equal payloads
  of one directory stored once (the tensor bytes are the folder's minus
  make_repos.shared_bytes(kind)), the package smaller than the folder by
  those bytes less what a package adds (zip structure, manifest, references);
* Info-ZIP's `unzip -t`, and `unzip` into a folder where every model passes
  onnx.checker (full check) and ONNX Runtime computes the original's outputs
  bit for bit (spec 19.7);
* the CLI: ls (text and JSON, and --model), verify, unpack (the folder back:
  plain files and data files byte for byte under their original names,
  models equal in every tensor and output; here the whole folder byte for
  byte), unpack --model, extract --file, view --model (ONNX Runtime on the
  view), pack --default-model, repack;
* the CLI of format 1.1 (commit d9f55d9, built from git history): refuses
  every package with "was written for onnxzip format 2", and reads the
  single-model archives of today's CLI, which writes them byte for byte as it
  did.

Also: a folder of one model is still a package; a Hugging Face cache snapshot
(links into blobs/) packs as its folder; a data file shared by two models.
"""
import json
import posixpath
import re
import struct
import subprocess
import zipfile
from dataclasses import dataclass

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

import make_repos
from helpers import FORMAT2_MESSAGE, assert_same_outputs, ok, outputs, run, text, tree

MANIFEST = "__PACKAGE"
THRESHOLD = 1024                  # pack's default --size-threshold: smaller payloads stay inline
TENSOR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
FILLER = re.compile(r"__PAD_(0|[1-9][0-9]*)\Z")
EXTRA_DIGEST = 0x5A4F


# ---- the folder, as the ONNX external-data rules read it -----------------------------

def model_tensors(proto):
    """Every TensorProto of a model: initializers and node attributes, recursively."""
    def graph(g):
        for n in g.node:
            for a in n.attribute:
                if a.HasField("t"):
                    yield a.t
                yield from a.tensors
                if a.HasField("g"):
                    yield from graph(a.g)
                for sub in a.graphs:
                    yield from graph(sub)
        yield from g.initializer
    yield from graph(proto.graph)


def ext(t):
    return {e.key: e.value for e in t.external_data}


@dataclass
class Folder:
    models: list              # repository paths of the .onnx files
    data: dict                # model path -> its data files' repository paths, in order of first use
    files: list               # every other file


def classify(root):
    models = make_repos.model_paths(root)
    data = {}
    for m in models:
        proto = onnx.load(str(root / m), load_external_data=False)
        locs = []
        for t in model_tensors(proto):
            if t.data_location == TensorProto.EXTERNAL:
                p = posixpath.normpath(posixpath.join(posixpath.dirname(m), ext(t)["location"]))
                if p not in locs:
                    locs.append(p)
        data[m] = locs
    used = set(models) | {p for locs in data.values() for p in locs}
    return Folder(models, data, sorted(set(tree(root)) - used))


def payloads(root, model):
    """[(bytes, tensor name)] of every payload the package stores in an entry:
    those of THRESHOLD bytes or more, and every one that was external data
    in the folder (kept external so that unpack gives the data files back)."""
    refs = onnx.load(str(root / model), load_external_data=False)
    proto = onnx.load(str(root / model))          # external data loaded by onnx
    return [(t.raw_data, t.name) for r, t in zip(model_tensors(refs), model_tensors(proto))
            if len(t.raw_data) >= THRESHOLD or r.data_location == TensorProto.EXTERNAL]


def folder_size(root):
    return sum(len(b) for b in tree(root).values())


# ---- the package, as zipfile and the local headers show it ----------------------------

def data_offset(f, info):
    """Offset of the entry's data, from its local header (30 bytes + name + extra)."""
    f.seek(info.header_offset)
    sig, = struct.unpack("<I", f.read(4))
    assert sig == 0x04034B50, f"{info.filename}: no local header at {info.header_offset}"
    f.seek(info.header_offset + 26)
    n, m = struct.unpack("<HH", f.read(4))
    return info.header_offset + 30 + n + m


def extras(raw):
    out, pos = {}, 0
    while pos + 4 <= len(raw):
        hid, size = struct.unpack_from("<HH", raw, pos)
        out[hid] = raw[pos + 4:pos + 4 + size]
        pos += 4 + size
    return out


def parse_manifest(data):
    lines = data.decode("utf-8").split("\n")
    assert lines[-1] == "", "the manifest does not end in LF"
    fields = [ln.split("\t") for ln in lines[:-1]]
    m = {"head": fields[0], "default": None, "models": {}, "files": [], "origin": {}}
    for f in fields[1:]:
        if f[0] == "default":
            m["default"] = f[1]
        elif f[0] == "model":
            m["models"][f[1]] = f[2:]
        elif f[0] == "file":
            m["files"].append(f[1])
        elif f[0] == "origin":
            m["origin"][f[1]] = f[2]
    return m


@dataclass
class Packed:
    kind: str
    root: object              # the repository folder
    pkg: object               # the package
    base: object              # the test's own directory
    folder: Folder


@pytest.fixture(scope="module", params=make_repos.KINDS)
def packed(request, tmp_path_factory, onnxzip_cli):
    kind = request.param
    base = tmp_path_factory.mktemp(kind)
    root = make_repos.make(kind, base / "repo")
    (base / "out").mkdir()
    pkg = base / "out" / f"{kind}.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg))
    return Packed(kind, root, pkg, base, classify(root))


def members(packed):
    with zipfile.ZipFile(packed.pkg) as z:
        return z.infolist(), parse_manifest(z.read(MANIFEST))


def default_model(manifest):
    return manifest["default"] or next(iter(manifest["models"]))


# ---- the package itself ----------------------------------------------------------------

def test_pack_leaves_only_the_package(packed):
    assert sorted(p.name for p in packed.pkg.parent.iterdir()) == [packed.pkg.name]


def test_zip_structure(packed):
    import zipbuild                          # libxxhash through ctypes (tests/cli)
    infos, manifest = members(packed)
    names = [i.filename for i in infos]
    assert names[-1] == MANIFEST, f"the last central record is {names[-1]}"
    assert "__MODEL_PROTO" not in names
    assert len({n.lower() for n in names}) == len(names), "names equal after ASCII down-casing"
    models, files = set(manifest["models"]), set(manifest["files"])
    model_dirs = {posixpath.dirname(m) for m in models}
    kinds = {}
    with open(packed.pkg, "rb") as f, zipfile.ZipFile(packed.pkg) as z:
        assert z.testzip() is None
        for i in infos:
            assert i.compress_type == zipfile.ZIP_STORED, f"{i.filename}: method {i.compress_type}"
            assert i.file_size == i.compress_size
            digest = extras(i.extra).get(EXTRA_DIGEST)
            assert digest is not None and len(digest) >= 10, f"{i.filename}: no digest record"
            assert digest[0] == 2, f"{i.filename}: digest record of format {digest[0]}, not 2 (spec 19.1)"
            assert struct.unpack_from("<Q", digest, 2)[0] == zipbuild.xxh3_64(z.read(i)), i.filename
            if i.filename == MANIFEST:
                kinds[i.filename] = 3
                continue
            if FILLER.match(i.filename):
                continue
            # writers align file and model entries as tensor entries (spec 19.1)
            assert data_offset(f, i) % 64 == 0, f"{i.filename}: data at {data_offset(f, i)}"
            if i.filename in models:
                kinds[i.filename] = 2
            elif i.filename in files:
                kinds[i.filename] = 0
            else:                                 # a tensor entry: D + a name of spec 7.1, aligned
                d, _, leaf = i.filename.rpartition("/")
                assert d in model_dirs, f"tensor entry {i.filename} is in no model's directory"
                assert TENSOR_NAME.match(leaf) and not leaf.startswith("__"), i.filename
                kinds[i.filename] = 1
    by_offset = sorted(infos, key=lambda i: i.header_offset)
    assert by_offset[-1].filename == MANIFEST, "the manifest's local header is not the last"
    order = [kinds[i.filename] for i in by_offset if i.filename in kinds]
    assert order == sorted(order), "entries not in the order files, tensors, models, manifest (spec 19.1)"


def test_manifest_lists_the_folder(packed):
    _, manifest = members(packed)
    assert manifest["head"] == ["onnxzip-package", "1.2"]
    assert list(manifest["models"]) == packed.folder.models       # byte order of paths (spec 19.6)
    for m, data in manifest["models"].items():
        want = [posixpath.relpath(p, posixpath.dirname(m) or ".") for p in packed.folder.data[m]]
        assert sorted(data) == sorted(want), (m, data, want)
    assert manifest["files"] == packed.folder.files
    assert default_model(manifest) in manifest["models"]
    assert set(manifest["origin"]) <= set(manifest["models"])


def test_manifest_origins(packed):
    """Each origin item (i:f:o) says where the model's i-th tensor was: at
    offset o of its f-th data file; every external tensor has one (spec 19.4)."""
    _, manifest = members(packed)
    for m, data in manifest["models"].items():
        proto = onnx.load(str(packed.root / m), load_external_data=False)
        want = set()
        for i, t in enumerate(model_tensors(proto)):
            if t.data_location == TensorProto.EXTERNAL:
                e = ext(t)
                want.add((i, data.index(e["location"]), int(e.get("offset", "0"))))
        items = manifest["origin"].get(m, "")
        got = {tuple(int(x) for x in item.split(":")) for item in items.split(",") if item}
        assert got == want, (m, sorted(got), sorted(want))


def test_file_and_model_entries(packed):
    original = tree(packed.root)
    with zipfile.ZipFile(packed.pkg) as z:
        names = set(z.namelist())
        for f in packed.folder.files:
            assert z.read(f) == original[f], f
        for m in packed.folder.models:
            proto = onnx.ModelProto()
            proto.ParseFromString(z.read(m))
            d = posixpath.dirname(m)
            for t in model_tensors(proto):
                if t.data_location == TensorProto.EXTERNAL:
                    loc = ext(t)["location"]
                    assert not loc.startswith("/") and ".." not in loc.split("/"), (m, loc)
                    assert posixpath.join(d, loc) in names, f"{m}: {t.name} references {loc}, no entry"


def test_equal_payloads_stored_once(packed):
    """The tensor entries hold each directory's distinct payloads, once: the
    folder's payloads less exactly the duplicates make_repos put there."""
    infos, manifest = members(packed)
    stored = sum(i.file_size for i in infos if i.filename != MANIFEST and i.filename not in manifest["models"]
                 and i.filename not in manifest["files"])
    every, distinct = 0, set()
    for m in packed.folder.models:
        for raw, _ in payloads(packed.root, m):
            every += len(raw)
            distinct.add((posixpath.dirname(m), raw))
    assert every - sum(len(raw) for _, raw in distinct) == make_repos.shared_bytes(packed.kind)
    assert stored == every - make_repos.shared_bytes(packed.kind), (stored, every)


def test_smaller_than_the_folder_by_the_shared_bytes(packed):
    """The package is smaller than the folder by the shared bytes, less what
    a package adds by construction: its zip structure (headers, alignment,
    directory: at most 320 bytes an entry), its manifest, and a reference
    (location = entry name: at most 64 bytes) for each tensor that was inline
    in the folder's models and is an entry now. Measured here in the package;
    a writer that stored a duplicate twice misses by the duplicate's size."""
    infos, _ = members(packed)
    size, folder = packed.pkg.stat().st_size, folder_size(packed.root)
    structure = size - sum(i.file_size for i in infos)
    manifest = next(i.file_size for i in infos if i.filename == MANIFEST)
    moved = 0
    for m in packed.folder.models:
        proto = onnx.load(str(packed.root / m), load_external_data=False)
        moved += sum(1 for t in model_tensors(proto) if len(t.raw_data) >= THRESHOLD)  # inline, large
    shared = make_repos.shared_bytes(packed.kind)
    print(f"{packed.kind}: folder {folder}, package {size} ({folder - size:+d}), shared {shared}; zip structure "
          f"{structure} ({len(infos)} entries), manifest {manifest}, {moved} inline tensors now entries")
    assert structure <= 320 * len(infos) + 98, (structure, len(infos))
    assert size <= folder - shared + structure + manifest + 64 * moved
    if shared:
        assert size < folder


def test_unzip_t(packed):
    p = subprocess.run(["unzip", "-t", str(packed.pkg)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "No errors detected" in p.stdout


def test_unzipped_folder_runs(packed, ort):
    """unzip gives the folder: plain files as they were, every model valid
    with its tensors in the files beside it (spec 19.7)."""
    out = packed.base / "unzipped"
    p = subprocess.run(["unzip", "-q", str(packed.pkg), "-d", str(out)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    original, got = tree(packed.root), tree(out)
    for f in packed.folder.files:
        assert got.get(f) == original[f], f
    assert MANIFEST in got
    for m in packed.folder.models:
        onnx.checker.check_model(str(out / m), full_check=True)
        feeds = make_repos.sample_inputs(packed.root / m)
        assert_same_outputs(outputs(ort, out / m, feeds), outputs(ort, packed.root / m, feeds), m)


# ---- the CLI -----------------------------------------------------------------------------

def test_verify(packed, onnxzip_cli):
    ok(run(onnxzip_cli, "verify", packed.pkg))


def test_ls_json(packed, onnxzip_cli):
    infos, manifest = members(packed)
    sizes = {i.filename: i.file_size for i in infos}
    listing = json.loads(ok(run(onnxzip_cli, "ls", "--json", packed.pkg)).stdout)
    assert listing["format"] == "1.2"
    assert listing["default_model"] == default_model(manifest)
    assert [(x["path"], x["size"], x["default"]) for x in listing["models"]] == \
        [(m, sizes[m], m == default_model(manifest)) for m in packed.folder.models]
    original = tree(packed.root)
    assert [(x["path"], x["size"]) for x in listing["files"]] == \
        [(f, len(original[f])) for f in packed.folder.files]


def test_ls_text(packed, onnxzip_cli):
    """One line per member with its kind, size and path; the default model marked."""
    infos, manifest = members(packed)
    sizes = {i.filename: i.file_size for i in infos}
    lines = ok(run(onnxzip_cli, "ls", packed.pkg)).stdout.decode().splitlines()
    marked = []
    for kind, paths in (("model", packed.folder.models), ("file", packed.folder.files)):
        for path in paths:
            mine = [ln.split() for ln in lines if ln.split()[:1] in (["model"], ["file"]) and path in ln.split()]
            assert len(mine) == 1, (path, mine)
            assert mine[0][0] == kind and str(sizes[path]) in mine[0], (path, kind, sizes[path], mine[0])
            if any(t.strip("()[]") == "default" or t == "*" for t in mine[0]):
                marked.append(path)
    assert marked == [default_model(manifest)], marked


def counted(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def tensor_bytes(t):
    """The bytes of a TensorProto's data as onnx holds it (external data loaded)."""
    return len(t.raw_data) if t.HasField("raw_data") else len(numpy_helper.to_array(t).tobytes())


def test_ls_each_model(packed, onnxzip_cli):
    """ls PKG (no --model): each model with its tensor count and the bytes
    of its tensors, as onnx counts the TensorProtos of the folder's model
    and their data; the same in the text and in JSON; no tensor count or
    table of tensors (ls holds no model: --model lists one's)."""
    want = {}
    for m in packed.folder.models:
        tensors = list(model_tensors(onnx.load(str(packed.root / m))))
        want[m] = (len(tensors), sum(tensor_bytes(t) for t in tensors))
    listing = json.loads(ok(run(onnxzip_cli, "ls", "--json", packed.pkg)).stdout)
    assert {x["path"]: (x["tensors"], x["tensor_bytes"]) for x in listing["models"]} == want
    assert all("tensors" not in x for x in listing["files"]) and listing["tensors"] == []
    lines = ok(run(onnxzip_cli, "ls", packed.pkg)).stdout.decode().splitlines()
    with zipfile.ZipFile(packed.pkg) as z:
        assert lines[0] == f"{packed.pkg}: onnxzip package, {len(z.infolist())} entries"
    assert lines[1] == (f"package (format 1.2): {counted(len(packed.folder.models), 'model')}, "
                        f"{counted(len(packed.folder.files), 'file')} (onnxzip ls --model PATH lists a model's "
                        "tensors)")
    assert lines[4].split() == ["kind", "size", "tensors", "tensor_bytes", "path"]
    rows = [ln.split() for ln in lines if ln.split()[:1] in (["model"], ["file"])]
    assert {r[4]: (int(r[2]), int(r[3])) for r in rows if r[0] == "model"} == want
    assert [r[4] for r in rows if r[0] == "file"] == packed.folder.files
    assert all(r[2:4] == ["-", "-"] for r in rows if r[0] == "file")
    assert "tensors:" not in lines


def test_messages_count_models_and_files(packed, onnxzip_cli):
    """pack, verify and unpack of a package count its models and files in
    English: "1 model and 5 files" ("a package of 1 models" before)."""
    counts = f"{counted(len(packed.folder.models), 'model')} and {counted(len(packed.folder.files), 'file')}"
    pkg, out = packed.base / "again.onnxzip", packed.base / "counted"
    lines = [text(ok(run(onnxzip_cli, "pack", packed.root, "-o", pkg))),
             text(ok(run(onnxzip_cli, "verify", pkg))),
             text(ok(run(onnxzip_cli, "unpack", pkg, out)))]
    size = pkg.stat().st_size
    with zipfile.ZipFile(pkg) as z:
        entries = len(z.infolist())
    assert lines == [f"packed {packed.root} -> {pkg}: a package of {counts} in {entries} entries, {size} bytes\n",
                     f"OK: {pkg}: a package of {counts}, {entries} entries, every model's references checked, "
                     f"CRC-32 verified, XXH3 verified for {entries} of {entries} entries\n",
                     f"unpacked {pkg} -> {out}: {counts}\n"]


def test_help_names_pack_dir(onnxzip_cli):
    """onnxzip --help: pack takes a folder too (a package), not only a
    classic .onnx model."""
    usage = text(ok(run(onnxzip_cli, "--help")))
    assert "pack DIR: a repository folder (models, tokenizer...) into a package" in usage
    assert "onnxzip pack repo/ -o repo.onnxzip" in usage


def test_ls_model(packed, onnxzip_cli):
    """ls --model M: M's tensors, each entry one of the package's, its data
    where the local header puts it."""
    infos, _ = members(packed)
    by_name = {i.filename: i for i in infos}
    with open(packed.pkg, "rb") as f:
        for m in packed.folder.models:
            listing = json.loads(ok(run(onnxzip_cli, "ls", "--model", m, "--json", packed.pkg)).stdout)
            proto = onnx.load(str(packed.root / m), load_external_data=False)
            assert [t["name"] for t in listing["tensors"]] == [t.name for t in model_tensors(proto)], m
            for t in listing["tensors"]:
                if t["storage"] == "entry":
                    assert posixpath.dirname(t["entry"]) == posixpath.dirname(m), (m, t)
                    assert t["offset"] == data_offset(f, by_name[t["entry"]]), (m, t)


def test_unpack_recreates_the_folder(packed, onnxzip_cli, ort):
    out = packed.base / "unpacked"
    ok(run(onnxzip_cli, "unpack", packed.pkg, out))
    original, got = tree(packed.root), tree(out)
    for f in packed.folder.files:
        assert got.get(f) == original[f], f"{f}: not byte-identical"
    for m in packed.folder.models:
        assert m in got, m
        for d in packed.folder.data[m]:
            # the data files under their names, each tensor at its offset: with
            # no gaps in the original, byte for byte (spec 19.6)
            assert got.get(d) == original[d], f"{m}: data file {d} differs or is missing"
        onnx.checker.check_model(str(out / m), full_check=True)
        want, have = onnx.load(str(packed.root / m)), onnx.load(str(out / m))
        assert [(t.name, numpy_helper.to_array(t).tobytes()) for t in model_tensors(have)] == \
            [(t.name, numpy_helper.to_array(t).tobytes()) for t in model_tensors(want)], m
        feeds = make_repos.sample_inputs(packed.root / m)
        assert_same_outputs(outputs(ort, out / m, feeds), outputs(ort, packed.root / m, feeds), m)
    # Anything more can only be the data files of models packed without any
    # (spec 19.6: they get unpack's --layout)
    extra = set(got) - set(original)
    no_data = [m for m in packed.folder.models if not packed.folder.data[m]]
    allowed = {p for m in no_data for p in classify(out).data[m]}
    assert extra <= allowed, sorted(extra - allowed)


def test_unpack_byte_identical(packed, onnxzip_cli):
    """Beyond spec 19.6's promise (files byte for byte, data files when their
    gaps were zeros, models equal in tensors and outputs): these folders'
    models, as onnx serializes them, come back byte for byte too, so that
    the whole folder does (pack and unpack achieve it since 2593cda)."""
    out = packed.base / "unpacked_again"
    ok(run(onnxzip_cli, "unpack", packed.pkg, out))
    original, got = tree(packed.root), tree(out)
    assert sorted(got) == sorted(original)
    assert [p for p in original if got[p] != original[p]] == []


def test_unpack_one_model(packed, onnxzip_cli, ort):
    for i, m in enumerate(packed.folder.models):
        out = packed.base / f"one{i}" / posixpath.basename(m)
        ok(run(onnxzip_cli, "unpack", "--model", m, packed.pkg, "-o", out))
        onnx.checker.check_model(str(out), full_check=True)
        feeds = make_repos.sample_inputs(packed.root / m)
        assert_same_outputs(outputs(ort, out, feeds), outputs(ort, packed.root / m, feeds), m)


def test_extract_file(packed, onnxzip_cli):
    original = tree(packed.root)
    for i, f in enumerate(packed.folder.files):
        out = packed.base / "extracted" / str(i)
        ok(run(onnxzip_cli, "extract", packed.pkg, "--file", f, "-o", out))
        assert out.read_bytes() == original[f], f
        assert ok(run(onnxzip_cli, "extract", packed.pkg, "--file", f)).stdout == original[f], f


def test_view_runs(packed, onnxzip_cli, ort):
    for i, m in enumerate(packed.folder.models):
        view = packed.pkg.parent / f"view{i}.onnx"
        ok(run(onnxzip_cli, "view", "--model", m, packed.pkg, "-o", view))
        onnx.checker.check_model(str(view), full_check=True)
        feeds = make_repos.sample_inputs(packed.root / m)
        assert_same_outputs(outputs(ort, view, feeds), outputs(ort, packed.root / m, feeds), f"view of {m}")
        view.unlink()


def test_format_11_cli_refuses_the_package(packed, old_cli):
    """Today's release reads no package as a model (spec 19.8)."""
    for cmd in ("ls", "verify"):
        p = run(old_cli, cmd, packed.pkg)
        assert p.returncode == 1 and FORMAT2_MESSAGE in text(p), f"{cmd}: exit {p.returncode}\n{text(p)}"
        assert "ONNXZIP_EUNSUPPORTED" in text(p), text(p)


# ---- options and single models --------------------------------------------------------------

def test_default_model_option(tmp_path, onnxzip_cli, ort):
    root = make_repos.make("transformers_js", tmp_path / "repo")
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg, "--default-model", "onnx/model_fp16.onnx"))
    with zipfile.ZipFile(pkg) as z:
        assert default_model(parse_manifest(z.read(MANIFEST))) == "onnx/model_fp16.onnx"
    listing = json.loads(ok(run(onnxzip_cli, "ls", "--json", pkg)).stdout)
    assert listing["default_model"] == "onnx/model_fp16.onnx"
    assert [m["path"] for m in listing["models"] if m["default"]] == ["onnx/model_fp16.onnx"]
    ok(run(onnxzip_cli, "view", pkg, "-o", tmp_path / "v.onnx"))      # the default model's view
    feeds = make_repos.sample_inputs(root / "onnx/model_fp16.onnx")
    assert_same_outputs(outputs(ort, tmp_path / "v.onnx", feeds),
                        outputs(ort, root / "onnx/model_fp16.onnx", feeds), "default model's view")
    for bad in ("config.json", "onnx/missing.onnx"):
        out = tmp_path / "bad.onnxzip"
        p = run(onnxzip_cli, "pack", root, "-o", out, "--default-model", bad)
        assert p.returncode in (1, 2) and bad in text(p), text(p)
        assert not out.exists()


@pytest.mark.parametrize("kind,model", [("genai", "model.onnx"), ("transformers_js", "onnx/model_q4.onnx"),
                                        ("encoder_decoder", "onnx/decoder_model_merged.onnx")])
def test_single_model_archive_unchanged(tmp_path, onnxzip_cli, old_cli, kind, model):
    """pack of one model writes what format 1.1 wrote, byte for byte, and
    today's reader reads it as the 1.1 reader does (spec 19.8)."""
    root = make_repos.make(kind, tmp_path / "repo")
    new, old = tmp_path / "new.onnxzip", tmp_path / "old.onnxzip"
    ok(run(onnxzip_cli, "pack", root / model, "-o", new))
    ok(run(old_cli, "pack", root / model, "-o", old))
    assert new.read_bytes() == old.read_bytes()
    for cli in (old_cli, onnxzip_cli):
        ok(run(cli, "verify", new))
    assert ok(run(onnxzip_cli, "ls", "--json", new)).stdout == ok(run(old_cli, "ls", "--json", new)).stdout


def test_one_model_folder_is_a_package(tmp_path, onnxzip_cli, ort):
    """pack DIR of a folder holding one model and nothing else still writes a
    package, which keeps the model's path (spec 19.8)."""
    src = make_repos.make("genai", tmp_path / "repo")
    root = tmp_path / "only"
    (root / "sub").mkdir(parents=True)
    for name in ("model.onnx", "model.onnx.data"):
        (root / "sub" / name).write_bytes((src / name).read_bytes())
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg))
    with zipfile.ZipFile(pkg) as z:
        names = z.namelist()
        assert names[-1] == MANIFEST and "sub/model.onnx" in names
        assert list(parse_manifest(z.read(MANIFEST))["models"]) == ["sub/model.onnx"]
    ok(run(onnxzip_cli, "unpack", pkg, tmp_path / "out"))
    assert (tmp_path / "out/sub/model.onnx.data").read_bytes() == (src / "model.onnx.data").read_bytes()
    feeds = make_repos.sample_inputs(src / "model.onnx")
    assert_same_outputs(outputs(ort, tmp_path / "out/sub/model.onnx", feeds),
                        outputs(ort, src / "model.onnx", feeds), "sub/model.onnx")


def test_hugging_face_snapshot(tmp_path, onnxzip_cli):
    """A Hugging Face cache snapshot (snapshots/REV/PATH -> ../../blobs/SHA256,
    one more '../' per subfolder, as huggingface_hub lays it out) packs to the
    very package of the folder it stands for (spec 19.6: links followed)."""
    import hashlib
    root = make_repos.make("transformers_js", tmp_path / "repo")
    cache = tmp_path / "models--tiny--generated"
    snap = cache / "snapshots" / ("0123456789abcdef" * 2 + "01234567")
    for path, data in tree(root).items():
        blob = cache / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snap / path
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(posixpath.relpath(blob, link.parent))
    ok(run(onnxzip_cli, "pack", root, "-o", tmp_path / "folder.onnxzip"))
    ok(run(onnxzip_cli, "pack", snap, "-o", tmp_path / "snapshot.onnxzip"))
    assert (tmp_path / "snapshot.onnxzip").read_bytes() == (tmp_path / "folder.onnxzip").read_bytes()


def test_data_file_shared_by_two_models(tmp_path, onnxzip_cli, ort):
    """Two models whose tensors lie in one data file (b.onnx uses two of
    a.onnx's tensors and one of its own at the end): pack stores each payload
    once, unpack gives the data file back whole and both models their outputs."""
    rng = np.random.default_rng(29)
    root = tmp_path / "repo"
    root.mkdir()
    data = make_repos.DataFiles(root)
    w1, w2, w3 = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(3))
    from onnx import helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    t1, t2 = data.put("w1", w1, "shared.data"), data.put("w2", w2, "shared.data")
    t3 = data.put("w3", w3, "shared.data")
    graphs = {"a.onnx": ([t1, t2], ["w1", "w2"]), "b.onnx": ([t1, t3], ["w1", "w3"])}
    for name, (inits, names) in graphs.items():
        nodes = [helper.make_node("MatMul", ["x", names[0]], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
                 helper.make_node("MatMul", ["r", names[1]], ["y"])]
        make_repos._save(root / name, helper.make_graph(nodes, name[0], [x], [y], inits), data=data)
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg))
    ok(run(onnxzip_cli, "verify", pkg))
    with zipfile.ZipFile(pkg) as z:
        manifest = parse_manifest(z.read(MANIFEST))
        assert manifest["models"] == {"a.onnx": ["shared.data"], "b.onnx": ["shared.data"]}
        assert manifest["files"] == []
        stored = sum(i.file_size for i in z.infolist() if i.filename not in manifest["models"]
                     and i.filename != MANIFEST)
    assert stored == 3 * 64 * 64 * 4, "w1 is stored twice, or a tensor is missing"
    out = tmp_path / "out"
    ok(run(onnxzip_cli, "unpack", pkg, out))
    assert tree(out) == tree(root)
    feeds = {"x": rng.standard_normal((1, 64)).astype(np.float32)}
    for name in graphs:
        assert_same_outputs(outputs(ort, out / name, feeds), outputs(ort, root / name, feeds), name)


def test_repack_keeps_the_package(tmp_path, onnxzip_cli):
    """repack of a package gives it back; so does repack of the same entries
    re-zipped DEFLATED by zipfile (no alignment, no digest records): one
    package, every member as packed (issue 29: 'repack keeps packages whole')."""
    root = make_repos.make("encoder_decoder", tmp_path / "repo")
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg))
    ok(run(onnxzip_cli, "repack", pkg, "-o", tmp_path / "again.onnxzip"))
    assert (tmp_path / "again.onnxzip").read_bytes() == pkg.read_bytes()
    deflated = tmp_path / "deflated.zip"
    with zipfile.ZipFile(pkg) as src, zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as dst:
        for i in src.infolist():
            dst.writestr(i.filename, src.read(i))
    ok(run(onnxzip_cli, "repack", deflated, "-o", tmp_path / "r.onnxzip"))
    ok(run(onnxzip_cli, "verify", tmp_path / "r.onnxzip"))
    ok(run(onnxzip_cli, "unpack", tmp_path / "r.onnxzip", tmp_path / "out"))
    assert tree(tmp_path / "out") == tree(root)


def test_git_and_cache_left_out(tmp_path, onnxzip_cli):
    """.git and .cache at the top of the folder (git's and huggingface_hub's
    bookkeeping: `hf download --local-dir` writes .cache/huggingface/) are
    not packed (spec 19.6 step 1); the same names deeper down are files."""
    root = make_repos.make("genai", tmp_path / "repo")
    plain = tree(root)
    for rel in (".git/HEAD", ".git/objects/ab/cdef", ".cache/huggingface/download/model.onnx.metadata",
                ".cache/huggingface/.gitignore"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("bookkeeping\n")
    (root / "docs" / ".cache").mkdir(parents=True)
    (root / "docs" / ".cache" / "kept.txt").write_text("a file\n")
    plain["docs/.cache/kept.txt"] = b"a file\n"
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg))
    with zipfile.ZipFile(pkg) as z:
        assert not [n for n in z.namelist() if n.startswith((".git/", ".cache/"))]
    ok(run(onnxzip_cli, "unpack", pkg, tmp_path / "out"))
    assert tree(tmp_path / "out") == plain


def test_python_package_names(tmp_path, onnxzip_cli, old_cli):
    """Models shipped inside Python packages (issue 35): a top-level
    __init__.py and __main__.py, a __pycache__ folder, a nested
    __init__.py are ordinary files; only the names the format reserves
    (spec 19.2: "__" and then only letters, digits and '_') are refused
    (test_package_errors.py). zipfile and unzip see the files under their
    names, ls lists them, verify passes, unpack and extract give them back
    byte for byte; the CLI of format 1.1 refuses the package as every
    package (spec 19.8)."""
    root = make_repos.make("genai", tmp_path / "repo")
    files = {"__init__.py": b"from .model import load\n", "__main__.py": b"print('hi')\n",
             "__pycache__/model.cpython-311.pyc": b"\xa7\r\r\n\0\0\0\0", "sub/__init__.py": b""}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", root, "-o", pkg))
    with zipfile.ZipFile(pkg) as z:
        assert {n: z.read(n) for n in files} == files
        assert z.namelist()[-1] == MANIFEST
    listed = json.loads(ok(run(onnxzip_cli, "ls", "--json", pkg)).stdout)
    assert set(files) <= {f["path"] for f in listed["files"]}, listed["files"]
    ok(run(onnxzip_cli, "verify", pkg))
    for rel, data in files.items():
        assert ok(run(onnxzip_cli, "extract", pkg, "--file", rel)).stdout == data, rel
    ok(run(onnxzip_cli, "unpack", pkg, tmp_path / "out"))
    assert tree(tmp_path / "out") == tree(root)
    unzipped = tmp_path / "unzipped"
    ok(subprocess.run(["unzip", "-q", str(pkg), "-d", str(unzipped)], capture_output=True))
    assert {rel: (unzipped / rel).read_bytes() for rel in files} == files
    p = run(old_cli, "ls", pkg)
    assert p.returncode == 1 and FORMAT2_MESSAGE in text(p), text(p)
