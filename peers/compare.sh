#!/usr/bin/env bash
# The reference-engine comparison of docs/reference-engines.md: runs peers/compare.toml with
# signorini's solvers, exports the same variants, runs them in MuJoCo (and Drake with --drake),
# grades them into the same run directory, and writes the report.
#
#   peers/compare.sh [--drake] [OUT]      (default OUT: runs/reference-compare)
# SIGNORINI overrides the binary (default: target/release/signorini, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
drake=0
out=runs/reference-compare
for a in "$@"; do
  case "$a" in
    --drake) drake=1 ;;
    *) out="$a" ;;
  esac
done
if [ -z "${SIGNORINI:-}" ]; then
  cargo build -q --release --bin signorini
  SIGNORINI=target/release/signorini
fi
sig=$SIGNORINI
if [ "$drake" = 1 ]; then py="$(bash peers/setup.sh --drake | tail -1)"; else py="$(bash peers/setup.sh | tail -1)"; fi
work="$out-engines"   # models and trajectories (not run records: kept out of the run directory)
rm -rf "$out" "$work"
$sig run --suite peers/compare.toml --out "$out" >/dev/null
# label case [KEY=VALUE ...], as in peers/compare.toml
variants=(
  "slope slope"
  "spring_cylinder_mu0 spring_cylinder mu=0"
  "spring_cylinder_mu1 spring_cylinder mu=1"
  "sphere_stack sphere_stack"
  "sphere_stack_10 sphere_stack n=10 contact=compliant k=1e12"
  "clutter_20 clutter bodies=20"
  "clutter_40 clutter bodies=40"
  "clutter_80 clutter bodies=80"
  "pendulum pendulum"
  "spring_cylinder_dt0.04 spring_cylinder dt=0.04"
  "spring_cylinder_dt0.02 spring_cylinder dt=0.02"
  "spring_cylinder_dt0.01 spring_cylinder dt=0.01"
)
engines=(mujoco)
[ "$drake" = 1 ] && engines+=(drake)
for v in "${variants[@]}"; do
  set -- $v
  label=$1 case=$2
  shift 2
  sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  $sig export --case "$case" "${sets[@]}" --out "$work/models/$label" >/dev/null
  for e in "${engines[@]}"; do
    if "$py" "peers/run_$e.py" "$work/models/$label" --out "$work/trajectories/$label.$e.json" >/dev/null 2>"$work/models/$label/$e.log"; then
      $sig grade "$work/trajectories/$label.$e.json" --case "$case" "${sets[@]}" --engine "$e" --label "$label" --out "$out" | grep -v '^wrote' || true
    else
      echo "$label / $e: engine run failed ($(tail -1 "$work/models/$label/$e.log"))"
    fi
  done
done
$sig report "$out" >/dev/null
echo "records and report in $out"
