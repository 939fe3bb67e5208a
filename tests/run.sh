#!/usr/bin/env bash
# The test command: installs the dependencies (.ci/install-deps), builds with
# warnings as errors into build-test/ (with the Python package:
# -Dpython=enabled), makes the pinned PyPI venv BUILDDIR/pyvenv of the Python
# tests (tests/python/venv.sh; reused while requirements.txt is unchanged),
# puts versitygw, the S3 server of the tests, into BUILDDIR/versitygw
# (tests/remote/versitygw.sh) and runs the whole meson test suite.
#
#   ./tests/run.sh                     everything
#   ./tests/run.sh --suite unit        extra arguments go to `meson test`
#   BUILDDIR=/tmp/b ./tests/run.sh     another build directory
#   MESON_SETUP_ARGS='-Db_sanitize=address,undefined -Db_lundef=false' ./tests/run.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
builddir=${BUILDDIR:-build-test}
# -Dpython=enabled first: MESON_SETUP_ARGS may override it (a later -D wins).
# shellcheck disable=SC2206  # word splitting of the extra options is wanted
setup_args=(--werror -Dpython=enabled ${MESON_SETUP_ARGS-})

"$root/.ci/install-deps"

if [ -f "$builddir/meson-private/coredata.dat" ]; then
    # An existing tree: apply the options again; start over if it is broken
    # (e.g. configured by another meson version).
    meson setup --reconfigure "${setup_args[@]}" "$builddir" ||
        meson setup --wipe "${setup_args[@]}" "$builddir"
else
    meson setup "${setup_args[@]}" "$builddir"
fi
meson compile -C "$builddir"
# Not fatal: without PyPI the rest of the suite still runs, and the tests
# that need the venv fail saying how to make it.
"$root/tests/python/venv.sh" "$builddir/pyvenv" ||
    echo "run.sh: WARNING: tests/python/venv.sh $builddir/pyvenv failed; pytest_pypi and pip_install will fail" >&2
# versitygw, the S3 server of test_s3.py (built once per machine into
# ~/.cache/onnxzip, about 2 minutes; linked into the tree). Not fatal either:
# pytest_pypi then fails saying how to make it.
"$root/tests/remote/versitygw.sh" "$builddir/versitygw" ||
    echo "run.sh: WARNING: tests/remote/versitygw.sh $builddir/versitygw failed; pytest_pypi will fail" >&2
meson test -C "$builddir" --print-errorlogs "$@"
