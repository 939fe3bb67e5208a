#!/usr/bin/env bash
# tools/dist.sh's sdist step: OUT/onnxzip-VERSION.tar.gz, made by
# meson-python (`python -m build --sdist`), which runs `meson dist` (git's
# tracked files of HEAD; subprojects' wraps, not their downloads) and adds
# PKG-INFO.
#
#   sdist.sh ROOT OUT WORK VERSION
#
# `meson dist` archives the commit, not the work tree: a checkout with
# uncommitted changes to tracked files is refused, naming them, unless
# ONNXZIP_DIST_ALLOW_DIRTY=1 (then the sdist is HEAD without those changes,
# and this says so). Untracked files never go in. The metadata and the
# README (the long description) are checked by `twine check`; the wheel step
# builds its wheels from this sdist, which proves it builds.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ROOT OUT WORK VERSION" >&2; exit 2; }
root=$1 out=$2 work=$3 version=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "sdist.sh: $*" >&2; exit 1; }

git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    fail "$root is not a git checkout: meson dist archives a git commit"
dirty=$(git -C "$root" status --porcelain --untracked-files=no)
if [ -n "$dirty" ]; then
    if [ "${ONNXZIP_DIST_ALLOW_DIRTY:-0}" = 1 ]; then
        echo "sdist.sh: WARNING: uncommitted changes are NOT in the sdist (it is HEAD $(git -C "$root" rev-parse --short HEAD)):"
        echo "$dirty" | sed 's/^/  /'
    else
        fail "uncommitted changes to tracked files in $root (meson dist archives HEAD, without them):
$dirty
commit them, or set ONNXZIP_DIST_ALLOW_DIRTY=1 for an sdist of HEAD as it is"
    fi
fi

venv=$(dirname "$work")/venv
"$here/pyvenv.sh" /usr/bin/python3 "$venv" "$here/requirements.txt"

rm -rf "$work"
mkdir -p "$work/out"
# --no-isolation: the venv's pinned meson-python, meson and ninja; meson
# and ninja on PATH, as meson-python runs them
PATH="$venv/bin:$PATH" "$venv/bin/python" -m build --sdist --no-isolation -o "$work/out" "$root" > "$work/build.log" 2>&1 ||
    { cat "$work/build.log"; fail "python -m build --sdist failed (its log above)"; }
sdist=$work/out/onnxzip-$version.tar.gz
[ -f "$sdist" ] || { ls -l "$work/out"; fail "no $(basename "$sdist") from python -m build --sdist"; }

# What pip reads: PKG-INFO's name and version, the description rendered
got=$(tar -xOzf "$sdist" "onnxzip-$version/PKG-INFO" | sed -n 's/^Version: //p')
[ "$got" = "$version" ] || fail "PKG-INFO says version '$got', meson.build says $version"
"$venv/bin/twine" --no-color check --strict "$sdist"
for f in pyproject.toml meson.build README.md src/python/onnxzip/_native.c tools/onnxzip.c; do
    tar -tzf "$sdist" "onnxzip-$version/$f" >/dev/null 2>&1 || fail "$f is not in the sdist"
done

rm -f "$out"/onnxzip-*.tar.gz
mv "$sdist" "$out/"
echo "sdist: $(basename "$sdist"): $(du -k "$out/$(basename "$sdist")" | cut -f1) KiB, $(tar -tzf "$out/$(basename "$sdist")" | grep -cv '/$') files"
