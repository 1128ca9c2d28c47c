"""Rebuild a trace from parent links by replaying it from the initial state.

Engines keep only compact parent links (fingerprint -> parent fingerprint, action index,
binding index); the full states of a counterexample are recomputed here, so every engine
produces the very same trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from checker.errors import EvaluationError
from checker.model import Model
from checker.result import Event, Step

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
    state = model.initial_states()[init_index]
    if model.fingerprint_of(state) != init_fp:
        raise RuntimeError("replay: the initial state does not match its fingerprint")
    steps = [Step(None, {}, state)]
    for action, binding_index, fp in chain[1:]:
        act = model.actions[action]
        binding = act.bindings(state)[binding_index]
        # The first successor with the fingerprint: with a view or symmetry, others may share
        # it, and the engines keep the first one `Model.expand` lists as the concrete state.
        for succ in model.fire(action, binding, state):
            if model.fingerprint_of(succ) == fp:
                state = succ
                break
        else:
            raise RuntimeError(f"replay: {act.name}{binding} does not reproduce the trace")
        try:
            event = act.event(steps[-1].state, binding)
        except EvaluationError as exc:  # a chart annotation must not hide the verdict
            event = Event("(@on failed)", "local", message=exc.message)
        steps.append(Step(act.name, act.describe(binding), state, event))
    return steps


def chain_from_positions(model: Model, positions: Sequence[int]) -> list[tuple[int, int, int]]:
    """The chain (as `chain_to` builds it) of a state given by its initial state's index and
    then its position in each parent's `Model.expand` list, as the local engine stores it."""
    init = model.initial()[positions[0]]
    chain = [(init.action, init.binding, init.fp)]
    data = init.data
    for position in positions[1:]:
        succ = model.expand(data)[position]
        chain.append((succ.action, succ.binding, succ.fp))
        data = succ.data
    return chain
