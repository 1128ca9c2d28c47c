"""Shared helpers: write a spec to a temp file, run `mc` in-process and get its exit code."""

from __future__ import annotations

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
