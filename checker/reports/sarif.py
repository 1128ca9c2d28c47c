"""`--sarif PATH`: SARIF 2.1.0, the format GitHub code scanning (and other CI) annotates code
from. One run for all the specs checked; one result per violated invariant or temporal
property, located at its definition in the spec (see checker.source), with the trace in the
message and as a code flow whose steps point at the actions' definitions and carry the
changed variables (for a property's lasso, a last step goes back to where the cycle starts).

Deadlocks and errors are results too (rules `mc/deadlock`, `mc/evaluation-error`,
`mc/spec-error`), located at the spec class or the code that raised; so are the vacuity
check's warnings (`mc/vacuity`, level warning, error under --strict), at the action.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from checker import __version__, batch
from checker.model import Model
from checker.reports.graph import changed_variables, describe_action, lasso_line
from checker.reports.text import behavior_intro, format_behavior, headline
from checker.result import CheckResult, NotChecked
from checker.source import Location, display_path, member_location, spec_location
from checker.values import show

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


@dataclass
class Checked:
    """A result and, when the spec loaded, its model (for source locations)."""

    result: CheckResult | NotChecked
    model: Model | None = None


def _artifact(path: str) -> dict[str, str]:
    """A relative path is resolved against %SRCROOT% (the repository, for code scanning)."""
    if path.startswith("/"):
        return {"uri": "file://" + quote(path)}
    return {"uri": quote(path), "uriBaseId": SRCROOT}


def _location(where: Location, message: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {
        "artifactLocation": _artifact(where.path),
        "region": {"startLine": where.line},
    }
    location: dict[str, Any] = {"physicalLocation": physical}
    if message:
        location["message"] = {"text": message}
    return location


def _code_flow(result: CheckResult, model: Model | None) -> dict[str, Any]:
    steps = []
    previous = None
    fallback = Location(display_path(result.spec), 1)
    for number, step in enumerate(result.trace, start=1):
        where = fallback
        if model is not None:
            where = (
                spec_location(model) if step.action is None else member_location(model, step.action)
            )
        text = f"State {number}: {describe_action(step.action, step.params)}"
        steps.append(
            {
                "location": _location(where, text),
                "state": {
                    str(name): {"text": show(step.state[name])}
                    for name in changed_variables(step.state, previous)
                },
                "executionOrder": number,
            }
        )
        previous = step.state
    line = lasso_line(result)
    if line is not None:  # the step that closes the lasso's cycle (or stuttering)
        back = result.loop_back
        where = fallback
        if model is not None:
            where = spec_location(model) if back is None else member_location(model, back.action)
        steps.append({"location": _location(where, line), "executionOrder": len(result.trace) + 1})
    return {"threadFlows": [{"locations": steps}]}


def _rule(rules: dict[str, dict[str, Any]], rule_id: str, text: str) -> int:
    if rule_id not in rules:
        rules[rule_id] = {"id": rule_id, "shortDescription": {"text": text or rule_id}}
    return list(rules).index(rule_id)


def _member_doc(model: Model | None, name: str, what: str) -> str:
    """The first docstring line of an invariant or temporal property, else `what name`."""
    if model is None:
        return ""
    member = getattr(type(model.spec), name, None)
    doc = (getattr(member, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else f"{what} {name}"


def _result(checked: Checked, rules: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    result, model = checked.result, checked.model
    if isinstance(result, NotChecked):
        rule_id = "mc/spec-error" if result.exit_code == 150 else "mc/config-error"
        return {
            "ruleId": rule_id,
            "ruleIndex": _rule(rules, rule_id, "the spec could not be checked"),
            "level": "error",
            "message": {"text": f"{result.spec}: {result.message}"},
            "locations": [_location(Location(display_path(result.spec), 1))],
        }
    if result.verdict in ("ok", "incomplete") or result.unreached:
        return None  # a reachability property never reached: see _reachability
    where = spec_location(model) if model else Location(display_path(result.spec), 1)
    if result.verdict == "violation" and (
        result.invariant or result.property or result.step_property
    ):
        name = result.invariant or result.property or result.step_property
        assert name is not None
        rule_id = f"{result.spec_name}.{name}"
        what = (
            "invariant"
            if result.invariant
            else "temporal property"
            if result.property
            else result.step_properties.get(name, "step property")
        )
        rule_text = _member_doc(model, name, what)
        if model is not None:
            where = member_location(model, name)
    elif result.verdict == "deadlock":
        rule_id, rule_text = "mc/deadlock", "a reachable state enables no action"
    else:
        rule_id, rule_text = "mc/evaluation-error", "spec code raised while being explored"
        err = result.error
        if model is not None and err is not None and err.kind != "init":
            where = member_location(model, err.name)
    lines = [f"{result.spec_name}: {headline(result)[0]}"]
    if result.trace:
        lines.append(behavior_intro(result))
        lines += format_behavior(result)
    out: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": _rule(rules, rule_id, rule_text),
        "level": "error",
        "message": {"text": "\n".join(lines)},
        "locations": [_location(where)],
        "properties": {
            "spec": result.spec,
            "constants": dict(result.constants),
            "verdict": result.verdict,
        },
    }
    if result.trace:
        out["codeFlows"] = [_code_flow(result, model)]
    return out


def _reachability(checked: Checked, rules: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """An error per reachability property never reached, at its definition; and for
    `--witness NAME` a note at NAME's definition whose code flow is the shortest example."""
    result, model = checked.result, checked.model
    if isinstance(result, NotChecked):
        return []
    out = []
    fallback = Location(display_path(result.spec), 1)
    for name in result.unreached:
        rule_id = f"{result.spec_name}.{name}"
        out.append(
            {
                "ruleId": rule_id,
                "ruleIndex": _rule(rules, rule_id, _member_doc(model, name, "reachable")),
                "level": "error",
                "message": {
                    "text": f"{result.spec_name}: reachability property {name} is never"
                    " reached: no reachable state satisfies it"
                },
                "locations": [
                    _location(member_location(model, name) if model is not None else fallback)
                ],
                "properties": {"spec": result.spec, "verdict": result.verdict},
            }
        )
    if result.witness is not None and result.trace:
        name = result.witness
        rule_id = f"{result.spec_name}.{name}"
        lines = [f"{result.spec_name}: {behavior_intro(result)}", *format_behavior(result)]
        out.append(
            {
                "ruleId": rule_id,
                "ruleIndex": _rule(rules, rule_id, _member_doc(model, name, "reachable")),
                "level": "note",
                "message": {"text": "\n".join(lines)},
                "locations": [
                    _location(member_location(model, name) if model is not None else fallback)
                ],
                "codeFlows": [_code_flow(result, model)],
                "properties": {"spec": result.spec, "witness": name},
            }
        )
    return out


def _warnings(checked: Checked, rules: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """A result per warning of the vacuity check, at the action's (or method's) definition:
    level warning, or error under --strict."""
    result, model = checked.result, checked.model
    if isinstance(result, NotChecked):
        return []
    out = []
    for warning in result.warnings:
        where = (
            member_location(model, warning.name)
            if model is not None
            else Location(display_path(result.spec), 1)
        )
        out.append(
            {
                "ruleId": "mc/vacuity",
                "ruleIndex": _rule(
                    rules, "mc/vacuity", "a part of the spec that the search never exercised"
                ),
                "level": "error" if result.strict else "warning",
                "message": {"text": f"{result.spec_name}: {warning.message}"},
                "locations": [_location(where)],
                "properties": {"spec": result.spec, "kind": warning.kind},
            }
        )
    return out


def to_sarif(runs: Sequence[Checked]) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    results = [r for r in (_result(c, rules) for c in runs) if r is not None]
    for checked in runs:
        results += _reachability(checked, rules) + _warnings(checked, rules)
    worst = batch.worst(int(c.result.exit_code) for c in runs)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mc",
                        "version": __version__,
                        "rules": list(rules.values()),
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"description": {"text": "the repository"}}},
                "invocations": [
                    {"executionSuccessful": worst not in (75, 150, 151), "exitCode": worst}
                ],
                "results": results,
            }
        ],
    }


def write(runs: Sequence[Checked], path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(to_sarif(runs), out, indent=2)
        out.write("\n")
