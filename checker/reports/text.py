"""The human-readable report: verdict, trace with only the changed variables, counts."""

from __future__ import annotations

from checker.reports.graph import lasso_line
from checker.result import CheckResult, Simulation, Step
from checker.values import count, show
from checker.values.record import Record


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
    states = count(n, "state")
    if result.verdict == "error":
        return f"The behavior up to the state where it failed, {states}:"
    if result.witness is not None:
        return f"The shortest behavior reaching {result.witness}, {states}:"
    if result.loop_start is None:
        return f"The shortest behavior, {states}:"
    if result.loop_back is None:
        return f"A fair behavior that violates it: {states}, then stuttering in state {n} forever:"
    return (
        f"A fair behavior that violates it: {states}, then back to state"
        f" {result.loop_start + 1} and round again forever:"
    )


def headline(result: CheckResult) -> list[str]:
    """The verdict in words (and, for an error, the spec's traceback)."""
    sim = result.simulation
    if result.verdict == "ok" and sim is not None:
        return [
            f"No violation in {count(sim.walks, 'trace')} of depth <= {sim.max_depth}"
            f" ({count(sim.visited, 'state')} visited, {result.distinct_states:,} distinct);"
            " simulation is not a proof."
        ]
    if result.verdict == "ok":
        if not result.invariants:
            lines = [f"No invariant to check; explored {_distinct(result)}."]
        else:
            lines = [f"All invariants hold over {_distinct(result)}."]
        if result.properties:
            lines.append(
                f"Every temporal property holds under this fairness"
                f" (checked in {result.liveness_seconds:.2f} s)."
            )
        if result.reachable:
            reached = ", ".join(f"{n} (depth {result.reached[n]})" for n in result.reachable)
            lines.append(f"Every reachability property is reached: {reached}.")
        return lines
    if result.verdict == "violation" and result.unreached:
        names = ", ".join(result.unreached)
        lines = [
            f"Error: reachability propert{'ies' if len(result.unreached) > 1 else 'y'} {names}"
            f" {'are' if len(result.unreached) > 1 else 'is'} never reached: no reachable"
            " state satisfies"
            f" {'them' if len(result.unreached) > 1 else 'it'}."
        ]
        if result.invariants:
            lines.append(f"All invariants hold over {_distinct(result)}.")
        return lines
    if result.verdict == "violation" and result.property is not None:
        formula = result.properties.get(result.property, "")
        lines = [f"Error: temporal property {result.property} ({formula}) is violated."]
        if result.invariants:
            lines.append(f"All invariants hold over {_distinct(result)}.")
        return lines
    if result.verdict == "violation" and result.step_property is not None:
        said = result.step_violation or f"step property {result.step_property} is violated"
        return [f"Error: {said}."]
    if result.verdict == "violation" and result.outside_constraints:
        return [
            f"Error: invariant {result.invariant} is violated in the last state, which is"
            " outside the constraints (@constraint(admit=False): checked, not added)."
        ]
    if result.verdict == "violation":
        return [f"Error: invariant {result.invariant} is violated."]
    if result.verdict == "deadlock":
        return ["Error: deadlock reached (a state with no enabled action)."]
    if result.verdict == "incomplete" and result.engine_failed:
        return [
            f"Error: the search could not go on: {result.bound}. No violation in the"
            f" {count(result.distinct_states, 'state')} explored (their counts below are exact),"
            " but this is not a proof.",
            *([result.advice] if result.advice else []),
        ]
    if result.verdict == "incomplete":
        return [
            f"Search incomplete: {result.bound}. No violation in the"
            f" {count(result.distinct_states, 'state')} explored, but this is not a proof."
        ]
    err = result.error
    assert err is not None
    what = err.kind
    if err.kind == "action":
        params = ", ".join(f"{k}={show(v)}" for k, v in err.params.items())
        what = f"action {err.name}({params})"
    elif err.kind == "property":
        what = f"temporal property {err.name}"
    elif err.name != err.kind:  # "invariant no_loss", "constraint bounded"; "view", "init"
        what = f"{err.kind} {err.name}"
    lines = [f"Error: {what} {err.message}"]
    if err.kind != "init" and result.trace:  # the trace ends in the state it was evaluated in
        lines.append(f"  in state {show(result.trace[-1].state)}")
    if err.traceback:
        if not err.traceback.startswith("Traceback"):  # with --debug it is Python's own
            lines.append("Traceback (spec code only):")
        lines.extend("  " + line for line in err.traceback.rstrip().splitlines())
    return lines


def render(result: CheckResult) -> str:
    sim = result.simulation
    doing = "Checking" if sim is None else "Simulating"
    lines = [f"{doing} {result.spec_name} ({result.spec})"]
    if result.constants:
        lines.append("  constants: " + ", ".join(f"{k}={v}" for k, v in result.constants.items()))
    lines.append("  invariants: " + (", ".join(result.invariants) or "none"))
    if result.step_properties:
        steps = [f"{n} ({f})" for n, f in result.step_properties.items()]
        lines.append("  step properties: " + ", ".join(steps))
    if result.constraints:
        lines.append("  state constraints: " + ", ".join(result.constraints))
    if result.action_constraints:
        lines.append("  action constraints: " + ", ".join(result.action_constraints))
    if result.view:
        lines.append("  view: states are identified by the spec's view of them")
    if result.symmetry:
        lines.append(f"  symmetry: {result.symmetry}")
    if result.reachable:
        lines.append("  reachable: " + ", ".join(result.reachable))
    if result.properties:
        checked = [f"{name} ({formula})" for name, formula in result.properties.items()]
        lines.append("  properties: " + ", ".join(checked))
        fairness = ", ".join(result.fairness) or "none (a behavior may stop in any state)"
        lines.append("  fairness: " + fairness)
    if sim is not None:
        lines.append(f"  seed {sim.seed}: {sim.traces:,} traces of depth <= {sim.max_depth}")
    lines.extend(headline(result))
    lines.extend(vacuity_lines(result))
    if result.trace:
        if sim is not None:
            n = len(result.trace)
            lines.append(
                f"Found at depth {sim.found_depth} in trace {sim.found_trace}, shortened to"
                f" depth {n} ({n - 1} steps):"
            )
        else:
            lines.append(behavior_intro(result))
        lines.extend(format_behavior(result))
    lines.extend(_counts(result) if sim is None else _simulation_counts(result, sim))
    if result.coverage and (result.complete or any(c.fired for c in result.coverage)):
        width = max(len(c.name) for c in result.coverage)
        new = "new distinct states" if sim is None else "steps to a state not visited before"
        lines.append(f"Coverage (successors generated / {new}):")
        for cov in result.coverage:
            note = ""
            if cov.name in result.off:
                note = f"   off ({result.off[cov.name]})"
            elif cov.fired == 0 and result.complete:
                note = "   never enabled"
            lines.append(f"  {cov.name:<{width}} {cov.fired:>12,} {cov.new:>12,}{note}")
    return "\n".join(lines) + "\n"


def vacuity_lines(result: CheckResult) -> list[str]:
    """The vacuity check's warnings, the actions switched off, and what --strict makes of
    them (checker.vacuity)."""
    lines = [f"Warning: {w.message}" for w in result.warnings]
    if result.off:
        lines.append("Off (switched off by the constants):")
        grouped: dict[str, list[str]] = {}
        for name, switch in result.off.items():
            grouped.setdefault(switch, []).append(name)
        lines += [f"  {', '.join(names)}: {switch}" for switch, names in grouped.items()]
    if result.strict and result.warnings:
        n = count(len(result.warnings), "warning")
        lines.append(f"Error: --strict: {n} about what never happened (exit 15).")
    return lines


def _counts(result: CheckResult) -> list[str]:
    rate = result.distinct_states / result.seconds if result.seconds > 0 else 0.0
    return [
        f"{count(result.states_generated, 'state')} generated, {_distinct(result)} found,"
        f" {count(result.queue, 'state')} left on queue.",
        f"Depth of the search: {result.depth}.",
        _collisions(result),
        f"Finished in {result.seconds:.2f} s ({rate:,.0f} distinct states/s).",
    ]


def _distinct(result: CheckResult) -> str:
    return count(result.distinct_states, "distinct state")


def _collisions(result: CheckResult) -> str:
    """TLC's optimistic estimate: the same for every engine (the JSON report also has the one
    from the closest pair of fingerprints, which only the local engine keeps)."""
    return (
        "Probability of a fingerprint collision: calculated (optimistic):"
        f" {result.collision_probability:.1e}."
    )


def _simulation_counts(result: CheckResult, sim: Simulation) -> list[str]:
    rate = sim.visited / result.seconds if result.seconds > 0 else 0.0
    return [
        f"{count(sim.visited, 'state')} visited in {count(sim.walks, 'trace')},"
        f" {result.distinct_states:,} distinct; {count(result.states_generated, 'successor')}"
        " generated.",
        f"Deepest state visited: depth {result.depth}.",
        f"Finished in {result.seconds:.2f} s ({rate:,.0f} states visited/s).",
    ]
