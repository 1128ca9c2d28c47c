"""Simplified Fast Paxos with a unique coordinator (Lim Ngian Xin Terry, Gaurav Gandhi).

Translated from github.com/tlaplus/Examples, specifications/SimplifiedFastPaxos/FastPaxos.tla
(with the Paxos.tla it extends), checked with specifications/SimplifiedFastPaxos/FastPaxos.cfg:
Replicas = {r1, r2, r3, r4}, Values = {v1, v2, v3}, Ballots = 0..4, FastBallots = {1, 3},
Quorums and FastQuorums every 3 of the 4 replicas, INVARIANTS FastTypeOK FastNontriviality,
PROPERTY PaxosConsistency (a step property), SYMMETRY PaxosSymmetry.

Replicas and values are model values, the strings r1.. and v1..; `any` is the string "any"
and `none` is None. Messages are records in the set `messages`. PaxosSymmetry is
`Permutations(Values) \\union Permutations(Replicas)`: here `symmetry = ("Values", "Replicas")`,
which is every renaming of both (docs/corpus.md says how that differs from TLC's).
"""

from itertools import combinations

from checker import Record, Spec, action, assume, constant, invariant, step_property
from checker.symmetry import Permutation

ANY = "any"


class FastPaxos(Spec):
    """Fast Paxos: fast rounds where acceptors propose, classic rounds that resolve collisions."""

    replicas = constant(4, "acceptors r1.. (FastPaxos.cfg: 4)", min=1)
    values = constant(3, "values v1.. (FastPaxos.cfg: 3)", min=1)
    max_ballot = constant(4, "Ballots = 0..max_ballot (FastPaxos.cfg: 4)", min=1)
    fast_ballots = constant("1,3", "FastBallots, comma-separated (FastPaxos.cfg: 1,3)")
    quorum = constant(3, "Quorums: every set of this many replicas (FastPaxos.cfg: 3)", min=1)
    fast_quorum = constant(3, "FastQuorums: every set of this many replicas (cfg: 3)", min=1)

    messages: frozenset[Record]
    decision: str | None
    maxValue: dict[str, str | None]
    cValue: str | None

    symmetry = ("Values", "Replicas")

    @property
    def Replicas(self) -> tuple[str, ...]:
        return tuple(f"r{i}" for i in range(1, self.replicas + 1))

    @property
    def Values(self) -> tuple[str, ...]:
        return tuple(f"v{i}" for i in range(1, self.values + 1))

    @property
    def Ballots(self) -> range:
        return range(self.max_ballot + 1)

    @property
    def FastBallots(self) -> tuple[int, ...]:
        return tuple(int(b) for b in self.fast_ballots.split(","))

    @property
    def ClassicBallots(self) -> tuple[int, ...]:
        return tuple(b for b in self.Ballots if b not in self.FastBallots)

    @property
    def Quorums(self) -> tuple[frozenset[str], ...]:
        return tuple(frozenset(q) for q in combinations(self.Replicas, self.quorum))

    @property
    def FastQuorums(self) -> tuple[frozenset[str], ...]:
        return tuple(frozenset(q) for q in combinations(self.Replicas, self.fast_quorum))

    @assume
    def PaxosAssume(self):
        """Quorums are majorities that intersect; 0 is a ballot and fast ballots are ballots."""
        return self.replicas // 2 < self.quorum <= self.replicas and set(self.FastBallots) <= set(
            self.Ballots
        )

    @assume
    def FastAssume(self):
        """Fast quorums intersect, hold 3/4 of the replicas, and meet any two and a quorum."""
        fast = self.FastQuorums
        return all(
            (3 * self.replicas) // 4 <= len(f) and all(f & g for g in fast) for f in fast
        ) and all(q & r & f for q in self.Quorums for r in fast for f in fast)

    def permute(self, s, p: Permutation):
        def message(m):
            if "acceptor" in m:
                m = m.replace(acceptor=p(m.acceptor))
            if "value" in m:
                m = m.replace(value=p(m.value))
            if "maxValue" in m:
                m = m.replace(maxValue=p(m.maxValue))
            return m

        return s.replace(
            messages=frozenset(message(m) for m in s.messages),
            decision=p(s.decision),
            maxBallot=p.keys(s.maxBallot),
            maxVBallot=p.keys(s.maxVBallot),
            maxValue=p.keys(s.maxValue, p),
            cValue=p(s.cValue),
        )

    def init(self):
        return Record(
            messages=frozenset(),
            decision=None,
            maxBallot={r: 0 for r in self.Replicas},
            maxVBallot={r: 0 for r in self.Replicas},
            maxValue={r: None for r in self.Replicas},
            cValue=None,
        )

    def p2aMessages(self, s):
        return {m for m in s.messages if m.type == "P2a"}

    def p2bMessages(self, s):
        return {m for m in s.messages if m.type == "P2b"}

    def IsMajorityValue(self, M, v):
        return len(M) // 2 < len({m for m in M if m.value == v})

    def votes(self, s, b, q):
        """M == {m \\in p2bMessages : m.ballot = b /\\ m.acceptor \\in q}."""
        return {m for m in self.p2bMessages(s) if m.ballot == b and m.acceptor in q}

    def voted(self, M, q):
        """\\A a \\in q : \\E m \\in M : m.acceptor = a."""
        return all(any(m.acceptor == a for m in M) for a in q)

    @action(f="FastBallots")
    def FastAny(self, s, f):
        """The coordinator starts fast round f: a P2a "any" message."""
        return s.replace(messages=s.messages | {Record(type="P2a", ballot=f, value=ANY)})

    @action(a="Replicas", m="p2aMessages", v="Values")
    def FastPropose(self, s, a, m, v):
        """Acceptor a answers P2a "any" message m with its own proposal v."""
        if m.value != ANY or not s.maxBallot[a] <= m.ballot:
            return None
        if not (s.maxValue[a] is None or s.maxValue[a] == v):
            return None
        if any(n.ballot == m.ballot and n.acceptor == a for n in self.p2bMessages(s)):
            return None
        return s.replace(
            maxBallot=s.maxBallot.replace(**{a: m.ballot}),
            maxVBallot=s.maxVBallot.replace(**{a: m.ballot}),
            maxValue=s.maxValue.replace(**{a: v}),
            messages=s.messages | {Record(type="P2b", ballot=m.ballot, acceptor=a, value=v)},
        )

    @action(b="FastBallots", q="FastQuorums")
    def FastDecide(self, s, b, q):
        """A fast quorum proposed one value in fast round b: it is chosen."""
        M = self.votes(s, b, q)
        V = {m.value for m in M}
        if not self.voted(M, q) or len(V) != 1:
            return None
        return [s.replace(decision=m.value) for m in M]

    @action(b="ClassicBallots", f="FastBallots", q="FastQuorums", v="Values")
    def ClassicAccept(self, s, b, f, q, v):
        """After a collision in fast round f, the coordinator picks v for classic round b."""
        if not f < b or not (s.cValue is None or s.cValue == v):
            return None
        if any(m.ballot == b for m in self.p2aMessages(s)):
            return None
        M = self.votes(s, f, q)
        V = {m.value for m in M}
        if not self.voted(M, q) or len(V) <= 1:  # 1 < Cardinality(V): a collision
            return None
        if any(self.IsMajorityValue(M, w) for w in V):
            if not self.IsMajorityValue(M, v):
                return None
        elif v not in V:
            return None
        return s.replace(
            cValue=v, messages=s.messages | {Record(type="P2a", ballot=b, value=v)}
        )

    @action(a="Replicas", m="p2aMessages")
    def ClassicAccepted(self, s, a, m):
        """PaxosAccepted: acceptor a accepts the value of P2a message m."""
        if m.value not in self.Values or not s.maxBallot[a] <= m.ballot:
            return None
        return s.replace(
            maxBallot=s.maxBallot.replace(**{a: m.ballot}),
            maxVBallot=s.maxVBallot.replace(**{a: m.ballot}),
            maxValue=s.maxValue.replace(**{a: m.value}),
            messages=s.messages
            | {Record(type="P2b", ballot=m.ballot, acceptor=a, value=m.value)},
        )

    @action(b="ClassicBallots", q="Quorums")
    def ClassicDecide(self, s, b, q):
        """A quorum accepted classic ballot b: its value is chosen."""
        M = self.votes(s, b, q)
        if not self.voted(M, q):
            return None
        return [s.replace(decision=m.value) for m in M]

    def is_message(self, m):
        ballots, values = set(self.Ballots), set(self.Values)
        if m.type == "P1a":
            return set(m) == {"type", "ballot"} and m.ballot in ballots - {0}
        if m.type == "P1b":
            return (
                set(m) == {"type", "ballot", "acceptor", "maxVBallot", "maxValue"}
                and m.ballot in ballots
                and m.acceptor in self.Replicas
                and m.maxVBallot in ballots
                and (m.maxValue in values or m.maxValue is None)
            )
        if m.type == "P2a":
            return (
                set(m) == {"type", "ballot", "value"}
                and m.ballot in ballots
                and (m.value in values or m.value == ANY)
            )
        if m.type == "P2b":
            return (
                set(m) == {"type", "ballot", "acceptor", "value"}
                and m.ballot in ballots
                and m.acceptor in self.Replicas
                and m.value in values
            )
        return False

    @invariant
    def FastTypeOK(self, s):
        ballots, values, replicas = set(self.Ballots), set(self.Values), set(self.Replicas)
        return (
            all(self.is_message(m) for m in s.messages)
            and (s.decision in values or s.decision is None)
            and set(s.maxBallot) == replicas
            and all(b in ballots for b in s.maxBallot.values())
            and set(s.maxVBallot) == replicas
            and all(b in ballots for b in s.maxVBallot.values())
            and set(s.maxValue) == replicas
            and all(v in values or v is None for v in s.maxValue.values())
            and (s.cValue in values or s.cValue is None)
        )

    @invariant
    def FastNontriviality(self, s):
        """Only proposed values can be learnt."""
        return s.decision is None or any(
            m.value == s.decision and m.ballot in self.FastBallots for m in self.p2bMessages(s)
        )

    @step_property
    def PaxosConsistency(self, s, t):
        """[][decision = none]_<<decision>>: a decision, once made, never changes."""
        return t.decision == s.decision or s.decision is None
