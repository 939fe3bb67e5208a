# Sourced by the checks of tests/dist given DIST WORK (pythons.sh, node.sh,
# cli.sh): sets here (tests/dist), repo, dist and work (absolute; WORK made)
# and version (meson.build's), or exits 2 with the usage.
[ $# -eq 2 ] || { echo "usage: $0 DIST WORK" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dist=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
version=$("$repo/tools/dist/version.sh")
