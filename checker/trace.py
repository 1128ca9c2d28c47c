"""Rebuild a trace from parent links by replaying it from the initial state.

Engines keep only compact parent links (fingerprint -> parent fingerprint, action index,
binding index); the full states of a counterexample are recomputed here, so every engine
produces the very same trace. A step that does not reach again what the search reached (a
spec that is not deterministic: checker.determinism) is a NondeterminismError naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from checker.determinism import not_deterministic
from checker.errors import EvaluationError
from checker.model import Model, Successors
from checker.result import Event, Step
from checker.values import show

Link = tuple[int | None, int, int]  # (parent fingerprint or None, action index, binding index)


def chain_to(parents: Mapping[int, Link], fp: int) -> list[tuple[int, int, int]]:
    """The (action, binding, fingerprint) steps from an initial state to `fp`."""
    chain = []
    current: int | None = fp
    while current is not None:
        parent, action, binding = parents[current]
        chain.append((action, binding, current))
        current = parent
    chain.reverse()
    return chain


def replay(model: Model, chain: Sequence[tuple[int, int, int]]) -> list[Step]:
    """Recompute the states along `chain` (as built by `chain_to`)."""
    _, init_index, init_fp = chain[0]
    initial = model.initial_states()
    if init_index >= len(initial) or model.fingerprint_of(initial[init_index]) != init_fp:
        raise not_deterministic(
            f"rebuilding the trace, init did not give the initial state number {init_index + 1}"
            " that the search started from"
        )
    state = initial[init_index]
    steps = [Step(None, {}, state)]
    for action, binding_index, fp in chain[1:]:
        act = model.actions[action]
        bindings = act.bindings(state)
        if binding_index >= len(bindings):
            raise not_deterministic(
                f"rebuilding the trace, in state {show(state)}, action {act.name} has"
                f" {len(bindings)} parameter bindings, and the search took the one numbered"
                f" {binding_index + 1}"
            )
        binding = bindings[binding_index]
        try:
            successors = model.fire(action, binding, state)
        except EvaluationError as exc:
            raise not_deterministic(
                f"rebuilding the trace, in state {show(state)},"
                f" {model.describe_step(action, binding)} {exc.message}, and it did not when the"
                " search took that step"
            ) from exc
        # The first successor with the fingerprint: with a view or symmetry, others may share
        # it, and the engines keep the first one `Model.expand` lists as the concrete state.
        for succ in successors:
            if model.fingerprint_of(succ) == fp:
                state = succ
                break
        else:
            now = ", ".join(show(t) for t in successors) or "nothing"
            raise not_deterministic(
                f"rebuilding the trace, in state {show(state)},"
                f" {model.describe_step(action, binding)} gave {now}, and not the state the"
                " search reached by that step"
            )
        try:
            event = act.event(steps[-1].state, binding)
        except EvaluationError as exc:  # a chart annotation must not hide the verdict
            event = Event("(@on failed)", "local", message=exc.message)
        steps.append(Step(act.name, act.describe(binding), state, event))
    return steps


def chain_from_positions(
    model: Model, positions: Sequence[int], found: Callable[[int], bool] | None = None
) -> list[tuple[int, int, int]]:
    """The chain (as `chain_to` builds it) of a state given by its initial state's index and
    then its position in each parent's `Model.expand` list, as the local engine stores it.
    `found`: whether the search found the state of a fingerprint (each step must reach one)."""
    count = len(model.initial_part())
    if positions[0] >= count:
        raise not_deterministic(
            f"rebuilding the trace, init gave {count} initial states, and the search"
            f" started from the one numbered {positions[0] + 1}"
        )
    init = model.initial_one(positions[0])  # (not all of them encoded: there may be millions)
    chain = [(init.action, init.binding, init.fp)]
    data, state = init.data, init.state
    for position in positions[1:]:
        successors = _expanded(model, state, data)
        if position >= len(successors):
            raise not_deterministic(
                f"rebuilding the trace, state {show(state)} has {len(successors)} successors,"
                f" and the search took the one numbered {position + 1}"
            )
        succ = successors[position]
        if found is not None and not found(succ.fp):
            binding = model.actions[succ.action].bindings(state)[succ.binding]
            raise not_deterministic(
                f"rebuilding the trace, in state {show(state)},"
                f" {model.describe_step(succ.action, binding)} gave {show(succ.state)}, a state"
                " the search never reached"
            )
        chain.append((succ.action, succ.binding, succ.fp))
        data, state = succ.data, succ.state
    return chain


def _expanded(model: Model, state: object, data: bytes) -> Successors:
    """`Model.expand` on a state of a trace, which the search expanded without an error."""
    try:
        return model.expand(data)
    except EvaluationError as exc:
        raise not_deterministic(
            f"rebuilding the trace, in state {show(state)}, {exc.kind} {exc.name} {exc.message},"
            " and it did not when the search expanded that state"
        ) from exc
