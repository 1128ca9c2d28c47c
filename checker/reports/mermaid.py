"""Mermaid text, which GitHub renders in Markdown (PR comments, issues, job summaries).

`--mermaid PATH` writes the trace graph as a `flowchart`; `--msc PATH` with a `.mmd` or `.md`
PATH writes the sequence chart as a `sequenceDiagram`. A `.md` PATH gets a fenced
```mermaid block, ready to paste.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.reports.chart import Chart

if TYPE_CHECKING:  # networkx only where a graph is built: mc check starts without it
    import networkx as nx

# Mermaid has no escape that works everywhere: Mermaid 11 leaves entity codes (`#quot;`)
# undecoded in sequence diagrams and flowchart labels, `;` ends a sequence statement, `%%`
# starts a comment, and flowchart labels are HTML. So the characters it would parse are
# replaced by look-alikes; the exact values are in the DOT, HTML, JSON and ITF reports.
_LOOKALIKES = str.maketrans(
    {
        '"': "\uff02",
        "#": "\uff03",
        ";": "\uff1b",
        "%": "\uff05",
        "<": "\u2039",
        ">": "\u203a",
        "\n": " ",
    }
)


def escape(text: str) -> str:
    return text.translate(_LOOKALIKES)


def flowchart(g: nx.DiGraph) -> str:
    lines = ["flowchart TD"]
    for node, data in g.nodes(data=True):
        label = "<br/>".join(escape(line) for line in data["label"])
        lines.append(f'  s{node}["{label}"]')
    for source, target, data in g.edges(data=True):
        label = "<br/>".join(escape(line) for line in data["label"])
        arrow = "-.->" if data.get("back") else "-->"  # dotted: the step closing a lasso
        lines.append(f'  s{source} {arrow}|"{label}"| s{target}')
    lines.append("  classDef initial stroke-width:3px")
    lines.append("  classDef violated stroke:#c62828,stroke-width:3px,fill:#ffebee")
    lines.append("  classDef loop stroke:#ef6c00,stroke-width:3px")
    for node, data in g.nodes(data=True):
        if data.get("violated"):
            lines.append(f"  class s{node} violated")
        elif data.get("loop"):
            lines.append(f"  class s{node} loop")
        elif data.get("initial"):
            lines.append(f"  class s{node} initial")
    return "\n".join(lines) + "\n"


def sequence_diagram(chart: Chart) -> str:
    """Mermaid draws no slanted arrows: a message is drawn when it is delivered (or, if it is
    still in flight, when it is sent), and its label says at which steps."""
    alias = {p: f"P{i}" for i, p in enumerate(chart.lifelines)}
    lines = ["sequenceDiagram"]
    lines += [f"  participant {alias[p]} as {escape(p)}" for p in chart.lifelines]
    events: list[tuple[int, int, str]] = []  # (step, order within the step, line)
    for box in chart.boxes:
        events.append(
            (box.step, 1, f"  Note over {alias[box.process]}: {box.step}. {escape(box.text)}")
        )
    for call in chart.calls:
        a, b = alias[call.caller], alias[call.callee]
        what = escape(call.message)
        events.append((call.step, 0, f"  {a}->>{b}: {call.step}. {what}"))
        events.append((call.step, 1, f"  {b}-->>{a}: {what} response"))
    for m in chart.messages:
        a, b, what = alias[m.sender], alias[m.receiver], escape(m.message)
        if m.received is None:
            events.append((m.sent or 0, 0, f"  {a}--)" + f"{b}: {m.sent}. {what} (in flight)"))
        elif m.sent is None:
            events.append((m.received, 0, f"  {a}-){b}: {m.received}. {what}"))
        else:
            events.append(
                (m.received, 0, f"  {a}-){b}: {m.received}. {what} (sent at step {m.sent})")
            )
    if not chart.lifelines:  # a trace of just an initial state: nothing happens
        lines += ["  participant P0 as (spec)", "  Note over P0: 1. initial state"]
    events.sort(key=lambda e: (e[0], e[1]))
    lines += [line for _, _, line in events]
    closing = f"{chart.violated} violated" if chart.violated else chart.loop
    if closing:
        first, last = "P0", f"P{max(len(chart.lifelines) - 1, 0)}"
        span = first if first == last else f"{first},{last}"
        lines.append(f"  Note over {span}: {escape(closing)}")
    return "\n".join(lines) + "\n"


def fenced(text: str, path: str) -> str:
    """Wrap Mermaid text in a ```mermaid block when it goes to a Markdown file."""
    return f"```mermaid\n{text}```\n" if path.endswith(".md") else text


def write(text: str, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(fenced(text, path))
