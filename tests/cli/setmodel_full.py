#!/usr/bin/python3
"""setmodel_full — `onnxzip set-model` is all-or-nothing (spec 15.6).

    setmodel_full.py ONNXZIP_EXE LIBZIP_ORACLE_EXE [--shim FAILIO_SHIM.so]

  * inputs: a device (/dev/zero), a FIFO, a directory and a sparse file over
    2 GiB as the new model are refused from fstat() (ENOTREG, ELIMIT) without
    being read (peak RSS far below 2 GiB, no hang), and the archive itself as
    the new model (by its path, a hard link, a symlink) with ESAMEFILE; the
    archive is unchanged each time;
  * ENOSPC sweep: on a small tmpfs this script mounts, for every 4096-byte
    step of free space from none to more than the update needs, set-model
    with a larger and a smaller model than the archive's, with and without
    fallocate (the shim's FAILIO_NO_FALLOCATE: the zero-fill fallback);
  * EIO sweep (with --shim): the Nth of the update's pwrite/fsync/ftruncate/
    fallocate calls fails (a torn pwrite writes half first), for every N,
    with EIO and ENOSPC, with and without fallocate;
  * kill sweep (with --shim): the update is killed (SIGKILL, the shim's
    FAILIO_KILL_AT) before each of its calls in turn, and with
    FAILIO_KILL_TORN after the first pages of a write that spans pages (where
    the kernel lets a kill cut a write), on the small archive and on one of
    200 entries (a central directory over 4096 bytes), larger and smaller
    model, with and without fallocate. After each kill the archive must open
    in all four readers and hold the old or the new model, the same in
    onnxzip (`ls --json`) and zipfile. The one exception allowed (spec 15.6):
    a shadow end whose directory copy (over a page: 200 entries) is not yet
    fully written — killed between step 1's two writes or during the second:
    zip tools that know no update trailer may reject it, onnxzip must read
    the old model; it must be at one call of the update only.

After every run of the first three: exit status 0 <=> the archive holds the new model, any
other status <=> the archive is byte-identical to before, and the file opens
in libzip (libzip_oracle), `unzip -t`, Python's zipfile (testzip) and
`onnxzip verify`. Prints the counts; exits 1 on any failed check.

The ENOSPC sweep needs root (mount). Not root: prints "SKIPPED: ..." and
exits 77. Root but the mount fails: that is a failure (exit 1), never a
silent pass.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PAGE = 4096
MODEL = "__MODEL_PROTO"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)
    return ok


def make_inputs(exe, work, n=4, tag=""):
    """An archive (n tensor entries, a ~300 KB model) and two models that
    reference the same entries: ~120 KB and ~420 KB."""
    inits = [numpy_helper.from_array(np.full((3000 + 500 * i) if n <= 4 else 64, i, np.float32), f"w{i}")
             for i in range(n)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3000])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3000])
    g = helper.make_graph([helper.make_node("Add", ["x", "w0"], ["y"])], "g", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    m.doc_string = "o" * 300_000
    src = os.path.join(work, tag + "m.onnx")
    onnx.save(m, src)
    arc = os.path.join(work, tag + "a.onnxzip")
    subprocess.run([exe, "pack", "-q", "--no-sync", "--size-threshold", "64", src, "-o", arc], check=True)
    with zipfile.ZipFile(arc) as z:
        packed = onnx.load_from_string(z.read(MODEL))
    news = {}
    for name, n in (("larger", 420_000), ("smaller", 120_000)):
        packed.doc_string = name[0] * n
        p = os.path.join(work, tag + name + ".onnx")
        with open(p, "wb") as f:
            f.write(packed.SerializeToString())
        news[name] = p
    return arc, news


def read(path):
    with open(path, "rb") as f:
        return f.read()


def zip_readers(libzip, path):
    """(problems, model bytes or None): the archive through libzip, `unzip -t`
    and Python's zipfile (every CRC tested, __MODEL_PROTO read)."""
    bad = []
    for name, cmd in (("libzip", [libzip, path]), ("unzip -t", ["unzip", "-tqq", path])):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            bad.append(f"{name}: {' '.join((r.stderr or r.stdout).split())[:200]}")
    model = None
    try:
        with zipfile.ZipFile(path) as z:
            t = z.testzip()
            if t is not None:
                bad.append(f"zipfile: bad CRC in {t}")
            model = z.read(MODEL)
    except Exception as e:  # noqa: BLE001 - any failure to read is the finding
        bad.append(f"zipfile: {e}")
    return bad, model


class Oracles:
    def __init__(self, exe, libzip):
        self.exe, self.libzip = exe, libzip
        self.runs = self.unreadable = 0

    def readable(self, path, label):
        """Opens in every reader; returns the model bytes (None if any fails)."""
        bad, model = zip_readers(self.libzip, path)
        r = subprocess.run([self.exe, "verify", path], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            bad.append(f"onnxzip verify: {' '.join((r.stderr or r.stdout).split())[:200]}")
        self.runs += 1
        if bad:
            self.unreadable += 1
            check(False, f"{label}: unreadable: " + "; ".join(bad))
            return None
        return model


def onnxzip_model(exe, path):
    """(size, CRC-32) of __MODEL_PROTO as onnxzip reads it, or None."""
    r = subprocess.run([exe, "ls", "--json", path], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    e = [e for e in json.loads(r.stdout)["entries"] if e["name"] == MODEL]
    return (e[0]["size"], e[0]["crc32"]) if len(e) == 1 else None


def ends_with_shadow(path):
    """The file ends with an EOCD whose 24-byte comment is a valid update
    trailer (spec 15.2): a shadow end."""
    with open(path, "rb") as f:
        f.seek(-46, os.SEEK_END)
        e = f.read(46)
    t = e[22:]
    return (e[:4] == b"PK\5\6" and e[20:22] == b"\x18\x00" and t[:8] == b"OZUPDATE"
            and zlib.crc32(t[:20]) == int.from_bytes(t[20:], "little"))


def kill_state(o, exe, arc, models, label):
    """After a kill: 'old' or 'new' (or None on a failed check), as every
    reader sees it; 'window' for the one allowed exception (see above)."""
    third, zmodel = zip_readers(o.libzip, arc)
    r = subprocess.run([exe, "verify", arc], capture_output=True, text=True, timeout=60)
    oz = onnxzip_model(exe, arc) if r.returncode == 0 else None
    o.runs += 1
    which = {(len(m), zlib.crc32(m)): k for k, m in models.items()}
    if not check(oz in which, f"{label}: onnxzip reads neither model: {r.stderr.strip()[:200]}"):
        o.unreadable += 1
        return None
    if third and ends_with_shadow(arc) and which[oz] == "old":
        return "window"
    if third:
        o.unreadable += 1
        check(False, f"{label}: unreadable: " + "; ".join(third))
        return None
    ok = check(zmodel is not None and which.get((len(zmodel), zlib.crc32(zmodel))) == which[oz],
               f"{label}: zipfile and onnxzip read different models")
    return which[oz] if ok else None


def count_calls(exe, arc, before, new_path, base, nofalloc, count_file):
    """(env, calls): the shim's environment (without fallocate when asked) and
    how many calls an update of the archive `before` to `new_path` makes,
    counted by one unfailed run."""
    env = dict(os.environ, **base)
    if nofalloc:
        env["FAILIO_NO_FALLOCATE"] = "1"
    with open(arc, "wb") as f:
        f.write(before)
    subprocess.run([exe, "set-model", "-q", arc, new_path], check=True, env=env)
    return env, int(read(count_file))


def sweep_kill(o, exe, work, archives, shim):
    """Kills the update before each of its calls (and mid-write, torn)."""
    arc = os.path.join(work, "kill.onnxzip")
    count_file = os.path.join(work, "count")
    points = windows = 0
    unreadable = o.unreadable
    base = {"LD_PRELOAD": shim, "FAILIO_COUNT": count_file,
            "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
    for arc_label, before, news in archives:
        with open(arc, "wb") as f:
            f.write(before)
        with zipfile.ZipFile(arc) as z:
            old_model = z.read(MODEL)
            cd_size = len(before) - z.start_dir - 22
        big_cd = cd_size > PAGE  # the shadow cannot be written in one page
        for nofalloc in (False, True):
            for name, new_path in news.items():
                models = {"old": old_model, "new": read(new_path)}
                env, calls = count_calls(exe, arc, before, new_path, base, nofalloc, count_file)
                seen = {"new": 0, "old": 0, "window": 0, None: 0}
                at = set()  # the calls whose kill left the window
                for torn in (False, True):
                    for n in range(1, calls + 1):
                        with open(arc, "wb") as f:
                            f.write(before)
                        env["FAILIO_KILL_AT"] = str(n)
                        env.pop("FAILIO_KILL_TORN", None)
                        if torn:
                            env["FAILIO_KILL_TORN"] = "1"
                        r = subprocess.run([exe, "set-model", "-q", arc, new_path], capture_output=True, text=True,
                                           timeout=60, env=env)
                        label = (f"{arc_label}: killed at call {n}/{calls}{' (torn)' * torn}, {name} model"
                                 + (", no fallocate" * nofalloc))
                        check(r.returncode == -9, f"{label}: not killed (exit {r.returncode})")
                        state = kill_state(o, exe, arc, models, label)
                        seen[state] += 1
                        at |= {n} if state == "window" else set()
                        points += 1
                windows += seen["window"]
                check(len(at) <= 1 and (big_cd or not at),
                      f"{arc_label}, {name}: zip tools could not read the file after kills at calls {sorted(at)}")
                check(seen["old"] > 0 and seen["new"] > 0, f"{arc_label}, {name}: kills saw {seen}")
                print(f"{arc_label} (central directory: {cd_size} bytes), {name} model{', no fallocate' * nofalloc}: killed before each of {calls} calls "
                      f"and torn at each: {seen['old']} old model, {seen['new']} new model, {seen['window']} in the "
                      f"shadow-copy window (onnxzip: old), {seen[None]} bad")
    check(big_cd, f"{arc_label}: a central directory of {cd_size} bytes, not over a page")
    print(f"kill sweep: {points} kill points, {windows} in the step-1 window, {o.unreadable - unreadable} unreadable")
    return points


def truthful(o, arc, before, new_model, r, label):
    """Exit status 0 <=> new model in place; non-zero <=> byte-identical.
    Returns 'new' or 'old' (or None on a failed check)."""
    model = o.readable(arc, label)
    after = read(arc)
    if r.returncode == 0:
        ok = check(model == new_model, f"{label}: exit 0 but the archive does not hold the new model")
        return "new" if ok else None
    ok = check(r.returncode == 1, f"{label}: exit status {r.returncode}: {r.stderr.strip()}")
    ok &= check(after == before, f"{label}: exit {r.returncode} ({r.stderr.strip()}) but the archive changed "
                f"({len(before)} -> {len(after)} bytes)")
    ok &= check("unchanged" in r.stderr, f"{label}: a failure that does not say the archive is unchanged: "
                f"{r.stderr.strip()}")
    return "old" if ok else None


def run_peak_rss(cmd, timeout=60):
    """(returncode, stderr, peak RSS in KiB) of cmd; kills it after timeout."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stderr=err, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                return None, "timed out (hung)", 0
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, err.read().decode(errors="replace"), ru.ru_maxrss


def input_checks(exe, arc0, news, work):
    arc = os.path.join(work, "in.onnxzip")
    shutil.copyfile(arc0, arc)
    before = read(arc)
    fifo, d, sparse = (os.path.join(work, n) for n in ("fifo", "dir", "sparse.onnx"))
    os.mkfifo(fifo)
    os.mkdir(d)
    with open(sparse, "wb") as f:
        f.truncate((2 << 30) + PAGE)
    link, sym = arc + ".link", arc + ".sym"
    os.link(arc, link)
    os.symlink(os.path.basename(arc), sym)
    cases = [("/dev/zero", "ENOTREG"), (fifo, "ENOTREG"), (d, "ENOTREG"), (sparse, "ELIMIT"),
             (arc, "ESAMEFILE"), (link, "ESAMEFILE"), (sym, "ESAMEFILE")]
    for model, status in cases:
        rc, err, rss = run_peak_rss([exe, "set-model", arc, model])
        label = f"set-model ARCHIVE {model}"
        check(rc == 1 and f"ONNXZIP_{status}" in err, f"{label}: expected ONNXZIP_{status}, got {rc}: {err.strip()}")
        check(rss < 256 * 1024, f"{label}: peak RSS {rss} KiB: the input was read")
        check(read(arc) == before, f"{label}: the archive changed")
    # The archive must be a regular file too.
    for target in ("/dev/null", fifo, d):
        rc, err, _ = run_peak_rss([exe, "set-model", target, news["smaller"]])
        check(rc == 1 and "ONNXZIP_ENOTREG" in err, f"set-model {target} NEW: expected ONNXZIP_ENOTREG, got {rc}: "
              f"{err.strip()}")
    print(f"inputs: {len(cases)} refused models and 3 refused archives checked (ENOTREG/ELIMIT/ESAMEFILE, "
          "nothing read, archive unchanged)")


class Tmpfs:
    def __init__(self, size):
        self.mp = tempfile.mkdtemp(prefix="onnxzip-full-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", self.mp],
                           capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(self.mp)
            raise OSError(r.stderr.strip() or f"mount exited {r.returncode}")

    def free(self):
        s = os.statvfs(self.mp)
        return s.f_bavail * s.f_frsize

    def clear(self):
        for n in os.listdir(self.mp):
            os.unlink(os.path.join(self.mp, n))

    def fill_to(self, want):
        """Leaves exactly `want` bytes free; False if it cannot."""
        for i in range(3):
            extra = self.free() - want
            if extra <= 0:
                break
            fd = os.open(os.path.join(self.mp, f"fill{i}"), os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, extra)
            finally:
                os.close(fd)
        return self.free() == want

    def close(self):
        subprocess.run(["umount", self.mp], check=False)
        os.rmdir(self.mp)


def sweep_full(o, exe, fs, before, news, shim):
    modes = [("fallocate", {})]
    if shim:
        modes.append(("zero-fill fallback", {"LD_PRELOAD": shim, "FAILIO_NO_FALLOCATE": "1",
                                             "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
                                             ":verify_asan_link_order=0"}))
    arc = os.path.join(fs.mp, "a.onnxzip")
    levels = 0
    for mode, extra in modes:
        env = dict(os.environ, **extra)
        for name, new_path in news.items():
            new_model = read(new_path)
            top = (2 * len(new_model) + 65536) // PAGE + 1
            seen = {"new": 0, "old": 0, None: 0}
            first_ok, compacted = None, 0
            fs.clear()
            with open(arc, "wb") as f:
                f.write(before)
            subprocess.run([exe, "set-model", "-q", arc, new_path], check=True, env=env)
            compact_size = os.path.getsize(arc)  # with room to spare: no dead space
            for k in range(top + 1):
                fs.clear()
                with open(arc, "wb") as f:
                    f.write(before)
                if not check(fs.fill_to(k * PAGE), f"cannot leave exactly {k} pages free on the tmpfs"):
                    return levels
                r = subprocess.run([exe, "set-model", "-q", arc, new_path], capture_output=True, text=True,
                                   timeout=60, env=env)
                label = f"ENOSPC {mode}, {name} model, {k} pages free"
                state = truthful(o, arc, before, new_model, r, label)
                seen[state] += 1
                levels += 1
                if state == "new":
                    first_ok = k if first_ok is None else first_ok
                    compacted += os.path.getsize(arc) == compact_size
            check(seen["new"] > 0 and seen["old"] > 0, f"ENOSPC {mode}, {name}: the sweep did not cross the "
                  f"threshold ({seen})")
            print(f"ENOSPC {mode}, {name} model ({len(new_model)} bytes): {top + 1} fill levels, "
                  f"{seen['old']} refused (unchanged), {seen['new']} updated ({compacted} compacted), "
                  f"from {first_ok} free pages on")
    fs.clear()
    return levels


def sweep_eio(o, exe, work, before, news, shim):
    arc = os.path.join(work, "eio.onnxzip")
    count_file = os.path.join(work, "count")
    runs = 0
    base = {"LD_PRELOAD": shim, "FAILIO_COUNT": count_file,
            "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
    for nofalloc in (False, True):
        for name, new_path in news.items():
            new_model = read(new_path)
            env, calls = count_calls(exe, arc, before, new_path, base, nofalloc, count_file)
            seen = {"new": 0, "old": 0, None: 0}
            for errno_ in (5, 28):  # EIO, ENOSPC
                for n in range(1, calls + 1):
                    with open(arc, "wb") as f:
                        f.write(before)
                    env.update(FAILIO_AT=str(n), FAILIO_ERRNO=str(errno_))
                    r = subprocess.run([exe, "set-model", "-q", arc, new_path], capture_output=True, text=True,
                                       timeout=60, env=env)
                    label = f"errno {errno_} at call {n}/{calls}, {name} model" + (", no fallocate" * nofalloc)
                    seen[truthful(o, arc, before, new_model, r, label)] += 1
                    runs += 1
            print(f"EIO/ENOSPC at each of {calls} calls, {name} model{', no fallocate' * nofalloc}: "
                  f"{seen['old']} refused (unchanged), {seen['new']} updated")
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("onnxzip")
    ap.add_argument("libzip_oracle")
    ap.add_argument("--shim", help="failio_shim.so (LD_PRELOAD write-failure injection)")
    ap.add_argument("--kill-only", action="store_true", help="only the kill sweep (needs --shim)")
    a = ap.parse_args()
    exe, shim = os.path.abspath(a.onnxzip), a.shim and os.path.abspath(a.shim)
    o = Oracles(exe, os.path.abspath(a.libzip_oracle))
    with tempfile.TemporaryDirectory(prefix="onnxzip-setmodel-") as work:
        arc, news = make_inputs(exe, work)
        before = read(arc)
        if a.kill_only:
            arc200, news200 = make_inputs(exe, work, 200, "n200-")
            sweep_kill(o, exe, work, [("4 entries", before, news), ("200 entries", read(arc200), news200)], shim)
            print(f"setmodel_full: {o.runs} states checked, {o.unreadable} unreadable, {len(failures)} failed checks")
            return 1 if failures else 0
        input_checks(exe, arc, news, work)
        if shim:
            sweep_eio(o, exe, work, before, news, shim)
            arc200, news200 = make_inputs(exe, work, 200, "n200-")
            sweep_kill(o, exe, work, [("4 entries", before, news), ("200 entries", read(arc200), news200)], shim)
        else:
            print("EIO sweep: not run (no --shim given)")
        if os.geteuid() != 0:
            print(f"SKIPPED: ENOSPC sweep not run: it mounts a tmpfs, which needs root (euid {os.geteuid()})")
            print(f"setmodel_full: {o.runs} states checked, {o.unreadable} unreadable, {len(failures)} failed checks")
            return 1 if failures else 77
        try:
            fs = Tmpfs("4m")
        except OSError as e:
            check(False, f"ENOSPC sweep not run: running as root, but cannot mount a tmpfs: {e}")
        else:
            try:
                sweep_full(o, exe, fs, before, news, shim)
            finally:
                fs.close()
    print(f"setmodel_full: {o.runs} states checked, {o.unreadable} unreadable, {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
