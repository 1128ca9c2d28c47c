"""KIP-966: Eligible Leader Replicas (ELR).

Before the KIP, with min.insync.replicas = 2 the ISR may shrink to the leader alone and the
leader still advances the high watermark; if that last replica then loses unflushed records in
an unclean shutdown, it comes back as the only ISR member, is elected, and committed records
are gone ("last replica standing"). The KIP's rules (KIP-966 "Eligible Leader Replicas", on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA):

1. The HWM advances only while |ISR| >= MinISR.
2. Replicas leaving the ISR below MinISR join the ELR (as many as keep |ISR| + |ELR| at
   MinISR); the ELR is emptied once |ISR| >= MinISR.
3. A fenced broker leaves the ISR even as its last member.
4. A clean shutdown writes the broker epoch to a file; the restarted broker sends it as
   PreviousBrokerEpoch. A mismatch (unclean shutdown) removes the replica from the ISR and the
   ELR and records it in LastKnownELR.
5. With no electable ISR member, the controller elects an unfenced ELR member, which becomes
   the only ISR member.

`fixed=False` is the KRaft behaviour before the KIP (with KIP-841 and KIP-903).
Abstracted: unclean recovery (rule 6) and the "last known leader" fallback.

Liveness: with faults bounded, and brokers that restart or shut down eventually registering,
being unfenced and completing their shutdown (the shared model's fairness), the partition has
a running leader again and again (`has_leader`).
"""

from __future__ import annotations

from checker import Record, State, always_eventually, constant, invariant, reachable, without
from invariants import replication
from specs.light.kip903 import Kip903
from specs.light.replication import switched_by_fix


class Kip966(Kip903):
    """KIP-966: Eligible Leader Replicas keep committed records on a MinISR quorum."""

    fixed = constant(True, "KIP-966: ELR, HWM only with |ISR| >= MinISR, no last-member rule")
    kip903 = True  # KIP-966 came after KIP-903
    min_isr = constant(2, "min.insync.replicas")
    max_controlled_shutdowns = constant(1, "fault bound: controlled shutdowns (then clean stop)")
    max_unclean_shutdowns = constant(0, "fault bound: crashes that keep the whole log")
    max_unflushed_losses = constant(1, "fault bound: crashes losing unflushed records")
    max_disk_replacements = constant(0, "fault bound: crashes with the disk replaced (empty log)")

    kip966 = switched_by_fix()

    def view(self, s: State) -> Record:
        """States that differ only in LastKnownELR are one state: rule 4 records it, but no
        action, invariant or property reads it (rule 6, unclean recovery, is not modelled),
        so such states behave alike (TLC's VIEW; see docs/writing-specs.md)."""
        return without(s, "last_known_elr")

    def initial_isr(self) -> tuple[int, ...]:
        return tuple(self.broker_ids)  # every replica in sync, holding the committed record

    # Rule 1
    def hwm_may_advance(self, s: State) -> bool:
        if self.kip966 and len(s.isr) < self.min_isr:
            return False
        return super().hwm_may_advance(s)

    # Rules 2 and 3
    def remove_from_isr(self, s: State, b: int) -> State:
        if not self.kip966 or b not in s.isr:
            return super().remove_from_isr(s, b)
        isr, leader = without(s.isr, b), s.leader
        if leader == b:
            leader, isr = self.choose_leader(s, isr)
        return self.change_partition(s, leader=leader, isr=isr)

    def isr_changed(self, s: State, old_isr: Record) -> State:
        s = super().isr_changed(s, old_isr)
        if not self.kip966:
            return s
        elr = s.elr - set(s.isr)
        if len(s.isr) >= self.min_isr:
            elr = frozenset()
        else:
            for removed in sorted(set(old_isr) - set(s.isr)):
                if len(s.isr) + len(elr) < self.min_isr:
                    elr |= {removed}
        return s.replace(elr=elr)

    # Rule 5
    def choose_leader(self, s: State, isr: Record) -> tuple[int | None, Record]:
        leader, isr = super().choose_leader(s, isr)
        if leader is not None or not self.kip966:
            return leader, isr
        candidate = next((b for b in sorted(s.elr) if self.electable(s, b)), None)
        if candidate is None:
            return None, isr
        return candidate, Record({candidate: s.broker_epoch[candidate]})

    # Rule 4
    def registered(self, s: State, b: int, previous_epoch: int | None, last_epoch: int) -> State:
        s = super().registered(s, b, previous_epoch, last_epoch)
        if not self.kip966 or previous_epoch == last_epoch or b not in s.elr:
            return s
        return s.replace(
            elr=s.elr - {b},
            last_known_elr=s.last_known_elr | {b},
            partition_epoch=s.partition_epoch + 1,
        )

    @always_eventually
    def has_leader(self, s: State) -> bool:
        """The partition has a running leader, again and again: whenever it loses its
        leader, it eventually elects one."""
        return s.leader is not None and self.is_leader(s, s.leader)

    @reachable(switch="fixed")
    def elr_in_use(self, s: State) -> bool:
        """A replica is in the ELR (it left the ISR below MinISR)."""
        return bool(s.elr)

    @reachable(switch="max_unflushed_losses")
    def replica_lost_unflushed_records(self, s: State) -> bool:
        """A running replica holds fewer records than were committed: it lost unflushed ones."""
        return any(
            s.local_epoch[b] is not None and len(s.log[b]) < len(s.committed)
            for b in self.broker_ids
        )

    @invariant
    def elr_empty_while_isr_at_min_isr(self, s: State) -> bool:
        """The ELR is empty while |ISR| >= MinISR."""
        return replication.elr_empty_while_isr_at_least(s, self.min_isr)

    no_committed_record_lost = invariant(replication.no_committed_record_lost)
    isr_and_elr_hold_committed_records = invariant(replication.isr_and_elr_hold_committed_records)
    isr_and_elr_disjoint = invariant(replication.isr_and_elr_disjoint)
