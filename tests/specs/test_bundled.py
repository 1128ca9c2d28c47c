"""tests/bundled.py is what other tests (e.g. engine equivalence) rely on: keep it true."""

from __future__ import annotations

import pytest

from checker.loader import load_model
from checker.local.bfs import check
from tests.bundled import BUNDLED
from tests.conftest import ROOT


@pytest.mark.parametrize(("path", "constants", "verdict", "distinct"), BUNDLED)
def test_bundled_spec_verdicts_and_counts(path, constants, verdict, distinct):
    result = check(load_model(ROOT / path, constants))
    assert result.verdict == verdict
    if distinct is not None:
        assert result.distinct_states == distinct
