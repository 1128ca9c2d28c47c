"""The Model: a compiled spec bound for the engines (no Kafka, no printing, just states and
transitions), made of three parts it holds: its evaluation (checker.model.evaluation), its
identity of states (checker.model.identity) and its expansion (checker.model.transitions, one
state's successors, and checker.model.expansion, a batch of states expanded)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import not_
from typing import Any, NoReturn

import numpy as np

from checker import determinism
from checker.compiled import CompiledSpec
from checker.errors import (
    OUTSIDE,
    EvaluationError,
    NondeterminismError,
    SpecError,
    StateError,
    raised,
)
from checker.model.checked import as_list, spec_encoded, variables_differ
from checker.model.context import Context
from checker.model.evaluation import Evaluation
from checker.model.expansion import ROOT, Expansion, Successor
from checker.model.identity import Identity
from checker.model.readsets import ReadSet
from checker.model.transitions import Transitions
from checker.result import CheckResult, Step
from checker.spec import Spec
from checker.steps import Refines, StepCheck, StepChecks
from checker.values import kinds
from checker.values.encoding import (
    MAX_DEPTH,
    NESTED,
    deeper_than,
    encode_state,
    encoded,
    fingerprint,
)
from checker.values.every import Every
from checker.values.record import Map, Record

SAMPLE = 256  # initial states whose kind the others are checked against (Model.initial_states)


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
        self.slots = sum(
            1 if arity == 0 else len(static) if static is not None else 0
            for _, _, arity, static, _, _ in compiled.plan
        )
        self._contexts: dict[tuple[bool, bool], Context] = {}  # (by view, identified) -> one
        # The states' kind (checker.values.kinds), from the initial states and the declared types:
        # known once the initial states are.
        self._kinds: kinds.Kind | None = None
        self._initial: list[Record] | None = None
        self._declared: tuple[Any] | None = None  # (what `init` returned,), once called
        self._numbers: bytes | None = None  # an `every` init's initial states' numbers
        # Every `recheck_every`-th state this process expands is expanded twice, and the two
        # answers compared (checker.determinism; 0: none), from the first one on.
        self.recheck_every = determinism.RECHECK
        # The parts (docs/architecture.md), and the methods of theirs that the engines call,
        # as the model's own (bound once: one lookup on the hot paths).
        self.evaluation = evaluation = Evaluation(self)
        self.identity = identity = Identity(self)
        self.transitions = transitions = Transitions(self, evaluation)
        self.expansion = expansion = Expansion(self, evaluation, identity, transitions)
        self.within_constraints = evaluation.within_constraints
        self.excluded = evaluation.excluded
        self.final = evaluation.final
        self.reached = evaluation.reached
        self.violated = evaluation.violated
        self.violated_incrementally = evaluation.violated_incrementally
        self.verdicts = evaluation.verdicts
        self.violated_at = evaluation.violated_at
        self.fingerprint_of = identity.fingerprint_of
        self.view_of = identity.view_of
        self.met = identity.met
        self.successors = transitions.successors
        self.fire = transitions.fire
        self.describe_step = transitions.describe_step
        self.binding_index = transitions.binding_index
        self.expand = expansion.expand
        self.expand_batch = expansion.expand_batch
        self.step_of = expansion.step_of

    @property
    def kinds(self) -> kinds.Kind:
        """The kind of the states (a RECORD kind: each variable's kind), from the initial
        states and the spec's `types`."""
        if self._kinds is None and self.every() is None:  # (every: from its domains)
            self.initial_states()
        assert self._kinds is not None
        return self._kinds

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without the driver's fingerprint cache (see
        Identity) nor the states' kind, which names the shapes (classes) of this process: an
        executor infers it again, from its own initial states."""
        reset = dict.fromkeys(("_kinds", "_initial", "_declared", "_numbers"))
        return {**self.__dict__, **reset, "_contexts": {}}

    def context(self, by_view: bool = False, identified: bool = False) -> Context:
        """The Context of `successors` and of expand_run for batches met by their views, or
        whose candidates' fingerprints are `fingerprint_of` (`identified`), made once."""
        key = (by_view, identified)
        made = self._contexts.get(key)
        if made is None:
            transitions = self.transitions
            made = self._contexts[key] = Context(
                self._plan,
                transitions.add,
                transitions.reraise,
                self._constrained,
                self.kinds,
                transitions.kind_error,
                ReadSet,
                fingerprint,
                self.slots,
                bool(self.terminals),
                (StateError,),
                self.evaluation.within_constraints if self.constraints else None,
                # (the spec's view itself: any error of it is said by the general path)
                self.view if by_view else None,
                (Exception,) if by_view else (EvaluationError,),
                self.identity.fingerprint_of if identified else None,
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

    def _init(self) -> Any:
        """What the spec's `init` returns, called once (EvaluationError if it raises)."""
        if self._declared is None:
            try:
                result = self.spec.init()
            except NotImplementedError:
                raise SpecError(f"{self.name} has no initial state: define init(self)") from None
            except BaseException as exc:
                _init_raised(exc)
            self._declared = (result,)
        return self._declared[0]

    def every(self) -> Every | None:
        """The spec's initial states as `every(...)` declares them (the engines build and
        filter them by ranges of candidates: `initial_candidates`), or None (a list, a
        record). The states' kind is then that of the domains' values, known from now on."""
        result = self._init()
        if not isinstance(result, Every):
            return None
        if self._kinds is None:
            if result.count == 0:
                raise SpecError(f"{self.name}.init() returned no initial state")
            self._kinds = self._kind_of(result.covering())
        return result

    def initial_number(self, number: int) -> None:
        """(`every` only) Evaluate `where` on candidate `number` again: EvaluationError if it
        raises (the error of the spec's `init`)."""
        every = self.every()
        assert every is not None
        _, _, _, exc = every.part(number, number + 1)
        if exc is not None:
            _init_raised(exc)

    def learn_initial(self, numbers: bytes) -> None:
        """(`every` only) The numbers of the initial states among the candidates (int64
        bytes, in order), as an engine found them by parts: `initial_part` builds them from
        now on, without `where`."""
        self._numbers = numbers

    def _kind_of(self, states: list[Record]) -> kinds.Kind:
        return kind_of(states, self.compiled.declared_types, self.path or self.name, self.name)

    def initial_states(self) -> list[Record]:
        if self._initial is not None:
            return list(self._initial)
        every = self.every()
        if every is not None:
            if self._numbers is None:
                states, numbers, _, exc = every.part(0, every.count)
                if exc is not None:
                    _init_raised(exc)
                self._numbers = numbers
            else:
                states = every.build(self._numbers)
            if not states:
                raise SpecError(f"{self.name}.init() returned no initial state")
            self._initial = states
            return list(states)
        result = self._init()
        states = [result] if isinstance(result, Record) else as_list(result)
        # The states' classes, in one pass in C (a spec may list millions of initial states):
        # records of one shape have one class.
        classes = set(map(type, states or ()))
        if states is None or not all(issubclass(c, Record) for c in classes):
            raise EvaluationError(
                "init", "init", f"must return a Record or a list of Records, not {result!r}"
            )
        if not states:
            raise SpecError(f"{self.name}.init() returned no initial state")
        if any(issubclass(c, Map) for c in classes):
            raise EvaluationError(
                "init", "init", "a state's variables must be names (identifiers), not map keys"
            )
        first = states[0].__class__  # (a shape: the same class, the same variables)
        for other in states[1:] if len(classes) > 1 else ():
            if other.__class__ is not first and other.keys() != states[0].keys():
                differ = variables_differ(other, states[0])
                message = f"returned initial states with different variables: one {differ}"
                raise EvaluationError("init", "init", message)
        self._kinds = self._kind_of(states)
        self._initial, self._declared = states, (None,)  # (not init's list too: one is enough)
        return list(states)

    def initial(self) -> list[Successor]:
        """The initial states, encoded and fingerprinted (action ROOT, binding = init index)."""
        return [self.initial_one(index) for index in range(len(self.initial_part()))]

    def initial_one(self, index: int) -> Successor:
        """The initial state `index`, encoded and fingerprinted (EvaluationError if spec code
        raises doing so: its view, its symmetry, a value it cannot encode)."""
        state = self.initial_part(index, index + 1)[0]
        data = spec_encoded(state, "init", "init", state=None, params={})
        return Successor(ROOT, index, state, data, self.fingerprint_of(state, data))

    def initial_part(self, start: int = 0, stop: int | None = None) -> list[Record]:
        """The initial states `start` to `stop - 1` (all by default), without copying the
        others (a forked worker process shares them with the engine: checker.local)."""
        if self._initial is None:
            every = self.every()
            if every is not None and self._numbers is not None:  # without building the others
                return every.build(self._numbers, start, stop)
            self.initial_states()
        assert self._initial is not None
        return self._initial[start:stop]

    def initial_encoded(self, states: list[Record]) -> tuple[list[bytes], np.ndarray, int | None]:
        """`states` (initial states, in order) encoded and fingerprinted at once, in C with the
        hot path: their encodings, their fingerprints (uint64) and None; or, if spec code
        raises doing so for one of them (its view, its symmetry, a value it cannot encode),
        those of the states before it and its index (`initial_one` raises it again)."""
        encodings: list[bytes] = []
        try:
            if self.reduces:
                encodings = list(map(encode_state, states))
                fingerprint_of = self.fingerprint_of
                fps = np.fromiter(map(fingerprint_of, states, encodings), np.uint64, len(states))
            else:
                fps = np.frombuffer(encoded(states, 0, fingerprint, encodings, None), np.uint64)
            return encodings, fps, None
        except OUTSIDE:
            raise
        except Exception:  # one by one, to find the first state that raises
            pass
        encodings, fps_so_far = [], []
        for k, state in enumerate(states):
            try:
                data = spec_encoded(state, "init", "init", state=None, params={})
                fps_so_far.append(self.fingerprint_of(state, data))
            except EvaluationError:
                return encodings, np.array(fps_so_far, np.uint64), k
            encodings.append(data)
        raise NondeterminismError(
            "the spec is not deterministic: encoding or fingerprinting its initial states"
            " raised once, and not when done again"
        )

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


def _init_raised(exc: BaseException) -> NoReturn:
    """Spec code raised `exc` computing the initial states: the spec's `init` error (mc's own
    interruptions and memory errors go on as they are)."""
    if isinstance(exc, OUTSIDE):
        raise exc
    raise EvaluationError("init", "init", raised(exc), cause=exc) from exc


def kind_of(
    states: list[Record], declared: dict[str, kinds.Kind], where: str, name: str
) -> kinds.Kind:
    """The kind of `states` (initial states of one shape, or an `every`'s candidates that
    have every value of its domains) and of the declared types (`where`, `name`: the spec's
    path or name, and name, for the errors)."""
    # Only the states that do not conform to the kind of a sample of them are walked for
    # their depth and their kinds (a state that conforms to it nests no deeper than the
    # sample, and adds nothing to its kind); all of them if that kind is not `exact`.
    sample = states[:: max(1, len(states) // SAMPLE)]
    if any(deeper_than(s, MAX_DEPTH) for s in sample):
        raise EvaluationError("init", "init", f"built a state that cannot be encoded: {NESTED}")
    known, _ = kinds.state_kind(sample, declared)
    if known is not None and kinds.exact(known):
        fits = map(kinds.conforms, states, repeat(kinds.MISSING), repeat(known))
        odd = list(compress(states, map(not_, fits)))
    else:
        odd = states
    if any(deeper_than(s, MAX_DEPTH) for s in odd):
        raise EvaluationError("init", "init", f"built a state that cannot be encoded: {NESTED}")
    unknown = [n for n in declared if n not in states[0]]
    if unknown:
        names = [str(k) for k in states[0]]
        close = difflib.get_close_matches(unknown[0], names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise SpecError(
            f"{where}: {name} declares the type of {unknown[0]!r},"
            f" which is not a variable of its states (variables: {', '.join(names)}){hint}"
        )
    kind, why = kinds.state_kind(sample + odd if odd is not states else states, declared)
    if kind is None and odd is not states:  # (the error names the first states' values)
        kind, why = kinds.state_kind(states, declared)
    if kind is None:
        raise EvaluationError("init", "init", f"returned states that mc cannot type: {why}")
    return kind
