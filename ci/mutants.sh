#!/usr/bin/env bash
# Mutation testing of the grading layer: cargo-mutants plants one small bug at a time (an operator
# flipped, a return value replaced, a condition negated) in the code that turns an answer into a
# verdict, and runs the tests a developer runs for that crate. A mutant the tests do not catch is
# a bug a grader could ship with. Equivalent mutants (no observable difference) are listed with
# their reason in .cargo/mutants.toml.
#
#   bash ci/mutants.sh                     # every layer below
#   bash ci/mutants.sh metrics gate        # some layers
#   bash ci/mutants.sh --in-diff BASE      # only mutants on lines changed since git revision BASE
#   bash ci/mutants.sh gate -- --re counts # more cargo-mutants options (a re-check of some mutants)
#
# Layers: metrics (harness/src/metrics), gate (reports/src/gate.rs), cone and ncp (kernels),
# fclib (the FCLIB grader fclib/src/grade.rs and the campaign's verdict fclib/src/bench.rs), cases
# (each case's grade, tolerance and expectation functions). Runs in a temporary git worktree of HEAD (mutants are applied in place there, never
# in this checkout) with its own target directory (MUTANTS_TARGET, default target/mutants, kept
# between runs so that a rerun builds incrementally). Results: target/mutants-out/LAYER/.
# Exits 2 when a mutant survives. Installs cargo-mutants (pinned) with cargo when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
VERSION=27.1.0
if ! cargo mutants --version 2>/dev/null | grep -q "$VERSION"; then
  echo "-- installing cargo-mutants $VERSION"
  cargo install cargo-mutants --locked --version "$VERSION"
fi

in_diff=""
layers=()
passthrough=()
while [ $# -gt 0 ]; do
  case "$1" in
    --in-diff) in_diff="$2"; shift 2 ;;
    --) shift; passthrough=("$@"); break ;;
    metrics|gate|cone|ncp|fclib|cases) layers+=("$1"); shift ;;
    *) echo "error: unknown argument '$1' (layers: metrics gate cone ncp fclib cases; --in-diff BASE; -- OPTIONS)" >&2; exit 2 ;;
  esac
done
[ ${#layers[@]} -gt 0 ] || layers=(metrics gate cone ncp fclib cases)

args_of() {
  case "$1" in
    metrics) echo "-p harness -f harness/src/metrics/**" ;;
    gate) echo "-p reports -f reports/src/gate.rs" ;;
    cone) echo "-p kernels -f kernels/src/cone.rs" ;;
    ncp) echo "-p kernels -f kernels/src/ncp.rs" ;;
    fclib) echo "-p fclib -f fclib/src/grade.rs -f fclib/src/bench.rs" ;;
    cases) echo "-p cases -f cases/src/** --re (grade|tolerance|expectation)" ;;
  esac
}

WT="$(mktemp -d /tmp/signorini-mutants.XXXXXX)"
cleanup() { git -C "$ROOT" worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"; }
trap cleanup EXIT
git worktree add --detach --force "$WT" HEAD >/dev/null
export CARGO_TARGET_DIR="${MUTANTS_TARGET:-$ROOT/target/mutants}"
diff_file=""
if [ -n "$in_diff" ]; then
  diff_file="$WT/.mutants.diff"
  git -C "$ROOT" diff "$(git -C "$ROOT" merge-base "$in_diff" HEAD)" HEAD > "$diff_file"
fi

status=0
for layer in "${layers[@]}"; do
  read -r -a args <<< "$(args_of "$layer")"
  out="$ROOT/target/mutants-out/$layer"
  mkdir -p "$out"
  echo "== $layer: cargo mutants ${args[*]} ${in_diff:+--in-diff $in_diff}"
  t0=$(date +%s)
  extra=()
  [ -n "$diff_file" ] && extra=(--in-diff "$diff_file")
  # --lib: every crate of the layer is tested by its unit tests alone (no tests/ folder, no
  # runnable doc test), so neither doc tests nor kernels' examples are built for each mutant
  if (cd "$WT" && cargo mutants --in-place --config "$WT/.cargo/mutants.toml" "${args[@]}" "${extra[@]}" \
        --cargo-test-arg=--lib --timeout 300 -o "$out" "${passthrough[@]}"); then
    echo "-- $layer: no surviving mutant ($(( $(date +%s) - t0 )) s)"
  else
    rc=$?
    echo "-- $layer: exit $rc after $(( $(date +%s) - t0 )) s; survivors in $out/mutants.out/missed.txt"
    status=2
  fi
done
exit $status
