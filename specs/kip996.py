"""KIP-996: Pre-Vote, as the layer on specs/kraft_quorum.py (Vanlightly's TLA+ model of KRaft
with pre-vote and reconfiguration, translated state for state from
github.com/Vanlightly/kafka-tlaplus: kraft/kip_996/kraft_kip_996.tla). The KIP is on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA.

The model is KRaft with pre-vote; the KIP's change is the step a voter takes when its fetch
or election timer expires: the rule `pre_vote`. With it (the model as it is), the voter becomes
*prospective* in its own epoch and asks the other members for pre-votes: a voter grants one
only if it is not a leader and, as a follower, has not fetched from its leader in this epoch,
and the asker's log is not behind; granting changes nothing. Only with a majority does the
voter become a candidate and bump its epoch (ConcludePreVote).

`-D pre_vote=false` (or `fixed=false`, every rule of the KIP off) is the smallest change that
takes pre-vote out: the timeout makes the voter a
candidate at once, in the next epoch, asking for votes (the epoch bound moves from
ConcludePreVote to the timeout). A follower whose timer fires for no reason (a disruptive
election trigger) then raises its epoch while its leader still works: the vote requests
carry that epoch, and every voter they reach leaves the leader it followed: the "disruptive
server" problem pre-vote fixes (`working_leader_not_disrupted`).
"""

from __future__ import annotations

from checker import Record, State, all_rules, invariant, rule
from invariants import kraft_quorum as props
from specs.kraft_quorum import (
    CANDIDATE,
    NET,
    KRaftQuorum,
    apply_state,
    reset_fetch_state_if_follower,
)


class Kip996(KRaftQuorum):
    """KIP-996: pre-vote keeps a voter whose timer fired from deposing a working leader."""

    fixed = all_rules("KIP-996: a timed-out voter asks for pre-votes before an election")
    pre_vote = rule(
        "A voter whose timer expires becomes prospective and asks for pre-votes in its own"
        " epoch; only with a majority does it become a candidate in the next"
    )

    def start_election(self, s: State, srv: int, disruptive: bool) -> State | None:
        """Without pre-vote: straight to candidate in the next epoch, with vote requests."""
        if self.pre_vote:
            return super().start_election(s, srv, disruptive)
        if not self.within_epoch_limit(s, srv):
            return None
        epoch = s.current_epoch[srv] + 1
        candidate = Record(
            state=CANDIDATE, epoch=epoch, leader=None, votes_recv=frozenset({srv}), voted_for=srv
        )
        return s.replace(
            **apply_state(s, srv, candidate),
            **reset_fetch_state_if_follower(s, srv),
            **NET.send_all(s, self.vote_requests(s, srv, epoch, pre_vote=False)),
            aux_ctrs=self.aux_inc_timeout_ctrs(s, disruptive),
        )

    @invariant
    def working_leader_not_disrupted(self, s: State) -> bool:
        """No server is in a later epoch than a working leader.

        A working leader: a majority follows it and it reaches a majority. Holds with the
        defaults; after a restart, a follower that has not fetched yet may grant a pre-vote,
        as the KIP says, and an election may then legitimately run."""
        for i in s.server_ids:
            if s.state[i] != "Leader" or self.should_resign(s, i):
                continue
            members = s.config[i].members
            followers = sum(
                1
                for j in s.server_ids
                if props.is_voter(s, j) and s.leader[j] == i and i in s.config[j].members
            )
            if followers < len(members) // 2 + 1:
                continue
            if any(s.current_epoch[j] > s.current_epoch[i] for j in s.server_ids):
                return False
        return True
