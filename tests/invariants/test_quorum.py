"""The KRaft quorum invariants on hand-made states of the light Raft models (KIP-996)."""

from __future__ import annotations

from checker import put
from invariants.quorum import (
    election_safety,
    leader_completeness,
    leader_not_disrupted,
    log_matching,
    no_epoch_bump_while_cut_off,
    reads_are_linearizable,
)
from specs.light.kip996 import Kip996
from specs.light.kip996_read import Kip996Read

START = Kip996(voters=3).init()  # voter 0 leads epoch 1, every log empty


def test_the_initial_states_satisfy_all():
    for predicate in (
        election_safety,
        log_matching,
        leader_completeness,
        no_epoch_bump_while_cut_off,
        leader_not_disrupted,
    ):
        assert predicate(START), predicate.__name__
    assert reads_are_linearizable(Kip996Read(voters=3).init())


def test_election_safety():
    assert election_safety(START.replace(elected=frozenset({(1, 0), (2, 1)})))
    assert not election_safety(START.replace(elected=frozenset({(1, 0), (1, 1)})))


def test_log_matching():
    # Records are their epochs: logs that agree on a record agree on everything before it.
    assert log_matching(START.replace(log=((1, 1), (1,), ())))
    assert log_matching(START.replace(log=((1, 2), (1, 3), ())))  # diverge after a common prefix
    assert not log_matching(START.replace(log=((1, 2), (2, 2), ())))  # same record, other past


def test_leader_completeness():
    committed = START.replace(committed=(1,), commit_epoch=1)
    assert not leader_completeness(committed)  # leader 0 (epoch 1) lacks the committed record
    assert leader_completeness(committed.replace(log=((1,), (), ())))
    # A leader of an epoch before the committing one is not judged.
    assert leader_completeness(committed.replace(commit_epoch=2))


def test_no_epoch_bump_while_cut_off():
    cut_off = START.replace(isolated_epoch=put(START.isolated_epoch, 2, 1))
    assert no_epoch_bump_while_cut_off(cut_off)
    assert not no_epoch_bump_while_cut_off(cut_off.replace(epoch=(1, 1, 2)))


def test_leader_not_disrupted():
    assert not leader_not_disrupted(START.replace(disrupted=True))


def test_reads_are_linearizable():
    start = Kip996Read(voters=3).init()
    assert reads_are_linearizable(start.replace(answered=frozenset({(2, 2), (3, 1)})))
    assert not reads_are_linearizable(start.replace(answered=frozenset({(2, 2), (1, 2)})))
