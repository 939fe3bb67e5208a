#!/usr/bin/python3
"""outputs — an output never aliases an input and is never a special file.

    outputs.py ONNXZIP_EXE

For pack, unpack (single, per-tensor, inline), repack and extract, each
output path that names one of the command's inputs — by its own name, through
a hard link, through a symbolic link, through --data-dir — is refused with
ONNXZIP_ESAMEFILE before anything is written: afterwards every file of the
working directory is byte-identical, none added (no temporary file or
directory left). Inputs per command: pack reads the model and its external
data files (a data file with two hard links is itself refused, EPATH, so its
hard-link case is that refusal); unpack and repack read the archive; extract
reads the archive, or a classic model and its data files.

Special outputs — a character device (/dev/null, still a device afterwards),
a FIFO (the command must not hang), a socket, a directory, a symbolic link to
/proc/self/fd/1 (a pipe here) — are refused with ONNXZIP_ENOTREG, the node
untouched. A symbolic link to an ordinary regular file is replaced by the new
file; the file it pointed to is left as it was.

`extract ... -o -` writes the same bytes as `-o FILE` to standard output; it
is refused on a terminal (a pty here) and when standard output is the
archive itself (">>").
Prints "outputs: N passed, M failed"; exits 1 on any failure.
"""
import os
import pty
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ERROR_LINE = re.compile(r"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL", what, detail)
    return ok


def run(exe, *args, timeout=20, stdout=subprocess.PIPE):
    return subprocess.run([exe] + list(args), stdout=stdout, stderr=subprocess.PIPE, timeout=timeout)


def snapshot(root):
    """Every node under root: kind, inode and content (files), target (links)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    out[p] = ("file", st.st_ino, f.read())
            elif stat.S_ISLNK(st.st_mode):
                out[p] = ("link", st.st_ino, os.readlink(p))
            else:
                out[p] = (stat.S_IFMT(st.st_mode), st.st_ino, None)
    return out


def expect_refused(exe, root, what, status, *args, needle=None):
    """The command fails with `status` in one error line (naming `needle`)
    and changes nothing under root."""
    before = snapshot(root)
    try:
        p = run(exe, *args)
    except subprocess.TimeoutExpired:
        return check(False, what, "(hung)")
    err = p.stderr.decode(errors="replace").strip()
    lines = err.splitlines()
    m = ERROR_LINE.match(lines[0]) if len(lines) == 1 else None
    ok = p.returncode == 1 and m is not None and m.group(1) == status and (needle is None or needle in err)
    check(ok, what, f"exit {p.returncode}, want {status} naming {needle!r}; stderr {err!r}")
    after = snapshot(root)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return check(not changed, what + ": nothing changed, nothing left behind", f"changed: {changed}")


def make_model(d):
    """m.onnx with both tensors in the external data file w.bin."""
    w = numpy_helper.from_array(np.arange(1000, dtype=np.float32) / 3, "W")
    b = numpy_helper.from_array(np.arange(600, dtype=np.int32) - 300, "B")
    g = helper.make_graph([helper.make_node("Identity", ["W"], ["y"])], "g", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(m, os.path.join(d, "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="w.bin", size_threshold=0)
    return numpy_helper.to_array(w).tobytes()


def aliases(d, target, name):
    """A hard link and a symbolic link to `target` in d: their paths."""
    hard, soft = os.path.join(d, name + ".hard"), os.path.join(d, name + ".soft")
    os.link(target, hard)
    os.symlink(os.path.basename(target), soft)
    return hard, soft


def pack_cases(exe, d):
    j = lambda n: os.path.join(d, n)  # noqa: E731
    m = j("m.onnx")
    hard, soft = aliases(d, m, "model")
    for out in (m, j("./m.onnx"), hard, soft):
        expect_refused(exe, d, f"pack -o {os.path.basename(out)} (the model)", "ONNXZIP_ESAMEFILE", "pack", m,
                       "-o", out, needle="the input model")
    os.unlink(hard)
    os.unlink(soft)
    expect_refused(exe, d, "pack -o w.bin (its data file)", "ONNXZIP_ESAMEFILE", "pack", m, "-o", j("w.bin"),
                   needle="tensor 'W'")
    os.symlink("w.bin", j("data.soft"))
    expect_refused(exe, d, "pack -o data.soft (symlink to its data file)", "ONNXZIP_ESAMEFILE", "pack", m, "-o",
                   j("data.soft"), needle="w.bin")
    os.unlink(j("data.soft"))
    os.link(j("w.bin"), j("data.hard"))
    expect_refused(exe, d, "pack -o data.hard (its data file has two links: refused as input)",
                   "ONNXZIP_EPATH", "pack", m, "-o", j("data.hard"), needle="hard link")
    os.unlink(j("data.hard"))

    # --data-dir: the model here, its data file elsewhere
    md, dd = j("model_dir"), j("data_dir")
    os.makedirs(md)
    os.makedirs(dd)
    shutil.copy(m, md)
    shutil.copy(j("w.bin"), dd)
    os.symlink(os.path.join(dd, "w.bin"), os.path.join(md, "w.link"))
    for out in (os.path.join(dd, "w.bin"), os.path.join(md, "w.link")):
        expect_refused(exe, d, f"pack --data-dir -o {os.path.relpath(out, d)}", "ONNXZIP_ESAMEFILE", "pack",
                       os.path.join(md, "m.onnx"), "--data-dir", dd, "-o", out, needle="tensor 'W'")
    shutil.rmtree(md)
    shutil.rmtree(dd)


def unpack_cases(exe, d, arc):
    j = lambda n: os.path.join(d, n)  # noqa: E731
    hard, soft = aliases(d, arc, "arc")
    layouts = (("single", []), ("per-tensor", []), ("inline", []))
    for layout, extra in layouts:
        for out in (arc, hard, soft):
            expect_refused(exe, d, f"unpack --layout {layout} -o {os.path.basename(out)} (model = the archive)",
                           "ONNXZIP_ESAMEFILE", "unpack", arc, "--layout", layout, "-o", out, *extra,
                           needle="the archive")
    # data files: single's NAME.onnx.data or --location, per-tensor's entry names
    for alias in (hard, soft):
        os.rename(alias, j("u.onnx.data"))
        expect_refused(exe, d, f"unpack single: u.onnx.data is the archive ({'hard' if alias == hard else 'sym'}"
                       "link)", "ONNXZIP_ESAMEFILE", "unpack", arc, "-o", j("u.onnx"), needle="the archive")
        os.rename(j("u.onnx.data"), alias)
    expect_refused(exe, d, "unpack single --location a.onnxzip", "ONNXZIP_ESAMEFILE", "unpack", arc, "-o",
                   j("u.onnx"), "--location", "a.onnxzip", needle="the archive")
    for alias in (hard, soft):
        os.rename(alias, j("W"))
        expect_refused(exe, d, f"unpack per-tensor: data file W is the archive ({'hard' if alias == hard else 'sym'}"
                       "link)", "ONNXZIP_ESAMEFILE", "unpack", arc, "-o", j("u.onnx"), "--layout", "per-tensor",
                       needle="the archive")
        os.rename(j("W"), alias)
    os.unlink(hard)
    os.unlink(soft)


def repack_and_extract_cases(exe, d, arc):
    j = lambda n: os.path.join(d, n)  # noqa: E731
    hard, soft = aliases(d, arc, "arc")
    for out in (arc, hard, soft):
        name = os.path.basename(out)
        expect_refused(exe, d, f"repack -o {name} (the input)", "ONNXZIP_ESAMEFILE", "repack", arc, "-o", out,
                       needle="the input archive")
        expect_refused(exe, d, f"extract -o {name} (the archive)", "ONNXZIP_ESAMEFILE", "extract", arc, "W",
                       "-o", out, needle="the archive")
    os.unlink(hard)
    os.unlink(soft)
    # extract from the classic model: its model file and its data file
    m = j("m.onnx")
    expect_refused(exe, d, "extract from m.onnx -o m.onnx", "ONNXZIP_ESAMEFILE", "extract", m, "W", "-o", m,
                   needle="the input model")
    for out in ("w.bin", "./w.bin"):
        expect_refused(exe, d, f"extract from m.onnx -o {out} (its data file)", "ONNXZIP_ESAMEFILE", "extract", m,
                       "B", "-o", j(out), needle="tensor 'W'")
    os.symlink("w.bin", j("data.soft"))
    expect_refused(exe, d, "extract from m.onnx -o data.soft (symlink to its data file)", "ONNXZIP_ESAMEFILE",
                   "extract", m, "W", "-o", j("data.soft"), needle="w.bin")
    os.unlink(j("data.soft"))


def replace_symlink(target, path):
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def special_nodes(d):
    """(label, path) of special files, created in d. As root, a private
    null device comes first: a regression then replaces that node, not the
    system's /dev/null."""
    j = lambda n: os.path.join(d, n)  # noqa: E731
    nodes = []
    if os.geteuid() == 0:
        os.mknod(j("null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        nodes.append(("a character device", j("null")))
    os.mkfifo(j("fifo"))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(j("sock"))
    s.close()  # the socket node stays
    os.makedirs(j("dir"))
    os.symlink("/proc/self/fd/1", j("stdout"))  # the child's stdout: a pipe
    return nodes + [("/dev/null", "/dev/null"), ("a FIFO", j("fifo")), ("a socket", j("sock")),
                    ("a directory", j("dir")), ("a symlink to /proc/self/fd/1", j("stdout"))]


def restore_dev_null(before):
    """Safety net for a regression run as root: put the device back."""
    st = os.lstat("/dev/null")
    if stat.S_ISCHR(st.st_mode) or os.geteuid() != 0:
        return
    os.mknod("/dev/null.onnxzip-test", 0o666 | stat.S_IFCHR, before.st_rdev)
    os.chmod("/dev/null.onnxzip-test", 0o666)
    os.rename("/dev/null.onnxzip-test", "/dev/null")


def special_cases(exe, d, arc):
    nodes = special_nodes(d)
    m = os.path.join(d, "m.onnx")
    null_before = os.stat("/dev/null")
    commands = [("pack", ["pack", m, "-o"]), ("repack", ["repack", arc, "-o"]),
                ("extract", ["extract", arc, "W", "-o"])]
    commands += [(f"unpack {lay}", ["unpack", arc, "--layout", lay, "-o"]) for lay in ("single", "per-tensor", "inline")]
    private_ok = {}
    for label, out in nodes:
        for cmd, args in commands:
            if out == "/dev/null" and not private_ok.get(cmd, True):
                check(False, f"{cmd} -o /dev/null not tried: it replaced a private device node")
                continue
            ok = expect_refused(exe, d, f"{cmd} -o {label}", "ONNXZIP_ENOTREG", *args, out,
                                needle="not a regular file")
            if label == "a character device":
                private_ok[cmd] = ok and stat.S_ISCHR(os.lstat(out).st_mode)
    null_after = os.lstat("/dev/null")
    restore_dev_null(null_before)
    check(stat.S_ISCHR(null_after.st_mode) and null_after.st_rdev == null_before.st_rdev
          and null_after.st_ino == null_before.st_ino, "/dev/null is still the same character device")
    # a data file of unpack that is special: the model would be fine
    j = lambda n: os.path.join(d, n)  # noqa: E731
    replace_symlink("fifo", j("u.onnx.data"))
    expect_refused(exe, d, "unpack single: u.onnx.data is a symlink to a FIFO", "ONNXZIP_ENOTREG", "unpack", arc,
                   "-o", j("u.onnx"), needle="u.onnx.data")
    replace_symlink("sock", j("B"))
    expect_refused(exe, d, "unpack per-tensor: data file B is a symlink to a socket", "ONNXZIP_ENOTREG", "unpack",
                   arc, "-o", j("u.onnx"), "--layout", "per-tensor", needle="socket")
    for name in ("u.onnx.data", "B", "W", "u.onnx"):
        remove(j(name))
    for _, path in nodes:
        if path != "/dev/null":
            remove(path)


def symlink_to_regular(exe, d, arc, w_bytes):
    """A symlink to an ordinary file: the link is replaced, its target kept."""
    j = lambda n: os.path.join(d, n)  # noqa: E731
    commands = [("pack", ["pack", j("m.onnx"), "-o", j("out")]), ("repack", ["repack", arc, "-o", j("out")]),
                ("extract", ["extract", arc, "W", "-o", j("out")]),
                ("unpack", ["unpack", arc, "-o", j("out"), "--layout", "inline"])]
    for cmd, args in commands:
        with open(j("kept"), "wb") as f:
            f.write(b"not to be touched")
        os.symlink("kept", j("out"))
        p = run(exe, *args)
        st = os.lstat(j("out"))
        with open(j("kept"), "rb") as f:
            kept = f.read()
        check(p.returncode == 0 and stat.S_ISREG(st.st_mode) and kept == b"not to be touched",
              f"{cmd} -o symlink-to-file: the link replaced by a regular file, its target unchanged",
              f"exit {p.returncode} {p.stderr!r}")
        if cmd == "extract":
            with open(j("out"), "rb") as f:
                check(f.read() == w_bytes, "extract through a replaced link: the tensor's bytes")
        os.unlink(j("out"))
        os.unlink(j("kept"))


def stdout_cases(exe, d, arc, w_bytes):
    j = lambda n: os.path.join(d, n)  # noqa: E731
    p = run(exe, "extract", arc, "W", "-o", j("w.out"))
    with open(j("w.out"), "rb") as f:
        file_bytes = f.read()
    os.unlink(j("w.out"))
    q = run(exe, "extract", arc, "W", "-o", "-")
    check(p.returncode == 0 and q.returncode == 0 and q.stdout == file_bytes == w_bytes and not q.stderr,
          "extract -o - gives the bytes of -o FILE, nothing else", f"{q.returncode} {q.stderr!r}")
    q = run(exe, "extract", j("m.onnx"), "B", "-o", "-")
    check(q.returncode == 0 and q.stdout == (np.arange(600, dtype=np.int32) - 300).tobytes(),
          "extract -o - from a classic model's data file")
    master, slave = pty.openpty()
    try:
        q = run(exe, "extract", arc, "W", "-o", "-", stdout=slave)
    finally:
        os.close(slave)
        os.close(master)
    err = q.stderr.decode(errors="replace")
    check(q.returncode == 1 and "terminal" in err and "[ONNXZIP_EINVAL]" in err, "extract -o - on a terminal refused",
          repr(err))
    before = snapshot(d)
    with open(arc, "ab") as f:
        q = run(exe, "extract", arc, "W", "-o", "-", stdout=f)
    err = q.stderr.decode(errors="replace")
    check(q.returncode == 1 and "[ONNXZIP_ESAMEFILE]" in err and snapshot(d) == before,
          "extract -o - >> ARCHIVE refused, the archive unchanged", repr(err))
    with open(j("w.bin"), "ab") as f:
        q = run(exe, "extract", j("m.onnx"), "W", "-o", "-", stdout=f)
    err = q.stderr.decode(errors="replace")
    check(q.returncode == 1 and "[ONNXZIP_ESAMEFILE]" in err and snapshot(d) == before,
          "extract -o - >> its data file refused, the file unchanged", repr(err))
    p = run(exe, "extract", "--help")
    check(b"-o -" in p.stdout or b"- for standard output" in p.stdout, "extract --help documents -o -")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = argv[1]
    with tempfile.TemporaryDirectory(prefix="onnxzip-outputs-") as d:
        w_bytes = make_model(d)
        arc = os.path.join(d, "a.onnxzip")
        p = run(exe, "pack", os.path.join(d, "m.onnx"), "-o", arc, "-q")
        if not check(p.returncode == 0, "pack the test model", repr(p.stderr)):
            return 1
        pack_cases(exe, d)
        unpack_cases(exe, d, arc)
        repack_and_extract_cases(exe, d, arc)
        special_cases(exe, d, arc)
        symlink_to_regular(exe, d, arc, w_bytes)
        stdout_cases(exe, d, arc, w_bytes)
    print(f"outputs: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
