#!/usr/bin/env bash
# Compiles every CUDA kernel (kernels/src/gpu/kernels.cu) with NVRTC, through the same function the
# runtime uses (kernels::gpu::compile_ptx), for f64 and f32 and for sm_80 and sm_90, and assembles
# the PTX with `ptxas -v`: prints registers and spills per kernel, and fails when a kernel does not
# compile (naming it, with the compiler log) or spills. Needs no GPU and no NVIDIA driver.
#
# NVRTC and ptxas come from the PyPI wheels nvidia-cuda-nvrtc and nvidia-cuda-nvcc (CUDA 13,
# ~105 MB), installed with pip into target/nvrtc-check/pkgs and reused by later runs.
# cudarc (feature cuda-13000, dynamic loading) dlopens libnvrtc by name; its candidates include
# libnvrtc.so.13, the file the wheel ships, so LD_LIBRARY_PATH is all it needs.
#
# Usage: ci/gpu/nvrtc-check.sh [--with-tests]
#   --with-tests  also runs the kernels crate's NVRTC unit tests (a broken kernel is reported by
#                 name; all kernels compile at the runtime's default architecture) with NVRTC loaded.
# Environment: NVRTC_CHECK_DIR (default target/nvrtc-check), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/../.."

dir="${NVRTC_CHECK_DIR:-$PWD/target/nvrtc-check}"
pkgs="$dir/pkgs"
cuda="$pkgs/nvidia/cu13"
python="${PYTHON:-python3}"
start=$(date +%s)

if [[ -e "$cuda/lib/libnvrtc.so.13" && -x "$cuda/bin/ptxas" ]]; then
  echo "nvrtc-check: using the cached NVRTC and ptxas in $pkgs"
else
  echo "nvrtc-check: installing nvidia-cuda-nvrtc and nvidia-cuda-nvcc (CUDA 13) into $pkgs"
  rm -rf "$pkgs"
  mkdir -p "$dir"
  "$python" -m pip install --quiet --no-cache-dir --disable-pip-version-check --root-user-action=ignore --no-deps --target "$pkgs" \
    'nvidia-cuda-nvrtc>=13,<14' 'nvidia-cuda-nvcc>=13,<14'
fi
for f in "$cuda/lib/libnvrtc.so.13" "$cuda/bin/ptxas"; do
  if [[ ! -e "$f" ]]; then
    echo "nvrtc-check: $f missing after install (wheel layout changed?)" >&2
    ls -R "$pkgs/nvidia" >&2 || true
    exit 2
  fi
done
echo "nvrtc-check: $("$cuda/bin/ptxas" --version | tail -n 1)"

export LD_LIBRARY_PATH="$cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PTXAS="$cuda/bin/ptxas"

cargo build -q -p kernels --features gpu --example nvrtc_check
./target/debug/examples/nvrtc_check --arch sm_80,sm_90 --out "$dir/ptx"

if [[ "${1:-}" == "--with-tests" ]]; then
  cargo test -q -p kernels --features gpu --lib gpu::compile -- --nocapture
fi
echo "nvrtc-check: done in $(( $(date +%s) - start )) s"
