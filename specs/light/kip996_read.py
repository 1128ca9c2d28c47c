"""KIP-996: linearizable reads on followers (ReadOffset; the KIP on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

A client reads the metadata from a follower instead of the leader. Without the KIP the
follower answers from its own state at once, which may be behind a write the leader has
already acknowledged: a stale read ("the game has not ended yet" after the final score was
acknowledged). With the KIP, the follower first asks the leader for its applied offset
(ReadOffset), and answers only once its own applied offset has reached it.

On top of the quorum model: each voter's applied offset (`applied`, the HWM it learned), and
reads in progress. History: each answered read's (returned offset, writes acknowledged before
the read started). The KIP's step is the rule `read_offset_first`; without it
(`-D read_offset_first=false`, or `fixed=False`) the follower answers at once from its local state.
"""

from __future__ import annotations

from checker import (
    Record,
    State,
    action,
    all_rules,
    constant,
    invariant,
    on,
    put,
    reachable,
    rule,
)
from checker.symmetry import Permutation
from invariants import quorum
from specs.light.raft import FOLLOWER, Raft


class Kip996Read(Raft):
    """KIP-996: followers serve linearizable reads after a ReadOffset round trip."""

    fixed = all_rules("KIP-996: ask the leader's applied offset (ReadOffset) first")
    read_offset_first = rule(
        "A follower serving a linearizable read first asks its leader for the leader's applied"
        " offset (ReadOffset) and answers once its own has reached it"
    )
    max_reads = constant(1, "client reads started (bounds the history)")
    max_isolations = constant(1, "fault bound: voters cut off from the quorum")

    def init(self) -> State:
        n = self.voters
        return Record(
            {
                **super().init(),
                "applied": (0,) * n,  # the applied offset (HWM) each voter knows
                "reads": (None,) * n,  # a read in progress at each voter
                "answered": frozenset(),  # history: (returned offset, acknowledged writes)
                "reads_started": 0,
            }
        )

    def permute(self, s: State, p: Permutation) -> State:
        s = super().permute(s, p)
        return s.replace(applied=p.indexed(s.applied), reads=p.indexed(s.reads))

    @action(f="voter_ids")
    @on("voter {f}", calls="voter {s.leader_id[f]}", message="Fetch")
    def fetch(self, s: State, f: int) -> State | None:
        """As in the quorum model; the response also carries the leader's applied offset."""
        s = super().fetch(s, f)
        if s is None:
            return None
        leader = s.leader_id[f]
        return s.replace(applied=put(s.applied, f, min(s.applied[leader], len(s.log[f]))))

    def advance_commit(self, s: State, leader: int) -> State:
        s = super().advance_commit(s, leader)
        if s.epoch[leader] == s.commit_epoch and len(s.committed) > s.applied[leader]:
            s = s.replace(applied=put(s.applied, leader, len(s.committed)))
        return s

    @action(n="voter_ids")
    @on("voter {n}")
    def start_read(self, s: State, n: int) -> State | None:
        """A client asks follower n to read. It notes how many writes were acknowledged."""
        if s.role[n] != FOLLOWER or s.reads[n] is not None or s.reads_started >= self.max_reads:
            return None
        read = Record(target=None, acknowledged=len(s.committed))
        return s.replace(reads=put(s.reads, n, read), reads_started=s.reads_started + 1)

    @action(n="voter_ids")
    @on("voter {n}", calls="voter {s.leader_id[n]}", message="ReadOffset")
    def read_offset(self, s: State, n: int) -> State | None:
        """The follower asks its leader for the leader's applied offset."""
        read = s.reads[n]
        if not self.read_offset_first or read is None or read.target is not None:
            return None
        if not self.reaches_its_leader(s, n):
            return None
        target = s.applied[s.leader_id[n]]
        return s.replace(reads=put(s.reads, n, read.replace(target=target)))

    @action(n="voter_ids")
    @on("voter {n}")
    def answer_read(self, s: State, n: int) -> State | None:
        """The follower answers from its state, once it has applied up to the target (at once
        without the KIP)."""
        read = s.reads[n]
        if read is None:
            return None
        if self.read_offset_first and (read.target is None or s.applied[n] < read.target):
            return None
        return s.replace(
            reads=put(s.reads, n, None),
            answered=s.answered | {(s.applied[n], read.acknowledged)},
        )

    @reachable(switch="max_reads")
    def read_answered(self, s: State) -> bool:
        """A follower answered a client's read."""
        return bool(s.answered)

    reads_are_linearizable = invariant(quorum.reads_are_linearizable)
    election_safety = invariant(quorum.election_safety)
    leader_completeness = invariant(quorum.leader_completeness)
