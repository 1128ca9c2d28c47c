"""An invariant that another calls on the same state (TLA+'s `Inv == TypeOK /\\ ...`) is
evaluated once per state (checker.compiled.evaluated_once), on both paths, and the verdicts,
counts and counterexamples stay those of evaluating everything."""

from __future__ import annotations

from typing import ClassVar

import pytest

from checker import Record, Spec, action, constant, invariant
from checker.compiled import OncePerState
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options


class Counter(Spec):
    """x counts up to N; TypeOK is an invariant and part of Inv, declared before or after it."""

    N = constant(30, "the last value", min=1)
    bad = constant(-1, "a value TypeOK refuses (-1: none)")
    calls: ClassVar[list[str]] = []  # the invariants' evaluations (class-level: workers fork)

    def init(self):
        return Record(x=0, y=0)

    @action
    def inc(self, s):
        if s.x >= self.N:
            return None
        return s.replace(x=s.x + 1)

    @action
    def flip(self, s):
        return s.replace(y=1 - s.y)

    @invariant
    def Inv(self, s):
        self.calls.append("Inv")
        return self.TypeOK(s) and s.y in (0, 1)

    @invariant
    def TypeOK(self, s):
        self.calls.append("TypeOK")
        return s.x != self.bad


def test_an_invariant_another_calls_is_evaluated_once_per_state():
    Counter.calls.clear()
    model = Model(Counter())
    result = check(model, Options(workers=1))
    assert result.verdict == "ok" and result.distinct_states == 62
    # Each state Inv is evaluated on, TypeOK is once: Inv's call, whose result the engine's
    # own call of TypeOK then gets (not twice, as when each call evaluates it).
    assert Counter.calls.count("TypeOK") == Counter.calls.count("Inv") >= 62
    assert type(model.spec.__dict__["TypeOK"]) is OncePerState


@pytest.mark.parametrize("incremental", [True, False])
def test_the_first_invariant_declared_is_the_one_reported(incremental):
    """Inv, declared first, fails through TypeOK at x = 7: Inv is reported, with the shortest
    trace, whether TypeOK's result came from Inv's call or the engine's."""
    result = check(Model(Counter(bad=7)), Options(workers=1, incremental=incremental))
    assert result.verdict == "violation" and result.invariant == "Inv"
    assert [step.action for step in result.trace] == [None] + ["inc"] * 7
