"""specs/kraft.py and its KIP-966 layer, translated state for state from Vanlightly's TLA+
models: on the configurations of docs/tlc-comparison.md, mc's distinct states and depth are
TLC's (measured by scripts/compare_tlc.py; TLC is not needed here)."""

from __future__ import annotations

import pytest

from checker.loader import load_model, load_spec_class
from checker.local.bfs import Options, check
from checker.spec import invariants_of
from tests.conftest import SPECS

KIP966 = SPECS / "kip966.py"
ZERO = {"fence_broker_limit": "0", "data_loss_shutdown_limit": "0", "min_isr": "1"}

# (name, constants over the all-zero limits with 2 brokers, TLC's distinct states, depth)
CONFIGS = [
    ("no fault", {}, 14, 8),
    ("one fencing", {"fence_broker_limit": "1"}, 1_260, 21),
    ("one data-loss shutdown", {"data_loss_shutdown_limit": "1"}, 945, 25),
    ("one clean shutdown", {"no_data_loss_shutdown_limit": "1"}, 1_079, 22),
    ("3 brokers", {"broker_count": "3", "init_replication_factor": "3", "min_isr": "2"}, 1_163, 25),
]


def run(path, constants, exclude=("no_committed_record_lost_globally",)):
    cls, _ = load_spec_class(str(path))
    names = [n for n in invariants_of(cls) if n not in exclude]
    return check(load_model(path, constants, names), Options(deadlock=False))


@pytest.mark.parametrize(
    ("name", "extra", "distinct", "depth"), CONFIGS, ids=[c[0] for c in CONFIGS]
)
def test_kip966_counts_equal_tlcs(name, extra, distinct, depth):
    result = run(KIP966, {**ZERO, **extra})
    assert (result.verdict in ("ok", "violation"), result.invariant) == (True, None)
    assert (result.distinct_states, result.depth) == (distinct, depth)


def test_three_brokers_generate_as_many_states_as_tlc():
    result = run(KIP966, {**ZERO, **CONFIGS[-1][1]})
    assert result.states_generated == 3_372


def test_the_base_model_defaults():
    result = check(load_model(SPECS / "kraft.py"))
    assert (result.verdict, result.distinct_states, result.depth) == ("ok", 1_368, 21)


def test_with_the_fault_counters_in_the_view_two_kinds_of_shutdown_count_as_tlc():
    """With a clean and a data-loss shutdown, the model's VIEW merges states that differ in
    which shutdown is left, and which one is kept depends on the search order (TLC: 31,718
    states, mc: 32,129; docs/tlc-comparison.md). With the counters in the view both agree."""
    both = {**ZERO, "no_data_loss_shutdown_limit": "1", "data_loss_shutdown_limit": "1"}
    result = run(KIP966, {**both, "view_keeps_counters": "true"})
    assert (result.distinct_states, result.depth, result.invariant) == (35_693, 36, None)
