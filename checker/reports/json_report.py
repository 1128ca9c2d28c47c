"""`--json PATH`: the result as one JSON document."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from checker.result import CheckResult, NotChecked, Step
from checker.values import to_json


def as_dict(result: CheckResult) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "spec": result.spec,
        "spec_name": result.spec_name,
        "constants": result.constants,
        "invariants": result.invariants,
        "constraints": result.constraints,
        "action_constraints": result.action_constraints,
        "view": result.view,
        "symmetry": result.symmetry,
        "properties": result.properties,
        "fairness": result.fairness,
        "verdict": result.verdict,
        "exit_code": int(result.exit_code),
        "invariant": result.invariant,
        "property": result.property,
        "step_properties": result.step_properties,
        "step_property": result.step_property,
        "step_violation": result.step_violation,
        "outside_constraints": result.outside_constraints,
        "reachable": result.reachable,
        "reached": result.reached,
        "unreached": result.unreached,
        "witness": result.witness,
        "error": _error(result),
        "bound": result.bound,
        "engine_failed": result.engine_failed,
        "advice": result.advice,
        "distinct_states": result.distinct_states,
        "states_generated": result.states_generated,
        "depth": result.depth,
        "queue": result.queue,
        "collision_probability": {
            "optimistic": result.collision_probability,
            "observed": result.collision_probability_observed,
        },
        "seconds": round(result.seconds, 6),
        "coverage": [asdict(c) for c in result.coverage],
        "trace": [_step(s) for s in result.trace],
        "warnings": [asdict(w) for w in result.warnings],
        "off": result.off,
        "strict": result.strict,
        "loop_start": result.loop_start,
        "loop_back": _step(result.loop_back) if result.loop_back is not None else None,
    }
    if result.simulation is not None:  # `mc simulate`: the seed and walks, to repeat the run
        doc["simulation"] = asdict(result.simulation)
    return doc


def _step(step: Step) -> dict[str, Any]:
    return {
        "action": step.action,
        "params": _params(step.params),
        "state": to_json(step.state),
        "event": asdict(step.event) if step.event is not None else None,
    }


def not_checked_dict(result: NotChecked) -> dict[str, Any]:
    """A spec of a multi-spec run that could not be checked (it did not load)."""
    return {
        "spec": result.spec,
        "verdict": "not-checked",
        "exit_code": int(result.exit_code),
        "message": result.message,
    }


def _params(params: dict[str, Any]) -> dict[str, Any]:
    return {name: to_json(value) for name, value in params.items()}


def _error(result: CheckResult) -> dict[str, Any] | None:
    if result.error is None:
        return None
    return {**asdict(result.error), "params": _params(result.error.params)}


def write(result: CheckResult, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(as_dict(result), out, indent=2)
        out.write("\n")


def write_many(results: Sequence[CheckResult | NotChecked], path: str) -> None:
    """A multi-spec run: a JSON list, one object per spec, in the order checked."""
    docs = [as_dict(r) if isinstance(r, CheckResult) else not_checked_dict(r) for r in results]
    with open(path, "w", encoding="utf-8") as out:
        json.dump(docs, out, indent=2)
        out.write("\n")
