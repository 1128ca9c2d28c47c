"""`make bench`: run the bundled specs, one process each, and print a table.

Columns: spec and constants, verdict, distinct states, states generated, depth, wall seconds,
distinct states per second, peak RSS of the checking process. The table is also written to
build/bench.md. Figures are from this run on this machine: compare ratios, not absolutes.
"""

from __future__ import annotations

import json
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


def measure(spec: str, constants: dict[str, str]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, spec, json.dumps(constants)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def main() -> None:
    header = (
        "| spec | constants | verdict | distinct | generated | depth | seconds "
        "| distinct/s | peak RSS MiB |"
    )
    lines = [header, "|" + "---|" * 9]
    for spec, constants in RUNS:
        r = measure(spec, constants)
        consts = " ".join(f"{k}={v}" for k, v in constants.items()) or "defaults"
        rate = r["distinct"] / r["seconds"] if r["seconds"] else 0.0
        lines.append(
            f"| {spec} | {consts} | {r['verdict']} | {r['distinct']:,} | {r['generated']:,} "
            f"| {r['depth']} | {r['seconds']:.2f} | {rate:,.0f} | {r['rss_kib'] / 1024:.0f} |"
        )
        print(lines[-1], flush=True)
    table = "\n".join(lines) + "\n"
    out = ROOT / "build" / "bench.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    print()
    print(table, end="")
    print(f"(written to {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
