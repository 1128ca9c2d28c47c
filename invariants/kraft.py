"""Predicates over the states of the KRaft replication family (specs/kraft.py and its KIP
layers): the safety properties of Vanlightly's TLA+ models (github.com/Vanlightly/kafka-tlaplus:
kafka_data_replication/kraft/v3.5/v3_5_properties.tla and
kafka_data_replication/kraft/kip-966/kip_966_properties.tla), translated one for one. Offsets
start at 1; `inv_true_hwm` is the highest HWM any leader reached (the true HWM); before KIP-966
there is no ELR (an absent `elr` reads as empty). Those that depend on MinISR take it as an
argument."""

from __future__ import annotations

FENCED, RUNNING, LEADER, NO_LEADER = "FENCED", "RUNNING", "Leader", "NoLeader"


def _elr(s) -> frozenset:
    return s.con_partition_metadata.get("elr") or frozenset()


def _log_values(s, b) -> set:
    return {e.value for e in s.partition_data[b].log}


def leader_completeness(s) -> bool:
    """LeaderCompletenessProperty: a running leader holds every committed record (its LEO
    reaches the true HWM) and every positively acknowledged value."""
    if s.inv_true_hwm <= 1:
        return True
    leader = s.con_partition_metadata.leader
    if leader == NO_LEADER or s.broker_state[leader].status != RUNNING:
        return True
    return s.partition_data[leader].leo >= s.inv_true_hwm and s.inv_pos_acked <= _log_values(
        s, leader
    )


def leader_candidate_completeness(s) -> bool:
    """LeaderCandidateCompletenessProperty: no running ISR (or ELR) member lacks committed
    records."""
    if s.inv_true_hwm <= 1:
        return True
    candidates = s.con_partition_metadata.isr | _elr(s)
    return not any(
        s.partition_data[b].leo < s.inv_true_hwm and s.broker_state[b].status == RUNNING
        for b in candidates
    )


def is_non_stale_leader(s, b) -> bool:
    return (
        s.partition_status[b] == LEADER
        and s.partition_metadata[b].leader_epoch == s.con_partition_metadata.leader_epoch
    )


def replication_quorum_superset(s, min_isr: int) -> bool:
    """ReplicationQuorumSupersetProperty: a non-stale leader's maximal ISR is its ISR unless
    an AlterPartition is pending, and covers the controller's ISR (and ELR) while the
    leader's ISR is at least `min_isr` (v3.5: pass 0, always)."""
    for b in s.partition_status:
        if not is_non_stale_leader(s, b):
            continue
        md = s.partition_metadata[b]
        pending = s.partition_pending_ap[b].epoch > md.partition_epoch
        if not pending and md.maximal_isr != md.isr:
            return False
        if len(md.isr) >= min_isr and not (
            s.con_partition_metadata.isr | _elr(s)
        ) <= md.maximal_isr:
            return False
    return True


def log_matching(s, values: int) -> bool:
    """LogMatchingProperty: below both replicas' HWMs, their logs hold the same values."""
    data = s.partition_data
    for offset in range(1, values + 1):
        seen = {
            data[b].log[offset - 1].value
            for b in data
            if data[b].leo > offset and data[b].hwm > offset
        }
        if len(seen) > 1:
            return False
    return True


def metadata_log_matching(s) -> bool:
    """MetadataLogMatchingProperty: each broker's metadata log is a prefix of the
    controller's."""
    log = s.con_metadata_log
    return all(
        len(m) <= len(log) and m == log[: len(m)] for m in s.broker_metadata_log.values()
    )


def consistent_read(s) -> bool:
    """ConsistentReadProperty: what consumers read (below the true HWM) is still the prefix
    of every non-stale leader's log."""
    consumed = s.inv_consumed
    for b in s.partition_status:
        if is_non_stale_leader(s, b):
            log = s.partition_data[b].log
            if len(log) < len(consumed) or log[: len(consumed)] != consumed:
                return False
    return True


def no_committed_record_lost_globally(s) -> bool:
    """NoCommittedRecordLostGlobally: every positively acknowledged value is in some log."""
    present = set()
    for b in s.partition_data:
        present |= _log_values(s, b)
    return s.inv_pos_acked <= present


def min_isr_recovery_quorum(s, min_isr: int) -> bool:
    """MinIsrRecoveryQuorum (KIP-966): with the ISR and the ELR empty, LastKnownELR holds
    MinISR replicas (whom an unclean recovery would ask)."""
    md = s.con_partition_metadata
    if md.isr or md.elr:
        return True
    return len(md.last_known_elr) == min_isr


def fenced_broker_not_in_isr(s) -> bool:
    """No fenced broker is in the controller's ISR (ValidControllerState with KIP-966)."""
    md = s.con_partition_metadata
    return not any(s.con_broker_reg[b].status == FENCED for b in md.isr & md.replicas)


def fenced_broker_not_in_larger_isr(s) -> bool:
    """No fenced broker is in a controller ISR of more than one member (ValidControllerState
    of v3.5, where the last ISR member stays in the ISR when fenced)."""
    md = s.con_partition_metadata
    return len(md.isr) <= 1 or fenced_broker_not_in_isr(s)


def valid_controller_isr_and_elr(s, min_isr: int) -> bool:
    """ValidControllerIsrAndElr (KIP-966): ISR and ELR are disjoint sets of replicas, and the
    ELR is empty while |ISR| >= MinISR."""
    md = s.con_partition_metadata
    return (
        md.isr <= md.replicas
        and md.elr <= md.replicas
        and not (md.isr & md.elr)
        and (len(md.isr) < min_isr or not md.elr)
    )
