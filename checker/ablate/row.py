"""One row of an ablation: the checks of one configuration (every rule on, or some off).

One `mc check` stops at the first violation, so a row is a sequence of checks: each is the
`mc check` of the row's constants with the properties not yet broken; a violated invariant
(or a deadlock, or a temporal property) is recorded with its counterexample and left out of
the next check, until one check ends without a violation. Breadth-first search makes each
recorded counterexample the shortest for its invariant (a shorter one would have been found
first). The last check explores the whole state space: its counts are the row's, and it
settles the reachability properties, then the temporal properties (mc check checks those only
once every reachability property is reached: a row where one is not checks again without
them). Each check goes through `check_once`, the one place that runs a check, the same path
as `mc check`.

A row is JSON in and out (its task, its row), so that it can run in a child process; what its
checks print on stderr becomes its notes, but their progress lines become status messages
(`say`) for the command's own progress.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from checker import run
from checker.ablation import (
    ERROR,
    HOLDS,
    OFF,
    UNKNOWN,
    UNREACHED,
    VIOLATED,
    Cell,
    Column,
    Row,
    Settings,
)
from checker.errors import Interrupted, McError, RunTimeout
from checker.model import Model
from checker.reports import html
from checker.reports.graph import describe_action
from checker.result import CheckResult
from checker.search.options import Options
from checker.spec import all_rules_of, constants_of, rules_of, switches_of
from checker.steps import StepChecks

Say = Callable[[Any], None]
PROGRESS_EVERY = 0.5  # seconds between a row's progress messages to the command


# -- one check ---------------------------------------------------------------------------------


def check_once(
    path: str,
    constants: Mapping[str, str],
    invariants: Sequence[str],
    properties: Sequence[str] | None,
    settings: Settings,
    symmetry: bool | None,
    spark_engine: Any = None,
    reachables: Sequence[str] | None = None,
    view: bool | None = None,
    steps: Sequence[str] | None = None,
    live_bytes: int | None = None,
    progress: float = 0.0,
) -> tuple[Model, CheckResult]:
    """`mc check PATH -D ... --invariant ... --property ...` (`properties` None:
    --no-liveness; no invariant: --no-invariants), the way the CLI runs it. The one place
    an ablation runs a check. `reachables`: only these reachability properties, `steps`: only
    these step properties and refinements (mc check has no option for them: its model has the
    others taken out). `live_bytes`: the row's share of memory for live states (mc check's
    --memory); `progress`: seconds between progress lines on stderr (0: none)."""
    memory = {} if live_bytes is None else {"live_bytes": live_bytes}
    config = run.Config(
        Options(deadlock=settings.deadlock, max_states=settings.max_states, **memory),
        no_invariants=not invariants,
        properties=None if properties is None else tuple(properties),
        symmetry=symmetry,
        view=view,
        timeout=settings.timeout,
        progress=progress,
    )
    loaded = run.load(path, dict(constants), config, invariants=list(invariants) or None)
    model = loaded.model
    if reachables is not None:
        model.reachables = tuple(r for r in model.reachables if r.name in reachables)
    if steps is not None and model.steps is not None:
        kept = [c for c in model.steps.checks if c.name in steps]
        model.steps = StepChecks(kept) if kept else None
    return model, run.check(loaded, config, spark_engine)


def run_row(
    task: dict[str, Any], say: Say | None = None, spark_engine: Any = None
) -> dict[str, Any]:
    """Run one row's checks (see the module's docstring); `task` and the row are JSON-able.
    `say`: called with the row's progress (its check, level, states, rate) as it runs.
    Ctrl-C or SIGTERM (in the command's own process: a Spark row) stops the whole ablation:
    Interrupted is raised, not a row."""
    settings = Settings(**task["settings"])
    columns = [Column(**c) for c in task["columns"]]
    row = Row(task["name"], list(task["off"]), dict(task["constants"]))
    invariants = [c.name for c in columns if c.kind == "invariant"]
    properties = [c.name for c in columns if c.kind == "property"]
    steps = [c.name for c in columns if c.kind == "step"]
    deadlock = settings.deadlock
    reachables: list[str] | None = None  # all of them
    notes = _Notes(say, row)
    model = result = None
    with contextlib.redirect_stderr(notes):
        while True:
            started = time.perf_counter()
            current = Settings(deadlock, settings.liveness, settings.timeout, settings.max_states)
            try:
                model, result = check_once(
                    task["path"],
                    row.constants,
                    invariants,
                    properties or None,
                    current,
                    task["symmetry"],
                    spark_engine,
                    reachables,
                    task["view"],
                    steps,
                    task.get("live_bytes"),
                    PROGRESS_EVERY if say is not None else 0.0,
                )
            except RunTimeout:  # the timer fired outside the search (a --timeout that tiny)
                row.seconds += time.perf_counter() - started
                row.checks += 1
                return _stopped(row, columns, f"--timeout {settings.timeout:g} s reached", notes)
            row.seconds += time.perf_counter() - started
            row.checks += 1
            if result.verdict == "incomplete" and result.bound == "interrupted":
                raise Interrupted("interrupted")  # Ctrl-C or SIGTERM: the whole ablation
            broken = _broken(result)
            if broken is None and result.unreached and properties and reachables is None:
                # mc check does not go on to the temporal properties once a reachability
                # property is unreached: settle those, then check again without them.
                _settle_reachables(row, columns, model, result)
                reachables = []
                continue
            if broken is None:
                break
            cell = _counterexample(result)
            cell.report = _write_report(task, broken, result)
            row.cells[broken] = cell
            if broken == "deadlock":
                deadlock = False
            elif broken in invariants:
                invariants.remove(broken)
            elif broken in steps:
                steps.remove(broken)
            else:
                properties.remove(broken)
    assert model is not None and result is not None
    _settle(row, columns, model, result)
    row.cells = {c.name: row.cells[c.name] for c in columns}
    row.switched_off = _switched_off(model)
    row.notes = notes.lines()
    return asdict(row)


def row_or_error(
    task: dict[str, Any], say: Say | None = None, spark_engine: Any = None
) -> dict[str, Any]:
    """The row, or one whose cells all say why it could not be checked: a constant the rule's
    value makes an @assume refuse, or mc itself failing (a bug to report)."""
    try:
        return run_row(task, say, spark_engine)
    except McError as exc:
        return lost(task, str(exc))
    except Exception as exc:
        return lost(task, f"mc failed: {type(exc).__name__}: {exc} (a bug in mc)")


def lost(task: dict[str, Any], why: str, status: str = ERROR) -> dict[str, Any]:
    """The row of a task that has no verdicts: every cell `status`, saying `why`."""
    row = Row(task["name"], list(task["off"]), dict(task["constants"]))
    row.cells = {c["name"]: Cell(status, detail=why) for c in task["columns"]}
    row.notes = [f"{task['name']}: {why}"]
    return asdict(row)


def _stopped(row: Row, columns: Sequence[Column], bound: str, notes: _Notes) -> dict[str, Any]:
    row.stopped = bound
    for c in columns:
        row.cells.setdefault(c.name, Cell(UNKNOWN, detail=bound))
    row.cells = {c.name: row.cells[c.name] for c in columns}
    row.notes = notes.lines()
    return asdict(row)


# "Progress(3) at 00:00:01: 1,234 states generated (1,234 s/s), 567 distinct states found
# (567 ds/s), 8 states left on queue." (checker.progress)
_PROGRESS = re.compile(
    r"^Progress\((\d+)\) at [\d:]+: ([\d,]+) states generated \(([\d,]+) s/s\),"
    r" ([\d,]+) distinct states found \(([\d,]+) ds/s\)"
)


class _Notes(io.StringIO):
    """A row's stderr: its checks' progress lines go to `say`, the rest are its notes."""

    def __init__(self, say: Say | None, row: Row) -> None:
        super().__init__()
        self.say = say
        self.row = row
        self._kept: list[str] = []
        self._partial = ""

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)
        return len(text)

    def _line(self, line: str) -> None:
        match = _PROGRESS.match(line)
        if match is None:
            if line.strip():
                self._kept.append(line)
            return
        if self.say is not None:
            depth, _, _, distinct, rate = (int(g.replace(",", "")) for g in match.groups())
            self.say(
                {"check": self.row.checks + 1, "depth": depth, "distinct": distinct, "rate": rate}
            )

    def lines(self) -> list[str]:
        rest = [self._partial] if self._partial.strip() else []
        return sorted(set(self._kept + rest))


def _broken(result: CheckResult) -> str | None:
    """The column a check's counterexample breaks (a deadlock, an invariant, a temporal
    property), or None if it ended otherwise."""
    if result.verdict == "deadlock":
        return "deadlock"
    if result.verdict == "violation" and result.invariant is not None:
        return result.invariant
    if result.verdict == "violation" and result.step_property is not None:
        return result.step_property
    if result.verdict == "violation" and result.property is not None:
        return result.property.split("(")[0]  # `name(b=1)`: one binding of `name`
    return None


def _counterexample(result: CheckResult) -> Cell:
    binding = result.property if result.property and "(" in result.property else ""
    return Cell(
        VIOLATED,
        length=len(result.trace),
        loop_start=result.loop_start,
        detail=binding,
        actions=[describe_action(s.action, s.params) for s in result.trace[1:]],
    )


def _settle(row: Row, columns: Sequence[Column], model: Model, result: CheckResult) -> None:
    """The cells the row's last check decides: what it did not find broken."""
    row.distinct_states = result.distinct_states
    row.states_generated = result.states_generated
    row.complete = result.complete
    searched = result.verdict == "ok" or (result.verdict == "violation" and bool(result.unreached))
    if not searched:
        status = ERROR if result.verdict == "error" else UNKNOWN
        detail = _error_text(result) if result.verdict == "error" else result.bound or ""
        if status == UNKNOWN:
            row.stopped = detail
        for c in columns:
            row.cells.setdefault(c.name, Cell(status, detail=detail))
        return
    _settle_reachables(row, columns, model, result)
    for c in columns:
        row.cells.setdefault(c.name, Cell(HOLDS))


def _settle_reachables(
    row: Row, columns: Sequence[Column], model: Model, result: CheckResult
) -> None:
    """The reachability properties' cells, from a check that explored every state."""
    for c in columns:
        if c.kind != "reachable" or c.name in row.cells:
            continue
        if c.name in model.compiled.reachables_off:
            row.cells[c.name] = Cell(OFF, detail=model.compiled.reachables_off[c.name])
        elif c.name in result.unreached:
            row.cells[c.name] = Cell(UNREACHED)
        else:
            row.cells[c.name] = Cell(HOLDS, depth=result.reached.get(c.name))


def _error_text(result: CheckResult) -> str:
    error = result.error
    if error is None:
        return ""
    what = error.kind if error.name == error.kind else f"{error.kind} {error.name}"
    return f"{what}: {error.message}"


def _switched_off(model: Model) -> dict[str, Any]:
    """The constants (not rules) whose value switches actions or reachability properties off
    in this row: what to raise when a rule's removal breaks nothing."""
    spec = model.spec
    cls = type(spec)
    rules = set(rules_of(cls)) | {all_rules_of(cls)}
    switches: list[tuple[str, ...]] = [switches_of(a.fn) for a in model.actions]
    switches += [switches_of(getattr(cls, n)) for n in model.compiled.reachables_off]
    names = {
        n
        for group in switches
        if group and not any(getattr(spec, c) for c in group)
        for n in group
        if n not in rules
    }
    return {n: getattr(spec, n) for n in constants_of(cls) if n in names}


def _write_report(task: dict[str, Any], column: str, result: CheckResult) -> str | None:
    """The counterexample's HTML report (mc check --html), beside the ablation's page."""
    folder = task.get("report_dir")
    if not folder:
        return None
    os.makedirs(folder, exist_ok=True)  # made by the first counterexample
    name = f"{_slug(task['name'])}--{_slug(column)}.html"
    html.write(result, os.path.join(folder, name))
    return f"{task['report_prefix']}/{name}"


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text).strip("_") or "all"
