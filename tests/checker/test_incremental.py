"""Incremental evaluation (docs/architecture.md, "Incremental evaluation") changes no result:
with it on and off, the same verdicts, counts, coverage and traces, on every bundled spec, on
random transition systems, and on random specs whose guards and invariants read different
variables depending on the values they find. On the C hot path only (the pure-Python path
evaluates everything; its results are the same by construction)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Record, Spec, action, invariant
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.result import CheckResult
from checker.search.options import Options
from checker.values import fast
from checker.values.record import without
from tests.bundled import BUNDLED
from tests.checker.test_random_graphs import matches_networkx, systems
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(not fast.C, reason="incremental evaluation needs checker._hot")

TIMING = {"seconds", "visited_bytes", "link_bytes", "liveness_seconds"}


def outcome(result: CheckResult) -> dict[str, Any]:
    """Everything a result says except how long it took and how much memory it used."""
    out = {k: v for k, v in asdict(result).items() if k not in TIMING}
    out["trace"] = [(s.action, s.params, s.state) for s in result.trace]
    return out


def both(model_of, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    on = check(model_of(), Options(incremental=True, **options))
    off = check(model_of(), Options(incremental=False, **options))
    return outcome(on), outcome(off)


@pytest.mark.parametrize(("path", "constants", "verdict", "distinct"), BUNDLED)
def test_bundled_specs_the_same_with_and_without(path, constants, verdict, distinct):
    on, off = both(lambda: load_model(ROOT / path, constants))
    assert on == off
    assert on["verdict"] == verdict


def test_the_same_with_two_workers():
    path, constants = "specs/kip903.py", {"fixed": "false"}
    on, off = both(lambda: load_model(ROOT / path, constants), workers=2)
    assert on == off
    assert on["verdict"] == "violation" and len(on["trace"]) == 14


@settings(max_examples=60, deadline=None)
@given(systems())
def test_random_systems_without_it_match_networkx(system):
    matches_networkx(system, lambda model: check(model, Options(deadlock=False, incremental=False)))


# -- specs whose reads depend on values ---------------------------------------------------------

VARIABLES = ("a", "b", "c", "d")
values = st.integers(min_value=0, max_value=2)
names = st.sampled_from(VARIABLES)


@st.composite
def rules(draw):
    """A guard or invariant: if `test` == v then `then` must be w, else `other` must be x (so
    which variable it reads depends on the value it finds first)."""
    return (draw(names), draw(values), draw(names), draw(values), draw(names), draw(values))


# Every way spec code reads a variable: each must be noted (a read not noted would let the
# engine skip a guard or invariant whose variable changed: a false pass).
READERS: dict[str, Callable[[Record, str], Any]] = {
    "attribute": getattr,
    "item": lambda s, name: s[name],
    "get": lambda s, name: s.get(name),
    "items": lambda s, name: dict(s.items())[name],
    "values": lambda s, name: s.values()[VARIABLES.index(name)],
    # through a smaller record (another shape, not watched) of the variables it keeps
    "without": lambda s, name: getattr(without(s, *[v for v in VARIABLES if v != name][:2]), name),
}


def satisfied(s: Record, rule: tuple[Any, ...], read: Callable[[Record, str], Any]) -> bool:
    test, v, then, w, other, x = rule
    if read(s, test) == v:
        return read(s, then) == w
    return read(s, other) == x


def value_dependent_spec(
    guards: list[tuple[Any, ...]], targets: list[str], inv: Any, reader: str = "attribute"
) -> Spec:
    read = READERS[reader]

    class Reads(Spec):
        def init(self):
            return [Record(a=0, b=0, c=0, d=0)]

        @action(k=tuple(range(len(guards))), by=(1, 2))
        def bump(self, s, k, by):
            if not satisfied(s, guards[k], read):
                return None
            target = targets[k]
            return s.replace(**{target: (getattr(s, target) + by) % 3})

        @action
        def reset(self, s):
            if s.a != 2 or s.b != 2:
                return None
            return s.replace(a=0, b=0)

        @invariant
        def allowed(self, s):
            return inv is None or not satisfied(s, inv, read) or s.c != 2

    return Reads()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(rules(), min_size=1, max_size=5),
    st.lists(names, min_size=5, max_size=5),
    st.one_of(st.none(), rules()),
    st.sampled_from(sorted(READERS)),
)
def test_value_dependent_reads_the_same_with_and_without(guards, targets, inv, reader):
    """Whichever way the guards and the invariant read the variables (READERS)."""
    model_of = lambda: Model(value_dependent_spec(guards, targets, inv, reader))  # noqa: E731
    on, off = both(model_of, deadlock=False)
    assert on == off


def test_an_invariant_read_through_without_is_checked_again():
    """An invariant that reads `x` through `without(s, "y")` (a record of another shape) fails
    when `x` reaches 3, incremental or not (take did not note its reads: the invariant was
    never evaluated again, a false pass)."""

    class Through(Spec):
        def init(self):
            return Record(x=0, y=0)

        @action
        def inc(self, s):
            return s.replace(x=s.x + 1) if s.x < 5 else None

        @invariant
        def small(self, s):
            return without(s, "y").x < 3

    on, off = both(lambda: Model(Through()), deadlock=False)
    assert on == off
    assert on["verdict"] == off["verdict"] == "violation"
    assert [state.x for _, _, state in on["trace"]] == [0, 1, 2, 3]
