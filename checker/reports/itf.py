"""`--itf PATH`: the trace in the Informal Trace Format (ITF), the JSON traces of Apalache and
Quint (https://apalache-mc.org/docs/adr/015adr-trace.html), for their tools and for
model-based tests that replay a counterexample against an implementation.

Values: ints as {"#bigint": "N"}, strings and booleans as themselves, tuples as {"#tup": [..]},
frozensets as {"#set": [..]} (in canonical order), Records with only identifier-like string
keys as JSON objects (ITF records), other Records as {"#map": [[key, value], ..]}, and what
ITF has no form for (None, bytes) as {"#unserializable": "<repr>"}. Each state's "#meta" has
its index and, beyond what ITF requires, the action and parameters that led to it; the
spec's constants are ITF "params", present in every state.
"""

from __future__ import annotations

import json
from typing import Any

from checker.result import CheckResult
from checker.state import Record, canonical_order
from checker.values import show

FORMAT_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"


def _is_record(value: Record) -> bool:
    return all(isinstance(k, str) and k.isidentifier() for k in value)


def to_itf_value(value: Any) -> Any:
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, tuple):
        return {"#tup": [to_itf_value(v) for v in value]}
    if isinstance(value, frozenset):
        return {"#set": [to_itf_value(v) for v in canonical_order(value)]}
    if isinstance(value, Record):
        if value and _is_record(value):
            return {k: to_itf_value(v) for k, v in value.items()}
        return {"#map": [[to_itf_value(k), to_itf_value(v)] for k, v in value.items()]}
    return {"#unserializable": show(value)}


def to_itf(result: CheckResult) -> dict[str, Any]:
    params = list(result.constants)
    variables = [str(v) for v in result.trace[0].state] if result.trace else []
    description = f"mc: {result.spec_name}, verdict {result.verdict}"
    if result.invariant:
        description += f": invariant {result.invariant} is violated in the last state"
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
    return {
        "#meta": {
            "format": "ITF",
            "format-description": FORMAT_URL,
            "source": result.spec,
            "description": description,
            "status": result.verdict,
        },
        "params": params,
        "vars": variables,
        "states": states,
    }


def write(result: CheckResult, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(to_itf(result), out, indent=1)
        out.write("\n")
