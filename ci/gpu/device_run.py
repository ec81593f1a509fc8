#!/usr/bin/env python3
"""The measurements of ci/gpu/run-on-device.sh (which documents the options), run from a bundle made
by ci/gpu/build-for-device.sh on a machine with no Rust toolchain. Python 3.8+ standard library
only. Writes one JSON file (schema "signorini.gpu-timings/1") that ci/gpu/gpu-timings-doc.py turns
into the generated part of docs/gpu-timings.md."""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

SCHEMA = "signorini.gpu-timings/1"
# Zeng et al. Table 3 (twisting bar, RTX 4090, ms per frame) at the vertex counts of our bars.
PAPER_FRAME_MS = {"50x9x9": 6.23, "65x12x12": 13.55, "80x15x15": 28.55}
# Lee et al. Table III: time ratios against SubADMM.
PAPER_RATIOS = {8: {"No Sub": 2.78, "No Body": 1.46}, 27: {"No Sub": 3.63}}
STAGES = ["setup", "local", "global", "contact"]


def log(msg):
    print(f"run-on-device: {msg}", flush=True)


def sh(cmd, env=None, cwd=None):
    """Runs cmd, echoing its output; returns (rc, output, peak RSS of the child in bytes)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, text=True)
    out = []
    for line in p.stdout:
        sys.stdout.write(line)
        out.append(line)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    return p.returncode, "".join(out), ru.ru_maxrss * 1024, time.time() - t0


def nvidia_smi(query):
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


class MemorySampler:
    """Samples nvidia-smi's used memory of GPU 0 every 0.1 s (driver view: includes the CUDA context)."""

    def __init__(self):
        self.peak_mib, self.baseline_mib, self._stop = None, None, threading.Event()
        v = nvidia_smi("memory.used")
        if v is not None:
            self.baseline_mib = int(v.splitlines()[0])
            self.peak_mib = self.baseline_mib
            self._t = threading.Thread(target=self._run, daemon=True)
            self._t.start()

    def _run(self):
        while not self._stop.wait(0.1):
            v = nvidia_smi("memory.used")
            if v is not None:
                self.peak_mib = max(self.peak_mib, int(v.splitlines()[0]))

    def stop(self):
        self._stop.set()
        if self.baseline_mib is None:
            return None
        self._t.join()
        return {"peak_used_mib": self.peak_mib, "baseline_mib": self.baseline_mib,
                "peak_above_baseline_mib": self.peak_mib - self.baseline_mib}


def gpu_status(bundle, work):
    """(available, label or reason): what `signorini run --backend gpu` says on a 2-step run."""
    d = work / "probe"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    r = subprocess.run([str(bundle / "bin/signorini"), "run", "--case", "slope", "--solver", "pgs",
                        "--set", "duration=0.02", "--backend", "gpu", "--out", str(d)],
                       capture_output=True, text=True)
    line = next((l for l in r.stderr.splitlines() if "backend" in l), r.stderr.strip()[-300:])
    if line.startswith("backend: gpu "):
        return True, line[len("backend: "):]
    m = re.search(r"GPU unavailable \((.*)\); falling back", line)
    return False, m.group(1) if m else (line or f"signorini exited {r.returncode}")


def parity(bundle, env):
    out = {}
    runs = {
        "kernels": [str(bundle / "tests/kernels"), "gpu", "--nocapture", "--test-threads=1"],
        "gpu_backend": [str(bundle / "tests/gpu_backend"), "--nocapture", "--test-threads=1"],
        "solvers": [str(bundle / "tests/solvers"), "device_resident", "--nocapture", "--test-threads=1"],
    }
    for name, cmd in runs.items():
        log(f"GPU parity: {' '.join(cmd)}")
        e = dict(env, SIGNORINI_BIN=str(bundle / "bin/signorini"))
        rc, text, _, secs = sh(cmd, env=e)
        skipped = [l for l in text.splitlines() if "skipping GPU test" in l]
        m = re.findall(r"test result: (\w+)\. (\d+) passed; (\d+) failed", text)
        passed = sum(int(x[1]) for x in m)
        failed = sum(int(x[2]) for x in m)
        ok = rc == 0 and not skipped
        out[name] = {"ok": ok, "rc": rc, "passed": passed, "failed": failed, "skipped_lines": skipped,
                     "seconds": round(secs, 1), "command": " ".join(cmd)}
    return out


def frame(bundle, work, bar, backend, env):
    nx, ny, nz = (int(v) for v in bar.split("x"))
    d = work / "frames" / f"{backend}-{bar}"
    shutil.rmtree(d, ignore_errors=True)
    cmd = [str(bundle / "bin/signorini"), "run", "--case", "twisting_bar", "--solver", "local_global",
           "--set", "duration=0.05", "--set", f"nx={nx}", "--set", f"ny={ny}", "--set", f"nz={nz}",
           "--logged-steps", "5", "--backend", backend, "--out", str(d)]
    log(f"frames: {' '.join(cmd[1:])}")
    sampler = MemorySampler() if backend == "gpu" else None
    rc, text, rss, secs = sh(cmd, env=env)
    mem = sampler.stop() if sampler else None
    rec = {"bar": bar, "vertices": (nx + 1) * (ny + 1) * (nz + 1), "backend": backend, "rc": rc,
           "paper_ms": PAPER_FRAME_MS.get(bar), "peak_rss_bytes": rss, "seconds": round(secs, 1),
           "device_memory": mem}
    files = sorted(d.glob("*.json")) if d.is_dir() else []
    if rc != 0 or not files:
        if rc < 0:
            # killed by a signal: the kernel's out-of-memory killer sends SIGKILL (9)
            rec["error"] = f"killed by signal {-rc}" + (" (out of memory?)" if rc == -9 else "")
        else:
            rec["error"] = text.strip().splitlines()[-1] if text.strip() else f"exit {rc}"
        return rec
    r = json.loads(files[0].read_text())
    walls = [s["wall_s"] for s in r["steps"]]
    rec.update({
        "provenance_backend": r["provenance"].get("backend"),
        "status": r["status"],
        "frame_s": walls,
        "first_frame_s": walls[0] if walls else None,
        "frame_median_ms": 1e3 * statistics.median(walls[1:]) if len(walls) > 1 else None,
        "stages_s": stages(r),
    })
    return rec


def stages(record):
    """Seconds per frame of each solver stage: the record's `summary.solver_stages_s` totals over
    the run divided by its steps (setup includes the first frame's one-time S build)."""
    summary = record.get("summary", {})
    totals, steps = summary.get("solver_stages_s") or {}, summary.get("steps") or 0
    per = {k: totals[k] / steps for k in STAGES if k in totals and steps}
    return per or None


def subadmm(bundle, work, threads, robots, quick, env, rows, save):
    """Appends the rows of each thread count to `rows` and calls `save()` after each, so that a run
    stopped by a time limit keeps the thread counts it finished."""
    ncpu = os.cpu_count()
    for t in threads:
        home = work / f"criterion-threads-{t}"
        shutil.rmtree(home, ignore_errors=True)
        e = dict(env, RAYON_NUM_THREADS=str(t), SUBADMM_THREADS=str(t),
                 SUBADMM_ROBOTS=",".join(map(str, robots)), CRITERION_HOME=str(home))
        cmd = [str(bundle / "bench/subadmm"), "--bench"] + (["--quick"] if quick else [])
        log(f"SubADMM Table III at {t} thread(s): RAYON_NUM_THREADS={t} {' '.join(cmd)}")
        rc, text, _, secs = sh(cmd, env=e, cwd=str(work))
        est = {}
        for bj in home.rglob("new/benchmark.json"):
            full = json.loads(bj.read_text()).get("full_id", "")
            es = json.loads((bj.parent / "estimates.json").read_text())
            est[full] = {"mean_ns": es["mean"]["point_estimate"], "median_ns": es["median"]["point_estimate"]}
        for n in robots:
            row = {"robots": n, "threads": t, "rc": rc, "oversubscribed": t > ncpu, "ms": {}, "ratio": {},
                   "paper_ratio": PAPER_RATIOS.get(n, {})}
            for label in ["SubADMM", "No Sub", "No Body"]:
                e_ = est.get(f"subadmm/{label}/robots-{n}/threads-{t}")
                if e_:
                    row["ms"][label] = e_["mean_ns"] / 1e6
            base = row["ms"].get("SubADMM")
            for label in ["No Sub", "No Body"]:
                if base and label in row["ms"]:
                    row["ratio"][label] = row["ms"][label] / base
            rows.append(row)
        save()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bundle", default=str(Path(__file__).resolve().parent))
    ap.add_argument("--work", default="device-run")
    ap.add_argument("--out", default=None)
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--robots", default="8,27")
    ap.add_argument("--bars", default="50x9x9,65x12x12,80x15x15")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="", help="comma-separated: parity,frames,cpu-frames,gpu-frames,subadmm")
    a = ap.parse_args()
    bundle, work = Path(a.bundle).resolve(), Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    out = Path(a.out) if a.out else work / "gpu-timings.json"
    skip = set(filter(None, a.skip.split(",")))
    env = dict(os.environ)
    lib = bundle / "lib" if (bundle / "lib").is_dir() else system_nvrtc_dir()
    if lib is not None:
        log(f"libnvrtc from {lib}")
        env["LD_LIBRARY_PATH"] = f"{lib}:{env.get('LD_LIBRARY_PATH', '')}".rstrip(":")
        os.environ["LD_LIBRARY_PATH"] = env["LD_LIBRARY_PATH"]

    available, label = gpu_status(bundle, work)
    if available:
        log(f"GPU: {label}")
    else:
        log(f"no GPU: {label}. Skipping the GPU parity tests, GPU frame timings and device memory; "
            "the CPU parts still run.")
    manifest = (bundle / "MANIFEST").read_text().splitlines() if (bundle / "MANIFEST").is_file() else []
    result = {
        "schema": SCHEMA,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "bundle": manifest[:3],
        "machine": {"host": platform.node(), "cpu": cpu_model(), "cpus": os.cpu_count(),
                    "gpu": nvidia_smi("name,memory.total,driver_version")},
        "gpu_available": available,
        "gpu": label if available else None,
        "no_gpu_reason": None if available else label,
        "parity": None, "frames": [], "subadmm": [],
    }
    if available and "parity" not in skip:
        result["parity"] = parity(bundle, env)
    bars = [b for b in a.bars.split(",") if b]
    if "frames" not in skip:
        for bar in bars:
            for backend in ["cpu", "gpu"]:
                if f"{backend}-frames" in skip or backend == "gpu" and not available:
                    continue
                result["frames"].append(frame(bundle, work, bar, backend, env))
                write(out, result)
    if "subadmm" not in skip:
        threads = [int(t) for t in a.threads.split(",") if t]
        robots = [int(r) for r in a.robots.split(",") if r]
        subadmm(bundle, work, threads, robots, a.quick, env, result["subadmm"], lambda: write(out, result))
    result["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write(out, result)
    log(f"results: {out}")
    bad = [k for k, v in (result["parity"] or {}).items() if not v["ok"]]
    bad += [f"frames {f['backend']} {f['bar']}" for f in result["frames"] if f.get("error")]
    bad += [f"subadmm threads {r['threads']}" for r in result["subadmm"] if r["rc"] != 0]
    if bad:
        log("FAILED: " + ", ".join(bad))
        return 1
    return 0


def system_nvrtc_dir():
    """The folder of a CUDA 13 `libnvrtc.so.13` installed on this machine but not on the loader's
    path (a CUDA toolkit under /usr/local, or the PyPI wheel of a Python environment), or None.
    On the GPU machines of 2026-11-28 it was /usr/local/cuda-13.0/targets/x86_64-linux/lib."""
    import glob
    patterns = ["/usr/local/cuda*/targets/*/lib/libnvrtc.so.13*", "/usr/local/cuda*/lib64/libnvrtc.so.13*",
                "/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13*",
                "/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib/libnvrtc.so.13*"]
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[0]).parent
    return None


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def write(path, result):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
