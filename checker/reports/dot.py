"""`--dot PATH`: a trace graph (or `mc graph`'s state space) as Graphviz DOT text.

Written by hand from the networkx graph rather than through pydot: DOT's quoting rules are
short, and the checker keeps no dependency just to print text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # networkx only where a graph is built: mc check starts without it
    import networkx as nx


_VIOLATED = 'color="#c62828", penwidth=2.5, fillcolor="#ffebee"'
_INITIAL = 'penwidth=2, fillcolor="#e8f5e9"'
_LOOP = 'color="#ef6c00", penwidth=2'  # a state on a lasso's cycle
# The step closing a lasso's cycle: drawn without pulling the earlier state down the page.
_BACK = 'style=dashed, color="#ef6c00", fontcolor="#ef6c00", penwidth=2, constraint=false'


def quote(text: str) -> str:
    """A DOT double-quoted string (backslashes and quotes escaped; newlines as `\\n`)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _label(lines: list[str]) -> str:
    # One left-justified line each (`\l`), so that `name = value` columns read as a table.
    body = "".join(quote(line)[1:-1] + "\\l" for line in lines)
    return f'"{body}"'


def to_dot(g: nx.DiGraph, name: str = "trace") -> str:
    lines = [
        f"digraph {quote(name)} {{",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor="#fafafa",'
        ' fontname="DejaVu Sans Mono", fontsize=10];',
        '  edge [fontname="DejaVu Sans Mono", fontsize=10];',
    ]
    for node, data in g.nodes(data=True):
        extra = _VIOLATED if data.get("violated") else _INITIAL if data.get("initial") else ""
        if data.get("loop"):
            extra = ", ".join(filter(None, (extra, _LOOP)))
        attrs = f"label={_label(data['label'])}" + (f", {extra}" if extra else "")
        lines.append(f"  s{node} [{attrs}];")
    for source, target, data in g.edges(data=True):
        back = f", {_BACK}" if data.get("back") else ""
        label = quote(chr(10).join(data["label"]))
        lines.append(f"  s{source} -> s{target} [label={label}{back}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(g: nx.DiGraph, path: str, name: str = "trace") -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(to_dot(g, name))
