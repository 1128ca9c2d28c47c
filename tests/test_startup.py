"""`mc check` starts fast (issue 27: at most 0.5 s on a trivial spec): the command line and a
check of a spec without temporal properties import none of the heavy packages that only some
commands need. scripts/bench.py's start-up table measures the time itself."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

HEAVY = ("pyspark", "pyarrow", "pandas", "scipy", "networkx", "werkzeug", "tqdm")
LAZY = ("checker.spark", "checker.ablate", "checker.explore", "checker.reports.ablation")

LOADED = """
import sys
{run}
heavy = {heavy!r}
lazy = {lazy!r}
print(sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy}}
             | {{m for m in sys.modules if m in lazy}}))
"""


def loaded(run: str) -> list[str]:
    """The heavy packages and lazy modules in sys.modules after `run`, in a fresh Python."""
    source = LOADED.format(run=run, heavy=HEAVY, lazy=LAZY)
    out = subprocess.run(
        [sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return eval(out.stdout.splitlines()[-1])  # after the report, if `run` printed one


def test_importing_the_command_line_imports_no_heavy_package():
    assert loaded("import checker.cli") == []


def test_a_check_without_temporal_properties_imports_no_heavy_package():
    run = (
        "from checker.cli import main\n"
        "try:\n"
        "    main(['check', 'specs/examples/two_phase.py', '-D', 'rm=2'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
    )
    assert loaded(run) == []


def test_temporal_properties_import_what_they_need(tmp_path):
    spec = tmp_path / "spec.py"
    spec.write_text(
        "from checker import Record, Spec, action, eventually\n"
        "class Up(Spec):\n"
        "    def init(self):\n"
        "        return Record(x=0)\n"
        "    @action(fair='weak')\n"
        "    def inc(self, s):\n"
        "        return s.replace(x=s.x + 1) if s.x < 2 else None\n"
        "    @eventually\n"
        "    def top(self, s):\n"
        "        return s.x == 2\n"
    )
    run = (
        "from checker.cli import main\n"
        "try:\n"
        f"    main(['check', {str(spec)!r}, '--no-deadlock'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
    )
    assert "scipy" in loaded(run)


THREADS = """
import os, checker.cli, numpy
print(os.environ["OPENBLAS_NUM_THREADS"])
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("Threads:")))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_numpy_starts_no_blas_threads_unless_asked():
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = [sys.executable, "-c", THREADS]
    out = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1"]  # the setting, and this process's one thread
    env["OPENBLAS_NUM_THREADS"] = "2"
    out = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "2"  # the user's own setting is kept
