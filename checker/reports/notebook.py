"""Results and traces in a Jupyter notebook: `_repr_html_` of CheckResult and Trace is the HTML
report (checker.reports.html), in a sandboxed iframe so that its style and script stay out of
the notebook's page (and its CSP, no fetch, still holds). Importing this module sets it
(checker.testing, the notebook's API, does)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from checker import result as results
from checker.reports import html
from checker.result import CheckResult, Step

HEIGHT = 640  # px: the report scrolls inside


def frame(page: str, title: str, height: int = HEIGHT) -> str:
    """`page` (a whole HTML document) as an iframe to embed in another page."""
    return (
        f'<iframe srcdoc="{escape(page, quote=True)}" sandbox="allow-scripts"'
        f' title="{escape(title, quote=True)}"'
        f' style="width: 100%; height: {height}px; border: 1px solid #cfd8dc;"></iframe>'
    )


def result_html(result: CheckResult) -> str:
    return frame(html.render(result), f"mc: {result.spec_name}")


def trace_html(trace: Sequence[Step]) -> str:
    return frame(html.render_trace(trace), "mc: trace")


results.html_of_result = result_html
results.html_of_trace = trace_html
