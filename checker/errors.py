"""Errors with the exit codes TLC users already script against."""

from __future__ import annotations

import os
import traceback
from enum import IntEnum
from typing import Any, ClassVar

_ENGINE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class ExitCode(IntEnum):
    OK = 0
    DEADLOCK = 11
    VIOLATION = 12
    LIVENESS = 13  # a temporal property is violated
    STRICT = 15  # --strict, and the vacuity check warned (an action never enabled, ...)
    DIVERGED = 16  # mc validate: the log is no behaviour of the spec
    UNDECIDED = 17  # mc validate: a bound cut the search before it could say
    EVALUATION_ERROR = 75  # an action, invariant or init raised
    SPEC_ERROR = 150  # the spec cannot be loaded
    CONFIG_ERROR = 151  # bad options or constants
    INCOMPLETE = 152  # a --max-states / --max-depth / --timeout bound stopped the search
    # The engine cannot run (no Java or pyspark, Spark itself failed), or cannot go on (out of
    # memory, a worker process killed, no Spark executor left: EngineFailure)
    ENGINE_ERROR = 153


class StateError(TypeError):
    """A value that cannot be part of a state (a float, an object, an unsortable key...)."""


class McError(Exception):
    exit_code: ExitCode = ExitCode.SPEC_ERROR


class SpecError(McError):
    """The spec file cannot be loaded or is not a valid spec."""

    exit_code = ExitCode.SPEC_ERROR


class ConfigError(McError):
    """A bad command-line option or constant."""

    exit_code = ExitCode.CONFIG_ERROR


class EngineError(McError):
    """The exploring engine cannot run here (e.g. the Spark engine without Java or pyspark) or
    failed for a reason of its own, not the spec's (TLC's 153 is its system error)."""

    exit_code = ExitCode.ENGINE_ERROR


class EvaluationError(McError):
    """Spec code raised, or returned something that is not allowed, while being explored.

    `kind` is "init", "action" or "invariant"; `state` is the state it was evaluated in
    (None for init); `params` the action's parameters.
    """

    exit_code = ExitCode.EVALUATION_ERROR
    # `mc --debug`: keep mc's own frames in the traceback, to debug mc rather than the spec
    engine_frames: ClassVar[bool] = False

    def __init__(
        self,
        kind: str,
        name: str,
        message: str,
        *,
        state: Any = None,
        params: dict[str, Any] | None = None,
        cause: BaseException | None = None,
    ) -> None:
        self.kind = kind
        self.name = name
        self.message = message
        self.state = state
        self.params = params or {}
        self.cause = cause
        super().__init__(f"{kind} {name}: {message}")

    @property
    def spec_traceback(self) -> str:
        """The traceback of the cause, without the engine's own frames; with --debug, all of
        it (and, when spec code raised nothing, where mc found the fault)."""
        if EvaluationError.engine_frames:
            return "".join(traceback.format_exception(self.cause or self))
        if self.cause is None:
            return ""
        frames = [
            f
            for f in traceback.extract_tb(self.cause.__traceback__)
            if not os.path.abspath(f.filename).startswith(_ENGINE_DIR)
        ]
        lines = traceback.format_list(frames)
        lines += traceback.format_exception_only(type(self.cause), self.cause)
        return "".join(lines)


class NondeterminismError(McError):
    """The spec answered otherwise when asked again: an action, invariant or reachability
    property raised (or an invariant failed, or a state deadlocked) when the search first
    evaluated a state, and not when the engine evaluated it again to report it. Every engine
    checks a state again before it reports it, and says so in the same words."""

    exit_code = ExitCode.EVALUATION_ERROR


class EngineFailure(Exception):
    """The engine cannot go on with the search: out of memory, a worker process gone, no Spark
    executor left. Neither the spec's error nor a bound: the search ends with verdict
    "incomplete" and the counts of the states explored so far, which are exact (a state is
    counted once it is admitted, by the engine process), and exit 153. `what` says what
    failed and where; `advice`, what to do."""

    def __init__(self, what: str, advice: str) -> None:
        super().__init__(what)
        self.what = what
        self.advice = advice


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM, raised by mc's own signal handlers (checker.guard): a stop from
    outside the spec. A KeyboardInterrupt, so that every engine stops as it does on Ctrl-C:
    verdict "incomplete" with the partial counts (exit 152). A KeyboardInterrupt that spec code
    raises itself is not one: it is the spec's error, as is a SystemExit."""


class RunTimeout(Interrupted):
    """`mc check --timeout` expired: stops the run as Ctrl-C does."""


# What may stop spec code without being the spec's error: mc's own interrupts, and running out
# of memory (an allocation in an action fails because the whole run is too big: reported as
# the run's EngineFailure, not as the action's error). Every place that calls spec code lets
# these through (`except OUTSIDE: raise`) before it catches BaseException.
OUTSIDE = (Interrupted, MemoryError)


def described(exc: BaseException) -> str:
    """`Type: message` of an exception raised by spec code. Its message is the spec's own
    code too (`__str__`): one that raises is said as Python's traceback module says it, so
    that saying the spec's error cannot fail."""
    try:
        message = str(exc)
    except OUTSIDE:
        raise
    except BaseException:
        message = "<exception str() failed>"
    return f"{type(exc).__name__}: {message}"


def raised(exc: BaseException) -> str:
    """How mc says that spec code raised `exc`: `raised Type: message`, and why the run goes
    on when it was a SystemExit, a GeneratorExit or a KeyboardInterrupt (checker.guard)."""
    said = f"raised {described(exc)}"
    if not isinstance(exc, Exception):  # SystemExit, os._exit, the spec's KeyboardInterrupt
        said += " (spec code cannot end mc's run: it is reported as the spec's error)"
    return said
