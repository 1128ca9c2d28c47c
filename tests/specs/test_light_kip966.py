"""KIP-966: with Eligible Leader Replicas no committed record is lost; before, the last
replica standing loses one."""

from __future__ import annotations

from checker import invariant
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from specs.light.kip966 import Kip966
from tests.conftest import SPECS
from tests.specs.kips import actions, broken, holds

KIP966 = SPECS / "light" / "kip966.py"

LAST_REPLICA_STANDING = [
    "controlled_shutdown",  # the leader shuts down: broker 1 is the last ISR member
    "lose_unflushed_records",  # broker 1 crashes and loses the committed record
    "register_broker",  # it comes back; as the last member it stays in the ISR
    "unfence_broker",  # ...and is elected: the committed record is gone
]


def test_fixed_holds_over_the_documented_state_space():
    holds(KIP966, 21_829, 32)


def test_without_the_fix_the_last_replica_standing_loses_a_committed_record():
    model = load_model(KIP966, {"fixed": "false"}, ["no_committed_record_lost"])
    result = check(model)
    assert result.invariant == "no_committed_record_lost"
    assert actions(result) == LAST_REPLICA_STANDING
    last = result.trace[-1].state
    assert last.leader == 1 and last.log[1] == () and last.committed == (1,)


def test_without_the_fix_an_isr_member_lacks_committed_records_first():
    broken(KIP966, "isr_and_elr_hold_committed_records", LAST_REPLICA_STANDING[:3])


class ElrNeverUsed(Kip966):
    @invariant
    def elr_stays_empty(self, s):
        return not s.elr


def test_with_the_fix_a_shut_down_replica_moves_to_the_elr():
    result = check(Model(ElrNeverUsed(), invariants=["elr_stays_empty"]))
    assert actions(result) == ["controlled_shutdown"]
    last = result.trace[-1].state
    assert last.elr == {0} and dict(last.isr) == {1: 1} and last.leader == 1


class WithoutView(Kip966):
    view = None  # states identified by all their variables, last_known_elr included


def test_the_view_merges_only_states_that_differ_in_last_known_elr():
    full = check(Model(WithoutView()))
    assert (full.verdict, full.distinct_states, full.depth) == ("ok", 22_137, 32)
