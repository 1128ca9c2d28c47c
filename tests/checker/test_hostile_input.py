"""Every row of docs/errors.md: the bad input, its exit code and message, no Python traceback
(unless --debug, which must show one for every error)."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass

import msgpack
import pytest

from checker import checkpoint
from checker.errors import EvaluationError
from tests.conftest import ROOT

PYTHON_TRACEBACK = "Traceback (most recent call last)"
EXITED = "(spec code cannot end mc's run: it is reported as the spec's error)"

COUNTER = """\
from checker import Record, Spec, action, constant, invariant, terminal

class Counter(Spec):
    top = constant(3, "the largest value")

    def init(self):
        return {init}

    @action(step=(1, 2))
    def add(self, s, step):
        if s.x + step > self.top:
            return None
        return {effect}

    @invariant
    def small(self, s):
        return {holds}

    @terminal
    def at_top(self, s):
        return s.x == self.top
{extra}"""


def counter(
    init: str = "Record(x=0)",
    effect: str = "s.replace(x=s.x + step)",
    holds: str = "s.x < 10",
    extra: str = "",
) -> str:
    """The Counter spec with one part replaced (lines: init 7, add 9-13, small 15-17, at_top
    19-21; `extra` goes on from line 22)."""
    return COUNTER.format(init=init, effect=effect, holds=holds, extra=extra)


# The Counter with a rule (line 23), for `mc ablate`
RULED = counter(extra='\n    fast = rule("steps of 2 allowed")\n').replace(
    "invariant, terminal", "invariant, terminal, rule"
)

TWO_ACTIONS = """\
from checker import Record, Spec, action, invariant

class Dup(Spec):
    def init(self):
        return Record(x=0)

    @action
    def step(self, s):
        return None

    @{second}
    def step(self, s):
        return None
"""

SPIN = """\
from checker import Record, Spec, action

class Spin(Spec):
    def init(self):
        return Record(n=0)

    @action(k=(1,))
    def spin(self, s, k):
        while s.n >= 1: pass  # a guard that never returns once n is 1
        return s.replace(n=s.n + k)
"""


# An action that keeps state on self: asked again, it answers otherwise (init resets it, so
# that every run of the same spec says the same).
DRIFTS = """\
from checker import Record, Spec, action, invariant

class Drift(Spec):
    def init(self):
        self.calls = [0]
        return Record(x=0)

    @action(step=(1, 2))
    def add(self, s, step):
        self.calls[0] += 1
        if s.x >= 3:
            return None
        return s.replace(x=s.x + step + self.calls[0])

    @invariant
    def small(self, s):
        return s.x < {top}
"""

GENERATOR = """\
from checker import Record, Spec, action, invariant

class Gen(Spec):
    def init(self):
        return Record(x=0)

    @action
    def add(self, s):
        if s.x < 3:
            yield s.replace(x=s.x + 1)
        if s.x == 2:
            raise ValueError("midway")

    @invariant
    def small(self, s):
        return s.x < 10
"""

# A spec with a view and a temporal property (checked without the view by default)
VIEWED = counter(
    init="Record(x=0, seen=0)",
    effect="s.replace(x=s.x + step, seen=min(s.seen + 1, 2))",
    extra=(
        "\n    def view(self, s):\n        return s.x\n"
        "\n    @eventually\n    def started(self, s):\n        return s.x >= 0\n"
    ),
).replace("invariant, terminal", "invariant, terminal, eventually")


@dataclass(frozen=True)
class Case:
    id: str  # the row's name in docs/errors.md
    family: str  # its family of faults in docs/faults.md (FAMILIES)
    code: int
    # Distinctive parts of stdout + stderr; {spec} is the spec's path, {tmp} a fresh folder
    messages: tuple[str, ...]
    source: str | None = counter()  # the spec file (None: no file; "/": an empty folder)
    args: tuple[str, ...] = ()
    name: str = "spec.py"
    report: bool = False  # the run happened: the text report is printed
    command: str = "check"
    # {tmp} first gets the checkpoint that `mc check` of this spec leaves when --timeout stops
    # it (cut to half its size if `truncated`)
    checkpoint_of: str | None = None
    truncated: bool = False
    helper: str | None = None  # helper.py beside the spec, which it may import
    # {tmp}/result.json first gets `mc check --json` of this spec (with these arguments)
    json_of: tuple[str, ...] | None = None
    # the checkpoint of `checkpoint_of` with these settings or counts changed (checksum redone)
    tampered: dict[str, dict[str, object]] | None = None
    fifo: str | None = None  # a named pipe {tmp}/<fifo> that no program reads


CASES = [
    # -- the spec file: 150, before any state is explored
    Case(
        "missing-spec",
        "spec-file",
        150,
        ("{spec}: no such file",),
        source=None,
        name="missing.py",
    ),
    Case(
        "not-python",
        "spec-file",
        150,
        ("{spec}: a spec is a Python file (.py)",),
        "x = 1\n",
        name="a.txt",
    ),
    Case(
        "empty-folder",
        "spec-file",
        150,
        ("{spec}: no spec to check (no .py file in it)",),
        source="/",
        name="specs",
    ),
    Case(
        "syntax-error",
        "spec-file",
        150,
        ("{spec}:3: syntax error: ", "class S(Spec:"),
        "from checker import Spec\n\nclass S(Spec:\n    pass\n",
    ),
    Case(
        "import-error",
        "spec-file",
        150,
        (
            "{spec}:2: importing the spec raised ModuleNotFoundError:"
            " No module named 'no_such_module_here'",
        ),
        "from checker import Spec\nimport no_such_module_here\n",
    ),
    Case(
        "bad-constant-default",
        "spec-file",
        150,
        (
            "{spec}:4: importing the spec raised TypeError: a constant's default must be"
            " an int, bool or str, not 1.5",
        ),
        counter().replace('constant(3, "the largest value")', "constant(1.5)"),
    ),
    Case(
        "no-spec-class",
        "spec-file",
        150,
        ("{spec}: defines no Spec subclass with actions",),
        "x = 1\n",
    ),
    Case(
        "several-specs",
        "spec-file",
        150,
        ("{spec}: defines several specs (Counter, Faster); name one with `spec = <Class>`",),
        counter() + "\nclass Faster(Counter):\n    top = constant(5)\n",
    ),
    Case(
        "no-initial-state",
        "spec-file",
        150,
        ("Counter has no initial state: define init(self)",),
        counter().replace("    def init(self):\n        return Record(x=0)\n", ""),
    ),
    Case(
        "init-returns-nothing",
        "spec-file",
        150,
        ("Counter.init() returned no initial state",),
        counter("[]"),
    ),
    Case(
        "no-actions",
        "spec-file",
        150,
        ("S declares no actions (decorate methods with @action)",),
        "from checker import Record, Spec\n\nclass S(Spec):\n"
        "    def init(self):\n        return Record(x=0)\n",
    ),
    Case(
        "duplicate-action",
        "spec-file",
        150,
        (
            "{spec}:12: Dup.step is defined twice (an @action on line 8, an @action on line 12);"
            " Python would keep only the second: rename one",
        ),
        TWO_ACTIONS.format(second="action"),
    ),
    Case(
        "action-invariant-clash",
        "spec-file",
        150,
        ("{spec}:12: Dup.step is defined twice (an @action on line 8, an @invariant on line 12)",),
        TWO_ACTIONS.format(second="invariant"),
    ),
    Case(
        "undecorated-override",
        "spec-file",
        150,
        ("{spec}: Faster.add overrides an action: decorate it with @action",),
        counter() + "\nclass Faster(Counter):\n    def add(self, s, step):\n        return None\n"
        "\nspec = Faster\n",
    ),
    Case(
        "parameter-without-domain",
        "spec-file",
        150,
        ("{spec}:9: action add: parameter 'step' has no domain in @action(...)",),
        counter().replace("@action(step=(1, 2))", "@action"),
    ),
    Case(
        "rule-without-description",
        "spec-file",
        150,
        (
            "{spec}:23: importing the spec raised TypeError: rule(...) takes the rule's"
            " description, one line from the KIP, not ''",
        ),
        RULED.replace('rule("steps of 2 allowed")', 'rule("")'),
    ),
    Case(
        "invariant-without-state",
        "spec-file",
        150,
        (
            "{spec}:15: @invariant small takes (self): its state parameter is missing; write"
            " (self, s)",
        ),
        counter().replace("def small(self, s):", "def small(self):"),
    ),
    # -- the command line: 151, before any state is explored
    Case(
        "constant-out-of-range",
        "command-line",
        151,
        ("-D top=-1: it must be at least 1 (the largest value)",),
        counter().replace(
            'constant(3, "the largest value")', 'constant(3, "the largest value", min=1)'
        ),
        args=("-D", "top=-1"),
    ),
    Case(
        "assumption-fails",
        "command-line",
        151,
        ("assumption top_is_small does not hold with top=12: the counter stays below 10",),
        counter(
            extra="\n    @assume\n    def top_is_small(self):\n"
            '        """the counter stays below 10"""\n        return self.top < 10\n'
        ).replace("invariant, terminal", "invariant, terminal, assume"),
        args=("-D", "top=12"),
    ),
    Case(
        "misspelt-constant",
        "command-line",
        151,
        ("-D tpo: Counter has no constant 'tpo' (constants: top); did you mean top?",),
        args=("-D", "tpo=5"),
    ),
    Case(
        "unknown-constant",
        "command-line",
        151,
        ("-D nope: Counter has no constant 'nope' (constants: top)",),
        args=("-D", "nope=1"),
    ),
    Case(
        "constant-wrong-type",
        "command-line",
        151,
        ("-D top=three: expected an integer, got 'three'",),
        args=("-D", "top=three"),
    ),
    Case(
        "define-without-value",
        "command-line",
        151,
        ("-D top: expected NAME=VALUE",),
        args=("-D", "top"),
    ),
    Case(
        "unknown-invariant",
        "command-line",
        151,
        ("--invariant nope: Counter has no such invariant (invariants: small)",),
        args=("--invariant", "nope"),
    ),
    Case(
        "output-folder-missing",
        "report-files",
        151,
        ("--json /nonexistent/dir/x.json: cannot write: no such folder /nonexistent/dir",),
        args=("--json", "/nonexistent/dir/x.json"),
    ),
    Case(
        "output-is-a-folder",
        "report-files",
        151,
        ("--json {tmp}: is a folder",),
        args=("--json", "{tmp}"),
    ),
    Case(
        "output-write-fails",
        "report-files",
        151,
        ("--json /dev/full: cannot write: No space left on device",),
        args=("--json", "/dev/full"),
        report=True,
    ),
    Case(
        "graph-write-fails",
        "report-files",
        151,
        ("--dot /dev/full: cannot write: No space left on device",),
        args=("--dot", "/dev/full"),
        command="graph",
    ),
    Case(
        "spark-option-alone",
        "command-line",
        151,
        ("--master is for --engine spark",),
        args=("--master", "x"),
    ),
    Case(
        "corrupt-checkpoint",
        "checkpoints",
        151,
        ("checkpoint {tmp}/checkpoint.mc: corrupt (truncated: ",),
        args=("--resume", "{tmp}"),
        checkpoint_of=SPIN,
        truncated=True,
    ),
    Case(
        "checkpoint-of-another-spec",
        "checkpoints",
        151,
        ("checkpoint {tmp}/checkpoint.mc: a checkpoint of Spin (", "), not of {spec}"),
        args=("--resume", "{tmp}"),
        checkpoint_of=SPIN,
    ),
    # -- mc explore: 151 before it serves (a find expression's errors are shown on the page)
    Case(
        "explore-trace-not-json",
        "command-line",
        151,
        ("--trace {spec}: not a JSON file (Expecting value: line 1 column 1 (char 0))",),
        args=("--trace", "{spec}"),
        command="explore",
    ),
    Case(
        "explore-trace-other-constants",
        "command-line",
        151,
        (
            "--trace {tmp}/result.json: a result with other constants (top=3 there, 4 here):"
            " pass the same -D",
        ),
        args=("-D", "top=4", "--trace", "{tmp}/result.json"),
        command="explore",
        json_of=(),
    ),
    Case(
        "explore-trace-without-trace",
        "command-line",
        151,
        ("--trace {tmp}/result.json: the result has no trace (verdict ok)",),
        args=("--trace", "{tmp}/result.json"),
        command="explore",
        json_of=(),
    ),
    Case(
        "explore-port-in-use",
        "command-line",
        151,
        ("mc: error: --port ", ": cannot listen on 127.0.0.1:", ": in use by another program"),
        args=("--port", "{port}"),
        command="explore",
    ),
    Case(
        "explore-init-raises",
        "spec-raises",
        75,
        ("mc: error: init init: raised KeyError: 'x'",),
        counter(init='Record(x={}["x"])'),
        command="explore",
    ),
    Case(
        "ablate-without-rules",
        "command-line",
        151,
        (
            "{spec}: Counter declares no rules to ablate (declare each rule of the protocol"
            ' change with `name = rule("one line from the KIP")`)',
        ),
        command="ablate",
    ),
    Case(
        "ablate-unknown-rule",
        "command-line",
        151,
        ("--rule nope: Counter has no such rule (rules: fast)",),
        RULED,
        args=("--rule", "nope"),
        command="ablate",
    ),
    Case(
        "ablate-rule-given",
        "command-line",
        151,
        (
            "-D fast: mc ablate switches the rules itself (every rule on, then each off);"
            " choose the rules with --rule",
        ),
        RULED,
        args=("-D", "fast=false"),
        command="ablate",
    ),
    # -- spec code during the run: 75, with the trace to the state
    Case(
        "action-returns-non-state",
        "bad-values",
        75,
        (
            "Error: action add(step=1) returned {'x': 1}; an action returns None, a Record or"
            " a list of Records\n  in state {x: 0}",
        ),
        counter(effect='{"x": 1}'),
        report=True,
    ),
    Case(
        "action-changes-variables",
        "bad-values",
        75,
        (
            "Error: action add(step=1) returned a state with the variable y added and without"
            " the variable x",
        ),
        counter(effect="Record(y=1)"),
        report=True,
    ),
    Case(
        "bool-where-int",
        "bad-values",
        75,
        (
            "Error: action add(step=1) changed the kind of x: int in the initial states, bool in"
            " the state it built (x = True)\n  in state {x: 0}",
            "The behavior up to the state where it failed, 1 state:",
        ),
        counter(effect="s.replace(x=True)"),
        report=True,
    ),
    Case(
        "tuple-where-set",
        "bad-values",
        75,
        (
            "Error: action add(step=1) changed the kind of isr: frozenset of int in the initial"
            " states, tuple of int in the state it built (isr = (0,))",
        ),
        counter(init="Record(x=0, isr={0})", effect="s.replace(x=s.x + step, isr=sorted(s.isr))"),
        report=True,
    ),
    Case(
        "none-where-int",
        "bad-values",
        75,
        (
            "Error: action add(step=1) changed the kind of x: int in the initial states, None in"
            " the state it built (x = None); if x may hold None there, declare it in the spec"
            " class: x: int | None",
        ),
        counter(effect="s.replace(x=None)"),
        report=True,
    ),
    Case(
        "set-of-unhashables",
        "bad-values",
        75,
        (
            "Error: action add(step=1) raised TypeError: unhashable type: 'list'\n"
            "  in state {x: 0}",
            'File "{spec}", line 13, in add',
        ),
        counter(effect="s.replace(x={[1], [2]})"),
        report=True,
    ),
    Case(
        "float-nan",
        "bad-values",
        75,
        (
            "Error: action add(step=1) raised StateError: floats cannot be part of a state"
            " (got nan); use ints",
        ),
        counter(effect='s.replace(x=float("nan"))'),
        report=True,
    ),
    Case(
        "object-in-state",
        "bad-values",
        75,
        ("Error: action add(step=1) raised StateError: a object cannot be part of a state",),
        counter(effect="s.replace(x=object())"),
        report=True,
    ),
    Case(
        "int-too-big",
        "bad-values",
        75,
        (
            "Error: action add(step=1) built a state that cannot be encoded: cannot encode"
            " 1180591620717411303424: integers must fit in 64 bits",
        ),
        counter(effect="s.replace(x=2**70)"),
        report=True,
    ),
    Case(
        "value-nested-too-deep",
        "bad-values",
        75,
        (
            "Error: action add(step=1) built a state that cannot be encoded: a state value"
            " nested deeper than 500 levels\n  in state {x: 0}",
        ),
        counter(
            effect="s.replace(x=__import__('functools').reduce(lambda t, _: (t,), range(600), ()))"
        ),
        report=True,
    ),
    Case(
        "lone-surrogate",
        "bad-values",
        75,
        (
            "Error: action add(step=1) built a state that cannot be encoded: a str that is not"
            " valid Unicode text (a lone surrogate) cannot be part of a state (got '\\udc80')",
        ),
        counter(init='Record(x=0, name="a")', effect='s.replace(x=s.x + step, name="\\udc80")'),
        report=True,
    ),
    Case(
        "generator-raises-midway",
        "spec-raises",
        75,
        (
            "Error: action add() raised ValueError: midway\n  in state {x: 2}",
            'File "{spec}", line 12, in add',
        ),
        GENERATOR,
        report=True,
    ),
    Case(
        "exception-unsayable",
        "spec-raises",
        75,
        (
            "Error: action add(step=1) raised Unsayable: <exception str() failed>\n"
            "  in state {x: 1}",
            'File "{spec}", line 13, in add',
        ),
        counter(
            effect="s.replace(x=s.x + step) if s.x != 1 else Unsayable.throw()",
            extra=(
                "\n\nclass Unsayable(Exception):\n    def __str__(self):\n"
                '        raise ValueError("no words")\n\n    @classmethod\n'
                "    def throw(cls):\n        raise cls()\n"
            ),
        ),
        args=("--workers", "2"),
        report=True,
    ),
    Case(
        "action-not-deterministic",
        "nondeterminism",
        75,
        (
            "mc: error: the spec is not deterministic: in state {x: 0}, action add(step=1) gave"
            " {x: 2} when the state was expanded, and {x: 4} when it was expanded again; an"
            " action must depend only on the state and its parameters",
        ),
        DRIFTS.format(top=10),
    ),
    Case(
        "trace-not-reproduced",
        "nondeterminism",
        75,
        (
            "mc: error: the spec is not deterministic: rebuilding the trace, in state {x: 0},"
            " action add(step=2) gave {x: 6}, a state the search never reached",
        ),
        DRIFTS.format(top=4),
        args=("--recheck", "0"),
    ),
    Case(
        "init-raises",
        "spec-raises",
        75,
        ("Error: init raised KeyError: 'x'", 'File "{spec}", line 7, in init'),
        counter(init='Record(x={}["x"])'),
        report=True,
    ),
    Case(
        "init-where-raises",
        "spec-raises",
        75,
        (
            "Error: init raised ZeroDivisionError: integer division or modulo by zero",
            'File "{spec}", line 7, in <lambda>',
        ),
        counter(init="every(x=range(4), where=lambda s: 1 // (2 - s.x))").replace(
            "invariant, terminal", "invariant, terminal, every"
        ),
        args=("--workers", "2"),
        report=True,
    ),
    Case(
        "action-raises",
        "spec-raises",
        75,
        (
            "Error: action add(step=1) raised ZeroDivisionError: integer division or modulo by"
            " zero\n  in state {x: 1}",
            'File "{spec}", line 13, in add',
            "The behavior up to the state where it failed, 2 states:",
        ),
        counter(effect="s.replace(x=s.x + step) if s.x == 0 else 1 // (s.x - 1)"),
        report=True,
    ),
    Case(
        "invariant-raises",
        "spec-raises",
        75,
        (
            "Error: invariant small raised ZeroDivisionError: integer division or modulo by zero"
            "\n  in state {x: 2}",
            'File "{spec}", line 17, in small',
        ),
        counter(holds="s.x < 10 // (2 - s.x)"),
        report=True,
    ),
    Case(
        "invariant-not-bool",
        "bad-values",
        75,
        ("Error: invariant small returned None; an invariant returns True or False",),
        counter(holds="None"),
        report=True,
    ),
    Case(
        "step-property-not-bool",
        "bad-values",
        75,
        ("Error: step property p returned None; a step property returns True or False",),
        counter(
            extra="\n    @step_property\n    def p(self, s, t):\n        return None\n"
        ).replace("invariant, terminal", "invariant, step_property, terminal"),
        report=True,
    ),
    Case(
        "refinement-mapping-not-a-state",
        "bad-values",
        75,
        (
            "Error: refinement r mapped a state to {y: 0}, which is not a state of Counter (a"
            " Record of x)",
        ),
        counter(
            extra="\nclass Fine(Counter):\n    r = refines(Counter, lambda s: Record(y=s.x))\n"
            "\nspec = Fine\n"
        ).replace("invariant, terminal", "invariant, refines, terminal"),
        report=True,
    ),
    Case(
        "refinement-constants-unknown",
        "spec-file",
        150,
        ("{spec}: Fine.r: the constants of Counter do not fit: no constant 'tops'",),
        counter(
            extra="\nclass Fine(Counter):\n    r = refines(Counter, lambda s: s,"
            " constants={'tops': 1})\n\nspec = Fine\n"
        ).replace("invariant, terminal", "invariant, refines, terminal"),
    ),
    Case(
        "map-declared-record-given",
        "bad-values",
        75,
        (
            "Error: init returned states that mc cannot type: an initial state has x = {a: 0}"
            " (record {a: int}), not map int -> int as declared",
        ),
        counter(init='Record(x={"a": 0})', extra="\n    x: dict[int, int]\n"),
        report=True,
    ),
    # -- spec code that tries to end mc's process: its error, never a pass (issue 23)
    Case(
        "action-exits",
        "spec-ends-the-run",
        75,
        (
            f"Error: action add(step=1) raised SystemExit: 0 {EXITED}\n  in state {{x: 1}}",
            'File "{spec}", line 13, in add',
            "The behavior up to the state where it failed, 2 states:",
        ),
        counter(effect='__import__("sys").exit(0) if s.x == 1 else s.replace(x=s.x + step)'),
        report=True,
    ),
    Case(
        "action-os-exit",
        "spec-ends-the-run",
        75,
        (f"Error: action add(step=1) raised SystemExit: os._exit(0) called {EXITED}",),
        counter(effect='__import__("os")._exit(0) if s.x == 1 else s.replace(x=s.x + step)'),
        report=True,
    ),
    Case(
        "worker-os-exit",
        "spec-ends-the-run",
        75,
        (f"Error: action add(step=1) raised SystemExit: os._exit(0) called {EXITED}",),
        counter(effect='__import__("os")._exit(0) if s.x == 1 else s.replace(x=s.x + step)'),
        args=("--workers", "2"),
        report=True,
    ),
    Case(
        "action-raises-keyboard-interrupt",
        "spec-ends-the-run",
        75,
        (f"Error: action add(step=1) raised KeyboardInterrupt:  {EXITED}",),
        counter(
            effect="(_ for _ in ()).throw(KeyboardInterrupt()) if s.x == 1"
            " else s.replace(x=s.x + step)"
        ),
        report=True,
    ),
    Case(
        "invariant-exits",
        "spec-ends-the-run",
        75,
        (f"Error: invariant small raised SystemExit: 3 {EXITED}\n  in state {{x: 2}}",),
        counter(holds='s.x < 2 or __import__("sys").exit(3)'),
        report=True,
    ),
    Case(
        "import-exits",
        "spec-ends-the-run",
        150,
        ("{spec}:2: importing the spec raised SystemExit: 0",),
        "import sys\nsys.exit(0)\n",
    ),
    # -- a report file that would overwrite an input: 151, before the run
    Case(
        "report-is-the-spec",
        "report-files",
        151,
        ("--json {tmp}/../spec.py: it is an input of this run; it would be lost",),
        args=("--json", "{tmp}/../spec.py"),
    ),
    Case(
        "report-is-an-imported-module",
        "report-files",
        151,
        (
            "--html {tmp}/../helper.py: it is the source of the module helper, which this run"
            " loaded; it would be lost",
        ),
        counter(init="Record(x=self.start)", extra='\n    start = __import__("helper").START\n'),
        args=("--html", "{tmp}/../helper.py"),
        helper="START = 0\n",
    ),
    Case(
        "report-is-the-checkpoint",
        "report-files",
        151,
        ("--json {tmp}/checkpoint.mc: it is an input of this run; it would be lost",),
        args=("--checkpoint", "{tmp}", "--json", "{tmp}/checkpoint.mc"),
    ),
    Case(
        "two-reports-one-file",
        "report-files",
        151,
        ("--json {tmp}/out and --html {tmp}/out: the same file; each report needs its own",),
        args=("--json", "{tmp}/out", "--html", "{tmp}/out"),
    ),
    Case(
        "report-empty-path",
        "report-files",
        151,
        ("--json '': an empty path; give the file to write",),
        args=("--json", ""),
    ),
    Case(
        "define-not-utf8",
        "command-line",
        151,
        ("-D top=\\xff: not UTF-8 text",),
        args=("-D", "top=\udcff"),
    ),
    Case(
        "timeout-not-a-number",
        "command-line",
        151,
        ("Invalid value for '--timeout': not a number of seconds",),
        args=("--timeout", "nan"),
    ),
    Case(
        "timeout-infinite",
        "command-line",
        151,
        ("Invalid value for '--timeout': inf is not in the range 0<x<=315360000.0.",),
        args=("--timeout", "inf"),
    ),
    Case(
        "endless-domain",
        "spec-file",
        150,
        (
            "{spec}:9: action add: the domain of 'step' has no end, more than the 1,000,000 that"
            " mc takes (an endless iterator such as itertools.count()?): give a finite domain",
        ),
        counter().replace("@action(step=(1, 2))", "@action(step=__import__('itertools').count(1))"),
    ),
    Case(
        "load-never-ends",
        "bounds-and-hangs",
        152,
        (
            "{spec}: stopped by --timeout 0.5 s while loading the spec (importing it, checking"
            " its constants or compiling it never ended); nothing was explored",
        ),
        "while True:\n    pass\n" + counter(),
        args=("--timeout", "0.5"),
    ),
    Case(
        "report-named-pipe-unread",
        "report-files",
        151,
        ("--json {tmp}/pipe: a named pipe that no program reads: start its reader first",),
        args=("--json", "{tmp}/pipe"),
        fifo="pipe",
        report=True,
    ),
    Case(
        "checkpoint-out-of-range",
        "checkpoints",
        151,
        (
            "checkpoint {tmp}/checkpoint.mc: corrupt (setting 'max_depth' is 0, not a number"
            " from 1)",
        ),
        args=("--resume", "{tmp}"),
        checkpoint_of=SPIN,
        tampered={"settings": {"max_depth": 0}},
    ),
    Case(
        "liveness-under-view",
        "command-line",
        151,
        (
            "{spec}: temporal properties cannot be checked under the spec's view (it merges"
            " states, so a cycle among them need not be a behaviour): use --no-view, or"
            " --no-liveness to check only the invariants with the view",
        ),
        VIEWED,
        args=("--view",),
    ),
    Case(
        "workers-beyond-the-cpus",
        "command-line",
        0,
        (
            "mc: note: --workers 100000: this machine lets mc use ",
            " worker processes (the result is the same for any number)",
        ),
        args=("--workers", "100000", "--no-deadlock"),
        report=True,
    ),
    # -- the machine's resources: 153, with the partial counts (exact) and what to do
    Case(
        "out-of-memory",
        "resources",
        153,
        (
            "Error: the search could not go on: out of memory while expanding level 2. No"
            " violation in the 3 states explored (their counts below are exact), but this is"
            " not a proof.\nTo go further: lower --memory",
            "3 distinct states found",
        ),
        counter(effect="s.replace(x=s.x + step) if s.x != 1 else bytearray(1 << 62)"),
        report=True,
    ),
    Case(
        "worker-killed",
        "resources",
        153,
        (
            "Error: the search could not go on: worker process 0 died (killed by SIGKILL) while"
            " expanding level 2. No violation in the 3 states explored",
            "If memory ran out (the kernel's out-of-memory killer sends SIGKILL), use fewer"
            " --workers",
        ),
        counter(
            effect="s.replace(x=s.x + step) if s.x != 1 else self.die()",
            extra=(
                "\n    def die(self):  # in a worker: a kill here would end the tests\n"
                '        if __import__("multiprocessing").parent_process() is not None:\n'
                '            __import__("os").kill(__import__("os").getpid(), 9)\n'
                '        raise RuntimeError("not in a worker process")\n'
            ),
        ),
        args=("--workers", "2"),
        report=True,
    ),
    # -- what never happened: warnings after the verdict, 15 with --strict
    Case(
        "return-forgotten",
        "silent-passes",
        15,
        (
            "All invariants hold over 4 distinct states.\n"
            "Warning: reset was never enabled: is its guard or its return wrong?",
            "Error: --strict: 1 warning about what never happened (exit 15).",
        ),
        counter(
            extra="\n    @action\n    def reset(self, s):\n        if s.x == 3:\n"
            "            s.replace(x=0)\n"
        ),
        args=("--strict",),
        report=True,
    ),
    Case(
        "action-not-declared",
        "silent-passes",
        15,
        (
            "Warning: reset ({spec}:23) looks like an action, (self, s, ...) returning"
            " s.replace(...), but is not declared and nothing calls it: decorate it with"
            " @action?",
        ),
        counter(
            extra="\n    def reset(self, s):\n        return s.replace(x=0) if s.x == 3 else None\n"
        ),
        args=("--strict",),
        report=True,
    ),
    Case(
        "empty-domain",
        "silent-passes",
        15,
        ("Warning: reset was never tried: the domain of its parameter to is empty",),
        counter(extra="\n    @action(to=())\n    def reset(self, s, to):\n        return s\n"),
        args=("--strict",),
        report=True,
    ),
    # -- bounds: 152, partial counts
    Case(
        "max-states",
        "bounds-and-hangs",
        152,
        ("Search incomplete: --max-states 2 reached", "2 distinct states found"),
        args=("--max-states", "2"),
        report=True,
    ),
    Case(
        "guard-never-returns",
        "bounds-and-hangs",
        152,
        (
            "Search incomplete: --timeout 0.5 s reached",
            "2 distinct states found",
            "mc: stopped by --timeout 0.5 s while evaluating action spin(k=1) at {spec}:9"
            " in state {n: 1}",
        ),
        SPIN,
        args=("--timeout", "0.5"),
        report=True,
    ),
    # -- the engine: 153, before the spec is even loaded
    Case(
        "spark-master-unreachable",
        "spark",
        153,
        (
            "--master spark://127.0.0.1:1: no Spark master answers (127.0.0.1:1: Connection"
            " refused)",
        ),
        args=("--engine", "spark", "--master", "spark://127.0.0.1:1"),
    ),
]

ERROR_CODES = {75, 150, 151, 153}  # 152 is a bound, 15 a warning: --debug adds nothing


def _run(mc, tmp_path, case: Case, *flags: str):
    path = tmp_path / case.name
    if case.source == "/":
        path.mkdir()
    elif case.source is not None:
        path.write_text(case.source)
    if case.helper is not None:
        (tmp_path / "helper.py").write_text(case.helper)
        sys.modules.pop("helper", None)  # another case's, imported by an in-process run
    work = tmp_path / "work"
    work.mkdir()
    if case.checkpoint_of is not None:
        other = tmp_path / "other.py"
        other.write_text(case.checkpoint_of)
        stopped = mc("check", other, "--checkpoint", work, "--timeout", "0.2", "--progress", "0")
        assert stopped.code == 152 and "mc: checkpoint at level 2" in stopped.err
        if case.truncated:
            saved = work / "checkpoint.mc"
            saved.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
        if case.tampered is not None:
            tamper(work / "checkpoint.mc", case.tampered)
    if case.fifo is not None:
        os.mkfifo(work / case.fifo)
    if case.json_of is not None:
        report = work / "result.json"
        assert mc("check", path, *case.json_of, "--json", report, "--progress", "0").code == 0
    args = [a.replace("{tmp}", str(work)).replace("{spec}", str(path)) for a in case.args]
    if "/dev/full" in args and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with socket.socket() as busy:  # {port}: a port another program listens on
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        args = [a.replace("{port}", str(busy.getsockname()[1])) for a in args]
        result = mc(*flags, case.command, path, *args)
    if case.source is not None and case.source != "/":
        assert path.read_text() == case.source  # nothing mc does may overwrite the spec
    if case.helper is not None:
        assert (tmp_path / "helper.py").read_text() == case.helper
    return result, path, work


def tamper(path, changes: dict[str, dict[str, object]]) -> None:
    """Change fields of a checkpoint's header (`changes`: part -> field -> value) and write it
    back with its checksum redone: a file as mc would have written it, with values out of
    range (what a checksum cannot catch)."""
    data = path.read_bytes()
    body = data[checkpoint.FRAME.size :]
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=len(body) + 1)
    unpacker.feed(body)
    header = unpacker.unpack()
    rest = body[unpacker.tell() :]
    for part, fields in changes.items():
        header[part].update(fields)
    body = msgpack.packb(header, use_bin_type=True) + rest
    frame = checkpoint.FRAME.pack(checkpoint.MAGIC, len(body), hashlib.sha256(body).digest())
    path.write_bytes(frame + body)


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=pytest.mark.fault(c.family)) for c in CASES]
)
def test_bad_input_gets_its_exit_code_and_message(mc, tmp_path, case):
    result, path, work = _run(mc, tmp_path, case)
    both = result.out + result.err
    assert result.code == case.code, both
    for message in case.messages:
        assert message.replace("{spec}", str(path)).replace("{tmp}", str(work)) in both
    assert result.out.startswith("Checking ") == case.report
    assert PYTHON_TRACEBACK not in both


# A search that could not go on (out of memory, a worker killed) has no traceback of mc's to add
DEBUGGED = [c for c in CASES if c.code in ERROR_CODES and c.family != "resources"]


@pytest.mark.parametrize("case", DEBUGGED, ids=lambda c: c.id)
def test_debug_adds_a_python_traceback(mc, tmp_path, case):
    result, _, _ = _run(mc, tmp_path, case, "--debug")
    assert result.code == case.code
    assert PYTHON_TRACEBACK in result.out + result.err
    assert not EvaluationError.engine_frames  # reset: later in-process runs are not --debug


def _mc_without_java(tmp_path, *flags: str) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "spec.py"
    spec.write_text(counter())
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java on it (Python itself is run by its full path)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "checker", *flags, "check", str(spec), "--engine", "spark"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


@pytest.mark.fault("spark")
def test_java_missing(tmp_path):
    proc = _mc_without_java(tmp_path)
    assert proc.returncode == 153
    assert "the Spark engine needs Java 17 or newer, and no `java` was found" in proc.stderr
    assert "install it, e.g. with scripts/ensure-java.sh" in proc.stderr
    assert proc.stdout == "" and PYTHON_TRACEBACK not in proc.stderr
    debug = _mc_without_java(tmp_path, "--debug")
    assert debug.returncode == 153 and PYTHON_TRACEBACK in debug.stderr


@pytest.mark.fault("report-files")
@pytest.mark.parametrize("closer", ["shell", "spec"])
def test_standard_output_closed(tmp_path, closer):
    """`mc check spec.py >&-`, or spec code that closes mc's standard output: the report cannot
    be written, which mc says (151) instead of a traceback."""
    spec = tmp_path / "spec.py"
    effect = "s.replace(x=s.x + step)"
    if closer == "spec":
        effect = f'__import__("sys").stdout.close() or {effect}'
    spec.write_text(counter(effect=effect))
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "check", str(spec)],
        stdout=subprocess.PIPE if closer == "spec" else None,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=(lambda: os.close(1)) if closer == "shell" else None,
    )
    assert proc.returncode == 151, proc.stderr
    assert (
        "mc: error: standard output is closed (by the shell with >&-, by its reader, or by spec"
        " code): the report cannot be written; the exit code is not the verdict's"
    ) in proc.stderr
    assert PYTHON_TRACEBACK not in proc.stderr


def test_the_timeout_is_disarmed_after_the_run(mc, write_spec):
    before = signal.getsignal(signal.SIGALRM)
    result = mc("check", write_spec(counter()), "--timeout", "600")
    assert result.code == 0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before


def test_decorating_in_place_is_no_duplicate(mc, write_spec):
    spec = write_spec(
        """\
        from checker import Record, Spec, action, invariant

        class S(Spec):
            def init(self):
                return Record(x=0)

            def step(self, s):
                return s.replace(x=1)
            step = action(step)

            def small(self, s):
                return s.x < 2
            small = invariant(small)
        """
    )
    result = mc("check", spec)
    assert result.code == 0 and "All invariants hold over 2 distinct states." in result.out


def test_every_row_of_docs_errors_md_is_a_case_here():
    doc = (ROOT / "docs" / "errors.md").read_text()
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \|.*\| (\d+) \|$", doc, flags=re.MULTILINE))
    # Tested where Java or a cluster is at hand: test_spark_engine.py, test_cli.py (without
    # pyspark) and test_spark_cluster.py (an executor Python without msgpack).
    elsewhere = {
        "java-missing": "153",
        "pyspark-missing": "153",
        "executor-module-missing": "153",
        "werkzeug-missing": "153",  # tests/explore/test_server.py
        "stdout-closed": "151",  # test_standard_output_closed, above (a subprocess)
    }
    tested = {c.id: str(c.code) for c in CASES} | elsewhere
    assert rows == tested
    assert len(rows) >= 20


# The mistakes of issue 15's table, each of which ended in "All invariants hold", exit 0:
# each is a case above whose run now fails with a clear message.
ISSUE_15 = {
    "an action's return forgotten (never enabled)": "return-forgotten",
    "@action forgotten on a method": "action-not-declared",
    "an empty domain, @action(f=())": "empty-domain",
    "faults=True where the bound counter is an int": "bool-where-int",
    "isr=sorted(...) where the variable is a frozenset": "tuple-where-set",
    "@invariant def small(self), the state parameter forgotten": "invariant-without-state",
    "-D max_faults=-1": "constant-out-of-range",
}


@pytest.mark.parametrize("row", ISSUE_15, ids=list(ISSUE_15.values()))
def test_each_silent_pass_of_issue_15_now_fails(mc, tmp_path, row):
    case = next(c for c in CASES if c.id == ISSUE_15[row])
    result, _, _ = _run(mc, tmp_path, case)
    assert result.code == case.code != 0
