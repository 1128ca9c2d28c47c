"""`make bench`: run the bundled specs, one process each, and print a table.

Columns: spec and constants, verdict, distinct states, states generated, depth, wall seconds,
distinct states per second, peak RSS of the checking process. The table is also written to
build/bench.md. Figures are from this run on this machine: compare ratios, not absolutes.

A second table compares the local engine with the Spark engine (local[2]) on a spec of
increasing size (two-phase commit, 10^4 .. 3*10^5 states; `--large` adds ~1.7*10^6): wall
seconds, distinct states per second, the ratio spark/local, the median time of the Spark
levels that expand fewer than 500 states (the fixed cost of a level), the extra time per
level, (spark - local) / depth, and the session's start-up. `--no-spark` skips it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (spec file, constants)
RUNS: list[tuple[str, dict[str, str]]] = [
    ("specs/examples/die_hard.py", {}),
    ("specs/examples/two_phase.py", {"rm": "5"}),
    ("specs/examples/two_phase.py", {"rm": "6"}),
    ("specs/kip841.py", {}),
    ("specs/kip903.py", {}),
    ("specs/kip903.py", {"fixed": "false"}),
    ("specs/kip966.py", {}),
    ("specs/kip996.py", {}),
    ("specs/kip996_read.py", {}),
    ("specs/kip1023.py", {}),
]

CHILD = """
import json, resource, sys, time
from checker.bfs import check
from checker.loader import load_model
spec, constants = sys.argv[1], json.loads(sys.argv[2])
model = load_model(spec, constants)
start = time.perf_counter()
result = check(model)
seconds = time.perf_counter() - start
print(json.dumps({
    "verdict": result.verdict, "distinct": result.distinct_states,
    "generated": result.states_generated, "depth": result.depth, "seconds": seconds,
    "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


# Local vs Spark: (spec file, constants), smallest first.
SPARK_RUNS: list[tuple[str, dict[str, str]]] = [
    ("specs/examples/two_phase.py", {"rm": "5"}),
    ("specs/examples/two_phase.py", {"rm": "6"}),
    ("specs/examples/two_phase.py", {"rm": "7"}),
]
SPARK_LARGE: list[tuple[str, dict[str, str]]] = [("specs/examples/two_phase.py", {"rm": "8"})]
SPARK_MASTER = "local[2]"

CHILD_SPARK = """
import json, sys, time
started = time.perf_counter()
from checker import spark_engine
from checker.loader import load_model
spec, constants, master = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
spark = spark_engine.session(master=master, conf={"spark.ui.enabled": "false"})
startup = time.perf_counter() - started
model = load_model(spec, constants)
levels = []
start = time.perf_counter()
result = spark_engine.check(
    model, spark=spark, on_level=lambda s: levels.append([s.expanded, s.new, s.seconds])
)
seconds = time.perf_counter() - start
spark.stop()
print(json.dumps({
    "verdict": result.verdict, "distinct": result.distinct_states,
    "generated": result.states_generated, "depth": result.depth, "seconds": seconds,
    "startup": startup, "levels": levels,
}))
"""


def measure(spec: str, constants: dict[str, str], child: str = CHILD, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", child, spec, json.dumps(constants), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def spark_table(runs: list[tuple[str, dict[str, str]]]) -> list[str]:
    """Local vs Spark on the same specs; counts must agree (the run fails otherwise)."""
    header = (
        "| spec | constants | distinct | generated | depth | local s | local distinct/s "
        f"| spark ({SPARK_MASTER}) s | spark distinct/s | spark/local | small level s "
        "| (spark-local)/level s | spark start s |"
    )
    lines = [header, "|" + "---|" * 13]
    for spec, constants in runs:
        local = measure(spec, constants)
        spark = measure(spec, constants, CHILD_SPARK, SPARK_MASTER)
        for key in ("verdict", "distinct", "generated", "depth"):
            if local[key] != spark[key]:
                raise SystemExit(f"{spec} {constants}: {key} {local[key]} != {spark[key]}")
        small = [s for expanded, _, s in spark["levels"] if expanded < 500]
        fixed = f"{statistics.median(small):.2f}" if small else "-"
        extra = (spark["seconds"] - local["seconds"]) / max(local["depth"], 1)
        consts = " ".join(f"{k}={v}" for k, v in constants.items()) or "defaults"
        lines.append(
            f"| {spec} | {consts} | {local['distinct']:,} | {local['generated']:,} "
            f"| {local['depth']} | {local['seconds']:.2f} "
            f"| {local['distinct'] / local['seconds']:,.0f} | {spark['seconds']:.2f} "
            f"| {spark['distinct'] / spark['seconds']:,.0f} "
            f"| {spark['seconds'] / local['seconds']:.1f} | {fixed} | {extra:.2f} "
            f"| {spark['startup']:.1f} |"
        )
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-spark", action="store_true", help="skip local vs Spark")
    parser.add_argument("--large", action="store_true", help="add the ~1.7M-state run")
    parser.add_argument("--spark-only", action="store_true", help="only local vs Spark")
    args = parser.parse_args()
    header = (
        "| spec | constants | verdict | distinct | generated | depth | seconds "
        "| distinct/s | peak RSS MiB |"
    )
    lines = [header, "|" + "---|" * 9]
    for spec, constants in [] if args.spark_only else RUNS:
        r = measure(spec, constants)
        consts = " ".join(f"{k}={v}" for k, v in constants.items()) or "defaults"
        rate = r["distinct"] / r["seconds"] if r["seconds"] else 0.0
        lines.append(
            f"| {spec} | {consts} | {r['verdict']} | {r['distinct']:,} | {r['generated']:,} "
            f"| {r['depth']} | {r['seconds']:.2f} | {rate:,.0f} | {r['rss_kib'] / 1024:.0f} |"
        )
        print(lines[-1], flush=True)
    if not args.no_spark:
        print(flush=True)
        lines += ["", *spark_table(SPARK_RUNS + (SPARK_LARGE if args.large else []))]
    table = "\n".join(lines) + "\n"
    out = ROOT / "build" / "bench.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    print()
    print(table, end="")
    print(f"(written to {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
