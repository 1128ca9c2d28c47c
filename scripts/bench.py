"""`make bench`: run the bundled specs, one process each, and print tables.

1. Every spec with the local engine, `--workers 1` and `--workers 2`: verdict, distinct states,
   states generated, depth, wall seconds, distinct states per second, peak RSS (the engine
   process plus its largest worker), and bytes per distinct state: of the fingerprint set, of
   the parent links, and of the whole process's growth (peak RSS minus RSS after loading).
2. TwoPhase against minicheck 0.4.0 (the fastest Python peer, installed into
   build/bench-venv, not a project dependency) on the same model: the speed ratio measured in
   this run. TLC is not installed on this machine kind; its figure is quoted from issue 7.
3. The local engine against the Spark engine (local[2]) on TwoPhase of growing size.

Tables are written to build/bench.md. Figures are from this run on this machine: compare
ratios, not absolutes. `--quick` skips TwoPhase RM=8 (~1.7M states), `--no-spark` the third
table, `--large` adds RM=8 to the third.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER_VENV = ROOT / "build" / "bench-venv"
PEER = "minicheck==0.4.0"
TLC_RM8_SECONDS = 30.0  # TLC 2 workers, TwoPhase RM=8, this machine kind (issue 7); not run here

# (spec file, constants); every run is made with 1 and 2 workers
RUNS: list[tuple[str, dict[str, str]]] = [
    ("specs/examples/die_hard.py", {}),
    ("specs/examples/two_phase.py", {"rm": "6"}),
    ("specs/examples/two_phase.py", {"rm": "7"}),
    ("specs/examples/two_phase.py", {"rm": "8"}),
    ("specs/kip841.py", {}),
    ("specs/kip903.py", {}),
    ("specs/kip903.py", {"fixed": "false"}),
    ("specs/kip966.py", {}),
    ("specs/kip996.py", {}),
    ("specs/kip996_read.py", {}),
    ("specs/kip1023.py", {}),
]
LARGE = {"rm": "8"}

CHILD = """
import json, resource, sys, time
from checker.bfs import Options, check
from checker.loader import load_model
spec, constants, workers = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
model = load_model(spec, constants)
loaded_kib = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() // 1024
start = time.perf_counter()
result = check(model, Options(workers=workers))
seconds = time.perf_counter() - start
print(json.dumps({
    "verdict": result.verdict, "distinct": result.distinct_states,
    "generated": result.states_generated, "depth": result.depth, "seconds": seconds,
    "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "loaded_kib": loaded_kib,
    "visited_bytes": result.visited_bytes, "link_bytes": result.link_bytes,
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


def consts_text(constants: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in constants.items()) or "defaults"


def engine_table(runs: list[tuple[str, dict[str, str]]]) -> tuple[list[str], dict]:
    """Table 1; also returns the TwoPhase seconds by (rm, workers) for table 2."""
    header = (
        "| spec | constants | workers | verdict | distinct | generated | depth | s "
        "| distinct/s | peak RSS MiB | visited B/state | links B/state | RSS growth B/state |"
    )
    lines = [header, "|" + "---|" * 13]
    two_phase: dict[tuple[str, int], dict] = {}
    for spec, constants in runs:
        counts = None
        for workers in (1, 2):
            r = measure(spec, constants, CHILD, str(workers))
            seen = (r["verdict"], r["distinct"], r["generated"], r["depth"])
            if counts is not None and seen != counts:
                raise SystemExit(f"{spec} {constants}: workers 2 gave {seen}, workers 1 {counts}")
            counts = seen
            n = max(r["distinct"], 1)
            peak = r["rss_kib"] + r["children_rss_kib"]
            growth = (r["rss_kib"] - r["loaded_kib"]) * 1024 / n
            lines.append(
                f"| {spec} | {consts_text(constants)} | {workers} | {r['verdict']} "
                f"| {r['distinct']:,} | {r['generated']:,} | {r['depth']} | {r['seconds']:.2f} "
                f"| {r['distinct'] / r['seconds']:,.0f} | {peak / 1024:.0f} "
                f"| {r['visited_bytes'] / n:.1f} | {r['link_bytes'] / n:.1f} | {growth:,.0f} |"
            )
            print(lines[-1], flush=True)
            if spec.endswith("two_phase.py"):
                two_phase[(constants["rm"], workers)] = r
    return lines, two_phase


def peer_python() -> Path:
    """The benchmark's own environment with minicheck (made on first use)."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        venv.create(PEER_VENV, with_pip=True)
    if subprocess.run([python, "-c", "import minicheck"], capture_output=True).returncode:
        subprocess.run([python, "-m", "pip", "install", "--quiet", PEER], check=True)
    return python


def peer_table(two_phase: dict) -> list[str]:
    """Table 2: the same TwoPhase model in minicheck, ratios measured in this run."""
    python = peer_python()
    header = (
        "| TwoPhase RM | distinct | minicheck s | minicheck peak RSS MiB | mc w1 s | mc w2 s "
        "| mc w1 speed / minicheck | mc w2 speed / minicheck | mc w2 peak RSS MiB |"
    )
    lines = [header, "|" + "---|" * 9]
    for rm in sorted({rm for rm, _ in two_phase}, key=int):
        out = subprocess.run(
            [python, str(ROOT / "scripts" / "minicheck_two_phase.py"), rm],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        peer = json.loads(out)
        one, two = two_phase[(rm, 1)], two_phase[(rm, 2)]
        if peer["distinct"] != one["distinct"]:
            raise SystemExit(f"RM={rm}: minicheck {peer['distinct']} states, mc {one['distinct']}")
        lines.append(
            f"| {rm} | {one['distinct']:,} | {peer['seconds']:.2f} | {peer['rss_kib'] / 1024:.0f} "
            f"| {one['seconds']:.2f} | {two['seconds']:.2f} "
            f"| {peer['seconds'] / one['seconds']:.2f} | {peer['seconds'] / two['seconds']:.2f} "
            f"| {(two['rss_kib'] + two['children_rss_kib']) / 1024:.0f} |"
        )
        print(lines[-1], flush=True)
        if rm == LARGE["rm"]:
            ratio = TLC_RM8_SECONDS / two["seconds"]
            lines.append(
                f"\nTLC (2 workers, RM=8; quoted from issue 7, not run here):"
                f" ~{TLC_RM8_SECONDS:.0f} s; mc w2 speed / TLC: {ratio:.2f}."
            )
    return lines


def spark_table(runs: list[tuple[str, dict[str, str]]]) -> list[str]:
    """Local vs Spark on the same specs; counts must agree (the run fails otherwise)."""
    header = (
        "| spec | constants | distinct | generated | depth | local s | local distinct/s "
        f"| spark ({SPARK_MASTER}) s | spark distinct/s | spark/local | small level s "
        "| (spark-local)/level s | spark start s |"
    )
    lines = [header, "|" + "---|" * 13]
    for spec, constants in runs:
        local = measure(spec, constants, CHILD, "1")
        spark = measure(spec, constants, CHILD_SPARK, SPARK_MASTER)
        for key in ("verdict", "distinct", "generated", "depth"):
            if local[key] != spark[key]:
                raise SystemExit(f"{spec} {constants}: {key} {local[key]} != {spark[key]}")
        small = [s for expanded, _, s in spark["levels"] if expanded < 500]
        fixed = f"{statistics.median(small):.2f}" if small else "-"
        extra = (spark["seconds"] - local["seconds"]) / max(local["depth"], 1)
        lines.append(
            f"| {spec} | {consts_text(constants)} | {local['distinct']:,} | {local['generated']:,} "
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
    parser.add_argument("--large", action="store_true", help="add RM=8 to local vs Spark")
    parser.add_argument("--quick", action="store_true", help="skip TwoPhase RM=8 (~1.7M)")
    parser.add_argument("--spark-only", action="store_true", help="only local vs Spark")
    args = parser.parse_args()
    lines: list[str] = []
    if not args.spark_only:
        runs = [r for r in RUNS if not (args.quick and r[1] == LARGE)]
        engine, two_phase = engine_table(runs)
        print(flush=True)
        lines += [*engine, "", *peer_table(two_phase)]
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
