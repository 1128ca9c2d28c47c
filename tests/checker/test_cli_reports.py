"""`mc check` with report files, and with several specs (a folder or several files)."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checker import batch
from tests.conftest import SPECS

PASSING = """
    from checker import Record, Spec, action, constant, invariant, terminal

    class Passing(Spec):
        top = constant(2, "largest value")

        def init(self):
            return Record(x=0)

        @action
        def add(self, s):
            return s.replace(x=s.x + 1) if s.x < self.top else None

        @invariant
        def bounded(self, s):
            return s.x <= self.top

        @terminal
        def at_top(self, s):
            return s.x == self.top
"""

FAILING = """
    from checker import Record, Spec, action, invariant, on

    class Failing(Spec):
        def init(self):
            return Record(x=0, inbox=0)

        @action
        @on("client", sends="server", message="Add")
        def send(self, s):
            return s.replace(inbox=s.inbox + 1) if s.inbox == 0 and s.x == 0 else None

        @action
        @on("server", receives="client", message="Add")
        def receive(self, s):
            return s.replace(x=s.x + 1, inbox=s.inbox - 1) if s.inbox else None

        @invariant
        def zero(self, s):
            return s.x == 0
"""

HELPER = """
    def double(x):
        return 2 * x
"""


def folder(tmp_path: Path, **files: str) -> Path:
    root = tmp_path / "cli_report_specs"  # not "specs": a package of that name would shadow ours
    root.mkdir()
    for name, source in files.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))
    return root


def test_folder_with_one_failing_spec_exits_12_with_combined_reports(mc, tmp_path):
    root = folder(tmp_path, a_passing=PASSING, b_failing=FAILING, helper=HELPER)
    (root / "__init__.py").write_text("")
    junit_path, sarif_path, json_path = (tmp_path / n for n in ("j.xml", "s.sarif", "r.json"))
    result = mc(
        "check", root, "--junit", junit_path, "--sarif", sarif_path, "--json", json_path,
        "--progress", "0",
    )  # fmt: skip
    assert result.code == 12
    assert "Checking Passing" in result.out and "Checking Failing" in result.out
    assert "helper.py defines no spec: skipped" in result.err
    assert "Checked 2 specs: 1 ok, 1 violation. Exit code 12 (the worst)." in result.out
    suites = ET.parse(junit_path).getroot().findall("testsuite")
    assert [s.get("name").split()[0] for s in suites] == ["Passing", "Failing"]
    assert [s.get("failures") for s in suites] == ["0", "1"]
    (run,) = json.loads(sarif_path.read_text())["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["Failing.zero"]
    line = run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert (root / "b_failing.py").read_text().splitlines()[
        line - 1
    ].strip() == "def zero(self, s):"
    docs = json.loads(json_path.read_text())
    assert [(d["spec_name"], d["verdict"], d["exit_code"]) for d in docs] == [
        ("Passing", "ok", 0),
        ("Failing", "violation", 12),
    ]
    assert docs[1]["trace"][1]["event"] == {
        "process": "client",
        "kind": "send",
        "peer": "server",
        "message": "Add",
    }


def test_several_files_worst_code_wins_and_a_broken_spec_does_not_stop_the_run(mc, tmp_path):
    root = folder(tmp_path, failing=FAILING, broken="def oops(:\n", passing=PASSING)
    junit_path = tmp_path / "j.xml"
    args = [root / "failing.py", root / "broken.py", root / "passing.py"]
    result = mc("check", *args, "--junit", junit_path, "--progress", "0")
    assert result.code == 150
    assert "broken.py:1: syntax error" in result.err
    assert "Checking Failing" in result.out and "Checking Passing" in result.out
    assert "1 violation, 1 not checked, 1 ok. Exit code 150" in result.out
    suites = ET.parse(junit_path).getroot().findall("testsuite")
    errors = [s for s in suites if s.get("errors") == "1"]
    assert len(errors) == 1 and "syntax error" in errors[0].find("testcase/error").get("message")


def test_a_file_named_explicitly_must_define_a_spec(mc, tmp_path):
    root = folder(tmp_path, helper=HELPER, passing=PASSING)
    result = mc("check", root / "helper.py", root / "passing.py", "--progress", "0")
    assert result.code == 150 and "defines no Spec subclass" in result.err


def test_exit_code_order():
    assert batch.worst([0, 152, 11]) == 11
    assert batch.worst([12, 11, 152, 0]) == 12
    assert batch.worst([12, 75]) == 75
    assert batch.worst([75, 151]) == 151 and batch.worst([151, 150, 12]) == 150
    assert batch.worst([]) == 0


def test_constants_apply_to_the_specs_that_declare_them(mc, tmp_path):
    root = folder(tmp_path, failing=FAILING, passing=PASSING)
    json_path = tmp_path / "r.json"
    result = mc("check", root, "-D", "top=5", "--json", json_path, "--progress", "0")
    assert result.code == 12
    docs = {d["spec_name"]: d for d in json.loads(json_path.read_text())}
    assert docs["Passing"]["constants"] == {"top": 5} and docs["Failing"]["constants"] == {}
    unknown = mc("check", root, "-D", "nope=1")
    assert unknown.code == 151 and "-D nope: no spec of this run declares it" in unknown.err


def test_an_empty_folder_is_an_error(mc, tmp_path):
    (tmp_path / "empty").mkdir()
    result = mc("check", tmp_path / "empty")
    assert result.code == 150 and "no spec to check" in result.err


def test_a_file_given_twice_is_checked_once(mc, tmp_path):
    """Several arguments make a multi-spec run (a JSON list), even if they name one file."""
    json_path = tmp_path / "r.json"
    result = mc(
        "check", SPECS / "examples" / "die_hard.py", SPECS / "examples" / "die_hard.py",
        "--json", json_path, "--progress", "0",
    )  # fmt: skip
    assert result.code == 12
    assert len(json.loads(json_path.read_text())) == 1  # the same file twice is checked once


def test_trace_outputs_of_a_single_spec(mc, tmp_path):
    out = {name: tmp_path / f"t.{ext}" for name, ext in [
        ("html", "html"), ("dot", "dot"), ("mermaid", "md"), ("msc", "svg"), ("itf", "itf.json"),
    ]}  # fmt: skip
    args = [x for name, path in out.items() for x in (f"--{name}", path)]
    spec = SPECS / "light" / "kip903.py"
    result = mc("check", spec, "-D", "fixed=false", *args, "--progress", "0")
    assert result.code == 12
    assert out["html"].read_text().startswith("<!DOCTYPE html>")
    assert out["dot"].read_text().startswith('digraph "Kip903" {')
    assert out["mermaid"].read_text().startswith("```mermaid\nflowchart TD\n")
    assert ET.parse(out["msc"]).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert json.loads(out["itf"].read_text())["#meta"]["format"] == "ITF"
    mmd = tmp_path / "chart.mmd"
    assert mc("check", spec, "-D", "fixed=false", "--msc", mmd).code == 12
    assert mmd.read_text().startswith("sequenceDiagram\n")


def test_trace_outputs_of_a_folder_run_are_named_per_spec(mc, tmp_path):
    root = folder(tmp_path, failing=FAILING, passing=PASSING)
    out = tmp_path / "out"
    out.mkdir()
    result = mc("check", root, "--html", out / "t.html", "--dot", out / "t.dot", "--progress", "0")
    assert result.code == 12
    assert sorted(p.name for p in out.iterdir()) == [
        "t.failing.dot",
        "t.failing.html",
        "t.passing.html",  # the HTML report states a pass too; a graph needs a trace
    ]
    assert "--dot: " in result.err and "passing.py: no trace (ok), not written" in result.err
    assert "Add" in (out / "t.failing.html").read_text()


def test_no_trace_no_file_and_unwritable_paths_fail_first(mc, write_spec, tmp_path):
    spec = write_spec(PASSING)
    dot_path = tmp_path / "t.dot"
    result = mc("check", spec, "--dot", dot_path)
    assert result.code == 0 and not dot_path.exists()
    assert "no trace (ok), not written" in result.err
    bad = mc("check", spec, "--sarif", tmp_path / "missing" / "x.sarif")
    assert bad.code == 151 and "--sarif" in bad.err and "no such folder" in bad.err
    assert "Checking" not in bad.out  # refused before the run


@pytest.mark.parametrize("option", ["--svg", "--png"])
def test_svg_and_png_need_graphviz(mc, write_spec, tmp_path, monkeypatch, option):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    result = mc("check", write_spec(FAILING), option, tmp_path / "t.out")
    assert result.code == 151
    assert f"{option} needs Graphviz's `dot` program" in result.err
    assert "apt-get install graphviz" in result.err


def test_a_run_of_one_spec_in_a_folder_says_one_spec(mc, tmp_path):
    root = folder(tmp_path, only=PASSING)
    result = mc("check", root, "--progress", "0")
    assert result.code == 0
    assert "Checked 1 spec: 1 ok. Exit code 0 (the worst)." in result.out
