"""`make bench`: run the bundled specs, one process each, and print tables.

1. Every spec with the local engine, `--workers 1` and `--workers 2`: verdict, distinct states,
   states generated, depth, wall seconds, distinct states per second, peak RSS (the engine
   process plus its largest worker), bytes per distinct state of the fingerprint set and of
   the parent links. With `--baseline REV`, the same specs at that revision of mc (checked out
   into build/baseline, with its own C hot path if it has one, run with one worker) and the
   speed-up in distinct states per second, the fastest of each side's runs: a check shorter
   than 3 s is run again, up to 5 times (`fastest`).
2. TwoPhase against its peers on the same model, in this run: minicheck 0.4.0 (the fastest
   Python checker, installed into build/bench-venv, not a project dependency) and, with
   `--tlc JAR`, TLC (`-workers 2`, on TwoPhase.tla from `--tlc-model DIR`, by default the
   jar's folder). Times, peak RSS and the ratios the hot-path issue sets targets for.
3. With `--deep`: kip996_read with 5 voters, searched to its shortest stale read.
4. With `--liveness`: temporal properties checked on the behaviour graph the search records
   (seconds in all and for the liveness phase, bytes per state of the graph, peak RSS); with
   `--baseline REV`, the same check at that revision (which searched the graph again, as
   networkx objects) and the speed-up.
5. The local engine (`--workers 2`) against the Spark engine (`local[2]`, or a cluster's
   `--spark-master URL`) on TwoPhase of growing size, with candidates per core-second.
6. Symmetry over model values: TwoPhase with its resource managers as strings against the
   same model with ids (the target: within 1.2x).
7. Start-up: the wall time of `mc check` on a trivial spec (the target: 0.5 s).
8. With `--kafka SECONDS`: kip-966's shipped cfg (3 brokers, states of about 3 KB), TLC and mc
   with 2 workers each for the same time, one after the other: the distinct states each
   reached, mc with incremental evaluation on and off, and mc's peak RSS per 10^6 states.
9. With `--instructions` (valgrind): the instructions of `check()` alone on every spec of
   table 1 (but RM=8), one worker, counted by callgrind (its counts dumped before and after
   the call; Python's hash seed fixed); with `--baseline REV` the same at that revision, with
   its own C hot path, and the ratio. Table 1's speed-up column is wall time on a shared
   machine; this one is the same from run to run, and is what "every bundled spec at 1.5x"
   is judged by (20-25 minutes with the baseline, measured). It counts work, not waiting for
   memory: a change that trades instructions for cold memory reads needs a timed A/B too.

10. With `--corpus` (`make bench` passes it; `--corpus-only`: this table alone): the corpus of
   tlaplus/Examples models (specs/examples/corpus/, docs/corpus.md), each on its full cfg: TLC
   (`-workers 2`, the cfg as shipped, from `--corpus-models DIR`, by default the folder
   tlaplus-examples next to the `--tlc` jar) against `mc check` with 1 and 2 workers, each the
   wall time of the whole command (start-up included), the fastest of `--corpus-runs` runs
   (3); both sides' counts, which must be equal; mc's speed over TLC's and its geometric mean;
   and the share of py-spy's samples (one worker, 250 a second) whose innermost frame is the
   spec's own code (a file under specs/).

Tables are written to build/bench.md. Figures are from this run on this machine: compare
ratios, not absolutes, and run nothing else meanwhile. `--quick` skips TwoPhase RM=8 (~1.7M
states), `--no-spark` the last table, `--large` adds RM=8 to it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER_VENV = ROOT / "build" / "bench-venv"
BASELINE = ROOT / "build" / "baseline"
PEER = "minicheck==0.4.0"

# (spec file, constants); every run is made with 1 and 2 workers
RUNS: list[tuple[str, dict[str, str]]] = [
    ("specs/examples/die_hard.py", {}),
    ("specs/examples/two_phase.py", {"rm": "6"}),
    ("specs/examples/two_phase.py", {"rm": "7"}),
    ("specs/examples/two_phase.py", {"rm": "8"}),
    ("specs/light/kip841.py", {}),
    ("specs/light/kip903.py", {}),
    ("specs/light/kip903.py", {"fixed": "false"}),
    ("specs/light/kip966.py", {}),
    ("specs/kip841.py", {}),
    ("specs/kip903.py", {}),
    ("specs/kip966.py", {}),
    ("specs/light/kip996.py", {}),
    ("specs/light/kip996_read.py", {}),
    ("specs/kip1023.py", {}),
]
LARGE = {"rm": "8"}
TWO_PHASE = "specs/examples/two_phase.py"
DEEP = ("specs/light/kip996_read.py", {"voters": "5"}, ["reads_are_linearizable"])
# (spec file, constants, temporal properties, the same spec at the baseline or None):
# `--liveness`. The light KIP-966 model was specs/kip966.py before it moved to specs/light/.
# The second is the scale row (millions of states): the baseline would take hours.
LIVENESS: list[tuple[str, dict[str, str], list[str], str | None]] = [
    ("specs/light/kip966.py", {"max_unflushed_losses": "2"}, ["has_leader"], "specs/kip966.py"),
    (
        "specs/light/kip966.py",
        {"max_unflushed_losses": "2", "max_records": "3"},
        ["has_leader"],
        None,
    ),
]

CHILD = """
import json, resource, sys, time
from checker.local.bfs import check
from checker.loader import load_model
from checker.search.options import Options
spec, constants, workers = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
invariants = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
model = load_model(spec, constants, invariants) if invariants else load_model(spec, constants)
start, cpu = time.perf_counter(), time.process_time()
result = check(model, Options(workers=workers))
seconds = time.perf_counter() - start
print(json.dumps({
    "verdict": result.verdict, "distinct": result.distinct_states,
    "generated": result.states_generated, "depth": result.depth, "seconds": seconds,
    "cpu_seconds": time.process_time() - cpu,
    "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "visited_bytes": result.visited_bytes, "link_bytes": result.link_bytes,
}))
"""

# The baseline revision's engine (before the hot-path work, `check` took no invariants).
CHILD_BASELINE = """
import json, sys, time
from checker.local.bfs import Options, check  # (the baseline predates checker.local)
from checker.loader import load_model
model = load_model(sys.argv[1], json.loads(sys.argv[2]))
start = time.perf_counter()
result = check(model, Options(workers=int(sys.argv[3])))
seconds = time.perf_counter() - start
print(json.dumps({"verdict": result.verdict, "distinct": result.distinct_states,
                  "seconds": seconds, "checker": __import__("checker").__file__}))
"""

# Table 9: check() under callgrind, one worker, at this revision or the baseline's (whose
# Options were in checker.local.bfs). Callgrind dumps its counts at each os.getppid(): what
# lies between the first and the last is check()'s own (not the start-up's and loading's, the
# baseline's being some 1 G instructions that move by millions from run to run).
CHILD_COUNT = """
import json, os, sys
import checker
if os.path.exists(os.path.join(os.path.dirname(checker.__file__), "search", "options.py")):
    from checker.search.options import Options
else:  # (the baseline predates checker.search)
    from checker.local.bfs import Options
from checker.local.bfs import check
from checker.loader import load_model
model = load_model(sys.argv[1], json.loads(sys.argv[2]))
os.getppid()
distinct = check(model, Options(workers=1)).distinct_states
os.getppid()
print(json.dumps({"distinct": distinct, "checker": checker.__file__}))
"""

# The search, recording the behaviour graph, then the temporal properties on it (as `mc check`).
CHILD_LIVENESS = """
import json, resource, sys, time
from checker import liveness
from checker.loader import load_model
from checker.run import record
from checker.search.options import Options
spec, constants, names = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
model = load_model(spec, constants, symmetry=False, view=False)  # as mc check, with liveness
props = liveness.select(model, names)
start = time.perf_counter()
result, behaviour = record(model, liveness.recording(model, props), Options(deadlock=False))
result = liveness.check(model, result, props, behaviour)
seconds = time.perf_counter() - start
print(json.dumps({
    "verdict": result.verdict, "distinct": result.distinct_states, "seconds": seconds,
    "liveness_seconds": result.liveness_seconds, "behaviour_bytes": behaviour.nbytes,
    "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "children_rss_kib": 0,
}))
"""

# The baseline revision's liveness: a search, then `liveness.check` explores again.
CHILD_LIVENESS_BASELINE = """
import json, sys, time
from checker import liveness
from checker.local.bfs import Options, check
from checker.loader import load_model
spec, constants, names = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
model = load_model(spec, constants)
props = liveness.select(model, names)
start = time.perf_counter()
result = liveness.check(model, check(model, Options()), props)
print(json.dumps({"verdict": result.verdict, "distinct": result.distinct_states,
                  "seconds": time.perf_counter() - start}))
"""


# A peer run in its own process, so that its peak RSS is its own.
CHILD_TIMED = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
out = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True)
seconds = time.perf_counter() - start
print(json.dumps({"code": out.returncode, "seconds": seconds, "out": out.stdout[-4000:],
                  "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measure(
    spec: str, constants: dict[str, str], child: str = CHILD, *args: str, env=None, cwd=ROOT
) -> dict:
    """Run `child` on a spec in a process of its own, in `cwd` with `env`."""
    out = subprocess.run(
        [sys.executable, "-c", child, spec, json.dumps(constants), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode:
        raise SystemExit(f"{spec} {constants} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def consts_text(constants: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in constants.items()) or "defaults"


def peak_mib(r: dict) -> float:
    return (r["rss_kib"] + r["children_rss_kib"]) / 1024


@functools.cache  # (one worktree and one build for all the tables)
def baseline_env(rev: str) -> dict[str, str]:
    """The environment that runs mc at revision `rev` (a worktree in build/baseline)."""
    if BASELINE.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(BASELINE)], cwd=ROOT)
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(BASELINE), rev],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(BASELINE)}
    if (BASELINE / "setup.py").exists():  # its own C hot path, built in place
        subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
            cwd=BASELINE,
            check=True,
            capture_output=True,
        )
        env.pop("MC_PURE_PYTHON", None)
    else:  # before the C hot path: pure Python
        env["MC_PURE_PYTHON"] = "1"
    return env


def at_baseline(spec: str) -> str | None:
    """The same spec at the baseline revision: the light Kafka model's KIP layers were
    specs/kipNNN.py before they moved to specs/light/; today's specs/kip841.py, kip903.py and
    kip966.py are the translated KRaft model, which the baseline does not have."""
    if (BASELINE / "specs" / "light").exists():  # the same layout as today's
        return spec if (BASELINE / spec).exists() else None
    if spec.startswith("specs/light/"):
        return spec.replace("specs/light/", "specs/")
    if spec in ("specs/kip841.py", "specs/kip903.py", "specs/kip966.py"):
        return None
    return spec if (BASELINE / spec).exists() else None


def engine_table(
    runs: list[tuple[str, dict[str, str]]], baseline: str | None
) -> tuple[list[str], dict]:
    """Table 1; also returns the TwoPhase runs by (rm, workers) for table 2."""
    env = baseline_env(baseline) if baseline else None
    header = (
        "| spec | constants | workers | verdict | distinct | generated | depth | s "
        "| distinct/s | peak RSS MiB | visited B/state | links B/state |"
    )
    columns = 12
    if env is not None:
        header += f" {baseline} distinct/s | speed-up (fastest runs) |"
        columns += 2
    lines = [header, "|" + "---|" * columns]
    two_phase: dict[tuple[str, int], dict] = {}
    for spec, constants in runs:
        counts = None
        before = None
        # (not at RM=8: the baseline takes minutes there; its figure is in docs/performance.md)
        then = at_baseline(spec)
        if env is not None and then is not None and constants != LARGE:
            before = fastest(
                functools.partial(
                    measure, then, constants, CHILD_BASELINE, "1", env=env, cwd=BASELINE
                )
            )
            if not before["checker"].startswith(str(BASELINE)):
                raise SystemExit(f"the baseline run imported {before['checker']}")
        for workers in (1, 2):
            r = measure(spec, constants, CHILD, str(workers))
            seen = (r["verdict"], r["distinct"], r["generated"], r["depth"])
            if counts is not None and seen != counts:
                raise SystemExit(f"{spec} {constants}: workers 2 gave {seen}, workers 1 {counts}")
            counts = seen
            n = max(r["distinct"], 1)
            rate = r["distinct"] / r["seconds"]
            line = (
                f"| {spec} | {consts_text(constants)} | {workers} | {r['verdict']} "
                f"| {r['distinct']:,} | {r['generated']:,} | {r['depth']} | {r['seconds']:.2f} "
                f"| {rate:,.0f} | {peak_mib(r):.0f} "
                f"| {r['visited_bytes'] / n:.1f} | {r['link_bytes'] / n:.1f} |"
            )
            if env is not None:
                if before is None:
                    line += " - | - |"
                else:  # the fastest runs of both, as the baseline's
                    again = functools.partial(measure, spec, constants, CHILD, str(workers))
                    best = fastest(again, r)
                    old = before["distinct"] / before["seconds"]
                    now = best["distinct"] / best["seconds"]
                    line += f" {old:,.0f} | {now / old:.1f} |"
            lines.append(line)
            print(line, flush=True)
            if spec.endswith("two_phase.py"):
                two_phase[(constants["rm"], workers)] = r
    return lines, two_phase


def check_instructions(spec: str, constants: dict[str, str], env=None, cwd=ROOT) -> dict:
    """CHILD_COUNT under callgrind: its result and the instructions of its check() (after a run
    that leaves the modules compiled, as a fresh worktree's first import compiles them)."""
    measure(spec, constants, CHILD_COUNT, env=env, cwd=cwd)
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=os_getppid"]
            + [f"--callgrind-out-file={tmp}/callgrind.out", sys.executable, "-c", CHILD_COUNT]
            + [spec, json.dumps(constants)],
            cwd=cwd,
            capture_output=True,
            text=True,
            env={**(env or os.environ), "PYTHONHASHSEED": "0"},
        )
        # callgrind.out.1: up to the first os.getppid(); then check()'s parts.
        parts = sorted(Path(tmp).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [re.search(r"^totals: (\d+)", p.read_text(), re.M) for p in parts]
    if out.returncode or len(parts) < 2 or not all(totals):
        raise SystemExit(f"{spec} {constants} under callgrind failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout)
    if not result["checker"].startswith(str(cwd)):
        raise SystemExit(f"{spec}: ran the checker of {result['checker']}, not {cwd}'s")
    return {**result, "instructions": sum(int(t.group(1)) for t in totals[1:] if t)}


def instructions_table(runs: list[tuple[str, dict[str, str]]], baseline: str | None) -> list[str]:
    """Table 9: the instructions of check() on each spec (and at `baseline`)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    env = baseline_env(baseline) if baseline else None
    header = "| spec | constants | distinct | instructions of check() |"
    columns = 4
    if env is not None:
        header += f" at {baseline} | ratio ({baseline} / now) |"
        columns += 2
    lines = [header, "|" + "---|" * columns]
    for spec, constants in runs:
        if constants == LARGE:
            continue
        now = check_instructions(spec, constants)
        line = f"| {spec} | {consts_text(constants)} | {now['distinct']:,} "
        line += f"| {now['instructions'] / 1e6:,.1f} M |"
        then = at_baseline(spec) if env is not None else None
        if then is not None:
            before = check_instructions(then, constants, env, BASELINE)
            if before["distinct"] != now["distinct"]:
                raise SystemExit(f"{spec} {constants}: the baseline found {before['distinct']}")
            ratio = before["instructions"] / now["instructions"]
            line += f" {before['instructions'] / 1e6:,.1f} M | {ratio:.2f} |"
        elif env is not None:
            line += " - | - |"
        lines.append(line)
        print(line, flush=True)
    return lines


def fastest(
    run: Callable[[], dict], first: dict | None = None, budget: float = 3.0, most: int = 5
) -> dict:
    """The fastest of repeated runs (`first`, if given, is one): a short check is repeated
    while the runs took less than `budget` seconds in all, at most `most` times, since a
    single run of a few milliseconds to a few seconds moves by more than the speed-ups
    measured on a shared machine (the baseline's own rate moved 1.7x between two runs)."""
    runs = [first if first is not None else run()]
    while len(runs) < most and sum(r["seconds"] for r in runs) < budget:
        runs.append(run())
    return min(runs, key=lambda r: r["seconds"])


def peer_python() -> Path:
    """The benchmark's own environment with minicheck (made on first use)."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        venv.create(PEER_VENV, with_pip=True)
    if subprocess.run([python, "-c", "import minicheck"], capture_output=True).returncode:
        subprocess.run([python, "-m", "pip", "install", "--quiet", PEER], check=True)
    return python


def run_tlc(jar: Path, model_dir: Path, rm: str) -> dict:
    """TLC with 2 workers on TwoPhase with `rm` resource managers: seconds, peak RSS."""
    with tempfile.TemporaryDirectory(prefix="mc-bench-tlc-") as work:
        shutil.copy(model_dir / "TwoPhase.tla", work)
        names = ", ".join(f"r{i}" for i in range(1, int(rm) + 1))
        Path(work, "bench.cfg").write_text(
            f"CONSTANT RM = {{{names}}}\nSPECIFICATION TPSpec\nINVARIANT TPTypeOK TCConsistent\n"
        )
        command = [
            "java", "-XX:+UseParallelGC", "-cp", str(jar.resolve()), "tlc2.TLC", "-workers", "2",
            "-config", "bench.cfg", "-metadir", str(Path(work, "states")), "TwoPhase",
        ]  # fmt: skip
        out = subprocess.run(
            [sys.executable, "-c", CHILD_TIMED, work, *command], capture_output=True, text=True
        )
    r = json.loads(out.stdout)
    found = [line for line in r["out"].splitlines() if "distinct states found" in line]
    if r["code"] != 0 or not found:
        raise SystemExit(f"TLC failed on RM={rm}:\n{r['out']}")
    r["distinct"] = int(found[-1].split(" states generated, ")[1].split()[0].replace(",", ""))
    return r


def peer_table(two_phase: dict, tlc: Path | None, tlc_model: Path | None) -> list[str]:
    """Table 2: the same TwoPhase model in minicheck and TLC, ratios measured in this run."""
    python = peer_python()
    header = (
        "| TwoPhase RM | distinct | minicheck s | TLC s (2 workers) | mc w1 s | mc w2 s "
        "| mc w1 time / minicheck | mc w2 speed / minicheck | mc w2 speed / TLC "
        "| minicheck RSS MiB | TLC RSS MiB | mc w1 RSS MiB | mc w2 RSS MiB "
        "| mc w1 pure-Python s |"
    )
    lines = [header, "|" + "---|" * 14]
    pure = {**os.environ, "MC_PURE_PYTHON": "1"}
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
        tlc_s = tlc_ratio = tlc_rss = "no --tlc JAR"
        if tlc is not None:
            assert tlc_model is not None
            t = run_tlc(tlc, tlc_model, rm)
            if t["distinct"] != one["distinct"]:
                raise SystemExit(f"RM={rm}: TLC {t['distinct']} states, mc {one['distinct']}")
            tlc_s, tlc_rss = f"{t['seconds']:.2f}", f"{t['rss_kib'] / 1024:.0f}"
            tlc_ratio = f"{t['seconds'] / two['seconds']:.2f}"
        slow = "-"  # the pure-Python hot path, up to RM=7 (RM=8 would take minutes)
        if int(rm) <= 7:
            slow = f"{measure(TWO_PHASE, {'rm': rm}, CHILD, '1', env=pure)['seconds']:.2f}"
        lines.append(
            f"| {rm} | {one['distinct']:,} | {peer['seconds']:.2f} | {tlc_s} "
            f"| {one['seconds']:.2f} | {two['seconds']:.2f} "
            f"| {one['seconds'] / peer['seconds']:.2f} | {peer['seconds'] / two['seconds']:.2f} "
            f"| {tlc_ratio} | {peer['rss_kib'] / 1024:.0f} | {tlc_rss} "
            f"| {peak_mib(one):.0f} | {peak_mib(two):.0f} | {slow} |"
        )
        print(lines[-1], flush=True)
    return lines


SYMMETRIC = "specs/examples/two_phase_symmetric.py"
SYMMETRIC_RM = "7"  # 5,040 renamings, the most mc allows


def symmetry_table() -> list[str]:
    """Table 6: TwoPhase under symmetry with its resource managers as model values (strings,
    re-keyed with `p.keys`) against the same model with ids 0..n-1 (`p.indexed`). The issue's
    target: model values within 1.2x of ids."""
    lines = [
        "| spec | constants | RMs | distinct | generated | s | CPU s | model values / ids (CPU) |",
        "|" + "---|" * 8,
    ]
    runs = {}
    for names in ("false", "true"):
        constants = {"rm": SYMMETRIC_RM, "names": names}
        runs[names] = r = measure(SYMMETRIC, constants, CHILD, "1")
        kind = "model values r1..rn" if names == "true" else "ids 0..n-1"
        ids = runs["false"]["cpu_seconds"]
        ratio = f"{r['cpu_seconds'] / ids:.2f}" if names == "true" else "-"
        line = (
            f"| {SYMMETRIC} | {consts_text(constants)} | {kind} | {r['distinct']:,} "
            f"| {r['generated']:,} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | {ratio} |"
        )
        lines.append(line)
        print(line, flush=True)
    if runs["true"]["distinct"] != runs["false"]["distinct"]:
        raise SystemExit(f"{SYMMETRIC}: model values and ids found different state counts")
    return lines


STARTUP_RUNS = 7
TRIVIAL = ("specs/examples/two_phase.py", "-D", "rm=2")


def startup_table() -> list[str]:
    """Table 7: the wall time of `mc check` on a trivial spec (TwoPhase, 2 RMs), the median
    of STARTUP_RUNS runs: what a CI job checking many specs pays per spec. The target: 0.5 s."""
    mc = str(Path(sys.executable).parent / "mc")
    # As on a user's machine: Python caches the modules' bytecode (a run with
    # PYTHONDONTWRITEBYTECODE compiles every module again), and the first run writes it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    seconds = []
    for run in range(STARTUP_RUNS + 1):
        r = json.loads(
            subprocess.run(
                [sys.executable, "-c", CHILD_TIMED, str(ROOT), mc, "check", *TRIVIAL],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout
        )
        if run == 0:
            continue  # the warm-up: it writes the bytecode
        if r["code"] != 0:
            raise SystemExit(f"mc check {' '.join(TRIVIAL)} exited {r['code']}:\n{r['out']}")
        seconds.append(r["seconds"])
    line = (
        f"| mc check {' '.join(TRIVIAL)} | {STARTUP_RUNS} | {statistics.median(seconds):.2f} "
        f"| {min(seconds):.2f} | {max(seconds):.2f} |"
    )
    print(line, flush=True)
    return ["| command | runs | median wall s | min | max |", "|" + "---|" * 5, line]


def deep_table() -> list[str]:
    """Table 3: kip996_read with 5 voters, to its shortest stale read, with 2 workers."""
    spec, constants, invariants = DEEP
    r = measure(spec, constants, CHILD, "2", json.dumps(invariants))
    lines = [
        "| spec | constants | invariants | workers | verdict | distinct | depth | s "
        "| peak RSS MiB |",
        "|" + "---|" * 9,
        f"| {spec} | {consts_text(constants)} | {', '.join(invariants)} | 2 | {r['verdict']} "
        f"| {r['distinct']:,} | {r['depth']} | {r['seconds']:.1f} | {peak_mib(r):.0f} |",
    ]
    print(lines[-1], flush=True)
    return lines


def liveness_table(baseline: str | None) -> list[str]:
    """Table 4: temporal properties on the recorded behaviour graph (and at `baseline`)."""
    lines = [
        "| spec | constants | properties | verdict | distinct | s | liveness s "
        "| graph B/state | peak RSS MiB | baseline s | speed-up |",
        "|" + "---|" * 11,
    ]
    env = baseline_env(baseline) if baseline else None
    for spec, constants, props, then in LIVENESS:
        r = measure(spec, constants, CHILD_LIVENESS, json.dumps(props))
        old = "-", "-"
        if env is not None and then is not None:
            names = json.dumps(props)
            b = measure(then, constants, CHILD_LIVENESS_BASELINE, names, env=env, cwd=BASELINE)
            if (b["verdict"], b["distinct"]) != (r["verdict"], r["distinct"]):
                raise SystemExit(f"{spec} {constants}: the baseline disagrees: {b} {r}")
            old = f"{b['seconds']:.1f}", f"{b['seconds'] / r['seconds']:.1f}x"
        lines.append(
            f"| {spec} | {consts_text(constants)} | {', '.join(props)} | {r['verdict']} "
            f"| {r['distinct']:,} | {r['seconds']:.1f} | {r['liveness_seconds']:.1f} "
            f"| {r['behaviour_bytes'] / r['distinct']:.1f} | {peak_mib(r):.0f} "
            f"| {old[0]} | {old[1]} |"
        )
        print(lines[-1], flush=True)
    return lines


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
from checker import spark as spark_engine
from checker.loader import load_model
spec, constants, master = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
conf = {"spark.ui.enabled": "false"}
if not master.startswith("local"):
    import tempfile
    conf["spark.checkpoint.dir"] = tempfile.mkdtemp(prefix="mc-bench-ckpt-")
spark = spark_engine.session(master=master, conf=conf)
spark.range(1).collect()  # the executors are up
startup = time.perf_counter() - started
cores = int(spark.sparkContext.defaultParallelism)  # local[N]: N; a cluster: at least 2
model = load_model(spec, constants)
levels = []
start = time.perf_counter()
result = spark_engine.check(
    model, spark=spark,
    on_level=lambda s: levels.append([s.expanded, s.new, s.seconds, s.generated, s.where]),
)
seconds = time.perf_counter() - start
spark.stop()
print(json.dumps({
    "verdict": result.verdict, "distinct": result.distinct_states,
    "generated": result.states_generated, "depth": result.depth, "seconds": seconds,
    "startup": startup, "levels": levels, "cores": cores,
}))
"""


def spark_table(runs: list[tuple[str, dict[str, str]]], master: str) -> list[str]:
    """Local vs Spark on the same specs; counts must agree (the run fails otherwise). The
    local engine with `--workers 2` (wall time) and with one worker (its candidates per CPU
    second); Spark's levels: candidates per core-second of wall time (the executors' cores)."""
    header = (
        "| spec | constants | distinct | generated | depth | local --workers 2 s "
        f"| spark ({master}) s | spark/local | local candidates per CPU s (1 worker) "
        "| spark levels candidates per core-s | ratio | small level s | spark start s |"
    )
    lines = [header, "|" + "---|" * 13]
    for spec, constants in runs:
        one = measure(spec, constants, CHILD, "1")
        local = measure(spec, constants, CHILD, "2")
        spark = measure(spec, constants, CHILD_SPARK, master)
        for key in ("verdict", "distinct", "generated", "depth"):
            if local[key] != spark[key] or one[key] != spark[key]:
                raise SystemExit(f"{spec} {constants}: {key} {local[key]} != {spark[key]}")
        levels, before = spark["levels"], 0
        on_spark_seconds, on_spark_candidates = 0.0, 0
        for _, _, seconds, generated, where in levels:
            if where == "spark":
                on_spark_seconds += seconds
                on_spark_candidates += generated - before
            before = generated
        per_cpu = one["generated"] / max(one["cpu_seconds"], 1e-9)
        per_core, ratio = "-", "-"  # (every level in the driver)
        if on_spark_seconds:
            rate = on_spark_candidates / (on_spark_seconds * spark["cores"])
            per_core, ratio = f"{rate:,.0f}", f"{rate / per_cpu:.2f}"
        small = [s for expanded, _, s, _, where in levels if expanded < 500 and where == "spark"]
        fixed = f"{statistics.median(small):.2f}" if small else "-"
        lines.append(
            f"| {spec} | {consts_text(constants)} | {local['distinct']:,} | {local['generated']:,} "
            f"| {local['depth']} | {local['seconds']:.2f} | {spark['seconds']:.2f} "
            f"| {spark['seconds'] / local['seconds']:.1f} | {per_cpu:,.0f} "
            f"| {per_core} | {ratio} | {fixed} | {spark['startup']:.1f} |"
        )
        print(lines[-1], flush=True)
    return lines


KIP966 = ROOT.parent / "shared" / "peers" / "vanlightly" / "kip-966"
KIP966_CONSTANTS = {
    "broker_count": "3",
    "init_replication_factor": "3",
    "min_isr": "2",
    "init_isr_size": "2",
    "data_loss_shutdown_limit": "1",
    "fence_broker_limit": "1",
}


def tlc_for(jar: Path, model_dir: Path, seconds: float) -> tuple[int, float]:
    """TLC (-workers 2) on kip-966's shipped cfg for about `seconds`: the distinct states of
    its last progress report (TLC reports once a minute) and when it came, from the start."""
    with tempfile.TemporaryDirectory(prefix="mc-bench-tlc-") as work:
        for f in model_dir.glob("*"):
            shutil.copy(f, work)
        jars = f"{jar.resolve()}:{(jar.parent / 'CommunityModules.jar').resolve()}"
        command = [
            "java", "-XX:+UseParallelGC", "-cp", jars, "tlc2.TLC", "-workers", "2", "-deadlock",
            "-config", "kafka_replication_kip_966.cfg", "-metadir", str(Path(work, "states")),
            "kafka_replication_kip_966.tla",
        ]  # fmt: skip
        start = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        last: tuple[int, float] = (0, 0.0)
        assert process.stdout is not None
        for line in process.stdout:
            found = re.search(r"([\d,]+) distinct states found", line)
            if found:
                last = (int(found[1].replace(",", "")), time.perf_counter() - start)
            if time.perf_counter() - start > seconds + 2:
                break
        process.kill()
        process.wait()
    if last[0] == 0:
        raise SystemExit(f"TLC reported no progress on {model_dir} in {seconds:.0f} s")
    return last


def kafka_table(seconds: float, tlc: Path | None) -> list[str]:
    """Table 8: kip-966's shipped cfg for `seconds` (TLC's last report's time, if TLC runs):
    TLC's distinct states against mc's (2 workers), incremental evaluation on and off."""
    spec = "specs/kip966.py"
    mc = str(Path(sys.executable).parent / "mc")
    rows = []
    tlc_distinct = None
    if tlc is not None:
        tlc_distinct, seconds = tlc_for(tlc, KIP966, seconds)
        rows.append(f"| TLC 2 workers | {seconds:.0f} | {tlc_distinct:,} | 1.00 | |")
        print(rows[-1], flush=True)
    defines = [arg for k, v in KIP966_CONSTANTS.items() for arg in ("-D", f"{k}={v}")]
    for flag in ("--incremental", "--no-incremental"):
        with tempfile.TemporaryDirectory(prefix="mc-bench-") as work:
            report = Path(work, "r.json")
            command = [
                mc, "check", spec, *defines, "--no-deadlock", "--no-liveness", "--workers", "2",
                "--timeout", f"{seconds:.0f}", "--progress", "0", "--json", str(report), flag,
            ]  # fmt: skip
            r = json.loads(
                subprocess.run(
                    [sys.executable, "-c", CHILD_TIMED, str(ROOT), *command],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            distinct = json.loads(report.read_text())["distinct_states"]
        ratio = "" if not tlc_distinct else f"{distinct / tlc_distinct:.2f}"
        per_million = r["rss_kib"] / 1024 / (distinct / 1e6)
        rows.append(
            f"| mc 2 workers {flag} | {seconds:.0f} | {distinct:,} | {ratio} "
            f"| {r['rss_kib'] / 1024:,.0f} MiB, {per_million:,.0f} MiB per 10^6 states |"
        )
        print(rows[-1], flush=True)
    return [
        f"kip-966 shipped cfg ({consts_text(KIP966_CONSTANTS)}), no deadlock, no liveness:",
        "",
        "| checker | s | distinct states | / TLC | peak RSS (mc: the largest process) |",
        "|" + "---|" * 5,
        *rows,
    ]


# The corpus (docs/corpus.md): (model, mc spec, mc flags, TLC folder, module, cfg). The
# flags say what the cfg says: CHECK_DEADLOCK FALSE is --no-deadlock.
CORPUS: list[tuple[str, str, list[str], str, str, str]] = [
    ("ReadersWriters", "readers_writers.py", [], "ReadersWriters", "MC.tla", "MC.cfg"),
    ("SimplifiedFastPaxos", "fast_paxos.py", [], "SimplifiedFastPaxos", "FastPaxos.tla",
     "FastPaxos.cfg"),
    ("ewd426", "token_ring.py", ["--no-deadlock"], "ewd426", "TokenRing.tla", "TokenRing.cfg"),
    ("Disruptor", "disruptor.py", ["--no-deadlock"], "Disruptor", "Disruptor_MPMC.tla",
     "Disruptor_MPMC.cfg"),
    ("SlushProtocol", "slush.py", [], "SlushProtocol", "Slush.tla", "SlushSmall.cfg"),
    ("ewd998", "ewd998_pcal.py", [], "ewd998", "EWD998PCal.tla", "EWD998PCal.cfg"),
    ("btree", "btree.py", [], "btree", "btree.tla", "btree.cfg"),
    ("Bakery-Boulangerie", "bakery.py", ["--no-deadlock"], "Bakery-Boulangerie", "MCBakery.tla",
     "MCBakery.cfg"),
]  # fmt: skip
# PROPERTY lines mc cannot check (TokenRing's Stab is <>[]: docs/corpus.md): TLC runs without
# them too, so that both sides do the same work.
CORPUS_NO_PROPERTY = {"TokenRing.cfg"}
# Bakery.tla EXTENDS TLAPS for its proofs, which TLC skips: a module that defines the names.
TLAPS_STUB = """---- MODULE TLAPS ----
SMT == TRUE
SMTT(X) == TRUE
PTL == TRUE
Zenon == TRUE
ZenonT(X) == TRUE
Isa == TRUE
IsaT(X) == TRUE
====
"""
COUNTS = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
MC_DEPTH = re.compile(r"Depth of the search: (\d+)")
TLC_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")


def counts_of(out: str, depth: re.Pattern[str]) -> tuple[int, int, int] | None:
    """(distinct, generated, depth) from a report of mc or TLC, or None."""
    found, deep = COUNTS.findall(out), depth.search(out)
    if not found or deep is None:
        return None
    generated, distinct = (int(n.replace(",", "")) for n in found[-1])
    return distinct, generated, int(deep.group(1))


def timed(command: list[str], cwd: Path, runs: int) -> dict:
    """The fastest of `runs` runs of the whole command (CHILD_TIMED), with its output."""
    best = None
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD_TIMED, str(cwd), *command], capture_output=True, text=True
        )
        r = json.loads(out.stdout)
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    assert best is not None
    return best


def tlc_corpus(jar: Path, models: Path, folder: str, module: str, cfg: str, runs: int) -> dict:
    """TLC with 2 workers on a corpus model's cfg (as shipped, but CORPUS_NO_PROPERTY)."""
    with tempfile.TemporaryDirectory(prefix="mc-bench-corpus-") as work:
        shutil.copytree(models / folder, work, dirs_exist_ok=True)
        Path(work, "TLAPS.tla").write_text(TLAPS_STUB)
        if cfg in CORPUS_NO_PROPERTY:
            text = Path(work, cfg).read_text()
            kept = re.sub(r"PROPERT(Y|IES)\s+\w+", "", text)
            Path(work, cfg).write_text(kept)
        community = jar.resolve().parent / "CommunityModules.jar"
        classpath = str(jar.resolve()) + (f":{community}" if community.exists() else "")
        command = [
            "java", "-XX:+UseParallelGC", "-cp", classpath, "tlc2.TLC", "-workers", "2",
            "-config", cfg, "-metadir", str(Path(work, "states")), module,
        ]  # fmt: skip
        r = timed(command, Path(work), runs)
    r["counts"] = counts_of(r["out"], TLC_DEPTH)
    return r


def spec_share(spec: str, flags: list[str]) -> float | None:
    """The share of py-spy's samples (one worker, the whole command) whose innermost frame is
    in a file under specs/: the spec's own code. None without py-spy."""
    spy = Path(sys.executable).parent / "py-spy"
    if not spy.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="mc-bench-spy-") as work:
        raw = Path(work, "raw.txt")
        command = [
            str(spy), "record", "-r", "250", "-f", "raw", "-o", str(raw), "--subprocesses",
            "--", sys.executable, "-m", "checker", "check", spec, "--workers", "1", *flags,
        ]  # fmt: skip
        subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
        total = own = 0
        for line in raw.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            innermost = stack.rsplit(";", 1)[-1]
            total += int(count)
            if "(specs/" in innermost or "/specs/" in innermost:
                own += int(count)
    return own / total if total else None


def corpus_table(
    tlc: Path | None, models: Path | None, runs: int, only: str | None = None
) -> list[str]:
    """Table 10: each corpus model's full cfg, TLC (2 workers) against mc (1 and 2 workers);
    `only`: the models whose name or spec file contains it."""
    mc = str(Path(sys.executable).parent / "mc")
    header = (
        "| model | cfg | TLC distinct / generated / depth | mc distinct / generated / depth "
        "| equal | TLC s | mc w1 s | mc w2 s | mc w1 speed / TLC | mc w2 speed / TLC "
        "| spec's share, w1 |"
    )
    lines = [header, "|" + "---|" * 11]
    ratios: dict[int, list[float]] = {1: [], 2: []}
    for model, spec_file, flags, folder, module, cfg in CORPUS:
        if only is not None and only not in model and only not in spec_file:
            continue
        spec = f"specs/examples/corpus/{spec_file}"
        mine = {
            w: timed([mc, "check", spec, "--workers", str(w), *flags], ROOT, runs) for w in (1, 2)
        }
        counts = counts_of(mine[1]["out"], MC_DEPTH)
        if mine[1]["code"] != 0 or counts != counts_of(mine[2]["out"], MC_DEPTH):
            raise SystemExit(f"mc check {spec} failed or differs:\n{mine[1]['out']}")
        tlc_text = tlc_s = speed1 = speed2 = equal = "no --tlc JAR"
        if tlc is not None and models is not None:
            theirs = tlc_corpus(tlc, models, folder, module, cfg, runs)
            if theirs["counts"] is None:
                raise SystemExit(f"TLC failed on {module} {cfg}:\n{theirs['out']}")
            tlc_text = " / ".join(f"{n:,}" for n in theirs["counts"])
            equal = "yes" if theirs["counts"] == counts else "**NO**"
            tlc_s = f"{theirs['seconds']:.2f}"
            for w in (1, 2):
                ratios[w].append(theirs["seconds"] / mine[w]["seconds"])
            speed1, speed2 = f"{ratios[1][-1]:.2f}", f"{ratios[2][-1]:.2f}"
        share = spec_share(spec, flags)
        share_text = "no py-spy" if share is None else f"{100 * share:.1f} %"
        mc_text = " / ".join(f"{n:,}" for n in counts or ())
        lines.append(
            f"| {model} | {cfg} | {tlc_text} | {mc_text} | {equal} | {tlc_s} "
            f"| {mine[1]['seconds']:.2f} | {mine[2]['seconds']:.2f} | {speed1} | {speed2} "
            f"| {share_text} |"
        )
        print(lines[-1], flush=True)
    if ratios[2]:
        gm1, gm2 = (statistics.geometric_mean(ratios[w]) for w in (1, 2))
        lines += ["", f"Geometric mean of mc's speed over TLC's: **{gm2:.2f}x** with 2 workers"
                  f" ({gm1:.2f}x with 1); fastest of {runs} run(s) each."]  # fmt: skip
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-spark", action="store_true", help="skip local vs Spark")
    parser.add_argument("--large", action="store_true", help="add RM=8 to local vs Spark")
    parser.add_argument("--quick", action="store_true", help="skip TwoPhase RM=8 (~1.7M)")
    parser.add_argument(
        "--only",
        metavar="TEXT",
        help="only the specs (and corpus models) whose path or name contains TEXT",
    )
    parser.add_argument("--spark-only", action="store_true", help="only local vs Spark")
    parser.add_argument(
        "--spark-master", default=SPARK_MASTER, help="local vs Spark on this master (local[2])"
    )
    parser.add_argument("--deep", action="store_true", help="kip996_read, 5 voters (minutes)")
    parser.add_argument("--liveness", action="store_true", help="temporal properties (minutes)")
    parser.add_argument("--tlc", type=Path, metavar="JAR", help="TLC's tla2tools.jar")
    parser.add_argument(
        "--tlc-model", type=Path, metavar="DIR", help="the folder of TwoPhase.tla (the jar's)"
    )
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the specs at this git revision of mc"
    )
    parser.add_argument(
        "--kafka", type=float, metavar="SECONDS", help="kip-966's shipped cfg against TLC"
    )
    parser.add_argument(
        "--instructions", action="store_true", help="check()'s instructions (valgrind)"
    )
    parser.add_argument(
        "--corpus", action="store_true", help="the tlaplus/Examples corpus against TLC"
    )
    parser.add_argument("--corpus-only", action="store_true", help="only the corpus table")
    parser.add_argument(
        "--corpus-models", type=Path, metavar="DIR", help="tlaplus-examples (next to the jar)"
    )
    parser.add_argument("--corpus-runs", type=int, default=3, help="runs per side (fastest)")
    args = parser.parse_args()
    if args.corpus_only:  # the corpus table alone
        args.corpus = args.no_spark = True
    tlc_model = args.tlc_model or (args.tlc.parent if args.tlc else None)
    if tlc_model is not None and not (tlc_model / "TwoPhase.tla").exists():
        parser.error(f"no TwoPhase.tla in {tlc_model} (give --tlc-model DIR)")
    lines: list[str] = []
    if not (args.spark_only or args.corpus_only):
        runs = [r for r in RUNS if not (args.quick and r[1] == LARGE)]
        runs = [r for r in runs if args.only is None or args.only in r[0]]
        engine, two_phase = engine_table(runs, args.baseline)
        print(flush=True)
        lines += [*engine, "", *peer_table(two_phase, args.tlc, tlc_model)]
        print(flush=True)
        lines += ["", *symmetry_table(), "", *startup_table()]
        if args.deep:
            print(flush=True)
            lines += ["", *deep_table()]
    if args.kafka:
        print(flush=True)
        lines += ["", *kafka_table(args.kafka, args.tlc)]
    if args.liveness:
        print(flush=True)
        lines += ["", *liveness_table(args.baseline)]
    if args.instructions:
        print(flush=True)
        runs = [r for r in RUNS if args.only is None or args.only in r[0]]
        lines += ["", *instructions_table(runs, args.baseline)]
    if args.corpus:
        print(flush=True)
        models = args.corpus_models or (args.tlc.parent / "tlaplus-examples" if args.tlc else None)
        lines += ["", *corpus_table(args.tlc, models, args.corpus_runs, args.only)]
    if not args.no_spark:
        print(flush=True)
        runs = SPARK_RUNS + (SPARK_LARGE if args.large else [])
        lines += ["", *spark_table(runs, args.spark_master)]
    table = "\n".join(lines) + "\n"
    out = ROOT / "build" / "bench.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    print()
    print(table, end="")
    print(f"(written to {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
