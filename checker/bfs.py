"""The local engine: breadth-first search, level by level, in one process.

Order is fixed (initial states as `init` lists them; successors as `Model.expand` yields
them), and a state's parent is the first state that reached it, so the counterexample is a
shortest one and is the same on every run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from checker.errors import EvaluationError
from checker.model import ROOT, Model
from checker.progress import Progress, Snapshot
from checker.result import ActionCoverage, CheckResult, ErrorInfo
from checker.trace import Link, chain_to, replay


@dataclass(frozen=True)
class Options:
    deadlock: bool = False  # report states with no enabled action (TLC's -deadlock)
    max_depth: int | None = None  # explore states up to this depth (initial states: 1)
    max_states: int | None = None  # stop after this many distinct states


class _Stop(Exception):
    """Ends the search early with a verdict."""

    def __init__(self, verdict: str, fp: int | None = None, **fields: object) -> None:
        self.verdict = verdict
        self.fp = fp
        self.fields = fields


def check(
    model: Model, options: Options | None = None, progress: Progress | None = None
) -> CheckResult:
    """Explore every reachable state of `model`; return the verdict, counts and any trace."""
    options = options or Options()
    result = model.new_result()
    search = _Search(model, options, progress)
    start = time.perf_counter()
    try:
        search.run()
    except _Stop as stop:
        result.verdict = stop.verdict
        for key, value in stop.fields.items():
            setattr(result, key, value)
        if stop.fp is not None:
            result.trace = replay(model, chain_to(search.parents, stop.fp))
    except EvaluationError as exc:
        result.verdict = "error"
        result.error = ErrorInfo.of(exc)
        if search.current is not None:
            result.trace = replay(model, chain_to(search.parents, search.current))
    except KeyboardInterrupt:  # Ctrl-C (and SIGTERM, see cli): stop and report what we have
        result.verdict = "incomplete"
        result.bound = "interrupted"
    finally:
        if progress is not None:
            progress.close()
    result.seconds = time.perf_counter() - start
    result.distinct_states = len(search.parents)
    result.states_generated = search.generated
    result.depth = search.depth
    result.queue = search.queue
    result.coverage = [
        ActionCoverage(a.name, fired, new)
        for a, fired, new in zip(model.actions, search.fired, search.new)
    ]
    return result


class _Search:
    def __init__(self, model: Model, options: Options, progress: Progress | None) -> None:
        self.model = model
        self.options = options
        self.progress = progress
        self.parents: dict[int, Link] = {}
        self.generated = 0
        self.depth = 0
        self.queue = 0
        self.current: int | None = None  # fingerprint of the state being evaluated
        self.fired = [0] * len(model.actions)
        self.new = [0] * len(model.actions)

    def _admit(self, fp: int, link: Link) -> None:
        """Record a newly found state, unless the --max-states bound forbids it."""
        limit = self.options.max_states
        if limit is not None and len(self.parents) >= limit:
            raise _Stop("incomplete", bound=f"--max-states {limit} reached")
        self.parents[fp] = link

    def _check_invariants(self, fp: int, state: object) -> None:
        self.current = fp
        broken = self.model.violated(state)  # type: ignore[arg-type]
        if broken is not None:
            raise _Stop("violation", fp, invariant=broken.name)

    def run(self) -> None:
        model, parents = self.model, self.parents
        frontier: list[tuple[int, bytes]] = []
        for init in model.initial():
            self.generated += 1
            if init.fp in parents:
                continue
            self._admit(init.fp, (None, ROOT, init.binding))
            self.depth = 1
            self._check_invariants(init.fp, init.state)
            frontier.append((init.fp, init.data))
        self.current = None
        max_depth = self.options.max_depth
        level = 1  # the depth of the states in `frontier`
        while frontier:
            if max_depth is not None and level >= max_depth:
                self._stop_at_depth_bound(frontier)
                return
            frontier = self._expand_level(frontier, level)
            level += 1

    def _expand_level(
        self, frontier: list[tuple[int, bytes]], level: int
    ) -> list[tuple[int, bytes]]:
        model, parents, progress = self.model, self.parents, self.progress
        fired, new, deadlock = self.fired, self.new, self.options.deadlock
        next_level: list[tuple[int, bytes]] = []
        size = len(frontier)
        for done, (parent_fp, data) in enumerate(frontier):
            self.current = parent_fp
            self.queue = size - done + len(next_level)  # this state is not expanded yet
            successors = model.expand(data)
            if not successors and deadlock:
                raise _Stop("deadlock", parent_fp)
            self.generated += len(successors)
            for succ in successors:
                fired[succ.action] += 1
                if succ.fp in parents:
                    continue
                self._admit(succ.fp, (parent_fp, succ.action, succ.binding))
                self.depth = level + 1
                new[succ.action] += 1
                self._check_invariants(succ.fp, succ.state)
                next_level.append((succ.fp, succ.data))
            if progress is not None and progress.due():
                progress.report(
                    Snapshot(
                        level,
                        len(parents),
                        self.generated,
                        size - done - 1 + len(next_level),
                        done + 1,
                        size,
                    )
                )
        self.current = None
        self.queue = len(next_level)
        return next_level

    def _stop_at_depth_bound(self, frontier: list[tuple[int, bytes]]) -> None:
        """At the depth bound the search is complete only if no state there has a new
        successor; their successors are counted as a full search would count them."""
        cut = False
        for parent_fp, data in frontier:
            self.current = parent_fp
            successors = self.model.expand(data)
            if not successors and self.options.deadlock:
                raise _Stop("deadlock", parent_fp)
            self.generated += len(successors)
            for succ in successors:
                self.fired[succ.action] += 1
                cut = cut or succ.fp not in self.parents
        self.current = None
        self.queue = len(frontier) if cut else 0
        if cut:
            raise _Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")
