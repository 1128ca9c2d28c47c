"""How a search ends: early (`Stop`, `Failed`) or by itself, and `run`, the shell that runs a
search and turns how it ended into the result. The engines (checker.local, checker.spark)
differ only in their `Search` (checker.search.levels): how a level is computed and where the
states live."""

from __future__ import annotations

import time
from typing import Protocol

import numpy as np

from checker import guard
from checker.checkpoint import Checkpoints
from checker.errors import EngineFailure, EvaluationError
from checker.model import Model
from checker.progress import Progress
from checker.result import ActionCoverage, CheckResult, ErrorInfo, Step

# A state as an engine names it: locally its number in order of discovery, on Spark its
# fingerprint (checker.search.admission's Ref), or there (fingerprint, depth) when its trace is
# rebuilt from the levels' links.
Where = int | tuple[int, int]


class Stop(Exception):
    """The search ends with `verdict` (and the result's `fields`); its trace ends at `where`,
    the engine's reference to a state (a number locally, a fingerprint on Spark), then with
    `after`, if given: the step out of it that the verdict is about."""

    def __init__(
        self, verdict: str, where: Where | None = None, after: Step | None = None, **fields: object
    ) -> None:
        self.verdict = verdict
        self.where = where
        self.after = after
        self.fields = fields


class Failed(Exception):
    """Spec code raised `error` while the search evaluated the state at `where`."""

    def __init__(self, error: EvaluationError, where: Where | None = None) -> None:
        self.error = error
        self.where = where


class Search(Protocol):
    """One search of one model by one engine."""

    model: Model
    progress: Progress | None
    checkpoints: Checkpoints | None
    witness: str | None  # a reachability property whose shortest example to report
    level: int  # the level being expanded (0 before the first)
    distinct: int  # distinct states found
    generated: int
    depth: int
    queue: int
    fired: np.ndarray  # per action: successors generated, and new states found
    new: np.ndarray

    def run(self) -> None:
        """Explore, level by level; raise Stop or Failed to end early."""

    def reachability(self) -> dict[str, tuple[Where, int]]:
        """Each reachability property reached: name -> (where, its depth)."""

    def trace_to(self, where: Where) -> list[Step]:
        """The shortest trace to the state at `where`."""

    def interrupted(self) -> None:
        """Ctrl-C (or SIGTERM): stop the work in flight, save a checkpoint if one is asked."""

    def close(self) -> None:
        """Free what the search holds (processes, files, cached data)."""

    def finish(self, result: CheckResult) -> None:
        """Add what only this engine measures to `result`."""


MEMORY_ADVICE = (
    "To go further: lower --memory (the states kept as Python objects; only speed depends on"
    " it), use fewer --workers (each holds its own states), lower the constants, or spread the"
    " states over a cluster with --engine spark."
)


@guard.guarded()  # for API users: the CLI guards its whole run already
def run(search: Search) -> CheckResult:
    """Run `search` and return its result: the verdict and trace of how it ended (a Stop, a
    Failed, an interrupt, the engine failing, or the end, with the reachability properties
    settled), its counts and coverage. Checkpoints are removed once a search has ended by
    itself; an interrupted search or a failed engine writes one, if they are on."""
    model, checkpoints, progress = search.model, search.checkpoints, search.progress
    result = model.new_result()
    start = time.perf_counter()
    failure: EngineFailure | None = None
    try:
        try:
            search.run()
            model.settle_reachability(
                result, search.reachability(), search.witness, search.trace_to
            )
        except Stop as stop:
            result.verdict = stop.verdict
            for key, value in stop.fields.items():
                setattr(result, key, value)
            if stop.where is not None:
                result.trace = search.trace_to(stop.where)
            if stop.after is not None:
                result.trace = [*result.trace, stop.after]
        except Failed as failed:
            result.verdict = "error"
            result.error = ErrorInfo.of(failed.error)
            if failed.where is not None:
                result.trace = search.trace_to(failed.where)
        except KeyboardInterrupt:  # stop and report what we have
            result.verdict = "incomplete"
            result.bound = "interrupted"
            search.interrupted()
        except MemoryError:  # (in the engine's own process: a worker's is an EngineFailure)
            failure = EngineFailure("out of memory", MEMORY_ADVICE)
        except EngineFailure as exc:
            failure = exc
        if failure is not None:  # here, the frames that ran out of memory are gone
            stop_failed(search, result, failure)
    finally:
        search.close()
        if progress is not None:
            progress.close()
    if checkpoints is not None and result.bound != "interrupted" and not result.engine_failed:
        checkpoints.remove()  # the search ended by itself: nothing to resume
    result.seconds = time.perf_counter() - start
    result.distinct_states = search.distinct
    result.states_generated = search.generated
    result.depth = search.depth
    result.queue = search.queue
    result.coverage = [
        ActionCoverage(a.name, int(fired), int(new))
        for a, fired, new in zip(model.actions, search.fired, search.new)
    ]
    search.finish(result)
    return result


def stop_failed(search: Search, result: CheckResult, failure: EngineFailure) -> None:
    """The engine cannot go on: the run ends incomplete (exit 153) with the counts so far, and
    a checkpoint if they are on (which may fail in turn, out of memory)."""
    result.verdict = "incomplete"
    where = f"level {search.level}" if search.level else "the initial states"
    result.bound = f"{failure.what} while expanding {where}"
    result.engine_failed = True
    result.advice = failure.advice
    try:
        search.interrupted()
    except (MemoryError, OSError) as exc:
        result.advice += f" (The checkpoint could not be written: {type(exc).__name__}.)"
