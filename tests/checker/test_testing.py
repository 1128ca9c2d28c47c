"""checker.testing: gating on a spec from a test suite."""

from __future__ import annotations

import pytest

from checker.errors import ConfigError
from checker.testing import assert_holds, assert_violates, check
from tests.conftest import SPECS

DIE_HARD = SPECS / "examples" / "die_hard.py"
KIP903 = SPECS / "light" / "kip903.py"


def test_assert_holds_passes_and_returns_the_result():
    result = assert_holds(DIE_HARD, invariants=["type_ok"])
    assert result.verdict == "ok" and result.distinct_states == 16


def test_assert_holds_fails_with_the_rendered_trace():
    with pytest.raises(AssertionError) as failure:
        assert_holds(KIP903, fixed=False)
    message = str(failure.value)
    assert "Error: invariant no_stale_epoch_in_isr is violated." in message
    assert "The shortest behavior" in message and "State 1: initial state" in message
    assert "handle_alter_partition(" in message


def test_assert_holds_is_not_fooled_by_a_bound():
    with pytest.raises(AssertionError, match="Search incomplete: --max-states 3 reached"):
        assert_holds(DIE_HARD, invariants=["type_ok"], max_states=3)


def test_assert_violates_returns_the_counterexample():
    result = assert_violates(KIP903, "no_stale_epoch_in_isr", fixed="false")  # -D style text
    assert result.constants["fixed"] is False
    assert result.trace[-1].action == "handle_alter_partition"
    with pytest.raises(AssertionError, match="expected invariant type_ok to be violated"):
        assert_violates(DIE_HARD, "type_ok")


def test_bad_constants_are_config_errors():
    with pytest.raises(ConfigError, match="has no constant 'nope'"):
        check(DIE_HARD, nope=1)
    with pytest.raises(ConfigError, match="expected an integer"):
        check(DIE_HARD, goal="four")
    with pytest.raises(ConfigError, match="constant goal is a int, not list"):
        check(DIE_HARD, goal=[4])


def test_assert_holds_checks_temporal_properties_too():
    kip966 = SPECS / "light" / "kip966.py"
    result = assert_holds(kip966, max_records=1)
    assert result.properties == {"has_leader": "always eventually has_leader"}
    assert check(kip966, max_records=1, no_liveness=True).properties == {}
