#!/usr/bin/env bash
# Installs the Siconos reference row of `signorini fclib bench` from the distribution's packages
# (Debian/Ubuntu: python3-siconos, python3-h5py, python3-scipy) with apt-get, non-interactively,
# then checks that `import siconos.numerics` works with the distribution's interpreter (the
# packages install for /usr/bin/python3, not for a pyenv or venv python earlier on PATH; override
# with SICONOS_PYTHON). Needs root (or sudo). Prints that interpreter's path last and exits 0 when
# Siconos is usable; otherwise one line `error: ...` naming what failed, exit 2.
#
#   peers/setup-siconos.sh
set -euo pipefail
packages=(python3-siconos python3-h5py python3-scipy)
py="${SICONOS_PYTHON:-/usr/bin/python3}"
check() { "$py" -c "import siconos.numerics, h5py, scipy.sparse" 2>/dev/null; }
if check; then
  echo "$py"
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "error: installing ${packages[*]} needs root (no sudo)" >&2; exit 2; fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: apt-get not found: install ${packages[*]} with the system's package manager" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >/tmp/setup-siconos.log 2>&1; then
  $sudo apt-get update -q >>/tmp/setup-siconos.log 2>&1 || true
  if ! $sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >>/tmp/setup-siconos.log 2>&1; then
    echo "error: apt-get install ${packages[*]} failed: $(tail -n 1 /tmp/setup-siconos.log)" >&2
    exit 2
  fi
fi
if ! err=$("$py" -c "import siconos.numerics, h5py, scipy.sparse" 2>&1); then
  echo "error: installed, but 'import siconos.numerics' fails: $(echo "$err" | tail -n 1)" >&2
  exit 2
fi
echo "$py"
