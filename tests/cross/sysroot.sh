#!/usr/bin/env bash
# Makes the sysroot of a cross build: the cross compiler (and qemu-user) from
# Debian, and the target architecture's Debian packages that the build and
# the tests link (libc, zlib, xxHash, protobuf-c, libzip and what they load),
# unpacked into DIR, with DIR/sysroot.ini naming it for meson:
#
#   tests/cross/sysroot.sh ARCH DIR       (ARCH: s390x, i386 or windows)
#   meson setup --cross-file DIR/sysroot.ini --cross-file tests/cross/ARCH.ini BUILD
#
# The packages are unpacked (dpkg -x), not installed: a foreign
# architecture's Multi-Arch: same packages must match the host's versions
# exactly, and a mirror's foreign indices often lag the host's security
# updates by days. Their package lists go to DIR/apt, not the system's: the
# host's dpkg gets no foreign architecture, so its own `apt-get update` never
# depends on a foreign index. Needs root for the cross compiler (apt-get
# install; run by .ci/run).
set -euo pipefail
arch=${1:?usage: sysroot.sh ARCH DIR}
dir=${2:?usage: sysroot.sh ARCH DIR}
case "$arch" in
    s390x) triplet=s390x-linux-gnu; tools=(gcc-s390x-linux-gnu qemu-user) ;;
    i386) triplet=i686-linux-gnu; tools=(gcc-i686-linux-gnu) ;;
    windows) triplet=x86_64-w64-mingw32; tools=(gcc-mingw-w64-x86-64 libz-mingw-w64-dev libxxhash-dev wine64) ;;
    *) echo "sysroot.sh: unknown architecture '$arch' (s390x, i386, windows)" >&2; exit 2 ;;
esac
pkgs=(libc6 libc6-dev linux-libc-dev libcrypt1 libcrypt-dev libgcc-s1
      zlib1g zlib1g-dev libxxhash0 libxxhash-dev libprotobuf-c1 libprotobuf-c-dev
      libzip4 libzip-dev libbz2-1.0 libssl3)

if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "${pkgs[*]}" ] &&
   command -v "${triplet}-gcc" >/dev/null; then
    echo "sysroot.sh: $dir is up to date"
    exit 0
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null
rm -rf "$dir"
if [ "$arch" = windows ]; then
    # MinGW-w64's own sysroot has the C runtime and zlib; xxHash is used
    # header-only: its two headers, alone in an include directory.
    mkdir -p "$dir/include"
    dir=$(cd "$dir" && pwd)
    ln -s /usr/include/xxhash.h /usr/include/xxh3.h "$dir/include/"
    printf "[constants]\nsysroot = '%s'\n" "$dir" > "$dir/sysroot.ini"
    echo "${pkgs[*]}" > "$dir/.complete"
    echo "sysroot.sh: windows include directory in $dir"
    exit 0
fi
mkdir -p "$dir/debs" "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
dir=$(cd "$dir" && pwd)
apt=(apt-get -qq -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
     -o "APT::Architectures::=$arch" -o "APT::Architecture=$arch" -o APT::Sandbox::User=root)
# A mirror in the middle of a sync can serve an index that fails its
# checksum: try a few times; the download below says what is still missing.
for i in 1 2 3; do
    "${apt[@]}" update && break
    echo "sysroot.sh: apt-get update for $arch failed (try $i of 3)" >&2
    sleep 10
done
(cd "$dir/debs" && "${apt[@]}" download "${pkgs[@]/%/:$arch}")
for deb in "$dir"/debs/*.deb; do
    dpkg -x "$deb" "$dir"
done
rm -rf "$dir/debs" "$dir/apt"
# Absolute symbolic links (libz.so -> /lib/...) would resolve on the host:
# point them into the sysroot.
find "$dir" -type l -lname '/*' | while read -r link; do
    ln -sfn "$dir$(readlink "$link")" "$link"
done
printf "[constants]\nsysroot = '%s'\n" "$dir" > "$dir/sysroot.ini"
echo "${pkgs[*]}" > "$dir/.complete"
echo "sysroot.sh: $arch sysroot in $dir"
