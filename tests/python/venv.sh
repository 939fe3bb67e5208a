#!/usr/bin/env bash
# The pinned PyPI environment of the pytest_pypi and pip_install tests:
#
#   tests/python/venv.sh DIR      create DIR as a venv of /usr/bin/python3 with
#                                 tests/python/requirements.txt installed
#
# Idempotent: DIR is reused as it is when it holds the stamp of the same
# requirements.txt and interpreter (DIR/.onnxzip-requirements), else made
# again from scratch. The stamp is written last, so an interrupted run is
# redone. Debian's interpreter, not the first python3 on PATH (pyenv and the
# like): the extension in the build tree is built for the Python meson found,
# which on Debian is /usr/bin/python3. Nothing is installed into any system
# Python. PYTHON=/path/to/python3 overrides the interpreter.
#
#   tests/python/venv.sh --check DIR   exit 0 when DIR is up to date, else 1
#                                      (tests/python/pytest.sh: a stale venv
#                                      fails the test instead of testing old pins)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req=$here/requirements.txt
python=${PYTHON:-/usr/bin/python3}

check=0
if [ "${1-}" = --check ]; then
    check=1
    shift
fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 [--check] DIR" >&2
    exit 2
fi
dir=$1
stamp=$dir/.onnxzip-requirements

if [ ! -x "$python" ]; then
    echo "venv.sh: $python not found (Debian: apt-get install python3 python3-venv)" >&2
    exit 1
fi

# The requirements' hash and the interpreter's exact version: a Python
# upgrade (3.11 -> 3.12) leaves a venv whose packages no longer import.
want=$( { sha256sum < "$req"; "$python" -c 'import sys; print(sys.executable, sys.version)'; } |
        sha256sum | cut -d' ' -f1)

if [ "$check" = 1 ]; then
    if [ -x "$dir/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        exit 0
    fi
    echo "venv.sh: $dir is missing, unfinished or older than $req (or than $python)" >&2
    exit 1
fi

# One creator at a time (two test commands on one build tree).
mkdir -p "$(dirname "$dir")"
exec 9> "$dir.lock"
flock 9

if [ -x "$dir/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "venv.sh: $dir is up to date ($(cd "$dir" && bin/python --version))"
    exit 0
fi

# Never delete something that is not a venv (a mistyped DIR).
if [ -e "$dir" ] && [ ! -f "$dir/pyvenv.cfg" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    echo "venv.sh: $dir exists and is not a venv; not touching it" >&2
    exit 1
fi
rm -rf "$dir"

start=$(date +%s)
echo "venv.sh: creating $dir from $python ($("$python" --version)) and $req"
if ! "$python" -m venv "$dir"; then
    echo "venv.sh: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2
    exit 1
fi
# Wheels only: a source build of onnx or numpy would take an hour and need
# compilers this list does not name; every pin has a manylinux wheel.
"$dir/bin/python" -m pip install --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$req"
"$dir/bin/python" -m pip check
echo "$want" > "$stamp"
echo "venv.sh: $dir ready in $(( $(date +%s) - start )) s"
