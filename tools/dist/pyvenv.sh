#!/usr/bin/env bash
# Makes (or reuses) a venv of PYTHON holding exactly REQUIREMENTS' pins:
#
#   pyvenv.sh PYTHON VENV REQUIREMENTS
#
# --no-deps: only what the file pins is installed, and `pip check` then
# proves the pins complete. VENV/.pins records PYTHON and the file's
# SHA-256: a venv made from other pins or another Python is made again.
# Never installs into PYTHON itself.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PYTHON VENV REQUIREMENTS" >&2; exit 2; }
python=$1 venv=$2 req=$3
stamp="$python $(sha256sum < "$req" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
echo "pyvenv.sh: $venv ($("$python" --version 2>&1), $(basename "$req"))"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --no-deps -r "$req"
"$venv/bin/python" -m pip check --disable-pip-version-check
echo "$stamp" > "$venv/.pins"
