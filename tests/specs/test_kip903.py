"""KIP-903 on the translated model: without broker epochs in AlterPartition, a follower that
crashed losing its log is put back into the ISR on the leader's stale record (KAFKA-14139)."""

from __future__ import annotations

from tests.conftest import SPECS
from tests.specs.kips import broken, holds

KIP903 = SPECS / "kip903.py"

KAFKA_14139 = [
    "send_fetch_request",  # broker 2 fetches...
    "write_record_to_leader",
    "receive_fetch_request",
    "receive_fetch_response",  # ...gets the record
    "send_fetch_request",
    "receive_fetch_request",  # the leader records its fetch offset 2: committed
    "data_loss_shutdown",  # broker 2 crashes, loses its log; fenced, out of the ISR
    "broker_start",
    "receive_metadata_update",  # the leader learns the ISR is {1}
    "send_alter_partition_request",  # it proposes {1, 2} with 2's old broker epoch
    "receive_broker_reg_request",  # broker 2 registers again (new epoch, unfenced)
    "receive_broker_reg_response",
    "receive_alter_partition_request",  # accepted: 2 in the ISR with an empty log
]


def test_fixed_holds_with_the_defaults():
    holds(KIP903, 945, 25)


def test_without_the_fix_a_restarted_empty_replica_rejoins_the_isr():
    result = broken(KIP903, "leader_candidate_completeness", KAFKA_14139)
    last = result.trace[-1].state
    assert last.con_partition_metadata.isr == {1, 2} and last.partition_data[2].log == ()
