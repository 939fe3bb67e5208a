"""Packages (spec 19) from bad input: folders that `onnxzip pack DIR` must
refuse, and packages crafted from a good one (tests/cli/zipbuild.py: every
header, CRC-32 and XXH3 digest rewritten, so that each has exactly the
one defect) that ls, verify and unpack must refuse.

pack DIR (spec 19.6 step 3), each refused with exit status 1, one message
naming the offending path and the status of the spec, no output file and
no temporary file left, the input folder untouched: a model whose external
data is missing; a location with '..', an absolute one, a data file that is
a symbolic link out of the folder; two names equal after case folding, and
after Unicode normalization (NFC/NFD); a non-UTF-8 name; a name the format
reserves at the top (__MODEL_PROTO, __PAD_3, __PACKAGE in lower case,
__FUTURE: "__" and then only letters, digits and '_', spec 19.2), with a
message saying so; a link to a directory; a FIFO (no hang); a folder without
any .onnx; an output inside the folder. (A plain file of 4 GiB or more is
packed since issue 35: tests/cli/pack_big_file.py.)

Readers (spec 19.1, 19.2, 19.4): the manifest not last (in the directory,
in the file), a `model` line naming no entry, a first line that is not the
package header, a tensor entry one byte off its alignment, an entry named
with '..', a manifest of version 2.0: ls and verify exit 1 naming the
problem, unpack writes nothing.
"""
import os
import pathlib
import shutil
import tempfile
import unicodedata

import onnx
import pytest

import make_repos
from helpers import ok, run, snapshot, text

DATA = "model.onnx.data"


@pytest.fixture(scope="module")
def genai(tmp_path_factory):
    """A good onnxruntime-genai folder, copied by each test that changes it."""
    return make_repos.make("genai", tmp_path_factory.mktemp("genai") / "repo")


def relocate(model_path, location):
    """Points every external tensor of the model at `location`."""
    m = onnx.load(str(model_path), load_external_data=False)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = location
    model_path.write_bytes(m.SerializeToString())


def case_missing_data(d, outside, later):
    os.unlink(d / DATA)
    return "ENOTFOUND", DATA


def case_dotdot(d, outside, later):
    shutil.move(d / DATA, outside / "outside.data")
    relocate(d / "model.onnx", "../outside/outside.data")
    return "EPATH", "../outside/outside.data"


def case_absolute(d, outside, later):
    # /tmp/ozXXXXXXXX/o.data: short enough to be quoted whole (messages shorten long locations)
    short = pathlib.Path(tempfile.mkdtemp(prefix="oz"))
    later(lambda: shutil.rmtree(short))
    shutil.move(d / DATA, short / "o.data")
    relocate(d / "model.onnx", str(short / "o.data"))
    return "EPATH", str(short / "o.data")


def case_symlink_out(d, outside, later):
    shutil.move(d / DATA, outside / DATA)
    os.symlink(outside / DATA, d / DATA)
    return "EPATH", DATA


def case_case_fold(d, outside, later):
    (d / "Config.json").write_text('{"a": 1}\n')
    (d / "config.json").write_text('{"a": 2}\n')
    return "EDUPNAME", "onfig.json"


def case_unicode_nfc_nfd(d, outside, later):
    nfc, nfd = unicodedata.normalize("NFC", "café.json"), unicodedata.normalize("NFD", "café.json")
    assert nfc.encode() != nfd.encode()
    (d / nfc).write_text("{}\n")
    (d / nfd).write_text("{}\n")
    return "EDUPNAME", "caf"


def case_not_utf8(d, outside, later):
    fd = os.open(os.fsencode(d) + b"/\xff.json", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"{}\n")
    os.close(fd)
    return "ENAME", "\\xff.json"


def reserved(name):
    def case(d, outside, later):
        (d / name).write_text("x\n")
        return "ENAME", name
    case.__name__ = f"case_reserved_{name}"
    return case


def case_directory_link(d, outside, later):
    (d / "sub").mkdir()
    (d / "sub" / "x.json").write_text("{}\n")
    os.symlink("sub", d / "alias")
    return "EINVAL", "alias"


def case_fifo(d, outside, later):
    os.mkfifo(d / "pipe")
    return "ENOTREG", "pipe"


def case_no_model(d, outside, later):
    for p in d.iterdir():
        if p.suffix == ".onnx":
            p.unlink()
    return "ENOMODEL", d.name


PACK_CASES = [case_missing_data, case_dotdot, case_absolute, case_symlink_out, case_case_fold,
              case_unicode_nfc_nfd, case_not_utf8, case_directory_link, case_fifo, case_no_model] + \
    [reserved(n) for n in ("__MODEL_PROTO", "__PAD_3", "__package", "__FUTURE")]


@pytest.mark.parametrize("case", PACK_CASES, ids=lambda c: c.__name__[5:])
def test_pack_refuses(case, genai, tmp_path, onnxzip_cli, request):
    d = tmp_path / "repo"
    shutil.copytree(genai, d, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    status, path = case(d, outside, request.addfinalizer)
    before = snapshot(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    p = run(onnxzip_cli, "pack", d, "-o", out / "p.onnxzip", timeout=60)
    msg = text(p)
    assert p.returncode == 1, f"exit {p.returncode}\n{msg}"
    assert f"[ONNXZIP_{status}]" in msg, msg
    assert path in msg, f"the message does not name {path!r}: {msg}"
    if case.__name__.startswith("case_reserved_"):
        assert "a name the format reserves" in msg, msg
    assert list(out.iterdir()) == [], "pack left files behind"
    out.rmdir()
    assert snapshot(tmp_path) == before, "pack changed the input folder"


@pytest.mark.parametrize("where", [".", "onnx"])
def test_pack_refuses_output_inside_the_folder(where, genai, tmp_path, onnxzip_cli):
    d = tmp_path / "repo"
    shutil.copytree(genai, d, symlinks=True)
    (d / "onnx").mkdir()
    before = snapshot(tmp_path)
    target = d / where / "p.onnxzip"
    p = run(onnxzip_cli, "pack", d, "-o", target)
    assert p.returncode == 1, text(p)
    assert "[ONNXZIP_EINVAL]" in text(p) and "p.onnxzip" in text(p), text(p)
    assert snapshot(tmp_path) == before, "pack wrote into the input folder"


# ---- crafted packages ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def good(genai, tmp_path_factory, onnxzip_cli):
    """(bytes of a good package of the genai folder, its tensor entry names)."""
    import zipbuild
    pkg = tmp_path_factory.mktemp("good") / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", genai, "-o", pkg))
    b = pkg.read_bytes()
    entries, cd_order, _ = zipbuild.from_archive(b)
    assert zipbuild.build(entries, cd_order=cd_order) == b, "zipbuild does not rebuild the package as it is"
    return b


def _edit(b, change):
    """The package with `change(entries)` applied (a list of zipbuild.BEntry in
    file order; it may return a new central directory order)."""
    import zipbuild
    entries, cd_order, _ = zipbuild.from_archive(b)
    got = change(entries)
    return zipbuild.build(entries, cd_order=got if got is not None else cd_order)


def _manifest(entries):
    return next(e for e in entries if e.name == "__PACKAGE")


def manifest_in_directory_not_last(entries):
    n = len(entries)                      # file order kept; the directory lists the manifest first
    return [n - 1] + list(range(n - 1))


def manifest_in_file_not_last(entries):
    m = entries.pop()                     # the directory (file order) ends with the model now...
    entries.insert(len(entries) - 1, m)
    n = len(entries)                      # ...but lists the manifest last
    return [i for i in range(n) if i != n - 2] + [n - 2]


def model_line_names_no_entry(entries):
    e = _manifest(entries)
    lines = e.data.decode().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("model\t"))
    lines.insert(at + 1, "model\tmissing.onnx")
    e.data = "\n".join(lines).encode()


def bad_first_line(entries):
    e = _manifest(entries)
    e.data = e.data.replace(b"onnxzip-package\t1.2\n", b"onnxzip-packages\t1.2\n", 1)


def version_2(entries):
    e = _manifest(entries)
    assert e.data.startswith(b"onnxzip-package\t1.2\n")
    e.data = b"onnxzip-package\t2.0\n" + e.data[len(b"onnxzip-package\t1.2\n"):]


def tensor_misaligned(entries):
    lines = _manifest(entries).data.decode().split("\n")
    named = {ln.split("\t")[1] for ln in lines[1:] if ln.split("\t")[0] in ("model", "file")}
    t = next(e for e in entries if e.name not in named and not e.name.startswith("__"))
    t.pad_delta = 1
    return None


def dotdot_name(entries):
    e = next(e for e in entries if e.name == "tokenizer.json")
    e.name = "../tokenizer.json"
    m = _manifest(entries)
    m.data = m.data.replace(b"file\ttokenizer.json\n", b"file\t../tokenizer.json\n")


MANIFEST_NAMED = ("__PACKAGE", "manifest")
# (change, status, what the message must name: one of these)
CRAFTED = [
    (manifest_in_directory_not_last, "EMODELPOS", ("__PACKAGE",)),
    (manifest_in_file_not_last, "EMODELPOS", ("__PACKAGE",)),
    (model_line_names_no_entry, "EPACKAGE", ("missing.onnx",)),
    (bad_first_line, "EPACKAGE", MANIFEST_NAMED),
    (version_2, "EUNSUPPORTED", ("2.0",)),
    (tensor_misaligned, "EALIGN", None),
    (dotdot_name, "ENAME", ("../tokenizer.json",)),
]


@pytest.mark.parametrize("change,status,named", CRAFTED, ids=lambda x: x.__name__ if callable(x) else None)
def test_readers_refuse(change, status, named, good, tmp_path, onnxzip_cli):
    b = _edit(good, change)
    assert b != good
    if named is None:                                     # the misaligned entry
        named = (_misaligned_name(b),)
    pkg = tmp_path / "p.onnxzip"
    pkg.write_bytes(b)
    for cmd in (["ls"], ["ls", "--json"], ["verify"]):
        p = run(onnxzip_cli, *cmd, pkg)
        msg = text(p)
        assert p.returncode == 1, f"{cmd}: exit {p.returncode}\n{msg}"
        assert f"[ONNXZIP_{status}]" in msg, f"{cmd}: {msg}"
        assert any(n in msg for n in named), f"{cmd}: the message names none of {named}: {msg}"
    out = tmp_path / "out"
    p = run(onnxzip_cli, "unpack", pkg, out)
    assert p.returncode == 1, text(p)
    assert not out.exists(), "unpack left output behind"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["p.onnxzip"], "unpack wrote beside its output"


def _misaligned_name(b):
    """The entry whose data does not start at a multiple of 64 (one only)."""
    import zipcheck
    arc = zipcheck.parse_archive(b)
    bad = [z.name for z in arc.entries if z.data_offset % 64 and not z.name.startswith("__")]
    assert len(bad) == 1, bad
    return bad[0]



def origins_overlap(entries):
    """Every tensor of model.onnx placed at offset 0 of its data file."""
    m = _manifest(entries)
    lines = m.data.decode().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("origin\tmodel.onnx\t"))
    items = lines[at].split("\t")[2].split(",")
    lines[at] = "origin\tmodel.onnx\t" + ",".join(":".join(it.split(":")[:2] + ["0"]) for it in items)
    m.data = "\n".join(lines).encode()


def origins_far(entries):
    """The last tensor of model.onnx placed 1 TiB into its data file."""
    m = _manifest(entries)
    lines = m.data.decode().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("origin\tmodel.onnx\t"))
    items = lines[at].split("\t")[2].split(",")
    i, f, _ = items[-1].split(":")
    items[-1] = f"{i}:{f}:{1 << 40}"
    lines[at] = "origin\tmodel.onnx\t" + ",".join(items)
    m.data = "\n".join(lines).encode()


@pytest.mark.parametrize("change", [origins_overlap, origins_far], ids=lambda c: c.__name__)
def test_unpack_does_not_trust_origins(change, good, genai, tmp_path, onnxzip_cli, ort):
    """A manifest whose places put tensors over one another, or 1 TiB into a
    file: unpack writes the model in a plain layout instead (spec 19.6), a
    model that computes the original's outputs, and no huge (sparse) file."""
    from helpers import assert_same_outputs, outputs
    pkg = tmp_path / "p.onnxzip"
    pkg.write_bytes(_edit(good, change))
    out = tmp_path / "out"
    ok(run(onnxzip_cli, "unpack", pkg, out, timeout=60))
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in out.rglob("*") if p.is_file()}
    assert sum(sizes.values()) < 2 * sum(p.stat().st_size for p in genai.rglob("*") if p.is_file()), sizes
    feeds = make_repos.sample_inputs(genai / "model.onnx")
    assert_same_outputs(outputs(ort, out / "model.onnx", feeds), outputs(ort, genai / "model.onnx", feeds),
                        "model.onnx")
