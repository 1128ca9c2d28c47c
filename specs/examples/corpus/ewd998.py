"""Safra's termination detection on a ring, EWD 998 (Markus Kuppe, Stephan Merz).

Translated from github.com/tlaplus/Examples, specifications/ewd998/EWD998.tla: the spec that
specifications/ewd998/EWD998PCal.tla refines (its PROPERTY EWD998Spec, `EWD998!Init /\\
[][EWD998!Next]_EWD998!vars`), as `refines(EWD998, ...)` in specs/examples/corpus/ewd998_pcal.py.
Its own cfgs (EWD998.cfg, 50 minutes for TLC) are not in the corpus; its Init, Next,
TypeOK, Inv and StateConstraint are here as written.

Nodes are 0..N-1; each variable is a tuple indexed by node; the token is a record.
"""

from itertools import product

from checker import Record, Spec, action, constant, constraint, invariant, put

WHITE, BLACK = "white", "black"


class EWD998(Spec):
    """EWD 998: a token collects message counters around the ring to detect termination."""

    N = constant(3, "nodes on the ring", min=1)

    @property
    def Node(self) -> range:
        return range(self.N)

    @property
    def NotZero(self) -> range:
        """Node \\ {0}."""
        return range(1, self.N)

    def others(self, s, i):
        """Node \\ {i}."""
        return [j for j in self.Node if j != i]

    def init(self):
        n = self.N
        return [
            Record(
                active=active,
                color=color,
                counter=(0,) * n,
                pending=(0,) * n,
                token=Record(pos=pos, q=0, color=BLACK),
            )
            for active in product((False, True), repeat=n)
            for color in product((WHITE, BLACK), repeat=n)
            for pos in self.Node
        ]

    @action
    def InitiateProbe(self, s):
        t = s.token
        if t.pos != 0:
            return None
        if not (t.color == BLACK or s.color[0] == BLACK or s.counter[0] + t.q > 0):
            return None
        return s.replace(
            token=Record(pos=self.N - 1, q=0, color=WHITE), color=put(s.color, 0, WHITE)
        )

    @action(i="NotZero")
    def PassToken(self, s, i):
        t = s.token
        if s.active[i] or t.pos != i:
            return None
        token = Record(
            pos=t.pos - 1, q=t.q + s.counter[i], color=BLACK if s.color[i] == BLACK else t.color
        )
        return s.replace(token=token, color=put(s.color, i, WHITE))

    @action(i="Node", j="others")
    def SendMsg(self, s, i, j):
        if not s.active[i]:
            return None
        return s.replace(
            counter=put(s.counter, i, s.counter[i] + 1),
            pending=put(s.pending, j, s.pending[j] + 1),
        )

    @action(i="Node")
    def RecvMsg(self, s, i):
        if s.pending[i] <= 0:
            return None
        return s.replace(
            pending=put(s.pending, i, s.pending[i] - 1),
            counter=put(s.counter, i, s.counter[i] - 1),
            color=put(s.color, i, BLACK),
            active=put(s.active, i, True),
        )

    @action(i="Node")
    def Deactivate(self, s, i):
        if not s.active[i]:
            return None
        return s.replace(active=put(s.active, i, False))

    @constraint(admit=False)
    def StateConstraint(self, s):
        return (
            all(s.counter[i] <= 3 and s.pending[i] <= 3 for i in self.Node) and s.token.q <= 9
        )

    @invariant
    def TypeOK(self, s):
        return (
            all(isinstance(a, bool) for a in s.active)
            and all(c in (WHITE, BLACK) for c in s.color)
            and all(p >= 0 for p in s.pending)
            and s.token.pos in self.Node
            and s.token.color in (WHITE, BLACK)
        )

    def Rng(self, a, b):
        return [i for i in self.Node if a <= i <= b]

    @invariant
    def Inv(self, s):
        t = s.token
        if sum(s.pending) != sum(s.counter):  # P0
            return False
        p1 = all(not s.active[i] for i in self.Rng(t.pos + 1, self.N - 1)) and (
            t.q == 0
            if t.pos == self.N - 1
            else t.q == sum(s.counter[i] for i in self.Rng(t.pos + 1, self.N - 1))
        )
        p2 = sum(s.counter[i] for i in self.Rng(0, t.pos)) + t.q > 0
        p3 = any(s.color[i] == BLACK for i in self.Rng(0, t.pos))
        p4 = t.color == BLACK
        return p1 or p2 or p3 or p4
