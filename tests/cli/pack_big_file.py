#!/usr/bin/python3
"""pack_big_file — a package holds a repository's file of any size (issue 35).

    pack_big_file.py ONNXZIP_EXE MAXRSS_EXE --remote|--no-remote [--keep DIR]

(--no-remote: a CLI built without HTTP, -Dcurl=disabled; its remote checks
are not run, and the script says so.)

A folder as a Hugging Face repository ships it: a small model
(`onnx/model.onnx` with a tensor entry), `config.json`, `tokenizer.json`
(whose entry follows the shards), and safetensors
shards beside it — `model-00001-of-00002.safetensors` of 4,400,000,000
bytes (over 4 GiB: a zip64 entry) and `model-00002-of-00002.safetensors` of
128 MiB + 123 bytes, both SPARSE (made with truncate; 4 KiB of random bytes
at the start, the middle and the end), so that the test costs little disk.

* `pack DIR` exits 0 and the package stays sparse (the writer copies holes
  as holes: under 64 MiB of blocks for 4.4 GB of bytes);
* independent readers: Python's zipfile (the entry's size, STORED, its
  central record carrying the zip64 extra field 0x0001 whose sizes are the
  file's; its data, at a multiple of 64, holds the random blocks at their
  offsets), `unzip -l` and `7z l -slt` list it with its size;
* `ls --json` lists both shards with their sizes; `verify` passes;
* `extract --file` of the big shard: byte for byte with the original (where
  either file has data, by SEEK_DATA; holes read as zeros), peak RSS
  under 64 MiB (streamed, not one 4.4 GB buffer), the output sparse;
* `unpack`: every file byte for byte, peak RSS
  under 64 MiB, the big shard sparse;
* over HTTP (a private nginx, tests/remote/servers.py), `extract URL
  --file`: the 128 MiB shard through ranged reads of at most 8 MiB each
  (several ranges), to a file and to standard output (`-o -`), each with a
  peak RSS under 96 MiB (a whole-file buffer would not pass it; the reads
  are batches of up to 32 MiB, checked as they arrive, and the sanitizers'
  build adds its own), and `tokenizer.json`, whose entry
  lies past the 4 GiB mark, by a range beyond 2^32. (The big shard over
  HTTP is left out: 4.4 GB through 8 MiB ranges is ~13 s here.)

Each output is removed once checked. Prints each step's time and the disk
blocks in use at the end (the peak), then "pack_big_file: N passed, M failed".
"""
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "remote"))
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import ozcommon  # noqa: E402

BIG, BIG_SIZE = "model-00001-of-00002.safetensors", 4_400_000_000
MID, MID_SIZE = "model-00002-of-00002.safetensors", (128 << 20) + 123
RSS_LIMIT_KIB = 64 << 10
REMOTE_RSS_LIMIT_KIB = 96 << 10  # under MID_SIZE: no whole-file buffer
SPARSE_LIMIT = 64 << 20   # bytes of blocks a sparse file may use
RANGE_MAX = 8 << 20       # the reader's ranges for a file (read/member_copy.c)
BLOCK = 4096


def sparse_file(path, size, seed):
    """`size` bytes: holes, with BLOCK random bytes at the start, the middle
    and the end. Returns {offset: bytes} of the blocks written."""
    import random
    rng = random.Random(seed)
    blocks = {}
    with open(path, "wb") as f:
        f.truncate(size)
        for off in (0, size // 2, size - BLOCK):
            blocks[off] = bytes(rng.getrandbits(8) for _ in range(BLOCK))
            f.seek(off)
            f.write(blocks[off])
    return blocks


def make_folder(root):
    os.makedirs(os.path.join(root, "onnx"))
    w = helper.make_tensor("w", TensorProto.FLOAT, [16, 16], bytes(range(256)) * 4, raw=True)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(root, "onnx", "model.onnx"))
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump({"model_type": "bert", "hidden_size": 16}, f)
    with open(os.path.join(root, "tokenizer.json"), "w") as f:  # after the shards: its entry lies past 4 GiB
        json.dump({"version": "1.0", "model": {"type": "WordPiece"}}, f)
    return {BIG: sparse_file(os.path.join(root, BIG), BIG_SIZE, 1),
            MID: sparse_file(os.path.join(root, MID), MID_SIZE, 2)}


def disk_bytes(path):
    if os.path.isfile(path):
        return os.stat(path).st_blocks * 512
    return sum(os.stat(os.path.join(d, f)).st_blocks * 512 for d, _, fs in os.walk(path) for f in fs)


def measured(maxrss, args, timeout=300):
    """(completed process, peak RSS in KiB, seconds) of args under maxrss."""
    t0 = time.time()
    p = subprocess.run([maxrss] + args, capture_output=True, timeout=timeout)
    err = p.stderr.decode(errors="replace")
    rss = next((int(x.split()[1]) for x in err.splitlines() if x.startswith("maxrss: ")), -1)
    return p, rss, time.time() - t0


def data_segments(fd, size):
    """The file's data as the kernel reports it (SEEK_DATA/SEEK_HOLE)."""
    segs, off = [], 0
    while off < size:
        try:
            start = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:   # ENXIO: only a hole is left
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        segs.append((start, end))
        off = end
    return segs


def same_file(a, b):
    """Byte for byte. Holes read as zeros, so only where either file has
    data need be read (cmp would read 2 x 4.4 GB of zeros: ~20 s here);
    without SEEK_DATA, cmp."""
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    size = os.path.getsize(a)
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            segs = sorted(data_segments(fa.fileno(), size) + data_segments(fb.fileno(), size))
            for start, end in segs:
                for at in range(start, end, 1 << 20):
                    n = min(1 << 20, end - at)
                    if os.pread(fa.fileno(), n, at) != os.pread(fb.fileno(), n, at):
                        return False
            return True
    except OSError:
        return subprocess.run(["cmp", a, b], capture_output=True).returncode == 0


def zip64_extra_sizes(extra):
    """The zip64 extra field (0x0001) of a central record: its 64-bit values."""
    import struct
    i = 0
    while i + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, i)
        if tag == 1:
            return [struct.unpack_from("<Q", extra, i + 4 + k)[0] for k in range(0, n - n % 8, 8)]
        i += 4 + n
    return None


def check_zipfile(t, pkg, blocks):
    import struct
    with zipfile.ZipFile(pkg) as z:
        info = z.getinfo(BIG)
        t.check(info.file_size == BIG_SIZE and info.compress_size == BIG_SIZE, "zipfile: the big entry's sizes",
                f"{info.file_size} / {info.compress_size}")
        t.check(info.compress_type == zipfile.ZIP_STORED, "zipfile: STORED", str(info.compress_type))
        sizes = zip64_extra_sizes(info.extra)
        t.check(sizes is not None and BIG_SIZE in sizes, "zipfile: zip64 extra field with the size",
                f"{sizes} in {info.extra.hex()}")
        later = z.getinfo("tokenizer.json")
        t.check(later.header_offset > 1 << 32, "zipfile: tokenizer.json's local header lies past 4 GiB",
                str(later.header_offset))
        with open(os.path.join(os.path.dirname(pkg), "repo", "tokenizer.json"), "rb") as f:
            t.check(z.read("tokenizer.json") == f.read(), "zipfile: tokenizer.json's bytes")
    with open(pkg, "rb") as f:
        f.seek(info.header_offset)
        hdr = f.read(30)
        name_len, extra_len = struct.unpack_from("<HH", hdr, 26)
        data = info.header_offset + 30 + name_len + extra_len
        t.check(hdr[:4] == b"PK\x03\x04" and data % 64 == 0, "the big entry's data aligned to 64", str(data))
        for off, want in blocks.items():
            f.seek(data + off)
            t.check(f.read(BLOCK) == want, f"the big entry's bytes at {off}")


def check_listers(t, pkg):
    p = ozcommon.run(["unzip", "-l", pkg])
    line = [x for x in p.stdout.decode().splitlines() if x.rstrip().endswith(BIG)]
    t.check(p.returncode == 0 and line and line[0].split()[0] == str(BIG_SIZE), "unzip -l lists the big file",
            f"exit {p.returncode}: {line or p.stdout.decode()[-500:]}")
    p = ozcommon.run(["7z", "l", "-slt", pkg])
    out = p.stdout.decode()
    rec = out[out.find(f"Path = {BIG}"):].split("\n\n")[0]
    t.check(p.returncode == 0 and f"Size = {BIG_SIZE}" in rec, "7z l lists the big file",
            f"exit {p.returncode}: {rec or out[-500:]}")


def check_remote(t, exe, maxrss, d):
    from servers import Nginx
    with Nginx(d) as n:
        url = n.base_url + "/files/p.onnxzip"
        out = os.path.join(d, "remote.bin")
        p, rss, dt = measured(maxrss, [exe, "extract", "--allow-http", url, "--file", MID, "-o", out])
        print(f"  extract URL --file {MID}: {dt:.1f} s, peak RSS {rss} KiB")
        t.check(p.returncode == 0, "extract URL --file (128 MiB)", p.stderr.decode(errors="replace")[-500:])
        t.check(p.returncode == 0 and same_file(out, os.path.join(d, "repo", MID)), "its bytes")
        t.check(0 < rss < REMOTE_RSS_LIMIT_KIB, "its peak RSS", f"{rss} KiB")
        ranges = [r["bytes"] for r in n.requests() if r["status"] == 206]
        t.check(len(ranges) >= 3 and max(ranges) <= RANGE_MAX + 65536, "ranged reads of at most 8 MiB",
                str(ranges))
        os.unlink(out) if os.path.exists(out) else None
        with open(out, "wb") as f:
            t0 = time.time()
            p = subprocess.run([maxrss, exe, "extract", "--allow-http", url, "--file", MID, "-o", "-"], stdout=f,
                               stderr=subprocess.PIPE, timeout=300)
        err = p.stderr.decode(errors="replace")
        rss = next((int(x.split()[1]) for x in err.splitlines() if x.startswith("maxrss: ")), -1)
        print(f"  extract URL --file {MID} -o -: {time.time() - t0:.1f} s, peak RSS {rss} KiB")
        t.check(p.returncode == 0 and same_file(out, os.path.join(d, "repo", MID)), "extract URL --file -o -", err)
        t.check(0 < rss < REMOTE_RSS_LIMIT_KIB, "its peak RSS", f"{rss} KiB")
        os.unlink(out)
        before = len(n.requests())
        p = ozcommon.run([exe, "extract", "--allow-http", url, "--file", "tokenizer.json", "-o", out])
        t.check(p.returncode == 0 and same_file(out, os.path.join(d, "repo", "tokenizer.json")),
                "extract URL --file tokenizer.json (past 4 GiB)", p.stderr.decode(errors="replace")[-500:])
        starts = [int(r["range"].split("=")[1].split("-")[0]) for r in n.requests()[before:]
                  if r["range"] and not r["range"].startswith("bytes=-")]
        t.check(any(s > 1 << 32 for s in starts), "a range beyond 2^32", str(starts))
        os.unlink(out) if os.path.exists(out) else None


def main(argv):
    args = [a for a in argv[1:] if a != "--keep"]
    if "--keep" in argv:
        args.remove(argv[argv.index("--keep") + 1])
    if len(args) != 3 or args[2] not in ("--remote", "--no-remote"):
        print(__doc__, file=sys.stderr)
        return 2
    exe, maxrss, remote = args
    t = ozcommon.Tally()
    with ozcommon.workdir(argv, "pack_big_file") as d:
        root, pkg = os.path.join(d, "repo"), os.path.join(d, "p.onnxzip")
        blocks = make_folder(root)
        p, rss, dt = measured(maxrss, [exe, "pack", root, "-o", pkg])
        print(f"  pack: {dt:.1f} s, peak RSS {rss} KiB, package {os.path.getsize(pkg) if p.returncode == 0 else 0} "
              f"bytes in {disk_bytes(pkg) if p.returncode == 0 else 0} bytes of blocks")
        if not t.check(p.returncode == 0, "pack DIR with a 4.4 GB file", p.stderr.decode(errors="replace")[-800:]):
            print(f"pack_big_file: {t.passed} passed, {t.failed} failed")
            return 1
        t.check(disk_bytes(pkg) < SPARSE_LIMIT, "the package stays sparse", f"{disk_bytes(pkg)} bytes of blocks")
        check_zipfile(t, pkg, blocks[BIG])
        check_listers(t, pkg)

        p = ozcommon.run([exe, "ls", "--json", pkg])
        files = {f["path"]: f["size"] for f in json.loads(p.stdout)["files"]} if p.returncode == 0 else {}
        t.check(files.get(BIG) == BIG_SIZE and files.get(MID) == MID_SIZE, "ls --json: the shards' sizes",
                str(files) or p.stderr.decode(errors="replace"))
        t0 = time.time()
        p = ozcommon.run([exe, "verify", pkg], timeout=300)
        print(f"  verify: {time.time() - t0:.1f} s")
        t.check(p.returncode == 0, "verify", p.stderr.decode(errors="replace")[-500:])

        out = os.path.join(d, "big.out")
        p, rss, dt = measured(maxrss, [exe, "extract", pkg, "--file", BIG, "-o", out])
        print(f"  extract --file: {dt:.1f} s, peak RSS {rss} KiB")
        t.check(p.returncode == 0, "extract --file of the big file", p.stderr.decode(errors="replace")[-500:])
        if p.returncode == 0:
            t.check(same_file(out, os.path.join(root, BIG)), "extract --file: byte for byte with the original")
            t.check(disk_bytes(out) < SPARSE_LIMIT, "extract --file: sparse", f"{disk_bytes(out)} bytes of blocks")
            os.unlink(out)
        t.check(0 < rss < RSS_LIMIT_KIB, "extract --file: peak RSS (streamed)", f"{rss} KiB")

        un = os.path.join(d, "unpacked")
        p, rss, dt = measured(maxrss, [exe, "unpack", pkg, un])
        print(f"  unpack: {dt:.1f} s, peak RSS {rss} KiB")
        t.check(p.returncode == 0, "unpack", p.stderr.decode(errors="replace")[-500:])
        if p.returncode == 0:
            for rel in (BIG, MID, "config.json", "tokenizer.json", "onnx/model.onnx"):
                t.check(same_file(os.path.join(un, rel), os.path.join(root, rel)), f"unpack: {rel} byte for byte")
            t.check(disk_bytes(os.path.join(un, BIG)) < SPARSE_LIMIT, "unpack: the big file sparse",
                    f"{disk_bytes(os.path.join(un, BIG))} bytes of blocks")
            print(f"  disk in use at the peak: {disk_bytes(d)} bytes of blocks")
            shutil.rmtree(un)
        t.check(0 < rss < RSS_LIMIT_KIB, "unpack: peak RSS (streamed)", f"{rss} KiB")

        if remote == "--remote":
            check_remote(t, exe, maxrss, d)
        else:
            print("  extract URL: not checked, this CLI is built without HTTP (-Dcurl=disabled)")
    print(f"pack_big_file: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
