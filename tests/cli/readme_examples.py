#!/usr/bin/python3
"""readme_examples — the README's command-line examples run as written.

    readme_examples.py ONNXZIP_EXE [VENV_PYTHON]

Every line of README.md's ```sh blocks that runs `onnxzip` (the "Command
line" and "Running an archive" sections), `openssl` or `model_signing` (the
"Signed packages" section) runs through bash, in order, in a fresh
directory, with the built CLI first on PATH and the venv's bin/ (where
model_signing is) after it, and must exit 0; a `model_signing verify` line
must say "Verification succeeded". The
directory starts with what a reader of the README has: model.onnx (the demo's
tiny MLP, tools/make_example_model.py) and big/model.onnx whose external data
lies in weights/ (the `--data-dir` example). Files the examples take as given
are made just before the line that reads them, by independent tools:
new.onnx is the archive's __MODEL_PROTO read with Python's zipfile (its
producer_version changed, so set-model is seen to take effect), rezipped.zip
is model.onnxzip deflated by zipfile; tf2onnx.zip and torch.zip are model.onnx
zipped by zipfile as tf2onnx's large-model export and PyTorch's ZIP_ARCHIVE
export lay it out (foreign_zip()); leaf.key, leaf.pem, intermediate.pem and
root.pem are made by the openssl command (tests/sign/pki.py).

Placeholders are filled in, and only these: `[--json]` -> `--json`,
`TENSOR` -> `fc1.weight`, `[--tensors 'PATTERN']` dropped. Lines naming an
https:// URL are left to tests/remote/run.py, and s3:// ones to
tests/python/test_s3.py (they need a server, a bucket).

Afterwards independent readers check the results: onnx.load for the unpacked
models and the new graph, numpy for the extracted tensor, zipfile for the
archive. The ```python blocks of "Running an archive" and of "ONNX Runtime"
(under "Packages": one model of repo.onnxzip against the folder's, asserted in
the block) and "onnxruntime-genai" (on tests/packages/make_repos.py's genai
repository; checked against og.Model on the folder) and "Signed packages in
Python" (repo/ signed by model_signing, packed) run with VENV_PYTHON, when
it is given and exists; those importing onnxzip with the build's module
(ONNXZIP_PYTHONPATH; unset in a sanitized build, whose extension loads only
with the ASan runtime preloaded: then skipped, saying so).
Prints "readme_examples: N passed, M failed"; exits 1 on any failure.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper

import ozcommon

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "sign"))
import pki  # noqa: E402  (tests/sign/pki.py: certificates made by openssl)

REPO = pathlib.Path(__file__).resolve().parents[2]
README = REPO / "README.md"
# The sections whose ```python block runs (with VENV_PYTHON), after every sh line.
PYTHON_SECTIONS = ("Running an archive (views)", "ONNX Runtime")
SUBST = [("[--json]", "--json"), (" TENSOR ", " fc1.weight "), (" [--tensors 'PATTERN']", "")]
# The "Signed packages" lines, which a build without signing (ONNXZIP_SIGNING=0) cannot run.
SIGNING = re.compile(r"^openssl |model_signing |^onnxzip sign |--public-key|--certificate-chain")
TALLY = ozcommon.Tally()
check = TALLY.check


def blocks(lang):
    """(section heading, block text) of every ```lang block of the README."""
    heading, out, body = "", [], None
    for line in README.read_text(encoding="utf-8").splitlines():
        if body is None and line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif body is None and line == "```" + lang:
            body = []
        elif body is not None and line.startswith("```"):
            out.append((heading, "\n".join(body)))
            body = None
        elif body is not None:
            body.append(line)
    return out


def cli_lines():
    """The onnxzip command lines of the sh blocks, continuations joined."""
    lines = []
    for _, text in blocks("sh"):
        for line in text.replace("\\\n", " ").splitlines():
            if line.startswith(("onnxzip ", "openssl ", "model_signing ")):
                lines.append(line)
    return lines


def setup(work):
    subprocess.run([sys.executable, str(REPO / "tools" / "make_example_model.py"), "model.onnx"], cwd=work,
                   check=True, stdout=subprocess.DEVNULL)
    big = onnx.load(str(work / "model.onnx"))
    (work / "big").mkdir()
    onnx.save_model(big, str(work / "big" / "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=1024)
    (work / "weights").mkdir()
    os.rename(work / "big" / "model.onnx.data", work / "weights" / "model.onnx.data")
    # repo/: a repository folder (the Packages section), an encoder and a
    # decoder holding the same weights in their own data files, and files
    (work / "repo" / "onnx").mkdir(parents=True)
    for name in ("encoder_model", "decoder_model_merged"):
        onnx.save_model(onnx.load(str(work / "model.onnx")), str(work / "repo" / "onnx" / f"{name}.onnx"), save_as_external_data=True,
                        location=f"{name}.onnx_data", size_threshold=1024)
    (work / "repo" / "config.json").write_text('{"model_type": "demo"}\n')
    (work / "repo" / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "WordLevel"}}\n')


def foreign_zip(work, tool):
    """model.onnx as tf2onnx's large_model=True zip (__MODEL_PROTO.onnx first, a
    stored entry per tensor of more than 1024 elements, named by its node with
    some characters made '_', referenced as external data) or as PyTorch's
    ZIP_ARCHIVE export (__MODEL_PROTO first, an entry per initializer named as
    it, raw_data the placeholder __EXTERNAL); tests/cli/foreign_zips.py
    checks these layouts in depth."""
    m, entries = onnx.load(str(work / "model.onnx")), {}
    for i, t in enumerate(m.graph.initializer):
        if tool == "torch":
            entries[t.name], t.raw_data = t.raw_data, b"__EXTERNAL"
        elif np.prod(t.dims) > 1024:
            name = re.sub(r'[~"#%&*:<>?/\\{|}]', "_", f"{t.name}/read_{i}")
            entries[name] = t.raw_data
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            t.external_data.add(key="location", value=name)
    with zipfile.ZipFile(work / f"{tool}.zip", "w") as z:
        z.writestr("__MODEL_PROTO.onnx" if tool == "tf2onnx" else "__MODEL_PROTO", m.SerializeToString())
        for name, data in entries.items():
            z.writestr(name, data)


def before(line, work):
    """Makes the inputs the README takes as given, just before their line."""
    if " set-model model.onnxzip new.onnx" in line:
        with zipfile.ZipFile(work / "model.onnxzip") as z:
            model = onnx.ModelProto.FromString(z.read("__MODEL_PROTO"))
        model.producer_version = "edited"
        (work / "new.onnx").write_bytes(model.SerializeToString())
    if " repack tf2onnx.zip" in line or " repack torch.zip" in line:
        foreign_zip(work, "tf2onnx" if "tf2onnx" in line else "torch")
    if "--certificate leaf.pem" in line and not (work / "leaf.pem").exists():
        made = pki.Pki(work / "pki")
        for src, dst in ((made.leaf_key, "leaf.key"), (made.leaf, "leaf.pem"), (made.intermediate, "intermediate.pem"),
                         (made.ca, "root.pem")):
            shutil.copy(src, work / dst)
    if " repack rezipped.zip" in line:
        with zipfile.ZipFile(work / "model.onnxzip") as src, \
                zipfile.ZipFile(work / "rezipped.zip", "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info))


def after(line, work, env):
    """What independent readers say of the line's output."""
    if " set-model " in line:
        with zipfile.ZipFile(work / "model.onnxzip") as z:
            check(onnx.ModelProto.FromString(z.read("__MODEL_PROTO")).producer_version == "edited",
                  "set-model: the archive's graph is new.onnx")
    elif " extract " in line:
        ref = {t.name: t for t in onnx.load(str(work / "model.onnx")).graph.initializer}["fc1.weight"]
        check((work / "t.bin").read_bytes() == numpy_helper.to_array(ref).astype("<f4").tobytes(),
              "extract: t.bin holds fc1.weight's bytes")
    elif " unpack repo.onnxzip repo2" in line:
        files = sorted(p.relative_to(work / "repo") for p in (work / "repo").rglob("*") if p.is_file())
        back = sorted(p.relative_to(work / "repo2") for p in (work / "repo2").rglob("*") if p.is_file())
        check(files == back and all((work / "repo" / f).read_bytes() == (work / "repo2" / f).read_bytes()
                                    for f in files), "unpack repo: the folder again, every file byte for byte")
    elif " unpack repo.onnxzip signed " in line:
        check((work / "signed" / "model.sig").is_file(), "unpack of a signed package: signed/model.sig")
    elif " extract repo.onnxzip --file " in line:
        check((work / "tokenizer.json").read_bytes() == (work / "repo" / "tokenizer.json").read_bytes(),
              "extract --file: tokenizer.json's bytes")
    elif " unpack " in line:
        ref = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(work / "model.onnx")).graph.initializer}
        got = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(work / "out" / "model.onnx")).graph.initializer}
        check(ref.keys() == got.keys() and all(np.array_equal(ref[k], got[k]) for k in ref),
              f"{line.split('#')[0].strip()}: onnx.load reads the weights back")
    elif line.startswith("onnxzip pack ") or " repack " in line:
        out = re.search(r"-o (\S+)", line).group(1)
        last = "__PACKAGE" if line.startswith("onnxzip pack repo ") else "__MODEL_PROTO"
        with zipfile.ZipFile(work / out) as z:
            check(z.testzip() is None and z.namelist()[-1] == last, f"{out}: zipfile reads it")


def run_python_block(work, python, section, env=None):
    """Runs the README's python block under the heading `section`; (its
    code, its output), or None when skipped (saying why)."""
    (heading, code), = [(h, c) for h, c in blocks("python") if h == section]
    if not python or not os.access(python, os.X_OK):
        print(f"readme_examples: skipped the python block of '{heading}': no venv python ({python or 'not given'})")
        return None
    env = dict(os.environ if env is None else env)
    if "import onnxzip" in code:
        if "ONNXZIP_PYTHONPATH" not in env:
            print(f"readme_examples: skipped the python block of '{heading}': ONNXZIP_PYTHONPATH unset (no Python "
                  "binding, or a sanitized one: the plain build runs it)")
            return None
        env["PYTHONPATH"] = env["ONNXZIP_PYTHONPATH"]
    proc = subprocess.run([python, "-c", code], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)
    check(proc.returncode == 0, f"python block of '{heading}'", proc.stdout[-2000:])
    return code, proc.stdout


def run_genai_block(work, python):
    """The onnxruntime-genai block: its tiny-genai/ is
    tests/packages/make_repos.py's genai repository (made by the venv, which
    has tokenizers); its cache goes in the directory. The oracle: the same
    code with og.Model("tiny-genai") on the folder prints the same text."""
    if not python or not os.access(python, os.X_OK) or "ONNXZIP_PYTHONPATH" not in os.environ:
        run_python_block(work, python, "onnxruntime-genai")  # says why it is skipped
        return
    subprocess.run([python, str(REPO / "tests" / "packages" / "make_repos.py"), "genai", str(work / "tiny-genai")],
                   check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, ONNXZIP_CACHE_DIR=str(work / "cache"))
    code, got = run_python_block(work, python, "onnxruntime-genai", env)
    line = 'model = onnxzip.genai_model("tiny-genai.onnxzip")'
    folder = code.replace(line, 'model = og.Model("tiny-genai")')
    check(line in code and folder != code, "the genai block loads tiny-genai.onnxzip", code)
    want = subprocess.run([python, "-c", folder], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=dict(env, PYTHONPATH=env["ONNXZIP_PYTHONPATH"]), timeout=300).stdout
    check(got == want and len(got) > 20, "the genai block prints what og.Model(folder) does", f"{got!r}\n{want!r}")
    check(len(os.listdir(work / "cache" / "genai")) == 1, "the genai block wrote one cache entry")


def run_trust_block(work, python, exe):
    """The "Signed packages in Python" block: signed-repo/ is repo/ (the
    Packages section's folder) signed by the reference tool, model_signing
    (in the venv), with a key made by openssl, and packed, as its comments
    say. It must print EUNSIGNED for model.onnxzip (no detached signature
    given)."""
    section = "Signed packages in Python"
    if not python or not os.access(python, os.X_OK) or "ONNXZIP_PYTHONPATH" not in os.environ:
        run_python_block(work, python, section)  # says why it is skipped
        return
    shutil.copytree(work / "repo", work / "signed-repo")
    for args in (["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "publisher.pem"],
                 ["openssl", "ec", "-in", "publisher.pem", "-pubout", "-out", "publisher.pub.pem"],
                 [python, "-m", "model_signing", "sign", "key", "signed-repo", "--private_key", "publisher.pem",
                  "--signature", "signed-repo/model.sig"],
                 [str(exe), "pack", "signed-repo", "-o", "signed.onnxzip"]):
        subprocess.run(args, cwd=work, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, out = run_python_block(work, python, section)
    check("EUNSIGNED" in out and "model.onnxzip" in out, "the trust block: the unsigned archive refused", out)


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    exe = pathlib.Path(argv[1]).resolve()
    python = os.path.abspath(argv[2]) if len(argv) == 3 else None
    venv_bin = [os.path.dirname(python)] if python and os.access(python, os.X_OK) else []
    env = dict(os.environ, PATH=os.pathsep.join([str(exe.parent)] + venv_bin + [os.environ.get("PATH", "")]))
    if exe.name != "onnxzip":  # the examples call it by name
        print(f"readme_examples: {exe}: expected the onnxzip executable", file=sys.stderr)
        return 2
    work = pathlib.Path(tempfile.mkdtemp(prefix="readme_examples."))
    try:
        setup(work)
        lines = cli_lines()
        check(len(lines) >= 15, "README: the command-line examples were found", str(len(lines)))
        for line in lines:
            if "https://" in line or "s3://" in line:
                continue
            if os.environ.get("ONNXZIP_SIGNING") == "0" and SIGNING.search(line):
                print(f"readme_examples: skipped '{line}': this build has no signing (-Dsigning)")
                continue
            if "model_signing " in line and not venv_bin:
                print(f"readme_examples: skipped '{line}': no venv python ({python or 'not given'}) with model_signing")
                continue
            for a, b in SUBST:
                line = line.replace(a, b)
            before(line, work)
            proc = subprocess.run(["bash", "-c", line], cwd=work, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=120)
            if check(proc.returncode == 0, f"$ {line}", f"exit {proc.returncode}:\n{proc.stdout[-2000:]}"):
                after(line, work, env)
            if "model_signing verify" in line:
                check("Verification succeeded" in proc.stdout, f"$ {line}: model_signing says so", proc.stdout[-2000:])
        for section in PYTHON_SECTIONS:
            run_python_block(work, python, section)
        run_genai_block(work, python)
        run_trust_block(work, python, exe)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"readme_examples: {TALLY.passed} passed, {TALLY.failed} failed")
    return 1 if TALLY.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
