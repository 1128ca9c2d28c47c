"""Lamport's bakery algorithm with its inductive invariant (Leslie Lamport, Stephan Merz).

Translated from github.com/tlaplus/Examples, specifications/Bakery-Boulangerie/Bakery.tla (the
TLA+ translation of its PlusCal algorithm) as checked by
specifications/Bakery-Boulangerie/MCBakery.tla with MCBakery.cfg: N = 2, Nat overridden by
0..MaxNat with MaxNat = 2, SPECIFICATION ISpec (`Inv /\\ [][Next]_vars`: every state that
satisfies the inductive invariant Inv is initial), INVARIANTS MutualExclusion TypeOK Inv,
CHECK_DEADLOCK FALSE. Checking it shows that Inv is inductive: every successor of a state
satisfying Inv satisfies it.

Procs = 1..N; each variable is a function of the process, a map keyed by it. Each PlusCal
label is an action of process `p` (TLA+'s `self`); a disjunction or an `\\E` inside a label is
the list of successors it returns.
"""

from itertools import product

from checker import Spec, action, assume, constant, every, invariant, put

LABELS = ("ncs", "e1", "e2", "e3", "e4", "w1", "w2", "cs", "exit")


def functions(domain, values):
    """[domain -> values]: every map from domain to values."""
    domain, values = tuple(domain), tuple(values)
    return [dict(zip(domain, image)) for image in product(values, repeat=len(domain))]


def subsets(values):
    """SUBSET values."""
    values = tuple(values)
    return [
        frozenset(v for v, keep in zip(values, mask) if keep)
        for mask in product((False, True), repeat=len(values))
    ]


class Bakery(Spec):
    """The bakery algorithm: every state of its inductive invariant, checked to be inductive."""

    N = constant(2, "processes (MCBakery.cfg: 2)", min=1)
    MaxNat = constant(2, "Nat is 0..MaxNat (MCBakery.cfg: 2)", min=0)

    @assume
    def N_in_Nat(self):
        """ASSUME N \\in Nat, with Nat overridden by 0..MaxNat."""
        return self.N in self.Nat

    @property
    def Procs(self) -> range:
        return range(1, self.N + 1)

    @property
    def Nat(self) -> range:
        return range(self.MaxNat + 1)

    def init(self):
        """ISpec's initial states: every state where Inv (TypeOK /\\ IInv) holds (the domains
        are TypeOK's)."""
        procs = self.Procs
        return every(
            num=functions(procs, self.Nat),
            flag=functions(procs, (False, True)),
            unchecked=functions(procs, subsets(procs)),
            max=functions(procs, self.Nat),
            nxt=functions(procs, procs),
            pc=functions(procs, LABELS),
            where=self.IInv,
        )

    @action(p="Procs")
    def ncs(self, s, p):
        if s.pc[p] != "ncs":
            return None
        return s.replace(pc=put(s.pc, p, "e1"))

    @action(p="Procs")
    def e1(self, s, p):
        if s.pc[p] != "e1":
            return None
        return [
            s.replace(flag=put(s.flag, p, not s.flag[p])),
            s.replace(
                flag=put(s.flag, p, True),
                unchecked=put(s.unchecked, p, frozenset(self.Procs) - {p}),
                max=put(s.max, p, 0),
                pc=put(s.pc, p, "e2"),
            ),
        ]

    @action(p="Procs")
    def e2(self, s, p):
        if s.pc[p] != "e2":
            return None
        if not s.unchecked[p]:
            return s.replace(pc=put(s.pc, p, "e3"))
        return [
            s.replace(
                unchecked=put(s.unchecked, p, s.unchecked[p] - {i}),
                max=put(s.max, p, s.num[i]) if s.num[i] > s.max[p] else s.max,
            )
            for i in s.unchecked[p]
        ]

    @action(p="Procs")
    def e3(self, s, p):
        if s.pc[p] != "e3":
            return None
        same = [s.replace(num=put(s.num, p, k)) for k in self.Nat]
        higher = [
            s.replace(num=put(s.num, p, i), pc=put(s.pc, p, "e4"))
            for i in self.Nat
            if i > s.max[p]
        ]
        return same + higher

    @action(p="Procs")
    def e4(self, s, p):
        if s.pc[p] != "e4":
            return None
        return [
            s.replace(flag=put(s.flag, p, not s.flag[p])),
            s.replace(
                flag=put(s.flag, p, False),
                unchecked=put(s.unchecked, p, frozenset(self.Procs) - {p}),
                pc=put(s.pc, p, "w1"),
            ),
        ]

    @action(p="Procs")
    def w1(self, s, p):
        if s.pc[p] != "w1":
            return None
        if not s.unchecked[p]:
            return s.replace(pc=put(s.pc, p, "cs"))
        return [
            s.replace(nxt=put(s.nxt, p, i), pc=put(s.pc, p, "w2"))
            for i in s.unchecked[p]
            if not s.flag[i]
        ]

    @action(p="Procs")
    def w2(self, s, p):
        if s.pc[p] != "w2":
            return None
        n = s.nxt[p]
        # num[nxt] = 0 \/ <<num[self], self>> \prec <<num[nxt], nxt>>, \prec itself a
        # disjunction: TLC generates the successor once per true disjunct, as this list does
        disjuncts = [
            s.num[n] == 0,
            s.num[p] < s.num[n],
            s.num[p] == s.num[n] and p < n,
        ]
        succ = s.replace(unchecked=put(s.unchecked, p, s.unchecked[p] - {n}), pc=put(s.pc, p, "w1"))
        return [succ for true in disjuncts if true]

    @action(p="Procs")
    def cs(self, s, p):
        if s.pc[p] != "cs":
            return None
        return s.replace(pc=put(s.pc, p, "exit"))

    @action(p="Procs")
    def exit(self, s, p):
        if s.pc[p] != "exit":
            return None
        return [s.replace(num=put(s.num, p, k)) for k in self.Nat] + [
            s.replace(num=put(s.num, p, 0), pc=put(s.pc, p, "ncs"))
        ]

    @invariant
    def MutualExclusion(self, s):
        return not any(
            i != j and s.pc[i] == "cs" and s.pc[j] == "cs" for i in self.Procs for j in self.Procs
        )

    @invariant
    def TypeOK(self, s):
        procs, nat = set(self.Procs), set(self.Nat)
        return (
            set(s.num) == procs
            and all(v in nat for v in s.num.values())
            and all(isinstance(v, bool) for v in s.flag.values())
            and all(v <= procs for v in s.unchecked.values())
            and all(v in nat for v in s.max.values())
            and all(v in procs for v in s.nxt.values())
            and all(v in LABELS for v in s.pc.values())
        )

    def Before(self, s, i, j):
        if s.num[i] <= 0:
            return False
        pc = s.pc[j]
        if pc in ("ncs", "e1", "exit"):
            return True
        if pc == "e2":
            return i in s.unchecked[j] or s.max[j] >= s.num[i]
        if pc == "e3":
            return s.max[j] >= s.num[i]
        if pc in ("e4", "w1", "w2"):
            return (s.num[i], i) < (s.num[j], j) and (
                pc not in ("w1", "w2") or i in s.unchecked[j]
            )
        return False

    def IInv(self, s):
        for i in self.Procs:
            pc = s.pc[i]
            if pc in ("e4", "w1", "w2", "cs") and s.num[i] == 0:
                return False
            if pc in ("e2", "e3") and not s.flag[i]:
                return False
            if pc == "w2" and s.nxt[i] == i:
                return False
            if pc in ("w1", "w2") and i in s.unchecked[i]:
                return False
            if pc in ("w1", "w2") and not all(
                self.Before(s, i, j) for j in set(self.Procs) - s.unchecked[i] - {i}
            ):
                return False
            if pc == "w2":
                n = s.nxt[i]
                if (
                    (s.pc[n] == "e2" and i not in s.unchecked[n]) or s.pc[n] == "e3"
                ) and not s.max[n] >= s.num[i]:
                    return False
            if pc == "cs" and not all(self.Before(s, i, j) for j in self.Procs if j != i):
                return False
        return True

    @invariant
    def Inv(self, s):
        return self.TypeOK(s) and self.IInv(s)
