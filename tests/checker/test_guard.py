"""Spec code cannot end a run (checker.guard): whatever way it tries, the run reports the spec's
error, a folder run's exit code is the worst, and mc's own handlers are put back after."""

from __future__ import annotations

import json
import os
import signal

import pytest

from checker import action, guard, invariant
from checker.errors import ExitCode
from checker.local.bfs import check
from checker.model import Model
from tests.checker.test_hostile_input import counter
from tests.checker.toys import FromZero

EXITS = counter(effect='__import__("sys").exit(0) if s.x == 1 else s.replace(x=s.x + step)')
VIOLATES = counter(holds="s.x < 2")

pytestmark = pytest.mark.fault("spec-ends-the-run")


def test_a_folder_run_reports_the_exit_and_exits_with_the_worst_code(mc, tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "a_exits.py").write_text(EXITS)
    (folder / "b_violates.py").write_text(VIOLATES)
    report = tmp_path / "run.json"
    result = mc("check", folder, "--json", report)
    assert result.code == ExitCode.EVALUATION_ERROR
    assert "Checked 2 specs: 1 error, 1 violation. Exit code 75 (the worst)." in result.out
    verdicts = [r["verdict"] for r in json.loads(report.read_text())]
    assert verdicts == ["error", "violation"]


def test_the_reports_are_written_when_the_spec_exits(mc, tmp_path):
    spec = tmp_path / "spec.py"
    spec.write_text(EXITS)
    result = mc("check", spec, "--json", tmp_path / "r.json", "--junit", tmp_path / "r.xml")
    assert result.code == ExitCode.EVALUATION_ERROR
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["verdict"] == "error" and written["distinct_states"] == 3
    assert "<error" in (tmp_path / "r.xml").read_text()


def test_simulate_reports_the_exit_too(mc, tmp_path):
    spec = tmp_path / "spec.py"
    spec.write_text(EXITS)
    result = mc("simulate", spec, "--seed", "1", "--traces", "5")
    assert result.code == ExitCode.EVALUATION_ERROR
    assert "raised SystemExit: 0 (spec code cannot end mc's run" in result.out


class Exits(FromZero):
    @action
    def step(self, s):
        if s.x == 1:
            os._exit(0)
        return s.replace(x=s.x + 1)

    @invariant
    def small(self, s):
        return s.x < 5


def test_the_python_api_is_guarded_and_puts_everything_back():
    sigint, sigterm = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    result = check(Model(Exits()))
    assert result.verdict == "error" and result.error is not None
    assert (result.error.name, result.distinct_states) == ("step", 2)
    assert "os._exit(0) called" in result.error.message
    assert os._exit is guard.real_exit
    assert signal.getsignal(signal.SIGINT) is sigint
    assert signal.getsignal(signal.SIGTERM) is sigterm


def test_the_cli_puts_everything_back(mc, tmp_path):
    spec = tmp_path / "spec.py"
    spec.write_text(EXITS)
    sigint, sigterm = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert mc("check", spec, "--workers", "2").code == ExitCode.EVALUATION_ERROR
    assert os._exit is guard.real_exit
    assert signal.getsignal(signal.SIGINT) is sigint
    assert signal.getsignal(signal.SIGTERM) is sigterm
