#!/usr/bin/env bash
# FCLIB campaign on a directory of real FCLIB files (docs/fclib.md, "Real files"): every *.hdf5
# under DIR, plus every Siconos text dump *.dat under DIR converted to the FCLIB local form
# (peers/dat_to_fclib.py), benched with every signorini solver that takes FCLIB and, when Siconos
# is installed (peers/setup-siconos.sh), the Siconos reference row (NSGS, NSN-AC, ADMM, PROX; W
# handed to Siconos as its 3x3 sparse-block matrix), then `signorini report`. It fetches nothing:
# the files are the caller's.
#
#   ci/fclib/real-files.sh DIR OUT [--bin PATH]
#
# Protocol (issue 36): tolerance 1e-8, 10000 iterations, 60 s per (problem, solver); TOLERANCE,
# MAX_ITERATIONS and TIME_LIMIT override. SOLVERS picks signorini's solvers (comma-separated;
# default every one that takes FCLIB), SICONOS_SOLVERS Siconos's (default nsgs,nsn_ac,admm,prox),
# SKIP_SICONOS=1 leaves Siconos out, SICONOS_PYTHON is the interpreter with siconos.numerics
# (default /usr/bin/python3). --bin (or SIGNORINI) is the signorini binary (default
# target/release/signorini). Writes OUT/files/ (links to DIR's *.hdf5 and the converted dumps),
# OUT/runs/*.json (one record per pair), OUT/report/{index.html,summary.md}, and the logs
# OUT/{convert,bench,siconos}.log; OUT's other contents are left alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${SIGNORINI:-$root/target/release/signorini}"
py="${SICONOS_PYTHON:-/usr/bin/python3}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    -*) echo "error: unknown option '$1'" >&2; exit 2 ;;
    *) args+=("$1") ;;
  esac
  shift
done
if [ "${#args[@]}" != 2 ]; then
  echo "usage: ci/fclib/real-files.sh DIR OUT [--bin PATH]" >&2
  exit 2
fi
dir="${args[0]}" out="${args[1]}"
tol="${TOLERANCE:-1e-8}" budget="${MAX_ITERATIONS:-10000}" limit="${TIME_LIMIT:-60}"
if [ ! -d "$dir" ]; then
  echo "error: $dir: not a directory" >&2
  exit 2
fi
if [ ! -x "$bin" ]; then
  echo "error: $bin not found: build it (cargo build --release) or pass --bin" >&2
  exit 2
fi
dir="$(cd "$dir" && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
case "$out/" in "$dir/"*)
  echo "error: OUT ($out) lies inside DIR: its files would be benched twice" >&2; exit 2 ;;
esac
rm -rf "$out/files" "$out/runs" "$out/report"
mkdir -p "$out/files"
n=0
# links to DIR's FCLIB files (hidden names skipped, as the bench does); two files of one name
# would give two problems one label: refused
while IFS= read -r -d '' f; do
  name="$(basename "$f")"
  if [ -e "$out/files/$name" ]; then
    echo "error: two files named $name under $dir" >&2
    exit 2
  fi
  ln -s "$f" "$out/files/$name"
  n=$((n + 1))
done < <(find "$dir" -name '.*' -prune -o -type f -name '*.hdf5' -print0 | sort -z)
dumps=0
: >"$out/convert.log"
while IFS= read -r -d '' f; do
  name="$(basename "$f")"
  stem="${name%.dat}"
  stem="${stem%.hdf5}"
  if [ -e "$out/files/$stem.hdf5" ]; then
    echo "   (not converted: $name: $stem.hdf5 is already in the set)" | tee -a "$out/convert.log"
    continue
  fi
  if "$py" "$root/peers/dat_to_fclib.py" "$f" "$out/files/$stem.hdf5" >>"$out/convert.log" 2>&1; then
    dumps=$((dumps + 1))
  else
    echo "   (not converted: $name: $(tail -n 1 "$out/convert.log"))"
  fi
done < <(find "$dir" -name '.*' -prune -o -type f -name '*.dat' -print0 | sort -z)
echo "-- $((n + dumps)) FCLIB problems in $out/files ($n FCLIB files, $dumps converted Siconos dumps)"
if [ $((n + dumps)) = 0 ]; then
  echo "error: no *.hdf5 or *.dat under $dir" >&2
  exit 2
fi
echo "-- protocol: tolerance $tol, $budget iterations, $limit s per (problem, solver)"
bench=(fclib bench "$out/files" --out "$out/runs" --tolerance "$tol" --max-iterations "$budget" --time-limit "$limit")
[ -n "${SOLVERS:-}" ] && bench+=(--solver "$SOLVERS")
"$bin" "${bench[@]}" >"$out/bench.log" 2>&1 || { tail -n 5 "$out/bench.log" >&2; exit 1; }
tail -n 1 "$out/bench.log"
if [ "${SKIP_SICONOS:-0}" != 1 ] && "$py" -c "import siconos.numerics, h5py, scipy" 2>/dev/null; then
  "$py" -W ignore "$root/peers/run_siconos.py" "$out/files" --out "$out/runs" --tolerance "$tol" \
    --max-iterations "$budget" --time-limit "$limit" --solvers "${SICONOS_SOLVERS:-nsgs,nsn_ac,admm,prox}" --signorini "$bin" \
    >"$out/siconos.log" 2>&1 || { tail -n 5 "$out/siconos.log" >&2; exit 1; }
  tail -n 1 "$out/siconos.log"
else
  echo "-- Siconos row skipped (SKIP_SICONOS=1, or peers/setup-siconos.sh not run)"
fi
"$bin" report "$out/runs" --out "$out/report" | tail -n 1
