#!/usr/bin/env bash
# Prints meson.build's project() version: the one version number of the C
# library, the CLI, the Python package and the npm package.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
v=$(sed -n "/^project(/,/)/s/^ *version: *'\([^']*\)'.*/\1/p" "$root/meson.build")
[ -n "$v" ] || { echo "version.sh: no version: in project() of $root/meson.build" >&2; exit 1; }
echo "$v"
