"""TwoPhase.tla translated: the same state space as TLC's."""

from __future__ import annotations

import pytest

from checker.loader import load_model
from checker.local.bfs import check
from tests.conftest import SPECS


@pytest.mark.parametrize(("rm", "distinct", "depth"), [(3, 288, 11), (4, 1_568, 14)])
def test_two_phase_counts(rm, distinct, depth):
    result = check(load_model(SPECS / "examples" / "two_phase.py", {"rm": str(rm)}))
    assert (result.verdict, result.distinct_states, result.depth) == ("ok", distinct, depth)
