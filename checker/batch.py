"""Checking several specs in one run (`mc check specs/`, `mc check a.py b.py`): which files a
folder stands for, how the run's exit code ranks the specs' codes, and its closing summary (the
run itself: checker.commands.check_files).

A folder stands for every `*.py` below it, in path order, except `__init__.py`, `conftest.py`,
and files or folders whose name starts with `_` or `.`. A file found in a folder that defines
no spec (a helper module) is skipped with a note; a file named on the command line that
defines none is an error (exit 150), as it is when checked alone.

The run's exit code is the worst of the specs' codes, in this order (worst first):
153 (the engine could not run or go on: out of memory, a worker lost) > 150 (a spec did not
load) > 151 (bad constants) > 75 (spec code raised) > 12 (invariant violated) > 13 (temporal
property violated) > 11 (deadlock) > 15 (--strict: a vacuity warning) > 152 (a bound stopped
the search) > 0. Failing to check is worse than any verdict: a spec that did not run proves
nothing, a violation at least says something.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.result import CheckResult, NotChecked
from checker.values import count

SEVERITY = [0, 152, 15, 11, 13, 12, 75, 151, 150, 153]  # best to worst


@dataclass(frozen=True)
class SpecFile:
    path: str
    explicit: bool  # named on the command line (not found in a folder)


def _skipped(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    if any(p.startswith((".", "_")) for p in parts):
        return True
    return path.name == "conftest.py"


def spec_files(args: Sequence[str]) -> list[SpecFile]:
    files: list[SpecFile] = []
    seen: set[Path] = set()
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = [
                SpecFile(str(p), False) for p in sorted(path.rglob("*.py")) if not _skipped(p, path)
            ]
        else:
            found = [SpecFile(arg, True)]
        for spec in found:
            key = Path(spec.path).resolve()
            if key not in seen:
                seen.add(key)
                files.append(spec)
    return files


def severity(code: int) -> int:
    """The rank of an exit code; codes outside the table rank worst."""
    return SEVERITY.index(code) if code in SEVERITY else len(SEVERITY)


def worst(codes: Iterable[int]) -> int:
    return max(codes, key=severity, default=0)


def summary(results: Sequence[CheckResult | NotChecked]) -> str:
    """A closing table for a multi-spec run, one line per spec."""
    lines = []
    width = max((len(r.spec) for r in results), default=0)
    for r in results:
        if isinstance(r, NotChecked):
            verdict, detail = "not checked", r.message.splitlines()[0]
        else:
            verdict = r.verdict
            detail = r.spec_name
            if r.invariant or r.property:
                detail = f"invariant {r.invariant}" if r.invariant else f"property {r.property}"
        lines.append(f"  {verdict:<12} {int(r.exit_code):>3}  {r.spec:<{width}}  {detail}")
    code = worst(int(r.exit_code) for r in results)
    counts: dict[str, int] = {}
    for r in results:
        key = "not checked" if isinstance(r, NotChecked) else r.verdict
        counts[key] = counts.get(key, 0) + 1
    tally = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    head = f"Checked {count(len(results), 'spec')}: {tally}. Exit code {code} (the worst)."
    return "\n".join([head, *lines]) + "\n"
