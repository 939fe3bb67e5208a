#!/usr/bin/python3
"""compare.py — the same inputs through two builds of the onnxzip CLI (the
x86-64 reference and a cross build run under its exe wrapper) must give
byte-identical outputs: archives from `pack` (several option sets, typed
fields converted to raw little-endian bytes), the files of `unpack`, `view`,
the bytes of `extract` for every tensor, `ls --json`, an archive after
`set-model` (the in-place model update) and `repack` of a deflated re-zip
(when both builds have libzip).
The cross build must also `verify` what it wrote and what the reference
wrote.

  compare.py --reference CLI --cross CLI [--wrapper 'qemu-s390x -L DIR'] [--corpus DIR]

With --reader DIGEST CROSS_DIGEST (a build with the reader only, as on
Windows), the reference CLI packs each model and unpacks it into the classic
layouts instead, and tests/support/read_digest.c built both ways must print the same
for every file: each tensor's type, shape, storage, size, XXH3 of its bytes,
and verify's status.

Inputs: the models of tests/cli/testmodels.py (built with Debian's onnx
package) and, when the shared corpus is present, its models."""
import argparse
import filecmp
import json
import os
import shlex
import subprocess
import sys
import shutil
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import testmodels  # noqa: E402

PACK_OPTIONS = [[], ["--size-threshold", "1", "--align", "4096"], ["--dedup", "--keep-typed"]]


class Mismatch(Exception):
    pass


def run(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise Mismatch(f"{what}: {' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
    return p.stdout


def same_tree(a, b, what):
    """Every file below a and b, byte for byte, and the same names."""
    names_a = sorted(os.path.relpath(os.path.join(d, f), a) for d, _, fs in os.walk(a) for f in fs)
    names_b = sorted(os.path.relpath(os.path.join(d, f), b) for d, _, fs in os.walk(b) for f in fs)
    if names_a != names_b:
        raise Mismatch(f"{what}: files differ: {names_a} vs {names_b}")
    for n in names_a:
        if not filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False):
            raise Mismatch(f"{what}: {n} differs")
    return len(names_a)


def edits(arc, d, cli, side, repack):
    """set-model with the model plus a doc_string (ModelProto field 6), and
    (`repack`: when both builds have libzip) repack of the archive re-zipped
    with deflate; both written into d."""
    with zipfile.ZipFile(arc) as z:
        model = z.read("__MODEL_PROTO")
        rezip = os.path.join(d, "..", f"{side}-deflated.zip")
        if repack:
            with zipfile.ZipFile(rezip, "w", zipfile.ZIP_DEFLATED) as out:
                for n in z.namelist():
                    out.writestr(n, z.read(n))
    new_model = os.path.join(d, "..", f"{side}-new.onnx")
    with open(new_model, "wb") as f:
        note = b"edited by set-model"
        f.write(model + bytes([6 << 3 | 2, len(note)]) + note)
    edited = os.path.join(d, "edited.onnxzip")
    shutil.copyfile(arc, edited)
    run(cli + ["set-model", edited, new_model, "-q"], f"{side} set-model")
    if repack:
        run(cli + ["repack", rezip, "-o", os.path.join(d, "repacked.onnxzip"), "--align", "4096", "-q"],
            f"{side} repack")


def has_repack(cli):
    """Whether the CLI's library was built with libzip (--version says)."""
    return "repack (libzip) yes" in run(cli + ["--version"], "--version").decode(errors="replace")


def compare_model(model, ref, cross, work, repack):
    """Returns the number of outputs compared."""
    count = 0
    for i, opts in enumerate(PACK_OPTIONS):
        outs = {}
        for side, cli in (("ref", ref), ("cross", cross)):
            d = os.path.join(work, f"{side}{i}")
            for sub in ("unpacked", "extract"):
                os.makedirs(os.path.join(d, sub))
            arc = os.path.join(d, "m.onnxzip")
            run(cli + ["pack", model, "-o", arc, "-q", "--no-sync"] + opts, f"{side} pack")
            run(cli + ["unpack", arc, "-o", os.path.join(d, "unpacked", "m.onnx"), "-q", "--no-sync"],
                f"{side} unpack")
            run(cli + ["view", arc, "-o", os.path.join(d, "m.view.onnx")], f"{side} view")
            listing = json.loads(run(cli + ["ls", arc, "--json"], f"{side} ls"))
            # extract gives raw bytes; typed fields have none (ONNXZIP_EUNSUPPORTED on every host)
            names = sorted({t["name"] for t in listing.get("tensors", [])
                            if t.get("name") and t.get("storage") != "typed"})
            for k, name in enumerate(names):
                run(cli + ["extract", arc, name, "-o", os.path.join(d, "extract", f"{k}.bin"), "-q"],
                    f"{side} extract {name!r}")
            if i == 0:
                edits(arc, d, cli, side, repack)
            # ls --json names the archive by path, and a tensor's alignment
            # is that of its address in memory (where the host mapped the
            # file): compare without them.
            listing.pop("archive", None)
            for t in listing.get("tensors", []):
                t.pop("alignment", None)
            outs[side] = (d, listing)
        (rd, rl), (cd, cl) = outs["ref"], outs["cross"]
        # view.onnx names the archive relative to itself; the trees hold the
        # same relative layout, so they compare byte for byte.
        count += same_tree(rd, cd, f"{os.path.basename(model)} {' '.join(opts) or '(defaults)'}")
        if rl != cl:
            raise Mismatch(f"{os.path.basename(model)}: ls --json differs")
        count += 1
        # Each build verifies the other's archive.
        run(cross + ["verify", os.path.join(rd, "m.onnxzip")], "cross verify of the reference archive")
        run(ref + ["verify", os.path.join(cd, "m.onnxzip")], "reference verify of the cross archive")
    return count


def compare_reader(model, cli, digests, work):
    """The reference CLI writes the archive and its classic layouts; both
    read_digest builds read them (relative paths: the same text for both)."""
    os.makedirs(work)
    run(cli + ["pack", model, "-o", os.path.join(work, "m.onnxzip"), "-q", "--no-sync"], "pack")
    files = ["m.onnxzip"]
    for layout in ("single", "per-tensor", "inline"):
        out = os.path.join(layout, "m.onnx")
        os.makedirs(os.path.join(work, layout))
        p = subprocess.run(cli + ["unpack", "m.onnxzip", "-o", out, "--layout", layout, "-q", "--no-sync"],
                           cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode == 0:  # inline fails for models over 2 GiB: not a reader question
            files.append(out)
    outs = [subprocess.run(d + files, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for d in digests]
    texts = [o.stdout.replace(b"\r\n", b"\n") for o in outs]
    for o in outs:
        if o.returncode != 0:
            raise Mismatch(f"{os.path.basename(model)}: read_digest exited {o.returncode}: "
                           f"{o.stderr.decode(errors='replace')[-2000:]}")
    if texts[0] != texts[1]:
        raise Mismatch(f"{os.path.basename(model)}: read_digest outputs differ")
    return texts[0].count(b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--cross", required=True)
    ap.add_argument("--wrapper", default="")
    ap.add_argument("--corpus", default="")
    ap.add_argument("--reader", nargs=2, metavar=("DIGEST", "CROSS_DIGEST"))
    args = ap.parse_args()
    ref = [os.path.abspath(args.reference)]
    cross = shlex.split(args.wrapper) + [os.path.abspath(args.cross)]
    digests = None
    if args.reader:
        digests = [[os.path.abspath(args.reader[0])],
                   shlex.split(args.wrapper) + [os.path.abspath(args.reader[1])]]
    with tempfile.TemporaryDirectory(prefix="onnxzip-cross-") as tmp:
        models = []
        for name, build in testmodels.MODELS.items():
            path = os.path.join(tmp, name + ".onnx")
            with open(path, "wb") as f:
                f.write(build().SerializeToString())
            models.append(path)
        corpus = os.path.join(args.corpus, "models") if args.corpus else ""
        if corpus and os.path.isdir(corpus):
            models += sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".onnx"))
        else:
            print("compare: shared corpus absent; generated models only")
        total = 0
        failed = 0
        repack = not digests and has_repack(ref) and has_repack(cross)
        if not digests and not repack:
            print("compare: repack not compared (a build without libzip)")
        for i, m in enumerate(models):
            work = os.path.join(tmp, f"w{i}")
            try:
                if digests:
                    n = compare_reader(m, ref, digests, work)
                    print(f"identical: {os.path.basename(m)} ({n} lines of read_digest)")
                else:
                    n = compare_model(m, ref, cross, work, repack)
                    print(f"identical: {os.path.basename(m)} ({n} outputs)")
                total += n
            except Mismatch as e:
                failed += 1
                print(f"DIFFERENT: {e}")
        what = "lines of read_digest" if digests else "outputs byte-identical"
        print(f"compare: {len(models) - failed} passed, {failed} failed ({total} {what})")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
