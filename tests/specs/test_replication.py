"""The shared replication model: every fault is an action bounded by its constant."""

from __future__ import annotations

import pytest

from checker import invariant
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from specs.light.replication import Replication
from tests.conftest import SPECS

FAULT_ACTIONS = {
    "controlled_shutdowns": "controlled_shutdown",
    "unclean_shutdowns": "unclean_shutdown",
    "unflushed_losses": "lose_unflushed_records",
    "disk_replacements": "replace_disk",
    "heartbeat_losses": "fence_broker",
    "lost_requests": "lose_alter_partition",
    "duplicated_requests": "handle_duplicated_alter_partition",
    "delayed_fetch_responses": "delay_fetch_response",
}


class Bounded(Replication):
    @invariant
    def faults_within_bounds(self, s):
        return all(s.faults[f] <= getattr(self, f"max_{f}") for f in self.FAULTS)


def coverage(result) -> dict[str, int]:
    return {c.name: c.fired for c in result.coverage}


def test_without_faults_the_partition_just_replicates():
    result = check(Model(Bounded(max_records=2)))
    assert result.verdict == "ok"
    fired = coverage(result)
    assert all(fired[action] == 0 for action in FAULT_ACTIONS.values())
    assert fired["fetch"] > 0 and fired["append_record"] > 0


@pytest.mark.parametrize("fault", sorted(FAULT_ACTIONS))
def test_each_fault_fires_within_its_bound(fault):
    result = check(Model(Bounded(max_records=1, **{f"max_{fault}": 1})))
    assert result.verdict == "ok"
    assert coverage(result)[FAULT_ACTIONS[fault]] > 0


def test_mc_list_shows_every_fault_bound(mc):
    out = mc("list", SPECS / "light" / "replication.py").out
    for fault in FAULT_ACTIONS:
        assert f"max_{fault} = 0  [int]  fault bound:" in out


def test_max_partition_epoch_bounds_the_search_as_a_state_constraint():
    small = {"max_unclean_shutdowns": "0"}
    bounded = check(
        load_model(SPECS / "light" / "kip903.py", {**small, "max_partition_epoch": "2"})
    )
    # The same search by hand on the unbounded model: count states past epoch 2, but do not
    # expand them.
    model = load_model(SPECS / "light" / "kip903.py", small)
    seen = {s.fp for s in model.initial()}
    frontier = [s.data for s in model.initial()]
    while frontier:
        later = []
        for data in frontier:
            for succ in model.expand(data):
                if succ.fp not in seen:
                    seen.add(succ.fp)
                    if succ.state.partition_epoch <= 2:
                        later.append(succ.data)
        frontier = later
    assert bounded.verdict == "ok" and bounded.distinct_states == len(seen)
    assert len(seen) < check(model).distinct_states == 781
