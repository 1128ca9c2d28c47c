"""The vacuity check (checker.vacuity): after a complete search, what of the spec never
happened is a warning in every report, and a failure (exit 15) with --strict."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from checker import batch
from checker.errors import ExitCode
from checker.testing import check
from tests.conftest import SPECS, lines_after, reports

SPEC = """
from checker import Record, Spec, action, constant, invariant, terminal


class Vac(Spec):
    max_crashes = constant(0, "fault bound: crashes")

    def init(self):
        return Record(x=0, crashes=0)

    @action(step=(1, 2))
    def add(self, s, step):
        return None if s.x + step > 3 else self.moved(s, s.x + step)

    def moved(self, s, x):  # a helper: it looks like an action, but add calls it
        return s.replace(x=x)

    @action
    def reset(self, s):
        if s.x == 3:
            s.replace(x=0)  # the return forgotten: never enabled

    @action(switch="max_crashes")
    def crash(self, s):
        if s.crashes >= self.max_crashes:
            return None
        return s.replace(x=0, crashes=s.crashes + 1)

    def rewind(self, s):  # @action forgotten
        return s.replace(x=0) if s.x else None

    @terminal
    def done(self, s):
        return s.x == 3

    @invariant
    def small(self, s):
        return s.x <= 3
"""


def line_of(text: str) -> int:
    return SPEC.splitlines().index(text) + 1


REWIND = line_of("    def rewind(self, s):  # @action forgotten")


def test_what_never_happened_is_warned_about_and_what_is_switched_off_is_listed(write_spec):
    path = write_spec(SPEC)
    result = check(path)
    assert result.verdict == "ok" and result.exit_code == ExitCode.OK
    assert [(w.kind, w.name) for w in result.warnings] == [
        ("never-enabled", "reset"),
        ("undeclared", "rewind"),
    ]
    assert result.warnings[1].message == (
        f"rewind ({path}:{REWIND}) looks like an action, (self, s, ...) returning"
        " s.replace(...), but is not declared and nothing calls it: decorate it with @action?"
    )
    assert result.off == {"crash": "max_crashes=0"}
    strict = check(path, strict=True)
    assert strict.exit_code == ExitCode.STRICT == 15 and not strict.passed


def test_an_action_that_fires_although_switched_off_is_warned_about(write_spec):
    path = write_spec(SPEC.replace("if s.crashes >= self.max_crashes:", "if s.crashes >= 1:"))
    result = check(path)
    assert [(w.kind, w.name) for w in result.warnings][1] == ("fired-while-off", "crash")
    assert result.warnings[1].message == (
        "crash fired 4 times although max_crashes=0 switches it off: is its switch= wrong?"
    )
    on = check(path, max_crashes=1)
    assert on.off == {} and "crash" not in [w.name for w in on.warnings]


def test_a_switch_that_is_no_constant_is_refused(mc, write_spec):
    path = write_spec(SPEC.replace('switch="max_crashes"', 'switch="max_crash"'))
    result = mc("check", path)
    assert result.code == 150
    line = line_of('    @action(switch="max_crashes")')
    assert f"{path}:{line}: action crash: switch='max_crash' is not a constant (max_crashes)" in (
        result.err
    )


def test_a_search_cut_short_warns_about_nothing(write_spec):
    path = write_spec(SPEC)
    assert check(path, max_states=2).warnings == []
    violated = check(path.parent / write_spec(SPEC.replace("s.x <= 3", "s.x <= 2"), "v.py"))
    assert violated.verdict == "violation" and violated.warnings == []


def test_every_report_carries_the_warnings(mc, write_spec, tmp_path):
    path = write_spec(SPEC)
    out, flags = reports(tmp_path, "json", "xml", "sarif")
    run = mc("check", path, "--progress", "0", *flags)
    assert run.code == 0
    lines = run.out.splitlines()
    assert lines_after(run.out, "All invariants hold over 4 distinct states.", 4) == [
        "Warning: reset was never enabled: is its guard or its return wrong?",
        f"Warning: rewind ({path}:{REWIND}) looks like an action, (self, s, ...) returning"
        " s.replace(...), but is not declared and nothing calls it: decorate it with @action?",
        "Off (switched off by the constants):",
        "  crash: max_crashes=0",
    ]
    assert "  reset            0            0   never enabled" in lines
    assert "  crash            0            0   off (max_crashes=0)" in lines
    doc = json.loads(out["json"].read_text())
    assert [w["name"] for w in doc["warnings"]] == ["reset", "rewind"]
    assert (doc["off"], doc["strict"], doc["exit_code"]) == ({"crash": "max_crashes=0"}, False, 0)
    cases = ET.parse(out["xml"]).getroot().iter("testcase")
    vacuity = {c.get("name"): [x.tag for x in c] for c in cases if "vacuity" in c.get("name")}
    assert vacuity == {"(vacuity) reset": ["skipped"], "(vacuity) rewind": ["skipped"]}
    results = json.loads(out["sarif"].read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("mc/vacuity", "warning")] * 2
    where = results[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert where == line_of("    def reset(self, s):")

    strict = mc(
        "check", path, "--progress", "0", "--strict", "--json", out["json"], "--junit",
        out["xml"], "--sarif", out["sarif"],
    )  # fmt: skip
    assert strict.code == 15
    assert "Error: --strict: 2 warnings about what never happened (exit 15)." in strict.out
    assert json.loads(out["json"].read_text())["exit_code"] == 15
    cases = ET.parse(out["xml"]).getroot().iter("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["(vacuity) reset", "(vacuity) rewind"]
    sarif = json.loads(out["sarif"].read_text())["runs"][0]
    assert {r["level"] for r in sarif["results"]} == {"error"}
    assert sarif["invocations"][0]["exitCode"] == 15


def test_strict_ranks_between_a_deadlock_and_a_bound():
    assert batch.worst([0, 15, 152]) == 15
    assert batch.worst([15, 11]) == 11


# The bundled specs with their defaults: nothing of any of them goes unexercised (die_hard's
# invariant is meant to fail: its counterexample is the puzzle's solution).
BUNDLED_DEFAULTS = [
    ("examples/die_hard.py", 12),
    ("examples/replicated_log.py", 0),
    ("examples/two_phase.py", 0),
    ("light/replication.py", 0),
    ("light/kip841.py", 0),
    ("light/kip903.py", 0),
    ("light/kip966.py", 0),
    ("light/raft.py", 0),
    ("light/kip996.py", 0),
    ("light/kip996_read.py", 0),
    ("kraft.py", 0),
    ("kraft_quorum.py", 0),
    ("kip841.py", 0),
    ("kip903.py", 0),
    ("kip966.py", 0),
    ("kip996.py", 0),
    ("kip1023.py", 0),
]


@pytest.mark.parametrize(("spec", "code"), BUNDLED_DEFAULTS, ids=[s for s, _ in BUNDLED_DEFAULTS])
def test_every_bundled_spec_passes_strict_with_its_defaults(mc, spec, code):
    result = mc("check", SPECS / spec, "--strict", "--no-liveness", "--progress", "0")
    assert result.code == code, result.out
    assert "Warning:" not in result.out
