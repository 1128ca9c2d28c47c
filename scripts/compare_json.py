"""Run `mc` on the bundled specs and configurations the tests use, and keep what it says with
the timings taken out: to show that a change of mc's code leaves every count, trace, report and
exit code as it was.

    python scripts/compare_json.py OUT [--root CHECKOUT] [--only SUBSTRING]

runs the `mc` of CHECKOUT (default: this one) with this Python, on the C hot path and again
with MC_PURE_PYTHON=1, and writes one file per case to OUT (the exit code, stdout, stderr and
the --json report, timing fields removed). Compare two checkouts with `diff -r OUT1 OUT2`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.bundled import BUNDLED  # noqa: E402

QUORUM = {
    "test_liveness": "true",
    "max_epoch": "3",
    "values": "3",
    "hosts": "5",
    "max_disruptive_election_triggers": "0",
}
KIP966_ZERO = {"fence_broker_limit": "0", "data_loss_shutdown_limit": "0", "min_isr": "1"}


def _defines(constants: dict[str, str]) -> list[str]:
    return [arg for name, value in constants.items() for arg in ("-D", f"{name}={value}")]


def cases() -> list[tuple[str, list[str]]]:
    """(name, mc's arguments) for each run compared."""
    out: list[tuple[str, list[str]]] = []
    for i, (path, constants, _, _) in enumerate(BUNDLED):
        args = [path, *_defines(constants)]
        out.append((f"bundled{i:02d}", ["check", *args]))
        out.append((f"bundled{i:02d}-w2", ["check", *args, "--workers", "2"]))
        out.append((f"bundled{i:02d}-max-states", ["check", *args, "--max-states", "40"]))
        out.append((f"bundled{i:02d}-max-depth", ["check", *args, "--max-depth", "4"]))
        out.append((f"bundled{i:02d}-no-deadlock", ["check", *args, "--no-deadlock"]))
        out.append((f"bundled{i:02d}-no-symmetry", ["check", *args, "--no-symmetry"]))
        out.append((f"bundled{i:02d}-no-liveness", ["check", *args, "--no-liveness"]))
    quorum = ["specs/kraft_quorum.py", *_defines(QUORUM)]
    out += [
        ("quorum-2", ["check", *quorum, "--no-deadlock"]),
        ("quorum-2-crash", ["check", *quorum, "-D", "max_perm_crashes=1", "--no-deadlock"]),
        ("kip966-zero", ["check", "specs/kip966.py", *_defines(KIP966_ZERO), "--no-deadlock"]),
        (
            "kip966-fence",
            [
                "check",
                "specs/kip966.py",
                *_defines(KIP966_ZERO),
                "-D",
                "fence_broker_limit=1",
                "--no-deadlock",
                "--workers",
                "2",
            ],
        ),
        ("kraft", ["check", "specs/kraft.py"]),
        ("two-phase-4", ["check", "specs/examples/two_phase.py", "-D", "rm=4"]),
        ("light-raft", ["check", "specs/light/raft.py"]),
        ("light-replication", ["check", "specs/light/replication.py", "--max-states", "3000"]),
        (
            "witness",
            [
                "check",
                "specs/examples/die_hard.py",
                "--witness",
                "solved",
                "--invariant",
                "type_ok",
            ],
        ),
        ("no-invariants", ["check", "specs/light/kip903.py", "--no-invariants"]),
        ("folder", ["check", "specs/examples"]),
        ("list-kip903", ["list", "specs/kip903.py"]),
        ("list-raft", ["list", "specs/light/raft.py"]),
        ("graph", ["graph", "specs/examples/die_hard.py"]),
        ("simulate", ["simulate", "specs/light/kip903.py", "-D", "fixed=false", "--seed", "7"]),
        ("bad-define", ["check", "specs/kip903.py", "-D", "fixed=maybe"]),
        ("unknown-define", ["check", "specs/kip903.py", "-D", "nope=1"]),
    ]
    return out


_TIMINGS = [
    (re.compile(r"in \d+\.\d+ s\b"), "in _ s"),
    (re.compile(r"\([\d,]+ (distinct states|states visited)/s\)"), r"(_ \1/s)"),
    (re.compile(r"\d+\.\d+ s\)"), "_ s)"),
]
_TIMING_FIELDS = ("seconds", "liveness_seconds")


def _untimed(text: str) -> str:
    for pattern, replacement in _TIMINGS:
        text = pattern.sub(replacement, text)
    return text


def _strip(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if k not in _TIMING_FIELDS}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc


def run(root: Path, args: list[str], pure: bool) -> str:
    """What one run says, timings removed, as text."""
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("MC_PURE_PYTHON", None)
    if pure:
        env["MC_PURE_PYTHON"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "out.json"
        command = [sys.executable, "-m", "checker", *args]
        if args[0] in ("check", "simulate"):
            command += ["--json", str(report), "--progress", "0"]
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        doc = json.loads(report.read_text()) if report.exists() else None
    return "\n".join(
        [
            f"exit {done.returncode}",
            "-- stdout",
            _untimed(done.stdout),
            "-- stderr",
            _untimed(done.stderr),
            "-- json",
            json.dumps(_strip(doc), indent=1, sort_keys=True),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--root", type=Path, default=REPO)
    parser.add_argument("--only", default="")
    parser.add_argument("--no-pure", action="store_true", help="only the C hot path")
    given = parser.parse_args()
    given.out.mkdir(parents=True, exist_ok=True)
    for name, args in cases():
        if given.only not in name:
            continue
        for pure in (False, True) if not given.no_pure else (False,):
            tag = f"{name}{'-pure' if pure else ''}"
            (given.out / f"{tag}.txt").write_text(run(given.root.resolve(), args, pure))
            print(tag, flush=True)


if __name__ == "__main__":
    main()
