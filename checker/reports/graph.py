"""Traces and small state spaces as networkx graphs: nodes are states, edges are actions.

Both builders give nodes and edges the same attributes, so every writer (DOT, Mermaid, the
HTML report) draws either one:

    node: number (int, from 1: the step of a trace, the discovery order of a state space),
          state (Record), changed (variable names that differ from the previous step; all of
          them for an initial state or a state-space node), initial (bool),
          violated (the invariant this state breaks, or None), label (text lines),
          loop (bool: the state is on the cycle of a lasso)
    edge: actions (list of (name, params)), label (one "name(params)" line per action),
          back (bool: the step that closes a lasso's cycle, from the last state back to an
          earlier one, or the last state's self-loop when it stutters forever)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checker.behaviour import Behaviour
from checker.errors import ExitCode, McError
from checker.model import Model
from checker.result import CheckResult, Step
from checker.values import show
from checker.values.encoding import decode
from checker.values.record import Record

if TYPE_CHECKING:  # networkx only where a graph is built: mc check starts without it
    import networkx as nx

DEFAULT_MAX_STATES = 1000  # `mc graph` refuses bigger state spaces (TLC's -dump dot has none)


class StateSpaceTooLarge(McError):
    """More distinct states than `mc graph` agreed to draw."""

    exit_code = ExitCode.INCOMPLETE


def describe_action(action: str | None, params: dict[str, Any]) -> str:
    """`fetch(f=1)`, as the text report writes a step."""
    if action is None:
        return "initial state"
    return f"{action}({', '.join(f'{k}={show(v)}' for k, v in params.items())})"


def changed_variables(state: Record, previous: Record | None) -> tuple[str, ...]:
    if previous is None:
        return tuple(state)
    return tuple(name for name, value in state.items() if previous.get(name) != value)


def _add_state(
    g: nx.DiGraph,
    number: int,
    state: Record,
    changed: Sequence[str],
    *,
    initial: bool,
    violated: str | None,
) -> None:
    lines = [f"State {number}"]
    lines += [f"{name} = {show(state[name])}" for name in changed]
    if not changed:
        lines.append("(no variable changed)")
    if violated:
        lines.append(f"violates {violated}")
    g.add_node(
        number,
        number=number,
        state=state,
        changed=tuple(changed),
        initial=initial,
        violated=violated,
        label=lines,
        loop=False,
    )


def _add_action(g: nx.DiGraph, source: int, target: int, action: str, params: dict) -> None:
    # A DiGraph has one edge per pair of states: actions with the same effect share it.
    if g.has_edge(source, target):
        data = g.edges[source, target]
        data["actions"].append((action, params))
        data["label"].append(describe_action(action, params))
    else:
        g.add_edge(
            source,
            target,
            actions=[(action, params)],
            label=[describe_action(action, params)],
            back=False,
        )


def trace_graph(
    trace: Sequence[Step],
    violated: str | None = None,
    *,
    loop_start: int | None = None,
    loop_back: Step | None = None,
) -> nx.DiGraph:
    """A path: one node per step (its changed variables), one edge per action. `violated`
    names the invariant the last state breaks, to mark it. For a lasso (`loop_start`, the
    index of the state the cycle goes back to, and `loop_back`, the step that closes it, or
    None for stuttering) the cycle's states are marked and a back edge closes it."""
    import networkx as nx  # only where a graph is drawn: mc check starts without it

    g = nx.DiGraph(kind="trace")
    previous: Record | None = None
    for number, step in enumerate(trace, start=1):
        last = number == len(trace)
        _add_state(
            g,
            number,
            step.state,
            changed_variables(step.state, previous),
            initial=number == 1,
            violated=violated if last else None,
        )
        if step.action is not None:
            _add_action(g, number - 1, number, step.action, step.params)
        previous = step.state
    if loop_start is not None and trace:
        last, target = len(trace), loop_start + 1
        for number in range(target, last + 1):
            g.nodes[number]["loop"] = True
        if loop_back is None:
            actions, label = [], [f"stuttering: state {last} forever"]
        else:
            actions = [(loop_back.action, loop_back.params)]
            label = [f"back to state {target}: {describe_action(*actions[0])}"]
        g.add_edge(last, target, actions=actions, label=label, back=True)
    return g


def lasso_line(result: CheckResult) -> str | None:
    """How a temporal property's counterexample goes on after its last state, in TLC's words:
    back to an earlier state by the step that closes the cycle, or stuttering forever."""
    if result.loop_start is None:
        return None
    if result.loop_back is None:
        return f"State {len(result.trace) + 1}: Stuttering"
    back = result.loop_back
    return f"Back to state {result.loop_start + 1}: {describe_action(back.action, back.params)}"


def result_graph(result: CheckResult) -> nx.DiGraph:
    """The trace graph of a result: its violated invariant marked, or its lasso closed."""
    violated = result.invariant if result.verdict == "violation" else None
    return trace_graph(
        result.trace, violated, loop_start=result.loop_start, loop_back=result.loop_back
    )


def behaviour_graph(model: Model, behaviour: Behaviour) -> nx.DiGraph:
    """Every state of a recorded behaviour (with their encodings, checker.behaviour) as a
    node (full states as labels) and every transition as an edge, in the search's order:
    `mc graph`'s drawing (checker.run.state_space_graph records it)."""
    assert behaviour.encodings is not None
    import networkx as nx

    g = nx.DiGraph(kind="state space")
    states = [decode(data) for data in behaviour.encodings]
    initial = {number for number, _ in behaviour.initial}
    for number, state in enumerate(states):
        violated = behaviour.violations.get(number)
        _add_state(g, number + 1, state, tuple(state), initial=number in initial, violated=violated)
    for number, (state, data) in enumerate(zip(states, behaviour.encodings)):
        start = int(behaviour.starts[number])
        targets = behaviour.targets[start : int(behaviour.starts[number + 1])].tolist()
        bindings: dict[int, Sequence[tuple[Any, ...]]] = {}
        for succ, target in zip(model.expand(data), targets):
            act = model.actions[succ.action]
            if succ.action not in bindings:
                bindings[succ.action] = act.bindings(state)
            params = act.describe(bindings[succ.action][succ.binding])
            _add_action(g, number + 1, target + 1, act.name, params)
    return g
