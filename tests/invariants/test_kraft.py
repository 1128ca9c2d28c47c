"""The KRaft family's invariants (invariants/kraft.py) on hand-made states of the KIP-966
model: its initial state, and one change that breaks each."""

from __future__ import annotations

from checker import Record, put
from invariants import kraft
from specs.kip966 import Kip966

START = Kip966().init()  # leader 1, ISR {1, 2}, empty logs, HWM 1 (offsets from 1)
RECORD = Record(epoch=1, offset=1, value="A")
FULL = Record(log=(RECORD,), hwm=2, leo=2)
EMPTY = Record(log=(), hwm=1, leo=1)
COMMITTED = START.replace(  # A committed on both replicas and acknowledged
    partition_data=Record({1: FULL, 2: FULL}),
    inv_sent=frozenset("A"),
    inv_pos_acked=frozenset("A"),
    inv_true_hwm=2,
    inv_consumed=(RECORD,),
)
PREDICATES = [
    kraft.leader_completeness,
    kraft.leader_candidate_completeness,
    kraft.metadata_log_matching,
    kraft.consistent_read,
    kraft.no_committed_record_lost_globally,
    kraft.fenced_broker_not_in_isr,
    lambda s: kraft.replication_quorum_superset(s, 2),
    lambda s: kraft.log_matching(s, 1),
    lambda s: kraft.min_isr_recovery_quorum(s, 2),
    lambda s: kraft.valid_controller_isr_and_elr(s, 2),
]


def test_the_initial_and_the_committed_states_satisfy_all():
    for s in (START, COMMITTED):
        assert all(p(s) for p in PREDICATES)


def test_a_leader_without_the_committed_record():
    lost = COMMITTED.replace(partition_data=put(COMMITTED.partition_data, 1, EMPTY))
    assert not kraft.leader_completeness(lost)
    assert not kraft.leader_candidate_completeness(lost)  # 1 is also an ISR member
    assert kraft.no_committed_record_lost_globally(lost)  # 2 still holds it
    assert not kraft.consistent_read(lost)  # 1 is the non-stale leader


def test_a_value_lost_everywhere():
    gone = COMMITTED.replace(partition_data=Record({1: EMPTY, 2: EMPTY}))
    assert not kraft.no_committed_record_lost_globally(gone)


def test_log_matching_compares_below_both_hwms():
    other = Record(log=(Record(epoch=2, offset=1, value="B"),), hwm=2, leo=2)
    diverged = COMMITTED.replace(partition_data=put(COMMITTED.partition_data, 2, other))
    assert not kraft.log_matching(diverged, 1)
    assert kraft.log_matching(
        diverged.replace(partition_data=put(diverged.partition_data, 2, other.replace(hwm=1))), 1
    )


def test_metadata_log_matching():
    stray = START.con_metadata_log[0].replace(leader=2)
    bad = START.replace(broker_metadata_log=put(START.broker_metadata_log, 2, (stray,)))
    assert not kraft.metadata_log_matching(bad)


def test_a_fenced_isr_member():
    reg = put(START.con_broker_reg, 2, START.con_broker_reg[2].replace(status="FENCED"))
    fenced = START.replace(con_broker_reg=reg)
    assert not kraft.fenced_broker_not_in_isr(fenced)
    assert kraft.fenced_broker_not_in_larger_isr(
        fenced.replace(
            con_partition_metadata=fenced.con_partition_metadata.replace(isr=frozenset({2}))
        )
    )


def test_the_maximal_isr_must_cover_the_controllers_isr():
    md = START.partition_metadata[1].replace(isr=frozenset({1, 2}), maximal_isr=frozenset({1}))
    narrow = START.replace(partition_metadata=put(START.partition_metadata, 1, md))
    assert not kraft.replication_quorum_superset(narrow, 2)


def test_elr_and_last_known_elr():
    md = START.con_partition_metadata
    empty = START.replace(con_partition_metadata=md.replace(isr=frozenset(), leader="NoLeader"))
    assert not kraft.min_isr_recovery_quorum(empty, 2)
    known = empty.con_partition_metadata.replace(last_known_elr=frozenset({1, 2}))
    assert kraft.min_isr_recovery_quorum(empty.replace(con_partition_metadata=known), 2)
    both = START.replace(con_partition_metadata=md.replace(elr=frozenset({2})))
    assert not kraft.valid_controller_isr_and_elr(both, 2)
