"""specs/kraft_quorum.py, translated state for state from Vanlightly's TLA+ model of KRaft with
KIP-996 pre-vote: on the kip-996 configurations of docs/tlc-comparison.md, mc's distinct states
and depth are TLC's (measured by scripts/compare_tlc.py; TLC is not needed here)."""

from __future__ import annotations

import pytest

from checker import testing
from checker.loader import load_model
from checker.local.bfs import check
from checker.search.options import Options
from tests.conftest import SPECS

KRAFT_QUORUM = SPECS / "kraft_quorum.py"
# The shipped cfg's constants, with every fault limit 0 and no reconfiguration.
SHIPPED = {
    "test_liveness": "true",
    "max_epoch": "3",
    "values": "3",
    "hosts": "5",
    "max_disruptive_election_triggers": "0",
}
THREE = {
    "init_cluster_size": "3",
    "min_cluster_size": "3",
    "max_cluster_size": "3",
    "max_spawned_servers": "3",
}
NO_TEST_LIVENESS = {**SHIPPED, "test_liveness": "false"}

# (name, constants over the defaults, TLC's distinct states, TLC's depth). The rows of
# docs/tlc-comparison.md with 60,000 to 80,000 states (two connectivity changes, one restart)
# are left to scripts/compare_tlc.py for the suite's time; one disruptive election trigger is
# kip996.py's defaults (tests/specs/test_kip996.py).
CONFIGS = [
    ("3 servers, all limits zero", {**SHIPPED, **THREE}, 1_908, 24),
    ("2 servers, all limits zero", SHIPPED, 66, 13),
    (
        "2 servers, one connectivity change",
        {**NO_TEST_LIVENESS, "max_connectivity_changes": "1"},
        1_112,
        21,
    ),
    ("2 servers, one crash", {**NO_TEST_LIVENESS, "max_perm_crashes": "1"}, 416, 17),
    (
        "2 servers, a new server added",
        {
            **SHIPPED,
            "values": "1",
            "max_cluster_size": "3",
            "max_spawned_servers": "3",
            "max_add_reconfigs": "1",
        },
        94_626,
        40,
    ),
]


@pytest.mark.parametrize(
    ("name", "constants", "distinct", "depth"), CONFIGS, ids=[c[0] for c in CONFIGS]
)
def test_counts_equal_tlcs(name, constants, distinct, depth):
    result = check(load_model(KRAFT_QUORUM, constants), Options(deadlock=False))
    assert (result.verdict, result.invariant) == ("ok", None)
    assert (result.distinct_states, result.depth) == (distinct, depth)


def test_the_liveness_properties_hold_with_test_liveness_on():
    """model_liveness.cfg's properties (ValuesEventuallyAcked, ReconfigurationNotStuck,
    EventuallyLeaderElected, NotStuckInProspective) under the model's Fairness."""
    constants = {**SHIPPED, **THREE, "test_liveness": True, "max_epoch": 3, "values": 3}
    constants = {k: v if isinstance(v, bool) else int(v) for k, v in constants.items()}
    result = testing.check(str(KRAFT_QUORUM), deadlock=False, **constants)
    assert (result.verdict, result.property, result.distinct_states) == ("ok", None, 1_908)
