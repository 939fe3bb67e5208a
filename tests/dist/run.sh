#!/usr/bin/env bash
# The release artifacts, installed where nothing of onnxzip's build is:
#
#   tests/dist/run.sh [--no-build] [CHECK...]      (as root: bare_debian uses chroot)
#
# First runs tools/dist.sh (all four artifacts into dist/; --no-build uses
# what dist/ holds), then each CHECK (default: all), each a script of this
# directory given DIST and a scratch directory under build-dist/tests/:
#   pythons      the wheel into venvs of pyenv's CPython 3.9 to 3.13, with
#                numpy and onnx from PyPI: the README's Python example
#   node         the npm tarball into an empty project on Node.js 18 and 20
#   cli          the static CLI on this machine
#   bare_debian  the wheel and the static CLI in a fresh minimal Debian 12
#                with only python3, python3-venv and ca-certificates
# Not part of tests/run.sh or CI (tens of minutes, root, the network).
# Prints each check's time and exit status; exit status 0 when all pass.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=1 checks=()
for a in "$@"; do
    case $a in
        --no-build) build=0 ;;
        -h|--help) sed -n '2,/^set -/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        pythons|node|cli|bare_debian) checks+=("$a") ;;
        *) echo "run.sh: unknown argument '$a' (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#checks[@]} -gt 0 ] || checks=(pythons node cli bare_debian)
dist=$repo/dist scratch=$repo/build-dist/tests

if [ "$build" = 1 ]; then
    start=$(date +%s)
    "$repo/tools/dist.sh" || { echo "run.sh: tools/dist.sh failed" >&2; exit 1; }
    echo "TIME tools/dist.sh: $(( $(date +%s) - start )) s"
fi

declare -A result took
for c in "${checks[@]}"; do
    printf '\n######## %s\n' "$c"
    start=$(date +%s)
    rm -rf "${scratch:?}/$c"
    mkdir -p "$scratch/$c"
    if [ "$c" = bare_debian ]; then
        "$repo/tests/dist/bare_debian.sh" "$dist"
    else
        "$repo/tests/dist/$c.sh" "$dist" "$scratch/$c"
    fi
    result[$c]=$?
    took[$c]=$(( $(date +%s) - start ))
done

printf '\n######## summary\n'
status=0
for c in "${checks[@]}"; do
    printf '%-12s %s  %4d s\n' "$c" "$([ "${result[$c]}" = 0 ] && echo PASS || echo "FAIL (exit ${result[$c]})")" \
        "${took[$c]}"
    [ "${result[$c]}" = 0 ] || status=1
done
exit $status
