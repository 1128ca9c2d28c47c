"""The model's evaluation: the spec's predicates on a state (state and action constraints,
invariants, reachability properties, final states), each checked to return True or False,
and, with the C hot path, incrementally by the read sets of checker.model.readsets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from checker import determinism
from checker.compiled import Binding, Invariant
from checker.errors import Interrupted
from checker.model.checked import predicate_holds
from checker.model.readsets import ReadSet, holds, verdicts
from checker.values import show
from checker.values.record import Record

if TYPE_CHECKING:
    from checker.model.bound import Bound


class Evaluation:
    """The predicates of `model`'s spec, read from the model at each call (a test may narrow
    its invariants or reachables)."""

    def __init__(self, model: Bound) -> None:
        self.model = model
        self._predicates: tuple[tuple[Invariant, ...], tuple[Callable[..., Any], ...]] | None = None

    def within_constraints(self, state: Record) -> bool:
        """Whether `state` satisfies every state constraint (else it is not expanded)."""
        # (a loop, not all() of a generator per state)
        for c in self.model.constraints:
            if not predicate_holds("constraint", c.name, c.fn, state):
                return False
        return True

    def excluded(self, state: Record) -> bool:
        """Whether `state` fails a constraint that does not admit it (TLC's CONSTRAINT): it is
        checked against the invariants, and never becomes a state of the search."""
        return not all(
            predicate_holds("constraint", c.name, c.fn, state) for c in self.model.exclusions
        )

    def allowed(self, ai: int, binding: Binding, state: Record, succ: Record) -> bool:
        """Whether every action constraint allows the step from `state` to `succ`."""
        params = self.model.actions[ai].describe(binding)
        return all(
            predicate_holds("action constraint", c.name, c.fn, state, succ, params=params)
            for c in self.model.action_constraints
        )

    def final(self, state: Record) -> bool:
        """Whether `state` is one of the spec's intended final states (a @terminal holds),
        where having no successor is no deadlock."""
        return any(predicate_holds("terminal", t.name, t.fn, state) for t in self.model.terminals)

    def reached(self, state: Record, wanted: Sequence[int]) -> list[int]:
        """Of the reachability properties `wanted` (indexes into `reachables`, in order),
        those that hold in `state`."""
        props = self.model.reachables
        return [
            i for i in wanted if predicate_holds("reachable", props[i].name, props[i].fn, state)
        ]

    def violated(self, state: Record, start: int = 0) -> Invariant | None:
        """The first invariant (in declaration order, from `start` on) that `state` violates,
        if any."""
        for inv in self.model.invariants[start:]:
            if not predicate_holds("invariant", inv.name, inv.fn, state):
                return inv
        return None

    def violated_incrementally(
        self, state: Record, read_set: ReadSet | None, out: bytearray
    ) -> Invariant | None:
        """`violated`, noting in `out` (8 bytes per invariant) what each invariant read, and
        not evaluating those that held in the parent and read nothing the step changed
        (`read_set`, as expand_batch made it: docs/architecture.md)."""
        before, changed = (None, 0) if read_set is None else (read_set.invariants, read_set.changed)
        try:
            first = holds(self.invariant_predicates(), state, before, changed, out)
        except Interrupted:
            raise
        except KeyboardInterrupt:  # the spec's own (C lets it through): say so, as violated does
            first = 0
        return None if first < 0 else self.violated_at(state, first)

    def verdicts(
        self, states: list[Record], read_sets: list[ReadSet]
    ) -> tuple[list[list[int]], list[ReadSet]]:
        """`violated_incrementally` on each state with its read set (as expand_batch made it),
        at once: [index, invariant index] for each state on which an invariant failed or raised
        (`violated_at` says which and why), and the states' own read sets, in a new list.
        KeyboardInterrupt from spec code (not Ctrl-C: Interrupted) goes on: evaluate one by
        one to say where."""
        return verdicts(self.invariant_predicates(), states, read_sets, ReadSet)

    def violated_at(self, state: Record, first: int) -> Invariant:
        """The invariant (index `first`) that failed or raised when evaluated on `state` with
        the C hot path, evaluated again in Python, which says why (EvaluationError if it
        raised); NondeterminismError if it holds now."""
        inv = self.model.invariants[first]
        if not predicate_holds("invariant", inv.name, inv.fn, state):
            return inv
        raise determinism.not_deterministic(
            f"in state {show(state)}, invariant {inv.name} failed or raised, then held when"
            " evaluated again"
        )

    def invariant_predicates(self) -> tuple[Callable[[Record], Any], ...]:
        invariants = self.model.invariants
        if self._predicates is None or self._predicates[0] is not invariants:
            self._predicates = (invariants, tuple(inv.fn for inv in invariants))
        return self._predicates[1]
