"""`mc list SPEC`: what a spec declares, as text: its constants (with their values and
defaults), actions (with parameter domains, fairness and switches), invariants, reachability
properties, final states, assumptions, declared types, constraints, view, symmetry and
temporal properties."""

from __future__ import annotations

import inspect

from checker import liveness
from checker.model import Model
from checker.spec import (
    assumptions_of,
    constants_of,
    fairness_of,
    switches_of,
)
from checker.values import kinds, show


def describe(model: Model) -> str:
    """What `mc list` prints: the spec's constants, actions, predicates and properties."""
    cls = type(model.spec)
    lines = [f"{model.name}: {model.compiled.title}", "", "Constants:"]
    declared = constants_of(cls)
    for name, const in declared.items():
        value = model.constants[name]
        default = "" if value == const.default else f" (default {const.default!r})"
        lines.append(f"  {name} = {value!r}{default}  [{const.type.__name__}]  {const.doc}")
    if not declared:
        lines.append("  (none)")
    lines += ["", "Actions:"]
    for act in model.actions:
        domains = [
            f"{p} in {'(per state)' if callable(d) else show(d)}"
            for p, d in zip(act.params, act.domains)
        ]
        doc = _first_line(act.fn)
        signature = f"{act.name}({', '.join(domains)})"
        fair = fairness_of(act.fn)
        if fair.whole:
            signature += f"  [{'SF' if fair.whole == 'strong' else 'WF'}]"
        if fair.each:
            signature += f"  [{'SF' if fair.each == 'strong' else 'WF'} for each binding]"
        switch = switches_of(act.fn)
        if switch:
            signature += f"  [switch: {', '.join(switch)}]"
        lines.append(f"  {signature}" + (f"  {doc}" if doc else ""))
    lines += ["", "Invariants:"]
    for inv in model.invariants:
        doc = _first_line(inv.fn)
        lines.append(f"  {inv.name}" + (f"  {doc}" if doc else ""))
    if not model.invariants:
        lines.append("  (none)")
    lines += ["", "Reachability properties:"]
    for prop in model.reachables:
        doc = _first_line(prop.fn)
        lines.append(f"  {prop.name}" + (f"  {doc}" if doc else ""))
    for name, switch in model.compiled.reachables_off.items():
        lines.append(f"  {name}  [off: {switch}]")
    if lines[-1] == "Reachability properties:":
        lines.append("  (none)")
    # Shown only when declared: most specs have none of these.
    for title, members in (
        ("Final states (@terminal)", model.terminals),
        ("Assumptions (@assume)", [(n, f) for n, f in assumptions_of(cls).items()]),
    ):
        if members:
            lines += ["", f"{title}:"]
            for member in members:
                name, fn = (member.name, member.fn) if hasattr(member, "fn") else member
                doc = _first_line(fn)
                lines.append(f"  {name}" + (f"  {doc}" if doc else ""))
    declared = model.compiled.declared_types
    if declared:
        lines += ["", "Declared types:"]
        lines += [f"  {name}: {kinds.python_type(kind)}" for name, kind in declared.items()]
    if model.steps is not None:
        lines += ["", "Step properties (@step_property, refines):"]
        for check in model.steps.checks:
            doc = _first_line(getattr(type(model.spec), check.name))
            lines.append(f"  {check.name}: {check.formula}" + (f"  {doc}" if doc else ""))
    for title, constraints in (
        ("State constraints", model.constraints),
        ("State constraints, TLC's (admit=False)", model.exclusions),
        ("Action constraints", model.action_constraints),
    ):
        if constraints:
            lines += ["", f"{title}:"]
            for c in constraints:
                doc = _first_line(c.fn)
                lines.append(f"  {c.name}" + (f"  {doc}" if doc else ""))
    if model.view is not None:
        doc = _first_line(model.view)
        lines += ["", "View:", "  view" + (f"  {doc}" if doc else "")]
    if model.symmetry is not None:
        lines += ["", f"Symmetry: {model.symmetry.describe()}"]
        for name, values in model.symmetry.sets.items():
            lines.append(f"  {name} = {show(values)}")
    lines += ["", "Temporal properties:"]
    shown = set()  # a property with domains is listed once, as declared
    for prop in liveness.select(model):
        if prop.declared in shown:
            continue
        shown.add(prop.declared)
        member = getattr(type(model.spec), prop.declared)
        formula = getattr(member, "formula", prop.formula)
        doc = _first_line(member)
        lines.append(f"  {prop.declared}: {formula}" + (f"  {doc}" if doc else ""))
    if lines[-1] == "Temporal properties:":
        lines.append("  (none)")
    return "\n".join(lines) + "\n"


def _first_line(fn: object) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.splitlines()[0] if doc else ""
