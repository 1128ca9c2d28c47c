"""TwoPhase (specs/examples/two_phase.py) with symmetry over its resource managers, which are
ids 0..n-1 or, with `-D names=true`, TLA+'s model values: the strings "r1".."rn" (TLC's
`RM <- {r1, r2, r3}` and `SYMMETRY Permutations(RM)`).

With ids, rmState is a tuple indexed by id, which `permute` reorders (`p.indexed`); with
names, a map from name to state (`[r \\in RM |-> "working"]`), which `permute` re-keys
(`p.keys`). Both are the same model, with the same state counts; the benchmark
(`scripts/bench.py`, the symmetry table) compares their speed.
"""

from checker import Record, Spec, action, constant, invariant, put
from checker.symmetry import Permutation

COMMIT = Record(type="Commit")
ABORT = Record(type="Abort")
STATES = frozenset({"working", "prepared", "committed", "aborted"})


def prepared(r: int | str) -> Record:
    return Record(type="Prepared", rm=r)


class TwoPhaseSymmetric(Spec):
    """TwoPhase with SYMMETRY over its resource managers, ids or model values."""

    rm = constant(3, "resource managers")
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

    @action(r="RM")
    def TMRcvPrepared(self, s, r):
        if s.tmState != "init" or prepared(r) not in s.msgs:
            return None
        return s.replace(tmPrepared=s.tmPrepared | {r})

    @action
    def TMCommit(self, s):
        if s.tmState != "init" or len(s.tmPrepared) != self.rm:
            return None
        return s.replace(tmState="done", msgs=s.msgs | {COMMIT})

    @action
    def TMAbort(self, s):
        if s.tmState != "init":
            return None
        return s.replace(tmState="done", msgs=s.msgs | {ABORT})

    @action(r="RM")
    def RMPrepare(self, s, r):
        if s.rmState[r] != "working":
            return None
        return s.replace(rmState=put(s.rmState, r, "prepared"), msgs=s.msgs | {prepared(r)})

    @action(r="RM")
    def RMChooseToAbort(self, s, r):
        if s.rmState[r] != "working":
            return None
        return s.replace(rmState=put(s.rmState, r, "aborted"))

    @action(r="RM")
    def RMRcvCommitMsg(self, s, r):
        if COMMIT not in s.msgs:
            return None
        return s.replace(rmState=put(s.rmState, r, "committed"))

    @action(r="RM")
    def RMRcvAbortMsg(self, s, r):
        if ABORT not in s.msgs:
            return None
        return s.replace(rmState=put(s.rmState, r, "aborted"))

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
