#!/usr/bin/env bash
# Install test: installs the build tree BUILDDIR into a scratch DESTDIR, checks
# the installed files, then builds tests/install/consumer.c against the
# installed onnxzip with pkg-config, the way a user would, both against the
# shared library and statically against the .a, and runs both.
#
#   tests/install/run.sh BUILDDIR
#
# Registered in tests/meson.build as the 'install' suite.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
die() { echo "install test: FAIL: $*" >&2; exit 1; }
note() { echo "install test: $*"; }

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
builddir=$(cd "$1" && pwd) || die "no build directory '$1'"
[ -f "$builddir/meson-private/coredata.dat" ] || die "'$builddir' is not a meson build directory"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
cc=${CC:-cc}

stage=$(mktemp -d "${TMPDIR:-/tmp}/onnxzip-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
dest=$stage/root   # the DESTDIR; scratch files stay beside it

# The options the tree was configured with: where things go, which kinds of
# library, whether the tool is built, and sanitizers (a consumer of a
# sanitized library must be built with the same -fsanitize).
opt() {
    meson introspect --buildoptions "$builddir" | "$py" -c '
import json, sys
for o in json.load(sys.stdin):
    if o["name"] == sys.argv[1]:
        v = o["value"]
        print(",".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else v)
        break
' "$1"
}
under_prefix() { case "$1" in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
prefix=$(opt prefix)
libdir=$dest$(under_prefix "$(opt libdir)")
includedir=$dest$(under_prefix "$(opt includedir)")
bindir=$dest$(under_prefix "$(opt bindir)")
default_library=$(opt default_library)
tools=$(opt tools)
sanitize=$(opt b_sanitize)
san_flags=()
[ -z "$sanitize" ] || [ "$sanitize" = none ] || san_flags=("-fsanitize=$sanitize")

note "meson install -C $builddir --destdir $dest"
meson install -C "$builddir" --destdir "$dest" --no-rebuild >"$stage/install.log" 2>&1 ||
    { cat "$stage/install.log" >&2; die "meson install failed"; }

# --- the installed files -----------------------------------------------------
missing=()
want() { [ -e "$1" ] || missing+=("${1#"$dest"}"); }
want "$includedir/onnxzip/onnxzip.h"
# the protobuf-c header comes with onnxzip_model_proto() (-Dprotobuf_c)
consumer_defs=()
minimal=1 # the core alone: neither protobuf-c nor libzip
grep -q 'libzip' "$libdir/pkgconfig/onnxzip.pc" 2>/dev/null && minimal=0
if grep -q 'libprotobuf-c' "$libdir/pkgconfig/onnxzip.pc" 2>/dev/null; then
    minimal=0
    consumer_defs=(-DCONSUMER_MODEL_PROTO)
    want "$includedir/onnxzip/onnx.pb-c.h"
elif [ -e "$includedir/onnxzip/onnx.pb-c.h" ]; then
    die "onnx.pb-c.h installed by a build without protobuf-c"
fi
want "$libdir/pkgconfig/onnxzip.pc"
case "$default_library" in shared|both) want "$libdir/libonnxzip.so" ;; esac
case "$default_library" in static|both) want "$libdir/libonnxzip.a" ;; esac
[ "$tools" != true ] || want "$bindir/onnxzip"
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installed tree:" >&2
    (cd "$dest" && find . -type f -o -type l | sort) >&2
    die "missing after install: ${missing[*]}"
fi
note "installed files present (default_library=$default_library, tools=$tools)"

# --- pkg-config against the stage ---------------------------------------------
# PKG_CONFIG_SYSROOT_DIR maps the .pc's ${prefix}/... paths into the stage.
# (`pkg-config --define-prefix` would derive the prefix from the .pc's
# location, which is wrong for Debian's multiarch libdir lib/x86_64-linux-gnu:
# it takes .../lib as the prefix.)
pc() {
    PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
        pkg-config "$@" onnxzip
}
pc --exists || die "pkg-config cannot use the installed onnxzip.pc"
read -r -a cflags <<<"$(pc --cflags)"
note "pkg-config --cflags: ${cflags[*]}"
case " ${cflags[*]} " in *" -I$includedir "*) ;; *) die "cflags do not point into the stage ($includedir)" ;; esac

# An archive for the consumer to open, made by the installed tool from the
# example model (or a model from libonnx-testdata).
archive=
expect_tensors=
if [ "$tools" = true ]; then
    model=
    if "$py" -c 'import onnx, numpy' 2>/dev/null; then
        model=$stage/tiny.onnx
        "$py" "$root/tools/make_example_model.py" "$model" >/dev/null
        expect_tensors=5   # 4 initializers + 1 Constant attribute tensor
    elif [ -f /usr/share/libonnx-testdata/data/pytorch-converted/test_Linear/model.onnx ]; then
        model=/usr/share/libonnx-testdata/data/pytorch-converted/test_Linear/model.onnx
    fi
    if [ -n "$model" ]; then
        archive=$stage/model.onnxzip
        LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
            "$bindir/onnxzip" pack "$model" -o "$archive" ||
            die "the installed onnxzip could not pack $model"
    else
        note "no ONNX model available (python3-onnx, libonnx-testdata): skipping the archive part"
    fi
fi

run_consumer() { # NAME BINARY
    local name=$1 bin=$2 out
    out=$("$bin") || die "$name consumer failed"
    note "$name: $out"
    [ -n "$archive" ] || return 0
    out=$("$bin" "$archive") || die "$name consumer could not open $archive"
    printf '%s\n' "$out" | sed -e 1d -e "s|^|install test: $name: |"
    if [ -n "$expect_tensors" ]; then
        grep -q ": $expect_tensors tensors\$" <<<"$out" ||
            die "$name consumer: expected $expect_tensors tensors"
    fi
}
cflags_strict=(-std=c11 -Wall -Wextra -Werror "${san_flags[@]}" "${consumer_defs[@]}")

# --- shared ------------------------------------------------------------------
case "$default_library" in shared|both)
    read -r -a libs <<<"$(pc --libs)"
    "$cc" "${cflags_strict[@]}" "${cflags[@]}" "$here/consumer.c" -o "$stage/consumer-shared" \
        "${libs[@]}" "${san_flags[@]}" || die "cannot build consumer.c against the shared library"
    resolved=$(LD_LIBRARY_PATH=$libdir ldd "$stage/consumer-shared" | grep 'libonnxzip\.so' || true)
    case "$resolved" in *"$libdir"/*) ;; *) die "consumer-shared does not load the staged libonnxzip.so: ${resolved:-not linked}" ;; esac
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run_consumer shared "$stage/consumer-shared"
    ;;
esac

# --- static ------------------------------------------------------------------
case "$default_library" in static|both)
    # The .a itself, then its private dependencies from `pkg-config --static`.
    read -r -a libs <<<"$(pc --static --libs)"
    static_libs=()
    for l in "${libs[@]}"; do [ "$l" = -lonnxzip ] || static_libs+=("$l"); done
    "$cc" "${cflags_strict[@]}" "${cflags[@]}" "$here/consumer.c" -o "$stage/consumer-static" \
        "$libdir/libonnxzip.a" "${static_libs[@]}" "${san_flags[@]}" ||
        die "cannot build consumer.c against libonnxzip.a with pkg-config --static"
    needed=$(readelf -d "$stage/consumer-static")
    if grep -q 'NEEDED.*libonnxzip' <<<"$needed"; then
        die "consumer-static still needs libonnxzip.so"
    fi
    run_consumer static "$stage/consumer-static"
    if [ "$minimal" = 1 ]; then
        # The minimal core: nothing but libc, zlib or libdeflate, and xxHash.
        note "pkg-config --static --libs: ${libs[*]}"
        for l in "${static_libs[@]}"; do
            case "$l" in -L*|-lz|-ldeflate|-lxxhash|-pthread|-lpthread|-lm) ;;
                *) die "the minimal core's pkg-config --static names $l" ;; esac
        done
        others=$(grep -o 'NEEDED.*\[.*\]' <<<"$needed" | grep -Ev '\[(libc|libz|libdeflate|libxxhash|libm|libpthread)\.so|\[ld-linux' || true)
        [ -z "$others" ] || die "the minimal core's consumer needs more than libc, zlib, libdeflate, xxHash: $others"
        # and fully static, libc included, when the sanitizers do not forbid it
        if [ "${#san_flags[@]}" -eq 0 ]; then
            "$cc" "${cflags_strict[@]}" "${cflags[@]}" "$here/consumer.c" -o "$stage/consumer-allstatic" -static \
                "$libdir/libonnxzip.a" "${static_libs[@]}" || die "cannot link the minimal core with -static"
            readelf -d "$stage/consumer-allstatic" | grep -q NEEDED && die "consumer-allstatic has dynamic dependencies"
            run_consumer all-static "$stage/consumer-allstatic"
        fi
    fi
    ;;
esac

# --- CMake: find_package(onnxzip) ------------------------------------------------
want "$libdir/cmake/onnxzip/onnxzipConfig.cmake"
want "$libdir/cmake/onnxzip/onnxzipConfigVersion.cmake"
[ "${#missing[@]}" -eq 0 ] || die "missing after install: ${missing[*]}"
command -v cmake >/dev/null || die "cmake not found (Debian: apt-get install cmake; .ci/install-deps installs it)"
cm=$stage/cmake
cmake -S "$here" -B "$cm" -DCMAKE_PREFIX_PATH="$dest$prefix" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="${cflags_strict[*]/#-DCONSUMER_MODEL_PROTO/}" -DCMAKE_EXE_LINKER_FLAGS="${san_flags[*]}" \
    >"$stage/cmake.log" 2>&1 || { cat "$stage/cmake.log" >&2; die "cmake cannot configure the consumer (find_package(onnxzip))"; }
grep -- '-- onnxzip ' "$stage/cmake.log" | sed 's/^-- /install test: cmake: /'
cmake --build "$cm" >>"$stage/cmake.log" 2>&1 || { cat "$stage/cmake.log" >&2; die "cmake cannot build the consumer"; }
case "$default_library" in shared|both)
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run_consumer cmake-shared "$cm/consumer-cmake"
    resolved=$(LD_LIBRARY_PATH=$libdir ldd "$cm/consumer-cmake" | grep 'libonnxzip\.so' || true)
    case "$resolved" in *"$libdir"/*) ;; *) die "consumer-cmake does not load the staged libonnxzip.so" ;; esac
    ;;
esac
case "$default_library" in static|both)
    [ -x "$cm/consumer-cmake-static" ] || die "onnxzip::onnxzip_static is missing from the CMake package"
    readelf -d "$cm/consumer-cmake-static" | grep -q 'NEEDED.*libonnxzip' && die "consumer-cmake-static needs libonnxzip.so"
    run_consumer cmake-static "$cm/consumer-cmake-static"
    ;;
esac

note "PASS"
