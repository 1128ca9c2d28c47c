"""A temporal property's counterexample (a lasso) in every report: the cycle closed by a back
edge "back to state k", or the last state stuttering forever."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checker.liveness import select
from checker.loader import load_model
from checker.local.bfs import check as check_invariants
from checker.reports import dot, graphviz, html, itf, json_report, junit, mermaid, msc, sarif
from checker.reports.chart import result_chart
from checker.reports.graph import result_graph
from checker.reports.sarif import Checked
from checker.reports.text import render
from checker.run import check_properties as check
from tests.checker.test_liveness import TICKET
from tests.reports.test_graph import _unquote, parse_dot
from tests.reports.test_writers import Page, validate_sarif

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def ticket(write_spec, tmp_path, monkeypatch):
    """The ticket server with a weakly fair `serve`: requests can be put off forever."""
    monkeypatch.chdir(tmp_path)
    path = write_spec(TICKET.replace('fair_each="strong"', 'fair_each="weak"'), "ticket.py")
    model = load_model(path.name)
    result = check(model, check_invariants(model), select(model, ["answered"]))
    assert (result.property, result.loop_start) == ("answered", 1)
    assert [s.state.x for s in result.trace] == [0, 1, 2]
    assert result.loop_back.action == "postpone"
    return model, result


@pytest.fixture
def stutter(write_spec, tmp_path, monkeypatch):
    """Nobody has to ask: the initial state stutters forever."""
    monkeypatch.chdir(tmp_path)
    model = load_model(write_spec(TICKET, "ticket.py").name)
    result = check(model, check_invariants(model), select(model, ["started"]))
    assert (result.property, result.loop_start, result.loop_back) == ("started", 0, None)
    return model, result


def test_text_goes_back_to_state_2(ticket):
    lines = render(ticket[1]).splitlines()
    at = lines.index(
        "A fair behavior that violates it: 3 states, then back to state 2 and round again forever:"
    )
    assert [line for line in lines[at:] if not line.startswith(" ")][:5] == [
        lines[at],
        "State 1: initial state",
        "State 2: ask()",
        "State 3: postpone()",
        "Back to state 2: postpone()",
    ]


def test_json_has_the_loop(ticket, tmp_path):
    json_report.write(ticket[1], str(tmp_path / "r.json"))
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["verdict"], doc["exit_code"], doc["property"]) == ("violation", 13, "answered")
    assert [s["state"] for s in doc["trace"]] == [{"x": 0}, {"x": 1}, {"x": 2}]
    assert doc["loop_start"] == 1
    assert doc["loop_back"] == {
        "action": "postpone",
        "params": {},
        "state": {"x": 1},
        "event": None,
    }
    assert doc["fairness"] == ["WF(postpone)", "WF(serve(n)) for each n"]


def test_dot_draws_the_back_edge_and_marks_the_cycle(ticket, stutter):
    parsed = parse_dot(dot.to_dot(result_graph(ticket[1]), "Ticket"))
    edges = {(e.get_source(), e.get_destination()): e for e in parsed.get_edges()}
    assert set(edges) == {("s1", "s2"), ("s2", "s3"), ("s3", "s2")}
    back = edges["s3", "s2"]
    assert _unquote(back.get("label")) == "back to state 2: postpone()"
    assert back.get("style") == "dashed" and back.get("constraint") == "false"
    colors = {n.get_name(): n.get("color") for n in parsed.get_nodes()}
    assert colors["s2"] == colors["s3"] == '"#ef6c00"' and colors["s1"] is None
    # Stuttering: a self-loop on the last state.
    parsed = parse_dot(dot.to_dot(result_graph(stutter[1])))
    (edge,) = parsed.get_edges()
    assert (edge.get_source(), edge.get_destination()) == ("s1", "s1")
    assert _unquote(edge.get("label")) == "stuttering: state 1 forever"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_svg_through_graphviz_has_the_back_edge(ticket, tmp_path):
    graphviz.render(dot.to_dot(result_graph(ticket[1])), "svg", str(tmp_path / "t.svg"))
    titles = [t.text for t in ET.parse(tmp_path / "t.svg").getroot().iter(f"{SVG}title")]
    assert "s3&#45;&gt;s2" in titles or "s3->s2" in titles


def test_mermaid_flowchart_and_sequence_diagram(ticket):
    lines = mermaid.flowchart(result_graph(ticket[1])).splitlines()
    assert '  s3 -.->|"back to state 2: postpone()"| s2' in lines
    assert '  s1 -->|"ask()"| s2' in lines
    assert {"  class s2 loop", "  class s3 loop", "  class s1 initial"} <= set(lines)
    chart = result_chart(ticket[1])
    assert chart.loop == "Back to state 2: postpone() (temporal property answered is violated)"
    note = mermaid.sequence_diagram(chart).splitlines()[-1]
    assert note.startswith("  Note over P0: Back to state 2: postpone()")


def test_msc_closes_with_the_loop(ticket):
    root = ET.fromstring(msc.render(result_chart(ticket[1])))
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert texts[-1] == "↺ Back to state 2: postpone() (temporal property answered is violated)"


def test_html_marks_the_cycle_and_the_way_back(ticket):
    text = html.render(ticket[1])
    page = Page(text)
    classes = {a.get("id"): a.get("class") or "" for a in page.with_attr("data-step")}
    assert "loop" not in classes["step-1"]
    assert "loop" in classes["step-2"] and "loop" in classes["step-3"]
    (back,) = page.with_attr("class", "back")
    assert back["data-step"] == "2"  # selecting it shows state 2
    assert "Back to state 2: postpone()" in text
    assert 'class="tg-edge tg-back" data-step="2"' in text  # the trace graph's back edge
    assert "temporal properties: answered (asked ~&gt; served)" in text
    assert "Back to state 2: postpone()" in page.text["text"]


def test_itf_has_its_loop(ticket, stutter):
    doc = itf.to_itf(ticket[1])
    assert doc["loop"] == 1 and len(doc["states"]) == 3
    assert [s["x"] for s in doc["states"]] == [{"#bigint": str(x)} for x in (0, 1, 2)]
    assert doc["#meta"]["loop_back"] == {"action": "postpone", "params": {}}
    assert "temporal property answered" in doc["#meta"]["description"]
    doc = itf.to_itf(stutter[1])
    assert doc["loop"] == 0 and len(doc["states"]) == 1
    assert doc["#meta"]["loop_back"] == "stuttering"


def test_junit_fails_the_property_case(ticket, tmp_path):
    junit.write([ticket[1]], str(tmp_path / "j.xml"))
    (suite,) = ET.parse(tmp_path / "j.xml").getroot().findall("testsuite")
    (case,) = suite.findall("testcase")  # no invariant; one property checked
    assert case.get("name") == "answered"
    failure = case.find("failure")
    assert failure.get("type") == "liveness"
    assert failure.get("message") == "temporal property answered (asked ~> served) is violated"
    assert "Back to state 2: postpone()" in failure.text
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")


def test_sarif_points_at_the_property_and_ends_the_flow_going_back(ticket):
    model, result = ticket
    doc = sarif.to_sarif([Checked(result, model)])
    validate_sarif(doc)
    (res,) = doc["runs"][0]["results"]
    assert res["ruleId"] == "Ticket.answered"
    assert doc["runs"][0]["tool"]["driver"]["rules"][0]["shortDescription"]["text"] == (
        "Every request is eventually served."
    )
    where = res["locations"][0]["physicalLocation"]
    source = Path(where["artifactLocation"]["uri"]).read_text().splitlines()
    line = source[where["region"]["startLine"] - 1]
    assert re.match(r"\s*answered = leads_to\(", line)
    steps = res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"] for s in steps] == [
        "State 1: initial state",
        "State 2: ask()",
        "State 3: postpone()",
        "Back to state 2: postpone()",
    ]
    assert "Back to state 2: postpone()" in res["message"]["text"]
