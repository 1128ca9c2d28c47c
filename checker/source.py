"""Where a spec's invariants and actions are defined, for reports that point into code (SARIF).

A method (`@invariant def name(self, s)`) is located at its `def` line. A shared predicate
adopted with `name = invariant(replication.name)` is located at that assignment in the spec
class: that line is what makes it part of this spec, and it is in the file under review.
"""

from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass
from typing import Any

from checker.model import Model


@dataclass(frozen=True)
class Location:
    path: str  # relative to the working directory when the file is below it
    line: int  # from 1


def display_path(path: str) -> str:
    """`path` relative to the working directory if it is below it, with forward slashes."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    chosen = absolute if relative.startswith("..") else relative
    return chosen.replace(os.sep, "/")


def _source(obj: Any) -> tuple[str, list[str], int] | None:
    try:
        lines, start = inspect.getsourcelines(obj)
        path = inspect.getsourcefile(obj)
    except (OSError, TypeError):
        return None
    if path is None:
        return None
    return path, lines, max(start, 1)


def _find(obj: Any, pattern: str) -> Location | None:
    found = _source(obj)
    if found is None:
        return None
    path, lines, start = found
    regex = re.compile(pattern)
    for offset, line in enumerate(lines):
        if regex.match(line):
            return Location(display_path(path), start + offset)
    return None


def spec_location(model: Model) -> Location:
    cls = type(model.spec)
    return _find(cls, rf"\s*class\s+{cls.__name__}\b") or Location(display_path(model.path), 1)


def member_location(model: Model, name: str) -> Location:
    """The `def` line of an action or invariant, or the assignment that adopts a shared
    invariant; the spec class if neither is found."""
    cls = type(model.spec)
    owner = next((k for k in cls.__mro__ if name in vars(k)), None)
    if owner is None:
        return spec_location(model)
    value = vars(owner)[name]
    # invariant(shared) or leads_to(p, q): point at the adopting assignment
    if hasattr(value, "__wrapped__") or not inspect.isfunction(value):
        found = _find(owner, rf"\s*{re.escape(name)}\s*(:[^=]*)?=")
        if found is not None:
            return found
        value = value.__wrapped__
    return _find(value, rf"\s*(async\s+)?def\s+{re.escape(name)}\b") or spec_location(model)
