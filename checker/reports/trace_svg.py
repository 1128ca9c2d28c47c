"""A trace graph drawn as SVG without Graphviz, for the HTML report: a trace is a path, so
its layout is a column of state boxes joined by action arrows. (`--svg` uses Graphviz, which
also lays out `mc graph`'s state spaces.)"""

from __future__ import annotations

import itertools
from html import escape

import networkx as nx

from checker.reports.msc import CHAR

LINE = 16
PAD = 8
ARROW = 36
MAX_LINE = 100  # characters; the HTML state panel shows values in full


def _clip(text: str, limit: int = MAX_LINE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(g: nx.DiGraph, prefix: str = "tg") -> str:
    nodes = sorted(g.nodes)
    pairs = list(itertools.pairwise(nodes))
    if g.number_of_edges() != len(pairs) or not all(g.has_edge(a, b) for a, b in pairs):
        raise ValueError("trace_svg draws a trace (a path of states); use Graphviz for others")
    text_w = max(
        (len(_clip(line)) * CHAR for n in nodes for line in g.nodes[n]["label"]), default=100
    )
    node_w = text_w + 2 * PAD + 10  # room for bold titles, which run wider
    edge_w = max(
        (len(_clip(" / ".join(d["label"]))) * CHAR for *_, d in g.edges(data=True)), default=0
    )
    width = max(20 + node_w + 10, 56 + edge_w + 10)
    parts: list[str] = []
    y = 10.0
    for i, n in enumerate(nodes):
        data = g.nodes[n]
        lines = [_clip(line) for line in data["label"]]
        h = len(lines) * LINE + 2 * PAD
        kind = "violated" if data.get("violated") else "initial" if data.get("initial") else ""
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
    height = y + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tg" width="{width:.0f}"'
        f' height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img"'
        ' aria-label="trace graph"><style>'
        ".tg text { font: 12px 'DejaVu Sans Mono', ui-monospace, monospace; fill: #212121; }"
        ".tg .tg-node rect { fill: #fafafa; stroke: #78909c; }"
        ".tg .tg-node.initial rect { fill: #e8f5e9; stroke: #2e7d32; stroke-width: 2; }"
        ".tg .tg-node.violated rect { fill: #ffebee; stroke: #c62828; stroke-width: 2.5; }"
        ".tg .tg-node.selected rect { stroke: #f9a825; stroke-width: 3; }"
        ".tg .tg-title { font-weight: bold; }"
        ".tg .tg-edge line { stroke: #455a64; stroke-width: 1.5; }"
        ".tg .tg-edge text { fill: #0d47a1; }"
        f'</style><defs><marker id="{prefix}-head" viewBox="0 0 10 10" refX="10" refY="5"'
        ' markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z"'
        ' fill="#455a64"/></marker></defs>' + "".join(parts) + "</svg>\n"
    )
