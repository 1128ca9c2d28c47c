"""What mc checks of a spec's determinism, and how it says that a spec is not deterministic.

An action must be a function of the state and its parameters: the search keeps a state's
parent link as a position in the parent's successors, and rebuilds a trace by asking the
actions again. A spec that draws random numbers, reads the clock, shows `id()` or keeps state on
`self` answers otherwise when asked again: its counts change from run to run and its traces
cannot be rebuilt. So mc asks again, and compares:

- a sample of the states: every `RECHECK`-th state a process expands is expanded twice
  (`Model.recheck_every`, `mc check --recheck N`; 1: every state, which doubles the cost of the
  actions; 0: none), and the two lists of successors (actions, parameters and states, in order)
  must be equal;
- every trace: rebuilding it asks the actions again along its states, each step must reach the
  state the search reached (its fingerprint, and on the local engine a state the search found);
- every state where the search stopped (a violation, an error, a deadlock) is evaluated again
  before it is reported (checker.search.admission).

Each failure is a NondeterminismError (exit 75) naming the action with its parameters, the
state, and the two answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from checker.errors import NondeterminismError
from checker.values import show

RECHECK = 64  # every 64th state a process expands is expanded twice (docs/errors.md: the cost)
WHY = (
    "an action must depend only on the state and its parameters (no randomness, clock, id(),"
    " set order of objects, or state kept on self)"
)

Step = tuple[int, Any, Any]  # (action index, binding, successor state)


def not_deterministic(message: str) -> NondeterminismError:
    return NondeterminismError(f"the spec is not deterministic: {message}; {WHY}")


def compare(
    state: Any,
    first: Sequence[Step],
    second: Sequence[Step],
    name: Callable[[int, Any], str],
) -> None:
    """Raise a NondeterminismError if `first` and `second`, the successors of `state` as two
    expansions listed them, differ; `name(action, binding)` names an action's step."""
    for k in range(max(len(first), len(second))):
        a = first[k] if k < len(first) else None
        b = second[k] if k < len(second) else None
        if a is not None and b is not None and a[0] == b[0] and a[2] == b[2]:
            continue
        said = a or b
        assert said is not None
        raise not_deterministic(
            f"in state {show(state)}, {name(said[0], said[1])} gave {answer(a, b, name)} when"
            f" the state was expanded, and {answer(b, a, name)} when it was expanded again"
        )


def answer(step: Step | None, other: Step | None, name: Callable[[int, Any], str]) -> str:
    """One expansion's answer at the first place two differ, said against the other's."""
    if step is None:
        return "no such successor"
    if other is None or other[0] != step[0]:
        return f"a successor by {name(step[0], step[1])}, {show(step[2])}"
    return changes(step[2], other[2])


def changes(state: Any, other: Any) -> str:
    """`state` where it differs from `other` (a state of the same variables): the variables
    that differ, or the whole state."""
    try:
        differ = [k for k in state if state[k] != other[k]]
    except (KeyError, TypeError):
        return show(state)
    if not differ or len(differ) == len(state):
        return show(state)
    return ", ".join(f"{k} = {show(state[k])}" for k in differ)
