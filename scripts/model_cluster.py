"""A scaling model of the Spark engine fitted on `make bench-cluster`'s rows (docs/scaling.md):

    .venv/bin/python scripts/model_cluster.py bench/results/cluster.json... [--fit 1 2 3] \
        [--predict 4 16 64] [--workload CANDIDATES LEVELS COST_RATIO]

Per level (Amdahl's law level by level, with USL's growing cost of more workers): a Spark level
of n candidates on W workers takes t = a + d (W - 1) + n (b + c / W): a fixed cost a
(scheduling, the driver's planning, a Python task's round trip), d more per added worker
(coordination: more tasks, shuffle blocks and executors to wait for), a serial cost b per
candidate (the driver's and the shuffle's single points) and a parallel cost c per candidate
(the executors' work, spread over W workers). They are fitted by non-negative least squares
on the Spark levels of the runs with W in --fit (but a run's first Spark level where the
executors were not warmed up before the search: their warm-up). A run's prediction is the
sum over its Spark levels plus the rest of its search (that warm-up level, levels in the
driver, the time between levels), a line in W
fitted on the same runs. It is printed next to each run measured, and a USL curve
(S(W) = W / (1 + s (W - 1) + k W (W - 1)), fitted on the same runs' speed-ups) beside it.

--workload predicts a search of CANDIDATES candidates in LEVELS Spark levels whose
candidates cost COST_RATIO times the fitted spec's (another spec's states: larger, more
invariants) for each W of --predict: LEVELS (a + d (W - 1)) + CANDIDATES COST_RATIO (b + c / W)
plus the rest at W.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np


def level_rows(run: dict[str, Any]) -> list[tuple[int, float]]:
    """(candidates, seconds) of each Spark level of a run; but the first (the executors'
    warm-up) in a run whose executors were not warmed up before the search (`warmup_s`)."""
    found, before = [], 0
    for level in run["levels"]:
        made = level["generated"] - before
        before = level["generated"]
        if level["where"] == "spark":
            found.append((made, level["seconds"]))
    return found if run.get("warmup_s") is not None else found[1:]


def features(workers: int, made: float) -> list[float]:
    return [1.0, workers - 1.0, made, made / workers]


def nnls(rows: list[list[float]], values: list[float]) -> np.ndarray:
    """Least squares with every coefficient >= 0: the best of the subsets of features whose
    unconstrained fit is non-negative (a handful of features: all subsets are few)."""
    matrix, target = np.array(rows), np.array(values)
    best, best_error = np.zeros(matrix.shape[1]), float(np.sum(target**2))
    for mask in itertools.product([False, True], repeat=matrix.shape[1]):
        if not any(mask):
            continue
        columns = [i for i, keep in enumerate(mask) if keep]
        found, *_ = np.linalg.lstsq(matrix[:, columns], target, rcond=None)
        if (found < 0).any():
            continue
        error = float(np.sum((matrix[:, columns] @ found - target) ** 2))
        if error < best_error:
            best = np.zeros(matrix.shape[1])
            best[columns] = found
            best_error = error
    return best


def fit_levels(runs: list[dict[str, Any]]) -> np.ndarray:
    rows, seconds = [], []
    for run in runs:
        for made, took in level_rows(run):
            rows.append(features(run["workers"], made))
            seconds.append(took)
    return nnls(rows, seconds)


def rest_of(run: dict[str, Any]) -> float:
    """The search's seconds outside the Spark levels that level_rows counts."""
    return run["seconds"] - sum(took for _, took in level_rows(run))


def fit_rest(runs: list[dict[str, Any]]) -> tuple[float, float]:
    """The rest as a line in W (a constant from one run)."""
    if len({r["workers"] for r in runs}) < 2:
        return float(np.mean([rest_of(r) for r in runs])), 0.0
    slope, intercept = np.polyfit([r["workers"] for r in runs], [rest_of(r) for r in runs], 1)
    return float(intercept), float(slope)


def predict(run: dict[str, Any], model: np.ndarray, rest: tuple[float, float]) -> float:
    workers = run["workers"]
    levels = sum(float(model @ features(workers, made)) for made, _ in level_rows(run))
    return rest[0] + rest[1] * workers + levels


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
    rest = fit_rest(fitted)
    s, k = fit_usl([(r["workers"], one["seconds"] / r["seconds"]) for r in fitted])
    a, d, b, c = model
    print(
        f"per level: t = {a:.3f} s + {d:.3f} s * (W - 1) + n * ({b * 1e6:.3f} + {c * 1e6:.3f} / W)"
        f" us (fitted on W = {', '.join(map(str, args.fit))}); the rest {rest[0]:.2f} s +"
        f" {rest[1]:.2f} s * W; USL s = {s:.4f}, k = {k:.4f}"
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
        print("| executors | predicted s | speed-up over 1 | fixed and serial share |")
        print("|---|---|---|---|")

        def took(workers: int) -> float:
            fixed = levels * (a + d * (workers - 1)) + rest[0] + rest[1] * workers
            return fixed + candidates * ratio * (b + c / workers)

        for workers in [1, *args.predict]:
            parallel = candidates * ratio * c / workers
            print(
                f"| {workers} | {took(workers):,.0f} | {took(1) / took(workers):.1f}"
                f" | {1 - parallel / took(workers):.0%} |"
            )


if __name__ == "__main__":
    main()
