"""Many initial states: the local engine admits them in parts, as it admits a level's
successors (checker.local.bfs.initial_level), encoded, fingerprinted and checked by the
expanders (in parallel with workers), and gives the counts, verdict and trace that taking
them one at a time gives (LevelSearch.initial_level), with 1 or 2 workers, on C and Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from checker import Record, Spec, action, constant, invariant
from checker.local import bfs
from checker.local.bfs import check
from checker.model import Model
from checker.search.expansion import Expander, Initial
from checker.search.levels import LevelSearch
from checker.search.options import Options
from checker.values import kinds
from checker.values.record import freeze, mapping
from tests.checker.outcomes import outcome
from tests.conftest import ROOT


class Ring(Spec):
    """Every x in 0..size-1 is initial (listed `copies` times); `step` goes to x + 1 and
    `jump` to x + size (new states, at depth 2, below `size` * 2); `small` breaks at `bad`."""

    size = constant(3000, "initial states")
    copies = constant(1, "times init lists each")
    bad = constant(-1, "the state that breaks the invariant (-1: none)")
    raising = constant(-1, "the state on which the invariant raises (-1: none)")

    def init(self):
        return [Record(x=x) for _ in range(self.copies) for x in range(self.size)]

    @action
    def step(self, s):
        return s.replace(x=(s.x + 1) % self.size) if s.x < self.size else None

    @action
    def jump(self, s):
        return s.replace(x=s.x + self.size) if s.x % 7 == 0 and s.x < self.size else None

    @invariant
    def small(self, s):
        if s.x == self.raising:
            raise ValueError("raised on purpose")
        return s.x != self.bad


def ring(**constants: int) -> Model:
    spec = Ring()
    for name, value in constants.items():
        setattr(spec, name, value)
    return Model(spec)


def one_at_a_time(model: Model, options: Options, monkeypatch: pytest.MonkeyPatch):
    """The result of the search taking the initial states one at a time
    (LevelSearch.initial_level, as the local engine does with an observer)."""
    with monkeypatch.context() as patched:
        patched.setattr(bfs._Search, "initial_level", LevelSearch.initial_level)
        return check(model, options)


CASES = [
    ({}, {}),
    ({"copies": 2}, {}),  # every initial state listed twice, across parts
    ({"bad": 2500}, {}),
    ({"bad": 5000}, {}),  # a successor at depth 2 breaks it
    ({"raising": 1700}, {}),
    ({}, {"max_states": 2000}),
    ({"copies": 2}, {"max_states": 3001}),
    ({}, {"max_depth": 1}),
    ({}, {"live_bytes": 0}),
]


@pytest.mark.parametrize(("constants", "options"), CASES)
def test_parts_of_initial_states_give_what_one_at_a_time_gives(constants, options, monkeypatch):
    model = ring(**constants)
    expected = outcome(one_at_a_time(model, Options(**options), monkeypatch))
    assert outcome(check(model, Options(**options))) == expected
    assert outcome(check(model, Options(workers=2, **options))) == expected


def test_the_counts_of_many_initial_states_with_one_and_two_workers():
    # 3000 initial states; each has `step` (to another initial state), and the 429 that are
    # multiples of 7 `jump` to a new state at depth 2 (which has no successor).
    for workers in (1, 2):
        result = check(ring(copies=2), Options(workers=workers, deadlock=False))
        assert result.verdict == "ok"
        assert (result.distinct_states, result.states_generated, result.depth) == (
            3000 + 429,
            6000 + 3000 + 429,
            2,
        )
        assert [(c.name, c.fired, c.new) for c in result.coverage] == [
            ("step", 3000, 0),
            ("jump", 429, 429),
        ]


def test_a_violation_among_the_initial_states_stops_there():
    for workers in (1, 2):
        result = check(ring(bad=2500), Options(workers=workers))
        assert (result.verdict, result.invariant) == ("violation", "small")
        assert (result.distinct_states, result.states_generated) == (2501, 2501)
        assert [(step.action, step.state) for step in result.trace] == [(None, Record(x=2500))]


def test_an_invariant_that_raises_on_an_initial_state_is_an_error_there():
    for workers in (1, 2):
        result = check(ring(raising=1700), Options(workers=workers))
        assert result.verdict == "error" and result.error.kind == "invariant"
        assert "raised on purpose" in result.error.message
        assert (result.distinct_states, result.states_generated) == (1701, 1701)


class ViewRaises(Spec):
    """A view that raises on the initial state x = 900: nothing is admitted (the initial
    states are all encoded and fingerprinted first, as one at a time does)."""

    def init(self):
        return [Record(x=x) for x in range(1000)]

    @action
    def stay(self, s):
        return None

    def view(self, s):
        if s.x == 900:
            raise ValueError("no view")
        return s.x % 10


def test_a_view_that_raises_on_an_initial_state_admits_none():
    for workers in (1, 2):
        result = check(Model(ViewRaises()), Options(workers=workers, deadlock=False))
        assert result.verdict == "error" and result.error.kind == "view"
        assert (result.distinct_states, result.states_generated) == (0, 0)


def test_an_expander_meets_each_initial_state_once():
    model = ring(copies=2, size=10)
    expander = Expander(model)
    first = expander.initial(Initial(1, 0, 12))  # 0..9, then 0 and 1 again
    later = expander.initial(Initial(2, 12, 8))  # 2..9 again
    assert list(memoryview(first.positions).cast("I")) == list(range(10))
    assert len(later.positions) == 0 and bytes(later.counts) == (8).to_bytes(4, sys.byteorder)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_pure_python_path_gives_the_same(workers, tmp_path):
    """The corpus's TokenRing, whose every state is initial: the same counts on the
    pure-Python path (MC_PURE_PYTHON=1) as with the C hot path."""
    spec = ROOT / "specs" / "examples" / "corpus" / "token_ring.py"
    outputs = []
    for pure in ("1", "0"):
        report = tmp_path / f"{pure}.json"
        args = [str(spec), "-D", "N=5", "-D", "M=5", "--workers", str(workers)]
        done = subprocess.run(
            [sys.executable, "-m", "checker", "check", *args, "--json", str(report)],
            capture_output=True,
            text=True,
            env={**os.environ, "MC_PURE_PYTHON": pure},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        got = json.loads(report.read_text())
        outputs.append((got["distinct_states"], got["states_generated"], got["depth"]))
    assert outputs[0] == outputs[1] == (3125, 13_750, 1)


class Typed(Spec):
    """Initial states whose values vary in kind: `values(i)` gives state i's."""

    count = constant(2000, "initial states")

    def __init__(self, values=None) -> None:
        super().__init__()
        self.values = values

    def init(self):
        return [Record(v=self.values(i)) for i in range(self.count)]

    @action
    def stay(self, s):
        return None


KINDS = [
    lambda i: i,
    lambda i: frozenset(range(i % 3)),  # empty sets first: the sample's kind is inexact
    lambda i: {i % 5: frozenset({i % 2}), 7: frozenset()},
    lambda i: tuple(range(i % 4)),
    lambda i: (i, "a") if i % 2 else (i, "b"),  # FIXED: not exact
    lambda i: None if i % 3 else i,
    lambda i: Record(a=i, b=(i,) if i != 1500 else None),
    lambda i: {"k": i} if i != 1999 else {"k": i, "j": 0},
]


@pytest.mark.parametrize("values", KINDS)
def test_the_kind_of_many_initial_states_is_that_of_every_one(values):
    """Only the initial states that do not conform to a sample's kind are inferred: the
    kind is the one inferring every state gives."""
    model = Model(Typed(values))
    states = model.initial_states()
    assert model.kinds == kinds.state_kind(states, {})[0]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (lambda i: True if i == 1700 else i, "mixes bool and int values (0, 1, 2)"),
        (lambda i: "x" if i == 1700 else i, "values of different kinds: int and str"),
        (lambda i: nested(505) if i == 1700 else Record(a=i), "nested deeper than 500"),
    ],
)
def test_one_odd_initial_state_among_many_is_found(values, message):
    result = check(Model(Typed(values)), Options(deadlock=False))
    assert result.verdict == "error" and result.error.kind == "init"
    assert message in result.error.message


def nested(depth: int) -> Record:
    """Records in records, `depth` deep (a Record is frozen already: built at no depth)."""
    value = Record(a=0)
    for _ in range(depth):
        value = Record(a=value)
    return value


@pytest.mark.parametrize(
    "value",
    [
        {2: "b", 1: "a"},
        {1: {3: 4}, -1: [5]},
        {True: 1, 2: 2},  # a bool key: not the ints' fast path
        {},
        {"a": 1},
        {3: frozenset({1})},
    ],
)
def test_a_dict_of_int_keys_freezes_as_mapping_makes_it(value):
    """Functions over numbers (a spec's init builds many) take a shorter way: the same Map."""
    fast, general = freeze(value), mapping({freeze(k): v for k, v in value.items()})
    assert type(fast) is type(general) and list(fast.items()) == list(general.items())
    assert [type(k) for k in fast] == [type(k) for k in general]
    assert freeze(value) == fast  # (its keys' order, remembered)
