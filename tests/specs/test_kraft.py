"""specs/kraft.py and its KIP-966 layer, translated state for state from Vanlightly's TLA+
models: on the configurations of docs/tlc-comparison.md, mc's distinct states and depth are
TLC's (measured by scripts/compare_tlc.py; TLC is not needed here)."""

from __future__ import annotations

import pytest

from checker.liveness import recording, select
from checker.loader import load_model, load_spec_class
from checker.local.bfs import check
from checker.run import check_properties, record
from checker.search.options import Options
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


def liveness(constants: dict[str, str], properties: list[str] | None = None):
    """The temporal properties as the model's cfg checks them: no VIEW, and (TLC has none)
    without mc's reachability properties, which a configuration without faults leaves
    unreached."""
    cls, _ = load_spec_class(str(KIP966))
    names = [n for n in invariants_of(cls) if n != "no_committed_record_lost_globally"]
    given = {**constants, "tla_view": "false"}
    model = load_model(KIP966, given, names, symmetry=False, view=False)
    model.reachables = ()
    props = select(model, properties)
    result, graph = record(model, recording(model, props), Options(deadlock=False))
    return check_properties(model, result, props, graph)


RF1 = {**ZERO, "init_replication_factor": "1", "init_isr_size": "1"}


def test_every_liveness_property_holds_where_tlc_finds_them_to():
    """docs/tlc-comparison.md: MinISR 2 with one fencing (all seven properties), and a
    reassignment (the five without values): TLC's counts, every property holding."""
    fencing = liveness({**ZERO, "min_isr": "2", "init_isr_size": "2", "fence_broker_limit": "1"})
    assert (fencing.verdict, fencing.distinct_states, fencing.depth) == ("ok", 11_964, 37)
    assert "alter_partition_epoch_eventually_reached_or_zero(b=2)" in fencing.properties
    assert "eventually_reassignment_completes" in fencing.properties
    without_values = [
        "eventually_runs",
        "eventually_unfenced",
        "alter_partition_epoch_eventually_reached_or_zero",
        "eventually_metadata_converges",
        "eventually_reassignment_completes",
    ]
    moved = liveness({**RF1, "reassignment_limit": "1"}, without_values)
    assert (moved.verdict, moved.distinct_states, moved.depth) == ("ok", 431, 24)


def test_with_one_replica_a_write_is_never_acknowledged_as_tlc_finds():
    """With RF 1 and no fault, the model leaves a written value unacknowledged for ever: TLC
    finds the same lasso, the write and then stuttering."""
    result = liveness(RF1)
    assert result.property == "eventually_write_is_accepted_or_rejected(v='A')"
    assert [s.action for s in result.trace] == [None, "write_record_to_leader"]
    assert result.loop_back is None
