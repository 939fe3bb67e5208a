#!/usr/bin/env bash
# Runs mypy --strict (tests/python/mypy.ini) with the pinned venv's Python
# over the package in the build tree and over typed_usage.py
# (tests/python/meson.build: mypy_strict).
#
#   mypy.sh PYTHON PACKAGE_DIR CACHE_DIR
#
# Fails, never skips, when PYTHON or its mypy is missing.
set -uo pipefail
if [ $# -ne 3 ]; then
    echo "usage: $0 PYTHON PACKAGE_DIR CACHE_DIR" >&2
    exit 2
fi
python=$1 pkgdir=$2 cache=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! "$python" -c 'import mypy' 2>/dev/null; then
    echo "mypy.sh: FAIL: $python has no mypy; make the venv: $here/venv.sh $(dirname "$(dirname "$python")")" >&2
    exit 1
fi
cd "$pkgdir" || exit 1
exec "$python" -m mypy --config-file "$here/mypy.ini" --cache-dir "$cache" onnxzip "$here/typed_usage.py"
