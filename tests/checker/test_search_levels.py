"""checker/search/levels.py on its own: the level loop, the initial level, the depth bound and
the search as checkpoints keep it, run by a toy engine whose levels are Python lists (what an
engine provides, and nothing else)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from checker import Record
from checker.checkpoint import Array, CheckpointError, Saved
from checker.loader import load_model
from checker.result import Step
from checker.search.levels import LevelSearch
from checker.search.options import Options
from checker.search.outcome import Stop, run
from tests.checker.toys import toy


class Lists(LevelSearch[list[int]]):
    """A toy engine: states numbered in the order found, a level a list of their numbers."""

    def __init__(self, model, options: Options | None = None, **kw) -> None:
        super().__init__(model, options or Options(), **kw)
        self.states: list = []  # number -> Successor
        self.parent: list[int | None] = []
        self.known: dict[int, int] = {}  # fingerprint -> number

    def new_frontier(self) -> list[int]:
        return []

    def _add(self, succ, parent, frontier) -> int:
        number = len(self.states)
        self.states.append(succ)
        self.parent.append(parent)
        self.known[succ.fp] = number
        frontier.append(number)
        return number

    def add_initial(self, init, frontier) -> int:
        return self._add(init, None, frontier)

    def initial_known(self, fp: int) -> bool:
        return fp in self.known

    def expand_level(self, frontier, level: int) -> list[int]:
        following: list[int] = []
        for number in frontier:
            for succ in self.model.expand(self.states[number].data):
                self.generated += 1
                self.fired[succ.action] += 1
                if succ.fp in self.known:
                    continue
                ref = self._add(succ, number, following)
                self.distinct += 1
                self.new[succ.action] += 1
                self.depth = level + 1
                broken = self.model.violated(succ.state)
                if broken is not None:
                    raise Stop("violation", ref, invariant=broken.name)
        return following

    def expand_at_bound(self, frontier, level: int) -> None:
        for number in frontier:
            for succ in self.model.expand(self.states[number].data):
                if succ.fp not in self.known:
                    raise self.depth_bound()

    def trace_to(self, where: int) -> list[Step]:
        numbers = []
        while where is not None:
            numbers.append(where)
            where = self.parent[where]
        return [Step(None, {}, self.states[n].state) for n in reversed(numbers)]

    def saved_arrays(self, start, after_interrupt: bool) -> dict[str, Array]:
        return {"frontier": Array.of(np.array(start.frontier), "uint32")}


class Written:
    """Checkpoints always due, keeping what the search writes."""

    resumed = None

    def __init__(self) -> None:
        self.counts: list[dict] = []

    def due(self) -> bool:
        return True

    def write(self, counts, arrays) -> None:
        self.counts.append(counts)

    def remove(self) -> None:
        pass


@pytest.fixture
def walk():
    return load_model(toy("Walk"), {"resets": "false"})


def test_the_levels_run_until_one_is_empty_with_a_shortest_trace(walk):
    search = Lists(walk, Options(deadlock=False))
    result = run(search)
    # x=0 and x=10 (the second x=0 is the same state); then 1, 2, 11, 12; then 3, 4, 13;
    # then 5, which violates not_five, reached from 3 (the first state to reach it)
    assert result.verdict == "violation" and result.invariant == "not_five"
    assert [s.state.x for s in result.trace] == [0, 1, 3, 5]
    assert search.reached["ten"] == (1, 1)  # state number 1, at depth 1


def test_the_initial_level_admits_each_state_once_in_init_order(walk):
    search = Lists(walk)
    level = search.initial_level()
    assert level == [0, 1]
    assert [search.states[n].state.x for n in level] == [0, 10]
    assert (search.generated, search.distinct, search.depth) == (3, 2, 1)


def test_max_states_stops_the_initial_level(walk):
    result = run(Lists(walk, Options(max_states=1)))
    assert (result.verdict, result.bound) == ("incomplete", "--max-states 1 reached")
    assert result.distinct_states == 1


def test_the_depth_bound_stops_where_a_state_has_a_new_successor(walk):
    result = run(Lists(walk, Options(max_depth=2)))
    assert (result.verdict, result.bound) == ("incomplete", "--max-depth 2 reached")
    assert result.depth == 2


def test_each_level_start_is_what_a_checkpoint_holds(walk):
    written = Written()
    run(Lists(walk, Options(max_depth=3), checkpoints=written))
    assert [(c["level"], c["states"], c["depth"]) for c in written.counts] == [
        (1, 2, 1),
        (2, 6, 2),
        (3, 9, 3),
    ]
    assert (written.counts[1]["generated"], written.counts[2]["generated"]) == (7, 13)
    assert written.counts[1]["fired"] == [4, 0] and written.counts[2]["new"] == [7, 0]
    assert written.counts[1]["reached"] == {"ten": [1, 1]}


def test_counts_read_back_are_checked_against_each_other(walk):
    def saved(**counts) -> Saved:
        good = {"generated": 8, "depth": 2, "fired": [8, 0], "new": [5, 0], "reached": {}}
        return Saved(Path("ck/checkpoint.mc"), None, {**good, **counts}, {})

    search = Lists(walk)
    assert search.restore_counts(saved(), level=2, states=6, by_number=True) == {}
    assert search.generated == 8 and search.fired.tolist() == [8, 0]
    for counts, why in [
        ({"depth": 1}, "depth 1 at the start of level 2"),
        ({"generated": 5}, "6 states from 5 generated"),
        ({"new": [6, 0]}, "the new states per action do not add up"),
        ({"reached": {"ten": [1, 3]}}, "a reachability property reached at a depth past the"),
    ]:
        with pytest.raises(CheckpointError, match=f"checkpoint ck/checkpoint.mc: corrupt \\({why}"):
            search.restore_counts(saved(**counts), level=2, states=6, by_number=True)
    with pytest.raises(CheckpointError, match="level 2 is past the depth bound 1"):
        Lists(walk, Options(max_depth=1)).restore_counts(saved(), 2, 6, True)


def test_a_state_record_is_what_the_engine_refers_to(walk):
    search = Lists(walk)
    search.initial_level()
    assert search.trace_to(1) == [Step(None, {}, Record(x=10))]
