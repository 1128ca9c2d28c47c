"""The KRaft quorum model's predicates (invariants and liveness state formulas) on hand-made
states of specs/kraft_quorum.py: two voters, 1 the leader of epoch 1, 2 its follower, each log
holding the committed InitCluster command."""

from __future__ import annotations

from checker import Record, put
from invariants.kraft_quorum import (
    DEAD,
    ILLEGAL,
    UNATTACHED,
    config_all_or_nothing,
    durability,
    election_safety,
    functional_leader_exists,
    is_current_leader,
    is_observer,
    is_voter,
    leader_completeness,
    log_matching,
    no_illegal_state,
    valid_roles_and_states,
    value_in_server_log,
)
from specs.kraft_quorum import KRaftQuorum

START = KRaftQuorum().init()
V1 = Record(command="AppendCommand", epoch=1, value="v1")


def appended(s, *servers):
    """`s` with the value v1 appended to the logs of `servers`."""
    return s.replace(log=Record({i: s.log[i] + ((V1,) if i in servers else ()) for i in s.log}))


def test_the_initial_state_satisfies_every_invariant():
    for predicate in (
        no_illegal_state,
        log_matching,
        election_safety,
        leader_completeness,
        durability,
        valid_roles_and_states,
        functional_leader_exists,
    ):
        assert predicate(START), predicate.__name__
    assert config_all_or_nothing(START, 1)


def test_voters_observers_and_the_current_leader():
    assert is_voter(START, 1) and is_voter(START, 2)
    dead = START.replace(state=put(START.state, 2, DEAD))
    assert not is_voter(dead, 2) and not is_observer(dead, 2)
    outside = START.replace(config=put(START.config, 2, START.config[2].replace(members={1})))
    assert is_observer(outside, 2)
    assert is_current_leader(START, 1) and not is_current_leader(START, 2)
    assert not is_current_leader(START.replace(current_epoch=put(START.current_epoch, 2, 2)), 1)


def test_no_illegal_state():
    assert not no_illegal_state(START.replace(state=put(START.state, 2, ILLEGAL)))


def test_log_matching_compares_up_to_the_lower_hwm():
    other = Record(command="AppendCommand", epoch=1, value="v2")
    diverged = START.replace(log=Record({1: START.log[1] + (V1,), 2: START.log[2] + (other,)}))
    assert log_matching(diverged)  # beyond both HWMs (1)
    assert not log_matching(diverged.replace(hwm=Record({1: 2, 2: 2})))


def test_election_safety():
    assert not election_safety(START.replace(leader=put(START.leader, 2, 2)))
    later = START.replace(current_epoch=put(START.current_epoch, 2, 2))
    assert election_safety(later.replace(leader=put(START.leader, 2, 2)))


def test_acknowledged_values_stay_with_the_leader_and_a_voter():
    acked = START.replace(inv_pos_acked=frozenset({"v1"}))
    assert not leader_completeness(acked) and not durability(acked)
    assert value_in_server_log(appended(acked, 1), 1, "v1")
    assert leader_completeness(appended(acked, 1)) and durability(appended(acked, 1))
    assert not leader_completeness(appended(acked, 2)) and durability(appended(acked, 2))


def test_valid_roles_and_states():
    assert not valid_roles_and_states(START.replace(state=put(START.state, 2, UNATTACHED)))
    pending = START.replace(pending_ack=put(START.pending_ack, 2, frozenset({"v1"})))
    assert not valid_roles_and_states(pending)
    votes = START.replace(votes_recv=put(START.votes_recv, 2, frozenset({1})))
    assert not valid_roles_and_states(votes)


def test_functional_leader_exists_needs_a_following_majority():
    lost = START.replace(leader=put(START.leader, 2, None))
    assert not functional_leader_exists(lost)  # 1 of 2 members is no majority
    assert not functional_leader_exists(START.replace(state=put(START.state, 1, "Follower")))


def test_config_all_or_nothing():
    # Configuration 2 is in no log: nothing. Then uncommitted in the leader's log while its
    # member 2 is reachable: neither all nor nothing; once committed (HWM 2): all.
    assert config_all_or_nothing(START, 2)
    entry = Record(command="AddVoterCommand", epoch=1, value=Record(id=2, members={1, 2}))
    half = START.replace(log=put(START.log, 1, START.log[1] + (entry,)))
    assert not config_all_or_nothing(half, 2)
    assert config_all_or_nothing(half.replace(hwm=put(START.hwm, 1, 2)), 2)
    # A member cut off from the leader does not count against it.
    cut = half.replace(net_connectivity=Record({frozenset({1, 2}): False}))
    assert config_all_or_nothing(cut, 2)
