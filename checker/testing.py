"""Gate on a spec from your own test suite (pytest, unittest, anything that treats an
AssertionError as a failure):

    from checker.testing import assert_holds, assert_violates

    def test_kip903_holds():
        assert_holds("specs/kip903.py", fixed=True, max_unclean_shutdowns=0)

    def test_kip903_without_the_fix_breaks_the_isr():
        result = assert_violates("specs/kip903.py", "no_stale_epoch_in_isr", fixed=False)
        assert result.trace[-1].action == "handle_alter_partition"

Constants are keyword arguments with Python values (`fixed=True`), or strings parsed as `-D`
would. A failure's message is the text report `mc check` prints: verdict and trace. As with
`mc check`, the spec's temporal properties are checked once its invariants hold (all, or those
`properties=[...]` names; `no_liveness=True` skips them).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from checker import bfs, liveness
from checker.errors import ConfigError, SpecError
from checker.loader import import_spec_module, spec_class
from checker.model import Model
from checker.reports.text import render
from checker.result import CheckResult
from checker.spec import constants_of


def load(
    spec: str | os.PathLike[str], invariants: Sequence[str] | None = None, **constants: Any
) -> Model:
    """Compile the spec at `spec` with the given constants (Python values or -D strings)."""
    cls = spec_class(import_spec_module(spec))
    declared = constants_of(cls)
    values: dict[str, Any] = {}
    for name, value in constants.items():
        if name not in declared:
            known = ", ".join(declared) or "none"
            raise ConfigError(f"{cls.__name__} has no constant {name!r} (constants: {known})")
        if isinstance(value, str) and declared[name].type is not str:
            try:
                value = declared[name].parse(value)
            except ValueError as exc:
                raise ConfigError(f"{name}={value}: {exc}") from None
        values[name] = value
    try:
        instance = cls(**values)
    except TypeError as exc:
        raise ConfigError(str(exc)) from None
    except Exception as exc:
        raise SpecError(f"{spec}: creating {cls.__name__} raised {exc!r}") from exc
    return Model(instance, path=str(spec), invariants=invariants)


def check(
    spec: str | os.PathLike[str],
    *,
    invariants: Sequence[str] | None = None,
    properties: Sequence[str] | None = None,
    no_liveness: bool = False,
    deadlock: bool = False,
    max_depth: int | None = None,
    max_states: int | None = None,
    **constants: Any,
) -> CheckResult:
    """Check the spec as `mc check` does and return the result (never raises for a verdict)."""
    model = load(spec, invariants, **constants)
    selected = liveness.select(model, properties) if not no_liveness else []
    options = bfs.Options(deadlock=deadlock, max_depth=max_depth, max_states=max_states)
    return liveness.check(model, bfs.check(model, options), selected)


def assert_holds(
    spec: str | os.PathLike[str],
    *,
    invariants: Sequence[str] | None = None,
    properties: Sequence[str] | None = None,
    no_liveness: bool = False,
    deadlock: bool = False,
    max_depth: int | None = None,
    max_states: int | None = None,
    **constants: Any,
) -> CheckResult:
    """Fail (AssertionError with the rendered trace) unless every invariant holds over the
    whole state space, and then every temporal property. A search stopped by
    `max_depth`/`max_states` is not a pass."""
    __tracebackhide__ = True  # pytest: show the caller's line, not this helper's
    result = check(
        spec,
        invariants=invariants,
        properties=properties,
        no_liveness=no_liveness,
        deadlock=deadlock,
        max_depth=max_depth,
        max_states=max_states,
        **constants,
    )
    if result.verdict != "ok":
        raise AssertionError("\n" + render(result))
    return result


def assert_violates(
    spec: str | os.PathLike[str],
    invariant: str,
    *,
    max_depth: int | None = None,
    max_states: int | None = None,
    **constants: Any,
) -> CheckResult:
    """Fail unless checking finds a counterexample to `invariant` (only that one is checked);
    return the result, whose `trace` is the counterexample."""
    __tracebackhide__ = True
    result = check(
        spec,
        invariants=[invariant],
        no_liveness=True,
        max_depth=max_depth,
        max_states=max_states,
        **constants,
    )
    if result.verdict != "violation":
        raise AssertionError(f"\nexpected invariant {invariant} to be violated\n" + render(result))
    return result
