"""The rows of an ablation run, and the table they make.

Rows are independent: with the local engine each runs in a child process of the command
(checker.supervisor: at most `workers` side by side and within `memory`, Ctrl-C and SIGTERM
ending them all at once, a killed row reported as such), which receives its task and sends
its row back as JSON (never pickle). With the Spark engine the rows run one after another in
the command's process, on the one Spark session. The table's exit code: 152 when interrupted
(the rows finished so far, marked partial), else 153 when a row was killed or ran out of
memory, else that of the checks with every rule on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from checker import ablation as cells
from checker import supervisor
from checker.ablate.plan import plan
from checker.ablate.row import lost, row_or_error
from checker.ablation import Ablation, Row, Settings
from checker.batch import worst
from checker.errors import ExitCode
from checker.values import count

Progress = Callable[[str], None]


def ablate(
    path: str,
    defines: Mapping[str, str],
    *,
    rules: Sequence[str] = (),
    pairs: bool = False,
    settings: Settings | None = None,
    workers: int = 1,
    memory: int | None = None,
    spark_engine: Any = None,
    report_dir: str | None = None,
    on_row: Callable[[Row], None] | None = None,
    progress: Progress | None = None,
    progress_every: float = 5.0,
) -> Ablation:
    """Check the spec at `path` with every rule on, then with each rule off alone (`rules`:
    only those; `pairs`: each pair too), `workers` rows side by side within `memory` bytes
    (`spark_engine`: the Spark engine, its rows one after another). With `report_dir`, each
    counterexample's HTML report is written there (the folder made by the first).
    `on_row`: called as each row ends; `progress`: called with a line every `progress_every`
    seconds (rows done, the running rows' states and rate)."""
    settings = settings or Settings()
    started = time.perf_counter()
    engine = "local" if spark_engine is None else "spark"
    ablation, tasks = plan(path, defines, rules, pairs, settings, workers, engine)
    share = None if memory is None else memory // max(1, min(workers, len(tasks)))
    for task in tasks:
        # the row's search keeps live states within half its share, the rest encoded
        task["live_bytes"] = None if share is None else max(1 << 20, share // 2)
        if report_dir is not None:
            task["report_dir"] = report_dir
            task["report_prefix"] = _prefix(report_dir)
    found: dict[int, dict[str, Any]] = {}

    def done(index: int, data: dict[str, Any]) -> None:
        found[index] = data
        if on_row is not None:
            on_row(Row.of(data))

    if spark_engine is not None:
        ablation.interrupted = _one_by_one(tasks, spark_engine, done)
    else:
        ablation.interrupted = _side_by_side(tasks, workers, memory, done, progress, progress_every)
    ablation.rows = [Row.of(found[i]) for i in sorted(found)]
    all_on = ablation.rows[0] if found and min(found) == 0 else None
    for row in ablation.rows:
        if row.off and all_on is not None:
            row.flag = _flag(row, all_on, ablation.bounds)
    ablation.exit_code = _exit_code(ablation, all_on)
    ablation.seconds = time.perf_counter() - started
    return ablation


def _prefix(report_dir: str) -> str:
    return report_dir.rstrip("/").rpartition("/")[2]


def _one_by_one(
    tasks: Sequence[dict[str, Any]], spark_engine: Any, done: Callable[[int, dict[str, Any]], None]
) -> str | None:
    """The rows one after another in this process (Spark); the signal that stopped them."""
    try:
        for i, task in enumerate(tasks):
            done(i, row_or_error(task, None, spark_engine))
    except KeyboardInterrupt as exc:  # checker.guard's Interrupted
        return str(exc) or "SIGINT"
    return None


def _side_by_side(
    tasks: Sequence[dict[str, Any]],
    workers: int,
    memory: int | None,
    done: Callable[[int, dict[str, Any]], None],
    progress: Progress | None,
    every: float,
) -> str | None:
    """The rows in child processes (checker.supervisor); the signal that stopped them."""
    last = [time.monotonic()]
    ended = [0]

    def on_end(outcome: supervisor.Ended) -> None:
        ended[0] += 1
        task = tasks[outcome.index]
        if outcome.result is not None:
            done(outcome.index, outcome.result)
        else:  # killed (a signal, over --memory), or mc failed in it (a bug: as before)
            why = outcome.lost or "lost"
            data = lost(task, why, cells.ERROR if why.startswith("mc failed") else cells.KILLED)
            data["seconds"] = outcome.seconds
            done(outcome.index, data)

    def on_tick(running: list[supervisor.Running]) -> None:
        now = time.monotonic()
        if progress is None or every <= 0 or now - last[0] < every:
            return
        last[0] = now
        progress(_progress_line(tasks, ended[0], running))

    finished = supervisor.run(
        _row_job, tasks, slots=workers, memory=memory, on_end=on_end, on_tick=on_tick
    )
    return finished.interrupted


def _row_job(task: dict[str, Any], say: Callable[[Any], None]) -> dict[str, Any]:
    return row_or_error(task, say)


def _progress_line(
    tasks: Sequence[dict[str, Any]], ended: int, running: Sequence[supervisor.Running]
) -> str:
    """ "mc: ablate: 2 of 7 rows done; cap: check 1, level 12, 120,345 states (45,210/s),
    310 MiB; ...; 3 waiting"."""
    parts = []
    for r in running:
        name = tasks[r.index]["name"]
        status = r.status or {}
        if status:
            parts.append(
                f"{name}: check {status['check']}, level {status['depth']},"
                f" {status['distinct']:,} states ({status['rate']:,}/s), {r.resident >> 20:,} MiB"
            )
        else:
            parts.append(f"{name}: starting")
    waiting = len(tasks) - ended - len(running)
    tail = [f"{waiting} waiting"] if waiting else []
    return f"mc: ablate: {ended} of {count(len(tasks), 'row')} done; " + "; ".join(parts + tail)


def _exit_code(ablation: Ablation, all_on: Row | None) -> int:
    """Interrupted 152, then a row killed (a signal, out of memory) 153, then the worst exit
    code of the every-rule-on row's cells, as `mc check` would give each (0 when all hold)."""
    if ablation.interrupted is not None:
        return int(ExitCode.INCOMPLETE)
    if any(c.status == cells.KILLED for r in ablation.rows for c in r.cells.values()):
        return int(ExitCode.ENGINE_ERROR)
    if all_on is None:
        return int(ExitCode.INCOMPLETE)
    codes = []
    for column in ablation.columns:
        cell = all_on.cells[column.name]
        if cell.status == cells.VIOLATED:
            kinds = {"deadlock": ExitCode.DEADLOCK, "property": ExitCode.LIVENESS}
            codes.append(int(kinds.get(column.kind, ExitCode.VIOLATION)))
        elif cell.status == cells.UNREACHED:
            codes.append(int(ExitCode.VIOLATION))
        elif cell.status == cells.ERROR:
            codes.append(int(ExitCode.EVALUATION_ERROR))
        elif cell.status == cells.UNKNOWN:
            codes.append(int(ExitCode.INCOMPLETE))
    return worst(codes)


def _flag(row: Row, all_on: Row, bounds: Mapping[str, int]) -> str | None:
    """Why a rule (or pair) off breaks nothing, or None: the model may be too small to show
    why it is needed (which constants to raise), or the rule is not needed for these
    properties."""
    statuses = {c.status for c in row.cells.values()}
    if not row.complete or not statuses <= {cells.HOLDS, cells.OFF}:
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


def count_checks(n: int) -> str:
    return count(n, "check")
