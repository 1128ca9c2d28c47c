"""KIP-996: Pre-Vote (the KIP on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

Without it, a voter cut off from the quorum times out again and again, bumping its epoch each
time; when it rejoins, its Vote request carries the highest epoch, every voter it reaches
abandons the leader it was happily following, and the quorum goes through an election it did
not need: the "disruptive server" of the Raft literature.

With pre-vote, a voter whose fetch timer expired first becomes *prospective*: it asks for
pre-votes for its would-be epoch without bumping its own. A voter refuses when it has heard
from a leader within its fetch timeout, or when the candidate's log is behind its own; the
pre-vote changes no voter's state. Only with a majority of pre-votes does the prospective
voter become a candidate and bump its epoch. `fixed=False` goes straight to candidate.

Liveness (`leader_elected`): under weak fairness of the timers, the election RPCs and
healing, a leader that a majority follows leads the quorum again and again, unless elections
used up the epochs the model allows (`max_epoch`): a candidate may time out before it asks
for votes, and only randomised timers, which fairness cannot express, stop that from
repeating (see docs/light-specs.md).
"""

from __future__ import annotations

from checker import State, action, always_eventually, constant, invariant, on, put, update
from invariants import quorum
from specs.light.raft import LEADER, PROSPECTIVE, Raft


class Kip996(Raft):
    """KIP-996: pre-vote keeps a voter that was cut off from disrupting the quorum."""

    fixed = constant(True, "KIP-996: prospective voters ask for pre-votes before an election")

    @action(n="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {n}")
    def start_election(self, s: State, n: int) -> State | None:
        """n's election timer expires without a live leader. With pre-vote it becomes (again)
        prospective, in the same epoch; without, a candidate in the next epoch."""
        if not self.fixed:
            return super().start_election(s, n)
        if s.role[n] == LEADER or s.heard[n]:
            return None
        return s.replace(
            role=put(s.role, n, PROSPECTIVE),
            leader_id=put(s.leader_id, n, None),
            votes=put(s.votes, n, frozenset({n})),
        )

    @action(c="voter_ids", v="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {c}", calls="voter {v}", message="PreVote")
    def request_pre_vote(self, s: State, c: int, v: int) -> State | None:
        """Prospective c asks v whether it would vote for it in epoch+1. v grants only if it
        has not heard from a leader within its fetch timeout and c's log is not behind; v's
        own state does not change. With a majority, c becomes a candidate."""
        if s.role[c] != PROSPECTIVE or c == v or v in s.votes[c] or not self.connected(s, c, v):
            return None
        if s.epoch[v] > s.epoch[c]:  # c learns of a newer epoch
            return self.become_follower(s, c, s.epoch[v], None)
        if s.heard[v] or s.role[v] == LEADER or not self.log_up_to_date(s, c, v):
            return None  # refused: nothing changes
        s = update(s, "votes", c, lambda votes: votes | {v})
        if len(s.votes[c]) < self.majority or s.epoch[c] >= self.max_epoch:
            return s
        return self.become_candidate(s, c)

    @always_eventually
    def leader_elected(self, s: State) -> bool:
        """A leader that a majority follows leads the quorum, again and again (unless every
        voter reached max_epoch with no leader: the model allows no further election)."""
        if any(self.leader_followed_by_majority(s, n) for n in self.voter_ids):
            return True
        out_of_epochs = all(epoch >= self.max_epoch for epoch in s.epoch)
        return out_of_epochs and LEADER not in s.role

    election_safety = invariant(quorum.election_safety)
    log_matching = invariant(quorum.log_matching)
    leader_completeness = invariant(quorum.leader_completeness)
    no_epoch_bump_while_cut_off = invariant(quorum.no_epoch_bump_while_cut_off)
    leader_not_disrupted = invariant(quorum.leader_not_disrupted)
