"""What `mc explore`'s page shows of a state, as HTML fragments in a JSON view: the state
panel and the sequence chart are the HTML report's own (checker.reports.html.state_panel,
checker.reports.msc over checker.reports.chart), the path as the text report writes a trace;
the choices and the predicates are drawn here. Every piece of spec text goes through
`html.escape`; the page's script inserts these fragments and builds no markup from data.
"""

from __future__ import annotations

from html import escape
from typing import Any

from checker.explore.navigate import Check, Choice, Navigator, Path, Walk
from checker.reports import msc
from checker.reports.chart import sequence_chart
from checker.reports.graph import describe_action
from checker.reports.html import state_panel
from checker.reports.text import format_trace
from checker.values import show

_KINDS = {
    "invariant": "Invariants",
    "reachable": "Reachability properties",
    "constraint": "State constraints",
    "terminal": "Final states (@terminal)",
}


def view(navigator: Navigator, walk: Walk) -> dict[str, Any]:
    """Everything the page shows of the walk's last state."""
    steps = walk.steps
    checks = navigator.checks(walk.state)
    choices = navigator.choices(walk)
    broken = [c.name for c in checks if c.kind == "invariant" and c.value is False]
    previous = steps[-2].state if len(steps) > 1 else None
    enabled = sum(c.enabled for c in choices)
    return {
        "path": str(walk.path),
        "depth": walk.depth,
        "title": f"State {walk.depth}: {describe_action(steps[-1].action, steps[-1].params)}",
        "violated": broken,
        "deadlock": navigator.deadlocked(walk, choices),
        "enabled": enabled,
        "state": state_panel(walk.depth, steps[-1], previous),
        "chart": msc.render(sequence_chart(steps, broken[0] if broken else None), prefix="msc"),
        "steps": _steps(walk),
        "inits": _inits(navigator, walk),
        "text": escape("\n".join(format_trace(steps))),
        "checks": _checks(checks),
        "choices": _choices(choices),
    }


def _steps(walk: Walk) -> str:
    """The path so far, each state a link to the path up to it."""
    items = []
    for number, step in enumerate(walk.steps, start=1):
        here = number == walk.depth
        go = "" if here else f' data-go="{escape(str(walk.path.prefix(number)))}"'
        cls = ' class="selected"' if here else ""
        items.append(
            f'<li{cls}{go} data-step="{number}"><span class="n">{number}</span>'
            f"{escape(describe_action(step.action, step.params))}</li>"
        )
    return "".join(items)


def _inits(navigator: Navigator, walk: Walk) -> str:
    """With several initial states, a button to each (the path starts at one of them)."""
    count = len(navigator.model.initial_states())
    if count == 1:
        return ""
    buttons = "".join(
        f'<button type="button" data-go="{i}"{" disabled" * (i == walk.path.init)}>{i + 1}</button>'
        for i in range(count)
    )
    return f'<p class="inits">Initial states: {buttons}</p>'


def _checks(checks: list[Check]) -> str:
    out = []
    for kind, title in _KINDS.items():
        mine = [c for c in checks if c.kind == kind]
        if not mine:
            continue
        rows = []
        for c in mine:
            value = {True: "true", False: "false", None: "error"}[c.value]
            note = f' <span class="why">{escape(c.message)}</span>' if c.message else ""
            rows.append(
                f'<li class="check {value}" data-kind="{kind}" data-name="{escape(c.name)}"'
                f' data-value="{value}"><span class="mark">{_MARKS[value]}</span>'
                f"{escape(c.name)}{note}</li>"
            )
        out.append(f'<h3>{title}</h3><ul class="checks">{"".join(rows)}</ul>')
    return "".join(out) or '<p class="hint">The spec declares no predicate.</p>'


_MARKS = {"true": "✓", "false": "✗", "error": "!"}


def _choices(choices: list[Choice]) -> str:
    """The enabled choices, each a button to its successor; then the others, folded."""
    enabled, disabled = [], []
    for c in choices:
        label = escape(describe_action(c.action, c.params))
        params = escape(", ".join(f"{k}={show(v)}" for k, v in c.params.items()))
        attrs = f' data-action="{escape(c.action)}" data-params="{params}"'
        notes = []
        if c.of > 1 and c.path is not None:
            notes.append(
                f'<span class="why">successor {c.path.moves[-1].successor + 1} of {c.of}</span>'
            )
        if c.violates:
            notes.append(f'<span class="bad">breaks {escape(", ".join(c.violates))}</span>')
        if c.outside:
            notes.append(f'<span class="why">leaves the constraint {escape(c.outside)}</span>')
        if c.revisits is not None:
            notes.append(f'<span class="why">back to state {c.revisits}</span>')
        if c.state is not None:
            changed = ", ".join(map(str, c.changed)) or "no variable changes"
            notes.append(f'<span class="changes">changes {escape(changed)}</span>')
        if c.reason:
            notes.append(f'<span class="why">{escape(c.reason)}</span>')
        note = f'<div class="notes">{" · ".join(notes)}</div>' if notes else ""
        if c.enabled:
            assert c.path is not None
            cls = "choice enabled" + (" breaks" if c.violates else "")
            enabled.append(
                f'<li class="{cls}"{attrs} data-enabled="true"><button type="button"'
                f' data-go="{escape(str(c.path))}">{label}</button>{note}</li>'
            )
        else:
            cls = "choice disabled" + (" error" if c.error else "")
            disabled.append(
                f'<li class="{cls}"{attrs} data-enabled="false"><span class="label">{label}'
                f"</span>{note}</li>"
            )
    if disabled:
        errors = sum(c.error for c in choices)
        raised = f", {errors} raised" if errors else ""
        enabled.append(
            f'<li class="others"><details{" open" * bool(errors)}><summary>{len(disabled)}'
            f" not enabled{raised}</summary><ol>{''.join(disabled)}</ol></details></li>"
        )
    return "".join(enabled)


def error_view(path: str, message: str) -> dict[str, Any]:
    """A path that does not walk here: what the page says instead of a state."""
    return {"path": path, "error": message, "start": str(Path(0))}
