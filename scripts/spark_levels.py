"""Per-level costs of the Spark engine on a given master, for docs/scaling.md:

    .venv/bin/python scripts/spark_levels.py SPEC.py [-D NAME=VALUE]... --master URL \
        [--spark-conf KEY=VALUE]... [--local] [--jobs] [--timeout SECONDS] [--no-deadlock]

Prints the session start, each level (where it ran: driver or Spark; states expanded, new
states, candidates, seconds, and the CPU seconds of every process of this checkout's Python
and JVMs: driver, executors and their Python workers), the total, the Spark levels'
candidates per CPU second and per core-second of wall time, and from Spark's REST API (the
driver's UI, on 127.0.0.1) the shuffle written and the executors' storage memory at the end.
`--local` also times the local engine on the same model. `--jobs` also lists, per Spark
level, the Spark jobs that ran during it: their stages and tasks, and where the level's time
went. `--timeout` stops the search after that many seconds, as `mc check --timeout` does.

CPU seconds are read from /proc (Linux): utime + stime, and those of reaped children, of the
processes whose command line names this checkout, so that other checkouts' jobs on a shared
machine are not counted. The machine's cores are shared: wall time is noisy, CPU time less.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker import spark as se  # noqa: E402
from checker.deadline import Deadline  # noqa: E402
from checker.loader import load_model  # noqa: E402
from checker.local import bfs  # noqa: E402
from checker.search.options import Options  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(marker: str = str(ROOT)) -> float:
    """The CPU seconds so far of the processes whose command line contains `marker`, with
    those of their children that ended (a Python worker forked by pyspark.daemon)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                if marker.encode() not in file.read():
                    continue
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / TICKS


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

    last_cpu = [cpu_seconds()]

    def on_level(stats: se.LevelStats) -> None:
        levels.append(stats)
        now = cpu_seconds()
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
    last_cpu[0] = cpu_seconds()
    with Deadline(model, args.timeout):
        result = se.check(model, options, spark=spark, settings=settings, on_level=on_level)
    total = time.perf_counter() - started
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
    cores = int(spark.sparkContext.defaultParallelism)
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
    from datetime import datetime, timezone

    parsed = datetime.strptime(stamp.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")
    return parsed.replace(tzinfo=timezone.utc).timestamp()


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
    if small:
        seconds = sorted(s for s, _, _ in small)
        jobs = sorted({j for _, j, _ in small})
        outside = statistics.median(s - inside for s, _, inside in small)
        print(
            f"levels under 500 states on Spark: {len(small)}, {seconds[0]:.2f} to"
            f" {seconds[-1]:.2f} s, median {statistics.median(seconds):.2f} s; jobs per level"
            f" {', '.join(map(str, jobs))}; median outside jobs {outside:.2f} s"
        )


if __name__ == "__main__":
    main()
