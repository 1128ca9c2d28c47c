"""The plan of an ablation: the spec's rules and the table's columns, read from the spec with
every rule on, and a task per row (every rule on, each rule off, each pair off if asked).
Bad input is refused here, before any check."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from itertools import combinations
from typing import Any

from checker import liveness
from checker.ablation import ALL_ON, Ablation, Column, Settings
from checker.errors import ConfigError
from checker.loader import load_model, load_spec_class
from checker.spec import all_rules_of, rules_of


def plan(
    path: str,
    defines: Mapping[str, str],
    rules: Sequence[str],
    pairs: bool,
    settings: Settings,
    workers: int = 1,
    engine: str = "local",
) -> tuple[Ablation, list[dict[str, Any]]]:
    """The ablation to run (its columns from the spec with every rule on, no rows yet) and a
    JSON-able task per row. Refused: a spec without rules, an unknown rule, a rule or the
    all-rules switch given with -D, a misspelt -D."""
    cls, _ = load_spec_class(path)
    declared = rules_of(cls)
    if not declared:
        raise ConfigError(
            f"{path}: {cls.__name__} declares no rules to ablate (declare each rule of the"
            ' protocol change with `name = rule("one line from the KIP")`)'
        )
    unknown = [r for r in rules if r not in declared]
    if unknown:
        raise ConfigError(
            f"--rule {unknown[0]}: {cls.__name__} has no such rule (rules: {', '.join(declared)})"
        )
    switch = all_rules_of(cls)
    fixed = [n for n in defines if n in declared or n == switch]
    if fixed:
        raise ConfigError(
            f"-D {fixed[0]}: mc ablate switches the rules itself (every rule on, then each"
            " off); choose the rules with --rule"
        )
    model = load_model(path, defines)  # a misspelt -D fails here, before any check
    props = liveness.select(model) if settings.liveness else []
    columns = [Column("deadlock", "deadlock", "no reachable state without a successor")]
    columns = columns if settings.deadlock else []
    columns += [Column(i.name, "invariant", _doc(i.fn)) for i in model.invariants]
    columns += [Column(r.name, "reachable", _doc(r.fn)) for r in model.reachables]
    steps = [] if model.steps is None else model.steps.checks
    columns += [Column(c.name, "step", _doc(getattr(cls, c.name)) or c.formula) for c in steps]
    seen: dict[str, Column] = {}
    for p in props:
        member = getattr(cls, p.declared)
        seen.setdefault(p.declared, Column(p.declared, "property", _doc(member)))
    columns += list(seen.values())
    chosen = list(rules) or list(declared)
    offs: list[tuple[str, ...]] = [(), *((r,) for r in chosen)]
    if pairs:
        offs += list(combinations(chosen, 2))
    # Temporal properties are checked without symmetry and without the view (mc check's rule):
    # every check of an ablation then runs without them, so that the rows' counts compare.
    symmetry = False if props and model.symmetry is not None else None
    view = False if props and model.view is not None else None
    tasks = [
        {
            "path": str(path),
            "name": " + ".join(off) if off else ALL_ON,
            "off": list(off),
            "constants": {**defines, **{r: "false" for r in off}},
            "columns": [asdict(c) for c in columns],
            "settings": asdict(settings),
            "symmetry": symmetry,
            "view": view,
        }
        for off in offs
    ]
    ablation = Ablation(
        spec=str(path),
        spec_name=model.name,
        title=model.compiled.title,
        constants=dict(defines),
        all_rules=switch,
        rules={n: r.doc for n, r in declared.items()},
        columns=columns,
        rows=[],
        settings=settings,
        workers=workers,
        engine=engine,
        only=list(rules),
        pairs=pairs,
        bounds={n: v for n, v in model.constants.items() if type(v) is int},
        planned=len(tasks),
    )
    return ablation, tasks


def _doc(fn: object) -> str:
    text = inspect.getdoc(fn) or ""
    return text.splitlines()[0] if text else ""
