"""checker/trace.py on its own: traces rebuilt from parent links and from positions, and a
step that does not reach again what the search reached."""

from __future__ import annotations

import pytest

from checker import Record
from checker.errors import NondeterminismError
from checker.loader import load_model
from checker.result import Step
from checker.trace import chain_from_positions, chain_to, replay
from tests.checker.toys import toy


@pytest.fixture
def walk():
    return load_model(toy("Walk"))  # init: x=0, x=0 again, x=10


def fp(model, x: int) -> int:
    return model.fingerprint_of(Record(x=x))


def test_chain_to_follows_the_parent_links_back_to_an_initial_state(walk):
    a, b, c = fp(walk, 10), fp(walk, 12), fp(walk, 0)
    parents = {a: (None, 0, 2), b: (a, 0, 1), c: (b, 1, 0)}
    assert chain_to(parents, c) == [(0, 2, a), (0, 1, b), (1, 0, c)]
    assert chain_to(parents, a) == [(0, 2, a)]


def test_replay_rebuilds_the_states_and_the_actions(walk):
    chain = [(0, 2, fp(walk, 10)), (0, 1, fp(walk, 12)), (1, 0, fp(walk, 0))]
    assert replay(walk, chain) == [
        Step(None, {}, Record(x=10)),
        Step("step", {"d": 2}, Record(x=12)),
        Step("reset", {}, Record(x=0)),
    ]


def test_replay_refuses_a_step_that_reaches_another_state(walk):
    chain = [(0, 0, fp(walk, 0)), (0, 0, fp(walk, 2))]  # d=1 reaches x=1, not x=2
    with pytest.raises(NondeterminismError, match=r"rebuilding the trace, in state \{x: 0\},"
                       r" action step\(d=1\) gave \{x: 1\}, and not the state the search reached"):
        replay(walk, chain)
    with pytest.raises(NondeterminismError, match="init did not give the initial state number 3"):
        replay(walk, [(0, 2, fp(walk, 0))])
    with pytest.raises(NondeterminismError, match="has 2 parameter bindings, and the search took"
                       " the one numbered 3"):
        replay(walk, [(0, 0, fp(walk, 0)), (0, 2, fp(walk, 3))])


def test_chain_from_positions_reads_each_parents_successor_list(walk):
    # x=10: step(d=1) -> 11 (position 0), step(d=2) -> 12 (1), reset -> 0 (2)
    chain = chain_from_positions(walk, [2, 2, 1])
    assert [(action, binding) for action, binding, _ in chain[1:]] == [(1, 0), (0, 1)]
    assert [f for _, _, f in chain] == [fp(walk, 10), fp(walk, 0), fp(walk, 2)]
    assert [s.state for s in replay(walk, chain)] == [Record(x=10), Record(x=0), Record(x=2)]


def test_chain_from_positions_refuses_what_the_search_cannot_have_taken(walk):
    with pytest.raises(NondeterminismError, match="init gave 3 initial states, and the search"
                       " started from the one numbered 4"):
        chain_from_positions(walk, [3])
    with pytest.raises(NondeterminismError, match=r"state \{x: 12\} has 1 successors"):
        chain_from_positions(walk, [2, 1, 1])
    unknown = fp(walk, 11)
    with pytest.raises(NondeterminismError, match=r"action step\(d=1\) gave \{x: 11\}, a state the"
                       " search never reached"):
        chain_from_positions(walk, [2, 0], found=lambda f: f != unknown)
