"""KIP-966: Eligible Leader Replicas (ELR).

The layer on specs/kip903.py (Kafka 3.5 KRaft replication with KIP-841 and KIP-903), as
Vanlightly's kip-966 TLA+ model changes his v3.5 one (github.com/Vanlightly/kafka-tlaplus,
MIT licence: kafka_data_replication/kraft/kip-966/kafka_replication_kip_966.tla). The protocol
changes, each a rule that `-D NAME=false` switches off alone (`mc ablate` switches each off in
turn):

1. `hwm_needs_min_isr`: the HWM advances only while the leader's |ISR| >= MinISR
   (CanAdvanceHwm).
2. `isr_may_become_empty`: a fenced broker leaves the ISR even as its last member.
3. `elr`: replicas leaving the ISR while it is below MinISR join the ELR; the ELR is emptied
   once |ISR| >= MinISR (UpdateElr). ELR members removed from it (but still replicas) while
   the ISR is below MinISR are remembered in LastKnownELR.
4. `elect_from_elr`: with no ISR member, the controller elects an unfenced ELR member, which
   becomes the only ISR member.
5. `epoch_on_file`: a broker writes its broker epoch to a file on a clean shutdown and sends
   it when it registers; one that registers with none (0) is unclean: it leaves the ISR and
   the ELR.

The partition state's ELR fields and the KIP's invariants are there while any rule is on.
`fixed=False` (every rule off) is the v3.5 model with AvoidLastReplicaStanding = FALSE: the
last ISR member may crash losing its log, come back as the only ISR member and be elected,
and committed records are gone (the "last replica standing" problem the KIP solves).
"""

from __future__ import annotations

from checker import Record, State, all_rules, constant, invariant, reachable, rule
from invariants import kraft
from specs.kip903 import Kip903
from specs.kraft import NO_LEADER


class Kip966(Kip903):
    """KIP-966: Eligible Leader Replicas keep committed records on a MinISR quorum."""

    fixed = all_rules("KIP-966: ELR, HWM only with |ISR| >= MinISR, epoch on file")
    stale_epoch_ineligible = True  # KIP-966 came after KIP-903
    hwm_needs_min_isr = rule("The leader advances the HWM only while |ISR| >= MinISR")
    isr_may_become_empty = rule(
        "A fenced broker is removed from the ISR even as its last member: the ISR may be empty"
    )
    elr = rule(
        "Replicas leaving the ISR below MinISR join the ELR, emptied at MinISR; ELR members"
        " removed below MinISR are kept in LastKnownELR"
    )
    elect_from_elr = rule(
        "With no ISR member, the controller elects an unfenced ELR member, the only ISR member"
    )
    epoch_on_file = rule(
        "A clean shutdown writes the broker epoch to a file, sent on registration; a broker"
        " registering without it (unclean) leaves the ISR and the ELR"
    )
    min_isr = constant(2, "MinISR: min.insync.replicas", min=1)
    fence_broker_limit = constant(1, "FenceBrokerLimit: running brokers fenced", min=0)
    data_loss_shutdown_limit = constant(0, "DataLossShutdownLimit: log-losing crashes", min=0)

    @property
    def avoid_last_replica_standing(self) -> bool:
        return False  # the v3.5 guard is off: without the fix, the data loss is reachable

    def __init__(self, **constants) -> None:
        super().__init__(**constants)
        # The KIP's partition state (the ELR fields) and invariants: with any rule on.
        self.kip966 = any(self.rules.values())

    # The controller's partition state and PartitionChangeRecords carry the ELR (3).
    def partition_change_record(self, **fields) -> Record:
        if self.kip966:
            fields.setdefault("elr", frozenset())
            fields.setdefault("last_known_elr", frozenset())
        return super().partition_change_record(**fields)

    # 1. CanAdvanceHwm
    def safe_to_advance_hwm(self, b: int, isr: frozenset) -> bool:
        return not self.hwm_needs_min_isr or len(isr) >= self.min_isr

    # 2. RemoveBrokerFromISR
    def remove_broker_from_isr(self, isr: frozenset, b: int) -> frozenset:
        if not self.isr_may_become_empty:
            return super().remove_broker_from_isr(isr, b)
        return isr - {b}

    # 3. UpdateElr
    def update_elr_on_isr_or_replica_change(self, s: State, isr, replicas):
        if not self.kip966:
            return None
        if not self.elr:
            return frozenset()
        md = s.con_partition_metadata
        if len(isr) >= self.min_isr:
            return frozenset()
        return (md.elr & replicas) | ((md.isr & replicas) - isr)

    def apply_partition_change(self, s: State, **md) -> dict:
        if not self.kip966:
            return super().apply_partition_change(s, **md)
        old = s.con_partition_metadata
        if len(md["isr"]) >= self.min_isr:
            last_known_elr = frozenset()
        else:
            last_known_elr = old.last_known_elr | (md["replicas"] & (old.elr - md["elr"]))
        fields = dict(md, last_known_elr=last_known_elr)
        return {
            "con_partition_metadata": Record(fields),
            "con_metadata_log": s.con_metadata_log
            + (Record(dict(fields, type="PartitionChangeRecord")),),
        }

    # 4. MaybeUpdatePartitionOnBrokerChange, electing from the ELR. Only unfenced ISR members
    # lead: with rule 2 every ISR member is unfenced, without it a fenced last member stays.
    def maybe_update_partition_on_broker_change(self, s, new_isr, new_elr, new_unfenced):
        if not self.kip966:
            return super().maybe_update_partition_on_broker_change(
                s, new_isr, new_elr, new_unfenced
            )
        md = s.con_partition_metadata
        isr_candidates = new_isr & new_unfenced
        elr_candidates = sorted(new_elr & new_unfenced) if self.elect_from_elr else []
        no_leader_change = (
            md.leader == NO_LEADER and not isr_candidates and not elr_candidates
        ) or md.leader in isr_candidates
        if no_leader_change and new_isr == md.isr and new_elr == md.elr:
            return [{}]
        if no_leader_change:
            return [self.change(s, md.leader, new_isr, new_elr, md.leader_epoch)]
        if isr_candidates:
            return [
                self.change(s, c, new_isr, new_elr, md.leader_epoch + 1)
                for c in sorted(isr_candidates)
            ]
        if elr_candidates:
            return [
                self.change(s, c, new_isr | {c}, new_elr - {c}, md.leader_epoch + 1)
                for c in elr_candidates
            ]
        return [self.change(s, NO_LEADER, new_isr, new_elr, md.leader_epoch + 1)]

    # 5. The broker epoch on file
    def epoch_on_start(self, s: State, b: int) -> int:
        if not self.epoch_on_file:
            return super().epoch_on_start(s, b)
        return s.broker_state[b].broker_epoch

    def epoch_on_shutdown(self, s: State, b: int, clean: bool) -> int:
        if not self.epoch_on_file:
            return super().epoch_on_shutdown(s, b, clean)
        return s.broker_state[b].broker_epoch if clean else 0

    def registration_request(self, s: State, b: int, incarnation: int) -> Record:
        m = super().registration_request(s, b, incarnation)
        if not self.epoch_on_file:
            return m
        return Record(dict(m, broker_epoch=s.broker_state[b].broker_epoch))

    def on_registration(self, s: State, b: int, m: Record) -> list[dict]:
        if not self.epoch_on_file or m.broker_epoch != 0:
            return super().on_registration(s, b, m)
        # ProcessUncleanBroker: out of the ISR and the ELR, whatever MinISR.
        md = s.con_partition_metadata
        new_unfenced = s.con_unfenced | {b}
        return [
            {"con_unfenced": new_unfenced, **changes}
            for changes in self.maybe_update_partition_on_broker_change(
                s, md.isr - {b}, md.elr - {b}, new_unfenced
            )
        ]

    @property
    def last_isr_member_stays(self) -> bool:
        return not self.kip966

    def superset_min_isr(self) -> int:
        return self.min_isr if self.kip966 else 0

    @invariant
    def min_isr_recovery_quorum(self, s: State) -> bool:
        """MinIsrRecoveryQuorum: with ISR and ELR empty, LastKnownELR holds MinISR replicas."""
        return not self.kip966 or kraft.min_isr_recovery_quorum(s, self.min_isr)

    @invariant
    def valid_controller_isr_and_elr(self, s: State) -> bool:
        """ValidControllerIsrAndElr: ISR and ELR disjoint replicas; no ELR at MinISR."""
        return not self.kip966 or kraft.valid_controller_isr_and_elr(s, self.min_isr)

    @reachable(switch="elr")
    def elr_in_use(self, s: State) -> bool:
        """A replica is in the ELR (it left the ISR below MinISR)."""
        return bool(s.con_partition_metadata.get("elr"))
