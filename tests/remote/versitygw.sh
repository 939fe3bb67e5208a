#!/usr/bin/env bash
# versitygw, the S3 server of tests/python/test_s3.py (tests/remote/s3.py
# starts it), built from source with Go from the Go module proxy:
#
#   tests/remote/versitygw.sh DIR          DIR/bin/versitygw (tests/run.sh:
#                                          DIR = BUILDDIR/versitygw)
#   tests/remote/versitygw.sh --check DIR  exit 0 when DIR/bin/versitygw is
#                                          the pinned version, else 1
#
# Built once per machine and user into the cache ($ONNXZIP_CACHE, default
# ~/.cache/onnxzip/versitygw-VERSION/bin/versitygw: about 2 minutes on two
# cores), then linked (or copied) into each build tree, so that build-test,
# build-asan, build-fallbacks share one build. The Go toolchain comes from
# `.ci/install-deps --go` (a go >= 1.25 already there, else the pinned
# toolchain it downloads). The module and build caches of the build are
# removed once the binary is there. Idempotent; one builder at a time (flock).
set -euo pipefail

version=v1.8.0
module=github.com/versity/versitygw/cmd/versitygw

check=0
if [ "${1-}" = --check ]; then
    check=1
    shift
fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 [--check] DIR" >&2
    exit 2
fi
dir=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
stamp=$dir/.onnxzip-versitygw

if [ -x "$dir/bin/versitygw" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
    [ "$check" = 1 ] || echo "versitygw.sh: $dir/bin/versitygw is $version"
    exit 0
fi
if [ "$check" = 1 ]; then
    echo "versitygw.sh: $dir/bin/versitygw is missing or not $version" >&2
    exit 1
fi

cache=${ONNXZIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnxzip}/versitygw-$version
mkdir -p "$cache"
exec 9> "$cache.lock"
flock 9

if [ ! -x "$cache/bin/versitygw" ]; then
    go=$("$root/.ci/install-deps" --go) || {
        echo "versitygw.sh: no Go toolchain (.ci/install-deps --go failed)" >&2
        exit 1
    }
    start=$(date +%s)
    echo "versitygw.sh: building $module@$version with $go ($("$go" env GOVERSION)) into $cache"
    rm -rf "$cache/bin.tmp" "$cache/gomod" "$cache/gobuild"
    # GOTOOLCHAIN=local: this go, never one it would download by itself;
    # -modcacherw: the module cache can be removed afterwards.
    if ! env GOBIN="$cache/bin.tmp" GOMODCACHE="$cache/gomod" GOCACHE="$cache/gobuild" \
            GOTOOLCHAIN=local GOFLAGS=-modcacherw GOPATH="$cache/gopath" \
            "$go" install "$module@$version"; then
        echo "versitygw.sh: go install $module@$version failed" >&2
        exit 1
    fi
    mv "$cache/bin.tmp" "$cache/bin"
    rm -rf "$cache/gomod" "$cache/gobuild" "$cache/gopath"
    echo "versitygw.sh: built in $(( $(date +%s) - start )) s"
fi

mkdir -p "$dir/bin"
rm -f "$dir/bin/versitygw" "$stamp"
ln "$cache/bin/versitygw" "$dir/bin/versitygw" 2>/dev/null ||
    cp "$cache/bin/versitygw" "$dir/bin/versitygw"
echo "$version" > "$stamp"
echo "versitygw.sh: $dir/bin/versitygw is $version"
