"""The KIP-903 counterexample (KAFKA-14139), which every report writer is tested on."""

from __future__ import annotations

import pytest

from checker.loader import load_model
from checker.local import bfs
from checker.model import Model
from checker.result import CheckResult
from tests.conftest import SPECS


@pytest.fixture(scope="session")
def kip903() -> tuple[Model, CheckResult]:
    model = load_model(str(SPECS / "light" / "kip903.py"), {"fixed": "false"})
    result = bfs.check(model)
    assert result.verdict == "violation" and result.trace
    return model, result


@pytest.fixture(scope="session")
def kip903_result(kip903: tuple[Model, CheckResult]) -> CheckResult:
    return kip903[1]
