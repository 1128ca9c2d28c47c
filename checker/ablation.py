"""What an ablation found (`mc ablate`): its columns, rows and cells, as the runs fill them
(checker.ablate) and the reports render them (checker.reports.ablation). Plain data, low in
the layers: a report reads these without importing the runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ALL_ON = "(every rule on)"
# What a cell says. "violated" also stands for a deadlock found and a temporal property's
# lasso; "off": a reachability property the row's constants switch off; "unknown": the row's
# search was stopped (a bound) before deciding it; "error": spec code raised; "killed": the
# row's process was killed (a signal, or over its share of --memory) before it ended.
HOLDS, VIOLATED, UNREACHED, OFF = "holds", "violated", "unreached", "off"
ERROR, UNKNOWN, KILLED = "error", "unknown", "killed"
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
    detail: str = ""  # the binding of a temporal property, an error's message, a bound, ...
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
    stopped: str | None = None  # the bound that cut its last check ("--timeout 1 s reached")

    @property
    def broken(self) -> list[str]:
        return [name for name, cell in self.cells.items() if cell.status in BROKEN]

    @property
    def lost(self) -> str | None:
        """Why the row has no verdicts (killed, out of memory, spec code raised), if so."""
        statuses = {c.status for c in self.cells.values()}
        if self.cells and statuses <= {ERROR, KILLED}:
            return next(iter(self.cells.values())).detail
        return None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Row:
        """A row from its JSON (as a row's process sends it)."""
        cells = {name: Cell(**cell) for name, cell in data["cells"].items()}
        return cls(**{**data, "cells": cells})


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
    planned: int = 0  # the rows asked for (more than `rows` when interrupted)
    interrupted: str | None = None  # the signal that stopped it (its table is partial)
    exit_code: int = 0  # interrupted 152, a row killed 153, else that of every rule on

    @property
    def partial(self) -> bool:
        return self.interrupted is not None or len(self.rows) < self.planned

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

    def as_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["partial"] = self.partial
        doc["checks_seconds"] = round(self.checks_seconds, 6)
        doc["seconds"] = round(self.seconds, 6)
        for row in doc["rows"]:
            row["seconds"] = round(row["seconds"], 6)
        return doc
