#!/usr/bin/env bash
# The reference-engine comparison of docs/reference-engines.md: runs peers/compare.toml with
# signorini's solvers, exports the same variants, runs them in MuJoCo (and Drake with --drake),
# grades them into the same run directory, and writes the report.
#
#   peers/compare.sh [--drake] [--suite FILE] [OUT]
#       (defaults: --suite peers/compare.toml, OUT runs/reference-compare)
# The variants exported to the engines are the suite's [[case]] entries (label, case, set), so the
# engines and signorini's solvers always run the same list. peers/scale.toml is the scaling
# comparison of issue 19 (10 s clutter of 40 and 80 objects, the 10-sphere near-rigid stack).
# SIGNORINI overrides the binary (default: target/release/signorini, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
drake=0
out=runs/reference-compare
suite=peers/compare.toml
while [ $# -gt 0 ]; do
  case "$1" in
    --drake) drake=1 ;;
    --suite) suite="$2"; shift ;;
    *) out="$1" ;;
  esac
  shift
done
if [ -z "${SIGNORINI:-}" ]; then
  cargo build -q --release --bin signorini
  SIGNORINI=target/release/signorini
fi
sig=$SIGNORINI
if [ "$drake" = 1 ]; then py="$(bash peers/setup.sh --drake | tail -1)"; else py="$(bash peers/setup.sh | tail -1)"; fi
work="$out-engines"   # models and trajectories (not run records: kept out of the run directory)
rm -rf "$out" "$work"
$sig run --suite "$suite" --out "$out" >/dev/null
# label case [KEY=VALUE ...], one line per [[case]] of the suite
mapfile -t variants < <("$py" - "$suite" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    suite = tomllib.load(f)
for c in suite.get("case", []):
    fmt = lambda v: str(v).lower() if isinstance(v, bool) else str(v)
    sets = " ".join(f"{k}={fmt(v)}" for k, v in c.get("set", {}).items())
    print(f"{c.get('label', c['name'])} {c['name']} {sets}".strip())
PY
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
# cost per step: mean of detection + assembly + solve over the run (the engines time their whole step)
"$py" - "$out" <<'PY'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(f))
    s = r.get("summary") or {}
    st, n = s.get("stage_times"), s.get("steps")
    if not st or not n:
        continue
    label, _, solver = os.path.basename(f)[:-5].rpartition("__")
    rows.setdefault(label, {})[solver] = 1e3 * (st["detect_s"] + st["assemble_s"] + st["solve_s"]) / n
print("mean cost per step (ms): detection + assembly + solve")
for label, by in rows.items():
    print(f"  {label:28s} " + "  ".join(f"{k} {v:.4g}" for k, v in sorted(by.items(), key=lambda kv: kv[1])))
PY
echo "records and report in $out"
