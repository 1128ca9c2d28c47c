"""checker/determinism.py on its own: two expansions of a state compared, and how a difference
reads."""

from __future__ import annotations

import pytest

from checker import Record
from checker.determinism import WHY, changes, compare, not_deterministic
from checker.errors import ExitCode, NondeterminismError

STATE = Record(x=1, y=0)
NAMES = ["inc", "reset"]


def name(action: int, binding) -> str:
    return f"{NAMES[action]}({binding})"


def test_equal_expansions_pass():
    steps = [(0, 1, Record(x=2, y=0)), (1, 0, Record(x=0, y=0))]
    compare(STATE, steps, list(steps), name)
    # the bindings are not compared: the same action reaching the same state is the same step
    compare(STATE, [(0, 1, Record(x=2, y=0))], [(0, 7, Record(x=2, y=0))], name)


def test_a_different_successor_is_named_by_what_changed():
    with pytest.raises(NondeterminismError) as raised:
        compare(STATE, [(0, 1, Record(x=2, y=0))], [(0, 1, Record(x=2, y=5))], name)
    assert raised.value.exit_code == ExitCode.EVALUATION_ERROR
    assert str(raised.value) == (
        "the spec is not deterministic: in state {x: 1, y: 0}, inc(1) gave y = 0 when the state"
        f" was expanded, and y = 5 when it was expanded again; {WHY}"
    )


def test_a_missing_successor_or_another_action_is_said_whole():
    with pytest.raises(NondeterminismError, match=r"gave a successor by reset\(0\), \{x: 0, y: 0\}"
                       r" when the state was expanded, and no such successor when"):
        compare(STATE, [(1, 0, Record(x=0, y=0))], [], name)
    with pytest.raises(NondeterminismError, match=r"and a successor by inc\(1\), \{x: 2, y: 0\}"
                       " when it was expanded again"):
        compare(STATE, [(1, 0, Record(x=0, y=0))], [(0, 1, Record(x=2, y=0))], name)


def test_changes_lists_the_differing_variables_or_the_whole_state():
    assert changes(Record(x=1, y=2, z=3), Record(x=1, y=0, z=0)) == "y = 2, z = 3"
    assert changes(Record(x=1, y=2), Record(x=0, y=0)) == "{x: 1, y: 2}"  # all differ
    assert changes(Record(x=1), Record(y=1)) == "{x: 1}"  # other variables
    assert changes(5, 6) == "5"


def test_not_deterministic_says_why_a_spec_must_be():
    error = not_deterministic("it changed")
    assert isinstance(error, NondeterminismError)
    assert str(error) == f"the spec is not deterministic: it changed; {WHY}"
