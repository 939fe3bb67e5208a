"""Helpers of the package tests (tests/packages): running the CLI, ONNX
Runtime outputs compared bit for bit, folder contents and snapshots, and the
build of the format-1.1 CLI from git history."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

OLD_COMMIT = "d9f55d9"   # the last commit of format 1.1 (before spec section 19)
FORMAT2_MESSAGE = "was written for onnxzip format 2"


def run(exe, *args, cwd=None, timeout=120):
    """Runs exe with args; the completed process, stdout and stderr as bytes."""
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, cwd=cwd, timeout=timeout)


def text(proc):
    return proc.stderr.decode("utf-8", "replace") + proc.stdout.decode("utf-8", "replace")


def ok(proc):
    assert proc.returncode == 0, f"{proc.args}: exit {proc.returncode}\n{text(proc)}"
    return proc


def outputs(ort, model_path, feeds):
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_same_outputs(got, want, what):
    """Bit for bit: dtype, shape and bytes of every output."""
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (what, i, g.dtype, g.shape, w.dtype, w.shape)
        assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes(), \
            f"{what}: output {i} differs (max |diff| {np.max(np.abs(g.astype(np.float64) - w)):.3g})"


def tree(root):
    """relative posix path -> bytes of every regular file under root."""
    root = pathlib.Path(root)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def snapshot(root):
    """Everything observable of a folder: each path's kind, mode, size,
    mtime, link target and content (to check that a command left it alone)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            link = os.readlink(p) if os.path.islink(p) else None
            data = None
            if not link and os.path.isfile(p) and st.st_size < (64 << 20):   # not the sparse 4 GiB
                with open(p, "rb") as f:
                    data = f.read()
            out[rel] = (st.st_mode, st.st_size, st.st_mtime_ns, link, data)
    return out


def old_cli_build(source_root, cache):
    """git archive OLD_COMMIT | tar -x; meson setup; ninja onnxzip, in cache.
    Returns the executable, or a reason (str) why it cannot be built here."""
    exe = cache / "build" / "tools" / "onnxzip"
    stamp, built = cache / "built", f"{OLD_COMMIT} static\n"
    if stamp.exists() and stamp.read_text() == built and exe.exists():
        return exe
    if shutil.which("git") is None:
        return "git is not installed"
    probe = subprocess.run(["git", "-C", str(source_root), "cat-file", "-e", OLD_COMMIT + "^{commit}"],
                           capture_output=True)
    if probe.returncode != 0:
        return (f"commit {OLD_COMMIT} is not in {source_root}'s git history (a shallow clone, or no git "
                f"repository): {probe.stderr.decode(errors='replace').strip()}")
    shutil.rmtree(cache / "src", ignore_errors=True)
    shutil.rmtree(cache / "build", ignore_errors=True)
    (cache / "src").mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(source_root), "archive", OLD_COMMIT], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(cache / "src")], input=archive, check=True)
    # Static: meson test's LD_LIBRARY_PATH (BUILDDIR/src) would otherwise
    # give the old CLI today's libonnxzip.so, whose runpath comes after it.
    steps = [["meson", "setup", "--wrap-mode=nodownload", "-Dtests=false", "-Dpython=disabled",
              "-Djs=disabled", "-Ddefault_library=static", str(cache / "build"), str(cache / "src")],
             ["ninja", "-C", str(cache / "build"), "tools/onnxzip"]]
    for cmd in steps:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            pytest.fail(f"building the format-1.1 CLI: {' '.join(cmd)} failed ({p.returncode}):\n"
                        f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}", pytrace=False)
    stamp.write_text(built)
    return exe
