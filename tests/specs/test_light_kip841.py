"""KIP-841: fenced and shutting-down replicas neither join the ISR nor lead."""

from __future__ import annotations

from checker.loader import load_model
from checker.local.bfs import check
from tests.conftest import SPECS
from tests.specs.kips import actions, broken, holds

KIP841 = SPECS / "light" / "kip841.py"


def test_fixed_holds_over_the_documented_state_space():
    holds(KIP841, 8_957, 29)


def test_without_the_fix_a_shutting_down_replica_is_elected():
    result = broken(KIP841, "leader_is_eligible")
    assert actions(result) == [
        "controlled_shutdown",  # the leader, last ISR member, shuts down: no leader now
        "unclean_shutdown",  # the other broker restarts...
        "register_broker",
        "unfence_broker",  # ...and its unfencing triggers an election: the shutting-down one
    ]
    last = result.trace[-1].state
    assert last.leader == 0 and 0 in last.shutting_down


def test_without_the_fix_a_shutting_down_replica_joins_the_isr():
    model = load_model(KIP841, {"fixed": "false"}, ["isr_members_eligible"])
    result = check(model)
    assert actions(result) == [
        "fetch",
        "fetch",
        "send_alter_partition",  # the leader proposes broker 1...
        "controlled_shutdown",  # ...which then starts a controlled shutdown
        "handle_alter_partition",  # the controller accepts it without INELIGIBLE_REPLICA
    ]
    last = result.trace[-1].state
    assert set(last.isr) == {0, 1} and last.shutting_down == {1}
