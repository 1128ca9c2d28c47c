"""KIP-841: fenced replicas should not be allowed to join the ISR in KRaft (the KIP on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

The KIP's two invariants: a fenced or in-controlled-shutdown replica is not eligible to be in
the ISR, and is not eligible to become leader. The controller rejects an AlterPartition whose
new ISR holds an ineligible replica with INELIGIBLE_REPLICA, and never elects one; the leader
proposes only active replicas (from its metadata cache) and reverts to the last committed ISR
when rejected. With `fixed=False` the controller trusts the leader, as before the KIP.
"""

from __future__ import annotations

from checker import Record, State, constant, invariant
from invariants import replication
from specs.light.replication import Replication, switched_by_fix


class Kip841(Replication):
    """KIP-841: fenced and shutting-down replicas are kept out of the ISR and leadership."""

    fixed = constant(True, "KIP-841: the controller and leader check replicas are active")
    max_controlled_shutdowns = constant(1, "fault bound: controlled shutdowns (then clean stop)")
    max_unclean_shutdowns = constant(1, "fault bound: crashes that keep the whole log")

    kip841 = switched_by_fix()

    def ineligible(self, s: State, b: int) -> bool:
        """Fenced, or in controlled shutdown (the state KIP-841 persists)."""
        return b in s.fenced or b in s.shutting_down

    def leader_may_propose(self, s: State, f: int, replica: Record) -> bool:
        # The leader proposes only active replicas, as its metadata cache knows them.
        if self.kip841 and self.ineligible(s, f):
            return False
        return super().leader_may_propose(s, f, replica)

    def alter_partition_error(self, s: State, request: Record) -> str | None:
        error = super().alter_partition_error(s, request)
        if error is None and self.kip841 and any(self.ineligible(s, b) for b in request.isr):
            return "INELIGIBLE_REPLICA"
        return error

    def electable(self, s: State, b: int) -> bool:
        # KRaft never elected fenced brokers; KIP-841 also excludes shutting-down ones.
        if self.kip841 and b in s.shutting_down:
            return False
        return super().electable(s, b)

    isr_members_eligible = invariant(replication.isr_members_eligible)
    leader_is_eligible = invariant(replication.leader_is_eligible)
    leader_in_isr = invariant(replication.leader_in_isr)
