"""checker/search/observers.py on its own: the Recorder and its Builder fed by hand as a search
feeds them, and the behaviour graph they make."""

from __future__ import annotations

import numpy as np
import pytest

from checker.behaviour import TRUE, Recording
from checker.loader import load_model
from checker.search.observers import Builder, Observer, Recorder
from tests.checker.toys import toy


def u64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def test_the_base_observer_asks_for_nothing_and_does_nothing():
    observer = Observer()
    assert observer.recording is None and observer.go_on is False
    assert observer.expanded(None) is None


def test_the_builder_numbers_the_states_and_points_steps_at_them():
    builder = Builder(Recording(predicates=(("p", bool), ("q", bool))))
    builder.add_states(u64(30, 10), np.array([[1, 0], [0, 0]]), [])
    builder.add_states(u64(20), np.array([[2, 1]]), [])
    builder.add_states(u64(), np.empty((0, 2)), [])  # a part that admitted nothing
    # state 0 (fp 30) steps to 10 and 20, state 1 (fp 10) back to 30; state 2 not expanded yet
    builder.add_steps(np.array([2, 1]), u64(10, 20, 30), np.array([0, 1, 0]), None)
    behaviour = builder.finish()
    assert builder.states == 3 and len(behaviour) == 3
    assert behaviour.fps.tolist() == [30, 10, 20]
    assert behaviour.starts.tolist() == [0, 2, 3, 3]
    assert behaviour.targets.tolist() == [1, 2, 0]
    assert behaviour.actions.tolist() == [0, 1, 0]
    assert behaviour.sources().tolist() == [0, 0, 1]
    assert behaviour.values["p"].tolist() == [1, 0, 2]
    assert behaviour.values["q"].tolist() == [0, 0, 1]
    assert behaviour.keys is None and behaviour.encodings is None


@pytest.mark.parametrize(
    ("keys", "numbered"),
    [((0, 77, 77), [0, 1, 1]), ((5, 9, 5), [1, 2, 1])],  # 0 stays "no key"
)
def test_the_builder_numbers_binding_keys_small(keys, numbered):
    builder = Builder(Recording(keyed=frozenset({0})))
    builder.add_states(u64(1, 2), np.empty((2, 0)), [])
    builder.add_steps(np.array([3]), u64(2, 2, 1), np.zeros(3), u64(*keys))
    assert builder.finish().keys.tolist() == numbered


def test_the_recorder_records_initial_states_with_their_values_and_violations():
    model = load_model(toy("Walk"))
    recording = Recording(predicates=(("big", lambda s: s.x > 5),), states=True, go_on=True)
    recorder = Recorder(recording)
    assert recorder.recording is recording and recorder.go_on
    low, _, high = model.initial()  # x=0, x=0 again, x=10
    (broken,) = model.invariants
    recorder.initial(0, low, None)
    recorder.initial(1, high, broken)
    behaviour = recorder.behaviour()
    assert behaviour.fps.tolist() == [low.fp, high.fp]
    assert behaviour.values["big"].tolist() == [0, TRUE]
    assert behaviour.initial == [(0, 0), (1, 2)]  # (state, its index in init)
    assert behaviour.encodings == [low.data, high.data]
    assert behaviour.violations == {1: "not_five"}
    # not exploring past violations, a violating initial state is not recorded as one
    quiet = Recorder(Recording())
    quiet.initial(0, high, broken)
    assert quiet.behaviour().violations == {}
