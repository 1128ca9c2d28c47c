"""KIP-996: pre-vote stops the disruptive zombie; ReadOffset makes follower reads
linearizable."""

from __future__ import annotations

from checker.loader import load_model
from checker.local.bfs import check
from tests.conftest import SPECS
from tests.specs.kips import actions, broken, holds

KIP996 = SPECS / "light" / "kip996.py"
KIP996_READ = SPECS / "light" / "kip996_read.py"


def test_pre_vote_holds_over_the_documented_state_space():
    result = check(load_model(KIP996, symmetry=False))
    assert (result.verdict, result.distinct_states, result.depth) == ("ok", 33_072, 28)
    reduced = check(load_model(KIP996))  # voters are symmetric: about half the states
    assert (reduced.verdict, reduced.distinct_states, reduced.depth) == ("ok", 16_673, 28)


def test_without_pre_vote_a_cut_off_voter_raises_its_epoch():
    result = broken(KIP996, "no_epoch_bump_while_cut_off")
    assert actions(result) == [
        "isolate_voter",  # the leader is cut off...
        "resign",  # ...cannot reach a majority and resigns (KIP-595's progress timeout)
        "start_election",  # ...and starts an election in epoch 2, alone
    ]


def test_without_pre_vote_the_zombie_disrupts_a_healthy_leader():
    model = load_model(KIP996, {"fixed": "false"}, ["leader_not_disrupted"])
    result = check(model)
    assert [(s.action, s.params) for s in result.trace[1:]] == [
        ("isolate_voter", {"n": 1}),
        ("fetch_timeout", {"n": 1}),
        ("start_election", {"n": 1}),  # epoch 2 while cut off
        ("heal_voter", {"n": 1}),  # it comes back with the highest epoch
        ("request_vote", {"c": 1, "v": 0}),  # and the leader that voter 2 follows steps down
    ]
    last = result.trace[-1].state
    assert last.epoch == (2, 2, 1) and last.role[0] == "follower" and last.leader_id[2] == 0


def test_linearizable_reads_hold():
    holds(KIP996_READ, 52_617, 22)


def test_without_read_offset_a_follower_serves_a_stale_read():
    result = broken(KIP996_READ, "reads_are_linearizable")
    assert [(s.action, s.params) for s in result.trace[1:]] == [
        ("append_record", {"n": 0}),
        ("fetch", {"f": 1}),  # a majority holds the write: it is acknowledged
        ("start_read", {"n": 2}),  # the read starts after the acknowledgement
        ("answer_read", {"n": 2}),  # voter 2 has not fetched it: it answers offset 0
    ]
    assert result.trace[-1].state.answered == {(0, 1)}
