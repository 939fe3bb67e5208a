#!/usr/bin/env bash
# Makes the sysroot of a cross build: the cross compiler (and qemu-user) from
# Debian, and the target architecture's Debian packages that the build and
# the tests link (libc, zlib, xxHash, protobuf-c, libzip and what they load),
# unpacked into DIR, with DIR/sysroot.ini naming it for meson:
#
#   tests/cross/sysroot.sh ARCH DIR       (ARCH: s390x or i386)
#   meson setup --cross-file DIR/sysroot.ini --cross-file tests/cross/ARCH.ini BUILD
#
# The packages are unpacked (dpkg -x), not installed: a foreign
# architecture's Multi-Arch: same packages must match the host's versions
# exactly, and a mirror's foreign indices often lag the host's security
# updates by days. Unpacking needs only `dpkg --add-architecture` and the
# package lists. Needs root for apt (run by .ci/run).
set -euo pipefail
arch=${1:?usage: sysroot.sh ARCH DIR}
dir=${2:?usage: sysroot.sh ARCH DIR}
case "$arch" in
    s390x) triplet=s390x-linux-gnu; tools=(gcc-s390x-linux-gnu qemu-user) ;;
    i386) triplet=i686-linux-gnu; tools=(gcc-i686-linux-gnu) ;;
    *) echo "sysroot.sh: unknown architecture '$arch' (s390x, i386)" >&2; exit 2 ;;
esac
pkgs=(libc6 libc6-dev linux-libc-dev libcrypt1 libcrypt-dev libgcc-s1
      zlib1g zlib1g-dev libxxhash0 libxxhash-dev libprotobuf-c1 libprotobuf-c-dev
      libzip4 libzip-dev libbz2-1.0 libssl3)

if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "${pkgs[*]}" ] &&
   command -v "${triplet}-gcc" >/dev/null; then
    echo "sysroot.sh: $dir is up to date"
    exit 0
fi
if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    dpkg --add-architecture "$arch"
fi
# A mirror in the middle of a sync can serve a foreign index that fails its
# checksum: try the update a few times.
for i in 1 2 3; do
    apt-get update -qq && break
    echo "sysroot.sh: apt-get update failed (try $i of 3)" >&2
    sleep 10
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null
rm -rf "$dir"
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
(cd "$dir/debs" && apt-get download -qq "${pkgs[@]/%/:$arch}")
for deb in "$dir"/debs/*.deb; do
    dpkg -x "$deb" "$dir"
done
rm -rf "$dir/debs"
# Absolute symbolic links (libz.so -> /lib/...) would resolve on the host:
# point them into the sysroot.
find "$dir" -type l -lname '/*' | while read -r link; do
    ln -sfn "$dir$(readlink "$link")" "$link"
done
printf "[constants]\nsysroot = '%s'\n" "$dir" > "$dir/sysroot.ini"
echo "${pkgs[*]}" > "$dir/.complete"
echo "sysroot.sh: $arch sysroot in $dir"
