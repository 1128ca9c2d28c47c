"""Lamport's TwoPhase.tla (TLA+ Examples), translated state for state.

Variables rmState, tmState, tmPrepared and msgs (a set of messages); the actions and the
invariants TPTypeOK and TCConsistent as in the TLA+ module. The constant `rm` is the number of
resource managers (RM = {r1, ..., rm}); the distinct-state counts equal TLC's.
"""

from checker import Record, Spec, action, constant, invariant, put

COMMIT = Record(type="Commit")
ABORT = Record(type="Abort")


def prepared(r: int) -> Record:
    return Record(type="Prepared", rm=r)


class TwoPhase(Spec):
    """TwoPhase: the transaction manager and resource managers of two-phase commit."""

    rm = constant(3, "resource managers")

    @property
    def RM(self) -> range:  # named as in the TLA+ module
        return range(self.rm)

    def init(self):
        return Record(
            rmState=("working",) * self.rm,
            tmState="init",
            tmPrepared=frozenset(),
            msgs=frozenset(),
        )

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
        states = {"working", "prepared", "committed", "aborted"}
        return (
            all(x in states for x in s.rmState)
            and s.tmState in ("init", "done")
            and s.tmPrepared <= set(self.RM)
            and all(m in (COMMIT, ABORT) or m.type == "Prepared" for m in s.msgs)
        )

    @invariant
    def TCConsistent(self, s):
        return not ("aborted" in s.rmState and "committed" in s.rmState)
