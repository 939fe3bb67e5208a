#!/bin/sh
# The shared library exports exactly the functions the public header declares
# with ONNXZIP_API, and the header compiles alone as C11 and as C++.
set -eu
lib=$1 header=$2
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n 's/^ONNXZIP_API [^(]*[ *]\(onnxzip_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u >"$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort -u >"$tmp/exported"
if ! diff -u "$tmp/declared" "$tmp/exported"; then
    echo "symbols: exported functions differ from the header's ONNXZIP_API declarations" >&2
    exit 1
fi
n=$(wc -l <"$tmp/declared")
[ "$n" -gt 20 ] || { echo "symbols: only $n declarations parsed from $header" >&2; exit 1; }
inc=$(dirname "$(dirname "$header")")
printf '#include <onnxzip/onnxzip.h>\nint main(void) { return onnxzip_version_number() == 0; }\n' >"$tmp/c.c"
$cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -c "$tmp/c.c" -o "$tmp/c.o"
if command -v c++ >/dev/null 2>&1; then
    cp "$tmp/c.c" "$tmp/cxx.cc"
    c++ -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/cxx.cc" -o "$tmp/cxx.o"
    cxx=", compiles as C++"
else
    cxx=", no C++ compiler to check C++"
fi
echo "symbols: $n exported functions match the header; header compiles as C11$cxx"
echo "symbols: 1 passed, 0 failed"
