#!/usr/bin/env bash
# A single-node Slurm on this machine, and the cluster path of signorini run under it:
#
#   1. installs Debian's slurm-wlm and munge when missing (apt-get, non-interactive);
#   2. writes a munge key and a one-node slurm.conf into a temporary state directory and starts
#      munged, slurmctld and slurmd there, on loopback only (no cgroups, no systemd);
#   3. submits ci/cluster/slurm-array.sh on ci/cluster/slurm-suite.toml as a held 4-task array,
#      cancels task 3, releases the others and waits for them;
#   4. checks that `signorini merge` refuses the incomplete set (one line naming the missing
#      pairs), re-submits index 3 alone (`sbatch --array=3`), merges again and checks that the
#      merged records equal the unsharded run (`signorini diff-records`);
#   5. stops the daemons it started, by process id (trap on EXIT), and removes the state directory.
#
# Usage: bash ci/cluster/slurm-check.sh            (from anywhere; .ci/run calls it)
# Environment: SIGNORINI_BIN (default target/debug/signorini, built by .ci/run),
#   SLURM_CHECK_TIMEOUT (seconds to wait for each submission, default 120),
#   SLURM_CHECK_KEEP=1 (keep the state directory with the logs and records).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"

BIN="${SIGNORINI_BIN:-${CARGO_TARGET_DIR:-target}/debug/signorini}"
SUITE=ci/cluster/slurm-suite.toml
SHARDS=4
TIMEOUT="${SLURM_CHECK_TIMEOUT:-120}"
if [ ! -x "$BIN" ]; then
  echo "error: $BIN not found; build it first (cargo build) or set SIGNORINI_BIN" >&2
  exit 2
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
start_s=$SECONDS

# -- 1. packages ---------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
  || ! command -v munged >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "slurm: installing slurm-wlm and munge (apt-get)"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null
fi
echo "slurm: $(slurmctld -V), $(munged -V 2>&1 | awk "{print \$1; exit}")"

# -- 2. daemons ----------------------------------------------------------------------------------
STATE="$(mktemp -d /tmp/signorini-slurm.XXXXXX)"
chmod 755 "$STATE"
PIDS=()
LOGS=("$STATE/munged.out" "$STATE/munged.log" "$STATE/slurmctld.log" "$STATE/slurmd.log")

print_logs() {
  for f in "${LOGS[@]}"; do
    [ -f "$f" ] || continue
    echo "---- $f (last 40 lines)"
    tail -n 40 "$f"
  done
  for f in "$STATE"/shards/slurm-*.out; do
    [ -f "$f" ] || continue
    echo "---- $f"
    cat "$f"
  done
}

stop_daemons() {
  local rc=$?
  local k pid
  # Let the jobs' slurmstepd processes finish (each removes its socket from the spool directory).
  for _ in $(seq 100); do
    [ -n "$(find "$STATE/spool" -type s 2>/dev/null)" ] || break
    sleep 0.1
  done
  # Stop in reverse start order (slurmd, slurmctld, munged), each by its own process id.
  for ((k = ${#PIDS[@]} - 1; k >= 0; k--)); do
    pid="${PIDS[$k]}"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "${#PIDS[@]}" -gt 0 ]; then
    echo "slurm: daemons stopped"
  fi
  if [ "$rc" != 0 ]; then
    print_logs
  fi
  if [ "${SLURM_CHECK_KEEP:-0}" = 1 ]; then
    echo "slurm: state, logs and records kept in $STATE"
  else
    rm -rf "$STATE"
  fi
  exit "$rc"
}
trap stop_daemons EXIT

fail() {
  echo "error: slurm: $*" >&2
  exit 1
}

# A port pair no other Slurm on this machine uses (the system one listens on 6817/6818).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
CTLD_PORT=16817
while ! port_free "$CTLD_PORT" || ! port_free $((CTLD_PORT + 1)); do
  CTLD_PORT=$((CTLD_PORT + 2))
done
SLURMD_PORT=$((CTLD_PORT + 1))

NODE="$(hostname -s)"
CPUS="$(nproc)"
mkdir -p "$STATE/ctld" "$STATE/spool" "$STATE/shards"
dd if=/dev/urandom of="$STATE/munge.key" bs=1024 count=1 status=none
chmod 400 "$STATE/munge.key"
export SLURM_CONF="$STATE/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# One local node for ci/cluster/slurm-check.sh (written by the script; removed with its state dir).
ClusterName=signorini-ci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$STATE/munge.sock
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=ci Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

munged --foreground --force --socket="$STATE/munge.sock" --key-file="$STATE/munge.key" \
  --pid-file="$STATE/munged.pid" --log-file="$STATE/munged.log" --seed-file="$STATE/munged.seed" >"$STATE/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do
  [ -S "$STATE/munge.sock" ] && break
  sleep 0.1
done
[ -S "$STATE/munge.sock" ] || fail "munged did not create its socket"
slurmctld -D -i -f "$SLURM_CONF" >>"$STATE/slurmctld.log" 2>&1 &
PIDS+=($!)
slurmd -D -N "$NODE" -f "$SLURM_CONF" >>"$STATE/slurmd.log" 2>&1 &
PIDS+=($!)

# The node is up when sinfo reports it idle.
deadline=$((SECONDS + 30))
until [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" = idle ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "node $NODE not idle after 30 s (sinfo: $(sinfo -h -o '%n %t' 2>&1))"
  for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || fail "a daemon exited (pid $pid)"
  done
  sleep 0.5
done
echo "slurm: daemons started (munged, slurmctld, slurmd; node $NODE, $CPUS CPUs, ports $CTLD_PORT/$SLURMD_PORT)"

# -- 3. the array, with one task lost -------------------------------------------------------------
OUT="$STATE/shards"
LOST=3
# Submitted held, so that task $LOST is cancelled before it can start; the others run once released.
submit() {
  sbatch --parsable --hold --chdir="$ROOT" --output="$OUT/slurm-%A_%a.out" --export="ALL,SIGNORINI_BIN=$BIN" \
    "$@" | cut -d';' -f1
}
# Waits until job $1 has no task left in the queue (bounded by $TIMEOUT).
wait_job() {
  local deadline=$((SECONDS + TIMEOUT))
  while [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      squeue -j "$1" >&2 || true
      fail "job $1 not finished after $TIMEOUT s"
    fi
    sleep 1
  done
}
# State of array task $1 (from scontrol while slurmctld remembers it: MinJobAge, 300 s).
task_state() {
  scontrol -o show job "$1" >>"$STATE/scontrol.log" 2>&1 || true
  tail -1 "$STATE/scontrol.log" | grep -o "JobState=[A-Z_]*" | head -1 | cut -d= -f2 || true
}

JOB=$(submit --array=0-$((SHARDS - 1)) ci/cluster/slurm-array.sh "$SUITE" "$OUT")
scancel "${JOB}_${LOST}"
scontrol release "$JOB"
echo "slurm: submitted array job $JOB (tasks 0-$((SHARDS - 1)) of $SUITE), cancelled task ${JOB}_${LOST} before it started"

# Meanwhile, the same suite unsharded (outside Slurm) for the comparison.
"$BIN" run --suite "$SUITE" --out "$STATE/full" >"$STATE/full.log" 2>&1 || {
  cat "$STATE/full.log"
  fail "the unsharded run failed"
}
wait_job "$JOB"
for i in $(seq 0 $((SHARDS - 1))); do
  state="$(task_state "${JOB}_$i")"
  if [ "$i" = "$LOST" ]; then
    # A task cancelled while pending is CANCELLED, or already forgotten by slurmctld.
    [ "$state" = CANCELLED ] || grep -q "not found" <(tail -1 "$STATE/scontrol.log") \
      || fail "cancelled task ${JOB}_$i is ${state:-unknown}"
    [ ! -e "$OUT/shard-$i" ] || fail "cancelled task ${JOB}_$i wrote $OUT/shard-$i"
  else
    [ "$state" = COMPLETED ] || fail "array task ${JOB}_$i is ${state:-unknown} ($(tail -1 "$STATE/scontrol.log"))"
  fi
done
echo "slurm: $((SHARDS - 1)) of $SHARDS array tasks completed, task $LOST cancelled"

# -- 4. merge refuses the incomplete set; the re-submitted shard completes it ---------------------
shard_dirs() { for i in $(seq 0 $((SHARDS - 1))); do [ ! -d "$OUT/shard-$i" ] || echo "$OUT/shard-$i"; done; }
set +e
refusal="$("$BIN" merge "$STATE/merged" $(shard_dirs) 2>&1)"
code=$?
set -e
[ "$code" = 2 ] || fail "merge of an incomplete set exited $code, expected 2: $refusal"
[ ! -e "$STATE/merged" ] || fail "a refused merge wrote $STATE/merged"
echo "slurm: cancelled shard refused by merge: ${refusal#error: }"

JOB2=$(submit --array="$LOST" ci/cluster/slurm-array.sh "$SUITE" "$OUT" "$SHARDS" --resume)
scontrol release "$JOB2"
wait_job "$JOB2"
state="$(task_state "${JOB2}_$LOST")"
[ "$state" = COMPLETED ] || fail "re-submitted task ${JOB2}_$LOST is ${state:-unknown}"
"$BIN" merge "$STATE/merged" $(shard_dirs) >"$STATE/merge.log" 2>&1 || {
  cat "$STATE/merge.log"
  fail "merge after the re-submission failed"
}
echo "slurm: re-submitted shard completed the set ($(tail -1 "$STATE/merge.log"))"
echo "slurm: $SHARDS array tasks completed"

"$BIN" diff-records "$STATE/full" "$STATE/merged" >"$STATE/diff.log" 2>&1 || {
  cat "$STATE/diff.log"
  fail "the merged records differ from the unsharded run"
}
echo "slurm: merge equals the unsharded run ($(tail -1 "$STATE/diff.log"))"
echo "slurm: check passed in $((SECONDS - start_s)) s"
