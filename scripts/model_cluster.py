"""A scaling model of the Spark engine fitted on `make bench-cluster`'s rows (docs/scaling.md):

    .venv/bin/python scripts/model_cluster.py bench/results/cluster.json... [--fit 1 2 3] \
        [--predict 4 16 64] [--workload CANDIDATES LEVELS COST_RATIO]

Per level (Amdahl's law level by level): a Spark level of n candidates on W workers takes
t = a + n * (b + c / W): a fixed cost a (scheduling, the driver's planning, a Python task's
round trip), a serial cost b per candidate (what the driver and the shuffle's single points
do) and a parallel cost c per candidate (the executors' work, spread over W workers). a, b
and c are fitted by least squares on the Spark levels of the runs with W in --fit; a run's
prediction is the sum over its Spark levels plus what its search spent outside them (levels
in the driver, the time between levels: the mean of the fitted runs). It is printed next to
each run measured, and a USL curve (S(W) = W / (1 + s (W - 1) + k W (W - 1)), fitted on the
same runs' speed-ups) beside it.

--workload predicts a search of CANDIDATES candidates in LEVELS Spark levels whose
candidates cost COST_RATIO times the fitted spec's (another spec's states: larger, more
invariants) for each W of --predict: LEVELS * a + CANDIDATES * COST_RATIO * (b + c / W).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np


def level_rows(run: dict[str, Any]) -> list[tuple[int, float]]:
    """(candidates, seconds) of each Spark level of a run."""
    found, before = [], 0
    for level in run["levels"]:
        made = level["generated"] - before
        before = level["generated"]
        if level["where"] == "spark":
            found.append((made, level["seconds"]))
    return found


def fit_levels(runs: list[dict[str, Any]]) -> tuple[float, float, float]:
    features, seconds = [], []
    for run in runs:
        for made, took in level_rows(run):
            features.append([1.0, made, made / run["workers"]])
            seconds.append(took)
    (a, b, c), *_ = np.linalg.lstsq(np.array(features), np.array(seconds), rcond=None)
    return float(a), float(b), float(c)


def outside(run: dict[str, Any]) -> float:
    """The search's seconds outside its Spark levels."""
    return run["seconds"] - sum(took for _, took in level_rows(run))


def predict(run: dict[str, Any], model: tuple[float, float, float], rest: float) -> float:
    a, b, c = model
    return rest + sum(a + made * (b + c / run["workers"]) for made, _ in level_rows(run))


def fit_usl(points: list[tuple[int, float]]) -> tuple[float, float]:
    """s and k of USL by least squares on W / S(W) - 1 = s (W - 1) + k W (W - 1)."""
    rows = [(w - 1, w * (w - 1)) for w, _ in points if w > 1]
    values = [w / speedup - 1 for w, speedup in points if w > 1]
    if len(rows) == 1:  # one point: Amdahl's serial share alone
        return values[0] / rows[0][0], 0.0
    (s, k), *_ = np.linalg.lstsq(np.array(rows, float), np.array(values), rcond=None)
    return float(s), float(k)


def usl(workers: float, s: float, k: float) -> float:
    return workers / (1 + s * (workers - 1) + k * workers * (workers - 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+")
    parser.add_argument("--fit", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--predict", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--workload", type=float, nargs=3, default=None)
    args = parser.parse_args()
    runs = [
        r
        for path in args.results
        for r in json.loads(Path(path).read_text())
        if r["engine"] == "spark"
    ]
    runs.sort(key=lambda r: r["workers"])
    fitted = [r for r in runs if r["workers"] in args.fit]
    one = next(r for r in runs if r["workers"] == 1)
    model = fit_levels(fitted)
    rest = float(np.mean([outside(r) for r in fitted]))
    s, k = fit_usl([(r["workers"], one["seconds"] / r["seconds"]) for r in fitted])
    a, b, c = model
    print(
        f"per level: t = {a:.3f} s + n * ({b * 1e6:.3f} + {c * 1e6:.3f} / W) us"
        f" (fitted on W = {', '.join(map(str, args.fit))}; {len(fitted)} runs); outside the"
        f" Spark levels {rest:.2f} s; USL s = {s:.4f}, k = {k:.4f}"
    )
    print("| workers | measured s | per-level model s | error | USL speed-up | measured speed-up |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        guess = predict(run, model, rest)
        print(
            f"| {run['workers']} | {run['seconds']:.1f} | {guess:.1f}"
            f" | {(guess - run['seconds']) / run['seconds']:+.0%}"
            f" | {usl(run['workers'], s, k):.2f} | {one['seconds'] / run['seconds']:.2f} |"
        )
    if args.workload:
        candidates, levels, ratio = args.workload
        print("| executors | predicted s | speed-up over 1 | serial share |")
        print("|---|---|---|---|")
        base = levels * a + candidates * ratio * (b + c)
        for workers in [1, *args.predict]:
            took = levels * a + candidates * ratio * (b + c / workers)
            serial = (levels * a + candidates * ratio * b) / took
            print(f"| {workers} | {took:,.0f} | {base / took:.1f} | {serial:.0%} |")


if __name__ == "__main__":
    main()
