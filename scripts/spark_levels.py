"""Per-level costs of the Spark engine on a given master, for docs/scaling.md:

    .venv/bin/python scripts/spark_levels.py SPEC.py [-D NAME=VALUE]... --master URL \
        [--spark-conf KEY=VALUE]... [--local] [--jobs] [--timeout SECONDS] [--no-deadlock] \
        [--cpu-root PID]...

Prints the session start, each level (where it ran: driver or Spark; states expanded, new
states, candidates, seconds, and the CPU seconds of the driver, the executors and their
Python workers: see below), the total, the Spark levels'
candidates per CPU second and per core-second of wall time, and from Spark's REST API (the
driver's UI, on 127.0.0.1) the shuffle written and the executors' storage memory at the end.
`--local` also times the local engine on the same model. `--jobs` also lists, per Spark
level, the Spark jobs that ran during it: their stages and tasks, and where the level's time
went. `--timeout` stops the search after that many seconds, as `mc check --timeout` does.

CPU seconds are read from /proc (Linux): utime + stime, and those of reaped children, of this
process and its descendants (the driver's JVM; in local mode the executors too) and of those
of each `--cpu-root PID` (a standalone cluster's launcher: its master, workers, executors and
their Python workers), so that other jobs on a shared machine are not counted: on shared
cores wall time is noisy, CPU time less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker import spark as se  # noqa: E402
from checker.deadline import Deadline  # noqa: E402
from checker.loader import load_model  # noqa: E402
from checker.local import bfs  # noqa: E402
from checker.search.options import Options  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


ROLES = (  # a process's role, by what its command line holds (first match)
    ("executor JVM", b"CoarseGrainedExecutorBackend"),
    ("Python workers", b"pyspark.daemon"),
    ("driver JVM", b"SparkSubmit"),
    ("master and workers (JVM)", b"org.apache.spark.deploy"),
)


def cpu_by_role(roots: list[int]) -> dict[str, float]:
    """The CPU seconds so far of the processes descending from `roots` (a process counts
    itself), with those of their children that ended (a Python worker forked by
    pyspark.daemon), per role (ROLES; the rest: "driver Python")."""
    stats: dict[int, list[bytes]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as file:
                    stats[int(entry)] = file.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    totals: dict[str, float] = {}
    todo, done = list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in done or pid not in stats:
            continue
        done.add(pid)
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                command = file.read()
        except OSError:
            command = b""
        role = next((name for name, mark in ROLES if mark in command), "driver Python")
        ticks = sum(int(f) for f in stats[pid][11:15])  # utime, stime, cutime, cstime
        totals[role] = totals.get(role, 0.0) + ticks / TICKS
        todo += children.get(pid, [])
    return totals


def cpu_seconds(roots: list[int]) -> float:
    return sum(cpu_by_role(roots).values())


def rest(base: str, path: str) -> object:
    with urllib.request.urlopen(f"{base}/api/v1{path}", timeout=30) as answer:
        return json.load(answer)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("spec")
    parser.add_argument("-D", dest="defines", action="append", default=[])
    parser.add_argument("--master", required=True)
    parser.add_argument("--spark-conf", action="append", default=[])
    parser.add_argument("--local", action="store_true")
    parser.add_argument("--jobs", action="store_true")
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--no-deadlock", action="store_true")
    parser.add_argument("--cpu-root", type=int, action="append", default=[])
    args = parser.parse_args()
    constants = dict(d.split("=", 1) for d in args.defines)
    conf = dict(c.split("=", 1) for c in args.spark_conf)
    conf.setdefault("spark.ui.enabled", "true")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    model = load_model(args.spec, constants)
    if args.local:
        started = time.perf_counter()
        local = bfs.check(model)
        print(
            f"local engine: {local.distinct_states:,} states in "
            f"{time.perf_counter() - started:.2f} s"
        )
    settings = se.mc_settings(conf)
    started = time.perf_counter()
    spark = se.session(master=args.master, conf=conf)
    spark.range(1).collect()  # the executors are up
    start = time.perf_counter() - started
    print(f"session start: {start:.1f} s (master {args.master})")
    levels: list[se.LevelStats] = []
    cpu: list[float] = []  # per level: the CPU seconds since the previous level ended
    memory: dict[str, tuple[int, int]] = {}  # executor -> (peak storage memory, at distinct)
    base = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId

    windows: list[tuple[float, float]] = []  # per level: its start and end (epoch seconds)

    roots = [os.getpid(), *args.cpu_root]
    last_cpu = [cpu_seconds(roots)]

    def on_level(stats: se.LevelStats) -> None:
        levels.append(stats)
        now = cpu_seconds(roots)
        cpu.append(now - last_cpu[0])
        last_cpu[0] = now
        windows.append((time.time() - stats.seconds, time.time()))
        if stats.where != "spark" or not base:
            return
        try:
            for e in rest(base, f"/applications/{app}/executors"):  # type: ignore[union-attr]
                if e["memoryUsed"] >= memory.get(e["id"], (0, 0))[0]:
                    memory[e["id"]] = (e["memoryUsed"], stats.distinct)
        except Exception:
            pass

    options = Options(deadlock=not args.no_deadlock)
    started = time.perf_counter()
    last_cpu[0] = cpu_seconds(roots)
    roles_before = cpu_by_role(roots)
    with Deadline(model, args.timeout):
        result = se.check(model, options, spark=spark, settings=settings, on_level=on_level)
    total = time.perf_counter() - started
    roles_after = cpu_by_role(roots)
    print(
        f"verdict {result.verdict}: {result.distinct_states:,} distinct states,"
        f" {result.states_generated:,} generated, depth {result.depth}, {total:.2f} s"
    )
    print("| depth | where | expanded | new | candidates | seconds | CPU s |")
    print("|---|---|---|---|---|---|---|")
    before = [0, *[s.generated for s in levels[:-1]]]
    generated = [s.generated - b for s, b in zip(levels, before)]  # per level (the first: + init)
    for s, made, used in zip(levels, generated, cpu):
        print(
            f"| {s.depth} | {s.where} | {s.expanded:,} | {s.new:,} | {made:,} | {s.seconds:.2f}"
            f" | {used:.2f} |"
        )
    cores = int(spark.sparkContext.defaultParallelism)  # at least 2: the executors' if known
    try:
        executors: Any = rest(base, f"/applications/{app}/executors")
        cores = sum(e["totalCores"] for e in executors if e["id"] != "driver") or cores
    except Exception:
        pass
    for where in ("driver", "spark"):
        mine = [i for i, s in enumerate(levels) if s.where == where]
        if mine:
            seconds = sum(levels[i].seconds for i in mine)
            used = sum(cpu[i] for i in mine)
            made = sum(generated[i] for i in mine)
            print(
                f"{where}: {len(mine)} levels, {seconds:.2f} s, {used:.2f} CPU s,"
                f" {sum(levels[i].new for i in mine):,} new, {made:,} candidates"
            )
            if where == "spark" and seconds:
                print(
                    f"spark levels: {made / max(used, 1e-9):,.0f} candidates per CPU second,"
                    f" {made / seconds / cores:,.0f} per core-second of wall time ({cores} cores)"
                )
    print(
        "CPU s of the search by process: "
        + ", ".join(
            f"{role} {roles_after[role] - roles_before.get(role, 0.0):.1f}"
            for role in sorted(roles_after)
        )
    )
    for executor, (used, distinct) in sorted(memory.items()):
        print(
            f"executor {executor}: peak storage memory {used:,} bytes with {distinct:,}"
            f" states visited ({used / max(1, distinct):.1f} bytes per visited state)"
        )
    try:
        stages = rest(base, f"/applications/{app}/stages")
        written = sum(st.get("shuffleWriteBytes", 0) for st in stages)  # type: ignore[union-attr]
        records = sum(st.get("shuffleWriteRecords", 0) for st in stages)  # type: ignore[union-attr]
        print(
            f"shuffle written: {written:,} bytes, {records:,} records"
            f" ({written / max(1, result.states_generated):.1f} bytes per candidate)"
        )
    except Exception as exc:  # the UI is off, or answers nothing
        print(f"(no REST figures: {exc})")
    if args.jobs and base:
        print_jobs(base, app, levels, windows)
    spark.stop()


def _epoch(stamp: str) -> float:
    """A REST API time ("2026-11-25T14:27:14.123GMT") in seconds since the epoch."""
    from datetime import UTC, datetime

    parsed = datetime.strptime(stamp.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")
    return parsed.replace(tzinfo=UTC).timestamp()


def print_jobs(
    base: str, app: str, levels: list[se.LevelStats], windows: list[tuple[float, float]]
) -> None:
    """Per Spark level: each job that started during it (its stages, tasks, seconds and
    call site), and the level's seconds outside jobs (the driver's own work and waits)."""
    jobs = rest(base, f"/applications/{app}/jobs")
    stages = {(s["stageId"], s["attemptId"]): s for s in rest(base, f"/applications/{app}/stages")}
    print("| depth | new | seconds | jobs | stages | tasks | in jobs s | jobs (s: name) |")
    print("|---|---|---|---|---|---|---|---|")
    small: list[tuple[float, int, float]] = []  # levels under 500 states: seconds, jobs, in jobs
    small_stages: list[list[tuple[float, float, int]]] = []  # their stages: span, run, tasks
    for stats, (begin, end) in zip(levels, windows):
        if stats.where != "spark":
            continue
        mine = [
            j for j in jobs if "completionTime" in j and begin <= _epoch(j["submissionTime"]) <= end
        ]
        mine.sort(key=lambda j: j["jobId"])
        ran = [
            stages[(i, 0)]
            for j in mine
            for i in j["stageIds"]
            if (i, 0) in stages and stages[(i, 0)]["status"] == "COMPLETE"
        ]
        tasks = sum(s["numTasks"] for s in ran)
        spans = [_epoch(j["completionTime"]) - _epoch(j["submissionTime"]) for j in mine]
        names = "; ".join(
            f"{span:.2f}: {j['name'].split(' at ')[0]}" for j, span in zip(mine, spans)
        )
        print(
            f"| {stats.depth} | {stats.new:,} | {stats.seconds:.2f} | {len(mine)} | {len(ran)}"
            f" | {tasks} | {sum(spans):.2f} | {names} |"
        )
        if stats.expanded < 500:
            small.append((stats.seconds, len(mine), sum(spans)))
            small_stages.append(
                [
                    (
                        _epoch(st["completionTime"]) - _epoch(st["submissionTime"]),
                        st["executorRunTime"] / 1000,
                        st["numTasks"],
                    )
                    for st in sorted(ran, key=lambda st: st["stageId"])
                    if "submissionTime" in st and "completionTime" in st
                ]
            )
    if small:
        seconds = sorted(s for s, _, _ in small)
        jobs = sorted({j for _, j, _ in small})
        outside = statistics.median(s - inside for s, _, inside in small)
        print(
            f"levels under 500 states on Spark: {len(small)}, {seconds[0]:.2f} to"
            f" {seconds[-1]:.2f} s, median {statistics.median(seconds):.2f} s; jobs per level"
            f" {', '.join(map(str, jobs))}; median outside jobs {outside:.2f} s"
        )
        shapes = {len(stages) for stages in small_stages}
        if len(shapes) == 1:  # the same stages in each: their medians, in order
            n = shapes.pop()
            medians = [
                (
                    statistics.median(stages[i][0] for stages in small_stages),
                    statistics.median(stages[i][1] for stages in small_stages),
                    small_stages[0][i][2],
                )
                for i in range(n)
            ]
            print(
                "their stages (median s from submission to completion, tasks' run time s,"
                " tasks): " + "; ".join(f"{a:.2f}, {b:.2f}, {t}" for a, b, t in medians)
            )


if __name__ == "__main__":
    main()
