#!/usr/bin/env bash
# A cross build of onnxzip and its C test suite on another architecture,
# then the same CLI operations as the x86-64 reference build, compared byte
# for byte (tests/cross/compare.py).
#
#   tests/cross/run.sh ARCH REFERENCE_CLI      (ARCH: i386, s390x or windows)
#
# Builds in build-ARCH/ with the sysroot in build-ARCH-sysroot/
# (tests/cross/sysroot.sh; needs root for apt). i386 binaries run natively
# through the sysroot's loader, s390x (big-endian) ones under qemu-user.
# The suites run are the compiled tests (unit, corpus, fuzz replays); the
# script tests drive host tools and the no-emulator one measures the host's
# page cache. Python is not built (its tests need a target interpreter).
# windows (MinGW-w64, under Wine) runs its suite (the C unit tests but the
# POSIX-only ones, and tests/windows: the fuzz seed corpus read); then
# tests/support/read_digest.c built for Windows must print what the reference
# build's prints for archives and classic layouts written by REFERENCE_CLI
# (whose build dir holds tests/read_digest), and the Windows CLI must write
# what REFERENCE_CLI writes, byte for byte (compare.py).
set -euo pipefail
arch=${1:?usage: run.sh ARCH REFERENCE_CLI}
ref=${2:?usage: run.sh ARCH REFERENCE_CLI}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
dir=build-$arch
sysroot=$root/build-$arch-sysroot
bash tests/cross/sysroot.sh "$arch" "$sysroot"
case "$arch" in
    s390x) wrapper="qemu-s390x -L $sysroot"; skip=(--no-suite no-emulator) ;;
    i386) wrapper="$sysroot/lib/i386-linux-gnu/ld-linux.so.2 --library-path $sysroot/lib/i386-linux-gnu:$sysroot/usr/lib/i386-linux-gnu"
          skip=() ;;
    windows) gcc_dir=$(dirname "$(x86_64-w64-mingw32-gcc -print-libgcc-file-name)")
             export WINEDEBUG=-all WINEPATH="$root/$dir/src;/usr/x86_64-w64-mingw32/lib;$gcc_dir"
             wrapper="setarch x86_64 -R /usr/lib/wine/wine64" # as in tests/cross/windows.ini
             skip=() ;;
    *) echo "run.sh: unknown architecture '$arch'" >&2; exit 2 ;;
esac
# -Dcurl=disabled -Dsigning=disabled: the sysroots hold no libcurl, libcrypto
# headers or jansson (remote archives and signatures are tested on x86-64),
# and no lookup may find the host's instead
opts=(--cross-file "$sysroot/sysroot.ini" --cross-file "tests/cross/$arch.ini" --wrap-mode=nodownload
      --werror -Dpython=disabled -Dcurl=disabled -Dsigning=disabled)
[ "$arch" = windows ] && opts+=(-Dprotobuf_c=disabled -Dlibzip=disabled -Dlibdeflate=disabled)
if [ -f "$dir/meson-private/coredata.dat" ]; then
    meson setup --reconfigure "${opts[@]}" "$dir"
else
    meson setup "${opts[@]}" "$dir"
fi
meson compile -C "$dir"
status=0
corpus=()
[ -d ../shared/corpus ] && corpus=(--corpus ../shared/corpus)
if [ "$arch" = windows ]; then
    # One wineserver for all the runs (-p: it stays), its services started
    # here with no pipe of ours: a run's output then ends with the run.
    /usr/lib/wine/wineserver64 -p 2>/dev/null || echo "run.sh: a wineserver is running already: using it"
    $wrapper wineboot </dev/null >/dev/null 2>&1 || true
    meson test -C "$dir" --print-errorlogs --suite windows || status=$?
    digest=$(dirname "$(dirname "$ref")")/tests/read_digest
    /usr/bin/python3 tests/cross/compare.py --reference "$ref" --cross "$dir/tests/read_digest.exe" \
        --wrapper "$wrapper" --reader "$digest" "$dir/tests/read_digest.exe" "${corpus[@]}" || status=1
    /usr/bin/python3 tests/cross/compare.py --reference "$ref" --cross "$dir/tools/onnxzip.exe" --wrapper "$wrapper" \
        "${corpus[@]}" || status=1
    /usr/lib/wine/wineserver64 -k || true
    exit $status
fi
meson test -C "$dir" --print-errorlogs --suite unit --suite corpus --suite fuzz --no-suite script "${skip[@]}" \
    || status=$?
/usr/bin/python3 tests/cross/compare.py --reference "$ref" --cross "$dir/tools/onnxzip" --wrapper "$wrapper" \
    "${corpus[@]}" || status=1
exit $status
