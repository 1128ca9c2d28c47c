"""Dijkstra's self-stabilizing token ring, EWD 426 (Markus Kuppe, Murat Demirbas).

Translated from github.com/tlaplus/Examples, specifications/ewd426/TokenRing.tla, checked with
specifications/ewd426/TokenRing.cfg (N = 6, M = 6, INVARIANT TypeOK, CHECK_DEADLOCK FALSE).

Every assignment of counters is an initial state (`c \\in [Node -> 0..M-1]`), so the whole
state space is at depth 1. The cfg's PROPERTY Stab, `<>[]UniqueToken`, is left out: mc has
no eventually-always (docs/corpus.md); UniqueToken is here as a plain predicate.
"""

from itertools import product

from checker import Spec, action, assume, constant, every, invariant, put


class TokenRing(Spec):
    """EWD 426: node 0 creates a token, the others copy their predecessor's counter."""

    N = constant(6, "nodes (TokenRing.cfg: 6)", min=1)
    M = constant(6, "values of a counter (TokenRing.cfg: 6)", min=1)

    @assume
    def NMAssumption(self):
        return self.N <= self.M + 1

    @property
    def Node(self) -> range:
        return range(self.N)

    @property
    def NotZero(self) -> range:
        """Node \\ {0}."""
        return range(1, self.N)

    def init(self):
        """c \\in [Node -> 0..M-1]"""
        return every(c=product(range(self.M), repeat=self.N))

    @action
    def CreateToken(self, s):
        c = s.c
        if c[0] != c[self.N - 1]:
            return None
        return s.replace(c=put(c, 0, (c[self.N - 1] + 1) % self.M))

    @action(i="NotZero")
    def PassToken(self, s, i):
        c = s.c
        if c[i] == c[i - 1]:
            return None
        return s.replace(c=put(c, i, c[i - 1]))

    @invariant
    def TypeOK(self, s):
        return len(s.c) == self.N and all(0 <= v < self.M for v in s.c)

    def UniqueToken(self, s):
        c = s.c
        return any(
            all(c[j] == c[0] for j in range(i))
            and all(c[j] == (c[0] - 1) % self.M for j in range(i, self.N))
            for i in range(self.N + 1)
        )
