#!/usr/bin/env bash
# The wheels of DIST installed into pyenv's CPython 3.9 to 3.13:
#
#   pythons.sh DIST WORK            (tests/dist/run.sh runs it)
#
# For each CPython 3.X ($PYENV_ROOT/versions/3.X.*, the newest patch release;
# a missing one is skipped, saying so): a fresh venv WORK/3.X, the cp3X
# manylinux wheel of DIST (missing: a failure) with numpy, onnx, onnxruntime
# and pytest from PyPI as requirements.txt pins them for that Python
# (--no-deps, then `pip check`). Then, from a scratch directory with nothing
# of the repository's build on any path:
#   - onnxzip imports from the venv; the extension and the tool
#     onnxzip/_bin/onnxzip resolve every library (ldd), libcurl and
#     libcrypto from the wheel's onnxzip.libs/;
#   - the venv's `onnxzip --version` says onnxzip.__version__, which is
#     meson.build's version;
#   - the README's Python example (the "## Python" section's block) runs as
#     written, through tests/python/test_outputs_dirs.py's runner, which
#     extracts it; onnxruntime must import from 3.10 on (its ort_session line
#     runs); 3.9 has no onnxruntime >= 1.21 on PyPI, and the runner leaves
#     that one line out there;
#   - tests/python/test_smoke.py with the venv's `onnxzip` as ONNXZIP_CLI;
#   - remote archives through the bundled libcurl: onnxzip.fetch() and the
#     command's `fetch` of an archive (packed by the command) from serve.py's
#     nginx on 127.0.0.1, each compared with the served file by cmp.
# Prints each Python's time; exit status 1 when any installed Python fails.
set -uo pipefail
# shellcheck source=args.sh
. "$(dirname "${BASH_SOURCE[0]}")/args.sh"
pyenv=${PYENV_ROOT:-$HOME/.pyenv}

# one Python: exit status 0 when every check passes
check_python() {
    local minor=$1 py=$2 v=$work/3.$1 tag=cp3$1
    local wheels=("$dist"/onnxzip-"$version"-"$tag"-"$tag"-manylinux_2_*_x86_64.whl)
    [ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] ||
        { echo "FAIL: not one $tag manylinux wheel of $version in $dist: ${wheels[*]##*/}"; return 1; }
    echo "$(basename "${wheels[0]}") into a venv of $("$py" --version 2>&1)"
    rm -rf "$v" && "$py" -m venv "$v" || return 1
    "$v/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-deps \
        -r "$repo/tests/dist/requirements.txt" "${wheels[0]}" || { echo "FAIL: pip install"; return 1; }
    "$v/bin/python" -m pip check --disable-pip-version-check || { echo "FAIL: pip check"; return 1; }

    mkdir -p "$v/scratch" && cd "$v/scratch" || return 1
    if [ ! -f "$www/model.onnxzip" ]; then
        "$v/bin/onnxzip" pack "$work/model.onnx" -o "$www/model.onnxzip" || { echo "FAIL: onnxzip pack"; return 1; }
    fi
    local loc pyver cliver pkg elf where
    loc=$("$v/bin/python" -c 'import onnxzip; print(onnxzip.__file__)') || { echo "FAIL: import onnxzip"; return 1; }
    case $loc in "$v/"*) echo "ok: onnxzip imported from $loc" ;;
        *) echo "FAIL: onnxzip imported from $loc, not from $v"; return 1 ;; esac
    pkg=$(dirname "$loc")
    for elf in "$pkg"/_native.*.so "$pkg/_bin/onnxzip"; do
        if ldd "$elf" | grep 'not found'; then echo "FAIL: $elf: unresolved libraries (ldd)"; return 1; fi
        for lib in libcurl libcrypto; do
            where=$(ldd "$elf" | awk -v l="$lib" 'index($1, l) == 1 && $2 == "=>" { print $3; exit }')
            [[ -n $where && $(realpath "$where") == "$(dirname "$pkg")/onnxzip.libs/$lib"* ]] ||
                { echo "FAIL: $elf: $lib is '$where', not from the wheel's onnxzip.libs/:"; ldd "$elf"; return 1; }
        done
    done
    echo "ok: ldd: the extension and the tool resolve their libraries, libcurl and libcrypto from onnxzip.libs/"
    pyver=$("$v/bin/python" -c 'import onnxzip; print(onnxzip.__version__)') || return 1
    cliver=$("$v/bin/onnxzip" --version | head -n 1) || { echo "FAIL: $v/bin/onnxzip --version"; return 1; }
    [ "$pyver" = "$version" ] || { echo "FAIL: onnxzip.__version__ is $pyver, meson.build says $version"; return 1; }
    [[ $cliver == "onnxzip $pyver (library $pyver,"* ]] ||
        { echo "FAIL: onnxzip --version says '$cliver', onnxzip.__version__ is $pyver"; return 1; }
    echo "ok: onnxzip --version: $cliver; onnxzip.__version__ $pyver"
    if [ "$minor" -ge 10 ]; then
        "$v/bin/python" -c 'import onnxruntime' || { echo "FAIL: onnxruntime does not import"; return 1; }
    else
        echo "note: 3.$minor: no onnxruntime >= 1.21 on PyPI: the README example's ort_session line is left out"
    fi
    ONNXZIP_CLI=$v/bin/onnxzip "$v/bin/python" -m pytest -q -p no:cacheprovider --color=no -ra \
        --basetemp="$v/pytest" --rootdir="$repo/tests/python" \
        "$repo/tests/python/test_outputs_dirs.py::test_readme_quick_start_as_written" \
        "$repo/tests/python/test_smoke.py" || { echo "FAIL: the README's Python example or test_smoke.py"; return 1; }
    "$v/bin/python" -c '
import sys, onnxzip
onnxzip.fetch(sys.argv[1] + "model.onnxzip", "py.onnxzip", allow_http=True)' "$url" &&
        cmp py.onnxzip "$www/model.onnxzip" || { echo "FAIL: onnxzip.fetch of ${url}model.onnxzip"; return 1; }
    "$v/bin/onnxzip" fetch -q --allow-http "${url}model.onnxzip" -o cli.onnxzip &&
        cmp cli.onnxzip "$www/model.onnxzip" || { echo "FAIL: onnxzip fetch of ${url}model.onnxzip"; return 1; }
    echo "ok: onnxzip.fetch() and onnxzip fetch over HTTP: the served bytes"
}

unset PYTHONPATH LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1

# The served archive: the example model (made by the system's python3 and
# onnx), packed by the first venv's `onnxzip`; each fetch is compared with it
www=$work/www url=
rm -rf "$www" "$work/url" && mkdir -p "$www"
/usr/bin/python3 "$repo/tools/make_example_model.py" "$work/model.onnx" > /dev/null || exit 1
/usr/bin/python3 "$repo/tests/dist/serve.py" "$www" "$work/url" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(cat "$work/url" 2>/dev/null) || { echo "pythons.sh: serve.py wrote no URL"; exit 1; }
declare -A result took
status=0 ran=0
for minor in 9 10 11 12 13; do
    py=$(ls -d "$pyenv"/versions/3."$minor".* 2>/dev/null | sort -V | tail -n 1)
    printf '\n== CPython 3.%s\n' "$minor"
    if [ -z "$py" ] || [ ! -x "$py/bin/python3" ]; then
        echo "SKIPPED: no $pyenv/versions/3.$minor.*"
        result[$minor]=SKIPPED took[$minor]=0
        continue
    fi
    start=$(date +%s)
    (check_python "$minor" "$py/bin/python3")
    rc=$?
    took[$minor]=$(( $(date +%s) - start ))
    ran=$((ran + 1))
    if [ $rc = 0 ]; then result[$minor]=PASS; else result[$minor]=FAIL status=1; fi
done
printf '\n== pythons.sh\n'
for minor in 9 10 11 12 13; do
    printf 'CPython 3.%-3s %-8s %4d s\n' "$minor" "${result[$minor]}" "${took[$minor]}"
done
[ $ran -gt 0 ] || { echo "pythons.sh: no CPython 3.9 to 3.13 under $pyenv/versions"; exit 1; }
exit $status
