"""What the KIP specs' tests share: a spec holds with its documented counts, and without its
fix (`fixed=false`) a named invariant breaks."""

from __future__ import annotations

import os

from checker.loader import load_model
from checker.local.bfs import check
from checker.result import CheckResult


def holds(spec: str | os.PathLike[str], distinct: int, depth: int) -> CheckResult:
    """Check `spec` with its defaults: every property holds over `distinct` states, `depth`
    deep."""
    result = check(load_model(spec))
    assert (result.verdict, result.distinct_states, result.depth) == ("ok", distinct, depth)
    return result


def broken(
    spec: str | os.PathLike[str], invariant: str, steps: list[str] | None = None
) -> CheckResult:
    """Check `spec` without its fix: `invariant` is the one that breaks, by the actions
    `steps` if given (the result's trace is the counterexample)."""
    result = check(load_model(spec, {"fixed": "false"}))
    assert (result.verdict, result.invariant) == ("violation", invariant)
    if steps is not None:
        assert actions(result) == steps
    return result


def actions(result: CheckResult) -> list[str]:
    """The counterexample's actions, after its initial state."""
    return [step.action for step in result.trace[1:]]
