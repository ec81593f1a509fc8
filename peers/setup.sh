#!/usr/bin/env bash
# Creates the Python virtual environment of the reference engines (default: target/peers-venv)
# and installs peers/requirements.txt by package name with pip. `--drake` also installs
# peers/requirements-drake.txt (a large wheel; optional). Prints the venv's python path last.
#
#   peers/setup.sh [--drake] [VENV_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
drake=0
venv="$root/target/peers-venv"
for a in "$@"; do
  case "$a" in
    --drake) drake=1 ;;
    -h|--help) sed -n 2,6p "$0"; exit 0 ;;
    *) venv="$a" ;;
  esac
done
python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "error: $python not found (set PYTHON=/path/to/python3.10+)" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --no-cache-dir --disable-pip-version-check -r "$root/peers/requirements.txt"
if [ "$drake" = 1 ]; then
  "$venv/bin/python" -m pip install --quiet --no-cache-dir --disable-pip-version-check -r "$root/peers/requirements-drake.txt"
fi
echo "$venv/bin/python"
