#!/usr/bin/env bash
# Builds onnxzip's release artifacts into dist/, from this checkout:
#
#   tools/dist.sh [--only sdist|wheel|npm|cli]...
#
#   dist/onnxzip-VERSION.tar.gz                  the sdist (pip builds it where
#                                                .ci/install-deps's -dev packages are)
#   dist/onnxzip-VERSION-cp3XX-...manylinux_*.whl  wheels repaired by auditwheel
#   dist/onnxzip-VERSION.tgz                     the npm package (npm pack)
#   dist/onnxzip-VERSION-linux-x86_64            the CLI, statically linked
#
# Needs what .ci/install-deps installs; the Python tools it uses (build,
# meson-python, auditwheel, ...) are pinned in tools/dist/requirements.txt and
# installed into a venv of its own under build-dist/ (the wheels' build
# backend, per pyenv CPython, in tools/dist/requirements-build.txt). VERSION is meson.build's
# project() version, the one version of the library, the CLI, the wheel and
# the npm package. tests/dist/run.sh installs and checks what this writes.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/dist work=$root/build-dist
only=()
while [ $# -gt 0 ]; do
    case $1 in
        --only) only+=("$2"); shift 2 ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "dist.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#only[@]} -gt 0 ] || only=(sdist wheel npm cli)

version=$("$root/tools/dist/version.sh")
mkdir -p "$out" "$work"
echo "onnxzip $version: ${only[*]} into $out"

for step in "${only[@]}"; do
    case $step in
        sdist|wheel|npm|cli) ;;
        *) echo "dist.sh: unknown artifact '$step' (sdist, wheel, npm or cli)" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    printf '\n== %s\n' "$step"
    "$root/tools/dist/$step.sh" "$root" "$out" "$work/$step" "$version"
    echo "== $step: $(( $(date +%s) - start )) s"
done

printf '\n== dist/\n'
(cd "$out" && ls -l --block-size=K -- *)
