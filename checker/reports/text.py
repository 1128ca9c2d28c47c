"""The human-readable report: verdict, trace with only the changed variables, counts."""

from __future__ import annotations

from checker.graph import lasso_line
from checker.result import CheckResult, Step
from checker.state import Record
from checker.values import show


def describe_step(step: Step) -> str:
    if step.action is None:
        return "initial state"
    params = ", ".join(f"{k}={show(v)}" for k, v in step.params.items())
    return f"{step.action}({params})"


def _field(key: object) -> str:
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{show(key)}]"


def format_trace(trace: list[Step]) -> list[str]:
    """One block per state; after the first, only the variables that changed (TLC -difftrace)."""
    lines: list[str] = []
    previous = None
    for number, step in enumerate(trace, start=1):
        lines.append(f"State {number}: {describe_step(step)}")
        changed = []
        for name, value in step.state.items():
            before = None if previous is None else previous.get(name)
            if previous is not None and before == value:
                continue
            if (
                isinstance(before, Record)
                and isinstance(value, Record)
                and before.keys() == value.keys()
            ):
                # A record of counters or flags: show just the fields that changed.
                changed += [(f"{name}{_field(k)}", v) for k, v in value.items() if before[k] != v]
            else:
                changed.append((name, value))
        width = max((len(str(name)) for name, _ in changed), default=0)
        for name, value in changed:
            lines.append(f"    {name!s:<{width}} = {show(value)}")
        if not changed:
            lines.append("    (no variable changed)")
        previous = step.state
    return lines


def format_behavior(result: CheckResult) -> list[str]:
    """The trace, and for a temporal property's lasso how it goes on, as TLC says it."""
    line = lasso_line(result)
    return format_trace(result.trace) + ([line] if line else [])


def behavior_intro(result: CheckResult) -> str:
    n = len(result.trace)
    if result.verdict == "error":
        return f"The behavior up to the state where it failed, {n} states:"
    if result.loop_start is None:
        return f"The shortest behavior, {n} states:"
    states = "1 state" if n == 1 else f"{n} states"
    if result.loop_back is None:
        return f"A fair behavior that violates it: {states}, then stuttering in state {n} forever:"
    return (
        f"A fair behavior that violates it: {states}, then back to state"
        f" {result.loop_start + 1} and round again forever:"
    )


def headline(result: CheckResult) -> list[str]:
    """The verdict in words (and, for an error, the spec's traceback)."""
    if result.verdict == "ok":
        if not result.invariants:
            lines = [f"No invariant to check; explored {result.distinct_states:,} distinct states."]
        else:
            lines = [f"All invariants hold over {result.distinct_states:,} distinct states."]
        if result.properties:
            lines.append(
                f"Every temporal property holds under this fairness"
                f" (checked in {result.liveness_seconds:.2f} s)."
            )
        return lines
    if result.verdict == "violation" and result.property is not None:
        formula = result.properties.get(result.property, "")
        lines = [f"Error: temporal property {result.property} ({formula}) is violated."]
        if result.invariants:
            lines.append(f"All invariants hold over {result.distinct_states:,} distinct states.")
        return lines
    if result.verdict == "violation":
        return [f"Error: invariant {result.invariant} is violated."]
    if result.verdict == "deadlock":
        return ["Error: deadlock reached (a state with no enabled action)."]
    if result.verdict == "incomplete":
        return [
            f"Search incomplete: {result.bound}. No violation in the {result.distinct_states:,}"
            " states explored, but this is not a proof."
        ]
    err = result.error
    assert err is not None
    what = err.kind
    if err.kind == "action":
        params = ", ".join(f"{k}={show(v)}" for k, v in err.params.items())
        what = f"action {err.name}({params})"
    elif err.kind == "invariant":
        what = f"invariant {err.name}"
    elif err.kind == "property":
        what = f"temporal property {err.name}"
    lines = [f"Error: {what} {err.message}"]
    if err.traceback:
        lines.append("Traceback (spec code only):")
        lines.extend("  " + line for line in err.traceback.rstrip().splitlines())
    return lines


def render(result: CheckResult) -> str:
    lines = [f"Checking {result.spec_name} ({result.spec})"]
    if result.constants:
        lines.append("  constants: " + ", ".join(f"{k}={v}" for k, v in result.constants.items()))
    lines.append("  invariants: " + (", ".join(result.invariants) or "none"))
    if result.properties:
        checked = [f"{name} ({formula})" for name, formula in result.properties.items()]
        lines.append("  properties: " + ", ".join(checked))
        fairness = ", ".join(result.fairness) or "none (a behavior may stop in any state)"
        lines.append("  fairness: " + fairness)
    lines.extend(headline(result))
    if result.trace:
        lines.append(behavior_intro(result))
        lines.extend(format_behavior(result))
    lines.append(
        f"{result.states_generated:,} states generated, {result.distinct_states:,} distinct states"
        f" found, {result.queue:,} states left on queue."
    )
    lines.append(f"Depth of the search: {result.depth}.")
    rate = result.distinct_states / result.seconds if result.seconds > 0 else 0.0
    lines.append(f"Finished in {result.seconds:.2f} s ({rate:,.0f} distinct states/s).")
    if result.coverage:
        width = max(len(c.name) for c in result.coverage)
        lines.append("Coverage (successors generated / new distinct states):")
        for cov in result.coverage:
            note = "   never enabled" if cov.fired == 0 else ""
            lines.append(f"  {cov.name:<{width}} {cov.fired:>12,} {cov.new:>12,}{note}")
    return "\n".join(lines) + "\n"
