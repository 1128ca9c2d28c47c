"""Golden tests of each writer on the KIP-903 counterexample: the output is parsed back and
compared with the result it was written from (content, not bytes)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

import pytest

from checker.errors import ExitCode
from checker.loader import load_model
from checker.reports import dot, graphviz, html, itf, junit, mermaid, msc, sarif
from checker.reports.chart import sequence_chart
from checker.reports.graph import changed_variables, describe_action, trace_graph
from checker.reports.sarif import Checked
from checker.result import NotChecked
from checker.testing import check
from checker.values import show
from checker.values.record import Record
from tests.conftest import ROOT
from tests.reports.test_graph import _unquote, parse_dot

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot is not installed (make test installs it)"
)


# -- DOT, SVG, PNG --------------------------------------------------------------------------


def test_dot_parses_back_to_the_trace(kip903_result):
    trace = kip903_result.trace
    g = trace_graph(trace, kip903_result.invariant)
    parsed = parse_dot(dot.to_dot(g, "Kip903"))
    assert _unquote(parsed.get_name()) == "Kip903"
    nodes = {n.get_name(): n for n in parsed.get_nodes() if n.get_name() not in ("node", "edge")}
    assert sorted(nodes) == sorted(f"s{i}" for i in range(1, len(trace) + 1))
    for number in range(1, len(trace) + 1):
        lines = _unquote(nodes[f"s{number}"].get("label")).split("\\l")
        assert lines[:-1] == g.nodes[number]["label"] and lines[-1] == ""
    last = nodes[f"s{len(trace)}"]
    assert "violates " + kip903_result.invariant in _unquote(last.get("label"))
    assert last.get("color") == '"#c62828"'
    edges = [
        (e.get_source(), e.get_destination(), _unquote(e.get("label"))) for e in parsed.get_edges()
    ]
    assert edges == [
        (f"s{i - 1}", f"s{i}", describe_action(trace[i - 1].action, trace[i - 1].params))
        for i in range(2, len(trace) + 1)
    ]


def test_dot_quotes_what_would_break_it():
    assert dot.quote('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


@needs_dot
def test_svg_and_png_through_graphviz(kip903_result, tmp_path):
    g = trace_graph(kip903_result.trace, kip903_result.invariant)
    text = dot.to_dot(g)
    graphviz.render(text, "svg", str(tmp_path / "t.svg"))
    root = ET.parse(tmp_path / "t.svg").getroot()
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert {f"s{i}" for i in range(1, len(g) + 1)} <= set(titles)
    drawn = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "send_alter_partition" in drawn and f"State {len(g)}" in drawn
    graphviz.render(text, "png", str(tmp_path / "t.png"))
    data = (tmp_path / "t.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 200 and height > 200


# -- Mermaid --------------------------------------------------------------------------------

_ORIGINALS = str.maketrans("\uff02\uff03\uff1b\uff05\u2039\u203a", '"#;%<>')


def _unmermaid(text: str) -> str:
    return text.translate(_ORIGINALS)


def test_mermaid_flowchart_parses_back(kip903_result):
    g = trace_graph(kip903_result.trace, kip903_result.invariant)
    text = mermaid.flowchart(g)
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes = {
        int(m[1]): [_unmermaid(x) for x in m[2].split("<br/>")]
        for m in (re.fullmatch(r'  s(\d+)\["(.*)"\]', line) for line in lines)
        if m
    }
    assert nodes == {n: d["label"] for n, d in g.nodes(data=True)}
    edges = [
        (int(m[1]), _unmermaid(m[2]), int(m[3]))
        for m in (re.fullmatch(r'  s(\d+) -->\|"(.*)"\| s(\d+)', line) for line in lines)
        if m
    ]
    assert edges == [(a, d["label"][0], b) for a, b, d in g.edges(data=True)]
    assert f"  class s{len(g)} violated" in lines and "  class s1 initial" in lines


def test_mermaid_escapes_quotes_and_markup():
    # Look-alikes, not entity codes: Mermaid 11 does not decode those in these diagrams.
    assert (
        mermaid.escape('say "<b>"; #1 %%\n')
        == "say \uff02\u2039b\u203a\uff02\uff1b \uff031 \uff05\uff05 "
    )
    assert _unmermaid(mermaid.escape('"<b>"; #1;')) == '"<b>"; #1;'
    assert mermaid.fenced("flowchart TD\n", "x.md") == "```mermaid\nflowchart TD\n```\n"
    assert mermaid.fenced("flowchart TD\n", "x.mmd") == "flowchart TD\n"


def test_mermaid_sequence_diagram(kip903_result):
    trace = kip903_result.trace
    chart = sequence_chart(trace, kip903_result.invariant)
    lines = mermaid.sequence_diagram(chart).splitlines()
    assert lines[0] == "sequenceDiagram"
    participants = dict(re.findall(r"  participant (P\d+) as (.*)", "\n".join(lines)))
    assert list(participants.values()) == chart.lifelines
    alias = {v: k for k, v in participants.items()}
    (alter,) = [m for m in chart.messages if m.message == "AlterPartition"]
    assert (
        f"  {alias[alter.sender]}-){alias['controller']}: {alter.received}. AlterPartition"
        f" (sent at step {alter.sent})"
    ) in lines
    for call in chart.calls:
        assert (
            f"  {alias[call.caller]}->>{alias[call.callee]}: {call.step}. {call.message}" in lines
        )
    assert lines[-1].endswith(f": {kip903_result.invariant} violated")


# -- the sequence chart as SVG --------------------------------------------------------------


def test_msc_svg(kip903_result, tmp_path):
    trace = kip903_result.trace
    chart = sequence_chart(trace, kip903_result.invariant)
    msc.write(chart, str(tmp_path / "chart.svg"))
    root = ET.parse(tmp_path / "chart.svg").getroot()
    groups = list(root.iter(f"{SVG}g"))
    rows = [g for g in groups if "msc-row" in g.get("class", "").split()]
    assert [int(g.get("data-step")) for g in rows] == list(range(1, len(trace) + 1))
    assert "violated" in rows[-1].get("class")
    heads = [g.find(f"{SVG}text").text for g in groups if g.get("class") == "msc-head"]
    assert heads == chart.lifelines
    (alter,) = [g for g in groups if "msc-msg" in g.get("class", "").split()]
    line = alter.find(f"{SVG}line")
    assert float(line.get("y2")) > float(line.get("y1"))  # slanted down across the steps
    assert alter.find(f"{SVG}text").text == "AlterPartition"
    boxes = [g.find(f"{SVG}title").text for g in groups if g.get("class") == "msc-box"]
    assert boxes == [b.text for b in chart.boxes]
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert f"invariant {kip903_result.invariant} is violated in state {len(trace)}" in texts


# -- ITF ------------------------------------------------------------------------------------


def from_itf(value: Any) -> Any:
    """Decode an ITF value back into the checker's values."""
    if isinstance(value, dict):
        if "#bigint" in value:
            return int(value["#bigint"])
        if "#tup" in value:
            return tuple(from_itf(v) for v in value["#tup"])
        if "#set" in value:
            return frozenset(from_itf(v) for v in value["#set"])
        if "#map" in value:
            return Record({from_itf(k): from_itf(v) for k, v in value["#map"]})
        if "#unserializable" in value:
            return {"None": None}[value["#unserializable"]]
        return Record({k: from_itf(v) for k, v in value.items()})
    assert isinstance(value, (bool, str)), value
    return value


def test_itf_round_trips_every_state(kip903_result, tmp_path):
    itf.write(kip903_result, str(tmp_path / "t.itf.json"))
    doc = json.loads((tmp_path / "t.itf.json").read_text())
    assert doc["#meta"]["format"] == "ITF" and doc["#meta"]["status"] == "violation"
    trace = kip903_result.trace
    assert doc["vars"] == list(trace[0].state)
    assert doc["params"] == list(kip903_result.constants)
    assert len(doc["states"]) == len(trace)
    for index, (state, step) in enumerate(zip(doc["states"], trace)):
        assert state["#meta"]["index"] == index
        assert state["#meta"].get("action") == step.action
        assert {k: from_itf(v) for k, v in state["#meta"].get("params", {}).items()} == step.params
        assert Record({v: from_itf(state[v]) for v in doc["vars"]}) == step.state
        assert {p: from_itf(state[p]) for p in doc["params"]} == kip903_result.constants
        assert set(state) == {"#meta", *doc["vars"], *doc["params"]}


def test_itf_value_forms():
    assert itf.to_itf_value(Record({0: 1})) == {"#map": [[{"#bigint": "0"}, {"#bigint": "1"}]]}
    assert itf.to_itf_value(Record(a=(1, "x"))) == {"a": {"#tup": [{"#bigint": "1"}, "x"]}}
    assert itf.to_itf_value(frozenset({2, 1})) == {"#set": [{"#bigint": "1"}, {"#bigint": "2"}]}
    assert itf.to_itf_value(True) is True and itf.to_itf_value(None) == {"#unserializable": "None"}
    assert itf.to_itf_value(2**70) == {"#bigint": str(2**70)}


# -- JUnit ----------------------------------------------------------------------------------


def test_junit_one_case_per_invariant_failure_with_the_trace(kip903_result, tmp_path):
    junit.write([kip903_result], str(tmp_path / "junit.xml"))
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    # A case per invariant, then per reachability property (not decided: skipped)
    assert [c.get("name") for c in cases] == kip903_result.invariants + kip903_result.reachable
    assert {c.get("classname") for c in cases} == {junit.classname(kip903_result)}
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [kip903_result.invariant]
    failure = failed[0].find("failure")
    assert failure.get("message") == f"invariant {kip903_result.invariant} is violated"
    for number, step in enumerate(kip903_result.trace, start=1):
        assert f"State {number}: {describe_action(step.action, step.params)}" in failure.text
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == len(cases) - 1
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        str(len(cases)),
        "1",
        "0",
    )
    assert root.get("failures") == "1"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "violation" and props["constant.fixed"] == "False"
    assert "Error: invariant" in suite.find("system-out").text


def test_junit_passing_spec_and_control_characters(tmp_path, write_spec):
    spec = write_spec(
        """
        from checker import Record, Spec, action, invariant

        class Bell(Spec):
            def init(self):
                return Record(x="\\x07")

            @action
            def ring(self, s):
                return s

            @invariant
            def fine(self, s):
                return True
        """
    )
    result = check(spec)
    junit.write([result], str(tmp_path / "j.xml"))
    root = ET.parse(tmp_path / "j.xml").getroot()  # parses: no raw control character
    (case,) = root.iter("testcase")
    assert case.get("name") == "fine" and list(case) == []
    assert root.get("tests") == "1" and root.get("failures") == "0"


# -- SARIF ----------------------------------------------------------------------------------

# The required and allowed properties of the SARIF 2.1.0 schema's objects that mc writes
# (sarif-schema-2.1.0.json: `required`, `properties` with additionalProperties false).
SARIF_OBJECTS: dict[str, tuple[set[str], set[str]]] = {
    "log": (
        {"version", "runs"},
        {"$schema", "version", "runs", "inlineExternalProperties", "properties"},
    ),
    "run": (
        {"tool"},
        {
            "tool",
            "invocations",
            "originalUriBaseIds",
            "artifacts",
            "results",
            "properties",
            "automationDetails",
            "columnKind",
            "language",
        },
    ),
    "tool": ({"driver"}, {"driver", "extensions", "properties"}),
    "toolComponent": (
        {"name"},
        {
            "name",
            "version",
            "semanticVersion",
            "informationUri",
            "rules",
            "fullName",
            "organization",
            "shortDescription",
            "fullDescription",
            "properties",
        },
    ),
    "reportingDescriptor": (
        {"id"},
        {
            "id",
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "helpUri",
            "defaultConfiguration",
            "properties",
        },
    ),
    "multiformatMessageString": ({"text"}, {"text", "markdown", "properties"}),
    "message": (set(), {"text", "markdown", "id", "arguments", "properties"}),
    "invocation": (
        {"executionSuccessful"},
        {
            "executionSuccessful",
            "exitCode",
            "commandLine",
            "properties",
            "toolExecutionNotifications",
        },
    ),
    "result": (
        {"message"},
        {
            "ruleId",
            "ruleIndex",
            "rule",
            "kind",
            "level",
            "message",
            "locations",
            "codeFlows",
            "relatedLocations",
            "partialFingerprints",
            "fingerprints",
            "properties",
        },
    ),
    "location": (
        set(),
        {
            "id",
            "physicalLocation",
            "logicalLocations",
            "message",
            "annotations",
            "relationships",
            "properties",
        },
    ),
    "physicalLocation": (
        set(),
        {"address", "artifactLocation", "region", "contextRegion", "properties"},
    ),
    "artifactLocation": (set(), {"uri", "uriBaseId", "index", "description", "properties"}),
    "region": (
        set(),
        {"startLine", "startColumn", "endLine", "endColumn", "snippet", "message", "properties"},
    ),
    "codeFlow": ({"threadFlows"}, {"message", "threadFlows", "properties"}),
    "threadFlow": (
        {"locations"},
        {"id", "message", "initialState", "immutableState", "locations", "properties"},
    ),
    "threadFlowLocation": (
        set(),
        {
            "index",
            "location",
            "stack",
            "kinds",
            "taxa",
            "module",
            "state",
            "nestingLevel",
            "executionOrder",
            "importance",
            "properties",
        },
    ),
}


def validate_sarif(doc: dict[str, Any]) -> None:
    def obj(value: Any, kind: str) -> dict[str, Any]:
        assert isinstance(value, dict), f"{kind}: not an object"
        required, allowed = SARIF_OBJECTS[kind]
        assert required <= set(value), f"{kind}: missing {required - set(value)}"
        assert set(value) <= allowed, f"{kind}: unknown {set(value) - allowed}"
        return value

    def message(value: Any) -> None:
        obj(value, "message")
        assert "text" in value or "id" in value  # anyOf: text or id
        assert isinstance(value.get("text", ""), str)

    def location(value: Any) -> None:
        obj(value, "location")
        if "message" in value:
            message(value["message"])
        physical = obj(value["physicalLocation"], "physicalLocation")
        assert "artifactLocation" in physical or "address" in physical  # anyOf
        artifact = obj(physical["artifactLocation"], "artifactLocation")
        assert isinstance(artifact["uri"], str) and " " not in artifact["uri"]
        region = obj(physical["region"], "region")
        assert isinstance(region["startLine"], int) and region["startLine"] >= 1

    log = obj(doc, "log")
    assert log["version"] == "2.1.0" and isinstance(log["runs"], list)
    for run in log["runs"]:
        obj(run, "run")
        driver = obj(obj(run["tool"], "tool")["driver"], "toolComponent")
        rule_ids = []
        for rule in driver.get("rules", []):
            obj(rule, "reportingDescriptor")
            obj(rule["shortDescription"], "multiformatMessageString")
            rule_ids.append(rule["id"])
        for invocation in run.get("invocations", []):
            obj(invocation, "invocation")
            assert isinstance(invocation["executionSuccessful"], bool)
        for base in run.get("originalUriBaseIds", {}).values():
            obj(base, "artifactLocation")
        for result in run.get("results", []):
            obj(result, "result")
            message(result["message"])
            assert result.get("level", "warning") in ("none", "note", "warning", "error")
            assert rule_ids[result["ruleIndex"]] == result["ruleId"]
            for loc in result.get("locations", []):
                location(loc)
            for flow in result.get("codeFlows", []):
                obj(flow, "codeFlow")
                assert len(flow["threadFlows"]) >= 1
                for thread in flow["threadFlows"]:
                    obj(thread, "threadFlow")
                    assert len(thread["locations"]) >= 1
                    for step in thread["locations"]:
                        obj(step, "threadFlowLocation")
                        location(step["location"])
                        for text in step.get("state", {}).values():
                            obj(text, "multiformatMessageString")


def test_sarif_validates_and_points_at_the_invariant(kip903, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    model, result = kip903
    sarif.write([Checked(result, model)], str(tmp_path / "mc.sarif"))
    doc = json.loads((tmp_path / "mc.sarif").read_text())
    validate_sarif(doc)
    (run,) = doc["runs"]
    assert run["tool"]["driver"]["name"] == "mc"
    (res,) = run["results"]
    assert res["ruleId"] == f"Kip903.{result.invariant}" and res["level"] == "error"
    where = res["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert where["artifactLocation"]["uri"].startswith("specs/")  # relative to the repository
    # The line is where the spec adopts the shared invariant (`name = invariant(...)`), or the
    # `def` of an invariant the spec defines itself.
    uri = where["artifactLocation"]["uri"]
    line = (ROOT / uri).read_text().splitlines()[where["region"]["startLine"] - 1]
    name = result.invariant
    assert re.match(rf"\s*({name}\s*=\s*invariant\(|def {name}\b)", line), line
    text = res["message"]["text"]
    assert f"invariant {result.invariant} is violated" in text
    last = result.trace[-1]
    assert f"State {len(result.trace)}: {describe_action(last.action, last.params)}" in text
    steps = res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"] for s in steps] == [
        f"State {i}: {describe_action(s.action, s.params)}" for i, s in enumerate(result.trace, 1)
    ]
    # Each step points at its action's def and carries the variables it changed.
    send = next(i for i, s in enumerate(result.trace) if s.action == "send_alter_partition")
    loc = steps[send]["location"]["physicalLocation"]
    source = (ROOT / loc["artifactLocation"]["uri"]).read_text().splitlines()
    assert re.match(r"\s*def send_alter_partition\b", source[loc["region"]["startLine"] - 1])
    changed = changed_variables(result.trace[send].state, result.trace[send - 1].state)
    assert steps[send]["state"] == {k: {"text": show(result.trace[send].state[k])} for k in changed}


def test_sarif_method_invariant_points_at_its_def(tmp_path, write_spec, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(
        """
        from checker import Record, Spec, action, invariant

        class Count(Spec):
            def init(self):
                return Record(x=0)

            @action
            def up(self, s):
                return s.replace(x=s.x + 1) if s.x < 2 else None

            @invariant
            def small(self, s):
                return s.x < 2
        """
    )
    model = load_model(str(spec))
    result = check(spec)
    doc = sarif.to_sarif([Checked(result, model)])
    validate_sarif(doc)
    where = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "spec.py"
    assert (
        spec.read_text().splitlines()[where["region"]["startLine"] - 1].strip()
        == "def small(self, s):"
    )


# -- HTML -----------------------------------------------------------------------------------


class Page(HTMLParser):
    """The elements of a page: (tag, attrs, text inside) with ids, and all attributes."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[str, str] = {}
        self._open: list[str] = []
        self.scripts = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        self.scripts += tag == "script"
        if tag in ("meta", "br", "link", "img", "input", "hr"):
            return  # void elements: no end tag
        ident = attributes.get("id") or ""
        if ident:
            self.text.setdefault(ident, "")
        self._open.append(ident)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            if ident:
                self.text[ident] += data

    def with_attr(self, name: str, value: str | None = None) -> list[dict[str, str | None]]:
        return [a for _, a in self.elements if name in a and (value is None or a[name] == value)]


def test_html_has_every_step_and_state(kip903_result):
    text = html.render(kip903_result)
    page = Page(text)
    trace = kip903_result.trace
    n = len(trace)
    for number, step in enumerate(trace, start=1):
        assert describe_action(step.action, step.params) in page.text[f"step-{number}"]
        panel = page.text[f"state-{number}"]
        for name, value in step.state.items():
            assert f"{name}{show(value)}" in panel
    panels = [a for a in page.with_attr("class", "state")]
    assert [a["id"] for a in panels if "hidden" not in a] == [f"state-{n}"]  # the violation
    assert page.scripts == 1
    # Changed variables are highlighted: one row class per changed variable.
    rows = text.split(f'id="state-{n}"')[1].split("</table>")[0]
    changed = changed_variables(trace[-1].state, trace[-2].state)
    assert rows.count('<tr class="changed">') == len(changed)
    assert "msc-row" in text and 'class="tg"' in text


def test_html_is_offline(kip903_result):
    text = html.render(kip903_result)
    page = Page(text)
    for _, attrs in page.elements:
        for name in ("src", "href", "xlink:href"):
            assert name not in attrs or not re.match(r"\w+:", attrs[name] or ""), attrs
    assert not any(tag == "link" for tag, _ in page.elements)
    (csp,) = page.with_attr("http-equiv", "Content-Security-Policy")
    assert "default-src 'none'" in (csp["content"] or "")


def test_html_escapes_all_state_text(write_spec):
    payload = '</script><script>alert(1)</script><img src=x onerror=alert(2)>&amp;"'
    spec = write_spec(
        f"""
        from checker import Record, Spec, action, invariant

        class Evil(Spec):
            '''<b>title</b>'''

            def init(self):
                return Record(note={payload!r}, n=0)

            @action(tag=({payload!r},))
            def poke(self, s, tag):
                return s.replace(note=tag + "!", n=s.n + 1) if s.n < 1 else None

            @invariant
            def quiet(self, s):
                return s.n < 1
        """
    )
    result = check(spec)
    assert result.verdict == "violation"
    text = html.render(result)
    assert payload not in text and "<img" not in text and "alert(1)</script>" not in text
    assert Page(text).scripts == 1
    page = Page(text)
    assert payload + "!" in page.text["state-2"]  # shown as text, decoded by the parser
    assert payload in page.text["step-2"]


def test_html_for_a_passing_spec_states_the_verdict(write_spec):
    spec = write_spec(
        """
        from checker import Record, Spec, action, invariant

        class Ok(Spec):
            def init(self):
                return Record(x=0)

            @action
            def noop(self, s):
                return s

            @invariant
            def fine(self, s):
                return True
        """
    )
    page = Page(html.render(check(spec)))
    assert "All invariants hold over 1 distinct state." in page.text["report"]
    assert page.scripts == 0


STUCK = """
    from checker import Record, Spec, action, invariant

    class Stuck(Spec):
        def init(self):
            return Record(x=0)

        @action
        def step(self, s):
            if s.x == 1:
                return s.replace(x=1 // (s.x - 1))  # raises in state x=1
            return s.replace(x=s.x + 1) if s.x < 1 else None

        @invariant
        def fine(self, s):
            return True
"""


def test_junit_and_sarif_for_an_error_a_deadlock_and_an_unloadable_spec(
    write_spec, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(STUCK)
    model = load_model(str(spec))
    error = check(spec)
    assert error.verdict == "error"
    deadlock = check(
        write_spec(STUCK.replace("if s.x == 1:", "if False:"), "dead.py"), deadlock=True
    )
    assert deadlock.verdict == "deadlock"
    unloadable = NotChecked("broken.py", "broken.py:1: syntax error", ExitCode.SPEC_ERROR)
    root = junit.to_xml([error, deadlock, unloadable]).getroot()
    suites = root.findall("testsuite")
    cases = [[(c.get("name"), [x.tag for x in c]) for c in s.findall("testcase")] for s in suites]
    assert cases == [
        [("fine", ["skipped"]), ("(exploration)", ["error"])],
        [("fine", ["skipped"]), ("deadlock", ["failure"])],
        [("(exploration)", ["error"])],
    ]
    assert "ZeroDivisionError" in suites[0].find("testcase/error").get("message")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "1", "2")

    doc = sarif.to_sarif([Checked(error, model), Checked(deadlock), Checked(unloadable)])
    validate_sarif(doc)
    results = doc["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["mc/evaluation-error", "mc/deadlock", "mc/spec-error"]
    # The error points at the action that raised.
    line = results[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert spec.read_text().splitlines()[line - 1].strip() == "def step(self, s):"
    assert doc["runs"][0]["invocations"][0] == {"executionSuccessful": False, "exitCode": 150}
