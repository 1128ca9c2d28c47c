"""Predicates over the states of the KRaft quorum model (specs/kraft_quorum.py): the
invariants of Vanlightly's TLA+ model of KRaft with KIP-996 pre-vote (github.com/Vanlightly/
kafka-tlaplus: kraft/kip_996/kraft_kip_996_properties.tla), translated one for one, and the
state formulas of its liveness properties. Servers are the keys of `server_ids`; offsets start
at 1; Nil is None."""

from __future__ import annotations

LEADER, PROSPECTIVE, CANDIDATE = "Leader", "Prospective", "Candidate"
UNATTACHED, DEAD, ILLEGAL = "Unattached", "DeadNoState", "IllegalState"
OBSERVER_STATES = frozenset({LEADER, "Follower", UNATTACHED, "Resigned"})
CONFIG_COMMANDS = ("InitClusterCommand", "AddVoterCommand", "RemoveVoterCommand")


def is_voter(s, i) -> bool:
    """IsVoter: alive and a member of its own configuration."""
    return s.state[i] != DEAD and i in s.config[i].members


def is_observer(s, i) -> bool:
    return s.state[i] != DEAD and i not in s.config[i].members


def value_in_server_log(s, i, v) -> bool:
    return any(e.value == v for e in s.log[i])


def no_illegal_state(s) -> bool:
    """NoIllegalState: no server ever took a transition the protocol forbids."""
    return all(s.state[i] != ILLEGAL for i in s.server_ids)


def log_matching(s) -> bool:
    """LogMatching: up to the lower HWM of two servers, their logs are the same."""
    servers = list(s.server_ids)
    for a in servers:
        for b in servers:
            if a == b:
                continue
            low = min(s.hwm[a], s.hwm[b])
            if low > 0 and s.log[a][:low] != s.log[b][:low]:
                return False
    return True


def election_safety(s) -> bool:
    """ElectionSafety: no two servers of one epoch name different leaders."""
    named = [(s.current_epoch[i], s.leader[i]) for i in s.server_ids if s.leader[i] is not None]
    return all(
        not (e1 == e2 and l1 != l2) for k, (e1, l1) in enumerate(named) for e2, l2 in named[k:]
    )


def is_current_leader(s, i) -> bool:
    """IsCurrentLeader: a leader that no server has seen a later epoch than."""
    return s.state[i] == LEADER and not any(
        j != i and s.current_epoch[j] > s.current_epoch[i] for j in s.server_ids
    )


def leader_completeness(s) -> bool:
    """LeaderCompleteness: the current leader holds every positively acknowledged value."""
    leaders = [i for i in s.server_ids if is_current_leader(s, i)]
    return all(value_in_server_log(s, i, v) for v in s.inv_pos_acked for i in leaders)


def durability(s) -> bool:
    """Durability: an acknowledged value is in the log of some live voter."""
    return all(
        any(is_voter(s, i) and value_in_server_log(s, i, v) for i in s.server_ids)
        for v in s.inv_pos_acked
    )


def valid_roles_and_states(s) -> bool:
    """ValidRolesAndStates: each server's role and state agree.

    An observer is in an observer state, an unattached server knows no leader, only a leader
    has pending writes, only a prospective or candidate server holds votes."""
    for i in s.server_ids:
        st = s.state[i]
        if is_observer(s, i) and st not in OBSERVER_STATES:
            return False
        if st == UNATTACHED and s.leader[i] is not None:
            return False
        if st != LEADER and s.pending_ack[i]:
            return False
        if s.votes_recv[i] and st not in (PROSPECTIVE, CANDIDATE):
            return False
    return True


def functional_leader_exists(s) -> bool:
    """FunctionalLeaderExists: a leader that a majority of its members (voters that count it
    as a member too) follow."""
    for i in s.server_ids:
        if s.state[i] != LEADER:
            continue
        followers = sum(
            1
            for j in s.server_ids
            if is_voter(s, j) and s.leader[j] == i and i in s.config[j].members
        )
        if followers >= len(s.config[i].members) // 2 + 1:
            return True
    return False


def _config_entries(s, i, config_id):
    return [
        (o, e)
        for o, e in enumerate(s.log[i], 1)
        if e.command in CONFIG_COMMANDS and e.value.id == config_id
    ]


def config_all_or_nothing(s, config_id) -> bool:
    """ConfigAllOrNothing: a current leader has the configuration committed, or not in its
    log (the model checks the leader's own log, once per reachable live member)."""
    for i in s.server_ids:
        if not is_current_leader(s, i):
            continue
        entries = _config_entries(s, i, config_id)
        committed = any(s.hwm[i] >= o for o, _ in entries)
        members = s.config[i].members
        if all(committed or _cut_off(s, i, j) for j in members):
            return True
        if all(not entries or _cut_off(s, i, j) for j in members):
            return True
    return False


def _cut_off(s, i, j) -> bool:
    up = i != j and s.net_connectivity.get(frozenset((i, j))) is True
    return not up or s.state[j] == DEAD
