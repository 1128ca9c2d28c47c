"""The model's expansion: a batch of states expanded (`Expansion.expand_batch`: each state's
successors, those met before dropped, the others encoded and fingerprinted; `expand` on one
state), which the search's Expander and every engine run. The common case runs in C
(`expand_run`, checker/hot/expansion.c, reading the model's `Context` and the `Batch` by
name); its twin is `expand_run_python`."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from checker.errors import OUTSIDE, EvaluationError, StateError
from checker.model.dedupe import dedupe
from checker.model.general import General
from checker.model.readsets import ReadSet, read_sets_of
from checker.model.transitions import successors
from checker.result import Step
from checker.steps import StepChecks, StepViolation
from checker.values import fast
from checker.values.encoding import decode, encode_state, encoded
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
    """What `Model.expand_batch` made. Per state: its number of successors (`counts`) and
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
        "failure",
        "fps",
        "indexes",
        "keys",
        "positions",
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
        self.failure: EvaluationError | None = None  # what it raised
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
        # Every `model.recheck_every`-th state this process expands is expanded twice, and the two
        # answers compared (checker.determinism; 0: none), from the first one on.
        # `until_recheck` counts down to the next.
        self.until_recheck = 1
        # The contexts with checks (`checked`), by the id of the context they extend.
        self._checked: dict[int, tuple[Context, Context]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without its contexts (as the model's)."""
        return {**self.__dict__, "_checked": {}}

    def expand(self, data: bytes) -> Successors:
        """The successors of an encoded state, as `successors` gives them, each encoded and
        fingerprinted (a successor's binding is its index in the action's bindings); none if
        the state is outside the state constraints. This is `expand_batch` on one state, every
        successor kept."""
        state = decode(data)
        batch = self.expand_batch([state], None, indexes=True)
        if batch.failure is not None:
            raise batch.failure
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
        the batch: `error` is its index, `failure` the EvaluationError.

        With `read_sets` (one per state, or None for a state without one), incremental
        evaluation (docs/architecture.md): the guards still disabled are not called, and
        the batch has each candidate's ReadSet.

        Runs of states take the common case in one call (`expand_run`, in C with the hot
        path, asking the step checks and TLC's constraints through the context: `checked`);
        a state it cannot take (an error, a successor to freeze, a deadlock to ask `final`
        about, a step that breaks a check, an excluded state that violates an invariant),
        every state of a batch that needs more (binding indexes, a recorded search) and every
        `recheck_every`-th state (expanded twice) are expanded by `expand_state`, its Python
        twin, on the general path."""
        out = Batch(indexes, keyed is not None, bool(keyed))
        model = self.model
        if read_sets is not None:
            out.read_sets = []
        general = General(
            model,
            self.evaluation,
            self.identity,
            self.transitions,
            self,
            checks=checks,
            bindings=indexes or bool(keyed) or seen is None,
            indexes=out.indexes,
            targets=out.targets,
            keys=out.keys,
            keyed=keyed,
        )
        # Met by their views (see Model.by_view): each candidate's view, aligned with the
        # candidates, gives its fingerprint. Fingerprinted by `fingerprint_of` with a view or
        # symmetry (without, `fingerprint_of` is the fingerprint of the encoding: all of a
        # state's candidates at once, recorded or not).
        by_view = model.by_view and type(seen) is set
        identified = model.reduces and not by_view
        context = model.context(by_view, identified)
        if general.steps is not None or general.exclusions:
            context = self.checked(context)
        run = (
            type(seen) is set
            and type(states) is list
            and (read_sets is None or type(read_sets) is list)
            and general.bindings is None
        )
        counts, fps = out.counts, out.fps
        run_counts, run_fps = out.run_counts, out.run_fps  # (each call's: moved to those)
        i, count = 0, len(states)
        bailed = -1  # a state the run stopped before: the general path's
        while i < count:
            try:
                if run and i != bailed and (model.recheck_every <= 0 or self.until_recheck > 1):
                    stop = count
                    if model.recheck_every > 0:
                        stop = min(stop, i + self.until_recheck - 1)
                    try:
                        resume = expand_run(context, out, states, i, stop, read_sets, seen)
                    finally:
                        self.until_recheck -= len(run_counts) // 4
                    if resume < stop:
                        bailed = resume
                    if resume > i:
                        i = resume
                        continue
                expand_state(context, out, states, i, read_sets, seen, general)  # type: ignore[arg-type]
                i += 1
            except EvaluationError as exc:  # (the state that raised: the next one counted)
                out.error, out.failure = i + len(run_counts) // 4, exc
                break
            finally:
                counts.frombytes(run_counts)
                fps.frombytes(run_fps)
                del run_counts[:], run_fps[:]
        return out

    def checked(self, context: Context) -> Context:
        """`context` with the step checks and TLC's constraints, which expand_run asks too
        (made once per context)."""
        made = self._checked.get(id(context))
        if made is None or made[0] is not context:
            steps, evaluation = self.model.steps, self.evaluation
            made = self._checked[id(context)] = (
                context,
                context._replace(
                    broken=None if steps is None else _broken_by(steps),
                    outside=_outside_by(evaluation) if self.model.exclusions else None,
                ),
            )
        return made[1]

    def step_of(self, data: bytes, index: int) -> Step:
        """Successor `index` of the encoded state (in `expand`'s order) as a trace's step."""
        state = decode(data)
        batch = self.expand_batch([state], None, indexes=True, checks=False)
        if batch.failure is not None:
            raise batch.failure
        ai, binding_index = batch.actions[index], batch.indexes[index]  # type: ignore[index]
        act = self.model.actions[ai]
        binding = act.bindings(state)[binding_index]
        try:
            event = act.event(state, binding)
        except EvaluationError:
            event = None
        return Step(act.name, act.describe(binding), batch.candidates[index], event)


def expand_state(
    context: Context,
    batch: Batch,
    states: list[Record],
    i: int,
    read_sets: list[ReadSet | None] | None,
    seen: set[Any] | dict[Record, Any] | None,
    general: General | None,
) -> None:
    """Expand `states[i]` into `batch` (see expand_run, in checker/hot/expansion.c): its
    successors, those not in `seen` (the candidates), their read sets, encodings and
    fingerprints, its count and whether it is stuck (to batch.run_counts, batch.stuck,
    batch.run_fps). Without `general`, the common case only, as C does: a state that needs
    more raises _Bail (or an error of a class in context.bail), what was done for it undone.
    With `general` (the general path), every case: a successor frozen, an intended final
    state, views and renamings that raise said with the step that built the successor, step
    checks, TLC's constraints, recorded targets and keys, binding indexes, the state expanded
    twice. Any other error is raised, what was done for the state undone."""
    state = states[i]
    within = context.within
    if within is not None and not within(state):
        batch.run_counts += _NO_SUCCESSOR
        batch.stuck.append(0)
        return
    successors_list, actions = batch.successors, batch.actions
    candidates, positions, encodings = batch.candidates, batch.positions, batch.encodings
    views, view, identify = batch.views, context.view, context.identify
    made = None if read_sets is None else batch.read_sets
    total, first, made_first = len(actions), len(candidates), 0 if made is None else len(made)
    read_set = None if read_sets is None else read_sets[i]
    masks = bytearray(8 * context.slots)
    state_fps = array("Q")
    try:
        if general is not None and general.twice():
            bindings = general.bindings
            enabled = general.transitions.twice(state, successors_list, actions, bindings)
        elif read_sets is None:
            bindings = None if general is None else general.bindings
            enabled = successors(context, state, successors_list, actions, bindings)
        else:
            bindings = None if general is None else general.bindings
            guards, changed = (None, 0) if read_set is None else read_set[:2]
            enabled = successors(
                context, state, successors_list, actions, bindings, guards, changed, masks
            )
        if not enabled and context.terminals:
            if general is None:
                raise _Bail  # (an intended final state?)
            if general.evaluation.final(state):
                enabled = True  # an intended final state: no deadlock
        stepped = None
        if general is not None and general.steps is not None:
            stepped = general.first_broken(state, successors_list)
        elif general is None and context.broken and context.broken(state, successors_list):
            raise _Bail  # (the general path says which step breaks which check)
        if seen is None:  # (the general path's: `expand`, every successor kept)
            candidates += successors_list
            positions.extend(range(total, total + len(successors_list)))
        elif general is None and view is not None:
            _met_by_views(
                successors_list,
                state,
                view,
                context.redo,
                seen,
                candidates,
                views,
                positions,
                total,
            )  # type: ignore[arg-type]
        elif general is None:
            if dedupe(successors_list, 0, seen, candidates, positions, total, state) is not None:
                raise _Bail  # (a successor to freeze)
        elif view is not None:
            general.unmet_by_view(state, successors_list, actions, total, seen, views, positions)  # type: ignore[arg-type]
            candidates += [successors_list[p - total] for p in positions[first:]]
        else:
            general.unmet(state, successors_list, actions, total, seen, candidates, positions)
        if general is not None and general.exclusions:
            # (up to that step: a violation there or before comes first)
            upto = None if stepped is None else stepped.index
            general.exclude(state, candidates, positions, first, total, seen, upto)
        elif general is None and context.outside is not None:
            _drop_outside(
                context.outside, candidates, views if view is not None else None, positions, first
            )
        if made is not None:
            held = None if read_set is None else read_set.invariants
            read_sets_of(context.read_set, state, candidates, first, bytes(masks), held, made)
        if stepped is not None:
            raise stepped
        if identify is None and (general is None or general.indexes is None):
            # All at once; one that cannot be encoded: again below, which says why.
            try:
                shown = views if view is not None else None
                state_fps.frombytes(
                    encoded(candidates, first, context.fingerprint, encodings, shown)
                )
            except StateError:
                if general is None:
                    raise
                del encodings[first:]
        indexes = None if general is None else general.indexes
        if indexes is not None:  # (the general path's: each candidate's binding's index)
            kept, domains = general.bindings, general.domains  # type: ignore[union-attr]
            binding_index = general.transitions.binding_index  # type: ignore[union-attr]
        for k in range(first + len(state_fps), len(candidates)):
            succ, position = candidates[k], positions[k]
            try:
                data = encode_state(succ)
            except StateError as exc:
                if general is None:
                    raise
                raise general.unencodable(actions[position], position - total, state, exc) from exc
            if view is not None:
                if general is None:
                    fp = context.fingerprint(encode_state(views[k]))
                else:
                    fp = general.view_fingerprint(views[k], succ)
            elif identify is not None:
                try:
                    fp = identify(succ, data)
                except context.redo as exc:
                    if general is None:
                        raise _Bail from None  # (the general path says which step built it)
                    raise general.on_successor(
                        exc, actions[position], position - total, succ
                    ) from exc  # type: ignore[arg-type]
            else:
                fp = context.fingerprint(data)
            state_fps.append(fp)
            encodings.append(data)
            if indexes is not None:
                binding = kept[position - total]  # type: ignore[index]
                indexes.append(binding_index(state, actions[position], binding, domains))
        if general is not None and general.targets is not None:
            general.record(seen, candidates, first, state_fps, successors_list, actions, total)  # type: ignore[arg-type]
    except BaseException as exc:
        if seen is not None:
            for met in (candidates if view is None else views)[first:]:
                if type(seen) is dict:
                    seen.pop(met, None)
                else:
                    seen.discard(met)  # type: ignore[union-attr]
        del candidates[first:], positions[first:], encodings[first:], actions[total:]
        if view is not None:
            del views[first:]
        if made is not None:
            del made[made_first:]
        successors_list.clear()
        if general is not None:
            general.undo(total, first)
            general.done()
        elif isinstance(exc, context.bail):
            raise _Bail from None
        raise
    batch.run_fps += state_fps.tobytes()
    batch.run_counts += array("I", [len(successors_list)]).tobytes()
    batch.stuck.append(not enabled)
    successors_list.clear()
    if general is not None:
        general.done()


_NO_SUCCESSOR = array("I", [0]).tobytes()


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
    `batch`): `expand_state` on each, without its general path."""
    i, stop = max(start, 0), min(stop, len(states))
    while i < stop:
        try:
            expand_state(context, batch, states, i, read_sets, seen, None)
        except _Bail:
            return i
        i += 1
    return i


def _met_by_views(
    successors: list[Record],
    state: Record,
    view: Callable[[Record], Any],
    redo: tuple[type[BaseException], ...],
    seen: set[Any],
    candidates: list[Record],
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
            candidates.append(succ)
            views.append(met)
            positions.append(total + j)


def _drop_outside(
    outside: Callable[[Record], int],
    candidates: list[Record],
    views: list[Any] | None,
    positions: list[int],
    first: int,
) -> None:
    """expand_run_python's TLC's constraints: the candidates from `first` on that `outside`
    puts outside them are dropped, with their views and positions (they stay met: never
    expanded); one that needs the general path (2) raises _Bail, nothing dropped."""
    verdicts = [outside(succ) for succ in candidates[first:]]
    if any(v not in (0, 1) for v in verdicts):
        raise _Bail
    for k in reversed(range(len(verdicts))):
        if verdicts[k]:
            del candidates[first + k], positions[first + k]
            if views is not None:
                del views[first + k]


def _broken_by(steps: StepChecks) -> Callable[[Record, list[Record]], bool]:
    """A Context's `broken`: whether a step of the state breaks a check of `steps`, or one
    raises (the general path raises it again, and says where)."""

    def broken(state: Record, successors: list[Record]) -> bool:
        try:
            steps.first_broken(state, successors)
        except (StepViolation, EvaluationError):
            return True
        return False

    return broken


def _outside_by(evaluation: Evaluation) -> Callable[[Record], int]:
    """A Context's `outside`: 0 for a successor within TLC's constraints, 1 outside them, 2
    outside and violating an invariant, or a constraint or an invariant that raises (the
    general path's: it raises ExcludedViolation or the error, and says where)."""

    # (the constraints' functions called here, as Evaluation.excluded calls them: it is asked
    # of every candidate; what raises or answers no bool is the general path's, which says so)
    fns = tuple(c.fn for c in evaluation.model.exclusions)

    def outside(succ: Record) -> int:
        try:
            for fn in fns:
                ok = fn(succ)
                if ok is not True:
                    if ok is not False:
                        return 2
                    break
            else:
                return 0
            return 1 if evaluation.violated(succ) is None else 2
        except OUTSIDE:
            raise
        except BaseException:
            return 2

    return outside


class _Bail(Exception):
    """expand_run_python: this state takes the general path."""


expand_run = fast.pick(expand_run_python)
