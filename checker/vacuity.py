"""The vacuity check: after a search that explored every reachable state, what of the spec
never happened. An invariant holds vacuously over a model where the action that would break it
is never enabled (its guard is wrong, or its `return` was forgotten), and a method that was
meant to be an action but lacks `@action` is not explored at all: "All invariants hold" would
then be no proof. Reported after the verdict, as warnings; `mc check --strict` fails the run
on them (exit 15).

- an action never enabled in any reachable state;
- an action whose parameter domain is empty (it is never even tried);
- an action that the constants switch off (`@action(switch="max_crashes")`, the constant 0 or
  False) is listed as off, not warned about; one that fires although switched off is warned
  about (its switch is wrong);
- a method of the spec that looks like an action (its signature is `(self, s, ...)` and it
  returns `<state>.replace(...)`) but is not declared, and that no code of the spec calls.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checker.compiled import describe_switch
from checker.model import Model
from checker.result import CheckResult, VacuityWarning
from checker.source import display_path
from checker.spec import Spec, switches_of


def review(model: Model, result: CheckResult) -> None:
    """Set `result.warnings` and `result.off` for a search that explored every state."""
    if not result.complete:
        return
    off = switched_off(model)
    result.off = off
    warnings: list[VacuityWarning] = []
    fired = {c.name: c.fired for c in result.coverage}
    for act in model.actions:
        name = act.name
        if name in off:
            if fired.get(name, 0):
                warnings.append(
                    VacuityWarning(
                        "fired-while-off",
                        name,
                        f"{name} fired {fired[name]:,} times although {off[name]} switches it"
                        " off: is its switch= wrong?",
                    )
                )
            continue
        empty = [p for p, d in zip(act.params, act.domains) if not callable(d) and not d]
        if empty:
            warnings.append(
                VacuityWarning(
                    "empty-domain",
                    name,
                    f"{name} was never tried: the domain of its parameter {empty[0]} is empty",
                )
            )
        elif not fired.get(name, 0):
            warnings.append(
                VacuityWarning(
                    "never-enabled",
                    name,
                    f"{name} was never enabled: is its guard or its return wrong?",
                )
            )
    for name, where in undeclared_actions(type(model.spec)):
        warnings.append(
            VacuityWarning(
                "undeclared",
                name,
                f"{name} ({where}) looks like an action, (self, s, ...) returning"
                " s.replace(...), but is not declared and nothing calls it: decorate it with"
                " @action?",
            )
        )
    result.warnings = warnings


def switched_off(model: Model) -> dict[str, str]:
    """The actions (and reachability properties) that the constants switch off: name -> the
    switch, e.g. "max_crashes=0", "max_crashes, max_losses = 0"."""
    off = {}
    for act in model.actions:
        names = switches_of(act.fn)
        if names and not any(getattr(model.spec, n) for n in names):
            off[act.name] = describe_switch(model.spec, names)
    return {**off, **model.compiled.reachables_off}


# -- methods that look like actions -----------------------------------------------------------


def undeclared_actions(cls: type[Spec]) -> list[tuple[str, str]]:
    """Methods of the spec (its class and bases) that look like actions but are not declared
    and are not called by the spec's own code, with where: (name, "path:line")."""
    return list(_undeclared(cls))


@functools.lru_cache(maxsize=64)
def _undeclared(cls: type[Spec]) -> tuple[tuple[str, str], ...]:
    used = _referenced(cls)
    reserved = set(dir(Spec))
    found = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not issubclass(klass, Spec) or klass is Spec:
            continue
        for name, value in vars(klass).items():
            if name in seen:
                continue
            seen.add(name)  # the subclass's own definition wins
            if name in reserved or name.startswith("__") or name in used:
                continue
            if not inspect.isfunction(value) or _marked(value):
                continue
            line = _looks_like_an_action(value)
            if line is not None:
                found.append((name, f"{display_path(value.__code__.co_filename)}:{line}"))
    return tuple(found)


def _marked(fn: Any) -> bool:
    """Whether mc knows the function: an action, predicate, property, assumption, ..."""
    return any(k.startswith("__mc_") for k in vars(fn))


def _looks_like_an_action(fn: Callable[..., Any]) -> int | None:
    """Its `def` line if `fn` is `(self, s, ...)` and returns `<something>.replace(...)`."""
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(params) < 2 or params[0].name != "self":
        return None
    try:
        source, _ = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(source)))
    except (OSError, TypeError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            for part in ast.walk(node.value):  # s.replace(...) if ... else None, [...], ...
                func = part.func if isinstance(part, ast.Call) else None
                if isinstance(func, ast.Attribute) and func.attr == "replace":
                    return fn.__code__.co_firstlineno
    return None


def _referenced(cls: type) -> frozenset[str]:
    """Every name the modules of the spec's classes use as an attribute, a variable or a
    string (a domain given by name): a helper they call is no forgotten action."""
    names: set[str] = set()
    for klass in cls.__mro__:
        module = sys.modules.get(klass.__module__)
        file = getattr(module, "__file__", None)
        if file:
            try:
                stat = Path(file).stat()
            except OSError:
                continue
            names |= _names_in(file, stat.st_mtime_ns, stat.st_size)
    return frozenset(names)


@functools.lru_cache(maxsize=256)
def _names_in(file: str, mtime: int, size: int) -> frozenset[str]:
    """The names `file` uses (cached by its path, modification time and size)."""
    try:
        tree = ast.parse(Path(file).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return frozenset(names)
