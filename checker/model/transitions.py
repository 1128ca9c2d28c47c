"""The model's transitions: a state's successors, every action called with every binding of
its parameters in a fixed order and each result checked (`successors`, the hot loop of every
engine: in C with the hot path, checker/hot/successors.c, whose twin is `successors_python`);
one action's (`fire`); the same state's successors asked twice (checker.determinism)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checker import determinism
from checker.compiled import Binding
from checker.errors import OUTSIDE, EvaluationError, StateError, raised
from checker.model.checked import as_list, short, unencodable, variables_differ
from checker.values import fast, kinds, show
from checker.values.encoding import MAX_DEPTH, NESTED, deeper_than
from checker.values.record import Record, freeze

if TYPE_CHECKING:
    from checker.model.bound import Bound
    from checker.model.context import Context
    from checker.model.evaluation import Evaluation


class Transitions:
    """The steps of `model`'s spec from a state."""

    def __init__(self, model: Bound, evaluation: Evaluation) -> None:
        self.model = model
        self.evaluation = evaluation
        self.actions = model.actions

    def successors(
        self,
        state: Record,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None = None,
        masks: bytes | None = None,
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
        context = self.model.context()
        if out is None:
            return successors(context, state, states, actions, bindings)
        return successors(context, state, states, actions, bindings, masks, changed, out)

    def add(
        self,
        ai: int,
        binding: Binding,
        state: Record,
        result: Any,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None,
    ) -> bool:
        """What `successors` does not take itself: a list of successors, action constraints,
        or a result to check. Returns whether the action was enabled."""
        many = self.results(ai, binding, state, result)
        for succ in many:
            if self.model.action_constraints and not self.evaluation.allowed(
                ai, binding, state, succ
            ):
                continue
            states.append(succ)
            actions.append(ai)
            if bindings is not None:
                bindings.append(binding)
        return bool(many)

    def results(self, ai: int, binding: Binding, state: Record, result: Any) -> list[Record]:
        """An action's return value as a list of checked successor states."""
        if result is None:
            return []
        try:  # a generator runs the action's code here: what it raises is the action's error
            many = [result] if isinstance(result, Record) else as_list(result)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise self.raised_in(ai, binding, state, exc) from exc
        for succ in many if many is not None else (result,):
            if not isinstance(succ, Record):
                message = (
                    f"returned {short(result)}; an action returns None, a Record or a list of"
                    " Records"
                )
            elif succ.keys() != state.keys():
                message = f"returned a state {variables_differ(succ, state)}"
            else:
                if not kinds.conforms(succ, state, self.model.kinds):
                    self.kind_error(ai, binding, state, succ)
                continue
            act = self.actions[ai]
            raise EvaluationError(
                "action", act.name, message, state=state, params=act.describe(binding)
            )
        return many  # type: ignore[return-value]

    def kind_error(self, ai: int, binding: Binding, state: Record, succ: Record) -> None:
        """A successor whose variables are not all of their kinds: raise the error that says
        which variable, both kinds and the action; unless it was only a list or set inside a
        tuple, which the engine freezes (as put() would) before it encodes the state."""
        act = self.actions[ai]
        params = act.describe(binding)
        if deeper_than(succ, MAX_DEPTH):  # (what follows would recurse too deep)
            raise unencodable(StateError(NESTED), "action", act.name, state, params)
        try:
            frozen = type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
        except StateError as exc:
            raise unencodable(exc, "action", act.name, state, params) from exc
        state_kind = self.model.kinds
        if kinds.conforms(frozen, state, state_kind):
            return
        for index, (name, value) in enumerate(frozen.items(), start=1):
            mismatch = kinds.mismatch(value, state_kind.b[index], str(name))
            if mismatch is None:
                continue
            path, expected, part, optional = mismatch
            declared = self.model.compiled.declared_types
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

    def reraise(self, ai: int, binding: Binding, state: Record, exc: BaseException) -> None:
        """Raise what an action raised as the EvaluationError that says where (for C, which
        passes every exception here); an interrupt or running out of memory goes on as it
        was."""
        try:
            if isinstance(exc, OUTSIDE):
                raise exc
            raise self.raised_in(ai, binding, state, exc) from exc
        finally:
            # The traceback holds this frame: with `exc` in it, the exception, its traceback
            # and every frame below (the whole search) would be a cycle that only the
            # collector frees, walking every live state first.
            del exc

    def raised_in(
        self, ai: int, binding: Binding, state: Record, exc: BaseException
    ) -> BaseException:
        act = self.actions[ai]
        return EvaluationError(
            "action", act.name, raised(exc), state=state, params=act.describe(binding), cause=exc
        )

    def fire(self, ai: int, binding: Binding, state: Record) -> list[Record]:
        """The successors of `state` under action `ai` with parameters `binding`, as `expand`
        gives them: none outside the state constraints, none an action constraint discards."""
        if self.model.constraints and not self.evaluation.within_constraints(state):
            return []
        act = self.actions[ai]
        try:
            result = act.fn(state, *binding)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise self.raised_in(ai, binding, state, exc) from exc
        successors = self.results(ai, binding, state, result)
        if self.model.action_constraints:
            successors = [t for t in successors if self.evaluation.allowed(ai, binding, state, t)]
        return successors

    def twice(
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

    def binding_index(
        self, state: Record, ai: int, binding: Binding, domains: dict[int, Sequence[Binding]]
    ) -> int:
        """The index of `binding` among action `ai`'s bindings in `state`, which is what a
        link keeps (`domains`: the bindings computed for `state` so far, by action)."""
        domain = domains.get(ai)
        if domain is None:
            domain = domains[ai] = self.actions[ai].bindings(state)
        return domain.index(binding)

    def on_successor(
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

    def unencodable_step(
        self, ai: int, binding: Binding, state: Record, exc: StateError
    ) -> EvaluationError:
        act = self.actions[ai]
        return unencodable(exc, "action", act.name, state, act.describe(binding))

    def refrozen(self, state: Record, ai: int, succ: Record) -> Record:
        """A successor holding a mutable value inside a tuple, with that value frozen."""
        try:
            return type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
        except StateError as exc:
            raise unencodable(exc, "action", self.actions[ai].name, state, {}) from exc


def successors_python(
    context: Context,
    state: Record,
    states: list[Record],
    actions: list[int],
    bindings: list[Binding] | None,
    masks: bytes | None = None,
    changed: int = 0,
    out: bytearray | None = None,
) -> bool:
    """`Transitions.successors` (the twin of the C loop): for each action of `context.plan`
    (see CompiledSpec.plan) and binding, call it on `state`; the common result, one Record of
    the state's shape with no action constraint to ask, is checked against the states' kind and
    appended here, any other goes to `context.add` (Transitions.add). What an action raises
    goes to `context.reraise`. Returns whether any action was enabled. Without C the reads of
    a guard are not noted: every binding is called, and `out` stays all zeros."""
    add_result, reraise, constrained = context.add, context.reraise, context.constrained
    state_kind, kind_error = context.kinds, context.kind_error
    shape = state.__class__
    append, mark = states.append, actions.append
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
                append(result)
                mark(ai)
                if bindings is not None:
                    bindings.append(binding)
                enabled = True
            elif add_result(ai, binding, state, result, states, actions, bindings):
                enabled = True
    return enabled


successors = fast.pick(successors_python)
