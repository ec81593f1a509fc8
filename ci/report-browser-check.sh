#!/usr/bin/env bash
# Browser check of `signorini report`: builds the report of a quick run (with a dt sweep), serves
# it on 127.0.0.1, loads it in headless Chromium, confirms that every figure is fetched with HTTP
# 200 and decodes (naturalWidth > 0), that the matrix view has exactly one cell per (case, solver)
# pair of the run and that clicking its headers sorts its rows (every column, both directions),
# and saves a screenshot. The replay page (trajectory sidecars, three.js fetched by
# ci/fetch-three.sh): it loads with no console error, every matrix cell links to it, frame 0 and
# the last frame of clutter differ on screen where the bodies moved, its scene hook counts one
# rendered object per body, scrubbing to a step shows that step's metrics, and a click on a time of
# the report's per-step figure of clutter opens the replay at that step.
#
#   bash ci/report-browser-check.sh            # output in target/report-browser-check/
#
# Installs the Debian packages `chromium` and `chromium-driver` with apt-get when chromium is
# missing (needs root or sudo). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
OUT=${REPORT_CHECK_OUT:-target/report-browser-check}
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# --- 1. the browser
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "== installing chromium + chromium-driver (apt-get)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver fonts-dejavu-core >/dev/null
  browser=$(command -v chromium)
fi
echo "== browser: $("$browser" --version 2>/dev/null || echo "$browser")  ($(( $(date +%s) - t0 )) s)"

# --- 2. a quick run and its report
cat > "$OUT/suite.toml" <<'TOML'
name = "report-check"
solvers = ["pgs"]

[[case]]
name = "slope"
label = "slope-dt0.01"
set = { duration = 0.3, dt = 0.01 }

[[case]]
name = "slope"
label = "slope-dt0.005"
set = { duration = 0.3, dt = 0.005 }

[[case]]
name = "spring_cylinder"
set = { duration = 0.3 }

[[case]]
name = "clutter"
set = { duration = 0.5 }

[[case]]
name = "sphere_stack"
set = { n = 3, duration = 0.3 }
TOML
# the convergence figure of one case with several solvers: one line per solver on one yardstick
cat > "$OUT/suite-convergence.toml" <<'TOML'
name = "report-check-convergence"
solvers = ["sap", "nsn", "canal"]

[[case]]
name = "sphere_stack"
set = { n = 3, duration = 0.3 }
TOML
bash ci/fetch-three.sh
cargo build -q --bin signorini
bin="${CARGO_TARGET_DIR:-target}/debug/signorini"
"$bin" run --suite "$OUT/suite.toml" --out "$OUT/run" >"$OUT/run.log"
"$bin" run --suite "$OUT/suite-convergence.toml" --out "$OUT/run" >>"$OUT/run.log"
"$bin" report "$OUT/run" --out "$OUT/run/report" --gates ci/gates.toml --baseline pgs
echo "== report built  ($(( $(date +%s) - t0 )) s)"

# A same-origin page that loads the report in an iframe and lists images that did not decode.
cat > "$OUT/run/check.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="f" src="report/index.html" width="1280" height="800"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var imgs = this.contentDocument.images, bad = [];
  for (var i = 0; i < imgs.length; i++) {
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push(imgs[i].getAttribute('src'));
  }
  var text = 'images=' + imgs.length + ' broken=' + bad.length + (bad.length ? ' ' + bad.join(' ') : '');
  // The matrix: its pair cells, then every header clicked twice; after each click the column
  // must be ascending (then descending) by the cell's sort key (data-k) or, for the case
  // column, by its text; the case column's two orders must differ.
  var t = this.contentDocument.getElementById('matrix-table');
  if (!t) {
    text += ' matrix=missing';
  } else {
    var pairs = [].map.call(t.querySelectorAll('td[data-pair]'), function (c) { return c.getAttribute('data-pair'); });
    var ths = t.tHead.rows[0].cells, ok = true;
    var col = function (i) {
      return [].map.call(t.tBodies[0].rows, function (r) {
        var k = r.cells[i].getAttribute('data-k');
        return k === null ? r.cells[i].textContent : parseFloat(k);
      });
    };
    var sorted = function (a, dir) {
      for (var j = 1; j < a.length; j++) {
        var d = typeof a[j] === 'number' ? a[j] - a[j - 1] : a[j].localeCompare(a[j - 1]);
        if (dir * d < 0) return false;
      }
      return true;
    };
    for (var i = 0; i < ths.length; i++) {
      ths[i].click();
      var up = col(i);
      ok = ok && sorted(up, 1) && ths[i].getAttribute('aria-sort') === 'ascending';
      ths[i].click();
      var down = col(i);
      ok = ok && sorted(down, -1) && ths[i].getAttribute('aria-sort') === 'descending';
      if (i === 0 && up.length > 1) ok = ok && up.join(',') !== down.join(',');
    }
    var linked = [].filter.call(t.querySelectorAll('td[data-pair]'), function (c) {
      var a = c.querySelector('a.replay');
      return a && a.getAttribute('href').indexOf('replay/' + c.getAttribute('data-pair').split('__')[0] + '.html') === 0;
    }).length;
    text += ' replay_links=' + linked + '/' + pairs.length;
    text += ' matrix_rows=' + t.tBodies[0].rows.length + ' sort=' + (ok ? 'ok' : 'bad') + ' matrix_pairs=' + pairs.join(' ');
  }
  document.getElementById('result').textContent = text;
});
</script></body></html>
HTML

# The replay page of clutter in an iframe, driven through its own hook (window.signoriniReplay):
# errors, rendered objects, the canvas at frame 0 and at the last frame (pixels that differ, and
# whether they lie where a body's projected position moved), and a scrub of the slider.
cat > "$OUT/run/check-replay.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="f" src="report/replay/clutter.html" width="1400" height="900"></iframe>
<script>
var f = document.getElementById('f'), tries = 0, out = {};
function done() { document.getElementById('result').textContent = 'REPLAY ' + JSON.stringify(out); }
function pixels(url) {
  return new Promise(function (ok) {
    var img = new Image();
    img.onload = function () {
      var c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
      var g = c.getContext('2d'); g.drawImage(img, 0, 0); ok(g.getImageData(0, 0, c.width, c.height));
    };
    img.src = url;
  });
}
function poll() {
  var w = f.contentWindow, r = w && w.signoriniReplay;
  if (!r || !r.ready) {
    if (++tries < 300 && !(r && r.errors().length)) return setTimeout(poll, 50);
    out.ready = false; out.errors = r ? r.errors() : ['no hook']; return done();
  }
  out.ready = true;
  out.solvers = r.solvers();
  out.objects = r.objectCount(0);
  out.max_step = r.maxStep();
  r.setStep(0); var a = r.image(0), f0 = r.frame(0);
  r.setStep(r.maxStep()); var b = r.image(0), f1 = r.frame(0);
  out.first_step = f0.step; out.last_step = f1.step;
  out.moved = f0.poses.filter(function (p, i) { var q = f1.poses[i];
    return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]) > 0.01; }).length;
  // scrub: the slider as a user moves it
  var k = Math.round(r.maxStep() / 3), slider = w.document.getElementById('replay-step');
  slider.value = k; slider.dispatchEvent(new w.Event('input'));
  out.scrub_step = k; out.scrub_text = r.metricsText(0);
  Promise.all([pixels(a), pixels(b)]).then(function (im) {
    var d = 0, n = im[0].data.length / 4;
    for (var i = 0; i < n; i++) {
      if (Math.abs(im[0].data[4 * i] - im[1].data[4 * i]) + Math.abs(im[0].data[4 * i + 1] - im[1].data[4 * i + 1]) > 30) d++;
    }
    out.diff_pixels = d; out.pixels = n;
    out.errors = r.errors();
    done();
  });
}
f.addEventListener('load', poll);
</script></body></html>
HTML

# A click on the report's per-step figure of clutter (physics: energy, penetration, creep against
# time) at the x of one of its time tick labels (read from the SVG: ?x=PIXEL&t=TIME) must open the
# replay of clutter at the step drawn there: the page's step and the metrics of the frame shown.
cat > "$OUT/run/check-click.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="f" src="report/index.html" width="1400" height="900"></iframe>
<script>
var f = document.getElementById('f'), args = new URLSearchParams(location.search), out = {}, tries = 0;
function done() { document.getElementById('result').textContent = 'CLICK ' + JSON.stringify(out); }
function poll() {
  var w = f.contentWindow, r = w && w.signoriniReplay;
  if (!r || !r.ready) {
    if (++tries < 300 && !(r && r.errors().length)) return setTimeout(poll, 50);
    out.ready = false; out.errors = r ? r.errors() : ['no hook']; return done();
  }
  out.ready = true; out.page = w.location.pathname.split('/').pop(); out.hash = w.location.hash;
  out.step = r.step(); out.frame_step = r.frame(0).step; out.metrics_text = r.metricsText(0); out.errors = r.errors();
  done();
}
f.addEventListener('load', function () {
  var d = f.contentDocument;
  if (/replay\//.test(f.contentWindow.location.pathname)) return poll();
  var img = d.querySelector('img.step-link[data-replay="replay/clutter.html"]');
  if (!img) { out.error = 'no clickable per-step figure of clutter'; return done(); }
  img.scrollIntoView();
  var r = img.getBoundingClientRect(), x = +args.get('x');
  out.clicked_at = x;
  img.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: r.left + x * r.width / (+img.dataset.width),
    clientY: r.top + r.height / 2 }));
});
</script></body></html>
HTML
# the x (SVG pixels) of the time tick label of the energy panel nearest 40 % of the run
read -r click_x click_t < <(python3 - "$OUT/run/report/figures/physics-clutter.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
width = int(re.search(r'<svg width="(\d+)"', svg).group(1))
ticks = []
for x, y, anchor, text in re.findall(r'<text x="(\d+)" y="(\d+)"[^>]*text-anchor="(\w+)"[^>]*>\s*([^<]*?)\s*</text>', svg):
    try:
        t = float(text)
    except ValueError:
        continue
    if anchor == "middle" and int(x) < width / 3:
        ticks.append((int(y), int(x), t))
row = max(y for y, _, _ in ticks)  # the x axis' labels: the lowest row of numbers
ticks = [(x, t) for y, x, t in ticks if y == row]
x, t = min(ticks, key=lambda p: abs(p[1] - 0.4 * max(t for _, t in ticks)))
print(x, t)
PY
)

# --- 3. serve (bounded lifetime)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout 180 python3 -m http.server "$port" --bind 127.0.0.1 --directory "$OUT/run" 2>"$OUT/server.log" >/dev/null &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/check.html')" 2>/dev/null && break
  sleep 0.1
done
base="http://127.0.0.1:$port"

# --- 4. load in headless chromium
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars)
timeout 90 "$browser" "${flags[@]}" --virtual-time-budget=10000 --dump-dom "$base/check.html" \
  >"$OUT/check-dom.html" 2>"$OUT/chromium-check.log"
timeout 90 "$browser" "${flags[@]}" --virtual-time-budget=10000 --dump-dom "$base/report/index.html" \
  >"$OUT/dom.html" 2>"$OUT/chromium-dom.log"
timeout 90 "$browser" "${flags[@]}" --virtual-time-budget=10000 --window-size=1280,2000 \
  --screenshot="$OUT/report.png" "$base/report/index.html" 2>"$OUT/chromium-shot.log" >/dev/null
# WebGL in headless Chromium without a GPU: SwiftShader, opted in
gl=(--enable-unsafe-swiftshader)
timeout 120 "$browser" "${flags[@]}" "${gl[@]}" --enable-logging=stderr --virtual-time-budget=30000 --dump-dom \
  "$base/check-replay.html" >"$OUT/check-replay-dom.html" 2>"$OUT/chromium-replay.log"
timeout 120 "$browser" "${flags[@]}" "${gl[@]}" --virtual-time-budget=20000 --window-size=1400,800 \
  --screenshot="$OUT/replay-clutter.png" "$base/report/replay/clutter.html#step=20" 2>/dev/null >/dev/null
timeout 120 "$browser" "${flags[@]}" "${gl[@]}" --virtual-time-budget=30000 --dump-dom \
  "$base/check-click.html?x=$click_x" >"$OUT/check-click-dom.html" 2>"$OUT/chromium-click.log"
echo "== loaded in chromium  ($(( $(date +%s) - t0 )) s)"

# --- 5. checks
python3 - "$OUT" "$click_t" <<'PY'
import re, sys, pathlib
out = pathlib.Path(sys.argv[1])
dom = (out / "dom.html").read_text()
log = (out / "server.log").read_text()
srcs = re.findall(r'<img[^>]* src="([^"]+)"', dom)
errors = []
if not srcs:
    errors.append("no <img> in the rendered DOM")
for s in srcs:
    if not re.search(r'"GET /report/%s HTTP/1\.[01]" 200' % re.escape(s), log):
        errors.append("figure not served with 200: " + s)
for line in log.splitlines():
    if re.search(r'" (4\d\d|5\d\d) ', line) and "/favicon.ico" not in line:
        errors.append("server error: " + line.strip())
m = re.search(r'images=(\d+) broken=(\d+)([^<]*)', (out / "check-dom.html").read_text())
if not m:
    errors.append("the in-browser image check did not run")
elif m.group(2) != "0" or int(m.group(1)) != len(srcs):
    errors.append("in-browser image check: " + m.group(0))
# the matrix view: exactly one cell per (case, solver) pair of the run, rows sortable
import json
records = [json.loads(p.read_text()) for p in (out / "run").glob("*.json")]
want = sorted(f"{r['case']['label']}__{r['solver']['name']}" for r in records)
check = (out / "check-dom.html").read_text()
mp = re.search(r'matrix_rows=(\d+) sort=(\w+) matrix_pairs=([^<]*)', check)
if not mp:
    errors.append("the in-browser matrix check did not run: " + (m.group(0) if m else "no result"))
else:
    got = sorted(mp.group(3).split())
    if got != want:
        errors.append(f"matrix cells {got} != the run's pairs {want}")
    cases = {r['case']['label'] for r in records}
    if int(mp.group(1)) != len(cases):
        errors.append(f"matrix has {mp.group(1)} rows, the run {len(cases)} cases")
    if mp.group(2) != "ok":
        errors.append("sorting the matrix by a header click failed")
    print(f"matrix: {len(got)} cells = the run's {len(want)} pairs, {len(cases)} rows, every column sorts both ways")
if "<th>solve time / pgs</th>" not in dom:
    errors.append("no ratio-to-baseline column (--baseline pgs) in the results table")
# the convergence figure of sphere_stack: one line per solver that ran it, in both panels, all on
# the harness's yardstick (no "own <column>" fallback) and on one common step
solvers = sorted(p.name.split("__")[1].split(".")[0].split("-")[0] for p in (out / "run").glob("sphere_stack__*.json"))
svg = (out / "run/report/figures/convergence-sphere_stack.svg").read_text()
legend = re.findall(r'<text[^>]*>\s*([^<]+?)\s*</text>', svg)
for s in solvers:
    if legend.count(s) != 2:
        errors.append(f"convergence-sphere_stack.svg: solver {s} has {legend.count(s)} legend lines, expected 2 (one per panel)")
if any("own " in t for t in legend):
    errors.append("convergence-sphere_stack.svg: a solver drew its own residual instead of the yardstick")
cap = re.search(r'<figcaption><b>Convergence on sphere_stack\.</b>(.*?)</figcaption>', dom, re.S)
if not cap or "all on step" not in cap.group(1):
    errors.append("convergence caption of sphere_stack does not name one common step")
if len(solvers) < 4:
    errors.append(f"expected 4 solvers on sphere_stack, found {solvers}")
print(f"convergence-sphere_stack.svg: one line per solver in both panels ({', '.join(solvers)})")
# the claims links: every solver of a paper that ran links its README's claims table, and the link
# resolves from the report's directory to a README holding that section
import html as _html
ran = {r['solver']['name'] for r in records}
links = {m.group(1): _html.unescape(m.group(2)) for m in re.finditer(r'<a class="claims" data-solver="([^"]+)" href="([^"]+)"', dom)}
for s in sorted(ran & {"canal", "drumwright", "local_global", "nsn", "sap", "subadmm"}):
    if s not in links:
        errors.append(f"no claims link for {s}")
for s, href in links.items():
    path = (out / "run/report" / href.split("#")[0]).resolve()
    if not path.is_file() or "Claims of the paper" not in path.read_text():
        errors.append(f"claims link of {s} does not resolve to a claims table: {href}")
print(f"claims: {len(links)} links resolve to their READMEs' claims tables ({', '.join(sorted(links))})")
# the matrix links every cell to its replay
mp2 = re.search(r'replay_links=(\d+)/(\d+)', check)
if not mp2 or mp2.group(1) != mp2.group(2) or mp2.group(1) == "0":
    errors.append("matrix cells without a replay link: " + (mp2.group(0) if mp2 else "no result"))
# the replay page of clutter
import gzip
rp = re.search(r'REPLAY (\{.*\})', (out / "check-replay-dom.html").read_text())
if not rp:
    errors.append("the in-browser replay check did not run")
else:
    import html as _h
    res = json.loads(_h.unescape(rp.group(1)))
    sidecar = json.load(gzip.open(out / "run/clutter__pgs.traj.json.gz"))
    nb = len(sidecar["bodies"]) + len(sidecar["meshes"])
    if not res.get("ready"):
        errors.append(f"replay page not ready: {res.get('errors')}")
    else:
        if res["errors"]:
            errors.append(f"replay page console errors: {res['errors']}")
        if res["objects"] != nb:
            errors.append(f"replay renders {res['objects']} body objects, the sidecar has {nb} bodies")
        if res["moved"] == 0 or res["diff_pixels"] < 100:
            errors.append(f"frame 0 and the last frame do not differ: {res['moved']} bodies moved, {res['diff_pixels']} pixels differ")
        if res["diff_pixels"] > 0.6 * res["pixels"]:
            errors.append(f"frame 0 and the last frame differ everywhere ({res['diff_pixels']} of {res['pixels']} pixels): not a motion")
        k = res["scrub_step"]
        frame = max((f for f in sidecar["frames"] if f["step"] <= k), key=lambda f: f["step"])
        m = re.search(r'step\s*(\d+).*max penetration\s*([-0-9.e+]+) mm', res["scrub_text"])
        if not m or int(m.group(1)) != frame["step"]:
            errors.append(f"scrubbing to step {k} shows {res['scrub_text']!r}, not frame step {frame['step']}")
        else:
            want = frame["metrics"]["penetration_max"] * 1000
            if abs(float(m.group(2)) - want) > 0.005 * max(abs(want), 1e-9) + 1e-12:
                errors.append(f"scrubbed penetration {m.group(2)} mm != the sidecar's {want} mm")
        print(f"replay: clutter, {res['objects']} bodies rendered (sidecar {nb}), {res['moved']} moved > 1 cm between "
              f"frame 0 and step {res['last_step']}, {res['diff_pixels']} of {res['pixels']} pixels differ; scrub to step "
              f"{k} shows frame step {frame['step']}'s metrics; no console error")
# the click on the per-step figure: the replay opens at the step whose time is at the tick clicked
# (the record's step nearest that time), showing the frame of the largest recorded step not after it
click_t = float(sys.argv[2])
cp = re.search(r'CLICK (\{.*\})', (out / "check-click-dom.html").read_text())
if not cp:
    errors.append("the in-browser click check did not run")
else:
    import html as _h
    res = json.loads(_h.unescape(cp.group(1)))
    rec = json.loads((out / "run/clutter__pgs.json").read_text())
    want = min(rec["steps"], key=lambda s: abs(s["metrics"]["t"] - click_t))["step"]
    sidecar = json.load(gzip.open(out / "run/clutter__pgs.traj.json.gz"))
    frame = max((f for f in sidecar["frames"] if f["step"] <= want), key=lambda f: f["step"])
    m = re.search(r'step\s*(\d+).*max penetration\s*([-0-9.e+]+) mm', res.get("metrics_text", ""))
    if not res.get("ready") or res.get("page") != "clutter.html" or res.get("errors"):
        errors.append(f"a click on the per-step figure did not open the clutter replay: {res}")
    elif res["step"] != want or res["hash"] != f"#step={want}":
        errors.append(f"a click at t = {click_t} s opened step {res['step']} ({res['hash']}), expected step {want}")
    elif not m or int(m.group(1)) != frame["step"] or res["frame_step"] != frame["step"]:
        errors.append(f"after the click the replay shows {res.get('metrics_text')!r}, not frame step {frame['step']}")
    elif abs(float(m.group(2)) - frame["metrics"]["penetration_max"] * 1000) > 0.005 * abs(frame["metrics"]["penetration_max"] * 1000) + 1e-12:
        errors.append(f"after the click the penetration shown {m.group(2)} mm is not the frame's")
    else:
        print(f"per-step figure: a click at t = {click_t} s (x = {res['clicked_at']} px) opened the clutter replay at "
              f"step {want}, showing frame step {frame['step']}'s metrics")
rlog = (out / "chromium-replay.log").read_text()
for line in rlog.splitlines():
    if "CONSOLE" in line and ("Uncaught" in line or "Error" in line):
        errors.append("replay console: " + line.strip())
png = out / "report.png"
if not png.is_file() or png.stat().st_size < 10000:
    errors.append("no screenshot")
for e in errors:
    print("error:", e)
print(f"figures: {len(srcs)} <img>, all served with 200 and decoded" if not errors else f"{len(errors)} problem(s)")
sys.exit(1 if errors else 0)
PY
echo "== screenshot: $OUT/report.png"
echo "== report browser check passed in $(( $(date +%s) - t0 )) s"
