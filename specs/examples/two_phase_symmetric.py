"""TwoPhase (specs/examples/two_phase.py) with symmetry over its resource managers, which are
ids 0..n-1 or, with `-D names=true`, TLA+'s model values: the strings "r1".."rn" (TLC's
`RM <- {r1, r2, r3}` and `SYMMETRY Permutations(RM)`).

With ids, rmState is a tuple indexed by id, which `permute` reorders (`p.indexed`); with
names, a map from name to state (`[r \\in RM |-> "working"]`), which `permute` re-keys
(`p.keys`). Both are the same model, with the same state counts; the benchmark
(`scripts/bench.py`, the symmetry table) compares their speed.
"""

from checker import Record, constant, invariant
from checker.symmetry import Permutation
from specs.examples.two_phase import ABORT, COMMIT, TwoPhase, prepared

STATES = frozenset({"working", "prepared", "committed", "aborted"})


class TwoPhaseSymmetric(TwoPhase):
    """TwoPhase with SYMMETRY over its resource managers, ids or model values: its actions,
    with the states and invariants written for either."""

    names = constant(False, "the resource managers are model values r1..rn, not ids 0..n-1")

    symmetry = ("RM",)

    @property
    def RM(self) -> tuple[int | str, ...]:
        if self.names:
            return tuple(f"r{i}" for i in range(1, self.rm + 1))
        return tuple(range(self.rm))

    def permute(self, s, p: Permutation):
        msgs = frozenset(prepared(p(m.rm)) if m.type == "Prepared" else m for m in s.msgs)
        return s.replace(
            rmState=p.keys(s.rmState) if self.names else p.indexed(s.rmState),
            tmPrepared=p.set(s.tmPrepared),
            msgs=msgs,
        )

    def init(self):
        working = Record({r: "working" for r in self.RM}) if self.names else ("working",) * self.rm
        return Record(rmState=working, tmState="init", tmPrepared=frozenset(), msgs=frozenset())

    def rm_states(self, s) -> tuple[str, ...]:
        return tuple(s.rmState.values()) if self.names else s.rmState

    @invariant
    def TPTypeOK(self, s):
        return (
            all(x in STATES for x in self.rm_states(s))
            and s.tmState in ("init", "done")
            and s.tmPrepared <= set(self.RM)
            and all(m in (COMMIT, ABORT) or m.type == "Prepared" for m in s.msgs)
        )

    @invariant
    def TCConsistent(self, s):
        states = self.rm_states(s)
        return not ("aborted" in states and "committed" in states)
