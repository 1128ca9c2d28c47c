"""Die Hard jugs (from the TLA+ Examples): get exactly 4 gallons in the big jug.

The invariant `big_is_not_4` is meant to fail: its counterexample is the puzzle's solution.
TLC finds 16 distinct states and a 7-state behavior. The reachability property `solved` says
the same the other way round: `mc check die_hard.py --invariant type_ok --witness solved`
holds, and prints the solution as the shortest behavior reaching it.
"""

from checker import Record, Spec, action, constant, invariant, reachable


class DieHard(Spec):
    """Die Hard: the 3- and 5-gallon jugs."""

    small_capacity = constant(3, "gallons the small jug holds")
    big_capacity = constant(5, "gallons the big jug holds")
    goal = constant(4, "gallons we want in the big jug")

    def init(self):
        return Record(small=0, big=0)

    @action
    def fill_small(self, s):
        return s.replace(small=self.small_capacity)

    @action
    def fill_big(self, s):
        return s.replace(big=self.big_capacity)

    @action
    def empty_small(self, s):
        return s.replace(small=0)

    @action
    def empty_big(self, s):
        return s.replace(big=0)

    @action
    def small_to_big(self, s):
        poured = min(s.small, self.big_capacity - s.big)
        return s.replace(small=s.small - poured, big=s.big + poured)

    @action
    def big_to_small(self, s):
        poured = min(s.big, self.small_capacity - s.small)
        return s.replace(small=s.small + poured, big=s.big - poured)

    @invariant
    def type_ok(self, s):
        return 0 <= s.small <= self.small_capacity and 0 <= s.big <= self.big_capacity

    @invariant
    def big_is_not_4(self, s):
        return s.big != self.goal

    @reachable
    def solved(self, s):
        """Some state has the goal in the big jug."""
        return s.big == self.goal
