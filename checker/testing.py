"""Gate on a spec from your own test suite (pytest, unittest, anything that treats an
AssertionError as a failure):

    from checker.testing import assert_holds, assert_violates

    def test_kip903_holds():
        assert_holds("specs/kip903.py", fixed=True, max_unclean_shutdowns=0)

    def test_kip903_without_the_fix_breaks_the_isr():
        result = assert_violates("specs/kip903.py", "no_stale_epoch_in_isr", fixed=False)
        assert result.trace[-1].action == "handle_alter_partition"

    def test_raft_voters_are_interchangeable():
        assert_symmetric("specs/light/kip996.py", max_epoch=2)

Constants are keyword arguments with Python values (`fixed=True`), or strings parsed as `-D`
would. A failure's message is the text report `mc check` prints: verdict and trace. As with
`mc check`, the spec's temporal properties are checked once its invariants hold (all, or those
`properties=[...]` names; `no_liveness=True` skips them).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from checker import run
from checker.behaviour import Recording
from checker.model import Model
from checker.reports import notebook  # noqa: F401  (results show as HTML reports in Jupyter)
from checker.reports.text import render
from checker.result import CheckResult
from checker.search.options import Options
from checker.symmetry import Symmetry
from checker.values import show
from checker.values.encoding import decode, encode


def load(
    spec: str | os.PathLike[str],
    invariants: Sequence[str] | None = None,
    symmetry: bool = True,
    view: bool = True,
    **constants: Any,
) -> Model:
    """Compile the spec at `spec` with the given constants (Python values or -D strings);
    `symmetry=False` ignores the symmetry it declares (as `mc check --no-symmetry`), `view=False`
    its view (`--no-view`)."""
    config = run.Config(properties=None, symmetry=symmetry, view=view)
    return run.load(spec, constants, config, invariants=invariants, command_line=False).model


def check(
    spec: str | os.PathLike[str],
    *,
    invariants: Sequence[str] | None = None,
    properties: Sequence[str] | None = None,
    no_liveness: bool = False,
    deadlock: bool = True,
    max_depth: int | None = None,
    max_states: int | None = None,
    symmetry: bool | None = None,
    view: bool | None = None,
    strict: bool = False,
    **constants: Any,
) -> CheckResult:
    """Check the spec as `mc check` does (checker.run) and return the result (never raises for
    a verdict). `symmetry`, `view` None: the spec's, except when temporal properties are
    checked; `strict`: the vacuity check's warnings fail (as `mc check --strict`)."""
    config = run.Config(
        Options(deadlock=deadlock, max_depth=max_depth, max_states=max_states),
        properties=None if no_liveness else tuple(properties or ()),
        symmetry=symmetry,
        view=view,
        strict=strict,
    )
    loaded = run.load(
        spec, constants, config, invariants=invariants, command_line=False, quiet=True
    )
    return run.check(loaded, config)


def assert_holds(spec: str | os.PathLike[str], **arguments: Any) -> CheckResult:
    """Fail (AssertionError with the rendered trace) unless every invariant holds over the
    whole state space, and then every temporal property. Takes check()'s arguments (options
    and constants). A search stopped by `max_depth`/`max_states` is not a pass; with
    `strict`, neither is a vacuity warning."""
    __tracebackhide__ = True  # pytest: show the caller's line, not this helper's
    result = check(spec, **arguments)
    if not result.passed:
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


def assert_symmetric(
    spec: str | os.PathLike[str], *, max_states: int = 100_000, **constants: Any
) -> int:
    """Fail unless renaming the values the spec declares symmetric maps its behaviour to
    itself, which symmetry reduction takes on trust: on every reachable state s (explored
    without symmetry) and for every renaming p, `permute(s, p)` has the renamed successors
    of s, satisfies the same invariants and constraints, and keeps its variables. A `permute`
    that misses a field holding ids fails here, and so does an action that prefers an id.
    Returns the number of states checked (for small constants: each state is expanded once
    per renaming)."""
    __tracebackhide__ = True
    model = load(spec, symmetry=False, **constants)
    symmetry = Symmetry.of(model.spec)
    if symmetry is None:
        raise AssertionError(f"{model.name} declares no symmetry")
    recording = Recording(states=True, go_on=True)  # the engine's search, every state kept
    options = Options(deadlock=False, max_states=max_states + 1)  # a deadlock is a state too
    result, behaviour = run.record(model, recording, options)
    if result.distinct_states > max_states:
        raise AssertionError(
            f"{model.name} has more than {max_states:,} states: use smaller constants"
        )
    if behaviour is None or behaviour.encodings is None:
        raise AssertionError("\nthe search did not explore every state\n" + render(result))
    for data in behaviour.encodings:
        state, successors = decode(data), model.expand(data)
        for p in symmetry.others:
            _assert_renames(model, symmetry, state, successors, p)
    return len(behaviour)


def _assert_renames(model: Model, symmetry: Symmetry, state: Any, successors: Any, p: Any) -> None:
    __tracebackhide__ = True
    image = symmetry.permute(state, p)
    where = f"{model.name}.permute(s, {p}) with s = {show(state)}"
    if image.keys() != state.keys():
        raise AssertionError(f"{where} has variables {sorted(image)}, not {sorted(state)}")
    for inv in model.invariants:
        before, after = inv.fn(state), inv.fn(image)
        if before != after:
            raise AssertionError(
                f"{where}: invariant {inv.name} is {before} in s, {after} in the renamed state"
            )
    if model.within_constraints(state) != model.within_constraints(image):
        raise AssertionError(f"{where}: the state constraints judge the two states differently")
    expected = {encode(symmetry.permute(t.state, p)) for t in successors}
    actual = {t.data for t in model.expand(encode(image))}
    if expected != actual:
        missing = sorted(expected - actual)[:1]
        extra = sorted(actual - expected)[:1]
        detail = "; ".join(
            [f"missing successor {show(decode(d))}" for d in missing]
            + [f"unexpected successor {show(decode(d))}" for d in extra]
        )
        raise AssertionError(f"{where}: the renamed state's successors differ: {detail}")
