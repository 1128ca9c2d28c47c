"""KIP-966 on the translated model: with Eligible Leader Replicas the last replica standing
keeps no committed record from the next leader; before (Vanlightly's v3.5 model with
AvoidLastReplicaStanding = FALSE) it does."""

from __future__ import annotations

from checker import testing
from checker.loader import load_model
from checker.local.bfs import check
from tests.conftest import SPECS
from tests.specs.kips import actions, holds

KIP966 = SPECS / "kip966.py"

LAST_REPLICA_STANDING = [
    "write_record_to_leader",  # broker 1 leads; ISR {1, 2}
    "fence_broker",  # broker 2 is fenced: the ISR is {1}, below MinISR = 2
    "receive_metadata_update",  # the leader learns it and commits the record alone
    "data_loss_shutdown",  # broker 1 crashes and loses its log; it stays the last ISR member
    "broker_start",
    "receive_broker_reg_request",  # it registers: unfenced, in the ISR, elected leader
    "receive_broker_reg_response",  # ...and runs without the committed record
]


def test_fixed_holds_with_the_defaults():
    result = holds(KIP966, 1_215, 22)
    assert result.unreached == []


def test_without_the_fix_the_last_replica_standing_loses_committed_records():
    model = load_model(KIP966, {"fixed": "false", "data_loss_shutdown_limit": "1"})
    result = check(model)
    assert result.invariant == "leader_completeness"
    assert actions(result) == LAST_REPLICA_STANDING
    last = result.trace[-1].state
    assert last.con_partition_metadata.leader == 1 and last.partition_data[1].log == ()
    assert last.inv_true_hwm == 2


def test_with_the_fix_the_fenced_follower_joins_the_elr():
    model = load_model(KIP966)
    result = check(model)
    assert result.verdict == "ok" and "elr_in_use" in result.reached


def test_liveness_holds_without_the_view_as_tlc_checks_it():
    """The model's temporal properties under its fairness, as its cfg says to check them
    (no VIEW): TLC finds 11,964 states and no violation (docs/tlc-comparison.md)."""
    result = testing.check(KIP966, tla_view=False)
    assert (result.verdict, result.distinct_states, result.depth) == ("ok", 11_964, 37)
    assert result.properties and result.property is None
