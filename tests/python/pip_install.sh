#!/usr/bin/env bash
# `pip install` of the source tree as a user does it, checked from outside:
#
#   pip_install.sh SOURCE_ROOT PYVENV WORKDIR CLI
#
#  1. copies the source tree (git's tracked and untracked-not-ignored files:
#     what a clean checkout holds, without build directories) to WORKDIR/src;
#  2. builds the wheel from it with PYVENV's pinned meson-python, meson and
#     ninja (--no-build-isolation --no-index: no network, no version drift);
#  3. checks the wheel holds exactly the package: the modules meson.build
#     lists (python_sources), the extension, the tool onnxzip/_bin/onnxzip
#     and the dist-info's METADATA, WHEEL, RECORD and entry_points.txt (the
#     script `onnxzip` = onnxzip._cli:main); no libonnxzip.so, headers,
#     onnxzip.pc; and that numpy is its one requirement;
#  4. installs it with pip into a fresh venv of /usr/bin/python3 that sees
#     Debian's packages (numpy 1.24, pytest), checks its extension and tool
#     do not depend on libonnxzip.so (ldd), that the venv's `onnxzip
#     --version` says onnxzip.__version__, and runs test_smoke.py against
#     the installed package, not the build tree.
# Fails, never skips, when PYVENV is missing.
set -euo pipefail

if [ $# -ne 4 ]; then
    echo "usage: $0 SOURCE_ROOT PYVENV WORKDIR CLI" >&2
    exit 2
fi
src=$(cd "$1" && pwd) pyvenv=$2 work=$3 cli=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "pip_install.sh: FAIL: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }

[ -x "$pyvenv/bin/python" ] ||
    fail "$pyvenv/bin/python does not exist; made by tests/run.sh, by hand: $here/venv.sh $pyvenv"
"$here/venv.sh" --check "$pyvenv" ||
    fail "$pyvenv does not match $here/requirements.txt: make it again with $here/venv.sh $pyvenv"
"$pyvenv/bin/python" -c 'import mesonpy' 2>/dev/null ||
    fail "$pyvenv has no meson-python: make it again with $here/venv.sh $pyvenv"

rm -rf "$work"
mkdir -p "$work/src" "$work/wheel"
start=$(date +%s)

step "copy of $src"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # --ignore-failed-read: tracked files deleted in the work tree
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
        tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work/src"
else
    (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$work/src"
fi
[ -f "$work/src/pyproject.toml" ] || fail "no pyproject.toml in the copy of $src"
echo "$(find "$work/src" -type f | wc -l) files"

step "pip wheel (meson-python from $pyvenv)"
# -v: meson's log, to check that the library is compiled once (only the
# static library the extension links, not the tests' onnxzip_internal)
PATH="$pyvenv/bin:$PATH" "$pyvenv/bin/python" -m pip wheel -v --disable-pip-version-check --no-input \
    --no-build-isolation --no-index --no-deps -w "$work/wheel" "$work/src" > "$work/wheel.log" 2>&1 ||
    { cat "$work/wheel.log"; fail "pip wheel failed (its log above)"; }
grep -q 'Linking static target src/libonnxzip.a' "$work/wheel.log" ||
    { cat "$work/wheel.log"; fail "the wheel build's log does not show the library built"; }
if grep -q 'onnxzip_internal' "$work/wheel.log"; then
    fail "the wheel build compiled the library twice (onnxzip_internal): $(grep -c 'onnxzip_internal' "$work/wheel.log") lines in $work/wheel.log"
fi
echo "compiled: $(grep -c 'Compiling C object' "$work/wheel.log") C objects"
wheels=("$work"/wheel/onnxzip-*.whl)
[ "${#wheels[@]}" = 1 ] && [ -f "${wheels[0]}" ] || fail "expected one onnxzip wheel in $work/wheel"
wheel=${wheels[0]}
echo "built $(basename "$wheel") in $(( $(date +%s) - start )) s"

step "wheel contents"
/usr/bin/python3 - "$wheel" "$src/src/python/onnxzip/meson.build" <<'EOF'
import re, sys, sysconfig, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
names = wheel.namelist()
for n in names:
    print(" ", n)
# The modules of meson.build's python_sources list, the extension (this
# Python's suffix), the tool, and the dist-info: nothing else
listed = re.search(r"python_sources = \[(.*?)\]", open(sys.argv[2]).read(), re.S).group(1)
sources = re.findall(r"'([^']+)'", listed)
assert "__init__.py" in sources and "_cli.py" in sources, f"python_sources of {sys.argv[2]}: {sources}"
info = re.match(r"onnxzip-[^/]*\.dist-info/", names[0]) and names[0].split("/")[0]
assert info, f"the wheel's first file is not in its dist-info: {names[0]}"
want = {f"onnxzip/{f}" for f in sources} | {"onnxzip/_native" + sysconfig.get_config_var("EXT_SUFFIX"),
        "onnxzip/_bin/onnxzip"} | {f"{info}/{f}" for f in ("METADATA", "WHEEL", "RECORD", "entry_points.txt")}
assert set(names) == want and len(names) == len(want), \
    f"the wheel's files differ from the package's: extra {sorted(set(names) - want)}, missing {sorted(want - set(names))}"
assert wheel.getinfo("onnxzip/_bin/onnxzip").external_attr >> 16 & 0o111, "onnxzip/_bin/onnxzip is not executable"
scripts = wheel.read(f"{info}/entry_points.txt").decode().split()
assert scripts == ["[console_scripts]", "onnxzip", "=", "onnxzip._cli:main"], f"entry_points.txt: {scripts}"
text = wheel.read(f"{info}/METADATA").decode()
reqs = [l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("Requires-Dist:")]
base = [r for r in reqs if "extra ==" not in r]
assert len(base) == 1 and base[0].startswith("numpy"), f"requirements other than numpy: {base}"
print("Requires-Dist:", "; ".join(reqs))
EOF

step "pip install into a fresh venv of /usr/bin/python3 (system site packages: Debian's numpy, pytest)"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# No index: numpy comes from Debian, so nothing is downloaded.
"$work/venv/bin/python" -m pip install --disable-pip-version-check --no-input --no-index "$wheel"

# Nothing of the build tree or the source tree on the path from here on;
# no bytecode written beside the tests.
unset PYTHONPATH LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
cd "$work"
loc=$("$work/venv/bin/python" -c 'import onnxzip; print(onnxzip.__file__)')
case $loc in
    "$work/venv/"*) echo "imported from $loc" ;;
    *) fail "onnxzip imported from $loc, not from the venv $work/venv" ;;
esac
ext=$("$work/venv/bin/python" -c 'import onnxzip._native as n; print(n.__file__)')
tool=$(dirname "$ext")/_bin/onnxzip
for elf in "$ext" "$tool"; do
    echo "ldd $elf:"
    ldd "$elf" | sed 's/^/  /'
    if ldd "$elf" | grep -q 'libonnxzip'; then
        fail "the installed $elf depends on libonnxzip.so"
    fi
    if ldd "$elf" | grep -q 'not found'; then
        fail "the installed $elf has unresolved libraries"
    fi
    echo "$(ldd "$elf" | wc -l) libraries (ldd)"
done
# The venv's `onnxzip` (the entry point, exec'ing the tool) is the package's
# version: "onnxzip X.Y.Z (library X.Y.Z, ...)"
pyver=$("$work/venv/bin/python" -c 'import onnxzip; print(onnxzip.__version__)')
cliver=$("$work/venv/bin/onnxzip" --version | head -n 1)
echo "onnxzip.__version__: $pyver; $work/venv/bin/onnxzip --version: $cliver"
[[ $cliver == "onnxzip $pyver (library $pyver,"* ]] ||
    fail "the venv's onnxzip --version ($cliver) is not onnxzip.__version__ ($pyver)"
# pyproject.toml builds with -Dcurl=auto: with libcurl's -dev package here
# (install-deps), the installed package reads remote archives. Nothing
# listens on port 1: NetworkError, where a build without libcurl raises
# UnsupportedError.
if pkg-config --exists libcurl; then
    "$work/venv/bin/python" -c '
import onnxzip
try:
    onnxzip.open_url("http://127.0.0.1:1/m.onnxzip", allow_http=True, retries=0)
except onnxzip.NetworkError as e:
    print("open_url: NetworkError as expected:", e)
' || fail "the installed package cannot read remote archives (libcurl is installed: pyproject.toml -Dcurl=auto)"
fi

step "test_smoke.py against the installed package"
ONNXZIP_CLI=$cli "$work/venv/bin/python" -m pytest -p no:cacheprovider --basetemp="$work/pytest" \
    -ra --color=no --rootdir="$here" "$here/test_smoke.py"
echo "pip_install.sh: OK in $(( $(date +%s) - start )) s"
