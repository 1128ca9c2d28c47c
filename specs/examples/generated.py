"""docs/tla/Gen.tla, translated (docs/tla-translated.md): how TLC counts generated states,
and how the same count comes out of mc. TLC counts a successor for each satisfying binding of
each `\\E` and each true disjunct, inside the operators an action calls too (Move(d)), and a
successor equal to another counts again (Home from x = 0). mc counts each Record an action
returns, for each binding of its parameters: an `\\E` is a parameter, a disjunct an element
of the list returned. Both: 22 states generated, 5 distinct, depth 2."""

from checker import Record, Spec, State, action


class Gen(Spec):
    def init(self) -> list[State]:
        return [Record(x=0), Record(x=1)]

    def move(self, s: State, d: int) -> list[State]:
        """Move(d) == \\/ x + d <= 2 /\\ x' = x + d  \\/ x - d >= -2 /\\ x' = x - d"""
        out = []
        if s.x + d <= 2:
            out.append(s.replace(x=s.x + d))
        if s.x - d >= -2:
            out.append(s.replace(x=s.x - d))
        return out

    @action(d=(1, 2))
    def step(self, s: State, d: int) -> list[State]:
        """Step == \\E d \\in {1, 2} : Move(d)"""
        return self.move(s, d)

    @action
    def home(self, s: State) -> list[State]:
        """Home == \\/ x' = 0  \\/ x = 0 /\\ x' = x"""
        return [s.replace(x=0)] + ([s] if s.x == 0 else [])
