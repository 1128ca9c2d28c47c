"""Shared helpers: write a spec to a temp file, run `mc` in-process and get its exit code."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from checker.cli import main

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
MC = [sys.executable, "-m", "checker"]  # `mc` in a child process, this interpreter's
CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (`make test` installs Debian's chromium through"
    " scripts/ensure-test-tools.sh)",
)


# The report options of `mc check`, by the ending of the file each writes
REPORT_FLAGS = {
    "json": "--json",
    "xml": "--junit",
    "itf": "--itf",
    "html": "--html",
    "sarif": "--sarif",
}


def reports(folder: Path, *kinds: str) -> tuple[dict[str, Path], list[str | Path]]:
    """Report files in `folder`, one of each kind ("json", "xml", ...), and the options of
    `mc check` that write them."""
    out = {kind: folder / f"report.{kind}" for kind in kinds}
    return out, [arg for kind in kinds for arg in (REPORT_FLAGS[kind], out[kind])]


def lines_after(text: str, line: str, count: int | None = None) -> list[str]:
    """The `count` lines (default: all) of `text` after its line `line`."""
    lines = text.splitlines()
    at = lines.index(line) + 1
    return lines[at : None if count is None else at + count]


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def mc(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """Run the `mc` CLI in-process: `mc("check", path, "-D", "x=1")`."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main([str(a) for a in args])
        captured = capsys.readouterr()
        return Run(int(exit_info.value.code or 0), captured.out, captured.err)

    return run


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write spec source (dedented) to a fresh file and return its path."""

    def write(source: str, name: str = "spec.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return path

    return write


def default_sigint() -> None:
    """`preexec_fn` of a child process a test interrupts with SIGINT: a shell starts background
    jobs with SIGINT ignored, which the child would inherit (and Python then installs no
    KeyboardInterrupt handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[str, str]:
    """`proc.communicate(timeout)`, killing the process if it does not end in time (a run
    left behind would slow down every later test)."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


# -- how `make test` shares the tests out (pytest-xdist) ---------------------------------------

# `--dist loadfile` runs each test file in one process, so that its module- and session-scoped
# fixtures (a Spark session, a Spark cluster, a browser) are made once. These long files are
# spread instead, a test at a time and before the other files, so that no process is left with
# a whole one at the end: a Spark session starts in each process that runs a test of
# test_spark_engine.py. The tests named here stay together in one unit, as they share a fixture
# made once (and the cluster's JVMs).
SPREAD: dict[str, dict[str, str]] = {
    "tests/checker/test_spark_engine.py": {},
    "tests/checker/test_spark_cluster.py": {
        "test_a_bundled_spec_on_a_standalone_cluster_whose_python_lacks_mc": "cluster",
        "test_an_executor_python_without_a_module_is_named_with_the_fix": "cluster",
    },
    "tests/specs/test_ablation.py": {
        "test_each_kip_table_says_which_property_breaks_without_which_rule": "tables",
        "test_the_docs_table_is_what_mc_ablate_writes": "tables",
    },
    "tests/checker/test_vacuity.py": {},
    "tests/specs/test_kraft_quorum.py": {},
    "tests/checker/test_fuzz_faults.py": {},  # one long test, which must not be the last
}


def work_unit(nodeid: str) -> str:
    """The unit of `--dist loadfile` a test belongs to: its file, its group of SPREAD, or itself."""
    path, _, test = nodeid.partition("::")
    groups = SPREAD.get(path)
    if groups is None:
        return path
    name = test.split("[", 1)[0]
    return f"{path}::{groups[name]}" if name in groups else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadfile` by work_unit(), the units of SPREAD first. (Not xdist_group marks with
    `--dist loadgroup`: pytest 9.2's node ids silently undo them, pytest-xdist issue #1386.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduler(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node: object) -> None:
            # The long tests first (latency-bound Spark ones among them), the files after: the
            # last units handed out are small files, not a test that takes a minute.
            first = next((unit for unit in self.workqueue if "::" in unit), None)
            if first is not None:
                self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return Scheduler(config, log)
