#!/usr/bin/env bash
# Runs the GPU measurements from a bundle made by ci/gpu/build-for-device.sh, on a machine with an
# NVIDIA GPU and no Rust toolchain (needs bash and python3). Run it from the bundle folder or give
# its path; results go to WORK/gpu-timings.json (default WORK: ./device-run):
#
#  1. GPU parity: tests/kernels gpu (every kernel against its CPU reference), tests/solvers
#     device_resident (no vector copy inside the local-global loop on CUDA) and tests/gpu_backend
#     (100-step CPU/GPU trajectory parity); a test that prints "skipping GPU test" counts as failed.
#  2. Zeng et al. Table 3 frame times: twisting bar with local_global at 50x9x9, 65x12x12, 80x15x15
#     cells (5,100 / 11,154 / 20,736 vertices), 5 frames, --backend cpu and gpu; median of frames
#     1-4, first frame (includes the one-time S = L^-1 P build), peak RSS, peak device memory
#     (nvidia-smi sampled every 0.1 s, driver view), per-stage columns when the solver logs them.
#  3. Lee et al. Table III: bench subadmm at 8 and 27 robots at 1, 2, 4, 8, 16 threads
#     (RAYON_NUM_THREADS and the solver's `threads`), with No Sub/SubADMM and No Body/SubADMM.
#
# Without a usable GPU it says "no GPU: <reason>" and still runs the CPU parts (2 and 3).
# Then, with a Rust checkout: python3 ci/gpu/gpu-timings-doc.py WORK/gpu-timings.json
# regenerates the measured part of docs/gpu-timings.md.
#
# Usage: run-on-device.sh [--bundle DIR] [--work DIR] [--out FILE] [--threads 1,2,4,8,16]
#          [--robots 8,27] [--bars 50x9x9,65x12x12,80x15x15] [--quick] [--skip parity,frames,cpu-frames,gpu-frames,subadmm]
# A bundle made with `build-for-device.sh --with-nvrtc` carries libnvrtc in lib/ for machines
# that have the driver but not the CUDA toolkit; without lib/ the script looks for a CUDA 13
# libnvrtc under /usr/local/cuda* and in Python environments' nvidia wheels.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v python3 >/dev/null 2>&1; then
  echo "run-on-device: python3 is needed (standard library only)" >&2
  exit 2
fi
py="$here/device_run.py"
[[ -f "$py" ]] || py="$here/../../ci/gpu/device_run.py"
exec python3 "$py" --bundle "$here" "$@"
