"""The replication invariants on hand-made states of the KIP-903 model."""

from __future__ import annotations

from checker import put
from invariants.replication import (
    isr_members_hold_committed_data,
    leader_in_isr,
    no_stale_epoch_in_isr,
)
from specs.light.kip903 import Kip903

START = Kip903(brokers=3).init()  # leader 0, ISR {0: epoch 1}, 0 holds one committed record


def test_the_initial_state_satisfies_all():
    for predicate in (leader_in_isr, no_stale_epoch_in_isr, isr_members_hold_committed_data):
        assert predicate(START)


def test_leader_in_isr():
    assert not leader_in_isr(START.replace(leader=1))
    assert leader_in_isr(START.replace(leader=None))


def test_no_stale_epoch_in_isr():
    rejoined = START.replace(isr={0: 1, 1: 1}, broker_epoch=(1, 2, 1))
    assert not no_stale_epoch_in_isr(rejoined)
    assert no_stale_epoch_in_isr(rejoined.replace(isr={0: 1, 1: 2}))


def test_isr_members_hold_committed_data():
    empty_member = START.replace(isr={0: 1, 2: 1})
    assert not isr_members_hold_committed_data(empty_member)
    # A member that is mid-restart (not registered yet) is not judged until it registers.
    restarting = empty_member.replace(local_epoch=put(START.local_epoch, 2, None))
    assert isr_members_hold_committed_data(restarting)
    # Records above the HWM are not committed: a member may lack them.
    caught_up = empty_member.replace(log=((1, 1), (), (1,)))
    assert isr_members_hold_committed_data(caught_up)
    assert not isr_members_hold_committed_data(caught_up.replace(hwm=(2, 0, 1)))
