"""docs/tla/Con.tla, translated (docs/tla-translated.md): TLC's CONSTRAINT against mc's
`@constraint`, and an action property (`PROPERTY Slow`, `[][x' = x + 1]_x`).

x goes up by 1 or 2 without end; the constraint x <= 4 bounds the search. TLC's CONSTRAINT
(`Tlc`, `@constraint(admit=False)`): 11 states generated, 5 distinct, depth 3; a successor
outside it (x = 5, 6) is checked against the invariants and dropped. mc's `@constraint`
(`Admitted`): 11 generated, 7 distinct, depth 4; x = 5 and 6 are distinct states, checked and
not expanded."""

from checker import Record, Spec, State, action, constant, constraint, invariant, step_property


class Up(Spec):
    """x goes up by 1 or 2."""

    six = constant(False, "check NotSix: x # 6")
    slow = constant(False, "check Slow: [][x' = x + 1]_x")

    def init(self) -> State:
        return Record(x=0)

    @action(d=(1, 2))
    def next(self, s: State, d: int) -> State:
        return s.replace(x=s.x + d)

    @invariant
    def not_six(self, s: State) -> bool:
        return not self.six or s.x != 6

    @step_property
    def slow_steps(self, s: State, t: State) -> bool:
        """Slow == [][x' = x + 1]_x"""
        return not self.slow or t.x == s.x + 1

    def bound(self, s: State) -> bool:
        """CONSTRAINT Bound: x <= 4"""
        return s.x <= 4


class Tlc(Up):
    """TLC's CONSTRAINT."""

    bound = constraint(Up.bound, admit=False)


class Admitted(Up):
    """mc's @constraint."""

    bound = constraint(Up.bound)


spec = Tlc
