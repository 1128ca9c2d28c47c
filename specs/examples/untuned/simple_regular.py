"""Lamport's Teaching Concurrency algorithm over regular registers (Leslie Lamport).

Translated from github.com/tlaplus/Examples, specifications/TeachingConcurrency/SimpleRegular.tla
(the TLA+ translation of its PlusCal algorithm), checked with SimpleRegular.cfg: N = 8,
INVARIANTS PCorrect TypeOK Inv. Process i writes its register x[i] in two steps ({0, 1}, then
{1}: a regular register being written holds both values), then reads any value of its
predecessor's register into y[i]. When every process is done, the spec stutters
(`Terminating`), so no state is a deadlock.
"""

from checker import Record, Spec, action, assume, constant, invariant, put


class SimpleRegular(Spec):
    """N processes, each writing its regular register, then reading its predecessor's."""

    N = constant(8, "processes (SimpleRegular.cfg: 8)", min=1)

    @assume
    def NAssump(self):
        return self.N > 0

    @property
    def Procs(self) -> range:
        return range(self.N)

    def init(self):
        return Record(
            x={i: frozenset({0}) for i in self.Procs},
            y={i: 0 for i in self.Procs},
            pc={i: "a1" for i in self.Procs},
        )

    @action(p="Procs")
    def a1(self, s, p):
        if s.pc[p] != "a1":
            return None
        return s.replace(x=put(s.x, p, frozenset({0, 1})), pc=put(s.pc, p, "a2"))

    @action(p="Procs")
    def a2(self, s, p):
        if s.pc[p] != "a2":
            return None
        return s.replace(x=put(s.x, p, frozenset({1})), pc=put(s.pc, p, "b"))

    @action(p="Procs")
    def b(self, s, p):
        if s.pc[p] != "b":
            return None
        return [
            s.replace(y=put(s.y, p, v), pc=put(s.pc, p, "Done"))
            for v in sorted(s.x[(p - 1) % self.N])
        ]

    @action
    def Terminating(self, s):
        if not all(s.pc[i] == "Done" for i in self.Procs):
            return None
        return s

    @invariant
    def PCorrect(self, s):
        return not all(s.pc[i] == "Done" for i in self.Procs) or any(
            s.y[i] == 1 for i in self.Procs
        )

    @invariant
    def TypeOK(self, s):
        return (
            all(s.x[i] in ({0}, {1}, {0, 1}) for i in self.Procs)
            and all(s.y[i] in (0, 1) for i in self.Procs)
            and all(s.pc[i] in ("a1", "a2", "b", "Done") for i in self.Procs)
        )

    @invariant
    def Inv(self, s):
        return (
            self.TypeOK(s)
            and all(s.x[i] == {1} for i in self.Procs if s.pc[i] in ("b", "Done"))
            and (
                any(s.pc[i] != "Done" for i in self.Procs)
                or any(s.y[i] == 1 for i in self.Procs)
            )
        )
