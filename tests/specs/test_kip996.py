"""specs/kip996.py on the translated KRaft quorum model (specs/kraft_quorum.py): pre-vote holds
over its defaults; without it, a follower whose timer fires for no reason raises its epoch
above a working leader's and its vote request makes the other follower leave that leader."""

from __future__ import annotations

from checker.loader import load_model
from checker.local.bfs import check
from tests.conftest import SPECS

KIP996 = SPECS / "kip996.py"
THREE = {
    "init_cluster_size": "3",
    "min_cluster_size": "3",
    "max_cluster_size": "3",
    "max_spawned_servers": "3",
    "hosts": "3",
}


def test_pre_vote_holds_over_the_defaults():
    """With deadlock checking too: every state without a successor is @terminal (the epoch
    bound stops a prospective voter). The defaults are TLC's row with one disruptive election
    trigger (docs/tlc-comparison.md)."""
    result = check(load_model(KIP996))
    assert (result.verdict, result.distinct_states, result.depth) == ("ok", 60_972, 42)


def test_without_pre_vote_a_spurious_timeout_raises_the_epoch_above_a_working_leader():
    result = check(load_model(KIP996, {**THREE, "fixed": "false"}))
    assert result.invariant == "working_leader_not_disrupted"
    assert [(s.action, s.params) for s in result.trace[1:]] == [
        ("voter_fetch_timeout", {"srv": 2}),  # no cause: the disruptive election trigger
    ]
    last = result.trace[-1].state
    assert (last.state[2], last.current_epoch[2], last.state[1]) == ("Candidate", 2, "Leader")
    # Its vote request carries epoch 2: the other follower leaves leader 1 on receiving it.
    spec = load_model(KIP996, {**THREE, "fixed": "false"}).spec
    (after,) = spec.handle_vote_request(last, 3, 2)
    assert (after.state[3], after.current_epoch[3], after.leader[3]) == ("Unattached", 2, None)


def test_with_pre_vote_the_same_timeout_leaves_the_leader_alone():
    """The same trigger with pre-vote: the follower is prospective in epoch 1; the leader and
    the other follower (which has fetched from the leader) refuse, and it follows again."""
    spec = load_model(KIP996, THREE).spec
    prospective = spec.voter_fetch_timeout(spec.init(), 2)
    assert (prospective.state[2], prospective.current_epoch[2]) == ("Prospective", 1)
    refused = [spec.handle_vote_request(prospective, n, 2)[0] for n in (1, 3)]
    assert all(
        not (m.vote_granted or m.pre_vote is False)
        for t in refused
        for m in t.net_messages
        if m.type == "RequestVoteResponse"
    )
    assert all(t.state[1] == "Leader" and t.current_epoch[3] == 1 for t in refused)
