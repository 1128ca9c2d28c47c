"""`--html PATH`: one self-contained, offline page for a result: the verdict, the sequence
chart, the step list with each step's full state (changed variables highlighted), and the
trace graph. Styles, SVG and script are inline, and a Content-Security-Policy forbids any
fetch, so the file opens the same from a CI artifact, a mail or a laptop on a plane.

Every piece of spec text (values, names, messages) goes through `html.escape`; the script
only toggles attributes of elements written here, it builds no markup from data.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from checker.reports import msc, trace_svg
from checker.reports.chart import result_chart, sequence_chart
from checker.reports.graph import (
    changed_variables,
    describe_action,
    lasso_line,
    result_graph,
    trace_graph,
)
from checker.reports.text import behavior_intro, format_behavior, format_trace, headline
from checker.result import CheckResult, Step
from checker.values import count, show
from checker.values.record import Record

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

# The page and header of every HTML report (this one, mc ablate's table)
PAGE_STYLE = """
body { font: 14px/1.45 system-ui, 'DejaVu Sans', sans-serif; margin: 0; color: #212121;
       background: #eceff1; }
header { background: #263238; color: #fff; padding: 12px 20px; }
header h1 { font-size: 18px; margin: 0 0 4px; }
header p { margin: 2px 0; color: #cfd8dc; font-size: 13px; }
"""

STYLE = (
    PAGE_STYLE
    + """\
.verdict { display: inline-block; padding: 1px 8px; border-radius: 3px; font-weight: bold; }
.verdict.bad { background: #c62828; } .verdict.good { background: #2e7d32; }
.verdict.unsure { background: #ef6c00; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(360px, 480px);
       gap: 14px; padding: 14px 20px; align-items: start; }
section { background: #fff; border-radius: 6px; padding: 10px 14px;
          box-shadow: 0 1px 2px rgba(0,0,0,.15); overflow: auto; }
section h2 { font-size: 15px; margin: 0 0 8px; }
#left, #side { min-width: 0; }
#left section + section, #side section + section { margin-top: 14px; }
.state h3 { font: bold 13px 'DejaVu Sans Mono', monospace; margin: 0 0 6px;
            overflow-wrap: anywhere; }
ol#steps { list-style: none; margin: 0; padding: 0; font-family: 'DejaVu Sans Mono', monospace;
           font-size: 12px; }
ol#steps li { padding: 3px 6px; border-radius: 3px; cursor: pointer; overflow-wrap: anywhere; }
ol#steps li:hover { background: #eceff1; }
ol#steps li.selected { background: #fff59d; }
ol#steps li.violated { color: #c62828; font-weight: bold; }
ol#steps li.loop { border-left: 3px solid #ef6c00; }
ol#steps li.back { color: #ef6c00; font-weight: bold; }
ol#steps .n { display: inline-block; min-width: 2.2em; color: #546e7a; font-weight: bold; }
.state table { border-collapse: collapse; width: 100%; font-family: 'DejaVu Sans Mono',
               monospace; font-size: 12px; }
.state th, .state td { text-align: left; vertical-align: top; padding: 2px 6px;
                       border-bottom: 1px solid #eceff1; overflow-wrap: break-word; }
.state th { font-weight: normal; color: #37474f; white-space: nowrap; }
.state tr.changed { background: #fff59d; }
.state tr.changed th { font-weight: bold; }
.state .was { color: #78909c; }
.msc .msc-row, .tg .tg-node, .tg .tg-edge, .msc [data-step] { cursor: pointer; }
pre.report { font-size: 12px; white-space: pre-wrap; margin: 0; }
.hint { color: #607d8b; font-size: 12px; margin: 0 0 6px; }
"""
)

SCRIPT = """
(function () {
  var last = %(last)d;
  function select(n) {
    if (!(n >= 1 && n <= last)) { n = last; }
    document.querySelectorAll('[data-step]').forEach(function (el) {
      var on = Number(el.getAttribute('data-step')) === n;
      if (el.classList.contains('state')) { el.hidden = !on; }
      else { el.classList.toggle('selected', on); }
    });
    document.body.setAttribute('data-selected', String(n));
    var item = document.getElementById('step-' + n);
    if (item && item.scrollIntoView) { item.scrollIntoView({block: 'nearest'}); }
    try { history.replaceState(null, '', '#step=' + n); } catch (e) { /* file: URL */ }
  }
  document.addEventListener('click', function (ev) {
    var el = ev.target.closest && ev.target.closest('[data-step]');
    if (el && !el.classList.contains('state')) { select(Number(el.getAttribute('data-step'))); }
  });
  document.addEventListener('keydown', function (ev) {
    var n = Number(document.body.getAttribute('data-selected'));
    if (ev.key === 'ArrowDown' || ev.key === 'j') { select(n + 1); ev.preventDefault(); }
    if (ev.key === 'ArrowUp' || ev.key === 'k') { select(n - 1); ev.preventDefault(); }
  });
  var m = /step=(\\d+)/.exec(location.hash);
  select(m ? Number(m[1]) : last);
})();
"""


def _verdict_class(result: CheckResult) -> str:
    if result.verdict == "ok":
        return "good" if result.simulation is None else "unsure"  # a simulation proves nothing
    return "unsure" if result.verdict == "incomplete" else "bad"


def state_panel(number: int, step: Step, previous: Record | None, hidden: bool = False) -> str:
    """State `number` of a trace as a table of its variables, those that `step` changed from
    `previous` highlighted with their former value (the HTML report's and `mc explore`'s)."""
    changed = set(changed_variables(step.state, previous)) if previous is not None else set()
    rows = []
    for name, value in step.state.items():
        was = ""
        if name in changed and previous is not None:
            was = f'<div class="was">was {escape(show(previous[name]))}</div>'
        cls = ' class="changed"' if name in changed else ""
        rows.append(
            f"<tr{cls}><th>{escape(str(name))}</th><td>{escape(show(value))}{was}</td></tr>"
        )
    title = f"State {number}: {describe_action(step.action, step.params)}"
    return (
        f'<div class="state" id="state-{number}" data-step="{number}"{" hidden" * hidden}>'
        f"<h3>{escape(title)}</h3><table>{''.join(rows)}</table></div>"
    )


def _state_panels(trace: Sequence[Step], selected: int) -> list[str]:
    panels = []
    previous = None
    for number, step in enumerate(trace, start=1):
        panels.append(state_panel(number, step, previous, hidden=number != selected))
        previous = step.state
    return panels


def _properties(result: CheckResult) -> str:
    if not result.properties:
        return ""
    names = ", ".join(f"{name} ({formula})" for name, formula in result.properties.items())
    fairness = ", ".join(result.fairness) or "none"
    return f" temporal properties: {escape(names)} under fairness {escape(fairness)} ·"


def _head(title: str, n: int, header: list[str]) -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>",
        f'<body data-selected="{n}">',
        "<header>" + "\n".join(header) + "</header>",
    ]


def render(result: CheckResult) -> str:
    trace = result.trace
    n = len(trace)
    title = f"mc: {result.spec_name}: {headline(result)[0]}"
    constants = ", ".join(f"{k}={v}" for k, v in result.constants.items()) or "none"
    head = _head(
        title,
        n,
        [
            f"<h1>{escape(result.spec_name)} "
            f'<span class="verdict {_verdict_class(result)}">{escape(headline(result)[0])}'
            "</span></h1>",
            f"<p>{escape(result.spec)} · constants: {escape(constants)}</p>",
            f"<p>invariants: {escape(', '.join(result.invariants) or 'none')} ·"
            f"{_properties(result)}"
            f" {result.distinct_states:,} distinct states · depth {result.depth} ·"
            f" {result.seconds:.2f} s</p>",
        ],
    )
    if not trace:
        body = [
            '<main><section id="report"><h2>Report</h2>',
            f'<pre class="report">{escape(chr(10).join(headline(result)))}</pre>',
            "</section></main>",
        ]
        return "\n".join(head + body) + "\n</body></html>\n"
    violated = (result.invariant or result.step_property) if result.verdict == "violation" else None
    text = headline(result) + [behavior_intro(result)] + format_behavior(result)
    body = _trace_body(
        trace,
        violated,
        result.loop_start,
        lasso_line(result),
        msc.render(result_chart(result), prefix="msc"),
        trace_svg.render(result_graph(result), prefix="tg"),
        text,
    )
    return "\n".join(head + body) + "\n</body></html>\n"


def render_trace(trace: Sequence[Step], title: str = "Trace") -> str:
    """A page for a trace alone (no verdict): the report's chart, steps, states and text."""
    n = len(trace)
    head = _head(f"mc: {title}", n, [f"<h1>{escape(title)}</h1>", f"<p>{count(n, 'state')}</p>"])
    if not trace:
        return "\n".join(head) + "\n</body></html>\n"
    body = _trace_body(
        trace,
        None,
        None,
        None,
        msc.render(sequence_chart(trace), prefix="msc"),
        trace_svg.render(trace_graph(trace), prefix="tg"),
        format_trace(list(trace)),
    )
    return "\n".join(head + body) + "\n</body></html>\n"


def _trace_body(
    trace: Sequence[Step],
    violated: str | None,
    loop_start: int | None,
    back: str | None,
    chart: str,
    graph: str,
    text: list[str],
) -> list[str]:
    """The page below the header: the chart and the trace graph, the steps (the last one
    marked if it breaks `violated`; for a lasso, its cycle from `loop_start` and the `back`
    line), the states and the text report."""
    n = len(trace)
    steps = []
    for number, step in enumerate(trace, start=1):
        classes = ["selected"] if number == n else []
        if violated and number == n:
            classes.append("violated")
        if loop_start is not None and number > loop_start:
            classes.append("loop")  # on the cycle of the lasso
        cls = f' class="{" ".join(classes)}"' if classes else ""
        steps.append(
            f'<li id="step-{number}"{cls} data-step="{number}" tabindex="0">'
            f'<span class="n">{number}</span>{escape(describe_action(step.action, step.params))}'
            "</li>"
        )
    if back is not None and loop_start is not None:  # selecting it shows the state it reaches
        steps.append(
            f'<li class="back" data-step="{loop_start + 1}" tabindex="0">'
            f'<span class="n">↺</span>{escape(back)}</li>'
        )
    return [
        '<main><div id="left">',
        '<section id="chart"><h2>Sequence chart</h2>'
        '<p class="hint">Click a row, a step or a state to select it; ↑/↓ move.</p>',
        chart,
        "</section>",
        '<section id="graph"><h2>Trace graph</h2>',
        graph,
        "</section></div>",
        '<div id="side"><section id="step-list"><h2>Steps</h2><ol id="steps">',
        *steps,
        '</ol></section><section id="state-panel"><h2>State</h2>',
        *_state_panels(trace, n),
        "</section>",
        '<section id="text"><h2>Text report</h2><pre class="report">',
        escape("\n".join(text)),
        "</pre></section></div></main>",
        f"<script>{SCRIPT % {'last': n}}</script>",
    ]


def write(result: CheckResult, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(render(result))
