#!/usr/bin/python3
"""zipcorpus — other projects' malformed and odd zip files must be refused
cleanly.

    zipcorpus.py ONNXZIP_EXE CORPUS_DIR

Runs `onnxzip verify` and `onnxzip ls --json` on every *.zip under
CORPUS_DIR/zip (libzip's inconsistent archives, yauzl's failure and success
cases). None of them is an onnxzip archive (none has __MODEL_PROTO), so verify
must exit 1 with one stderr line "onnxzip: ... [ONNXZIP_E...]"; neither command
may die from a signal. Prints the status of each file and
"zipcorpus: N passed, M failed"; exits 77 with "corpus absent: PATH" when the
corpus is not there.
"""
import collections
import os
import re
import sys

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ozcommon  # noqa: E402

LINE = re.compile(r"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip, corpus = argv[1], argv[2]
    zdir = os.path.join(corpus, "zip")
    if not os.path.isdir(zdir):
        print(f"corpus absent: {zdir}")
        return 77
    files = []
    for root, dirs, fs in os.walk(zdir):
        dirs.sort()
        files += [os.path.join(root, f) for f in sorted(fs) if f.endswith(".zip")]
    passed = failed = 0
    hist = collections.Counter()
    for f in files:
        rel = os.path.relpath(f, zdir)
        p = ozcommon.run([onnxzip, "verify", f], timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        lines = [x for x in err.splitlines() if x.strip()]
        problem = None
        if p.returncode < 0:
            problem = f"verify killed by signal {-p.returncode}"
        elif p.returncode != 1:
            problem = f"verify exited {p.returncode}, expected 1"
        elif len(lines) != 1 or not LINE.match(lines[0]):
            problem = f"stderr is not one 'onnxzip: ... [ONNXZIP_E...]' line: {err.strip()[:200]!r}"
        else:
            hist[LINE.match(lines[0]).group(1)] += 1
        if problem is None:
            q = ozcommon.run([onnxzip, "ls", f, "--json"], timeout=60)
            if q.returncode < 0:
                problem = f"ls killed by signal {-q.returncode}"
            elif q.returncode == 0:
                problem = "ls --json exited 0 on an archive verify refuses"
        if problem:
            failed += 1
            print(f"FAIL {rel}: {problem}")
        else:
            passed += 1
            print(f"ok   {rel}: {LINE.match(lines[0]).group(1)}")
    print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(hist.items())))
    print(f"zipcorpus: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
