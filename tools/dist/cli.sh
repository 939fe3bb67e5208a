#!/usr/bin/env bash
# tools/dist.sh's cli step: the command-line tool linked statically,
#
#   OUT/onnxzip-VERSION-linux-x86_64                 (stripped; every feature)
#   OUT/onnxzip-VERSION-linux-x86_64.licenses.txt    (what it links, and their licenses)
#
#   cli.sh ROOT OUT WORK VERSION
#
# It runs on any x86_64 Linux (kernel 3.2+) with no onnxzip library, no -dev
# package and no shared library at all. Linked from Debian 12's static
# archives (libcrypto/libssl, jansson, protobuf-c, xxhash, libdeflate, zlib,
# libunistring, glibc) and two libraries built here from Debian's source
# packages, because Debian ships no static archive that links alone:
#  - libcurl 7.88.1: Debian's libcurl.a needs libgssapi_krb5.a, which does
#    not exist; built by its CMake for HTTP and HTTPS only (OpenSSL, zlib;
#    no LDAP, GSSAPI, SSH, IDN, PSL, HTTP/2, brotli, zstd), its CA bundle
#    /etc/ssl/certs/ca-certificates.crt and CA path /etc/ssl/certs (Debian,
#    Ubuntu, Alpine, Arch; where that file is missing, src/net/http_transfer.c
#    takes Fedora's, openSUSE's or /etc/ssl/cert.pem; CURL_CA_BUNDLE and
#    SSL_CERT_FILE are not read: --ca-file names another);
#  - libzip 1.7.3 (repack): Debian ships no libzip.a; zlib only.
# The sources come through apt (`apt-get source --download-only`, a private
# deb-src list for deb.debian.org, the archive's keyring: apt checks them
# against the signed Sources index), patched by dpkg-source as Debian builds
# them; both are built once per source version (WORK/prefix/*.stamp).
# Static glibc: names resolve through /etc/hosts and DNS (glibc 2.36's
# built-in files and dns modules); NSS modules such as mdns or LDAP hosts
# are not loaded (a linker warning says so for getaddrinfo).
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ROOT OUT WORK VERSION" >&2; exit 2; }
root=$1 out=$2 work=$3 version=$4
fail() { echo "cli.sh: $*" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || fail "builds the linux-x86_64 tool; this machine is $(uname -m)"
for c in apt-get dpkg-source cmake meson ninja strip file; do command -v "$c" >/dev/null || fail "no $c (.ci/install-deps)"; done
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix apt=$work/apt src=$work/src

# --- Debian's sources, through apt ----------------------------------------------
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$src" "$prefix/lib/pkgconfig"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat > "$apt/sources.list" <<LIST
deb-src [signed-by=$keyring] http://deb.debian.org/debian bookworm main
deb-src [signed-by=$keyring] http://deb.debian.org/debian bookworm-updates main
deb-src [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main
LIST
aptopts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
         -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)
apt-get "${aptopts[@]}" -qq update || fail "apt-get update of $apt/sources.list"

source_dir() { # PACKAGE: unpacked and patched into $src/PACKAGE-VERSION; prints that path
    local pkg=$1 dsc dir
    (cd "$src" && apt-get "${aptopts[@]}" -qq source --download-only "$pkg" > /dev/null) || fail "apt-get source $pkg"
    dsc=$(ls -t "$src/${pkg}"_*.dsc | head -1)
    dir=$src/$(basename "$dsc" .dsc)
    # --no-check: apt has checked the .dsc and the tarballs against the signed index
    [ -d "$dir" ] || dpkg-source -q -x --no-check "$dsc" "$dir" > /dev/null || fail "dpkg-source -x $dsc"
    echo "$dir"
}

cmake_static() { # NAME SOURCE CMAKE-OPTIONS...: built and installed into $prefix once per source
    local name=$1 dir=$2
    shift 2
    local stamp=$prefix/$name.stamp
    if [ "$(cat "$stamp" 2>/dev/null)" = "$(basename "$dir")" ]; then
        echo "$name: $(basename "$dir") (built before)"
        return
    fi
    SECONDS=0
    rm -rf "$work/build-$name"
    cmake -S "$dir" -B "$work/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF "$@" > "$work/$name.cmake.log" 2>&1 ||
        { tail -30 "$work/$name.cmake.log"; fail "cmake of $name"; }
    { cmake --build "$work/build-$name" && cmake --install "$work/build-$name"; } > "$work/$name.build.log" 2>&1 ||
        { tail -30 "$work/$name.build.log"; fail "build of $name"; }
    basename "$dir" > "$stamp"
    echo "$name: $(basename "$dir") built in $SECONDS s"
}

curl_src=$(source_dir curl)
cmake_static curl "$curl_src" -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF -DHTTP_ONLY=ON \
    -DCURL_USE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=ON -DCURL_ZLIB=ON -DCURL_DISABLE_LDAP=ON \
    -DCURL_DISABLE_LDAPS=ON -DUSE_LIBIDN2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
    -DUSE_NGHTTP2=OFF -DCURL_ZSTD=OFF -DCURL_BROTLI=OFF -DCURL_USE_GSSAPI=OFF -DENABLE_ARES=OFF \
    -DCURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt -DCURL_CA_PATH=/etc/ssl/certs
# curl's CMake writes a libcurl.pc for shared linking (libz.so, -lgcc_s): this one links statically
cat > "$prefix/lib/pkgconfig/libcurl.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: libcurl
Description: libcurl for onnxzip's static CLI (HTTP and HTTPS through OpenSSL)
Version: $(sed -n 's/^#define LIBCURL_VERSION "\([^"]*\)".*/\1/p' "$curl_src/include/curl/curlver.h")
Requires.private: libssl libcrypto zlib
Libs: -L\${libdir} -lcurl
Libs.private: -pthread
Cflags: -I\${includedir} -DCURL_STATICLIB
PC
zip_src=$(source_dir libzip)
cmake_static libzip "$zip_src" -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_GNUTLS=OFF \
    -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF -DENABLE_COMMONCRYPTO=OFF -DENABLE_WINDOWS_CRYPTO=OFF \
    -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_OSSFUZZ=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF

# --- the tool ---------------------------------------------------------------------
SECONDS=0
build=$work/build
opts=(-Ddefault_library=static -Dprefer_static=true -Dtests=false -Dpython=disabled -Djs=disabled
      -Dprotobuf_c=enabled -Dlibzip=enabled -Dlibdeflate=enabled -Dcurl=enabled -Dunistring=enabled
      -Dsigning=enabled -Dbuildtype=release -Dwerror=false -Db_pie=false -Dc_link_args=-static)
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
if [ -f "$build/meson-private/coredata.dat" ]; then
    meson setup --reconfigure "${opts[@]}" "$build" "$root" > "$work/setup.log" 2>&1
else
    meson setup "${opts[@]}" "$build" "$root" > "$work/setup.log" 2>&1
fi || { tail -30 "$work/setup.log"; fail "meson setup"; }
meson compile -C "$build" tools/onnxzip > "$work/compile.log" 2>&1 || { tail -30 "$work/compile.log"; fail "meson compile"; }
echo "onnxzip: compiled and linked in $SECONDS s"

exe=$out/onnxzip-$version-linux-x86_64
strip -o "$exe.tmp" "$build/tools/onnxzip"
file "$exe.tmp" | grep -q 'statically linked' || fail "not statically linked: $(file "$exe.tmp")"
v=$("$exe.tmp" --version)
[[ $v == "onnxzip $version "* ]] || fail "--version: $v"
! grep -qw no <<< "$v" || fail "a feature is missing: $v"
mv "$exe.tmp" "$exe"

# --- what it links, and the licenses ---------------------------------------------------
lic=$exe.licenses.txt
{
    echo "onnxzip $version for Linux x86_64, statically linked. onnxzip: Apache-2.0"
    echo "(the text: /usr/share/common-licenses/Apache-2.0 on Debian, or https://www.apache.org/licenses/LICENSE-2.0)."
    echo
    echo "It contains these libraries, each under the license below (Debian's copyright file of"
    echo "the package it comes from). glibc is LGPL-2.1+: onnxzip's source is open, so the program"
    echo "can be relinked with another glibc by building it (tools/dist/cli.sh)."
    for p in libc6 libssl3 libjansson4 libprotobuf-c1 libxxhash0 libdeflate0 zlib1g libunistring2; do
        f=/usr/share/doc/$p/copyright
        [ -f "$f" ] || fail "no $f (the license of $p, linked statically)"
        printf '\n==== %s %s (Debian 12) ====\n\n' "$p" "$(dpkg-query -W -f '${Version}' "$p")"
        cat "$f"
    done
    for d in "$curl_src" "$zip_src"; do
        printf '\n==== %s (Debian 12 source, built here) ====\n\n' "$(basename "$d")"
        cat "$d/debian/copyright"
    done
} > "$lic.tmp"
mv "$lic.tmp" "$lic"
echo "$exe: $(stat -c %s "$exe") bytes; $(basename "$lic"): $(stat -c %s "$lic") bytes"
echo "$v"
