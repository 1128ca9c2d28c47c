"""Shared helpers: write a spec to a temp file, run `mc` in-process and get its exit code."""

from __future__ import annotations

import signal
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from checker.cli import main

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


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
