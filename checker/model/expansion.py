"""The model's expansion: a batch of states expanded (`Expansion.expand_batch`: each state's
successors, those met before dropped, the others encoded and fingerprinted; `expand` on one
state), which the search's Expander and every engine run. The common case runs in C
(`expand_run`, checker/hot/expansion.c, reading the model's `Context` and the `Batch` by
name); its twin is `expand_run_python`."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from checker.behaviour import binding_key
from checker.compiled import Binding
from checker.errors import EvaluationError, StateError
from checker.model.checked import spec_encoded
from checker.model.readsets import ReadSet, read_sets_of
from checker.model.transitions import successors
from checker.result import Step
from checker.steps import ExcludedViolation, StepViolation
from checker.values import fast
from checker.values.encoding import decode, encode_state, encoded, fingerprint
from checker.values.record import Record, freeze

if TYPE_CHECKING:
    from checker.model.bound import Bound
    from checker.model.context import Context
    from checker.model.evaluation import Evaluation
    from checker.model.identity import Identity
    from checker.model.transitions import Transitions


ROOT = -1  # the action index of an initial state's link; its binding index is its init index


class Successor(NamedTuple):  # a tuple: one is built per generated state
    action: int  # index into Model.actions
    binding: int  # index into the action's bindings in the parent state
    state: Record
    data: bytes  # canonical encoding
    fp: int  # Model.fingerprint_of the state


class Successors(list):  # type: ignore[type-arg]
    """`Model.expand`'s successors, in order. `deadlocked`: no action is enabled in the state.
    A state outside the state constraints is not expanded (no successors, not deadlocked);
    one whose every successor an action constraint discards is not deadlocked either (as in
    TLC: constraints bound the search, they do not make deadlocks)."""

    __slots__ = ("deadlocked",)

    def __init__(self, successors: Iterable[Successor] = (), deadlocked: bool = False) -> None:
        super().__init__(successors)
        self.deadlocked = deadlocked


class Batch:
    """What `Model.expand_batch` found. Per state: its number of successors (`counts`) and
    whether no action was enabled (`stuck`); per successor: its action; the candidates (the
    successors not met before, in order): their positions among the successors, encodings,
    fingerprints and, if asked, binding indexes; when recorded, every successor's fingerprint
    (`targets`) and binding key (`keys`, for the keyed actions only)."""

    __slots__ = (
        "actions",
        "candidates",
        "counts",
        "encodings",
        "error",
        "fps",
        "indexes",
        "keys",
        "positions",
        "raised",
        "read_sets",
        "run_counts",
        "run_fps",
        "stuck",
        "successors",
        "targets",
        "views",
    )

    def __init__(self, indexes: bool, recorded: bool, keyed: bool = False) -> None:
        self.actions: list[int] = []
        self.counts = array("I")
        self.stuck = bytearray()
        self.candidates: list[Record] = []
        self.positions: list[int] = []
        self.fps = array("Q")
        self.encodings: list[bytes] = []
        self.indexes = array("I") if indexes else None
        self.targets = array("Q") if recorded else None
        self.keys = array("Q") if keyed else None
        self.error: int | None = None  # the state whose expansion raised (none after it)
        self.raised: EvaluationError | None = None
        # Incremental evaluation (docs/architecture.md): each candidate's ReadSet, when the
        # batch was expanded with read_sets.
        self.read_sets: list[ReadSet] | None = None
        # What a run of expand_run fills besides: the successors of the state being expanded,
        # the candidates' views (met by views), the run's counts and fingerprints (bytes).
        self.successors: list[Record] = []
        self.views: list[Any] = []
        self.run_counts = bytearray()
        self.run_fps = bytearray()


class Expansion:
    """How `model` expands batches of states."""

    def __init__(
        self, model: Bound, evaluation: Evaluation, identity: Identity, transitions: Transitions
    ) -> None:
        self.model = model
        self.evaluation, self.identity, self.transitions = evaluation, identity, transitions
        # Every `model.recheck`-th state this process expands is expanded twice, and the two
        # answers compared (checker.determinism; 0: none), from the first one on.
        # `until_recheck` counts down to the next.
        self.until_recheck = 1

    def expand(self, data: bytes) -> Successors:
        """The successors of an encoded state, as `successors` gives them, each encoded and
        fingerprinted (a successor's binding is its index in the action's bindings); none if
        the state is outside the state constraints. This is `expand_batch` on one state, every
        successor kept."""
        state = decode(data)
        batch = self.expand_batch([state], None, indexes=True)
        if batch.raised is not None:
            raise batch.raised
        out = Successors(deadlocked=bool(batch.stuck[0]))
        for succ, ai, index, data, fp in zip(
            batch.candidates, batch.actions, batch.indexes, batch.encodings, batch.fps
        ):
            out.append(Successor(ai, index, succ, data, fp))
        return out

    def expand_batch(
        self,
        states: Sequence[Record],
        seen: set[Record] | dict[Record, int] | None,
        *,
        indexes: bool = False,
        keyed: frozenset[int] | None = None,
        read_sets: Sequence[ReadSet | None] | None = None,
        checks: bool = True,
    ) -> Batch:
        """The engines' shared expansion, the hot loop around `successors`: each state's
        successors, in order; those equal to a state in `seen` (a set) or found before in the
        batch are dropped at once, and the others, the candidates, are added to `seen`,
        encoded and fingerprinted. `seen` None keeps every successor (`expand`); a dict (a
        recorded search, checker.behaviour) maps each state met to its fingerprint, and the
        batch then has the fingerprint of every successor (`targets`) and, for the actions in
        `keyed`, the key of every step's binding. `indexes`: each candidate's binding index.

        A state outside the state constraints has no successors and is not stuck. The first
        state whose expansion raises (spec code, or a successor that cannot be encoded) ends
        the batch: `error` is its index, `raised` the EvaluationError.

        With `read_sets` (one per state, or None for a state without one), incremental
        evaluation (docs/architecture.md): the guards still disabled are not called, and
        the batch has each candidate's ReadSet."""
        out = Batch(indexes, keyed is not None, bool(keyed))
        model = self.model
        transitions, evaluation = self.transitions, self.evaluation
        incremental = read_sets is not None
        slots = model.slots
        made: list[ReadSet] = []
        if incremental:
            out.read_sets = made
        constraints = model.constraints
        terminals = model.terminals
        # The checks of the steps and of TLC's constraints (`checks` False: none, to rebuild
        # a step already checked).
        step_checks = model.steps if checks else None
        exclusions = model.exclusions if checks else ()
        # With a view or symmetry, or recorded (for the fingerprints of the states met).
        identify = model.reduces or keyed is not None
        fingerprint_of = self.identity.fingerprint_of
        successors_of = transitions.successors
        actions = out.actions
        counts, stuck = out.counts, out.stuck
        candidates, positions = out.candidates, out.positions
        fps, encodings, binding_indexes = out.fps, out.encodings, out.indexes
        targets, keys = out.targets, out.keys
        bindings: list[Binding] | None = [] if indexes or keyed or seen is None else None
        domains: dict[int, Sequence[Binding]] = {}  # the state's bindings, by action
        unmet: Any = _unmet if targets is None else _unmet_recorded
        # Met by their views (see __init__): each candidate's view, aligned with the
        # candidates, gives its fingerprint.
        by_view = model.by_view and type(seen) is set
        # Fingerprinted as encoded (or by their views), and nothing else to note per candidate.
        plain = (by_view or not identify) and binding_indexes is None
        views = out.views
        shown = views if by_view else None
        successors = out.successors
        total = 0  # successors of the batch so far
        # The common case: runs of states in one call (expand_run), a state it cannot take
        # (an error, a successor to freeze, a deadlock to ask `final` about) and each one
        # expanded twice (determinism) by the loop below.
        run = (
            type(seen) is set
            and type(states) is list
            and (read_sets is None or type(read_sets) is list)
            and bindings is None
            and step_checks is None
            and not exclusions
        )
        context = model.context(by_view, identify and not by_view) if run else None
        resume = 0  # the first state the run has not expanded
        general = -1  # a state the run stopped before: the loop's
        ran, found = out.run_counts, out.run_fps  # (its counts and fingerprints)
        for i, state in enumerate(states):
            if i < resume:
                continue
            if run and i != general and (model.recheck <= 0 or self.until_recheck > 1):
                stop = len(states)
                if model.recheck > 0:
                    stop = min(stop, i + self.until_recheck - 1)
                try:
                    resume = expand_run(context, out, states, i, stop, read_sets, seen)
                except EvaluationError as exc:  # (the state that raised: the next one counted)
                    resume = i + len(ran) // 4
                    out.error, out.raised = resume, exc
                    break
                finally:
                    self.until_recheck -= len(ran) // 4
                    counts.frombytes(ran)
                    fps.frombytes(found)
                    del ran[:], found[:]
                    total = len(actions)
                if resume < stop:
                    general = resume
                if resume > i:
                    continue
            try:
                if constraints and not evaluation.within_constraints(state):
                    counts.append(0)
                    stuck.append(0)
                    continue
                if incremental:
                    read_set = read_sets[i]  # type: ignore[index]
                    masks = bytearray(8 * slots)  # (all zero: no guard known to be disabled)
                self.until_recheck -= 1
                if self.until_recheck <= 0 and model.recheck > 0:
                    self.until_recheck = model.recheck
                    enabled = transitions.twice(state, successors, actions, bindings)
                elif incremental:
                    before, changed = (
                        (None, 0) if read_set is None else (read_set.guards, read_set.changed)
                    )
                    enabled = successors_of(
                        state, successors, actions, bindings, before, changed, masks
                    )
                else:
                    enabled = successors_of(state, successors, actions, bindings)
                if not enabled and terminals and evaluation.final(state):
                    enabled = True  # an intended final state: no deadlock
                stepped = None  # the first step that breaks a step check, if any
                if step_checks is not None:
                    try:
                        step_checks.first_broken(state, successors)
                    except StepViolation as violation:
                        stepped = violation
                first = len(candidates)
                if seen is None:
                    candidates += successors
                    positions.extend(range(total, total + len(successors)))
                elif by_view:
                    self.unmet_by_view(
                        state, successors, bindings, actions, total, seen, views, positions
                    )
                    candidates += [successors[p - total] for p in positions[first:]]
                else:
                    unmet(
                        transitions, state, successors, actions, total, seen, candidates, positions
                    )
                if exclusions:  # up to that step: a violation there or before comes first
                    upto = None if stepped is None else stepped.index
                    self.exclude(state, candidates, positions, first, total, seen, upto)
                if incremental:
                    held = None if read_set is None else read_set.invariants
                    read_sets_of(ReadSet, state, candidates, first, bytes(masks), held, made)
                if stepped is not None:
                    raise stepped
                if plain:  # all at once; one that cannot be encoded: again below, which says why
                    try:
                        fps.frombytes(encoded(candidates, first, fingerprint, encodings, shown))
                    except StateError:
                        del encodings[len(fps) :]
                for k in range(len(fps), len(candidates)):
                    succ = candidates[k]
                    position = positions[k]
                    try:
                        data = encode_state(succ)
                    except StateError as exc:
                        binding = () if bindings is None else bindings[position - total]
                        raise transitions.unencodable_step(
                            actions[position], binding, state, exc
                        ) from exc
                    if by_view:
                        fp = fingerprint(
                            spec_encoded(views[k], "view", "view", state=succ, params={})
                        )
                    elif identify:
                        try:
                            fp = fingerprint_of(succ, data)
                        except EvaluationError as exc:
                            binding = () if bindings is None else bindings[position - total]
                            raise transitions.on_successor(
                                exc, actions[position], binding, succ
                            ) from exc
                    else:
                        fp = fingerprint(data)
                    fps.append(fp)
                    encodings.append(data)
                    if binding_indexes is not None:
                        ai = actions[position]
                        binding = bindings[position - total]  # type: ignore[index]
                        binding_indexes.append(
                            transitions.binding_index(state, ai, binding, domains)
                        )
                if targets is not None:  # every step's target, and its binding's key
                    for k in range(first, len(candidates)):
                        seen[candidates[k]] = fps[k]  # type: ignore[index]
                    targets.extend([seen[succ] for succ in successors])  # type: ignore[index]
                    if keys is not None:
                        steps = actions[total:]
                        keys.extend(
                            [
                                binding_key(binding) if ai in keyed else 0  # type: ignore[operator]
                                for ai, binding in zip(steps, bindings)  # type: ignore[arg-type]
                            ]
                        )
            except EvaluationError as exc:
                out.error, out.raised = i, exc
                del actions[total:]
                if targets is not None:
                    del targets[total:]
                if keys is not None:
                    del keys[total:]
                break
            if bindings is not None:
                bindings.clear()
                domains.clear()
            counts.append(len(successors))
            stuck.append(not enabled)
            total += len(successors)
            successors.clear()  # freed now, while they are still in the cache
        del candidates[len(fps) :]  # those of a state whose expansion raised were not encoded
        del positions[len(fps) :]
        del made[len(fps) :]
        return out

    def unmet_by_view(
        self,
        state: Record,
        successors: list[Record],
        bindings: list[Binding] | None,
        actions: list[int],
        offset: int,
        seen: set[Any],
        views: list[Any],
        positions: list[int],
    ) -> None:
        """`_unmet` by the successors' views: those whose views are not in `seen` are added to
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
            binding = () if bindings is None else bindings[index]
            succ = successors[index]
            on_successor = self.transitions.on_successor
            raise on_successor(exc, actions[offset + index], binding, succ) from exc
        start = 0
        while (stop := candidates(mine, start, seen, views, positions, offset, None)) is not None:
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

    def step_of(self, data: bytes, index: int) -> Step:
        """Successor `index` of the encoded state (in `expand`'s order) as a trace's step."""
        state = decode(data)
        batch = self.expand_batch([state], None, indexes=True, checks=False)
        if batch.raised is not None:
            raise batch.raised
        ai, binding_index = batch.actions[index], batch.indexes[index]  # type: ignore[index]
        act = self.model.actions[ai]
        binding = act.bindings(state)[binding_index]
        try:
            event = act.event(state, binding)
        except EvaluationError:
            event = None
        return Step(act.name, act.describe(binding), batch.candidates[index], event)


def candidates_python(
    successors: list[Record],
    start: int,
    seen: set[Record],
    found: list[Record],
    positions: list[int],
    offset: int,
    parent: Record | None,
) -> int | None:
    """The successors from `start` on that are not in `seen`, added to it and to `found`,
    their indexes plus `offset` to `positions` (the twin of the C loop); None when done, else
    the index of a successor that cannot be hashed (the caller freezes it and goes on from
    there). A successor that is `parent` itself (a step that changed nothing) is never new:
    passed over without a look-up (the parent was found, whether or not `seen` still has it)."""
    for index in range(start, len(successors)):
        succ = successors[index]
        if succ is parent:
            continue
        try:
            met = succ in seen
        except TypeError:
            return index
        if not met:
            seen.add(succ)
            found.append(succ)
            positions.append(offset + index)
    return None


candidates = fast.pick(candidates_python)


def expand_run_python(
    context: Context,
    batch: Batch,
    states: list[Record],
    start: int,
    stop: int,
    read_sets: list[ReadSet | None] | None,
    seen: set[Record],
) -> int:
    """`Model.expand_batch`'s common case from `states[start]` to before `states[stop]` (the
    twin of the C loop, checker/hot/expansion.c, which says what it does with `context` and
    `batch`)."""
    successors_list, actions = batch.successors, batch.actions
    found, positions, encodings = batch.candidates, batch.positions, batch.encodings
    counts, stuck, fps, views = batch.run_counts, batch.stuck, batch.run_fps, batch.views
    made = None if read_sets is None else batch.read_sets
    slots, terminals, bail = context.slots, context.terminals, context.bail
    within, view, redo, identify = context.within, context.view, context.redo, context.identify
    fingerprint, read_set_type = context.fingerprint, context.read_set
    i, stop = max(start, 0), min(stop, len(states))
    while i < stop:
        state = states[i]
        if within is not None and not within(state):
            counts += array("I", [0]).tobytes()
            stuck.append(0)
            i += 1
            continue
        total, first, made_first = len(actions), len(found), 0 if made is None else len(made)
        before = None if read_sets is None else read_sets[i]
        masks = bytearray(8 * slots)
        made_fps = array("Q")
        try:
            if read_sets is None:
                enabled = successors(context, state, successors_list, actions, None)
            else:
                parent, changed = (None, 0) if before is None else (before.guards, before.changed)
                enabled = successors(
                    context, state, successors_list, actions, None, parent, changed, masks
                )
            if not enabled and terminals:
                raise _Bail  # (an intended final state?)
            if view is None:
                met = candidates(successors_list, 0, seen, found, positions, total, state)
                if met is not None:
                    raise _Bail  # (a successor to freeze)
            else:
                _met_by_views(
                    successors_list, state, view, redo, seen, found, views, positions, total
                )
            if made is not None:
                held = None if before is None else before.invariants
                read_sets_of(read_set_type, state, found, first, bytes(masks), held, made)
            for k in range(first, len(found)):
                data = encode_state(found[k])
                encodings.append(data)
                if identify is None:
                    shown = data if view is None else encode_state(views[k])
                    made_fps.append(fingerprint(shown))
                    continue
                try:
                    made_fps.append(identify(found[k], data))
                except redo:
                    raise _Bail from None  # (the general path says which step built it)
        except BaseException as exc:
            for met in (found if view is None else views)[first:]:
                seen.discard(met)
            del found[first:], positions[first:], encodings[first:], actions[total:]
            if view is not None:
                del views[first:]
            if made is not None:
                del made[made_first:]
            successors_list.clear()
            if isinstance(exc, (_Bail, *bail)):
                return i
            raise
        fps += made_fps.tobytes()
        counts += array("I", [len(successors_list)]).tobytes()
        stuck.append(not enabled)
        successors_list.clear()
        i += 1
    return i


def _met_by_views(
    successors: list[Record],
    state: Record,
    view: Callable[[Record], Any],
    redo: tuple[type[BaseException], ...],
    seen: set[Any],
    found: list[Record],
    views: list[Any],
    positions: list[int],
    total: int,
) -> None:
    """expand_run_python's look-up by views: a successor whose view is not in `seen` is a
    candidate (its view added to `seen` and `views`)."""
    for j, succ in enumerate(successors):
        if succ is state:
            continue
        try:
            met = freeze(view(succ))
        except redo:
            raise _Bail from None  # (the general path says which step built it)
        try:
            new = met not in seen
            if new:
                hash(succ)  # (its view may not show a list inside a tuple)
        except TypeError:
            raise _Bail from None  # (a successor to freeze)
        if new:
            seen.add(met)
            found.append(succ)
            views.append(met)
            positions.append(total + j)


class _Bail(Exception):
    """expand_run_python: this state takes the general path."""


expand_run = fast.pick(expand_run_python)


def _unmet(
    transitions: Transitions,
    state: Record,
    successors: list[Record],
    actions: list[int],
    offset: int,
    seen: set[Record],
    found: list[Record],
    positions: list[int],
) -> None:
    """Add `state`'s successors that are not in `seen` to it and to `found`, their positions
    in the batch (`offset` + their index) to `positions`. Their actions are
    `actions[offset:]`."""
    start = 0
    while True:
        stop = candidates(successors, start, seen, found, positions, offset, state)
        if stop is None:
            return
        # A list or set inside a tuple: freeze it as put() would, then go on from there.
        ai = actions[offset + stop]
        successors[stop] = transitions.refrozen(state, ai, successors[stop])
        start = stop


def _unmet_recorded(
    transitions: Transitions,
    state: Record,
    successors: list[Record],
    actions: list[int],
    offset: int,
    seen: dict[Record, int | None],
    found: list[Record],
    positions: list[int],
) -> None:
    """`_unmet` with the states met as a dict (to their fingerprints, filled in once the
    candidates found here are fingerprinted)."""
    for index, succ in enumerate(successors):
        try:
            met = succ in seen
        except TypeError:
            succ = successors[index] = transitions.refrozen(state, actions[offset + index], succ)
            met = succ in seen
        if not met:
            seen[succ] = None
            found.append(succ)
            positions.append(offset + index)
