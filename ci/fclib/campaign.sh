#!/usr/bin/env bash
# FCLIB campaign on problems the project writes itself: exports steps of signorini's cases as
# FCLIB files (global form with the local form when small; some local-only), copies the libhdf5
# fixture beside them, runs `signorini fclib bench` on them and, when Siconos is installed
# (peers/setup-siconos.sh), the Siconos reference row, then `signorini report`.
#
#   ci/fclib/campaign.sh [--quick] [--bin PATH] [--out DIR]
#
# --quick (CI): 12 problems, solvers pgs,canal,nsn, 5 s per pair. Without it: 60 problems (every
# case that exports, at several steps and sizes), every solver that takes FCLIB, 10 s per pair.
# SOLVERS, TIME_LIMIT, MAX_ITERATIONS, TOLERANCE override; SKIP_SICONOS=1 leaves Siconos out.
# Writes OUT/files/*.hdf5, OUT/runs/*.json (records), OUT/report/{index.html,summary.md}.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
quick=0
bin="$root/target/release/signorini"
out="$root/runs/fclib-campaign"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --bin) bin="$2"; shift ;;
    --out) out="$2"; shift ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "error: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [ ! -x "$bin" ]; then
  echo "error: $bin not found: build it (cargo build --release) or pass --bin" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out/files"
n=0
export_one() { # name, step, extra args...
  local name="$1" step="$2"; shift 2
  if "$bin" fclib export --step "$step" "$@" "$out/files/$name-s$step.hdf5" >/dev/null 2>"$out/export.err"; then
    n=$((n + 1))
  else
    echo "   (not exported: $name step $step: $(tail -n 1 "$out/export.err"))"
  fi
}
if [ "$quick" = 1 ]; then
  for s in 3 20; do export_one stack3 "$s" --case sphere_stack --set n=3; done
  export_one stack6 10 --case sphere_stack --set n=6
  export_one slope 20 --case slope
  export_one slope-local 20 --case slope --local-only
  export_one stack3-local 5 --case sphere_stack --set n=3 --local-only
  export_one heavy 10 --case heavy_stack
  export_one dish 10 --case dish_stack
  export_one hole 10 --case box_in_hole
  export_one pour 30 --case sphere_pour
  export_one arch 5 --case arch
  solvers="${SOLVERS:-pgs,canal,nsn}"; limit="${TIME_LIMIT:-5}"
else
  for s in 2 10 40 90; do
    for k in 2 4 8; do export_one "stack$k" "$s" --case sphere_stack --set "n=$k"; done
    export_one slope "$s" --case slope
    export_one slope-local "$s" --case slope --local-only
    export_one heavy "$s" --case heavy_stack
    export_one dish "$s" --case dish_stack
    export_one hole "$s" --case box_in_hole
    export_one pour "$s" --case sphere_pour
    export_one arch "$s" --case arch
    export_one pizza "$s" --case pizza_saver
    export_one ramp "$s" --case ramp_feet
    export_one clutter "$s" --case clutter
    export_one table "$s" --case table_pile
    export_one stack4-local "$s" --case sphere_stack --set n=4 --local-only
  done
  solvers="${SOLVERS:-}"; limit="${TIME_LIMIT:-10}"
fi
cp "$root/tests/data/fclib/slope_libhdf5.hdf5" "$out/files/"
n=$((n + 1))
echo "-- $n FCLIB problems in $out/files"
args=(fclib bench "$out/files" --out "$out/runs" --time-limit "$limit"
      --max-iterations "${MAX_ITERATIONS:-1000}" --tolerance "${TOLERANCE:-1e-8}")
[ -n "$solvers" ] && args+=(--solver "$solvers")
"$bin" "${args[@]}" | tail -n 1
if [ "${SKIP_SICONOS:-0}" != 1 ] && /usr/bin/python3 -c "import siconos.numerics, h5py, scipy" 2>/dev/null; then
  /usr/bin/python3 -W ignore "$root/peers/run_siconos.py" "$out/files" --out "$out/runs" --time-limit "$limit" \
    --max-iterations "${MAX_ITERATIONS:-1000}" --tolerance "${TOLERANCE:-1e-8}" --signorini "$bin" | tail -n 1
else
  echo "-- Siconos row skipped (SKIP_SICONOS=1, or peers/setup-siconos.sh not run)"
fi
"$bin" report "$out/runs" --out "$out/report" | tail -n 1
