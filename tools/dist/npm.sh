#!/usr/bin/env bash
# tools/dist.sh's npm step: the npm package as a tarball,
#
#   OUT/onnxzip-VERSION.tgz
#
#   npm.sh ROOT OUT WORK VERSION
#
# The reader compiled to WebAssembly (src/js/meson.build, -Djs=enabled: a
# missing clang wasm32 toolchain fails here instead of giving no package) in
# a release build under WORK, its package directory (the .js modules, the
# types, onnxzip.wasm, README.md; package.json with meson.build's version)
# plus LICENSE (the Apache-2.0 text of Debian's base-files, the license
# package.json names), packed by `npm pack`. The tarball's file list is
# checked: exactly those files, nothing of the build.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ROOT OUT WORK VERSION" >&2; exit 2; }
root=$1 out=$2 work=$3 version=$4
fail() { echo "npm.sh: $*" >&2; exit 1; }
command -v npm >/dev/null || fail "no npm (.ci/install-deps installs nodejs and npm)"
license=/usr/share/common-licenses/Apache-2.0
[ -f "$license" ] || fail "no $license (Debian's base-files) for the package's LICENSE"

build=$work/build
opts=(-Djs=enabled -Dtests=false -Dpython=disabled -Dtools=false -Dbuildtype=release)
if [ -f "$build/meson-private/coredata.dat" ]; then
    meson setup --reconfigure "${opts[@]}" "$build" "$root" > "$work/setup.log" || { cat "$work/setup.log"; fail "meson setup"; }
else
    mkdir -p "$work"
    meson setup "${opts[@]}" "$build" "$root" > "$work/setup.log" || { cat "$work/setup.log"; fail "meson setup"; }
fi
meson compile -C "$build" src/js/js-package > "$work/compile.log" || { cat "$work/compile.log"; fail "meson compile"; }

pkg=$work/package
rm -rf "$pkg"
cp -a "$build/src/js/package" "$pkg"
cp "$license" "$pkg/LICENSE"
got=$(node -p "require('$pkg/package.json').version")
[ "$got" = "$version" ] || fail "$pkg/package.json says version $got, meson.build $version"

tgz=$out/onnxzip-$version.tgz
rm -f "$tgz"
(cd "$work" && npm pack --silent --pack-destination "$out" "$pkg" > /dev/null)
[ -f "$tgz" ] || fail "npm pack wrote no $tgz"
# exactly the package's files ("files" in package.json, plus what npm always takes)
want=$(cd "$pkg" && { echo package.json; echo README.md; echo LICENSE; echo index.js; echo index.d.ts;
    echo onnxzip.wasm; find lib -type f; } | sed 's|^|package/|' | sort)
have=$(tar -tzf "$tgz" | sort)
[ "$want" = "$have" ] || fail "$tgz holds other files than the package's:
$(diff <(echo "$want") <(echo "$have") || true)"
echo "$tgz: $(stat -c %s "$tgz") bytes, $(echo "$have" | wc -l) files (onnxzip.wasm $(stat -c %s "$pkg/onnxzip.wasm") bytes)"
