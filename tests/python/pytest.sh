#!/usr/bin/env bash
# Runs pytest over tests/python with one interpreter (tests/python/meson.build
# registers it twice: Debian's /usr/bin/python3 and the pinned venv's).
#
#   pytest.sh PYTHON BASETEMP [pytest arguments...]
#
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

if [ ! -x "$python" ]; then
    venv=$(dirname "$(dirname "$python")")
    echo "pytest.sh: FAIL: $python does not exist. The pinned venv is made by the test" \
         "command (tests/run.sh); by hand: $here/venv.sh $venv" >&2
    exit 1
fi
if ! "$python" -c 'import pytest' 2>/dev/null; then
    echo "pytest.sh: FAIL: $python has no pytest (Debian: apt-get install python3-pytest;" \
         "the venv: $here/venv.sh DIR)" >&2
    exit 1
fi

export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
if [ -n "${ONNXZIP_PY_PRELOAD-}" ]; then
    export LD_PRELOAD=$ONNXZIP_PY_PRELOAD
fi
# -ra: a closing summary line for every test not passed (skips with reasons).
"$python" -m pytest -p no:cacheprovider --basetemp="$basetemp" -ra --color=no \
    --rootdir="$here" "$here" "$@"
rc=$?
unset LD_PRELOAD
if [ "$rc" = 5 ]; then
    echo "pytest.sh: FAIL: pytest collected no test in $here (exit status 5)" >&2
    exit 1
fi
# 77 and 99 mean skip and hard error to meson; pytest never uses them.
exit "$rc"
