"""A trace graph drawn as SVG without Graphviz, for the HTML report: a trace is a path, so
its layout is a column of state boxes joined by action arrows; a lasso's back edge runs up
the right-hand side, from the last state to the one its cycle returns to. (`--svg` uses
Graphviz, which also lays out `mc graph`'s state spaces.)"""

from __future__ import annotations

import itertools
from html import escape
from typing import TYPE_CHECKING

from checker.reports.msc import CHAR

if TYPE_CHECKING:  # networkx only where a graph is built: mc check starts without it
    import networkx as nx

LINE = 16
PAD = 8
ARROW = 36
MAX_LINE = 100  # characters; the HTML state panel shows values in full


def _clip(text: str, limit: int = MAX_LINE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(g: nx.DiGraph, prefix: str = "tg") -> str:
    nodes = sorted(g.nodes)
    pairs = list(itertools.pairwise(nodes))
    back = [(a, b, d) for a, b, d in g.edges(data=True) if d.get("back")]
    forward = g.number_of_edges() - len(back)
    if forward != len(pairs) or not all(g.has_edge(a, b) for a, b in pairs) or len(back) > 1:
        raise ValueError("trace_svg draws a trace (a path of states); use Graphviz for others")
    text_w = max(
        (len(_clip(line)) * CHAR for n in nodes for line in g.nodes[n]["label"]), default=100
    )
    node_w = text_w + 2 * PAD + 10  # room for bold titles, which run wider
    edge_w = max(
        (
            len(_clip(" / ".join(d["label"]))) * CHAR
            for *_, d in g.edges(data=True)
            if not d.get("back")
        ),
        default=0,
    )
    width = max(20 + node_w + 10, 56 + edge_w + 10)
    back_x = max(20 + node_w, 56 + edge_w) + 16  # the back edge's run, right of all labels
    if back:
        width = max(width, back_x + 10 + len(_clip(" / ".join(back[0][2]["label"]))) * CHAR)
    parts: list[str] = []
    middle: dict[int, float] = {}  # node -> the y of its middle
    y = 10.0
    for i, n in enumerate(nodes):
        data = g.nodes[n]
        lines = [_clip(line) for line in data["label"]]
        h = len(lines) * LINE + 2 * PAD
        middle[n] = y + h / 2
        kind = "violated" if data.get("violated") else "initial" if data.get("initial") else ""
        kind += " loop" if data.get("loop") else ""
        text = "".join(
            f'<tspan x="{20 + PAD}" y="{y + PAD + (j + 1) * LINE - 4:.0f}"'
            + (' class="tg-title">' if j == 0 else ">")
            + f"{escape(line)}</tspan>"
            for j, line in enumerate(lines)
        )
        parts.append(
            f'<g class="tg-node {kind}" data-step="{n}"><rect x="20" y="{y:.0f}"'
            f' width="{node_w:.0f}" height="{h}" rx="5"/><text>{text}</text></g>'
        )
        y += h
        if i + 1 < len(nodes):
            label = " / ".join(g.edges[n, nodes[i + 1]]["label"])
            parts.append(
                f'<g class="tg-edge" data-step="{nodes[i + 1]}"><line x1="44" y1="{y:.0f}"'
                f' x2="44" y2="{y + ARROW - 2:.0f}" marker-end="url(#{prefix}-head)"/>'
                f'<text x="56" y="{y + ARROW / 2 + 4:.0f}">{escape(_clip(label))}</text></g>'
            )
            y += ARROW
    if back:
        source, target, data = back[0]
        right = 20 + node_w
        y1, y2 = middle[source], middle[target]
        if source == target:  # stuttering: a loop on the state's right side
            y1, y2 = y1 + 6, y1 - 6
        label_y = (y1 + y2) / 2 + 4
        parts.append(
            f'<g class="tg-edge tg-back" data-step="{target}"><polyline fill="none"'
            f' points="{right:.0f},{y1:.0f} {back_x:.0f},{y1:.0f} {back_x:.0f},{y2:.0f}'
            f' {right + 2:.0f},{y2:.0f}" marker-end="url(#{prefix}-back)"/>'
            f'<text x="{back_x + 8:.0f}" y="{label_y:.0f}">'
            f"{escape(_clip(' / '.join(data['label'])))}</text></g>"
        )
    height = y + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tg" width="{width:.0f}"'
        f' height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img"'
        ' aria-label="trace graph"><style>'
        ".tg text { font: 12px 'DejaVu Sans Mono', ui-monospace, monospace; fill: #212121; }"
        ".tg .tg-node rect { fill: #fafafa; stroke: #78909c; }"
        ".tg .tg-node.initial rect { fill: #e8f5e9; stroke: #2e7d32; stroke-width: 2; }"
        ".tg .tg-node.violated rect { fill: #ffebee; stroke: #c62828; stroke-width: 2.5; }"
        ".tg .tg-node.loop rect { stroke: #ef6c00; stroke-width: 2; }"
        ".tg .tg-node.selected rect { stroke: #f9a825; stroke-width: 3; }"
        ".tg .tg-title { font-weight: bold; }"
        ".tg .tg-edge line { stroke: #455a64; stroke-width: 1.5; }"
        ".tg .tg-edge text { fill: #0d47a1; }"
        ".tg .tg-back polyline { stroke: #ef6c00; stroke-width: 1.5; stroke-dasharray: 5 3; }"
        ".tg .tg-back text { fill: #ef6c00; }"
        f'</style><defs><marker id="{prefix}-head" viewBox="0 0 10 10" refX="10" refY="5"'
        ' markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z"'
        ' fill="#455a64"/></marker>'
        f'<marker id="{prefix}-back" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8"'
        ' markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#ef6c00"/></marker>'
        "</defs>" + "".join(parts) + "</svg>\n"
    )
