"""Results and traces in a notebook: Jupyter calls `_repr_html_`, which gives the HTML report
in a sandboxed iframe (the browser test checks that its script runs there)."""

from __future__ import annotations

import dataclasses
from html import unescape

from checker.reports import html
from checker.result import Trace
from checker.testing import check
from tests.conftest import SPECS


def srcdoc(markup: str) -> str:
    assert markup.startswith('<iframe srcdoc="') and markup.endswith("></iframe>")
    assert ' sandbox="allow-scripts"' in markup  # its script runs, away from the notebook
    return unescape(markup.split('srcdoc="', 1)[1].split('" sandbox=', 1)[0])


def test_a_result_shows_as_its_html_report():
    result = check(str(SPECS / "examples" / "die_hard.py"), no_liveness=True)
    assert isinstance(result.trace, Trace) and len(result.trace) == 7
    assert srcdoc(result._repr_html_()) == html.render(result)


def test_a_trace_shows_as_a_report_of_its_steps():
    result = check(str(SPECS / "examples" / "die_hard.py"), no_liveness=True)
    page = srcdoc(result.trace._repr_html_())
    assert page == html.render_trace(result.trace)
    assert "<h1>Trace</h1>" in page and "7 states" in page
    assert page.count('<div class="state" id="state-') == 7
    assert "State 7: big_to_small()\n    big   = 4\n    small = 3" in page  # the text report


def test_every_trace_a_result_holds_is_a_trace_object():
    result = check(str(SPECS / "examples" / "die_hard.py"), no_liveness=True)
    result.trace = list(result.trace)  # as an engine assigns it
    assert type(result.trace) is Trace
    copy = dataclasses.replace(result)
    assert type(copy.trace) is Trace and copy.trace == result.trace
