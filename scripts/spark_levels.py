"""Per-level costs of the Spark engine on a given master, for docs/scaling.md:

    .venv/bin/python scripts/spark_levels.py SPEC.py [-D NAME=VALUE]... --master URL \
        [--spark-conf KEY=VALUE]... [--local]

Prints the session start, each level (where it ran: driver or Spark; states expanded, new
states, seconds), the total, and from Spark's REST API (the driver's UI, on 127.0.0.1) the
shuffle written per stage and the executors' storage memory at the end. `--local` also times
the local engine on the same model. `--jobs` also lists, per Spark level, the Spark jobs that
ran during it: their stages and tasks, and where the level's time went.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker import spark as se  # noqa: E402
from checker.loader import load_model  # noqa: E402
from checker.local import bfs  # noqa: E402


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
    memory: dict[str, tuple[int, int]] = {}  # executor -> (peak storage memory, at distinct)
    base = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId

    windows: list[tuple[float, float]] = []  # per level: its start and end (epoch seconds)

    def on_level(stats: se.LevelStats) -> None:
        levels.append(stats)
        windows.append((time.time() - stats.seconds, time.time()))
        if stats.where != "spark" or not base:
            return
        try:
            for e in rest(base, f"/applications/{app}/executors"):  # type: ignore[union-attr]
                if e["memoryUsed"] >= memory.get(e["id"], (0, 0))[0]:
                    memory[e["id"]] = (e["memoryUsed"], stats.distinct)
        except Exception:
            pass

    started = time.perf_counter()
    result = se.check(model, spark=spark, settings=settings, on_level=on_level)
    total = time.perf_counter() - started
    print(
        f"verdict {result.verdict}: {result.distinct_states:,} distinct states,"
        f" {result.states_generated:,} generated, depth {result.depth}, {total:.2f} s"
    )
    print("| depth | where | expanded | new | seconds |")
    print("|---|---|---|---|---|")
    for s in levels:
        print(f"| {s.depth} | {s.where} | {s.expanded:,} | {s.new:,} | {s.seconds:.2f} |")
    for where in ("driver", "spark"):
        mine = [s for s in levels if s.where == where]
        if mine:
            seconds = sum(s.seconds for s in mine)
            print(f"{where}: {len(mine)} levels, {seconds:.2f} s, {sum(s.new for s in mine):,} new")
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


if __name__ == "__main__":
    main()
