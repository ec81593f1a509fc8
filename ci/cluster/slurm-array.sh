#!/usr/bin/env bash
# Slurm job array: one shard of a signorini suite per array task, then merge.
#
#   sbatch --array=0-15 ci/cluster/slurm-array.sh ci/quick.toml runs/shards   # 16 shards
#   # when every task has finished (or chain it: sbatch --dependency=afterok:<jobid> ...):
#   target/release/signorini merge runs/merged runs/shards/shard-*
#   # a lost task (cancelled, node failure, time limit): re-submit its index alone, with the
#   # shard count and --resume (the pairs it finished are reused):
#   sbatch --array=3 ci/cluster/slurm-array.sh ci/quick.toml runs/shards 16 --resume
#
# Every task runs `signorini run --shard I/N` with I = SLURM_ARRAY_TASK_ID and N = the third
# argument, or the array size when it is not given (then the array must be 0-(N-1)), so the
# shards partition the suite (pair k runs in shard k mod N). Arguments after N go to `signorini
# run` (e.g. --resume, --set KEY=V). Build the release binary once, before submitting (`cargo
# build --release`), so that every task runs the same code: `signorini merge` refuses records from
# different commits or versions, and an incomplete set of shards (each shard writes a manifest
# naming every pair of the suite). SIGNORINI_BIN overrides the binary.
#
# Slurm does not create the directory of --output: create runs/shards before submitting, or pass
# --output=DIR/slurm-%A_%a.out to sbatch.
#
#SBATCH --job-name=signorini
#SBATCH --cpus-per-task=1
#SBATCH --time=01:00:00
#SBATCH --output=runs/shards/slurm-%A_%a.out
set -euo pipefail

SUITE="${1:?usage: sbatch --array=0-(N-1) ci/cluster/slurm-array.sh SUITE.toml [OUT_DIR [N [RUN_ARGS...]]]}"
OUT="${2:-runs/shards}"
N_ARG="${3:-}"
shift $(($# < 3 ? $# : 3))
BIN="${SIGNORINI_BIN:-target/release/signorini}"

: "${SLURM_ARRAY_TASK_ID:?run this script as a Slurm job array (sbatch --array=0-(N-1))}"
I="$SLURM_ARRAY_TASK_ID"
if [ -n "$N_ARG" ]; then
  N="$N_ARG"
else
  if [ "${SLURM_ARRAY_TASK_MIN:-0}" != 0 ]; then
    echo "error: array indices must start at 0 (got --array=${SLURM_ARRAY_TASK_MIN}-...); to re-run single shards pass the shard count N as the third argument" >&2
    exit 2
  fi
  N="${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1))}"
fi

mkdir -p "$OUT"
# One thread per task: the scheduler gives each task its own core.
export RAYON_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"
exec "$BIN" run --suite "$SUITE" --shard "$I/$N" --out "$OUT/shard-$I" "$@"
