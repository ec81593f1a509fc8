#!/usr/bin/env bash
# Reference-engine check (called by .ci/run): creates the venv with peers/setup.sh (pip, by
# package name), exports three cases, runs them in MuJoCo, grades them with `signorini grade`, and
# checks the oracle verdicts known for MuJoCo (docs/reference-engines.md, "Known verdicts"), checks
# the replay of a graded MuJoCo run beside pgs's (docs/replay.md), then round-trips every registered
# case (below; each one's replay sidecar checked too):
#
#   slope (30 deg, mu = 0.2, sliding)   slides pass, acceleration pass (g (sin a - mu cos a));
#                                       glide_gap FAIL (MuJoCo's contact is Anitescu's CCP with soft
#                                       constraints: the sliding box floats 2.4e-2 m above the slope)
#   spring_cylinder (mu = 0)            e_q, energy_band, frequency pass (matches symplectic Euler)
#   pendulum                            theta_end pass; drift FAIL (MuJoCo's hinge is exact: no
#                                       O(dt^2) linearisation drift, the check expects that drift)
#
# Exits non-zero if a verdict differs. SIGNORINI overrides the binary (default: cargo run -q --).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
py="$(bash peers/setup.sh | tail -1)"
sig=${SIGNORINI:-"cargo run -q --"}
out=${PEERS_OUT:-runs/peers-check}
rm -rf "$out"
mkdir -p "$out"

# label case [KEY=VALUE ...]
one() {
  local label=$1 case=$2
  shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  $sig export --case "$case" "${sets[@]}" --format mjcf --out "$out/models/$label" >/dev/null
  "$py" peers/run_mujoco.py "$out/models/$label" --out "$out/trajectories/$label.mujoco.json"
  $sig grade "$out/trajectories/$label.mujoco.json" --case "$case" "${sets[@]}" --engine mujoco \
    --label "$label" --out "$out/records" | grep -v '^wrote'
}

one slope_30 slope angle_deg=30 mu=0.2
one spring_cylinder_mu0 spring_cylinder mu=0
one pendulum pendulum

"$py" - "$out/records" <<'PY'
import json, sys, os
expected = {
    ("slope_30", "slides"): True, ("slope_30", "acceleration"): True, ("slope_30", "glide_gap"): False,
    ("spring_cylinder_mu0", "e_q"): True, ("spring_cylinder_mu0", "energy_band"): True,
    ("spring_cylinder_mu0", "frequency"): True,
    ("pendulum", "theta_end"): True, ("pendulum", "drift"): False,
}
got = {}
# the records (each one's replay sidecar, .traj.json.gz, sits beside it)
for f in (f for f in os.listdir(sys.argv[1]) if f.endswith(".json")):
    r = json.load(open(os.path.join(sys.argv[1], f)))
    assert r["solver"]["params"].get("reference") is True, f
    for name, c in r["summary"]["oracle"].items():
        got[(r["case"]["label"], name)] = c["pass"]
bad = [(k, v, got.get(k)) for k, v in expected.items() if got.get(k) != v]
for k, v, g in bad:
    print(f"unexpected verdict: {k[0]} / {k[1]}: expected {'pass' if v else 'FAIL'}, got {g}")
if bad:
    sys.exit(1)
print(f"reference-engine verdicts as known: {len(expected)} checks")
PY
# The replay of a graded MuJoCo run beside signorini's: pgs runs slope_30 into the same directory;
# every record there has a sidecar the replay page can show (`view --check`), MuJoCo's frames hold
# MuJoCo's own contacts (run_mujoco.py's contact_frames: the sliding box presses on the slope, so
# some normal impulse is positive), and the page of slope_30 shows MuJoCo and pgs side by side.
cat > "$out/replay-suite.toml" <<'TOML'
name = "peers-replay"
solvers = ["pgs"]
[[case]]
name = "slope"
label = "slope_30"
set = { angle_deg = 30.0, mu = 0.2 }
TOML
$sig run --suite "$out/replay-suite.toml" --out "$out/records" >/dev/null
$sig view "$out/records" --check
$sig view "$out/records" --case slope_30 >/dev/null
"$py" - "$out/records" <<'PY'
import gzip, json, os, sys
root = sys.argv[1]
t = json.load(gzip.open(os.path.join(root, "slope_30__mujoco.traj.json.gz")))
n = len(t["frames"])
own = [s for s in t["notes"] if s.startswith("contacts: mujoco's own in")]
assert own and f"in {n} of {n} frames" in own[0], t["notes"]
imp = max((c[6] for f in t["frames"] for c in f["contacts"]), default=0.0)
assert imp > 0, "no positive normal impulse in MuJoCo's contacts on the slope"
page = open(os.path.join(root, "replay", "slope_30.html")).read()
assert "data/slope_30__mujoco.js" in page and "data/slope_30__pgs.js" in page, "the page lacks MuJoCo or pgs"
print(f"replay: slope_30, MuJoCo's {n} frames with its own contacts (largest normal impulse {imp:.3g} N s) beside pgs")
PY

# Round trip of every registered case at its defaults: a case that exports runs in MuJoCo and is
# graded into a reference record with its oracle verdicts; a case that MJCF cannot express is refused
# with exit status 2 and exactly one `error:` line naming the reason, and nothing is written. The
# hinge chains (robots, jointed_beam) export as kinematic trees and must round-trip; the FEM case
# twisting_bar must be refused.
cases=$($sig list | awk '/^cases:/{on=1; next} on && /^  [a-z_0-9]+ /{print $1}')
exported=0 refused=0
for c in $cases; do
  set +e
  msg=$($sig export --case "$c" --format mjcf --out "$out/all/models/$c" 2>&1)
  rc=$?
  set -e
  case "$c:$rc" in
    robots:0|jointed_beam:0|twisting_bar:2) ;;
    robots:*|jointed_beam:*|twisting_bar:*) echo "export of '$c' exited $rc against expectation: $msg"; exit 1 ;;
  esac
  if [ "$rc" = 0 ]; then
    "$py" peers/run_mujoco.py "$out/all/models/$c" --out "$out/all/trajectories/$c.mujoco.json"
    $sig grade "$out/all/trajectories/$c.mujoco.json" --case "$c" --engine mujoco --label "$c" \
      --out "$out/all/records" >/dev/null
    exported=$((exported + 1))
  elif [ "$rc" = 2 ] && [ "$(printf '%s\n' "$msg" | grep -c '^error:')" = 1 ] \
       && printf '%s\n' "$msg" | grep -q 'cannot be exported as MJCF' && [ ! -e "$out/all/models/$c" ]; then
    echo "refused as expected: $msg"
    refused=$((refused + 1))
  else
    echo "export of '$c' neither succeeded nor refused cleanly (exit $rc): $msg"
    exit 1
  fi
done
"$py" - "$out/all" "$exported" <<'PY'
import json, sys, os
sys.path.insert(0, "peers")
from common import mat_vec, quat_to_mat
root = sys.argv[1]
recs = [json.load(open(os.path.join(root, "records", f)))
        for f in sorted(os.listdir(os.path.join(root, "records"))) if f.endswith(".json")]
assert len(recs) == int(sys.argv[2]), (len(recs), sys.argv[2])
for r in recs:
    assert r["solver"]["params"].get("reference") is True, r["case"]["label"]
    assert r["summary"]["oracle"], f"{r['case']['label']}: no oracle verdicts"
    verdicts = " ".join(f"{k}={'pass' if v['pass'] else 'FAIL'}" for k, v in r["summary"]["oracle"].items())
    print(f"round trip {r['case']['label']}: {verdicts}")
# Kinematic trees: MuJoCo's state of a nested body, mapped to signorini's maximal coordinates, must
# move the hinge anchor alike from both sides: the anchor velocity from the child's (v, w) at its
# COM equals the one from its parent's, at every state (a wrong frame or reference point fails).
def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
trees = 0
for case in sorted(os.listdir(os.path.join(root, "models"))):
    sc = json.load(open(os.path.join(root, "models", case, "model.json")))
    nested = [b for b in sc["bodies"] if b.get("parent")]
    if not nested:
        continue
    import xml.etree.ElementTree as ET
    anchors = {j.get("name"): [float(x) for x in j.get("pos").split()]
               for j in ET.parse(os.path.join(root, "models", case, "model.xml")).getroot().iter("joint")}
    by_name = {b["mjcf_body"]: b for b in sc["bodies"]}
    traj = json.load(open(os.path.join(root, "trajectories", f"{case}.mujoco.json")))
    def twist(b, q, v):
        o, k, t = b["q_offset"], b["v_offset"], []
        for i in range(6):
            t.append(v[k] if b["dofs"][i] else 0.0)
            k += b["dofs"][i]
        return q[o:o + 3], quat_to_mat(*q[o + 3:o + 7]), t[:3], t[3:]
    worst, speed = 0.0, 0.0
    for q, v in zip(traj["q"], traj["v"]):
        for b in nested:
            xc, rc, vc, wc = twist(b, q, v)
            xp, _, vp, wp = twist(by_name[b["parent"]], q, v)
            p = [xc[i] + a for i, a in enumerate(mat_vec(rc, anchors[b["joints"][0]["name"]]))]
            uc = [vc[i] + cross(wc, [p[j] - xc[j] for j in range(3)])[i] for i in range(3)]
            up = [vp[i] + cross(wp, [p[j] - xp[j] for j in range(3)])[i] for i in range(3)]
            worst = max(worst, max(abs(uc[i] - up[i]) for i in range(3)))
            speed = max(speed, max(abs(x) for x in vc + wc))
    assert worst <= 1e-9 * max(1.0, speed), f"{case}: hinge anchor velocities differ by {worst} m/s"
    print(f"kinematic tree {case}: {len(nested)} nested bodies, anchor velocity mismatch {worst:.1e} m/s (speeds up to {speed:.2g})")
    trees += 1
assert trees >= 2, f"expected the kinematic trees of robots and jointed_beam, checked {trees}"
PY
[ "$refused" -ge 1 ] || { echo "no case was refused: the refusal path is untested"; exit 1; }
# every round-tripped case replays: its MuJoCo sidecar is one the page can show
$sig view "$out/all/records" --check
echo "round trip: $exported cases exported, run in MuJoCo and graded; $refused refused"
echo "peers/check.sh: $(( $(date +%s) - start )) s"
