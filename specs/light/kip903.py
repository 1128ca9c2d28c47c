"""KIP-903: replicas with a stale broker epoch should not be allowed to join the ISR (the KIP
on the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA; the bug, KAFKA-14139, on
issues.apache.org/jira).

Starting point of KAFKA-14139: broker 0 leads and is the only ISR member, holding one
committed record; broker 1 is an empty follower. The follower sends its broker epoch in Fetch;
the leader keeps it in the follower's ReplicaState, proposes the follower only when that epoch
matches its metadata cache, and sends the epochs in AlterPartition; the controller rejects a
new ISR whose epochs are not the latest with INELIGIBLE_REPLICA. With `fixed=False` the epochs
are neither checked by the leader nor by the controller, as before the KIP (KIP-841 stays).

The KIP's exception is kept: the last ISR member stays in the ISR when it is fenced.
"""

from __future__ import annotations

from checker import Record, State, constant, invariant, reachable
from invariants import replication
from specs.light.kip841 import Kip841
from specs.light.replication import switched_by_fix


class Kip903(Kip841):
    """KIP-903: broker epochs keep stale replicas out of the ISR."""

    fixed = constant(True, "KIP-903: broker epochs in Fetch and AlterPartition, checked")
    kip841 = True  # KIP-903 came after KIP-841
    max_controlled_shutdowns = constant(0, "fault bound: controlled shutdowns (then clean stop)")
    max_unclean_shutdowns = constant(1, "fault bound: crashes that keep the whole log")
    max_disk_replacements = constant(1, "fault bound: crashes with the disk replaced (empty log)")

    kip903 = switched_by_fix()

    def leader_may_propose(self, s: State, f: int, replica: Record) -> bool:
        # Propose f only once the epoch of its Fetch matches the metadata cache.
        if self.kip903 and replica.broker_epoch != s.broker_epoch[f]:
            return False
        return super().leader_may_propose(s, f, replica)

    def alter_partition_error(self, s: State, request: Record) -> str | None:
        error = super().alter_partition_error(s, request)
        stale = any(epoch != s.broker_epoch[b] for b, epoch in request.isr.items())
        if error is None and self.kip903 and stale:
            return "INELIGIBLE_REPLICA"
        return error

    @reachable(switch="max_disk_replacements")
    def replica_back_with_an_empty_disk(self, s: State) -> bool:
        """A broker that lost its disk runs again, registered, with an empty log."""
        return s.faults.disk_replacements > 0 and any(
            not s.log[b] and s.local_epoch[b] == s.broker_epoch[b] > 1 for b in self.broker_ids
        )

    no_stale_epoch_in_isr = invariant(replication.no_stale_epoch_in_isr)
    isr_members_hold_committed_data = invariant(replication.isr_members_hold_committed_data)
    leader_in_isr = invariant(replication.leader_in_isr)
