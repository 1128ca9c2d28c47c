"""checker/search/admission.py on its own: a part's candidates admitted against a visited set,
and the part cut where a one-state-at-a-time search would stop, on hand-made expander replies."""

from __future__ import annotations

import numpy as np
import pytest

from checker.loader import load_model
from checker.local.visited import FingerprintArray
from checker.search.admission import Admission, Cut
from checker.search.expansion import Expanded, Expansion, Pieces
from checker.search.observers import Observer
from checker.search.options import Options
from checker.search.outcome import Stop
from checker.spark.driver import DriverVisited
from tests.checker.toys import toy


class Known:
    """A visited set holding the fingerprints given."""

    def __init__(self, *fps: int) -> None:
        self.fps = np.array(fps, dtype=np.uint64)

    def known(self, fps: np.ndarray) -> np.ndarray:
        return np.isin(fps, self.fps)


def reply(**changes) -> Expanded:
    """Two states expanded: state 0 has 3 successors (actions 0, 1, 0), state 1 has 2 (1, 1);
    the candidates are successors 0, 2, 3 and 4, with fingerprints 50, 60, 50 (met again from
    the other state) and 70."""
    fields = dict(
        actions=np.array([0, 1, 0, 1, 1], np.uint16).tobytes(),
        counts=np.array([3, 2], np.uint32).tobytes(),
        stuck=bytes([0, 0]),
        positions=np.array([0, 2, 3, 4], np.uint32).tobytes(),
        fps=np.array([50, 60, 50, 70], np.uint64).tobytes(),
        blob=Pieces([b"s0", b"s2", b"s3", b"s4"]),
        offsets=np.array([0, 2, 4, 6, 8], np.uint64).tobytes(),
    )
    return Expanded(**{**fields, **changes})


def admission(max_states: int | None = None, distinct: int = 0, go_on: bool = False):
    adm = Admission()
    adm.options = Options(max_states=max_states)
    adm.observer = None
    if go_on:
        adm.observer = Observer()
        adm.observer.go_on = True
    adm.distinct, adm.generated, adm.queue = distinct, 0, 0
    adm.fired = np.zeros(2, np.int64)
    adm.reached = {}
    return adm


def test_the_new_candidates_are_those_the_visited_set_does_not_know_each_once():
    exp = Expansion(reply(), deadlock=True)
    decision = admission().decide(exp, Known(60))
    assert decision.used.tolist() == [50, 60, 50, 70]
    assert decision.unique.tolist() == [50, 60, 70]
    assert decision.known.tolist() == [False, True, False]
    assert decision.kept.tolist() == [0, 3]  # 50 first met at candidate 0, then 70
    assert not decision.bad and decision.over is None


@pytest.mark.parametrize("engine", ["local", "spark driver levels", "spark levels"])
def test_each_engines_visited_set_decides_as_a_plain_set(engine):
    """The engines' visited sets are `Visited`s: the local FingerprintArray, and Spark's
    DriverVisited with the fingerprints (signed) of the levels held in the driver or sent back
    by Spark levels (no job: they are few enough) decide as a plain set does."""
    big = 2**64 - 3  # signed, -3 on Spark
    if engine == "local":
        visited = FingerprintArray()
        visited.add(np.array([60, big], np.uint64))
        visited.end_level()
    else:
        visited = DriverVisited(None, limit=10)  # type: ignore[arg-type]
        if engine == "spark driver levels":
            visited.driver_fps.update([60, -3])
        else:
            visited.keep_spark_level([{"fps": np.array([60, -3], np.int64).tobytes()}])
            visited.spark_links.append(None)  # type: ignore[arg-type]  (a level on Spark)
    decision = admission().decide(Expansion(reply(), deadlock=True), visited)
    assert decision.known.tolist() == [False, True, False]
    assert decision.kept.tolist() == [0, 3]
    asked = np.array([big, 50, big - 1], np.uint64)
    assert visited.known(asked).tolist() == [True, False, False]


def test_a_part_that_stops_nowhere_counts_every_successor():
    adm = admission()
    exp = Expansion(reply(), deadlock=True)
    assert adm.cut(exp, adm.decide(exp, Known()), first=0, size=2, before=0, found=3) is None
    assert adm.generated == 5
    assert adm.fired.tolist() == [2, 3]


def test_the_max_states_bound_cuts_the_part_at_the_refused_successor():
    adm = admission(max_states=10, distinct=9)  # room for one more state
    exp = Expansion(reply(), deadlock=True)
    decision = adm.decide(exp, Known())
    assert decision.kept.tolist() == [0] and decision.over == 2  # successor 2: candidate 1's
    assert adm.cut(exp, decision, first=0, size=2, before=0, found=1) is Cut.FULL
    # as a one-state-at-a-time search: state 0 generated its 3 successors, fired all 3
    assert adm.generated == 3
    assert adm.fired.tolist() == [2, 1]
    assert adm.queue == 2  # the level's states from state 0 on, none found before
    with pytest.raises(Stop) as stop:
        raise adm.full()
    assert stop.value.verdict == "incomplete"
    assert stop.value.fields == {"bound": "--max-states 10 reached"}


def test_a_new_state_that_violates_an_invariant_stops_the_part_there():
    adm = admission()
    exp = Expansion(reply(broken=[[3, "small"]]), deadlock=True)
    decision = adm.decide(exp, Known())
    assert decision.kept.tolist() == [0, 1, 3] and decision.bad
    assert adm.cut(exp, decision, first=0, size=2, before=0, found=3) is Cut.BAD
    assert (adm.generated, adm.queue) == (5, 2 - 1 + 2)  # state 1 expanded; two found before
    with pytest.raises(Stop) as stop:
        adm.bad("ref", exp, decision)
    assert (stop.value.verdict, stop.value.where) == ("violation", "ref")
    assert stop.value.fields == {"invariant": "small"}
    # exploring past violations (an observer that goes on), only what raised stops the search
    assert not admission(go_on=True).decide(exp, Known()).bad


def test_a_state_whose_expansion_raised_or_that_is_deadlocked_cuts_the_part_before_it():
    for exp in (
        Expansion(reply(error=1), deadlock=False),
        Expansion(reply(stuck=bytes([0, 1]), counts=np.array([3, 0], np.uint32).tobytes(),
                        positions=np.array([0, 2], np.uint32).tobytes(),
                        fps=np.array([50, 60], np.uint64).tobytes()), deadlock=True),
    ):
        adm = admission()
        decision = adm.decide(exp, Known())
        assert decision.used.tolist() == [50, 60]  # state 0's successors only
        assert adm.cut(exp, decision, first=0, size=2, before=0, found=2) is Cut.PARENT
        assert adm.generated == 3 and adm.queue == 2 - 1 + 2


def test_a_deadlocked_state_is_expanded_again_to_report_it():
    adm = admission()
    adm.model = load_model(toy("Walk"), {"resets": "false"})
    two = adm.model.expand(adm.model.initial()[0].data)[1]  # step(d=2)
    four = adm.model.expand(two.data)[1]
    assert four.state.x == 4
    with pytest.raises(Stop) as stop:
        adm.settle_parent(7, four.data)
    assert (stop.value.verdict, stop.value.where) == ("deadlock", 7)
