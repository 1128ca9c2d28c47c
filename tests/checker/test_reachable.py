"""Reachability properties (@reachable): a complete search that never reaches one is a
violation; --witness NAME prints the shortest behavior to a state satisfying it, in every
report, the same whatever the number of workers or the memory for live states."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from checker.loader import load_model
from checker.local.bfs import check
from checker.reports import html, itf
from checker.reports.sarif import Checked, to_sarif
from checker.search.options import Options
from tests.conftest import SPECS, lines_after, reports

SPEC = """
from checker import Record, Spec, action, constant, invariant, reachable, terminal


class Steps(Spec):
    top = constant(3, "the largest value")
    max_resets = constant(0, "fault bound: resets")

    def init(self):
        return Record(x=0, resets=0)

    @action(step=(1, 2))
    def add(self, s, step):
        return None if s.x + step > self.top else s.replace(x=s.x + step)

    @action(switch="max_resets")
    def reset(self, s):
        if s.x == 0 or s.resets >= self.max_resets:
            return None
        return s.replace(x=0, resets=s.resets + 1)

    @terminal
    def done(self, s):
        return s.x == self.top

    @invariant
    def small(self, s):
        return s.x <= self.top

    @reachable
    def at_top(self, s):
        '''Some state is at the top.'''
        return s.x == self.top

    @reachable
    def odd(self, s):
        return s.x % 2 == 1

    @reachable(switch="max_resets")
    def was_reset(self, s):
        return s.resets > 0
"""


@pytest.fixture
def steps(write_spec):
    return write_spec(SPEC, "steps.py")


def test_reached_properties_and_their_depth(mc, steps):
    run = mc("check", steps, "--progress", "0")
    assert run.code == 0
    lines = run.out.splitlines()
    assert "  reachable: at_top, odd" in lines
    assert "Every reachability property is reached: at_top (depth 3), odd (depth 2)." in lines
    assert "Off (switched off by the constants):" in lines
    assert "  reset, was_reset: max_resets=0" in lines


def test_a_property_never_reached_is_a_violation_with_its_own_message(mc, steps, tmp_path):
    out, flags = reports(tmp_path, "json", "xml", "sarif")
    run = mc("check", steps, "-D", "top=0", "--progress", "0", *flags)
    assert run.code == 12
    assert (
        "Error: reachability properties at_top, odd are never reached: no reachable state"
        " satisfies them."
    ) not in run.out  # at_top holds in the initial state when top is 0
    assert (
        "Error: reachability property odd is never reached: no reachable state satisfies it.\n"
        "All invariants hold over 1 distinct state."
    ) in run.out
    doc = json.loads(out["json"].read_text())
    assert (doc["verdict"], doc["exit_code"], doc["unreached"]) == ("violation", 12, ["odd"])
    assert (doc["reachable"], doc["reached"]) == (["at_top", "odd"], {"at_top": 1})
    cases = {c.get("name"): c for c in ET.parse(out["xml"]).getroot().iter("testcase")}
    assert [x.tag for x in cases["odd"]] == ["failure"] and list(cases["small"]) == []
    message = cases["odd"].find("failure").get("message")
    assert message == "reachability property odd is never reached"
    results = json.loads(out["sarif"].read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("Steps.odd", "error"),
        ("mc/vacuity", "warning"),  # add is never enabled when top is 0
    ]
    result = results[0]
    line = SPEC.splitlines().index("    def odd(self, s):") + 1
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == line


def test_the_witness_is_the_shortest_behavior_in_every_report(mc, steps, tmp_path):
    out, flags = reports(tmp_path, "json", "xml", "itf", "html", "sarif")
    run = mc("check", steps, "--witness", "at_top", "--progress", "0", *flags)
    assert run.code == 0
    assert lines_after(run.out, "The shortest behavior reaching at_top, 3 states:", 7) == [
        "State 1: initial state",
        "    resets = 0",
        "    x      = 0",
        "State 2: add(step=1)",
        "    x = 1",
        "State 3: add(step=2)",
        "    x = 3",
    ]
    doc = json.loads(out["json"].read_text())
    assert doc["witness"] == "at_top" and [s["state"]["x"] for s in doc["trace"]] == [0, 1, 3]
    cases = {c.get("name"): c for c in ET.parse(out["xml"]).getroot().iter("testcase")}
    assert (
        "The shortest behavior reaching at_top, 3 states:"
        in cases["at_top"].find("system-out").text
    )
    trace = json.loads(out["itf"].read_text())
    assert "the shortest behavior reaching at_top" in trace["#meta"]["description"]
    assert len(trace["states"]) == 3
    assert "The shortest behavior reaching at_top, 3 states:" in out["html"].read_text()
    (note,) = json.loads(out["sarif"].read_text())["runs"][0]["results"]
    assert (note["ruleId"], note["level"]) == ("Steps.at_top", "note")
    assert len(note["codeFlows"][0]["threadFlows"][0]["locations"]) == 3


@pytest.mark.parametrize("options", [{"workers": 2}, {"live_bytes": 0}])
def test_the_same_witness_whatever_the_workers_and_memory(options):
    model = load_model(SPECS / "light" / "kip903.py", {"max_unclean_shutdowns": "0"})
    wanted = "replica_back_with_an_empty_disk"
    one = check(model, Options(witness=wanted))
    other = check(model, Options(witness=wanted, **options))
    assert one.verdict == other.verdict == "ok" and one.witness == other.witness == wanted
    assert one.reached == other.reached
    assert [(s.action, s.params, s.state) for s in one.trace] == [
        (s.action, s.params, s.state) for s in other.trace
    ]
    assert [s.action for s in one.trace] == [None, "replace_disk", "register_broker"]


def test_a_witness_needs_a_declared_property_and_gives_way_to_a_violation(
    mc, steps, write_spec, tmp_path
):
    unknown = mc("check", steps, "--witness", "nope")
    assert unknown.code == 151
    assert "--witness nope: Steps has no such reachability property (reachable: at_top, odd)" in (
        unknown.err
    )
    broken = write_spec(SPEC.replace("return s.x <= self.top", "return s.x < self.top"), "b.py")
    out = tmp_path / "b.json"
    violated = mc("check", broken, "--witness", "at_top", "--progress", "0", "--json", out)
    assert violated.code == 12 and "Error: invariant small is violated." in violated.out
    doc = json.loads(out.read_text())
    assert doc["witness"] is None and doc["invariant"] == "small"


def test_a_reachability_property_that_raises_is_an_error_with_its_state(write_spec):
    path = write_spec(SPEC.replace("return s.x % 2 == 1", "return 1 // (2 - s.x) > 5"), "r.py")
    result = check(load_model(path))
    assert result.verdict == "error" and result.exit_code == 75
    assert (result.error.kind, result.error.name) == ("reachable", "odd")
    assert [s.state.x for s in result.trace] == [0, 2]


def test_the_witness_in_html_and_itf_without_the_command_line(steps):
    model = load_model(steps)
    result = check(model, Options(witness="odd"))
    assert [s.state.x for s in result.trace] == [0, 1]
    assert "reaching odd" in html.render(result)
    assert "reaching odd" in itf.to_itf(result)["#meta"]["description"]
    assert to_sarif([Checked(result, model)])["runs"][0]["results"][0]["level"] == "note"


def test_mc_list_shows_reachability_final_states_switches_and_types(mc, steps, write_spec):
    listed = mc("list", steps).out
    assert "  reset()  [switch: max_resets]\n" in listed
    assert (
        "Reachability properties:\n  at_top  Some state is at the top.\n  odd\n"
        "  was_reset  [off: max_resets=0]\n"
    ) in listed
    assert "Final states (@terminal):\n  done\n" in listed
    anchor = "    max_resets = constant("
    declared = SPEC.replace(anchor, "    x: int | None\n" + anchor)
    typed = write_spec(declared, "t.py")
    assert "Declared types:\n  x: int | None\n" in mc("list", typed).out
