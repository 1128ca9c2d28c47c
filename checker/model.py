"""The compiled spec at work (a Model holds a CompiledSpec): a state's successors
(`successors`, the hot loop of every engine, in C with the hot path: checker.values.fast;
`successors_python` below is its twin), a batch of states expanded (`expand_batch`: the
successors deduplicated, encoded and fingerprinted, which the search's Expander and every
engine run; `expand` is it on one state), what identifies a state (`fingerprint_of`: its
view, up to symmetry), and the checks of a state (invariants, reachability, final states)."""

from __future__ import annotations

import difflib
import inspect
import reprlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from checker import determinism
from checker.behaviour import binding_key
from checker.compiled import Binding, CompiledSpec, Invariant
from checker.errors import OUTSIDE, EvaluationError, Interrupted, SpecError, StateError, raised
from checker.result import CheckResult, Step
from checker.spec import Spec
from checker.steps import ExcludedViolation, Refines, StepCheck, StepChecks, StepViolation
from checker.symmetry import Permutation
from checker.values import fast, kinds, show
from checker.values.encoding import (
    MAX_DEPTH,
    NESTED,
    decode,
    deeper_than,
    encode,
    encode_state,
    encoded,
    fingerprint,
)
from checker.values.record import Map, Record, freeze

_REDUCED_CACHE = 1 << 18  # entries (about 25 MB) of Model.fingerprint_of's cache, per process
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


class Memo(NamedTuple):
    """What incremental evaluation (docs/architecture.md) keeps with a live state: its
    parent's masks (8 bytes per action binding of a fixed domain: the variables the binding's
    guard read there, marked, if it was disabled), the variables the state changed from its
    parent (bits, as checker._hot numbers them), and its invariants' masks (the variables each
    read, marked, if it held; None: not evaluated so). A candidate's memo, as expand_batch
    makes it, has its parent's invariant masks instead, which its own evaluation starts from
    and then replaces."""

    parent: bytes
    changed: int
    invariants: bytes | None


class Context(NamedTuple):
    """What `successors` and `expand_run` need of a model (C reads it by name: see
    checker/hot/expansion.c), made once per model and kind of batch, never changed."""

    plan: tuple[Any, ...]  # CompiledSpec.plan
    add: Callable[..., bool]  # a result that is not one successor of the state's shape
    reraise: Callable[..., None]  # what an action raised
    constrained: bool  # whether there are action constraints
    kinds: kinds.Kind | None  # the states' kind
    kind_error: Callable[..., None]  # a successor whose variables are not of their kinds
    read_set: type  # Memo
    fingerprint: Callable[[bytes], int]
    slots: int  # the guards' masks: one per action binding of a fixed domain
    terminals: bool  # whether a state without successors may be an intended final state
    bail: tuple[type[BaseException], ...]  # the errors that send a state to the general path
    within: Callable[[Record], bool] | None  # inside the state constraints (None: no constraint)
    view: Callable[[Record], Any] | None  # met by their views: the spec's view
    redo: tuple[type[BaseException], ...]  # the errors of `view`, `identify` that send it there
    identify: Callable[[Record, bytes], int] | None  # a candidate's fingerprint, from its encoding


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
        # Incremental evaluation (docs/architecture.md): each candidate's Memo, when the
        # batch was expanded with memos.
        self.read_sets: list[Memo] | None = None
        # What a run of expand_run fills besides: the successors of the state being expanded,
        # the candidates' views (met by views), the run's counts and fingerprints (bytes).
        self.successors: list[Record] = []
        self.views: list[Any] = []
        self.run_counts = bytearray()
        self.run_fps = bytearray()


class Model:
    """The engines' view of a spec: no Kafka, no printing, just states and transitions."""

    def __init__(
        self,
        spec: Spec,
        path: str = "",
        invariants: Sequence[str] | None = None,
        symmetry: bool = True,
        view: bool = True,
    ):
        """`symmetry=False` ignores the symmetry the spec declares (`mc check --no-symmetry`),
        `view=False` its view (`--no-view`)."""
        self.compiled = compiled = CompiledSpec(spec, path, invariants, symmetry, view)
        # What the engines read of the compiled spec, as the model's own attributes (one
        # lookup on the hot paths; a test may narrow them, e.g. drop the reachables).
        self.spec, self.path, self.name = compiled.spec, compiled.path, compiled.name
        self.constants = compiled.constants
        self.actions = compiled.actions
        self.invariants = compiled.invariants
        self.reachables = compiled.reachables
        self.terminals = compiled.terminals
        self.constraints = compiled.constraints
        self.action_constraints = compiled.action_constraints
        self.exclusions = compiled.exclusions
        checks = [StepCheck(p.name, p.fn, f"[][{p.name}]") for p in compiled.step_properties]
        where = path or compiled.name
        checks += [Refines(n, spec, r, Model, where) for n, r in compiled.refinements]
        # The checks of every step (None: the spec declares none, and steps cost nothing).
        self.steps = StepChecks(checks) if checks else None
        self.view = compiled.view
        self.symmetry = compiled.symmetry
        self.reduces = compiled.reduces
        # With a view (and no symmetry), the expanders meet states by their views: a successor
        # whose view is that of a state met before has its fingerprint, so the search would
        # find it known; it is dropped before it is encoded or checked (docs/architecture.md).
        # (Not with TLC's constraints, which drop some candidates before their fingerprints.)
        self.by_view = self.view is not None and self.symmetry is None and not self.exclusions
        self._plan = compiled.plan
        self._constrained = bool(compiled.action_constraints)
        # Incremental evaluation's masks: one per action binding of a fixed domain (arity 0:
        # one), in the plan's order, as checker._hot counts them.
        self._predicates: tuple[tuple[Invariant, ...], tuple[Callable[..., Any], ...]] | None = None
        self.slots = sum(
            1 if arity == 0 else len(static) if static is not None else 0
            for _, _, arity, static, _, _ in compiled.plan
        )
        self._reduced_fps: dict[int, int] = {}  # concrete fingerprint -> fingerprint_of
        self._contexts: dict[tuple[bool, bool], Context] = {}  # (by view, identified) -> one
        # The states' kind (checker.values.kinds), from the initial states and the declared types:
        # known once the initial states are.
        self._kinds: kinds.Kind | None = None
        self._initial: list[Record] | None = None
        # Every `recheck`-th state this process expands is expanded twice, and the two answers
        # compared (checker.determinism; 0: none), from the first one on. `_until_recheck`
        # counts down to the next.
        self.recheck = determinism.RECHECK
        self._until_recheck = 1

    @property
    def kinds(self) -> kinds.Kind:
        """The kind of the states (a RECORD kind: each variable's kind), from the initial
        states and the spec's `types`."""
        if self._kinds is None:
            self.initial_states()
        assert self._kinds is not None
        return self._kinds

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without the driver's fingerprint cache."""
        # Nor with the states' kind, which names the shapes (classes) of this process: an
        # executor infers it again, from its own initial states.
        return {
            **self.__dict__,
            "_reduced_fps": {},
            "_kinds": None,
            "_initial": None,
            "_contexts": {},
        }

    def context(self, by_view: bool = False, identified: bool = False) -> Context:
        """The Context of `successors` and of expand_run for batches met by their views, or
        whose candidates' fingerprints are `fingerprint_of` (`identified`), made once."""
        key = (by_view, identified)
        made = self._contexts.get(key)
        if made is None:
            made = self._contexts[key] = Context(
                self._plan,
                self._add,
                self._reraise,
                self._constrained,
                self.kinds,
                self._kind_error,
                Memo,
                fingerprint,
                self.slots,
                bool(self.terminals),
                (StateError,),
                self.within_constraints if self.constraints else None,
                # (the spec's view itself: any error of it is said by the general path)
                self.view if by_view else None,
                (Exception,) if by_view else (EvaluationError,),
                self.fingerprint_of if identified else None,
            )
        return made

    def new_result(self) -> CheckResult:
        """An empty result for a check of this model, for an engine to fill in."""
        return CheckResult(
            spec=self.path,
            spec_name=self.name,
            constants=dict(self.constants),
            invariants=[inv.name for inv in self.invariants],
            constraints=[c.name for c in self.constraints + self.exclusions],
            action_constraints=[c.name for c in self.action_constraints],
            view=self.view is not None,
            symmetry=None if self.symmetry is None else self.symmetry.describe(),
            reachable=[r.name for r in self.reachables],
            step_properties={} if self.steps is None else self.steps.formulas(),
        )

    # -- states ----------------------------------------------------------------------------

    def initial_states(self) -> list[Record]:
        if self._initial is not None:
            return list(self._initial)
        try:
            result = self.spec.init()
        except NotImplementedError:
            raise SpecError(f"{self.name} has no initial state: define init(self)") from None
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise EvaluationError("init", "init", raised(exc), cause=exc) from exc
        states = [result] if isinstance(result, Record) else _as_list(result)
        if states is None or not all(isinstance(s, Record) for s in states):
            raise EvaluationError(
                "init", "init", f"must return a Record or a list of Records, not {result!r}"
            )
        if not states:
            raise SpecError(f"{self.name}.init() returned no initial state")
        if any(isinstance(s, Map) for s in states):
            raise EvaluationError(
                "init", "init", "a state's variables must be names (identifiers), not map keys"
            )
        for other in states[1:]:
            if other.keys() != states[0].keys():
                differ = _variables_differ(other, states[0])
                message = f"returned initial states with different variables: one {differ}"
                raise EvaluationError("init", "init", message)
        if any(deeper_than(s, MAX_DEPTH) for s in states):
            raise EvaluationError("init", "init", f"built a state that cannot be encoded: {NESTED}")
        declared = self.compiled.declared_types
        unknown = [n for n in declared if n not in states[0]]
        if unknown:
            names = [str(k) for k in states[0]]
            close = difflib.get_close_matches(unknown[0], names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(
                f"{self.path or self.name}: {self.name} declares the type of {unknown[0]!r},"
                f" which is not a variable of its states (variables: {', '.join(names)}){hint}"
            )
        kind, why = kinds.state_kind(states, declared)
        if kind is None:
            raise EvaluationError("init", "init", f"returned states that mc cannot type: {why}")
        self._kinds = kind
        self._initial = states
        return list(states)

    def initial(self) -> list[Successor]:
        """The initial states, encoded and fingerprinted (action ROOT, binding = init index)."""
        out = []
        for index, state in enumerate(self.initial_states()):
            data = _encoded(state, "init", "init", state=None, params={})
            out.append(Successor(ROOT, index, state, data, self.fingerprint_of(state, data)))
        return out

    def fingerprint_of(self, state: Record, data: bytes | None = None) -> int:
        """What identifies `state` in the search (`data`: its encoding, if known): the
        fingerprint of its encoding, or of its view's; with symmetry, of the smallest of
        those over every renaming of the symmetric values."""
        if data is None:
            data = encode(state)
        raw = fingerprint(data)
        if not self.reduces:
            return raw
        fp = self._reduced_fps.get(raw)
        return self._reduce(state, data, raw) if fp is None else fp

    def _reduce(self, state: Record, data: bytes, raw: int) -> int:
        """`fingerprint_of` a state with a view or a symmetry, which costs a view and a
        renaming per permutation: the result is remembered for the state, and (without a
        view) for its renamings, which are the same state to the search. Most states
        generated were generated before, or are renamings of one that was."""
        if self.symmetry is None:
            best = self._encoded_view(state)
            renamed: list[bytes] = []
        else:
            best, renamed = self._representative(state, data)
        fp = fingerprint(best)
        cache = self._reduced_fps
        if len(cache) + len(renamed) >= _REDUCED_CACHE:
            cache.clear()
        cache[raw] = fp
        for other in renamed:
            cache[fp if other is best else fingerprint(other)] = fp
        return fp

    def _representative(self, state: Record, data: bytes) -> tuple[bytes, list[bytes]]:
        """The smallest encoding (of the view, if any) of the candidate images of `state`
        (checker.symmetry), and the encodings of those images (without a view)."""
        assert self.symmetry is not None
        if not self.symmetry.learned:
            self.symmetry.learn(self.initial_states()[0])  # the same in every process
        best = None
        renamed = []
        identity = self.symmetry.identity
        for p in self.symmetry.candidates(state):
            # (the identity's image is the state: permute is not asked, the encoding is known)
            image = state if p is identity else self._permuted(state, p)
            if self.view is None:
                if image is state:
                    other = data
                else:
                    other = _encoded(image, "permute", "permute", state=state, params={})
                renamed.append(other)
            else:
                other = self._encoded_view(image)
            if best is None or other < best:
                best = other
        assert best is not None
        return best, renamed

    def _encoded_view(self, state: Record) -> bytes:
        return _encoded(self.view_of(state), "view", "view", state=state, params={})

    def view_of(self, state: Record) -> Any:
        """The spec's view of `state`, frozen (EvaluationError if the view raises)."""
        assert self.view is not None
        try:
            return freeze(self.view(state))
        except StateError as exc:
            raise EvaluationError(
                "view", "view", f"returned a value that cannot be encoded: {exc}", state=state
            ) from exc
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise EvaluationError("view", "view", raised(exc), state=state, cause=exc) from exc

    def met(self, states: Iterable[Record]) -> Iterable[Any]:
        """What an expander remembers of the states it met: their views (`by_view`), or the
        states."""
        return map(self.view_of, states) if self.by_view else states

    def _permuted(self, state: Record, p: Permutation) -> Record:
        assert self.symmetry is not None
        try:
            image = self.symmetry.permute(state, p)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise EvaluationError(
                "permute", "permute", f"{raised(exc)} (renaming {p})", state=state, cause=exc
            ) from exc
        if not isinstance(image, Record) or image.keys() != state.keys():
            what = (
                f"a state {_variables_differ(image, state)}"
                if isinstance(image, Record)
                else repr(image)
            )
            raise EvaluationError(
                "permute",
                "permute",
                f"returned {what}; it must return the state with the same variables",
                state=state,
            )
        return image

    def within_constraints(self, state: Record) -> bool:
        """Whether `state` satisfies every state constraint (else it is not expanded)."""
        for c in self.constraints:  # noqa: SIM110 (a loop, not all() of a generator per state)
            if not _holds("constraint", c.name, c.fn, state):
                return False
        return True

    def excluded(self, state: Record) -> bool:
        """Whether `state` fails a constraint that does not admit it (TLC's CONSTRAINT): it is
        checked against the invariants, and never becomes a state of the search."""
        return not all(_holds("constraint", c.name, c.fn, state) for c in self.exclusions)

    def _allowed(self, ai: int, binding: Binding, state: Record, succ: Record) -> bool:
        """Whether every action constraint allows the step from `state` to `succ`."""
        params = self.actions[ai].describe(binding)
        return all(
            _holds("action constraint", c.name, c.fn, state, succ, params=params)
            for c in self.action_constraints
        )

    def fire(self, ai: int, binding: Binding, state: Record) -> list[Record]:
        """The successors of `state` under action `ai` with parameters `binding`, as `expand`
        gives them: none outside the state constraints, none an action constraint discards."""
        if self.constraints and not self.within_constraints(state):
            return []
        act = self.actions[ai]
        try:
            result = act.fn(state, *binding)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise self._raised_in(ai, binding, state, exc) from exc
        successors = self._successors(ai, binding, state, result)
        if self.action_constraints:
            successors = [t for t in successors if self._allowed(ai, binding, state, t)]
        return successors

    def _raised_in(
        self, ai: int, binding: Binding, state: Record, exc: BaseException
    ) -> BaseException:
        act = self.actions[ai]
        return EvaluationError(
            "action", act.name, raised(exc), state=state, params=act.describe(binding), cause=exc
        )

    def _successors(self, ai: int, binding: Binding, state: Record, result: Any) -> list[Record]:
        """An action's return value as a list of checked successor states."""
        if result is None:
            return []
        try:  # a generator runs the action's code here: what it raises is the action's error
            many = [result] if isinstance(result, Record) else _as_list(result)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise self._raised_in(ai, binding, state, exc) from exc
        for succ in many if many is not None else (result,):
            if not isinstance(succ, Record):
                message = (
                    f"returned {_short(result)}; an action returns None, a Record or a list of"
                    " Records"
                )
            elif succ.keys() != state.keys():
                message = f"returned a state {_variables_differ(succ, state)}"
            else:
                if not kinds.conforms(succ, state, self.kinds):
                    self._kind_error(ai, binding, state, succ)
                continue
            act = self.actions[ai]
            raise EvaluationError(
                "action", act.name, message, state=state, params=act.describe(binding)
            )
        return many  # type: ignore[return-value]

    def successors(
        self,
        state: Record,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None = None,
        memo: bytes | None = None,
        changed: int = 0,
        out: bytearray | None = None,
    ) -> bool:
        """The engines' shared step: append every successor of `state` to `states`, in the
        fixed order (actions as declared, then parameter bindings, then the action's own
        order), its action index to `actions` and, if given, its binding to `bindings`; none
        that an action constraint discards. Returns whether any action was enabled (the state
        constraints are the caller's to check). This is the hot loop of every engine: one call
        per action and binding, and the common case (an action returning one Record with the
        state's variables) takes the short path. With the C hot path the same loop runs in C
        (`states` and `actions` must then be lists). With `out` (a bytearray of 8 bytes per
        slot): incremental evaluation, see docs/architecture.md."""
        context = self._contexts.get((False, False)) or self.context()
        if out is None:
            return successors(context, state, states, actions, bindings)
        return successors(context, state, states, actions, bindings, memo, changed, out)

    def _add(
        self,
        ai: int,
        binding: Binding,
        state: Record,
        result: Any,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None,
    ) -> bool:
        """The general case of `successors`: a list of successors, action constraints, or a
        result to check. Returns whether the action was enabled."""
        many = self._successors(ai, binding, state, result)
        for succ in many:
            if self.action_constraints and not self._allowed(ai, binding, state, succ):
                continue
            states.append(succ)
            actions.append(ai)
            if bindings is not None:
                bindings.append(binding)
        return bool(many)

    def _kind_error(self, ai: int, binding: Binding, state: Record, succ: Record) -> None:
        """A successor whose variables are not all of their kinds: raise the error that says
        which variable, both kinds and the action; unless it was only a list or set inside a
        tuple, which the engine freezes (as put() would) before it encodes the state."""
        act = self.actions[ai]
        params = act.describe(binding)
        if deeper_than(succ, MAX_DEPTH):  # (what follows would recurse too deep)
            raise _unencodable(StateError(NESTED), "action", act.name, state, params)
        try:
            frozen = type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
        except StateError as exc:
            raise _unencodable(exc, "action", act.name, state, params) from exc
        state_kind = self.kinds
        if kinds.conforms(frozen, state, state_kind):
            return
        for index, (name, value) in enumerate(frozen.items(), start=1):
            found = kinds.mismatch(value, state_kind.b[index], str(name))
            if found is None:
                continue
            path, expected, part, optional = found
            declared = self.compiled.declared_types
            origin = "as declared" if name in declared else "in the initial states"
            message = (
                f"changed the kind of {path}: {kinds.describe(expected)} {origin},"
                f" {kinds.found_kind(part)} in the state it built ({path} = {show(part)})"
            )
            if part is None:
                message += (
                    f"; if {name} may hold None there, declare it in the spec class:"
                    f" {name}: {kinds.python_type(optional)}"
                )
            raise EvaluationError("action", act.name, message, state=state, params=params)
        raise AssertionError("a successor failed its kind check, and no variable does")

    def _reraise(self, ai: int, binding: Binding, state: Record, exc: BaseException) -> None:
        """Raise what an action raised as the EvaluationError that says where (for C, which
        passes every exception here); an interrupt or running out of memory goes on as it
        was."""
        try:
            if isinstance(exc, OUTSIDE):
                raise exc
            raise self._raised_in(ai, binding, state, exc) from exc
        finally:
            # The traceback holds this frame: with `exc` in it, the exception, its traceback
            # and every frame below (the whole search) would be a cycle that only the
            # collector frees, walking every live state first.
            del exc

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
        memos: Sequence[Memo | None] | None = None,
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

        With `memos` (one per state, or None for a state without one), incremental
        evaluation (docs/architecture.md): the guards still disabled are not called, and
        the batch has each candidate's Memo."""
        out = Batch(indexes, keyed is not None, bool(keyed))
        incremental = memos is not None
        slots = self.slots
        made: list[Memo] = []
        if incremental:
            out.read_sets = made
        constraints = self.constraints
        terminals = self.terminals
        # The checks of the steps and of TLC's constraints (`checks` False: none, to rebuild
        # a step already checked).
        step_checks = self.steps if checks else None
        exclusions = self.exclusions if checks else ()
        # With a view or symmetry, or recorded (for the fingerprints of the states met).
        identify = self.reduces or keyed is not None
        fingerprint_of = self.fingerprint_of
        successors_of = self.successors
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
        by_view = self.by_view and type(seen) is set
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
            and (memos is None or type(memos) is list)
            and bindings is None
            and step_checks is None
            and not exclusions
        )
        context = self.context(by_view, identify and not by_view) if run else None
        resume = 0  # the first state the run has not expanded
        general = -1  # a state the run stopped before: the loop's
        ran, found = out.run_counts, out.run_fps  # (its counts and fingerprints)
        for i, state in enumerate(states):
            if i < resume:
                continue
            if run and i != general and (self.recheck <= 0 or self._until_recheck > 1):
                stop = len(states)
                if self.recheck > 0:
                    stop = min(stop, i + self._until_recheck - 1)
                try:
                    resume = expand_run(context, out, states, i, stop, memos, seen)
                except EvaluationError as exc:  # (the state that raised: the next one counted)
                    resume = i + len(ran) // 4
                    out.error, out.raised = resume, exc
                    break
                finally:
                    self._until_recheck -= len(ran) // 4
                    counts.frombytes(ran)
                    fps.frombytes(found)
                    del ran[:], found[:]
                    total = len(actions)
                if resume < stop:
                    general = resume
                if resume > i:
                    continue
            try:
                if constraints and not self.within_constraints(state):
                    counts.append(0)
                    stuck.append(0)
                    continue
                if incremental:
                    memo = memos[i]  # type: ignore[index]
                    masks = bytearray(8 * slots)  # (all zero: no guard known to be disabled)
                self._until_recheck -= 1
                if self._until_recheck <= 0 and self.recheck > 0:
                    self._until_recheck = self.recheck
                    enabled = self._expand_twice(state, successors, actions, bindings)
                elif incremental:
                    before, changed = (None, 0) if memo is None else (memo.parent, memo.changed)
                    enabled = successors_of(
                        state, successors, actions, bindings, before, changed, masks
                    )
                else:
                    enabled = successors_of(state, successors, actions, bindings)
                if not enabled and terminals and self.final(state):
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
                    self._unmet_by_view(
                        state, successors, bindings, actions, total, seen, views, positions
                    )
                    candidates += [successors[p - total] for p in positions[first:]]
                else:
                    unmet(self, state, successors, actions, total, seen, candidates, positions)
                if exclusions:  # up to that step: a violation there or before comes first
                    upto = None if stepped is None else stepped.index
                    self._exclude(state, candidates, positions, first, total, seen, upto)
                if incremental:
                    held = None if memo is None else memo.invariants
                    memos_of(Memo, state, candidates, first, bytes(masks), held, made)
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
                        raise self._unencodable(actions[position], binding, state, exc) from exc
                    if by_view:
                        fp = fingerprint(_encoded(views[k], "view", "view", state=succ, params={}))
                    elif identify:
                        try:
                            fp = fingerprint_of(succ, data)
                        except EvaluationError as exc:
                            binding = () if bindings is None else bindings[position - total]
                            raise self._on_successor(exc, actions[position], binding, succ) from exc
                    else:
                        fp = fingerprint(data)
                    fps.append(fp)
                    encodings.append(data)
                    if binding_indexes is not None:
                        ai = actions[position]
                        binding = bindings[position - total]  # type: ignore[index]
                        binding_indexes.append(self.binding_index(state, ai, binding, domains))
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

    def _unmet_by_view(
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
        view_of = self.view_of
        first = len(positions)
        try:
            for succ in successors:
                mine.append(view_of(succ))
        except EvaluationError as exc:
            index = len(mine)
            binding = () if bindings is None else bindings[index]
            succ = successors[index]
            raise self._on_successor(exc, actions[offset + index], binding, succ) from exc
        start = 0
        while (stop := candidates(mine, start, seen, views, positions, offset, None)) is not None:
            # A list or set inside a tuple: the successor frozen as put() would, then its view.
            ai = actions[offset + stop]
            succ = successors[stop] = _refrozen(self, state, ai, successors[stop])
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
                successors[p - offset] = _refrozen(self, state, actions[p], successors[p - offset])

    def _expand_twice(
        self,
        state: Record,
        successors: list[Record],
        actions: list[int],
        bindings: list[Binding] | None,
    ) -> bool:
        """`successors` on `state`, then again: the two answers must be the same
        (checker.determinism), else NondeterminismError."""
        start = len(actions)
        mine: list[Binding] = [] if bindings is None else bindings
        enabled = self.successors(state, successors, actions, mine)
        first = list(zip(actions[start:], mine, successors))
        again: list[Record] = []
        again_actions: list[int] = []
        again_bindings: list[Binding] = []
        try:
            enabled_again = self.successors(state, again, again_actions, again_bindings)
        except EvaluationError as exc:
            raise determinism.not_deterministic(
                f"in state {show(state)}, {exc.kind} {exc.name} raised or failed only when the"
                f" state was expanded again ({exc.message})"
            ) from exc
        second = list(zip(again_actions, again_bindings, again))
        determinism.compare(state, first, second, self.describe_step)
        if enabled != enabled_again:
            raise determinism.not_deterministic(
                f"state {show(state)} had an action enabled only one of the two times it was"
                " expanded"
            )
        return enabled

    def describe_step(self, ai: int, binding: Binding | None) -> str:
        """An action with its parameters, as messages name it: `add(step=1)`."""
        act = self.actions[ai]
        if binding is None:
            return f"action {act.name}"
        params = ", ".join(f"{k}={show(v)}" for k, v in act.describe(binding).items())
        return f"action {act.name}({params})"

    def _exclude(
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
            if self.excluded(succ):
                broken = self.violated(succ)
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
        act = self.actions[ai]
        binding = act.bindings(state)[binding_index]
        try:
            event = act.event(state, binding)
        except EvaluationError:
            event = None
        return Step(act.name, act.describe(binding), batch.candidates[index], event)

    def binding_index(
        self, state: Record, ai: int, binding: Binding, domains: dict[int, Sequence[Binding]]
    ) -> int:
        """The index of `binding` among action `ai`'s bindings in `state`, which is what a
        link keeps (`domains`: the bindings computed for `state` so far, by action)."""
        domain = domains.get(ai)
        if domain is None:
            domain = domains[ai] = self.actions[ai].bindings(state)
        return domain.index(binding)

    def _on_successor(
        self, exc: EvaluationError, ai: int, binding: Binding, succ: Record
    ) -> EvaluationError:
        """A view or permute that failed on a successor, saying which step built it."""
        act = self.actions[ai]
        return EvaluationError(
            exc.kind,
            exc.name,
            f"{exc.message}, on the successor that {act.name} built",
            state=succ,
            params=act.describe(binding),
            cause=exc.cause,
        )

    def _unencodable(
        self, ai: int, binding: Binding, state: Record, exc: StateError
    ) -> EvaluationError:
        act = self.actions[ai]
        return _unencodable(exc, "action", act.name, state, act.describe(binding))

    def violated(self, state: Record, start: int = 0) -> Invariant | None:
        """The first invariant (in declaration order, from `start` on) that `state` violates,
        if any."""
        for inv in self.invariants[start:]:
            if not _holds("invariant", inv.name, inv.fn, state):
                return inv
        return None

    def violated_incrementally(
        self, state: Record, memo: Memo | None, out: bytearray
    ) -> Invariant | None:
        """`violated`, noting in `out` (8 bytes per invariant) what each invariant read, and
        not evaluating those that held in the parent and read nothing the step changed (`memo`,
        as expand_batch made it: docs/architecture.md)."""
        before, changed = (None, 0) if memo is None else (memo.invariants, memo.changed)
        try:
            first = holds(self._predicates_of_invariants(), state, before, changed, out)
        except Interrupted:
            raise
        except KeyboardInterrupt:  # the spec's own (C lets it through): say so, as violated does
            first = 0
        return None if first < 0 else self.violated_at(state, first)

    def verdicts(
        self, states: list[Record], memos: list[Memo]
    ) -> tuple[list[list[int]], list[Memo]]:
        """`violated_incrementally` on each state with its memo (as expand_batch made it), at
        once: [index, invariant index] for each state on which an invariant failed or raised
        (`violated_at` says which and why), and the states' own memos, in a new list.
        KeyboardInterrupt from spec code (not Ctrl-C: Interrupted) goes on: evaluate one by
        one to say where."""
        return verdicts(self._predicates_of_invariants(), states, memos, Memo)

    def violated_at(self, state: Record, first: int) -> Invariant:
        """The invariant (index `first`) that failed or raised when evaluated on `state` with
        the C hot path, evaluated again in Python, which says why (EvaluationError if it
        raised); NondeterminismError if it holds now."""
        inv = self.invariants[first]
        if not _holds("invariant", inv.name, inv.fn, state):
            return inv
        raise determinism.not_deterministic(
            f"in state {show(state)}, invariant {inv.name} failed or raised, then held when"
            " evaluated again"
        )

    def _predicates_of_invariants(self) -> tuple[Callable[[Record], Any], ...]:
        invariants = self.invariants
        if self._predicates is None or self._predicates[0] is not invariants:
            self._predicates = (invariants, tuple(inv.fn for inv in invariants))
        return self._predicates[1]

    def settle_reachability(
        self,
        result: CheckResult,
        reached: dict[str, tuple[Any, int]],
        witness: str | None,
        trace_to: Callable[[Any], list[Step]],
    ) -> None:
        """After a search that ended by itself (`result.verdict` ok, or any verdict it
        stopped at): record where each reachability property was first reached (`reached`:
        name -> (the engine's reference to the state, its depth)); if the search was complete
        and one was never reached, that is a violation; else the shortest example of
        `witness` becomes the trace (`trace_to` rebuilds it from the reference)."""
        result.reached = {r.name: reached[r.name][1] for r in self.reachables if r.name in reached}
        if result.verdict != "ok":
            return
        result.unreached = [r.name for r in self.reachables if r.name not in reached]
        if result.unreached:
            result.verdict = "violation"
        elif witness is not None:
            result.trace = trace_to(reached[witness][0])
            result.witness = witness

    def final(self, state: Record) -> bool:
        """Whether `state` is one of the spec's intended final states (a @terminal holds),
        where having no successor is no deadlock."""
        return any(_holds("terminal", t.name, t.fn, state) for t in self.terminals)

    def reached(self, state: Record, wanted: Sequence[int]) -> list[int]:
        """Of the reachability properties `wanted` (indexes into `reachables`, in order),
        those that hold in `state`."""
        props = self.reachables
        return [i for i in wanted if _holds("reachable", props[i].name, props[i].fn, state)]


def successors_python(
    context: Context,
    state: Record,
    states: list[Record],
    actions: list[int],
    bindings: list[Binding] | None,
    memo: bytes | None = None,
    changed: int = 0,
    out: bytearray | None = None,
) -> bool:
    """`Model.successors` (the twin of the C loop): for each action of `plan` (see
    CompiledSpec.plan) and binding, call it on `state`; the common result, one Record of the
    state's shape with no action constraint to ask, is checked against the states' kind and
    appended here, any other goes to `general` (Model._add). What an action raises goes to
    `reraise`. Returns whether any action was enabled. Without C the reads of a guard are not
    noted: every binding is called, and `out` (see Model.successors) stays all zeros."""
    general, reraise, constrained = context.add, context.reraise, context.constrained
    state_kind, kind_error = context.kinds, context.kind_error
    shape = state.__class__
    add, mark = states.append, actions.append
    enabled = False
    for ai, fn, arity, static, act, _ in context.plan:
        if static is None:
            static = act.values(state) if arity == 1 else act.bindings(state)
        for value in static:
            binding = (value,) if arity == 1 else value  # a one-parameter action's are bare
            try:
                result = fn(state, *binding)
            except BaseException as exc:
                reraise(ai, binding, state, exc)
            if result is None:
                continue
            if result.__class__ is shape and not constrained:
                if state_kind is not None and not kinds.successor_conforms(
                    result, state, state_kind
                ):
                    kind_error(ai, binding, state, result)
                add(result)
                mark(ai)
                if bindings is not None:
                    bindings.append(binding)
                enabled = True
            elif general(ai, binding, state, result, states, actions, bindings):
                enabled = True
    return enabled


successors = fast.pick(successors_python)


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


def holds_python(
    predicates: tuple[Callable[[Record], Any], ...],
    state: Record,
    memo: bytes | None,
    changed: int,
    out: bytearray,
) -> int:
    """-1 if every predicate returns True on `state`, else the index of the first that does not
    (or raises: the caller evaluates that one again, which says why); the twin of the C
    function, which also notes what each read in `out` and skips, by `memo` and `changed`, those
    that cannot have changed (see docs/architecture.md). Here `out` stays all zeros."""
    for k, predicate in enumerate(predicates):
        try:
            if predicate(state) is not True:
                return k
        except Interrupted:
            raise
        except BaseException:
            return k
    return -1


holds = fast.pick(holds_python)


def changed_python(parent: Record, state: Record) -> int:
    """The variables (bit i - 1 for the record's item i, the 63rd on sharing bit 62) whose
    values are not the same objects in `parent` and `state`: a successor shares its unchanged
    variables with its parent."""
    bits = 0
    for i in range(1, len(parent._keys) + 1):
        if tuple.__getitem__(parent, i) is not tuple.__getitem__(state, i):
            bits |= 1 << min(i - 1, 62)
    return bits


changed_variables = fast.pick(changed_python)


def memos_of_python(
    memo: type[Memo],
    parent: Record,
    states: list[Record],
    start: int,
    masks: bytes,
    held: bytes | None,
    out: list[Memo],
) -> None:
    """Append to `out`, for each of `states[start:]` (the parent's candidates), the Memo
    expand_batch keeps with it: the parent's guards' `masks`, the variables the step changed,
    the parent's invariants' masks (`held`)."""
    out += [
        tuple.__new__(memo, (masks, changed_variables(parent, state), held))
        for state in states[max(start, 0) :]
    ]


memos_of = fast.pick(memos_of_python)


def verdicts_python(
    predicates: tuple[Callable[[Record], Any], ...],
    states: list[Record],
    memos: list[Memo],
    memo: type[Memo],
) -> tuple[list[list[int]], list[Memo]]:
    """`holds` on each state with its memo: [index, predicate] for each state on which one did
    not hold, and a new list of memos, each with the state's own invariants' masks (the memos
    given are not changed)."""
    failing: list[list[int]] = []
    made: list[Memo] = []
    for k, (state, before) in enumerate(zip(states, memos, strict=True)):
        out = bytearray(8 * len(predicates))
        first = holds(predicates, state, before.invariants, before.changed, out)
        made.append(tuple.__new__(memo, (before.parent, before.changed, bytes(out))))
        if first >= 0:
            failing.append([k, first])
    return failing, made


verdicts = fast.pick(verdicts_python)


def expand_run_python(
    context: Context,
    batch: Batch,
    states: list[Record],
    start: int,
    stop: int,
    memos: list[Memo | None] | None,
    seen: set[Record],
) -> int:
    """`Model.expand_batch`'s common case from `states[start]` to before `states[stop]` (the
    twin of the C loop, checker/hot/expansion.c, which says what it does with `context` and
    `batch`)."""
    successors_list, actions = batch.successors, batch.actions
    found, positions, encodings = batch.candidates, batch.positions, batch.encodings
    counts, stuck, fps, views = batch.run_counts, batch.stuck, batch.run_fps, batch.views
    made = None if memos is None else batch.read_sets
    slots, terminals, bail = context.slots, context.terminals, context.bail
    within, view, redo, identify = context.within, context.view, context.redo, context.identify
    fingerprint, memo = context.fingerprint, context.read_set
    i, stop = max(start, 0), min(stop, len(states))
    while i < stop:
        state = states[i]
        if within is not None and not within(state):
            counts += array("I", [0]).tobytes()
            stuck.append(0)
            i += 1
            continue
        total, first, made_first = len(actions), len(found), 0 if made is None else len(made)
        before = None if memos is None else memos[i]
        masks = bytearray(8 * slots)
        made_fps = array("Q")
        try:
            if memos is None:
                enabled = successors(context, state, successors_list, actions, None)
            else:
                parent, changed = (None, 0) if before is None else (before.parent, before.changed)
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
                memos_of(memo, state, found, first, bytes(masks), held, made)
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
    model: Model,
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
        successors[stop] = _refrozen(model, state, ai, successors[stop])
        start = stop


def _unmet_recorded(
    model: Model,
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
            succ = successors[index] = _refrozen(model, state, actions[offset + index], succ)
            met = succ in seen
        if not met:
            seen[succ] = None
            found.append(succ)
            positions.append(offset + index)


def _refrozen(model: Model, state: Record, ai: int, succ: Record) -> Record:
    """A successor holding a mutable value inside a tuple, with that value frozen."""
    try:
        return type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
    except StateError as exc:
        raise _unencodable(exc, "action", model.actions[ai].name, state, {}) from exc


def _holds(
    kind: str,
    name: str,
    fn: Callable[..., Any],
    *states: Record,
    params: dict[str, Any] | None = None,
) -> bool:
    """Evaluate a predicate of the spec (an invariant or a constraint) on `states`: it must
    return True or False."""
    try:
        ok = fn(*states)
    except OUTSIDE:
        raise
    except BaseException as exc:
        raise EvaluationError(
            kind, name, raised(exc), state=states[0], params=params, cause=exc
        ) from exc
    if ok is not True and ok is not False:
        article = "an" if kind[0] in "aeiou" else "a"
        raise EvaluationError(
            kind,
            name,
            f"returned {ok!r}; {article} {kind} returns True or False",
            state=states[0],
            params=params,
        )
    return ok


def _encoded(
    succ: Record, kind: str, name: str, *, state: Record | None, params: dict[str, Any]
) -> bytes:
    """Encode a state built by spec code; a value that cannot be encoded is the spec's error.
    encode_state gives encode's bytes, reusing the cached encodings of fields shared with a
    state encoded before (a view's fields are the state's)."""
    try:
        return encode_state(succ)
    except StateError as exc:
        raise _unencodable(exc, kind, name, state, params) from exc


def _unencodable(
    exc: StateError, kind: str, name: str, state: Record | None, params: dict[str, Any]
) -> EvaluationError:
    return EvaluationError(
        kind, name, f"built a state that cannot be encoded: {exc}", state=state, params=params
    )


def _variables_differ(state: Record, expected: Record) -> str:
    """How the variables of `state` differ from those `expected` has, in words."""
    added = [str(k) for k in state if k not in expected]
    missing = [str(k) for k in expected if k not in state]
    parts = []
    if added:
        parts.append(f"with the variable{'s' * (len(added) > 1)} {', '.join(added)} added")
    if missing:
        parts.append(f"without the variable{'s' * (len(missing) > 1)} {', '.join(missing)}")
    return " and ".join(parts) or "with other variables"


_REPR = reprlib.Repr()  # (its settings as attributes: Python 3.10 takes no arguments)
_REPR.maxlevel = _REPR.maxtuple = _REPR.maxlist = _REPR.maxdict = 12
_REPR.maxstring = 80


def _short(value: Any) -> str:
    """A value returned by spec code, as an error shows it: cut short, however deep."""
    return _REPR.repr(value)


def _as_list(result: Any) -> list[Any] | None:
    if isinstance(result, (list, tuple)) or inspect.isgenerator(result):
        return list(result)
    return None


