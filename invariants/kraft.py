"""Predicates over the states of the KRaft replication family (specs/kraft.py and the KIP
layers): the safety properties of Vanlightly's TLA+ models (kip_966_properties.tla), each a
function of the state and the spec's MinISR where needed."""

from __future__ import annotations

FENCED, RUNNING, LEADER, NO_LEADER = "FENCED", "RUNNING", "Leader", "NoLeader"


def fenced_broker_not_in_isr(s) -> bool:
    """No fenced broker is in the controller's ISR (ValidControllerState, KIP-841's rule)."""
    md = s.con_partition_metadata
    return not any(s.con_broker_reg[b].status == FENCED for b in md.isr & md.replicas)
