"""The speed-up plot of docs/scaling.md from `make bench-cluster`'s rows, an SVG written by hand
(no plotting package needed):

    .venv/bin/python scripts/plot_cluster.py bench/results/cluster.json docs/scaling-speedup.svg

Speed-up against workers for each engine, with the ideal line (speed-up = workers).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

WIDTH, HEIGHT, MARGIN = 480, 360, 56
COLOURS = {"spark": "#d62728", "local": "#1f77b4"}


def svg(rows: list[dict[str, Any]], title: str) -> str:
    top = max(max(r["workers"] for r in rows), 1)
    highest = max([top, *(r["speedup"] for r in rows)])

    def x(workers: float) -> float:
        return MARGIN + (workers / top) * (WIDTH - 2 * MARGIN)

    def y(speedup: float) -> float:
        return HEIGHT - MARGIN - (speedup / highest) * (HEIGHT - 2 * MARGIN)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}"'
        f' font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle">{title}</text>',
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(top)}" y2="{y(0)}" stroke="black"/>',
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(0)}" y2="{y(highest)}" stroke="black"/>',
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 14}" text-anchor="middle">workers</text>',
        f'<text x="16" y="{HEIGHT / 2}" text-anchor="middle"'
        f' transform="rotate(-90 16 {HEIGHT / 2})">speed-up over one worker</text>',
    ]
    for tick in range(0, top + 1):
        parts.append(f'<text x="{x(tick)}" y="{y(0) + 16}" text-anchor="middle">{tick}</text>')
    for tick in range(0, int(highest) + 1):
        parts.append(
            f'<text x="{x(0) - 8}" y="{y(tick) + 4}" text-anchor="end">{tick}</text>'
            f'<line x1="{x(0)}" y1="{y(tick)}" x2="{x(top)}" y2="{y(tick)}" stroke="#ddd"/>'
        )
    parts.append(
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(top)}" y2="{y(top)}" stroke="gray"'
        ' stroke-dasharray="5,4"/>'
    )
    legend = [("ideal", "gray")]
    for engine, colour in COLOURS.items():
        mine = sorted((r for r in rows if r["engine"] == engine), key=lambda r: r["workers"])
        if not mine:
            continue
        points = " ".join(f"{x(r['workers']):.1f},{y(r['speedup']):.1f}" for r in mine)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}"/>')
        for r in mine:
            parts.append(
                f'<circle cx="{x(r["workers"]):.1f}" cy="{y(r["speedup"]):.1f}" r="3.5"'
                f' fill="{colour}"/>'
                f'<text x="{x(r["workers"]) + 6:.1f}" y="{y(r["speedup"]) - 6:.1f}"'
                f' fill="{colour}">{r["speedup"]:.2f}</text>'
            )
        legend.append((f"{engine} engine", colour))
    for i, (name, colour) in enumerate(legend):
        parts.append(
            f'<line x1="{MARGIN + 10}" y1="{40 + 16 * i}" x2="{MARGIN + 34}" y2="{40 + 16 * i}"'
            f' stroke="{colour}"/><text x="{MARGIN + 40}" y="{44 + 16 * i}">{name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    rows = json.loads(source.read_text())
    first = rows[0]
    constants = " ".join(first.get("constants", []))
    title = f"{Path(first['spec']).stem} {constants}, {first['quota']} CPU per worker"
    target.write_text(svg(rows, title))


if __name__ == "__main__":
    main()
