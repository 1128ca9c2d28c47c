"""Random small specs with random faults, thrown at `mc check` in a subprocess (issue 23).

Each example writes a spec whose code misbehaves at one place (the module, `init`, an action,
an invariant, a parameter's domain, the view) in a state the search surely reaches: it raises,
exits (`sys.exit`, `os._exit`), raises KeyboardInterrupt, GeneratorExit or MemoryError itself,
signals its own process, answers otherwise when asked again (a counter on `self`, `random`, the
clock), or returns what is not allowed (a dict, a float, a kind other than the initial
states'). Whatever it does, mc must end with a documented exit code (checker.errors.ExitCode),
the one the fault calls for, print no Python traceback (the spec's own traceback is printed as
`File ..., line N` lines, without Python's "Traceback (most recent call last)" header), and
never exit 0 for a spec that misbehaved (closing a worker's own standard output harms nothing),
and write a `--json` report whose verdict agrees. A spec without a fault must pass, so that the
test can tell a fault from a broken template. Hypothesis draws EXAMPLES of the FAULTS below,
the same ones on every run (derandomized): under a minute on two busy cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.errors import ExitCode
from tests.checker.test_hostile_input import PYTHON_TRACEBACK
from tests.conftest import ROOT

DOCUMENTED = {int(code) for code in ExitCode}

# Statements a spec runs where it misbehaves, and the exit code each calls for in spec code
# evaluated during the search (at import the module cannot be loaded: 150; Fault.expected).
STATEMENTS = {
    "raise": ('raise ValueError("fuzz")', ExitCode.EVALUATION_ERROR),
    "base-exception": ('raise BaseException("fuzz")', ExitCode.EVALUATION_ERROR),
    "stop-iteration": ("raise StopIteration", ExitCode.EVALUATION_ERROR),
    "recursion": ("_recurse(0)", ExitCode.EVALUATION_ERROR),
    "sys-exit-0": ("sys.exit(0)", ExitCode.EVALUATION_ERROR),
    "sys-exit-none": ("sys.exit()", ExitCode.EVALUATION_ERROR),
    "sys-exit-text": ('sys.exit("bye")', ExitCode.EVALUATION_ERROR),
    "sys-exit-12": ("sys.exit(12)", ExitCode.EVALUATION_ERROR),
    "builtin-exit": ("exit(0)", ExitCode.EVALUATION_ERROR),
    "os-exit-0": ("os._exit(0)", ExitCode.EVALUATION_ERROR),
    "os-exit-12": ("os._exit(12)", ExitCode.EVALUATION_ERROR),
    "keyboard-interrupt": ("raise KeyboardInterrupt", ExitCode.EVALUATION_ERROR),
    "generator-exit": ("raise GeneratorExit", ExitCode.EVALUATION_ERROR),
    # The exception's own message is spec code that raises (mc must still say the error)
    "str-fails": ("raise _Unsayable()", ExitCode.EVALUATION_ERROR),
    "exit-str-fails": ("raise SystemExit(_Unsayable())", ExitCode.EVALUATION_ERROR),
    # mc's standard output closed: the report cannot be written (in a worker, nothing is lost)
    "closes-stdout": ("sys.stdout.close()", ExitCode.CONFIG_ERROR),
    # Memory running out is the run's failure, not the action's (checker.errors.OUTSIDE)
    "memory": ("raise MemoryError", ExitCode.ENGINE_ERROR),
}

# What an action returns instead of its successor (every one is an error of the action: 75)
RETURNS = {
    "dict": '{"x": 1, "y": 0}',
    "int": "42",
    "str": '"next"',
    "list-with-int": "[s, 3]",
    "float": "s.replace(x=1.5)",
    "nan": 's.replace(x=float("nan"))',
    "none-in-int": "s.replace(x=None)",
    "bool-in-int": "s.replace(x=True)",
    "str-in-int": "s.replace(x=str(s.x))",
    "list-in-int": "s.replace(x=[s.x])",
    "new-variable": "s.replace(z=1)",
    "lost-variable": "Record(x=s.x + 1)",
    "object": "s.replace(x=object())",
    "big-int": "s.replace(x=2**70)",
    "unhashable-set": "s.replace(x={(1, [2])})",
    "deep": 's.replace(y=__import__("functools").reduce(lambda t, _: (t,), range(600), ()))',
    "lone-surrogate": 's.replace(y="\\udc80")',
}

# An invariant's answers that are not True or False
VERDICTS = {"none": "None", "one": "1", "text": '"yes"', "list": "[]", "state": "s"}

# An action that answers otherwise when asked again; mc finds it by expanding states twice,
# which `--recheck 1` asks of every state (the default samples every 64th: docs/errors.md)
NONDETERMINISM = {
    "counter-on-self": "self.calls = getattr(self, 'calls', 0) + 1\n{i}y = self.calls",
    "random": "y = random.randrange(10**9)",
    "clock": "y = time.perf_counter_ns()",
}

SITES = ("import", "init", "action", "invariant", "domain", "view")

TEMPLATE = """\
import os
import random
import signal
import sys
import time

from checker import Record, Spec, action, invariant, terminal


def _recurse(n):
    return _recurse(n + 1)


class _Unsayable(Exception):
    def __str__(self):
        raise ValueError("no words")


def _steps(s):
{domain}    return (1, 2)

{module}
class Fuzz(Spec):
    def init(self):
{init}        return Record(x=0, y=0)

    @action(step={steps})
    def add(self, s, step):
{action}        if s.x + step > {top}:
            return None
        y = s.y
{nondeterminism}        return {effect}

    @action
    def flip(self, s):
        return s.replace(y=1 - s.y) if s.y in (0, 1) else None

    @invariant
    def bounded(self, s):
{invariant}        return {verdict}

    @terminal
    def at_top(self, s):
        return s.x >= {top} - 1
{view}"""


@dataclass(frozen=True)
class Fault:
    site: str  # where the spec misbehaves (SITES), or "" for no fault
    kind: str  # "statement", "return", "verdict", "nondeterminism", "sigterm", "generator"
    name: str
    at: int  # the value of x in the state where it misbehaves
    top: int
    workers: bool
    json: bool

    def expected(self) -> set[int]:
        """The exit codes this fault calls for."""
        if not self.site:
            return {ExitCode.OK}
        if self.name == "closes-stdout":
            if self.workers and self.site not in ("import", "init"):
                # In a worker it closes the worker's own, and the report is written (the
                # engine process evaluates the initial states itself)
                return {ExitCode.OK, ExitCode.CONFIG_ERROR}
            return {ExitCode.CONFIG_ERROR}
        if self.kind == "statement" and self.name == "memory":
            return {ExitCode.ENGINE_ERROR}  # even at import: the run's failure
        if self.site == "import":
            return {ExitCode.SPEC_ERROR}
        if self.kind == "statement":
            return {STATEMENTS[self.name][1]}
        if self.kind == "sigterm":
            # In the engine's process: its own SIGTERM handler stops the run (incomplete);
            # in a worker, the worker dies with it (the engine cannot go on)
            return {ExitCode.INCOMPLETE, ExitCode.ENGINE_ERROR}
        return {ExitCode.EVALUATION_ERROR}

    def source(self) -> str:
        indent = {"import": "", "domain": "    "}.get(self.site, "        ")
        code = {
            "statement": STATEMENTS.get(self.name, ("", 0))[0],
            "sigterm": "os.kill(os.getpid(), signal.SIGTERM)",
        }.get(self.kind, "")
        guarded = ""
        if code:
            when = "" if self.site in ("import", "init") else f"if s.x == {self.at}:\n{indent}    "
            guarded = f"{indent}{when}{code}\n"
        parts = {site: guarded if site == self.site else "" for site in SITES}
        effect = "s.replace(x=s.x + step, y=y)"
        nondeterminism = ""
        if self.kind == "return":
            effect = f"s.replace(x=s.x + step) if s.x != {self.at} else {RETURNS[self.name]}"
        elif self.kind == "nondeterminism":
            statement = NONDETERMINISM[self.name].format(i="            ")
            nondeterminism = f"        if s.x == {self.at}:\n            {statement}\n"
        verdict = "s.x <= 10"
        if self.kind == "verdict":
            verdict = f"True if s.x != {self.at} else {VERDICTS[self.name]}"
        view = ""
        if self.site == "view":
            view = f"\n    def view(self, s):\n{parts['view']}        return s\n"
        text = TEMPLATE.format(
            module=parts["import"],
            init=parts["init"],
            action=parts["action"],
            invariant=parts["invariant"],
            domain=parts["domain"],
            steps="_steps" if self.site == "domain" else "(1, 2)",
            nondeterminism=nondeterminism,
            effect=effect,
            verdict=verdict,
            top=self.top,
            view=view,
        )
        if self.kind == "generator":  # yields its successor, then raises
            text = text.replace(
                f"        return {effect}",
                f"        yield s.replace(x=s.x + step, y=y)\n"
                f"        if s.x == {self.at}:\n            raise ValueError('midway')",
            ).replace("            return None\n", "            return\n", 1)
        return text


# Every fault the test draws from: (site, kind, name); "" and "none" is the spec without one
FAULTS = [
    ("", "none", "none"),
    *[(site, "statement", name) for site in SITES for name in STATEMENTS],
    *[("action", "return", name) for name in RETURNS],
    *[("invariant", "verdict", name) for name in VERDICTS],
    *[("action", "nondeterminism", name) for name in NONDETERMINISM],
    ("action", "sigterm", "sigterm"),
    ("invariant", "sigterm", "sigterm"),
    ("action", "generator", "midway"),
]
EXAMPLES = 30  # random specs a run (docs/faults.md says so)


@st.composite
def faults(draw: st.DrawFn) -> Fault:
    site, kind, name = draw(st.sampled_from(FAULTS))
    top = draw(st.integers(2, 4))
    at = draw(st.integers(0, top - 1))
    return Fault(site, kind, name, at, top, workers=draw(st.booleans()), json=draw(st.booleans()))


def run(fault: Fault, folder: Path) -> subprocess.CompletedProcess[str]:
    spec = folder / "fuzz.py"
    spec.write_text(fault.source())
    args = ["check", str(spec), "--timeout", "60", "--progress", "0", "--recheck", "1"]
    if fault.workers:
        args += ["--workers", "2"]
    if fault.json:
        args += ["--json", str(folder / "result.json")]
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.fault("fuzz")
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(fault=faults())
def test_a_misbehaving_spec_never_passes_and_never_crashes_mc(fault: Fault) -> None:
    with tempfile.TemporaryDirectory() as folder:
        proc = run(fault, Path(folder))
        spec = Path(folder, "fuzz.py").read_text()
        report = Path(folder, "result.json")
        verdict = json.loads(report.read_text())["verdict"] if report.exists() else None
    said = f"{fault}\n--- spec\n{spec}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode in DOCUMENTED, said
    assert proc.returncode in fault.expected(), said
    assert PYTHON_TRACEBACK not in proc.stdout + proc.stderr, said
    assert "Exception ignored" not in proc.stderr, said
    # The reports say what the exit code says: "ok" only for a pass, and an error of spec code
    # in the search is in them
    assert (verdict == "ok") == (fault.json and proc.returncode == 0), said
    if fault.json and fault.kind in ("return", "verdict", "generator"):
        assert verdict == "error", said
