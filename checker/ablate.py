"""`mc ablate`: what breaks without each rule of a KIP, in one table.

A spec declares the rules of its protocol change (`rule(...)` in checker.spec). An ablation
checks the spec with every rule on, then with each rule off alone (and, asked, each pair
off), and gives a row per configuration: for each invariant, reachability and temporal
property (and deadlock freedom), whether it holds or the length of its shortest
counterexample, and the states explored.

One `mc check` stops at the first violation, so a row is a sequence of checks: each is the
`mc check` of the row's constants with the properties not yet broken; a violated invariant
(or a deadlock, or a temporal property) is recorded with its counterexample and left out of
the next check, until one check ends without a violation. Breadth-first search makes each
recorded counterexample the shortest for its invariant (a shorter one would have been found
first). The last check explores the whole state space: its counts are the row's, and it
settles the reachability properties, then the temporal properties (mc check checks those only
once every reachability property is reached: a row where one is not checks again without
them).

Rows are independent: `workers` of them run side by side, each in a forked process that
receives its task and returns its row as JSON (never pickle). With the Spark engine the rows
run one after another on the one Spark session. Each check goes through `check_once`, the
one place that runs a check, the same path as `mc check`.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from multiprocessing.connection import Connection, wait
from typing import Any

from checker import batch, liveness, run
from checker.errors import ConfigError, ExitCode, McError
from checker.loader import load_model, load_spec_class
from checker.model import Model
from checker.reports.graph import describe_action
from checker.result import CheckResult
from checker.search.options import Options
from checker.spec import all_rules_of, constants_of, rules_of, switches_of
from checker.steps import StepChecks

ALL_ON = "(every rule on)"
# What a cell says. "violated" also stands for a deadlock found and a temporal property's
# lasso; "off": a reachability property the row's constants switch off; "unknown": the row's
# search was stopped (a bound) before deciding it; "error": spec code raised.
HOLDS, VIOLATED, UNREACHED, OFF = "holds", "violated", "unreached", "off"
ERROR, UNKNOWN = "error", "unknown"
BROKEN = (VIOLATED, UNREACHED)


@dataclass(frozen=True)
class Settings:
    """How every check of an ablation runs (`mc check`'s options that apply)."""

    deadlock: bool = True
    liveness: bool = True
    timeout: float | None = None  # per check, in seconds
    max_states: int | None = None


@dataclass
class Column:
    name: str
    kind: str  # "deadlock", "invariant", "reachable", "step" or "property"
    doc: str = ""


@dataclass
class Cell:
    status: str
    length: int | None = None  # states of the counterexample (a lasso's prefix and cycle)
    loop_start: int | None = None  # a lasso's: the state the cycle goes back to (from 0)
    depth: int | None = None  # a reachability property's: where it was first reached
    detail: str = ""  # the binding of a temporal property, an error's message, ...
    actions: list[str] = field(default_factory=list)  # the counterexample's steps
    report: str | None = None  # its HTML report, relative to the ablation's page


@dataclass
class Row:
    name: str  # ALL_ON, a rule, or "a + b"
    off: list[str]  # the rules switched off
    constants: dict[str, str]  # -D of its checks (the rules off as "false")
    cells: dict[str, Cell] = field(default_factory=dict)
    distinct_states: int = 0  # of its last check (the whole state space when complete)
    states_generated: int = 0
    complete: bool = False  # the last check explored every reachable state
    checks: int = 0
    seconds: float = 0.0  # wall time of its checks, one after another
    switched_off: dict[str, Any] = field(default_factory=dict)  # constants that switch parts off
    notes: list[str] = field(default_factory=list)  # what its checks said on stderr
    flag: str | None = None  # why nothing broke, for a rule whose removal breaks nothing

    @property
    def broken(self) -> list[str]:
        return [name for name, cell in self.cells.items() if cell.status in BROKEN]


@dataclass
class Ablation:
    spec: str
    spec_name: str
    title: str
    constants: dict[str, str]  # the -D of every row
    all_rules: str | None  # the constant that switches every rule (`fixed`)
    rules: dict[str, str]  # name -> one line from the KIP
    columns: list[Column]
    rows: list[Row]
    settings: Settings
    workers: int
    engine: str
    only: list[str] = field(default_factory=list)  # the rules --rule asked for (none: all)
    pairs: bool = False
    bounds: dict[str, int] = field(default_factory=dict)  # the int constants (to raise)
    seconds: float = 0.0  # wall time of the whole ablation

    @property
    def command(self) -> str:
        """The `mc ablate` command line of this table (without --workers and the reports)."""
        args = [f"-D {k}={v}" for k, v in self.constants.items()]
        args += [f"--rule {r}" for r in self.only]
        flags = (
            (self.pairs, "--pairs"),
            (not self.settings.liveness, "--no-liveness"),
            (not self.settings.deadlock, "--no-deadlock"),
        )
        args += [flag for wanted, flag in flags if wanted]
        if self.settings.max_states is not None:
            args.append(f"--max-states {self.settings.max_states}")
        if self.settings.timeout is not None:
            args.append(f"--timeout {self.settings.timeout:g}")
        return " ".join(["mc ablate", self.spec, *args])

    @property
    def checks_seconds(self) -> float:
        """The rows' checks, each timed in its own process: with rows side by side on busy
        cores, more than `--workers 1` takes (that is the time to compare with)."""
        return sum(r.seconds for r in self.rows)

    @property
    def flagged(self) -> list[Row]:
        return [r for r in self.rows if r.flag]

    @property
    def exit_code(self) -> int:
        """Whether every check with every rule on held: the worst exit code of that row's
        cells, as `mc check` would give each (0 when all hold)."""
        codes = []
        for column in self.columns:
            cell = self.rows[0].cells[column.name]
            if cell.status == VIOLATED:
                kinds = {"deadlock": ExitCode.DEADLOCK, "property": ExitCode.LIVENESS}
                codes.append(int(kinds.get(column.kind, ExitCode.VIOLATION)))
            elif cell.status == UNREACHED:
                codes.append(int(ExitCode.VIOLATION))
            elif cell.status == ERROR:
                codes.append(int(ExitCode.EVALUATION_ERROR))
            elif cell.status == UNKNOWN:
                codes.append(int(ExitCode.INCOMPLETE))
        return batch.worst(codes)

    def as_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["exit_code"] = self.exit_code
        doc["checks_seconds"] = round(self.checks_seconds, 6)
        doc["seconds"] = round(self.seconds, 6)
        for row in doc["rows"]:
            row["seconds"] = round(row["seconds"], 6)
        return doc


# -- one check ---------------------------------------------------------------------------------


def check_once(
    path: str,
    constants: Mapping[str, str],
    invariants: Sequence[str],
    properties: Sequence[str] | None,
    settings: Settings,
    symmetry: bool | None,
    explorer: Any = None,
    reachables: Sequence[str] | None = None,
    view: bool | None = None,
    steps: Sequence[str] | None = None,
) -> tuple[Model, CheckResult]:
    """`mc check PATH -D ... --invariant ... --property ...` (`properties` None:
    --no-liveness; no invariant: --no-invariants), the way the CLI runs it. The one place
    an ablation runs a check. `reachables`: only these reachability properties, `steps`: only
    these step properties and refinements (mc check has no option for them: its model has the
    others taken out)."""
    config = run.Config(
        Options(deadlock=settings.deadlock, max_states=settings.max_states),
        no_invariants=not invariants,
        properties=None if properties is None else tuple(properties),
        symmetry=symmetry,
        view=view,
        timeout=settings.timeout,
    )
    loaded = run.load(path, dict(constants), config, invariants=list(invariants) or None)
    model = loaded.model
    if reachables is not None:
        model.reachables = tuple(r for r in model.reachables if r.name in reachables)
    if steps is not None and model.steps is not None:
        kept = [c for c in model.steps.checks if c.name in steps]
        model.steps = StepChecks(kept) if kept else None
    return model, run.check(loaded, config, explorer)


# -- a row ---------------------------------------------------------------------------------------


def run_row(task: dict[str, Any], explorer: Any = None) -> dict[str, Any]:
    """Run one row's checks (see the module's docstring); `task` and the row are JSON-able."""
    settings = Settings(**task["settings"])
    columns = [Column(**c) for c in task["columns"]]
    row = Row(task["name"], list(task["off"]), dict(task["constants"]))
    invariants = [c.name for c in columns if c.kind == "invariant"]
    properties = [c.name for c in columns if c.kind == "property"]
    steps = [c.name for c in columns if c.kind == "step"]
    deadlock = settings.deadlock
    reachables: list[str] | None = None  # all of them
    notes = io.StringIO()
    model = result = None
    with contextlib.redirect_stderr(notes):
        while True:
            started = time.perf_counter()
            current = Settings(deadlock, settings.liveness, settings.timeout, settings.max_states)
            model, result = check_once(
                task["path"],
                row.constants,
                invariants,
                properties or None,
                current,
                task["symmetry"],
                explorer,
                reachables,
                task["view"],
                steps,
            )
            row.seconds += time.perf_counter() - started
            row.checks += 1
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
    row.notes = sorted({line for line in notes.getvalue().splitlines() if line.strip()})
    return asdict(row)


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
    return "" if error is None else f"{error.kind} {error.name}: {error.message}"


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
    from checker.reports import html

    name = f"{_slug(task['name'])}--{_slug(column)}.html"
    html.write(result, os.path.join(folder, name))
    return f"{task['report_prefix']}/{name}"


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text).strip("_") or "all"


# -- the table -------------------------------------------------------------------------------


def ablate(
    path: str,
    defines: Mapping[str, str],
    *,
    rules: Sequence[str] = (),
    pairs: bool = False,
    settings: Settings | None = None,
    workers: int = 1,
    explorer: Any = None,
    report_dir: str | None = None,
    on_row: Callable[[Row], None] | None = None,
) -> Ablation:
    """Check the spec at `path` with every rule on, then with each rule off alone (`rules`:
    only those; `pairs`: each pair too), `workers` rows side by side (`explorer`: the Spark
    engine's, rows one after another). With `report_dir`, each counterexample's HTML report
    is written there."""
    settings = settings or Settings()
    started = time.perf_counter()
    ablation, tasks = plan(path, defines, rules, pairs, settings, workers, explorer)
    if report_dir is not None:
        os.makedirs(report_dir, exist_ok=True)
        for task in tasks:
            task["report_dir"] = os.path.abspath(report_dir)
            task["report_prefix"] = os.path.basename(os.path.normpath(report_dir))

    def done(data: dict[str, Any]) -> None:
        if on_row is not None:
            on_row(_row_of(data))

    if explorer is not None or workers == 1:
        found = []
        for task in tasks:
            found.append(_row_or_error(task, explorer))
            done(found[-1])
    else:
        found = _side_by_side(tasks, workers, done)
    ablation.rows = [_row_of(data) for data in found]
    for row in ablation.rows[1:]:
        row.flag = _flag(row, ablation.rows[0], ablation.bounds)
    ablation.seconds = time.perf_counter() - started
    return ablation


def plan(
    path: str,
    defines: Mapping[str, str],
    rules: Sequence[str],
    pairs: bool,
    settings: Settings,
    workers: int = 1,
    explorer: Any = None,
) -> tuple[Ablation, list[dict[str, Any]]]:
    """The ablation to run (its columns from the spec with every rule on) and a task per row.
    Bad input is refused here, before any check: a spec without rules, an unknown rule, a
    rule or the all-rules switch given with -D."""
    cls, _ = load_spec_class(path)
    declared = rules_of(cls)
    if not declared:
        raise ConfigError(
            f"{path}: {cls.__name__} declares no rules to ablate (declare each rule of the"
            ' protocol change with `name = rule("one line from the KIP")`)'
        )
    unknown = [r for r in rules if r not in declared]
    if unknown:
        raise ConfigError(
            f"--rule {unknown[0]}: {cls.__name__} has no such rule (rules: {', '.join(declared)})"
        )
    switch = all_rules_of(cls)
    fixed = [n for n in defines if n in declared or n == switch]
    if fixed:
        raise ConfigError(
            f"-D {fixed[0]}: mc ablate switches the rules itself (every rule on, then each"
            " off); choose the rules with --rule"
        )
    model = load_model(path, defines)  # a misspelt -D fails here, before any check
    props = liveness.select(model) if settings.liveness else []
    columns = [Column("deadlock", "deadlock", "no reachable state without a successor")]
    columns = columns if settings.deadlock else []
    columns += [Column(i.name, "invariant", _doc(i.fn)) for i in model.invariants]
    columns += [Column(r.name, "reachable", _doc(r.fn)) for r in model.reachables]
    steps = [] if model.steps is None else model.steps.checks
    columns += [Column(c.name, "step", _doc(getattr(cls, c.name)) or c.formula) for c in steps]
    seen: dict[str, Column] = {}
    for p in props:
        member = getattr(cls, p.declared)
        seen.setdefault(p.declared, Column(p.declared, "property", _doc(member)))
    columns += list(seen.values())
    chosen = list(rules) or list(declared)
    offs: list[tuple[str, ...]] = [(), *((r,) for r in chosen)]
    if pairs:
        offs += list(combinations(chosen, 2))
    # Temporal properties are checked without symmetry and without the view (mc check's rule):
    # every check of an ablation then runs without them, so that the rows' counts compare.
    symmetry = False if props and model.symmetry is not None else None
    view = False if props and model.view is not None else None
    tasks = [
        {
            "path": str(path),
            "name": " + ".join(off) if off else ALL_ON,
            "off": list(off),
            "constants": {**defines, **{r: "false" for r in off}},
            "columns": [asdict(c) for c in columns],
            "settings": asdict(settings),
            "symmetry": symmetry,
            "view": view,
        }
        for off in offs
    ]
    ablation = Ablation(
        spec=str(path),
        spec_name=model.name,
        title=model.compiled.title,
        constants=dict(defines),
        all_rules=switch,
        rules={n: r.doc for n, r in declared.items()},
        columns=columns,
        rows=[],
        settings=settings,
        workers=workers,
        engine="local" if explorer is None else "spark",
        only=list(rules),
        pairs=pairs,
        bounds={n: v for n, v in model.constants.items() if type(v) is int},
    )
    return ablation, tasks


def _doc(fn: object) -> str:
    import inspect

    text = inspect.getdoc(fn) or ""
    return text.splitlines()[0] if text else ""


def _row_of(data: dict[str, Any]) -> Row:
    cells = {name: Cell(**cell) for name, cell in data["cells"].items()}
    return Row(**{**data, "cells": cells})


def _flag(row: Row, all_on: Row, bounds: Mapping[str, int]) -> str | None:
    """Why a rule (or pair) off breaks nothing, or None: the model may be too small to show
    why it is needed (which constants to raise), or the rule is not needed for these
    properties."""
    statuses = {c.status for c in row.cells.values()}
    if not row.complete or not statuses <= {HOLDS, OFF}:
        return None
    switched = ", ".join(f"{n}={v}" for n, v in row.switched_off.items())
    others = ", ".join(f"{n}={v}" for n, v in bounds.items() if n not in row.switched_off)
    hint = " or ".join(
        part
        for part in (
            f"a constant that switches part of the model off ({switched})" if switched else "",
            f"a bound ({others})" if others else "",
        )
        if part
    )
    hint = f"raise {hint}" if hint else "give it more to do"
    same = (row.distinct_states, row.states_generated) == (
        all_on.distinct_states,
        all_on.states_generated,
    )
    if same:
        return (
            f"changes nothing here (the same {row.distinct_states:,} states as with every rule"
            f" on): the model is too small to exercise it; {hint}"
        )
    return (
        f"changes the behaviour ({row.distinct_states:,} states, {all_on.distinct_states:,} with"
        " every rule on) but breaks none of these properties: the rule is not needed for them,"
        f" a property that needs it is missing, or the model is too small ({hint})"
    )


# -- side by side ------------------------------------------------------------------------------


def _side_by_side(
    tasks: Sequence[dict[str, Any]], workers: int, done: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Run the rows in at most `workers` forked processes at a time; each sends its row back
    as JSON. The results are in the tasks' order, whatever order the rows end in."""
    context = multiprocessing.get_context("fork")  # the child inherits the loaded modules
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    waiting = deque(range(len(tasks)))
    running: dict[Connection, tuple[Any, int]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                i = waiting.popleft()
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(
                    target=_row_process, args=(sender, tasks[i]), name=f"mc-ablate-{i}"
                )
                process.start()
                sender.close()
                running[receiver] = (process, i)
            for conn in wait(list(running)):
                process, i = running.pop(conn)  # type: ignore[index]
                try:
                    data: bytes | None = conn.recv_bytes()  # type: ignore[union-attr]
                except EOFError:
                    data = None
                conn.close()  # type: ignore[union-attr]
                process.join()
                results[i] = json.loads(data) if data else _lost(tasks[i], process.exitcode)
                done(results[i])  # type: ignore[arg-type]
    finally:
        for conn, (process, _) in running.items():
            process.terminate()
            process.join()
            conn.close()
    return results  # type: ignore[return-value]


def _row_process(sender: Connection, task: dict[str, Any]) -> None:
    sender.send_bytes(json.dumps(_row_or_error(task)).encode())
    sender.close()


def _row_or_error(task: dict[str, Any], explorer: Any = None) -> dict[str, Any]:
    """The row, or one whose cells all say why it could not be checked: a constant the rule's
    value makes an @assume refuse, or mc itself failing (a bug to report)."""
    try:
        return run_row(task, explorer)
    except McError as exc:
        return _lost(task, None, str(exc))
    except Exception as exc:
        return _lost(task, None, f"mc failed: {type(exc).__name__}: {exc} (a bug in mc)")


def _lost(task: dict[str, Any], exitcode: int | None, message: str = "") -> dict[str, Any]:
    """The row of a process that died (or raised) before sending its row."""
    why = message or f"its process ended with exit code {exitcode} before sending its row"
    row = Row(task["name"], list(task["off"]), dict(task["constants"]))
    row.cells = {c["name"]: Cell(ERROR, detail=why) for c in task["columns"]}
    row.notes = [why]
    return asdict(row)


# -- the command -----------------------------------------------------------------------------


REPORTS = ("html", "json", "junit", "markdown")


def count_checks(n: int) -> str:
    return f"{n} check{'' if n == 1 else 's'}"
