#!/usr/bin/env bash
# Runs pytest over tests/python with one interpreter (tests/python/meson.build
# registers it twice: Debian's /usr/bin/python3 and the pinned venv's).
#
#   pytest.sh PYTHON BASETEMP [pytest arguments...]
#
# Tests in tests/python; ONNXZIP_PYTEST_DIR names another directory (tests/packages).
# Fails, never skips, when PYTHON or its pytest is missing, and when pytest
# collects no test (its exit status 5, which would otherwise read as "nothing
# wrong"). Nothing is written in the source tree: no cache provider, no
# bytecode, temporary files under BASETEMP (in the build tree).
# ONNXZIP_PY_PRELOAD (set by meson.build in a sanitizer build) becomes
# LD_PRELOAD of the interpreter only, not of this shell.
set -uo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 PYTHON BASETEMP [pytest arguments...]" >&2
    exit 2
fi
python=$1 basetemp=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tests=${ONNXZIP_PYTEST_DIR:-$here}

if [ ! -x "$python" ]; then
    venv=$(dirname "$(dirname "$python")")
    echo "pytest.sh: FAIL: $python does not exist. The pinned venv is made by the test" \
         "command (tests/run.sh); by hand: $here/venv.sh $venv" >&2
    exit 1
fi
venv=$(dirname "$(dirname "$python")")
if [ -f "$venv/.onnxzip-requirements" ] && ! "$here/venv.sh" --check "$venv"; then
    echo "pytest.sh: FAIL: the venv $venv does not match $here/requirements.txt;" \
         "make it again: $here/venv.sh $venv (tests/run.sh does)" >&2
    exit 1
fi
if ! "$python" -c 'import pytest' 2>/dev/null; then
    echo "pytest.sh: FAIL: $python has no pytest (Debian: apt-get install python3-pytest;" \
         "the venv: $here/venv.sh DIR)" >&2
    exit 1
fi

export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
# Sanitizer builds: a report written to fd 2 would be lost, as pytest
# captures fd 2 while a test runs and the abort or exit kills it before it
# shows what it captured; --capture=sys leaves fd 2 alone. ASan's reports
# also go to files, printed below, which catch errors in the CLI processes
# the tests run even where a test expects them to fail (gcc 12's UBSan
# ignores log_path: its reports stay on stderr).
sanlogs= capture=()
if [ -n "${ONNXZIP_SANITIZE-}" ]; then
    sanlogs=$basetemp-sanitizer
    rm -rf "$sanlogs"
    mkdir -p "$sanlogs"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$sanlogs/asan"
    capture=(--capture=sys)
fi
if [ -n "${ONNXZIP_PY_PRELOAD-}" ]; then
    export LD_PRELOAD=$ONNXZIP_PY_PRELOAD
fi
# -ra: a closing summary line for every test not passed (skips with reasons).
"$python" -m pytest -p no:cacheprovider --basetemp="$basetemp" -ra --color=no "${capture[@]}" \
    --rootdir="$tests" "$tests" "$@"
rc=$?
unset LD_PRELOAD
if [ -n "$sanlogs" ] && [ -n "$(ls -A "$sanlogs")" ]; then
    for f in "$sanlogs"/*; do
        echo "pytest.sh: FAIL: sanitizer report $f:" >&2
        cat "$f" >&2
    done
    [ "$rc" != 0 ] || rc=1
fi
if [ "$rc" = 5 ]; then
    echo "pytest.sh: FAIL: pytest collected no test in $tests (exit status 5)" >&2
    exit 1
fi
# 77 and 99 mean skip and hard error to meson; pytest never uses them.
exit "$rc"
