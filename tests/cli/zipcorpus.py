#!/usr/bin/python3
"""zipcorpus — other projects' malformed and odd zip files must be refused
cleanly, each with a status the spec allows, and every file is counted.

    zipcorpus.py ONNXZIP_EXE CORPUS_DIR

Runs `onnxzip verify FILE` and `onnxzip ls FILE --json` (timeout 60 s each) on
EVERY file under CORPUS_DIR/zip. None of them is an onnxzip archive (none has
__MODEL_PROTO), so verify must exit 1 with one stderr line
"onnxzip: ... [ONNXZIP_E...]", ls must exit non-zero, and neither may die
from a signal or hang. Per group:

  libzip/incons-*.zip   libzip's inconsistent archives: any specific status.
                        libzip's own verdict per case is parsed from
                        libzip/open_incons.test (its "file X.zzip Y.zip" map
                        and "opening 'X.zzip' ..." lines) and printed beside
                        ours; cases libzip accepts but we refuse are listed
                        (the spec's reader is stricter: 11.2).
  yauzl/failure/*.zip   archives yauzl refuses: any specific status.
  yauzl/success/*.zip   valid zip files, but not onnxzip archives. The reader
                        checks in this order (src/read/zip_reader.c, spec 11.2):
                        end records (2.3, 6) -> per central record in CD order:
                        framing and extra fields, zip64, Disk_Start, Method
                        (EMETHOD), Flags (EFLAGS), sizes -> its local header
                        (3) -> its name (7.1: ENAME, ELIMIT, EDUPNAME) and
                        alignment (EALIGN) -> after all records: the model
                        (ENOTONNXZIP, EMODELPOS, EOVERLAP). A refusal by one
                        of those layout rules is then diagnosed
                        (src/read/zip_diagnose.c) from the whole central
                        directory: a zip with no entry named __MODEL_PROTO
                        (nor "__MODEL_PROTO.onnx") is ENOTONNXZIP, "a zip
                        archive, but not an onnxzip archive", whichever rule
                        its entries broke first; one with a model entry that
                        another tool wrote gets the status of its first
                        foreign trait (the tf2onnx name, compression, a data
                        descriptor, the model not last, unaligned data) and a
                        message naming `onnxzip repack`. Damage (records that
                        disagree, bad bounds) keeps its structural code, and a
                        file without end records that starts with a local
                        header is ETRUNC when its local headers imply more
                        bytes than it has. So every valid zip here gets
                        ENOTONNXZIP; nothing else (a structural code would
                        mean we misread a valid zip). Exception, named
                        below: yauzl success archives that real zip readers
                        accept but that break a structural rule of the spec.
  anything else         (yauzl's expected extraction contents, the libzip
                        .test file): neither zip nor ONNX model; must be
                        refused with a specific status too.

Prints a line per file, the libzip comparison table, a status histogram per
group and "zipcorpus: N passed, M failed (F files: ...)"; exits 1 on any
failure, 77 with "corpus absent: PATH" when the corpus is not there.
ONNXZIP_TEST_WRAPPER (e.g. "valgrind -q --error-exitcode=99"), when set, is
put before every onnxzip command (timeout then 600 s).
"""
import collections
import os
import re
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ozcommon  # noqa: E402

LINE = re.compile(r"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")

# yauzl/success: statuses a valid, non-onnxzip zip may get (see above).
SUCCESS_OK = {"ONNXZIP_ENOTONNXZIP"}
# yauzl/success files a general zip reader accepts but the spec's structural
# rules refuse, with the rule: file -> (allowed statuses, reason).
SUCCESS_STRUCTURAL = {
    "sloppy-filenames.zip": ({"ONNXZIP_ELOCAL", "ONNXZIP_ENAME"},
                             "central name 'a\\txt' but local name 'a.txt' (11.2 #7: ELOCAL); yauzl "
                             "reads central names only"),
}


# spec 11.2: the row that makes each status a rejection
SPEC_ROW = {"ONNXZIP_ENOTZIP": "#1", "ONNXZIP_EEOCD": "#2/#3", "ONNXZIP_ETRUNC": "#4", "ONNXZIP_EZIP64": "#5",
            "ONNXZIP_ECDIR": "#6", "ONNXZIP_ELOCAL": "#7", "ONNXZIP_EBOUNDS": "#8", "ONNXZIP_EOVERLAP": "#9",
            "ONNXZIP_EMETHOD": "#10", "ONNXZIP_EFLAGS": "#11", "ONNXZIP_EALIGN": "#12", "ONNXZIP_ENAME": "#13",
            "ONNXZIP_EDUPNAME": "#14", "ONNXZIP_ENOTONNXZIP": "#15 (no __MODEL_PROTO)"}


def parse_libzip_test(path):
    """{zip file name: libzip's verdict} from open_incons.test."""
    zzip_to_zip, verdict = {}, {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^file (\S+) (\S+)$", line)
            if m:
                zzip_to_zip[m.group(1)] = m.group(2)
                continue
            m = re.match(r"^opening '([^']+)' (returned error (.*)|succeeded, (\d+) entries)$", line)
            if m:
                verdict[m.group(1)] = m.group(3) if m.group(3) else f"accepted ({m.group(4)} entries)"
    out = {}
    for zz, v in verdict.items():
        z = zzip_to_zip.get(zz, zz)
        # the .test maps incons-cdsize-small.zzip to incons-cdsize-large.zip:
        # key by the case name and remember the file actually used
        out[zz[:-len(".zzip")] + ".zip" if zz.endswith(".zzip") else zz] = (v, z)
    return out


WRAPPER = shlex.split(os.environ.get("ONNXZIP_TEST_WRAPPER", ""))


def run(cmd):
    timeout = 600 if WRAPPER else 60
    try:
        return ozcommon.run(WRAPPER + cmd, timeout=timeout), None
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s: {' '.join(cmd[1:3])}"


def judge(onnxzip, f):
    """(status or None, problem or None)."""
    p, problem = run([onnxzip, "verify", f])
    if problem:
        return None, problem
    err = p.stderr.decode("utf-8", "replace")
    # a wrapper's own notes ("--PID-- WARNING: unhandled syscall") are not ours
    lines = [x for x in err.splitlines() if x.strip() and not (WRAPPER and re.match(r"^--\d+-- ", x))]
    if p.returncode < 0:
        return None, f"verify killed by signal {-p.returncode}"
    if p.returncode != 1:
        return None, f"verify exited {p.returncode}, expected 1"
    if len(lines) != 1 or not LINE.match(lines[0]):
        return None, f"stderr is not one 'onnxzip: ... [ONNXZIP_E...]' line: {err.strip()[:200]!r}"
    status = LINE.match(lines[0]).group(1)
    q, problem = run([onnxzip, "ls", f, "--json"])
    if problem:
        return status, problem
    if q.returncode < 0:
        return status, f"ls killed by signal {-q.returncode}"
    if q.returncode == 0:
        return status, "ls --json exited 0 on a file verify refuses"
    return status, None


def group_of(rel):
    if rel.startswith("libzip/") and os.path.basename(rel).startswith("incons-") and rel.endswith(".zip"):
        return "libzip-incons"
    if rel.startswith("yauzl/failure/") and rel.endswith(".zip"):
        return "yauzl-failure"
    if rel.startswith("yauzl/success/") and rel.endswith(".zip") and rel.count("/") == 2:
        return "yauzl-success"
    if rel.endswith(".zip"):
        return "other-zip"
    return "non-zip"


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
        files += [os.path.join(root, f) for f in sorted(fs)]
    test_file = os.path.join(zdir, "libzip", "open_incons.test")
    libzip = parse_libzip_test(test_file) if os.path.exists(test_file) else {}
    passed = failed = 0
    hist = collections.defaultdict(collections.Counter)
    count = collections.Counter()
    ours = {}
    for f in files:
        rel = os.path.relpath(f, zdir)
        g = group_of(rel)
        count[g] += 1
        status, problem = judge(onnxzip, f)
        if not problem and g == "yauzl-success" and status not in SUCCESS_OK:
            allowed, why = SUCCESS_STRUCTURAL.get(os.path.basename(rel), (set(), None))
            if status not in allowed:
                problem = f"a valid zip refused with {status}; expected one of " \
                          f"{', '.join(sorted(SUCCESS_OK))} (spec order of checks)"
            else:
                print(f"note [{g}] {rel}: {status}, a structural refusal: {why}")
        if status:
            hist[g][status] += 1
        if g == "libzip-incons":
            ours[os.path.basename(rel)] = status or "-"
        if problem:
            failed += 1
            print(f"FAIL [{g}] {rel}: {problem}")
        else:
            passed += 1
            print(f"ok   [{g}] {rel}: {status}")

    if libzip:
        print("\nlibzip open_incons.test: case, libzip's verdict, ours")
        w = max(len(k) for k in libzip)
        stricter = []
        for case in sorted(set(libzip) | set(ours)):
            lz, used = libzip.get(case, ("(not in the .test)", case))
            ours_s = ours.get(os.path.basename(used), "(no such file)")
            note = f"  [the .test opens {used}]" if used != case else ""
            print(f"  {case:<{w}}  {lz:<90.90}  {ours_s}{note}")
            if lz.startswith("accepted"):
                stricter.append((case, ours_s))
        print(f"\ncases libzip accepts and onnxzip refuses ({len(stricter)}; spec 11.2 is stricter "
              "than a general zip reader: contiguity, local/central equality, STORED only, names):")
        for case, st in stricter:
            print(f"  {case}: {st} (spec 11.2 {SPEC_ROW.get(st, '?')})")
        missing = sorted(c for c in libzip if os.path.basename(libzip[c][1]) not in ours)
        for c in missing:
            failed += 1
            print(f"FAIL libzip case {c}: its file is not in the corpus")

    for g in sorted(hist):
        print(f"statuses [{g}]: " + ", ".join(f"{k} {v}" for k, v in sorted(hist[g].items())))
    counts = ", ".join(f"{g} {n}" for g, n in sorted(count.items()))
    print(f"zipcorpus: {passed} passed, {failed} failed ({len(files)} files: {counts})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
