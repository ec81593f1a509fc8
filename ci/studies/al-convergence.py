#!/usr/bin/env python3
"""Per-step convergence of a run's records, from the per-iterate yardstick columns of its logged
steps (run with `--logged-steps` at least the number of steps so that every step is logged):

    signorini run --case clutter,sphere_pour --solver canal --logged-steps 1000 --out DIR
    python3 ci/studies/al-convergence.py DIR/*.json [--eps 1e-6] [--column yardstick_model_natmap_rel]

Prints, per record: outer iterations per step (median, max), the fraction of steps whose returned
iterate meets EPS on the column (default: the natural map of each contact's own law, relative),
the median number of outer iterations after which every later iterate meets EPS, the inner
failures (rows with `inner_converged` = 0, CANAL) over all outer iterations, and the solver's own
unconverged-step count. Issue 37; solvers/src/canal/README.md §7 uses it."""
import argparse
import json
import math
import statistics


def steps(record, column):
    for entry in record["iterations"]:
        cols = dict(zip(entry["log"]["names"], entry["log"]["columns"]))
        n = len(cols["time_s"])
        y = [math.nan if v is None else v for v in cols.get(column, [math.nan] * n)]
        ok = cols.get("inner_converged", [])
        yield n, y, sum(1 for v in ok if v is not None and v < 0.5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--column", default="yardstick_model_natmap_rel")
    a = ap.parse_args()
    for path in a.records:
        r = json.load(open(path))
        rows = list(steps(r, a.column))
        if not rows:
            print(f"{path}: no logged steps")
            continue
        outer = [n for n, _, _ in rows]
        final = sum(1 for _, y, _ in rows if y and y[-1] <= a.eps)
        after = [next(i + 1 for i in range(len(y)) if all(v <= a.eps for v in y[i:])) for _, y, _ in rows
                 if y and y[-1] <= a.eps]
        fails = sum(f for _, _, f in rows)
        label = r["case"].get("label") or r["case"]["name"]
        print(f"{label:28s} {r['solver']['name']:8s} steps {len(rows):4d}  outer median {statistics.median(outer):4.0f}"
              f" max {max(outer):4d}  final <= {a.eps:g}: {final / len(rows):6.1%}"
              f"  outer to stay there (median) {statistics.median(after) if after else math.nan:4.1f}"
              f"  inner failures {fails}/{sum(outer)} ({fails / sum(outer):.1%})"
              f"  unconverged {r['summary']['unconverged_steps']}")


if __name__ == "__main__":
    main()
