"""`--msc PATH`: the message-sequence chart of a trace as a standalone SVG (also inlined in the
HTML report). Generated here, not by Graphviz: it is a few columns and one row per step.

Rows are steps (top to bottom), columns are lifelines. A message is an arrow from its send
step on the sender's lifeline to its receive step on the receiver's, slanted across the steps
in between; a call is a request and a dashed response within its step; a local event is a box
on its lifeline. Every row carries `data-step`, which the HTML report uses for selection.
"""

from __future__ import annotations

from html import escape

from checker.reports.chart import Chart, Message

CHAR = 7.3  # px per character of 12px DejaVu Sans Mono (0.6 em), rounded up
ROW = 44
TOP = 58  # the lifeline headers
GAP = 36
MAX_LABEL = 32  # characters of a step description in the left column (full in a tooltip)
MAX_BOX = 44  # characters of a local event's box

STYLE = """
.msc text { font: 12px 'DejaVu Sans Mono', ui-monospace, monospace; fill: #212121; }
.msc .msc-head rect { fill: #e3f2fd; stroke: #1565c0; }
.msc .msc-head text { font-weight: bold; }
.msc .msc-life { stroke: #90a4ae; stroke-dasharray: 4 4; }
.msc .msc-row rect { fill: transparent; }
.msc .msc-row:nth-child(even) rect { fill: #fafafa; }
.msc .msc-row.violated rect { fill: #ffebee; }
.msc .msc-row.selected rect { fill: #fff59d; }
.msc .msc-n { font-weight: bold; fill: #546e7a; }
.msc .msc-box rect { fill: #fff8e1; stroke: #f9a825; }
.msc .msc-msg line { stroke: #1565c0; stroke-width: 1.6; }
.msc .msc-msg text { fill: #0d47a1; }
.msc .msc-call line { stroke: #2e7d32; stroke-width: 1.4; }
.msc .msc-call text { fill: #1b5e20; }
.msc .msc-dashed, .msc .msc-flight line { stroke-dasharray: 5 3; }
.msc .msc-violation { fill: #c62828; font-weight: bold; }
"""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _width(text: str) -> float:
    return len(text) * CHAR


def _message_label(m: Message) -> str:
    return f"{m.message} (in flight)" if m.sent is not None and m.received is None else m.message


def _violation(invariant: str, step: int) -> str:
    return f"✗ invariant {invariant} is violated in state {step}"


def _y(step: int) -> float:
    return TOP + (step - 0.5) * ROW


def _marker(ident: str, color: str) -> str:
    return (
        f'<marker id="{ident}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8"'
        f' markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>'
    )


def render(chart: Chart, prefix: str = "msc") -> str:
    """The chart as an `<svg>` element; `prefix` keeps marker ids unique in one HTML page."""
    n = len(chart.steps)
    label_w = (
        max(
            (_width(f"{i}  {_clip(s, MAX_LABEL)}") for i, s in enumerate(chart.steps, 1)), default=0
        )
        + 24
    )
    widths = []
    for p in chart.lifelines:
        texts = [p] + [_clip(b.text, MAX_BOX) for b in chart.boxes if b.process == p]
        widths.append(max(_width(t) for t in texts) + 24)
    labels = [_message_label(m) for m in chart.messages] + [c.message for c in chart.calls]
    min_gap = max((_width(label) for label in labels), default=0) + 24
    xs: list[float] = []
    for i, w in enumerate(widths):
        if i == 0:
            xs.append(label_w + w / 2 + 8)
        else:
            xs.append(xs[-1] + max(widths[i - 1] / 2 + w / 2 + GAP, min_gap))
    right = (xs[-1] + widths[-1] / 2 + 12) if xs else label_w + 40
    closing = _violation(chart.violated, n) if chart.violated else chart.loop and f"↺ {chart.loop}"
    if closing:  # the closing line must fit too
        right = max(right, _width(closing) + 24)
    bottom = TOP + n * ROW
    height = bottom + (34 if closing else 12)
    x_of = {p: xs[i] for i, p in enumerate(chart.lifelines)}

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="msc" width="{right:.0f}"'
        f' height="{height:.0f}" viewBox="0 0 {right:.0f} {height:.0f}" role="img"'
        f' aria-label="sequence chart">',
        f"<style>{STYLE}</style>",
        "<defs>",
        _marker(f"{prefix}-msg", "#1565c0"),
        _marker(f"{prefix}-call", "#2e7d32"),
        "</defs>",
        '<g class="msc-rows">',
    ]
    for step, text in enumerate(chart.steps, start=1):
        classes = "msc-row" + (" violated" if chart.violated and step == n else "")
        y = _y(step)
        out.append(
            f'<g class="{classes}" data-step="{step}"><title>{escape(f"{step}. {text}")}</title>'
            f'<rect x="0" y="{y - ROW / 2:.1f}" width="{right:.0f}" height="{ROW}"/>'
            f'<text x="8" y="{y + 4:.1f}"><tspan class="msc-n">{step}</tspan>'
            f"  {escape(_clip(text, MAX_LABEL))}</text></g>"
        )
    out.append("</g>")
    for p, w in zip(chart.lifelines, widths):
        x = x_of[p]
        out.append(
            f'<g class="msc-head"><line class="msc-life" x1="{x:.1f}" y1="{TOP - 14}"'
            f' x2="{x:.1f}" y2="{bottom:.0f}"/><rect x="{x - w / 2:.1f}" y="10" width="{w:.1f}"'
            f' height="30" rx="4"/><text x="{x:.1f}" y="30" text-anchor="middle">'
            f"{escape(p)}</text></g>"
        )
    msg_head = f'marker-end="url(#{prefix}-msg)"'
    call_head = f'marker-end="url(#{prefix}-call)"'
    for call in chart.calls:
        x1, x2, y = x_of[call.caller], x_of[call.callee], _y(call.step)
        out.append(
            f'<g class="msc-call" data-step="{call.step}"><title>{escape(call.caller)} calls'
            f" {escape(call.callee)}: {escape(call.message)} and its response</title>"
            f'<line x1="{x1:.1f}" y1="{y - 3:.1f}" x2="{x2:.1f}" y2="{y - 3:.1f}" {call_head}/>'
            f'<line class="msc-dashed" x1="{x2:.1f}" y1="{y + 7:.1f}" x2="{x1:.1f}"'
            f' y2="{y + 7:.1f}" {call_head}/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{y - 8:.1f}" text-anchor="middle">'
            f"{escape(call.message)}</text></g>"
        )
    for m in chart.messages:
        xs_, xr = x_of[m.sender], x_of[m.receiver]
        if m.sent is None:  # delivered, but its send is not in the trace
            y1 = y2 = _y(m.received or 1)
            kind, label = "msc-msg msc-flight", m.message
        elif m.received is None:
            y1, y2 = _y(m.sent), bottom - 4
            kind, label = "msc-msg msc-flight", _message_label(m)
        else:
            y1, y2 = _y(m.sent), _y(m.received)
            kind, label = "msc-msg", _message_label(m)
        step = m.received if m.received is not None else m.sent
        toward = 1 if xr >= xs_ else -1
        anchor = "start" if toward > 0 else "end"
        sent = f"step {m.sent}" if m.sent is not None else "outside the trace"
        got = f"step {m.received}" if m.received is not None else "not yet"
        out.append(
            f'<g class="{kind}" data-step="{step}"><title>{escape(m.message)} from'
            f" {escape(m.sender)} ({sent}) to {escape(m.receiver)} ({got})</title>"
            f'<line x1="{xs_:.1f}" y1="{y1:.1f}" x2="{xr:.1f}" y2="{y2:.1f}" {msg_head}/>'
            f'<text x="{xs_ + toward * 10:.1f}" y="{y1 - 6:.1f}" text-anchor="{anchor}">'
            f"{escape(label)}</text></g>"
        )
    # Boxes last: drawn over the arrows that cross their lifeline, they stay readable.
    for box in chart.boxes:
        x, y, text = x_of[box.process], _y(box.step), _clip(box.text, MAX_BOX)
        w = _width(text) + 14
        out.append(
            f'<g class="msc-box" data-step="{box.step}"><title>{escape(box.text)}</title>'
            f'<rect x="{x - w / 2:.1f}" y="{y - 12:.1f}" width="{w:.1f}" height="24" rx="3"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{escape(text)}</text></g>'
        )
    if closing:
        out.append(
            f'<text class="msc-violation" x="8" y="{bottom + 22:.0f}">{escape(closing)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write(chart: Chart, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.write(render(chart))
