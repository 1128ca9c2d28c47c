"""The general path of an expansion: what `expand_state` does for a state besides the common
case that C runs (checker.model.expansion): a successor to freeze, a view or a renaming that
raises (said with the step that built the successor), an intended final state, the checks of
steps and TLC's constraints, a recorded search's targets and keys, binding indexes, and every
`recheck_every`-th state expanded twice (checker.determinism)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checker.behaviour import binding_key
from checker.compiled import Binding
from checker.errors import EvaluationError, StateError
from checker.model.checked import spec_encoded
from checker.model.dedupe import dedupe
from checker.steps import ExcludedViolation, StepChecks, StepViolation
from checker.values.encoding import fingerprint
from checker.values.record import Record

if TYPE_CHECKING:
    from array import array

    from checker.model.bound import Bound
    from checker.model.evaluation import Evaluation
    from checker.model.identity import Identity
    from checker.model.transitions import Transitions


class General:
    """One batch's general path (made per batch by Expansion.expand_batch): its step checks
    and TLC's constraints, its bindings (kept for binding indexes and recorded keys), its
    targets and keys, and the model's parts it asks."""

    def __init__(
        self,
        model: Bound,
        evaluation: Evaluation,
        identity: Identity,
        transitions: Transitions,
        countdown: Any,
        *,
        checks: bool,
        bindings: bool,
        indexes: array[int] | None,
        targets: array[int] | None,
        keys: array[int] | None,
        keyed: frozenset[int] | None,
    ) -> None:
        self.model, self.evaluation = model, evaluation
        self.identity, self.transitions = identity, transitions
        self.countdown = countdown  # the Expansion: its `until_recheck`
        # The checks of the steps and of TLC's constraints (`checks` False: none, to rebuild
        # a step already checked).
        self.steps: StepChecks | None = model.steps if checks else None
        self.exclusions = model.exclusions if checks else ()
        self.bindings: list[Binding] | None = [] if bindings else None
        self.domains: dict[int, Sequence[Binding]] = {}  # the state's bindings, by action
        self.indexes, self.targets, self.keys, self.keyed = indexes, targets, keys, keyed

    def twice(self) -> bool:
        """Whether the next state is the one every `recheck_every`-th to expand twice
        (counted down)."""
        countdown = self.countdown
        countdown.until_recheck -= 1
        recheck = self.model.recheck_every
        if countdown.until_recheck <= 0 and recheck > 0:
            countdown.until_recheck = recheck
            return True
        return False

    def first_broken(self, state: Record, successors: list[Record]) -> StepViolation | None:
        """The first step of `state` that breaks a step check, if any."""
        if self.steps is None:
            return None
        try:
            self.steps.first_broken(state, successors)
        except StepViolation as violation:
            return violation
        return None

    def binding(self, successor: int) -> Binding:
        """The binding of the state's successor number `successor` (`()` if not kept)."""
        return () if self.bindings is None else self.bindings[successor]

    def unmet(
        self,
        state: Record,
        successors: list[Record],
        actions: list[int],
        offset: int,
        seen: set[Record] | dict[Record, Any],
        candidates: list[Record],
        positions: list[int],
    ) -> None:
        """Add `state`'s successors that are not in `seen` to it and to `candidates`, their
        positions in the batch (`offset` + their index) to `positions`, a successor with a
        list or set inside a tuple frozen first as put() would. Their actions are
        `actions[offset:]`. With `seen` a dict (recorded: to their fingerprints, filled in
        once the candidates found here are fingerprinted: recorded), the state itself is
        looked up too."""
        refrozen = self.transitions.refrozen
        if self.targets is not None:
            for index, succ in enumerate(successors):
                try:
                    met = succ in seen
                except TypeError:
                    succ = successors[index] = refrozen(state, actions[offset + index], succ)
                    met = succ in seen
                if not met:
                    seen[succ] = None
                    candidates.append(succ)
                    positions.append(offset + index)
            return
        start = 0
        while True:
            stop = dedupe(successors, start, seen, candidates, positions, offset, state)
            if stop is None:
                return
            ai = actions[offset + stop]
            successors[stop] = refrozen(state, ai, successors[stop])
            start = stop

    def unmet_by_view(
        self,
        state: Record,
        successors: list[Record],
        actions: list[int],
        offset: int,
        seen: set[Any],
        views: list[Any],
        positions: list[int],
    ) -> None:
        """`unmet` by the successors' views: those whose views are not in `seen` are added to
        it and to `views`, their positions to `positions`. A successor whose view raises is
        the action's error, as when its fingerprint is computed."""
        mine: list[Any] = []
        view_of = self.identity.view_of
        refrozen = self.transitions.refrozen
        first = len(positions)
        try:
            for succ in successors:
                mine.append(view_of(succ))
        except EvaluationError as exc:
            index = len(mine)
            raise self.on_successor(exc, actions[offset + index], index, successors[index]) from exc
        start = 0
        while (stop := dedupe(mine, start, seen, views, positions, offset, None)) is not None:
            # A list or set inside a tuple: the successor frozen as put() would, then its view.
            ai = actions[offset + stop]
            succ = successors[stop] = refrozen(state, ai, successors[stop])
            mine[stop] = view = view_of(succ)
            try:
                hash(view)
            except TypeError as exc:
                raise EvaluationError(
                    "view", "view", f"returned a value that cannot be hashed: {exc}", state=succ
                ) from exc
            start = stop
        for p in positions[first:]:  # a candidate the view did not show unfrozen: the same
            try:
                hash(successors[p - offset])
            except TypeError:
                successors[p - offset] = refrozen(state, actions[p], successors[p - offset])

    def exclude(
        self,
        state: Record,
        candidates: list[Record],
        positions: list[int],
        first: int,
        offset: int,
        seen: object,
        upto: int | None,
    ) -> None:
        """The candidates from `first` on that a constraint excludes (TLC's CONSTRAINT):
        checked against the invariants (a violation is the step into it: ExcludedViolation,
        checked before a step check that the same step breaks, as TLC does), then dropped,
        unless `seen` is None (`expand`, whose list has every successor). `upto`: only those
        of the state's successors up to that index (a later step breaks a step check)."""
        kept = first
        for k in range(first, len(candidates)):
            succ = candidates[k]
            if upto is not None and positions[k] - offset > upto:
                break
            if self.evaluation.excluded(succ):
                broken = self.evaluation.violated(succ)
                if broken is not None:
                    message = (
                        f"invariant {broken.name} is violated in a state outside the constraints"
                    )
                    raise ExcludedViolation(broken.name, positions[k] - offset, message, state)
                if seen is not None:
                    continue
            candidates[kept], positions[kept] = succ, positions[k]
            kept += 1
        del candidates[kept:], positions[kept:]

    def on_successor(
        self, exc: EvaluationError, ai: int, successor: int, succ: Record
    ) -> EvaluationError:
        """A view or a renaming that failed on the state's successor number `successor`."""
        return self.transitions.on_successor(exc, ai, self.binding(successor), succ)

    def unencodable(
        self, ai: int, successor: int, state: Record, exc: StateError
    ) -> EvaluationError:
        """The state's successor number `successor` cannot be encoded: the action's error."""
        return self.transitions.unencodable_step(ai, self.binding(successor), state, exc)

    def view_fingerprint(self, view: Any, succ: Record) -> int:
        """The fingerprint of a successor's view (an encoding error is the view's)."""
        return fingerprint(spec_encoded(view, "view", "view", state=succ, params={}))

    def record(
        self,
        seen: dict[Record, Any],
        candidates: list[Record],
        first: int,
        fps: array[int],
        successors: list[Record],
        actions: list[int],
        total: int,
    ) -> None:
        """A recorded search: the fingerprints of the state's candidates into `seen`, then
        every step's target and, for the keyed actions, its binding's key."""
        for k in range(first, len(candidates)):
            seen[candidates[k]] = fps[k - first]
        assert self.targets is not None
        self.targets.extend([seen[succ] for succ in successors])
        if self.keys is not None:
            keyed, bindings = self.keyed, self.bindings
            assert keyed is not None and bindings is not None
            self.keys.extend(
                [
                    binding_key(binding) if ai in keyed else 0
                    for ai, binding in zip(actions[total:], bindings)
                ]
            )

    def undo(self, total: int, first: int) -> None:
        """What `record` and `note` appended for a state whose expansion raised."""
        if self.targets is not None:
            del self.targets[total:]
        if self.keys is not None:
            del self.keys[total:]
        if self.indexes is not None:
            del self.indexes[first:]

    def done(self) -> None:
        """The state is done: forget its bindings."""
        if self.bindings is not None:
            self.bindings.clear()
            self.domains.clear()
