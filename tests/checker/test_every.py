"""`every(x=S, y=T, where=P)` (checker.values.every): the records of a product of domains where
P holds, in the product's order. As a spec's `init`, the local engine builds and filters its
candidates by parts in the expanders (checker.local.bfs.initial_level): the counts, verdict,
trace and initial states are those of the same states listed by `init`, with 1 or 2 workers,
on C and on the pure-Python twin."""

from __future__ import annotations

import signal
import subprocess
from array import array
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Record, Spec, action, constant, every, invariant
from checker.errors import StateError
from checker.local import bfs
from checker.local.bfs import check
from checker.model import Model
from checker.search.levels import LevelSearch
from checker.search.options import Options
from checker.values import fast
from checker.values.every import candidates_python
from tests.checker.outcomes import outcome
from tests.conftest import MC, default_sigint, finish

in_c = pytest.mark.skipif(not fast.C, reason="checker._hot is not built (or MC_PURE_PYTHON=1)")


class Grid(Spec):
    """x, y in 0..size-1 where (x + y) % 3 != 0 are initial (`form` "every" says so with
    every(...), "list" lists them); `step` moves y on (to a state filtered out of the initial
    ones at times: new at depth 2); `small` breaks at x * size + y = `bad`."""

    size = constant(60, "values of x and of y")
    form = constant("every", "every or list")
    bad = constant(-1, "the state (x * size + y) that breaks the invariant (-1: none)")
    raising = constant(-1, "the state on which the invariant raises (-1: none)")
    where_raises = constant(-1, "the candidate on which `where` raises (-1: none)")

    def kept(self, s):
        if s.x * self.size + s.y == self.where_raises:
            raise ValueError("where raised on purpose")
        return (s.x + s.y) % 3 != 0

    def init(self):
        values = range(self.size)
        if self.form == "list":
            records = (Record(x=x, y=y) for x in values for y in values)
            return [s for s in records if self.kept(s)]
        return every(x=values, y=values, where=self.kept)

    @action
    def step(self, s):
        return s.replace(y=(s.y + 1) % self.size)

    @invariant
    def small(self, s):
        if s.x * self.size + s.y == self.raising:
            raise ValueError("raised on purpose")
        return s.x * self.size + s.y != self.bad


def grid(**constants: object) -> Model:
    spec = Grid()
    for name, value in constants.items():
        setattr(spec, name, value)
    return Model(spec)


def listed(options: Options, monkeypatch: pytest.MonkeyPatch, **constants: object):
    """The search of the same initial states listed by `init`, taken one at a time."""
    with monkeypatch.context() as patched:
        patched.setattr(bfs._Search, "initial_level", LevelSearch.initial_level)
        return check(grid(form="list", **constants), options)


def test_iterating_gives_the_product_in_order_where_it_holds():
    nums = [{1: a, 2: b} for a, b in product(range(3), repeat=2)]
    flags = [False, True]
    records = list(every(num=nums, flag=flags, pc=("a", "b"), where=lambda s: s.num[1] != 1))
    expected = [
        Record(num=n, flag=f, pc=p) for n, f, p in product(nums, flags, ("a", "b")) if n[1] != 1
    ]
    assert records == expected and len(records) == 24
    assert list(every(black=range(2), white=range(2))) == [
        Record(black=0, white=0),
        Record(black=0, white=1),
        Record(black=1, white=0),
        Record(black=1, white=1),
    ]
    assert list(every(x=(), y=range(3))) == []


def test_a_domain_may_be_an_every():
    cans = every(black=range(2), white=range(2), where=lambda c: c.black + c.white == 1)
    assert list(every(can=cans)) == [
        Record(can=Record(black=0, white=1)),
        Record(can=Record(black=1, white=0)),
    ]


def test_what_where_raises_is_raised_after_the_records_before_it():
    def where(s):
        if s.x == 2:
            raise KeyError("two")
        return True

    seen = []
    with pytest.raises(KeyError, match="two"):
        for record in every(x=range(5), where=where):
            seen.append(record.x)
    assert seen == [0, 1]


def test_a_bad_every_says_why():
    with pytest.raises(StateError, match="needs a domain"):
        every()
    with pytest.raises(StateError, match="at most 64 domains"):
        every(**{f"v{i}": (0,) for i in range(65)})
    with pytest.raises(StateError, match="must be iterable"):
        every(x=3)
    with pytest.raises(StateError, match="must be a function"):
        every(x=range(2), where=True)


domains = st.lists(
    st.lists(
        st.one_of(
            st.integers(-3, 3),
            st.text("ab", max_size=2),
            st.tuples(st.integers(0, 2), st.booleans()),
            st.dictionaries(st.integers(0, 2), st.integers(0, 2), max_size=2),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=3,
)


@in_c
@settings(max_examples=200, deadline=None)
@given(domains, st.integers(0, 70), st.integers(0, 70), st.integers(0, 9), st.booleans())
def test_the_c_builder_and_its_twin_agree(values, start, stop, modulo, picking):
    c_candidates = fast.TWINS["candidates"][0]
    names = [f"v{i}" for i in range(len(values))]
    made = every(**dict(zip(names, values)))
    args = (made.shape, made.domains, made.slots)

    def where(s):  # false on some, raises on one
        key = sum(hash(str(getattr(s, n))) % 7 for n in names) if modulo else 1
        if modulo and key == modulo:
            raise ValueError(key)
        return key % 3 != 0

    picked = None
    if picking:
        picked = array("q", range(made.count)[::-1]).tobytes()  # every candidate, backwards
        start = min(start, made.count)
        stop = min(stop, made.count)
    else:
        stop = min(stop, made.count)
    ours = c_candidates(*args, start, stop, where, picked)
    twins = candidates_python(*args, start, stop, where, picked)
    assert ours[:3] == twins[:3]
    assert type(ours[3]) is type(twins[3]) and str(ours[3]) == str(twins[3])
    assert all(type(a) is type(b) for a, b in zip(ours[0], twins[0]))
    if not picking and ours[2] is None:
        everything = [Record(**dict(zip(names, v))) for v in product(*values)][start:stop]
        assert ours[0] == [s for s in everything if where(s)]


def test_the_initial_states_are_those_listed_in_the_same_order():
    assert grid().initial_states() == grid(form="list").initial_states()
    assert len(grid().initial_states()) == 2400
    model = grid()
    assert model.every() is not None
    assert model.kinds == grid(form="list").kinds


CASES = [
    ({}, {}),
    ({"bad": 1000}, {}),  # x=16, y=40: an initial state
    ({"bad": 30 * 60 + 30}, {}),  # a state at depth 2: (x + y) % 3 == 0
    ({"raising": 1703}, {}),
    ({}, {"max_states": 1500}),
    ({}, {"max_depth": 1}),
    ({}, {"live_bytes": 0}),
]


@pytest.mark.parametrize(("constants", "options"), CASES)
def test_parts_of_candidates_give_what_the_list_gives(constants, options, monkeypatch):
    expected = outcome(listed(Options(**options), monkeypatch, **constants))
    assert outcome(check(grid(**constants), Options(**options))) == expected
    assert outcome(check(grid(**constants), Options(workers=2, **options))) == expected
    if not constants and not options:
        assert (expected["distinct"], expected["generated"], expected["depth"]) == (
            3600,
            2400 + 2400 + 1200,
            2,
        )


def test_one_and_two_workers_find_the_same_states():
    one = check(grid(), Options(workers=1))
    two = check(grid(), Options(workers=2))
    assert one.verdict == two.verdict == "ok"
    assert one.closest_fingerprints == two.closest_fingerprints
    violation = [check(grid(bad=1000), Options(workers=n)) for n in (1, 2)]
    for result in violation:
        assert (result.verdict, result.invariant) == ("violation", "small")
        assert [(s.action, s.state) for s in result.trace] == [(None, Record(x=16, y=40))]
        # the initial states before it in the product's order: those of x < 16 and y < 40
        assert result.distinct_states == 16 * 40 + 27 + 1


def test_where_raising_is_the_inits_error_on_every_engine(monkeypatch):
    expected = outcome(listed(Options(), monkeypatch, where_raises=2000))
    assert expected["verdict"] == "error" and expected["error"][0] == "init"
    assert "where raised on purpose" in expected["error"][3]
    kind, name, params, message, _ = expected.pop("error")
    for workers in (1, 2):
        result = check(grid(where_raises=2000), Options(workers=workers))
        got = outcome(result)
        # (the traceback is the spec's, from its `where` on: the list's has `init`'s too)
        assert got.pop("error")[:4] == (kind, name, params, message) and got == expected
        assert result.error.traceback.endswith(
            ', in kept\n    raise ValueError("where raised on purpose")\n'
            "ValueError: where raised on purpose\n"
        )


def test_no_candidate_kept_is_no_initial_state():
    model = grid()
    model.spec.kept = lambda s: False
    with pytest.raises(Exception, match="returned no initial state"):
        check(model, Options(workers=2))


SLOW_WHERE = """
import time

from checker import Spec, action, every


class Slow(Spec):
    def init(self):
        return every(x=range(1_000_000), where=self.slowly)

    def slowly(self, s):
        if s.x == 10:
            print("where is running", flush=True)
        time.sleep(0.001)
        return True

    @action
    def stay(self, s):
        return s
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_where_stops_the_run(tmp_path, sig):
    spec = tmp_path / "slow.py"
    spec.write_text(SLOW_WHERE)
    proc = subprocess.Popen(
        [*MC, "check", str(spec), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # inside the init's where, in the expander's part
        if line.startswith("where is running"):
            break
    proc.send_signal(sig)
    out, err = finish(proc)
    assert proc.returncode == 152, err
    assert "Search incomplete: interrupted" in out
    assert "not deterministic" not in out + err and "Traceback" not in err
