"""`--itf PATH`: the trace in the Informal Trace Format (ITF), the JSON traces of Apalache and
Quint (https://apalache-mc.org/docs/adr/015adr-trace.html), for their tools and for
model-based tests that replay a counterexample against an implementation.

Values: ints as {"#bigint": "N"}, strings and booleans as themselves, tuples as {"#tup": [..]},
frozensets as {"#set": [..]} (in canonical order), Records with only identifier-like string
keys as JSON objects (ITF records), other Records as {"#map": [[key, value], ..]}, and what
ITF has no form for (None, bytes) as {"#unserializable": "<repr>"}. Each state's "#meta" has
its index and, beyond what ITF requires, the action and parameters that led to it; the
spec's constants are ITF "params", present in every state.

A temporal property's lasso sets ITF's "loop": the index of the state the last one goes back
to (the last state's own index when it stutters forever); the trace's "#meta" names the
action that closes the cycle ("loop_back").
"""

from __future__ import annotations

import json
from typing import Any

from checker.result import CheckResult
from checker.values import show
from checker.values.encoding import canonical_order
from checker.values.record import Record

FORMAT_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"


def _is_record(value: Record) -> bool:
    return all(isinstance(k, str) and k.isidentifier() for k in value)


def to_itf_value(value: Any) -> Any:
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, Record):  # before tuple: a Record is a tuple underneath
        if value and _is_record(value):
            return {k: to_itf_value(v) for k, v in value.items()}
        return {"#map": [[to_itf_value(k), to_itf_value(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"#tup": [to_itf_value(v) for v in value]}
    if isinstance(value, frozenset):
        return {"#set": [to_itf_value(v) for v in canonical_order(value)]}
    return {"#unserializable": show(value)}


def to_itf(result: CheckResult) -> dict[str, Any]:
    params = list(result.constants)
    variables = [str(v) for v in result.trace[0].state] if result.trace else []
    description = f"mc: {result.spec_name}, verdict {result.verdict}"
    if result.invariant:
        description += f": invariant {result.invariant} is violated in the last state"
    if result.step_property:
        description += f": {result.step_violation}"
    if result.property:
        description += f": temporal property {result.property} is violated by this lasso"
    if result.witness:
        description += f": the shortest behavior reaching {result.witness} (a witness)"
    states = []
    for index, step in enumerate(result.trace):
        meta: dict[str, Any] = {"index": index}
        if step.action is not None:
            meta["action"] = step.action
            meta["params"] = {k: to_itf_value(v) for k, v in step.params.items()}
        state = {"#meta": meta}
        state.update({p: to_itf_value(result.constants[p]) for p in params})
        state.update({str(k): to_itf_value(v) for k, v in step.state.items()})
        states.append(state)
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": FORMAT_URL,
        "source": result.spec,
        "description": description,
        "status": result.verdict,
    }
    trace: dict[str, Any] = {"#meta": meta, "params": params, "vars": variables, "states": states}
    if result.loop_start is not None:
        trace["loop"] = result.loop_start
        back = result.loop_back
        if back is not None:
            params_of = {k: to_itf_value(v) for k, v in back.params.items()}
            meta["loop_back"] = {"action": back.action, "params": params_of}
        else:
            meta["loop_back"] = "stuttering"
    return trace


def write(result: CheckResult, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(to_itf(result), out, indent=1)
        out.write("\n")
