"""Toy specs for the tests that drive one module directly (checker/search/, trace, deadline,
steps, commands): small enough to count by hand. Loaded by path (`load_model(toy("Walk"))`)."""

from __future__ import annotations

from pathlib import Path

from checker import Record, Spec, action, constant, invariant, reachable, refines

HERE = Path(__file__)


def toy(name: str) -> str:
    """The target of one of these specs, as the command line names it."""
    return f"{HERE}::{name}"


class FromZero(Spec):
    """x starts at 0: a test's spec adds the actions and properties it needs."""

    def init(self):
        return Record(x=0)


class Walk(Spec):
    """x from 0 by 1 or 2 up to 4, from 10 up to 12; `reset` back to 0 (or not: then 4 and 12
    are deadlocks)."""

    resets = constant(True, "whether `reset` is enabled")

    def init(self):
        return [Record(x=0), Record(x=0), Record(x=10)]  # the second x=0 is the same state

    @action(d=(1, 2))
    def step(self, s, d):
        return s.replace(x=s.x + d) if s.x < 4 or 10 <= s.x < 12 else None

    @action
    def reset(self, s):
        return s.replace(x=0) if self.resets and s.x else None

    @invariant
    def not_five(self, s):
        return s.x != 5

    @reachable
    def ten(self, s):
        return s.x == 10


class Counter(Spec):
    """n counts up to `limit` and resets; the invariant refuses `bad`."""

    limit = constant(3, "the highest count")
    bad = constant(9, "a count the invariant refuses")

    def init(self):
        return Record(n=0)

    @action
    def inc(self, s):
        return s.replace(n=s.n + 1) if s.n < self.limit else None

    @action
    def reset(self, s):
        return s.replace(n=0) if s.n else None

    @invariant
    def allowed(self, s):
        return s.n != self.bad


class Halved(Spec):
    """Refines Counter (n = x // 2, limit 3): a step of +1 maps to a stutter or to `inc`."""

    def init(self):
        return Record(x=0)

    @action
    def up(self, s):
        return s.replace(x=s.x + 1) if s.x < 6 else None

    counts = refines(Counter, lambda s: Record(n=s.x // 2))


class Spin(Spec):
    """`spin(k)` never returns once n is k."""

    def init(self):
        return Record(n=0)

    @action(k=(1, 2))
    def spin(self, s, k):
        while s.n == k:
            pass
        return s.replace(n=s.n + 1) if s.n < 3 else None
