"""Gries's coffee can problem (Andrew Helwer).

Translated from github.com/tlaplus/Examples, specifications/CoffeeCan/CoffeeCan.tla, checked
with CoffeeCan1000Beans.cfg: MaxBeanCount = 1000, SPECIFICATION Spec (WF_can(Next)),
PROPERTIES EventuallyTerminates MonotonicDecrease LoopInvariant TerminationHypothesis,
INVARIANT TypeInvariant. Every can of 1 to MaxBeanCount beans is initial; each step takes
two beans out and puts one back; the last bean's colour is decided by the parity of the
white beans.

`WF_can(Next)` is weak fairness on each action here: a state where a pick is enabled keeps
it enabled while the can stutters. TerminationHypothesis is an IF on the initial state
(`IF can.white % 2 = 0 THEN <>... ELSE <>...`); as the parity of the white beans never
changes (LoopInvariant), it is the two leads-to properties below, one per parity.
"""

from checker import (
    Record,
    Spec,
    action,
    constant,
    eventually,
    every,
    invariant,
    leads_to,
    step_property,
)


class CoffeeCan(Spec):
    """A can of black and white beans, emptied two beans at a time."""

    MaxBeanCount = constant(1000, "beans at most (CoffeeCan1000Beans.cfg: 1000)", min=1)

    def init(self):
        """can \\in {c \\in Can : c.black + c.white \\in 1..MaxBeanCount}, with Can the
        records [black : 0..MaxBeanCount, white : 0..MaxBeanCount]."""
        beans = range(self.MaxBeanCount + 1)
        cans = every(
            black=beans,
            white=beans,
            where=lambda c: 1 <= c.black + c.white <= self.MaxBeanCount,
        )
        return every(can=cans)

    def BeanCount(self, s):
        return s.can.black + s.can.white

    @action(fair="weak")
    def PickSameColorWhite(self, s):
        if self.BeanCount(s) <= 1 or s.can.white < 2:
            return None
        return s.replace(can=Record(black=s.can.black + 1, white=s.can.white - 2))

    @action(fair="weak")
    def PickSameColorBlack(self, s):
        if self.BeanCount(s) <= 1 or s.can.black < 2:
            return None
        return s.replace(can=Record(black=s.can.black - 1, white=s.can.white))

    @action(fair="weak")
    def PickDifferentColor(self, s):
        if self.BeanCount(s) <= 1 or s.can.black < 1 or s.can.white < 1:
            return None
        return s.replace(can=Record(black=s.can.black - 1, white=s.can.white))

    @action(fair="weak")
    def Termination(self, s):
        if self.BeanCount(s) != 1:
            return None
        return s

    @invariant
    def TypeInvariant(self, s):
        return 0 <= s.can.black <= self.MaxBeanCount and 0 <= s.can.white <= self.MaxBeanCount

    @step_property
    def MonotonicDecrease(self, s, t):
        """[][BeanCount' < BeanCount]_can"""
        return t == s or self.BeanCount(t) < self.BeanCount(s)

    @step_property
    def LoopInvariant(self, s, t):
        """[][can.white % 2 = 0 <=> can'.white % 2 = 0]_can"""
        return (s.can.white % 2 == 0) == (t.can.white % 2 == 0)

    @eventually
    def EventuallyTerminates(self, s):
        """<>(ENABLED Termination)"""
        return self.BeanCount(s) == 1

    def even_white(self, s):
        return s.can.white % 2 == 0

    def odd_white(self, s):
        return s.can.white % 2 == 1

    def one_black(self, s):
        return s.can.black == 1 and s.can.white == 0

    def one_white(self, s):
        return s.can.black == 0 and s.can.white == 1

    TerminationHypothesisEven = leads_to(even_white, one_black)
    TerminationHypothesisOdd = leads_to(odd_white, one_white)
