"""The driver of one `make bench-cluster` run (scripts/bench_cluster.py starts it in the simulated
cluster's driver namespace and cgroup): waits for the executors, runs the Spark engine's search
and writes what the bench needs as JSON to --out:

    python scripts/cluster_driver.py SPEC.py [-D NAME=VALUE]... --master URL --executors N \
        [--spark-conf KEY=VALUE]... [--timeout SECONDS] [--no-deadlock] [--cold] --out FILE

Before the search, the executors rehearse a level of the model (checker.spark.warmup.warm_up:
their Python workers start and load mc and the model, their JVMs run a level's code paths
once), timed apart as `warmup_s`, as a session that serves several searches would have them;
--cold leaves that to the search (its own warm-up, overlapping the driver's first levels).

It writes the result's counts and trace's actions, the session start, the search's start and
end (epoch seconds), each level (depth, where it ran, states expanded, new, generated,
seconds, end), the shuffle written (from Spark's REST API, which the driver serves in its own
namespace) and, per executor address, the intervals in which its tasks ran; each level also
has the Spark jobs submitted while it ran, their stages and tasks (skipped ones not counted).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker import spark as se  # noqa: E402
from checker.deadline import Deadline  # noqa: E402
from checker.loader import load_model  # noqa: E402
from checker.search.options import Options  # noqa: E402


def rest(base: str, path: str) -> list[dict]:
    with urllib.request.urlopen(f"{base}/api/v1{path}", timeout=60) as answer:
        return json.load(answer)


def _epoch(stamp: str) -> float:
    """A REST API time ("2026-11-25T14:27:14.123GMT") in seconds since the epoch."""
    parsed = datetime.strptime(stamp.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")
    return parsed.replace(tzinfo=UTC).timestamp()


def phases(start: float, end: float, jobs: list[dict], stages: dict[int, dict]) -> dict:
    """Where a level's seconds went, from Spark's own times: the driver before its first job
    and after its last, and per stage that ran (in submission order) its wall time, the wait
    for its first task, and its tasks' summed deserialization, run, GC, shuffle write and
    shuffle fetch wait (seconds)."""
    ran = [
        stages[i]
        for j in jobs
        for i in j["stageIds"]
        if i in stages and stages[i].get("status") == "COMPLETE"
    ]
    ran.sort(key=lambda s: _epoch(s["submissionTime"]))
    done = [j for j in jobs if "completionTime" in j]
    first = min((_epoch(j["submissionTime"]) for j in jobs), default=end)
    last = max((_epoch(j["completionTime"]) for j in done), default=first)
    return {
        "before_job_s": first - start,
        "jobs_s": last - first,
        "after_job_s": end - last,
        "stages": [
            {
                "name": s["name"].split(" at ")[0],
                "tasks": s["numTasks"],
                "wall_s": _epoch(s["completionTime"]) - _epoch(s["submissionTime"]),
                "first_task_wait_s": _epoch(s.get("firstTaskLaunchedTime", s["submissionTime"]))
                - _epoch(s["submissionTime"]),
                "deserialize_s": s.get("executorDeserializeTime", 0) / 1e3,
                "run_s": s.get("executorRunTime", 0) / 1e3,
                "cpu_s": s.get("executorCpuTime", 0) / 1e9,
                "gc_s": s.get("jvmGcTime", 0) / 1e3,
                "shuffle_write_s": s.get("shuffleWriteTime", 0) / 1e9,
                "fetch_wait_s": s.get("shuffleFetchWaitTime", 0) / 1e3,
            }
            for s in ran
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("spec")
    parser.add_argument("-D", dest="defines", action="append", default=[])
    parser.add_argument("--master", required=True)
    parser.add_argument("--executors", type=int, required=True)
    parser.add_argument("--spark-conf", action="append", default=[])
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--no-deadlock", action="store_true")
    parser.add_argument("--cold", action="store_true", help="no warm-up before the search")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    conf = dict(c.split("=", 1) for c in args.spark_conf)
    conf["spark.ui.enabled"] = "true"
    conf.setdefault("spark.sql.shuffle.partitions", str(args.executors))  # one per core
    model = load_model(args.spec, dict(d.split("=", 1) for d in args.defines))
    settings = se.mc_settings(conf)
    started = time.perf_counter()
    spark = se.session(master=args.master, conf=conf)
    base, app = spark.sparkContext.uiWebUrl, spark.sparkContext.applicationId
    while len([e for e in rest(base, f"/applications/{app}/executors") if e["id"] != "driver"]) < (
        args.executors
    ):
        time.sleep(0.5)
    spark.range(1).collect()
    session_s = time.perf_counter() - started
    warmup_s = None
    if not args.cold:
        started = time.perf_counter()
        se.warm_up(spark, model, settings)
        warmup_s = time.perf_counter() - started
    levels: list[dict] = []

    def on_level(stats: se.LevelStats) -> None:
        levels.append(
            {
                "depth": stats.depth,
                "where": stats.where,
                "expanded": stats.expanded,
                "new": stats.new,
                "generated": stats.generated,
                "seconds": stats.seconds,
                "end": time.time(),
            }
        )

    begin = time.time()
    with Deadline(model, args.timeout):
        result = se.check(
            model, Options(deadlock=not args.no_deadlock), spark=spark, settings=settings,
            on_level=on_level,
        )  # fmt: skip
    end = time.time()
    stages = rest(base, f"/applications/{app}/stages")
    jobs = rest(base, f"/applications/{app}/jobs")
    by_id = {s["stageId"]: s for s in stages}
    for level in levels:  # the jobs submitted during the level, and their stages that ran
        start = level["end"] - level["seconds"]
        mine = [j for j in jobs if start <= _epoch(j["submissionTime"]) <= level["end"]]
        level["jobs"] = len(mine)
        level["stages"] = sum(len(j["stageIds"]) - j.get("numSkippedStages", 0) for j in mine)
        level["tasks"] = sum(j["numTasks"] - j.get("numSkippedTasks", 0) for j in mine)
        level["phases"] = phases(start, level["end"], mine, by_id)
    hosts = {  # executor id -> its address (10.99.0.x: which worker)
        e["id"]: e["hostPort"].rsplit(":", 1)[0]
        for e in rest(base, f"/applications/{app}/allexecutors")
        if e["id"] != "driver"
    }
    tasks: dict[str, list[tuple[float, float]]] = {}
    for stage in stages:
        listed = rest(
            base,
            f"/applications/{app}/stages/{stage['stageId']}/{stage['attemptId']}/taskList"
            "?length=100000",
        )
        for task in listed:
            if "duration" in task and "launchTime" in task:
                start = _epoch(task["launchTime"])
                host = hosts.get(task["executorId"], task.get("host", "?"))
                tasks.setdefault(host, []).append((start, start + task["duration"] / 1000))
    doc = {
        "verdict": str(result.verdict),
        "distinct_states": result.distinct_states,
        "states_generated": result.states_generated,
        "depth": result.depth,
        "actions": [step.action for step in result.trace],
        "session_s": session_s,
        "warmup_s": warmup_s,
        "begin": begin,
        "end": end,
        "levels": levels,
        "shuffle_bytes": sum(s.get("shuffleWriteBytes", 0) for s in stages),
        "shuffle_records": sum(s.get("shuffleWriteRecords", 0) for s in stages),
        "tasks": tasks,
    }
    Path(args.out).write_text(json.dumps(doc))
    spark.stop()


if __name__ == "__main__":
    main()
