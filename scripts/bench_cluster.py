"""`make bench-cluster`: the Spark engine's scaling on a simulated cluster
(tests/simulated_cluster.py: each worker and the driver in a CPU cgroup and a network
namespace of its own), against the
local engine in one cgroup of the same total quota. As root:

    .venv/bin/python scripts/bench_cluster.py SPEC.py [-D NAME=VALUE]... [--workers 1 2 4] \
        [--quota 0.35] [--driver-quota 0.4] [--spark-conf KEY=VALUE]... [--timeout SECONDS] \
        [--no-deadlock] [--cold] [--memory 1g] [--rate 1gbit] [--out bench/results/cluster.json]
        [--merge]

For each number of workers k: the local engine (`mc check --workers k`, in a cgroup of
k x quota; mc runs at most as many worker processes as the machine has CPUs, so k=4 runs 2 in
1.4 CPUs), then a cluster of k one-core workers of `quota` CPUs each and a driver of
`driver-quota`, started afresh. One row per run, printed as a table and written to --out:

- seconds: the search (not the session's start, nor the engine's start-up, nor the Spark
  executors' warm-up: a rehearsal of a level before the search, `warmup_s`, unless --cold);
- speedup: the same engine's seconds with the fewest workers run (one by default) over these;
- cpu_s, driver_cpu_s, workers_cpu_s: CPU seconds of the search from the cgroups (cpuacct);
- candidates_per_cpu_s (workers and driver), candidates_per_worker_cpu_s (workers alone);
- per_cpu_vs_local: candidates per CPU second over the local engine's with the same k;
- level_fixed_s: the intercept of a Spark level's seconds against its states (a least-squares
  line over the levels that ran on Spark, but the first with --cold, a warm-up: `level_fit`;
  `--spark-conf mc.driverLevelStates=0` puts every level there);
- shuffle_bytes_per_state: shuffle written over distinct states;
- quota_use: the least, over the run's cgroups, of the CPU used while their tasks ran over
  the quota of that time (a worker: the intervals in which its executor ran tasks, from
  Spark's REST API; the local engine: its whole run), and oversubscribed when under 0.9: the
  machine did not give a part its quota (other work on the cores), so its figures are low;
- throttled: the share of CFS periods in which the workers' quota ran out.

With --merge, the rows already in --out are kept but those of the runs made again (the same
spec, constants, quota, --spark-conf, engine and workers): a series can be measured one worker
count at a time. Every run must find the local engine's counts (verdict, distinct states,
states generated, depth) and counterexample; a difference stops the bench (exit 1).
--timeout bounds each search (its counts are then not compared). Exit 153 where the machine
cannot host the cluster (not root, no cpu controller, no `ip`), 151 for quotas above 1.8 CPUs
in all.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker.errors import ConfigError, EngineError  # noqa: E402
from tests.simulated_cluster import (  # noqa: E402
    CpuLimit,
    CpuReading,
    Sampler,
    SimulatedCluster,
    check_host,
)

COLUMNS = (  # (key, header, format)
    ("engine", "engine", "{}"),
    ("workers", "workers", "{}"),
    ("quota", "quota", "{:.2f}"),
    ("seconds", "search s", "{:.1f}"),
    ("distinct_states", "distinct", "{:,}"),
    ("speedup", "speed-up", "{:.2f}"),
    ("cpu_s", "CPU s", "{:.1f}"),
    ("candidates_per_cpu_s", "cand./CPU s", "{:,.0f}"),
    ("candidates_per_worker_cpu_s", "cand./worker CPU s", "{:,.0f}"),
    ("per_cpu_vs_local", "per CPU vs local", "{:.2f}"),
    ("driver_cpu_s", "driver CPU s", "{:.1f}"),
    ("level_fixed_s", "level fixed s", "{:.2f}"),
    ("warmup_s", "warm-up s", "{:.1f}"),
    ("shuffle_bytes_per_state", "shuffle B/state", "{:.1f}"),
    ("quota_use", "quota use", "{:.2f}"),
    ("throttled", "throttled", "{:.2f}"),
    ("oversubscribed", "oversubscribed", "{}"),
)


def counts(doc: dict[str, Any]) -> tuple[Any, ...]:
    return (
        doc["verdict"],
        doc["distinct_states"],
        doc["states_generated"],
        doc["depth"],
        [a for a in doc["actions"] if a is not None],
    )


def local_row(args: argparse.Namespace, k: int, folder: Path) -> tuple[dict[str, Any], tuple]:
    out = folder / f"local-{k}.json"
    command = [sys.executable, "-m", "checker", "check", args.spec, *_defines(args)]
    command += ["--workers", str(k), "--progress", "0", "--json", str(out)]
    command += ["--no-deadlock"] if args.no_deadlock else []
    command += ["--timeout", str(args.timeout)] if args.timeout else []
    with CpuLimit(k * args.quota) as limit:
        before, wall = limit.cgroup.read(), time.perf_counter()
        run = subprocess.run(
            command, capture_output=True, text=True, preexec_fn=limit.cgroup.join, cwd=ROOT
        )
        wall, after = time.perf_counter() - wall, limit.cgroup.read()
    if not out.exists():
        raise SystemExit(f"bench-cluster: the local engine failed:\n{run.stderr[-3000:]}")
    doc = json.loads(out.read_text())
    doc["actions"] = [step["action"] for step in doc["trace"]]
    cpu = after.used_s - before.used_s
    use = cpu / (k * args.quota * wall)
    row = {
        "engine": "local",
        "workers": k,
        "quota": args.quota,
        "seconds": doc["seconds"],
        "distinct_states": doc["distinct_states"],
        "states_generated": doc["states_generated"],
        "depth": doc["depth"],
        "verdict": doc["verdict"],
        "cpu_s": cpu,
        "candidates_per_cpu_s": doc["states_generated"] / cpu,
        "quota_use": use,
        "throttled": _throttled([before], [after]),
        "oversubscribed": use < 0.9,
        "processes": min(k, max(2, _cpus())),
    }
    return row, counts(doc)


def spark_row(args: argparse.Namespace, k: int, folder: Path) -> tuple[dict[str, Any], tuple]:
    out = folder / f"spark-{k}.json"
    with SimulatedCluster(
        k, args.quota, args.driver_quota, args.memory, str(folder / f"cluster-{k}"), args.rate
    ) as cluster:
        command = [sys.executable, str(ROOT / "scripts" / "cluster_driver.py"), args.spec]
        command += [*_defines(args), "--master", cluster.master, "--executors", str(k)]
        command += [*cluster.driver_conf(), "--out", str(out)]
        command += [a for c in args.spark_conf for a in ("--spark-conf", c)]
        command += ["--no-deadlock"] if args.no_deadlock else []
        command += ["--timeout", str(args.timeout)] if args.timeout else []
        command += ["--cold"] if args.cold else []
        with Sampler(cluster.cgroups) as sampler:
            before = cluster.readings()
            run = cluster.run_driver(command, timeout=24 * 3600, cwd=str(ROOT))
            after = cluster.readings()
        addresses = {cluster.address(w): w for w in cluster.worker_names}
        workers = cluster.worker_names
    if run.returncode != 0 or not out.exists():
        raise SystemExit(f"bench-cluster: the Spark driver failed:\n{run.stderr[-3000:]}")
    doc = json.loads(out.read_text())
    begin, end = doc["begin"], doc["end"]
    driver_cpu = sampler.between("driver", begin, end)
    workers_cpu = sum(sampler.between(w, begin, end) for w in workers)
    uses = []
    for address, intervals in doc["tasks"].items():  # the search's tasks (not the warm-up's)
        busy = [(max(a, begin), min(b, end)) for a, b in _union(intervals) if b > begin]
        if address in addresses and busy:
            seconds = sum(b - a for a, b in busy)
            used = sum(sampler.between(addresses[address], a, b) for a, b in busy)
            uses.append(used / (args.quota * seconds))
    spark_levels = [lv for lv in doc["levels"] if lv["where"] == "spark"]
    fixed, per_state = level_fit(doc["levels"], cold=doc.get("warmup_s") is None)
    generated = doc["states_generated"]
    row = {
        "engine": "spark",
        "workers": k,
        "quota": args.quota,
        "driver_quota": args.driver_quota,
        "seconds": end - begin,
        "session_s": doc["session_s"],
        "warmup_s": doc.get("warmup_s"),
        "distinct_states": doc["distinct_states"],
        "states_generated": generated,
        "depth": doc["depth"],
        "verdict": doc["verdict"],
        "cpu_s": workers_cpu + driver_cpu,
        "workers_cpu_s": workers_cpu,
        "driver_cpu_s": driver_cpu,
        "master_cpu_s": sampler.between("master", begin, end),
        "candidates_per_cpu_s": generated / (workers_cpu + driver_cpu),
        "candidates_per_worker_cpu_s": generated / workers_cpu,
        "level_fixed_s": fixed,
        "level_state_s": per_state,
        "spark_levels": len(spark_levels),
        "shuffle_bytes": doc["shuffle_bytes"],
        "shuffle_bytes_per_state": doc["shuffle_bytes"] / max(1, doc["distinct_states"]),
        "quota_use": min(uses) if uses else None,
        "throttled": _throttled([before[w] for w in workers], [after[w] for w in workers]),
        "oversubscribed": bool(uses) and min(uses) < 0.9,
        "levels": doc["levels"],
    }
    return row, counts(doc)


def level_fit(levels: list[dict[str, Any]], cold: bool = True) -> tuple[float | None, float | None]:
    """The intercept and slope of a Spark level's seconds against its states expanded, least
    squares over the Spark levels; `cold`: but the first (which, without a warm-up before the
    search, also starts the executors' Python workers and loads mc there: not a level's
    cost)."""
    spark = [lv for lv in levels if lv["where"] == "spark"][1 if cold else 0 :]
    if len(spark) < 3:
        return None, None
    slope, intercept = np.polyfit(
        [lv["expanded"] for lv in spark], [lv["seconds"] for lv in spark], 1
    )
    return float(intercept), float(slope)


def _series(row: dict[str, Any]) -> tuple[Any, ...]:
    """The runs comparable with each other: the same spec, constants, quota and settings."""
    return (row["spec"], tuple(row["constants"]), row["quota"], tuple(row.get("spark_conf", [])))


def _run_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (*_series(row), row["engine"], row["workers"])


def derive(rows: list[dict[str, Any]]) -> None:
    """Each row's speed-up (over the same engine's run with the fewest workers of its series)
    and, for Spark, its candidates per CPU second over the local engine's with as many."""
    for row in rows:
        same = [r for r in rows if _series(r) == _series(row) and r["engine"] == row["engine"]]
        first = min(same, key=lambda r: r["workers"])
        row["speedup"] = first["seconds"] / row["seconds"]
        local = next(
            (
                r
                for r in rows
                if _series(r)[:3] == _series(row)[:3]
                and r["engine"] == "local"
                and r["workers"] == row["workers"]
            ),
            None,
        )
        if row["engine"] == "spark" and local:
            row["per_cpu_vs_local"] = row["candidates_per_cpu_s"] / local["candidates_per_cpu_s"]


def _union(intervals: list[list[float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _throttled(before: list[CpuReading], after: list[CpuReading]) -> float:
    periods = sum(a.periods - b.periods for a, b in zip(after, before))
    return sum(a.throttled - b.throttled for a, b in zip(after, before)) / max(1, periods)


def _defines(args: argparse.Namespace) -> list[str]:
    return [a for d in args.defines for a in ("-D", d)]


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| " + " | ".join(header for _, header, _ in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in rows:
        cells = ["-" if row.get(key) is None else form.format(row[key]) for key, _, form in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="make bench-cluster")
    parser.add_argument("spec")
    parser.add_argument("-D", dest="defines", action="append", default=[])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--quota", type=float, default=0.35)
    parser.add_argument("--driver-quota", type=float, default=0.4)
    parser.add_argument("--spark-conf", action="append", default=[])
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--no-deadlock", action="store_true")
    parser.add_argument("--memory", default="1g")
    parser.add_argument("--rate", default=None)
    parser.add_argument("--engines", default="local,spark")
    parser.add_argument("--cold", action="store_true", help="no warm-up before the search")
    parser.add_argument(
        "--merge", action="store_true", help="keep --out's rows of other runs (e.g. WORKERS)"
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "cluster.json"))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        check_host([args.quota] * max(args.workers) + [args.driver_quota])
    except (ConfigError, EngineError) as exc:
        print(f"mc: error: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    engines = args.engines.split(",")
    rows: list[dict[str, Any]] = []
    reference: tuple | None = None
    with tempfile.TemporaryDirectory(prefix="mc-bench-cluster-") as scratch:
        try:
            for k in sorted(args.workers):
                for engine in engines:
                    run = local_row if engine == "local" else spark_row
                    row, found = run(args, k, Path(scratch))
                    row["spec"], row["constants"] = args.spec, args.defines
                    row["spark_conf"] = args.spark_conf
                    if args.timeout is None:  # a complete search: the same as every other
                        reference = reference or found
                        if found != reference:
                            raise SystemExit(
                                f"bench-cluster: {engine} with {k} workers found {found[:4]},"
                                f" not {reference[:4]} (or another counterexample)"
                            )
                    rows.append(row)
                    print(f"{engine} {k}: {row['seconds']:.1f} s", file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            print("bench-cluster: interrupted", file=sys.stderr)
            raise SystemExit(130) from None
        except EngineError as exc:
            print(f"mc: error: {exc}", file=sys.stderr)
            raise SystemExit(exc.exit_code) from None
    out = Path(args.out)
    if args.merge and out.exists():  # this run's rows replace those of the same runs there
        mine = {_run_key(r) for r in rows}
        rows = [r for r in json.loads(out.read_text()) if _run_key(r) not in mine] + rows
        rows.sort(key=lambda r: (_series(r), r["workers"], r["engine"]))
    derive(rows)
    print(table(rows))
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
