"""Admitting a part's candidates, written once for every engine.

An expander's candidates (checker.search.expansion) are the successors it had not met; the
new ones are those the visited set does not know. They are admitted in the search's order,
and where a one-state-at-a-time search would have stopped inside the part (a new state that
violates an invariant or makes one raise, the --max-states bound, a state whose expansion raised
or that is deadlocked), the counts are cut at that point, so the verdict, counts and trace are
the same whatever the parts, the processes and the engine:

- `decide`: which candidates are new (against any `Visited`: the local engine's numpy set, the
  Spark driver's set and fingerprint tables), and whether the part stops the search;
- `cut`: the counts of the part up to that point, and which stop it is (the engine then says
  where the state is: `bad`, `full`, `settle_parent`);
- `bad`, `settle_parent`, `recheck`: the state that stops the search, evaluated again to report
  what it did (the same words on every engine, or NondeterminismError if it does not do it
  again). Spark's own levels stop with them too (checker.spark.stopping).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, NoReturn, Protocol

import numpy as np

from checker.errors import EvaluationError, NondeterminismError
from checker.search.expansion import Expansion
from checker.search.outcome import Failed, Stop
from checker.steps import ExcludedViolation, StepViolation
from checker.values import show
from checker.values.encoding import decode

if TYPE_CHECKING:
    from checker.model import Model
    from checker.search.observers import Observer
    from checker.search.options import Options


Ref = int  # a state as the engine refers to it: locally its number, on Spark its fingerprint


class Visited(Protocol):
    """A set of fingerprints: the states found so far (checker.local.visited's
    FingerprintArray; on Spark, checker.spark.driver's DriverVisited)."""

    def known(self, fps: np.ndarray) -> np.ndarray:
        """Which of `fps` (uint64, sorted, unique) are in the set (a bool per fingerprint)."""


@dataclass(frozen=True)
class Decision:
    """What admission decided for one part."""

    used: np.ndarray  # the candidates' fingerprints, up to where the part is cut
    unique: np.ndarray  # those fingerprints once each, sorted
    known: np.ndarray  # which of `unique` the visited set knew
    kept: np.ndarray  # the candidates admitted (indexes, ascending)
    bad: bool  # the last one kept breaks an invariant, or makes one raise: the search stops
    over: int | None  # the successor refused by --max-states: the search stops there


class Cut(Enum):
    """Where a part stops the search, if it does."""

    BAD = "a new state breaks an invariant or makes one raise"
    FULL = "--max-states"
    PARENT = "a state's expansion raised, or it is deadlocked"


class Admission:
    """The search's part that admits candidates (checker.search.levels.LevelSearch)."""

    model: Model
    options: Options
    observer: Observer | None
    distinct: int
    generated: int
    queue: int
    fired: np.ndarray
    new: np.ndarray
    reached: dict[str, tuple[Ref, int]]
    level_wanted: list[int]
    current: Ref | None

    def room(self, wanted: int) -> int:
        """How many of `wanted` new states the --max-states bound lets in."""
        limit = self.options.max_states
        if limit is None:
            return wanted
        return max(0, min(wanted, limit - self.distinct))

    def full(self) -> Stop:
        return Stop("incomplete", bound=f"--max-states {self.options.max_states} reached")

    def decide(self, exp: Expansion, visited: Visited) -> Decision:
        """The candidates of `exp` that are new, in order, up to the first that stops the
        search: it breaks an invariant or makes one raise (exploring past violations, only one
        that raised), or the --max-states bound is reached."""
        used = exp.fps[: exp.candidates]
        unique, first = np.unique(used, return_index=True)
        known = visited.known(unique)
        fresh = np.sort(first[~known])  # candidates new to the search
        room = self.room(len(fresh))
        over = int(exp.positions[fresh[room]]) if room < len(fresh) else None
        fresh = fresh[:room]
        go_on = self.observer is not None and self.observer.go_on
        stops = exp.raised if go_on else exp.flagged
        bad = np.flatnonzero(stops[fresh])
        kept = fresh[: bad[0] + 1] if len(bad) else fresh
        return Decision(used, unique, known, kept, bool(len(bad)), over)

    def note_reached(
        self, exp: Expansion, kept: np.ndarray, ref: Callable[[int], Ref], depth: int
    ) -> None:
        """The reachability properties that a candidate admitted now (`kept`, the j-th of them
        the state `ref(j)`) satisfies first: the expander names the first candidate of its
        part for each (parts are admitted in the search's order, so the first one wins)."""
        for k, i in exp.reached:
            name = self.model.reachables[i].name
            if name in self.reached:
                continue
            j = int(np.searchsorted(kept, k))
            if j < len(kept) and int(kept[j]) == k:
                self.reached[name] = (ref(j), depth)

    def count(self, exp: Expansion, generated: int, fired: int) -> None:
        """`generated` successors of the part, the first `fired` of them fired."""
        self.generated += generated
        self.fired += np.bincount(exp.actions[:fired], minlength=len(self.fired))

    def cut(
        self, exp: Expansion, decision: Decision, first: int, size: int, before: int, found: int
    ) -> Cut | None:
        """Count the part (its first state is the level's `first`, of `size`; the next level
        had `before` states when the part was admitted, and has `found` now) up to where the
        search stops in it, and say where that is: a new state (`bad`), the bound (`full`),
        or one of the part's states (`settle_parent`). Counts are those of a one-state-at-a-
        time search at that point: every successor of the state being expanded generated,
        those up to the stop fired, the queue as it was before that state was expanded."""
        kept = decision.kept
        positions = exp.positions[kept]

        def stop_at(successor: int) -> None:
            parent = int(exp.parent_of[successor])
            self.count(exp, int(exp.ends[parent]), successor + 1)
            earlier = int(np.count_nonzero(exp.parent_of[positions] < parent))
            self.queue = size - (first + parent) + before + earlier

        if decision.bad:
            stop_at(int(exp.positions[kept[-1]]))
            return Cut.BAD
        if decision.over is not None:
            stop_at(decision.over)
            return Cut.FULL
        if self.observer is not None and exp.stop is None:
            self.observer.expanded(exp)
        self.count(exp, exp.limit, exp.limit)
        if exp.stop is not None:
            self.queue = size - (first + exp.stop) + found
            return Cut.PARENT
        return None

    def bad(self, ref: Ref, exp: Expansion, decision: Decision) -> NoReturn:
        """Stop at the last candidate kept, the state `ref`: the invariant it violates, or
        what raised on it, evaluated again."""
        candidate = int(decision.kept[-1])
        invariant = exp.broken.get(candidate)
        if invariant is not None:
            raise Stop("violation", ref, invariant=invariant)
        self.recheck(ref, exp.encoding(candidate))

    def recheck(self, ref: Ref, data: bytes) -> NoReturn:
        """Stop at the state `ref` (encoded `data`), which violated an invariant or made an
        invariant or a wanted reachability property raise when the search checked it."""
        self.current = ref
        state = decode(data)
        try:
            broken = self.model.violated(state)
            if broken is None:  # a reachability property raised
                self.model.reached(state, self.level_wanted)
        except EvaluationError as exc:
            raise Failed(exc, ref) from exc
        if broken is not None:
            raise Stop("violation", ref, invariant=broken.name)
        raise NondeterminismError(
            "the spec is not deterministic: an invariant or reachability property raised or"
            f" failed on {show(state)} when the search checked it, and not when checked again"
        )

    def stop_at_step(self, ref: Ref, data: bytes, violation: StepViolation) -> NoReturn:
        """Stop at the step out of the state `ref` (encoded `data`) that `violation` is
        about: a step property or refinement it breaks, or an invariant that the state it
        leads to, outside TLC's constraints, violates. The trace ends with that step."""
        try:
            step = self.model.step_of(data, violation.index)
        except EvaluationError as exc:
            raise Failed(exc, ref) from exc
        if isinstance(violation, ExcludedViolation):
            raise Stop("violation", ref, step, invariant=violation.name, outside_constraints=True)
        raise Stop(
            "violation",
            ref,
            step,
            step_property=violation.name,
            step_violation=violation.sentence(step),
        )

    def settle_parent(self, ref: Ref, data: bytes) -> NoReturn:
        """Stop at the state `ref` (encoded `data`), whose expansion raised (spec code, or a
        step check: checker.steps) or which is deadlocked: expanded again, to report the error
        (with the state and parameters), the step that violates, or the deadlock."""
        self.current = ref
        try:
            successors = self.model.expand(data)
        except StepViolation as violation:
            self.stop_at_step(ref, data, violation)
        except EvaluationError as exc:
            raise Failed(exc, ref) from exc
        if successors.deadlocked and self.options.deadlock:
            raise Stop("deadlock", ref)
        raise NondeterminismError(
            f"the spec is not deterministic: expanding {show(decode(data))} raised or found it"
            " deadlocked when the search expanded it, and not when expanded again"
        )
