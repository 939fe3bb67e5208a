#!/usr/bin/env bash
# The test command: installs the dependencies (.ci/install-deps), builds with
# warnings as errors into build-test/ and runs the whole meson test suite.
#
#   ./tests/run.sh                     everything
#   ./tests/run.sh --suite unit        extra arguments go to `meson test`
#   BUILDDIR=/tmp/b ./tests/run.sh     another build directory
#   MESON_SETUP_ARGS='-Db_sanitize=address,undefined -Db_lundef=false' ./tests/run.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
builddir=${BUILDDIR:-build-test}
# shellcheck disable=SC2206  # word splitting of the extra options is wanted
setup_args=(--werror ${MESON_SETUP_ARGS-})

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
meson test -C "$builddir" --print-errorlogs "$@"
