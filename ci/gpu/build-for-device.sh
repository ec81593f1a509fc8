#!/usr/bin/env bash
# Builds, on a machine with the Rust toolchain, everything a GPU machine without one needs for the
# GPU measurements, and copies it into one folder (default target/device-bundle/):
#
#   bin/signorini            the release CLI with --features gpu (Table 3 frame timings)
#   tests/kernels            the kernels crate's release unit tests with --features gpu (GPU parity
#                            of every kernel: `tests/kernels gpu`)
#   tests/solvers            the solvers crate's release unit tests with --features gpu (the
#                            device-resident local-global's copy count on CUDA:
#                            `tests/solvers device_resident`)
#   tests/gpu_backend        the CLI's GPU tests (CPU/GPU trajectory parity; finds the CLI through
#                            SIGNORINI_BIN, which run-on-device.sh sets)
#   bench/<name>             the criterion benchmarks with --features gpu (subadmm: Table III)
#   run-on-device.sh, device_run.py, gpu-timings-doc.py, MANIFEST
#   lib/                     with --with-nvrtc: libnvrtc from ci/gpu/nvrtc-check.sh's install, for a
#                            GPU machine with the driver but without the CUDA toolkit
#
# Copy the folder to the GPU machine and run `./run-on-device.sh` there (see that script).
# Usage: ci/gpu/build-for-device.sh [--with-nvrtc] [BUNDLE_DIR]
#   env BENCHES="subadmm local_global" builds only these benches (default: all).
set -euo pipefail
cd "$(dirname "$0")/../.."
with_nvrtc=0
if [[ "${1:-}" == "--with-nvrtc" ]]; then with_nvrtc=1; shift; fi
bundle="${1:-target/device-bundle}"
benches="${BENCHES:-}"

# the executables of the artifacts of a `cargo ... --message-format=json` run on stdin
executables() {
  python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["target"]["kind"][0], m["executable"])
'
}

echo "build-for-device: release CLI (--features gpu)"
cargo build --release --features gpu --bin signorini
echo "build-for-device: release test binaries (--features gpu)"
tests=$( { cargo test --release --features gpu --no-run --message-format=json -p kernels --lib;
           cargo test --release --features gpu --no-run --message-format=json -p solvers --lib;
           cargo test --release --features gpu --no-run --message-format=json --test gpu_backend; } | executables)
echo "build-for-device: benchmarks (--features gpu)"
bench_args=()
for b in $benches; do bench_args+=(--bench "$b"); done
if [[ ${#bench_args[@]} -eq 0 ]]; then bench_args=(--benches); fi
bench_bins=$(cargo bench --features gpu --no-run --message-format=json "${bench_args[@]}" | executables)

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/tests" "$bundle/bench"
cp target/release/signorini "$bundle/bin/signorini"
while read -r name kind exe; do
  [[ -z "$name" ]] && continue
  case "$kind" in
    lib) cp "$exe" "$bundle/tests/$name" ;;
    test) cp "$exe" "$bundle/tests/$name" ;;
  esac
done <<<"$tests"
while read -r name kind exe; do
  [[ -z "$name" || "$kind" != bench ]] && continue
  cp "$exe" "$bundle/bench/$name"
done <<<"$bench_bins"
# line tables only matter for backtraces; stripping keeps the bundle small enough to carry (STRIP=0 keeps them)
if [[ "${STRIP:-1}" != 0 ]] && command -v strip >/dev/null 2>&1; then
  find "$bundle/bin" "$bundle/tests" "$bundle/bench" -type f -exec strip --strip-debug {} +
fi
cp ci/gpu/run-on-device.sh ci/gpu/device_run.py ci/gpu/gpu-timings-doc.py "$bundle/"
if [[ $with_nvrtc == 1 ]]; then
  nvrtc_lib="${NVRTC_CHECK_DIR:-target/nvrtc-check}/pkgs/nvidia/cu13/lib"
  [[ -e "$nvrtc_lib/libnvrtc.so.13" ]] || bash ci/gpu/nvrtc-check.sh
  mkdir -p "$bundle/lib"
  cp -L "$nvrtc_lib"/libnvrtc* "$bundle/lib/"
fi
{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
  rustc --version
  (cd "$bundle" && find bin tests bench -type f | sort)
} >"$bundle/MANIFEST"
needs=(bin/signorini tests/kernels tests/gpu_backend)
if [[ -z "$benches" || " $benches " == *" subadmm "* ]]; then needs+=(bench/subadmm); fi
for need in "${needs[@]}"; do
  if [[ ! -x "$bundle/$need" ]]; then
    echo "build-for-device: $need missing from the bundle" >&2
    exit 1
  fi
done
echo "build-for-device: bundle in $bundle ($(du -sh "$bundle" | cut -f1)):"
sed 's/^/  /' "$bundle/MANIFEST"
