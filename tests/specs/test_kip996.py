"""specs/kip996.py on the translated KRaft quorum model (specs/kraft_quorum.py): pre-vote holds
over its defaults; without it, a follower whose timer fires for no reason raises its epoch
above a working leader's and its vote request makes the other follower leave that leader."""

from __future__ import annotations

from checker.loader import load_model
from checker.local.bfs import check
from checker.search.options import Options
from tests.conftest import SPECS
from tests.specs import test_kraft_quorum as kraft_quorum

KIP996 = SPECS / "kip996.py"
THREE = {**kraft_quorum.THREE, "hosts": "3"}  # three voters, each on its own host


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


# The quorum refines specs/client_writes.py: each write is answered once, committed or failed.
ONE_CRASH = {"values": "1", "max_disruptive_election_triggers": "0", "max_perm_crashes": "1"}


def test_the_quorum_answers_each_write_once():
    """A leader that crashes with the write pending fails it (a negative answer); every other
    step maps to a stutter of ClientWrites or to one of its steps. Also checked: 372,332
    states with values=1, max_epoch=2 and one disruptive election trigger (docs/specs.md)."""
    model = load_model(KIP996, {**ONE_CRASH, "max_epoch": "2"})
    result = check(model, Options(deadlock=False))
    assert (result.verdict, result.distinct_states) == ("ok", 142)
    assert result.step_properties == {"client_writes": "refines ClientWrites"}


def test_a_leader_that_acknowledges_on_receipt_breaks_the_refinement(write_spec):
    spec = write_spec(
        """\
        from checker import action, on
        from specs.kip996 import Kip996

        class EagerAck(Kip996):
            @action(srv="all_servers", v="value_set", switch="values")
            @on("server {srv}")
            def handle_client_request(self, s, srv, v):
                t = super().handle_client_request(s, srv, v)
                return None if t is None else t.replace(inv_pos_acked=t.inv_pos_acked | {v})
        """
    )
    result = check(load_model(spec, {"values": "1"}))
    assert (result.verdict, result.step_property) == ("violation", "client_writes")
    assert [(s.action, s.params) for s in result.trace] == [
        (None, {}),
        ("handle_client_request", {"srv": 1, "v": "v1"}),
    ]
    assert result.step_violation.endswith(
        "it maps to no step of ClientWrites, from {acked: set(), failed: set(), sent: set()} to"
        " {acked: {'v1'}, failed: set(), sent: {'v1'}}"
    )
