#!/usr/bin/env bash
# Slurm job array: one shard of a signorini suite per array task, then merge.
#
#   sbatch --array=0-15 ci/cluster/slurm-array.sh ci/quick.toml      # 16 shards
#   # when every task has finished (or chain it: sbatch --dependency=afterok:<jobid> ...):
#   target/release/signorini merge runs/merged runs/shards/shard-*
#
# Every task runs `signorini run --shard I/N` with I = SLURM_ARRAY_TASK_ID and N = the array
# size, so the shards partition the suite (pair k runs in shard k mod N). Build the release binary
# once, before submitting (`cargo build --release`), so that every task runs the same code:
# `signorini merge` refuses records from different commits or versions.
#
#SBATCH --job-name=signorini
#SBATCH --cpus-per-task=1
#SBATCH --time=01:00:00
#SBATCH --output=runs/shards/slurm-%A_%a.out
set -euo pipefail

SUITE="${1:?usage: sbatch --array=0-(N-1) ci/cluster/slurm-array.sh SUITE.toml [OUT_DIR]}"
OUT="${2:-runs/shards}"
BIN="${SIGNORINI_BIN:-target/release/signorini}"

: "${SLURM_ARRAY_TASK_ID:?run this script as a Slurm job array (sbatch --array=0-(N-1))}"
I="$SLURM_ARRAY_TASK_ID"
N="${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1))}"
if [ "${SLURM_ARRAY_TASK_MIN:-0}" != 0 ]; then
  echo "error: array indices must start at 0 (got --array=${SLURM_ARRAY_TASK_MIN}-...)" >&2
  exit 2
fi

mkdir -p "$OUT"
# One thread per task: the scheduler gives each task its own core.
export RAYON_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"
exec "$BIN" run --suite "$SUITE" --shard "$I/$N" --out "$OUT/shard-$I"
