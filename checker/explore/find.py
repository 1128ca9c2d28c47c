"""`mc explore`'s "find": the shortest path from the initial states to a state where a Python
expression over `s` holds, found by the local engine on the spot.

The expression becomes the one invariant of a copy of the model (`not (EXPR)`), so the
engine's breadth-first search stops at the first state where it holds and rebuilds the
shortest trace to it, exactly as `mc check` finds a counterexample. The copy ignores the
spec's symmetry (an expression need not be symmetric: "broker 2 leads") but keeps its view,
constraints and the explorer's depth bound. The search runs in a child process of the server
(checker.explore.sandbox), within FIND_SECONDS and FIND_MEMORY: an expression that never
returns, or a search too big, is killed there, and "stop" kills it; the server's thread only
reads the counts its progress hook sends.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from typing import Any

from checker.compiled import Invariant
from checker.errors import McError
from checker.explore.navigate import Navigator, Path
from checker.explore.sandbox import FIND_MEMORY, FIND_SECONDS, Child, Overrun, cut
from checker.loader import build_model
from checker.local import bfs
from checker.progress import Progress, Snapshot
from checker.reports.graph import describe_action
from checker.result import CheckResult
from checker.values import count
from checker.values.record import Record

NAME = "find"  # the invariant the expression becomes, as the engine's messages name it


class FindError(McError):
    """The expression does not compile: no search is started."""


def compile_expression(text: str) -> Any:
    """The code of a find expression; FindError says what is wrong with it."""
    if not text.strip():
        raise FindError("find: write a Python expression over the state s, e.g. s.x == 3")
    try:
        return compile(text.strip(), "<find>", "eval")
    except SyntaxError as exc:
        column = f" at column {exc.offset}" if exc.offset else ""
        raise FindError(f"find: {exc.msg}{column}: {text.strip()}") from None
    except ValueError as exc:  # e.g. a NUL byte
        raise FindError(f"find: {exc}") from None


@dataclass
class Status:
    """Where a find is, as the page shows it."""

    state: str  # running | found | absent | stopped | error
    message: str
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    seconds: float = 0.0
    path: Path | None = None  # found: the state; error: where it raised

    def as_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["path"] = None if self.path is None else str(self.path)
        doc["message"] = cut(self.message)
        return doc

    @classmethod
    def of_json(cls, doc: dict[str, Any]) -> Status:
        path = doc.get("path")
        return cls(**{**doc, "path": None if path is None else Path.parse(path)})


class _Watch(Progress):
    """The engine's progress hook, in the find's process: sends the counts to the server."""

    def __init__(self, conn: Connection) -> None:
        super().__init__(stream=io.StringIO(), interval=0.0, bar=False)
        self.conn = conn
        self.sent = 0.0

    def due(self) -> bool:
        return True

    def report(self, snap: Snapshot) -> None:
        now = time.monotonic()
        if now - self.sent >= 0.1:
            self.sent = now
            self.conn.send_bytes(json.dumps({"snapshot": asdict(snap)}).encode())


class Find:
    """One search for `expression` over the states of `navigator`'s model, in a child process
    within `seconds` and `memory` (bytes)."""

    def __init__(
        self,
        navigator: Navigator,
        expression: str,
        seconds: float = FIND_SECONDS,
        memory: int = FIND_MEMORY,
    ) -> None:
        self.navigator = navigator
        self.expression = expression.strip()
        self.code = compile_expression(expression)
        self.seconds = seconds
        self.memory = memory
        self.stopping = threading.Event()
        self.snapshot: Snapshot | None = None
        self.started = time.monotonic()
        self.result: Status | None = None
        self.child: Child | None = None
        self._thread = threading.Thread(target=self._watch, name="mc-explore-find", daemon=True)

    def start(self) -> Find:
        self.child = Child(self._search, "mc-explore-find")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Kill the search (its status: stopped)."""
        self.stopping.set()
        if self.child is not None:
            self.child.kill()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def status(self) -> Status:
        if self.result is not None:
            return self.result
        snap = self.snapshot
        seconds = time.monotonic() - self.started
        if snap is None:
            return Status("running", "searching...", seconds=seconds)
        return Status(
            "running",
            f"searching: depth {snap.depth}, {count(snap.distinct, 'distinct state')}",
            snap.distinct,
            snap.generated,
            snap.depth,
            seconds,
        )

    def _watch(self) -> None:
        """In the server: the child's counts, then its result, within the limits."""
        assert self.child is not None
        try:
            while self.result is None:
                left = max(0.0, self.started + self.seconds - time.monotonic())
                what = f"find {self.expression}"
                message = self.child.receive(left, self.memory, what, self.seconds)
                if "snapshot" in message:
                    self.snapshot = Snapshot(**message["snapshot"])
                else:
                    self.result = Status.of_json(message["result"])
        except Overrun as exc:
            snap = self.snapshot
            counts = (snap.distinct, snap.generated, snap.depth) if snap else (0, 0, 0)
            seconds = time.monotonic() - self.started
            if self.stopping.is_set():
                states = count(counts[0], "distinct state")
                self.result = Status("stopped", f"stopped after {states}", *counts, seconds)
            else:
                self.result = Status("error", cut(str(exc)), *counts, seconds)
        finally:
            self.child.close()

    def _search(self, conn: Connection) -> None:
        """In the child: the search, its counts and then its result sent as JSON."""
        try:
            model = self._model()
            options = bfs.Options(deadlock=False, max_depth=self.navigator.max_depth)
            result = bfs.check(model, options, _Watch(conn))
            status = self._outcome(result)
        except McError as exc:
            status = Status("error", f"find: {exc}")
        except Exception as exc:  # a bug of mc's: say it on the page
            status = Status("error", f"find failed: {type(exc).__name__}: {exc}")
        conn.send_bytes(json.dumps({"result": status.as_json()}).encode())

    def _model(self) -> Any:
        model = self.navigator.model
        spec = model.spec
        copy = build_model(type(spec), model.path, model.constants, invariants=[], symmetry=False)
        # The spec module's names (RUNNING, helper functions), the spec as `self`, then `s`:
        # in the globals, so that a comprehension in the expression sees `s` too.
        module = sys.modules.get(type(spec).__module__)
        names: dict[str, Any] = dict(vars(module)) if module is not None else {}
        names["self"] = names["spec"] = spec
        code = self.code

        def not_yet(s: Record) -> bool:
            names["s"] = s
            return not eval(code, names)  # the author's own expression, in their own process

        copy.invariants = (Invariant(NAME, not_yet),)
        copy.reachables = ()
        return copy

    def _outcome(self, result: CheckResult) -> Status:
        counts = dict(
            distinct=result.distinct_states,
            generated=result.states_generated,
            depth=result.depth,
            seconds=result.seconds,
        )
        states = count(result.distinct_states, "distinct state")
        expr = self.expression
        if result.verdict == "violation":
            path = self.navigator.path_of(result.trace)
            n = len(result.trace)
            return Status(
                "found",
                f"found: {expr} holds in state {n} ({states} searched)",
                path=path,
                **counts,
            )
        if result.verdict == "error" and result.error is not None:
            where = self.navigator.path_of(result.trace) if result.trace else None
            error = result.error
            if error.kind == "invariant" and error.name == NAME:
                message = f"find: {expr} {error.message}"
            else:  # the spec's own code failed on the way
                what = error.kind if error.name == error.kind else f"{error.kind} {error.name}"
                if error.kind == "action":
                    what = f"action {describe_action(error.name, error.params)}"
                message = f"find: the search stopped: {what} {error.message}"
            return Status("error", message, path=where, **counts)
        if result.verdict == "ok":
            return Status("absent", f"no reachable state satisfies {expr} ({states})", **counts)
        if result.bound == "interrupted":
            return Status("stopped", f"stopped after {states}", **counts)
        return Status("absent", f"not found within {result.bound} ({states})", **counts)
