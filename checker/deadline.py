"""`mc check --timeout`: a wall-clock bound on a run, for any engine, and on loading a spec.

A SIGALRM handler raises RunTimeout, a KeyboardInterrupt, so the engine stops as on Ctrl-C
(verdict "incomplete", partial counts). The handler runs in whatever frame was executing, so it
can tell which spec function was running: a guard that never returns is named with its
parameters and its state, not just reported as "slow".
"""

from __future__ import annotations

import inspect
import signal
from collections.abc import Callable
from types import CodeType, FrameType, TracebackType
from typing import Any, TypeVar

from checker.errors import ConfigError, ExitCode, McError, RunTimeout
from checker.model import Model
from checker.values import show
from checker.values.record import Record

_Armed = TypeVar("_Armed", bound="_Timer")


class _Timer:
    """SIGALRM after `seconds` (None: never), calling `_expire`; armed on enter, disarmed
    (the previous handler back) on exit."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._previous: Any = None

    def _armed(self) -> bool:
        return self.seconds is not None and hasattr(signal, "setitimer")

    def _arm(self) -> None:
        if self._armed():
            self._previous = signal.signal(signal.SIGALRM, self._expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)  # type: ignore[arg-type]

    def _disarm(self) -> None:
        if self._armed():
            signal.setitimer(signal.ITIMER_REAL, 0)
            previous = self._previous
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        raise NotImplementedError

    def __enter__(self: _Armed) -> _Armed:
        self._arm()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._disarm()
        self._stopped(exc)

    def _stopped(self, exc: BaseException | None) -> None:
        """After the timer is disarmed: what ended the block (None: it ran to its end)."""


class Deadline(_Timer):
    """Arms the timer on enter and disarms it on exit; `where` says what it interrupted."""

    def __init__(self, model: Model, seconds: float | None) -> None:
        super().__init__(seconds)
        self.fired = False
        self.where: str | None = None  # e.g. "action spin(k=1) at spec.py:9 in state {n: 1}"
        self._roles = _spec_functions(model) if seconds is not None else {}

    def __enter__(self) -> Deadline:
        if self.seconds is not None and not hasattr(signal, "setitimer"):
            raise ConfigError("--timeout needs SIGALRM, which this platform lacks")
        return super().__enter__()

    @property
    def bound(self) -> str:
        return f"--timeout {self.seconds:g} s reached"

    @property
    def note(self) -> str:
        """What stopped the run, and in which spec code."""
        where = f" while evaluating {self.where}" if self.where else ""
        return f"stopped by --timeout {self.seconds:g} s{where}"

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        self.fired = True
        self.where = self._innermost_spec_call(frame)
        raise RunTimeout(self.bound)

    def _innermost_spec_call(self, frame: FrameType | None) -> str | None:
        while frame is not None:
            role = self._roles.get(frame.f_code)
            if role is not None:
                return _describe(role, frame)
            frame = frame.f_back
        return None  # in the engine, between spec calls


class LoadTimeout(McError):
    """--timeout expired while a spec was loading: nothing was explored (exit 152)."""

    exit_code = ExitCode.INCOMPLETE


class Loading(_Timer):
    """`with Loading(seconds, path)`: the same bound on loading the spec at `path` (importing
    it, reading its constants, compiling it), which may not end either (a loop at import, an
    @assume that never returns): LoadTimeout when it expires."""

    def __init__(self, seconds: float | None, path: object) -> None:
        super().__init__(seconds)
        self.path = path

    def _stopped(self, exc: BaseException | None) -> None:
        if isinstance(exc, _LoadExpired):
            raise LoadTimeout(
                f"{self.path}: stopped by --timeout {self.seconds:g} s while loading the spec"
                " (importing it, checking its constants or compiling it never ended); nothing"
                " was explored"
            ) from None

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        raise _LoadExpired(f"--timeout {self.seconds:g} s reached")


class _LoadExpired(RunTimeout):
    """Raised by Loading's timer: through spec code as any interrupt, then turned into
    LoadTimeout."""


# What a function is ("action spin") and, for an action, its parameters (shown with values)
_Role = tuple[str, tuple[str, ...] | None]


def _spec_functions(model: Model) -> dict[CodeType, _Role]:
    """The code of every function of the spec that the engines call."""
    roles: dict[CodeType, _Role] = {}

    def add(fn: Callable[..., Any], role: _Role) -> None:
        # a bound method's function; a shared invariant's predicate, not its wrapper
        code = getattr(inspect.unwrap(getattr(fn, "__func__", fn)), "__code__", None)
        if code is not None:
            roles.setdefault(code, role)

    add(model.spec.init, ("init", None))
    for act in model.actions:
        add(act.fn, (f"action {act.name}", act.params))
        for param, domain in zip(act.params, act.domains):
            if callable(domain):
                add(domain, (f"the domain of {param!r} of action {act.name}", None))
    for inv in model.invariants:
        add(inv.fn, (f"invariant {inv.name}", None))
    for c in model.constraints:
        add(c.fn, (f"constraint {c.name}", None))
    for c in model.action_constraints:
        add(c.fn, (f"action constraint {c.name}", None))
    if model.view is not None:
        add(model.view, ("view", None))
    if model.symmetry is not None:
        add(model.symmetry.permute, ("permute", None))
    return roles


def _describe(role: _Role, frame: FrameType) -> str:
    what, params = role
    values = frame.f_locals
    if params is not None:
        what += "(" + ", ".join(f"{p}={show(values.get(p))}" for p in params) + ")"
    code = frame.f_code
    states = [values.get(a) for a in code.co_varnames[: code.co_argcount]]
    state = next((s for s in states if isinstance(s, Record)), None)
    where = f"{code.co_filename}:{frame.f_lineno}"
    return f"{what} at {where}" if state is None else f"{what} at {where} in state {show(state)}"
