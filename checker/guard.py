"""Who may end a run: Ctrl-C, SIGTERM and `--timeout` may; spec code may not.

Spec code runs in mc's own process. An action that called `sys.exit(0)` used to end mc with
exit 0 and no report, which a CI job records as a pass. So every place that calls spec code
catches BaseException and reports it as the spec's error (`spec_fault`), except `Interrupted`,
which only the signal handlers installed here raise (and `--timeout`'s RunTimeout), and a
MemoryError, which is the run's (checker.errors.OUTSIDE): a
SystemExit, a GeneratorExit or a KeyboardInterrupt raised by the spec itself is an error of
the action, invariant or module that raised it (exit 75, or 150 at import).

`os._exit`, which no except clause can catch, is replaced while a run is guarded by a
function that raises SystemExit instead; a forked process starts with the real one (it ends
with it), and a worker guards the spec code it runs again.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType
from typing import Any, NoReturn

from checker.errors import OUTSIDE, Interrupted

real_exit = os._exit
_depth = 0  # nested guarded() blocks (the CLI's around the engine's)
_owner = 0  # the process that installed `interrupt` (a forked child inherits the handler)


def spec_fault(exc: BaseException) -> bool:
    """Whether `exc`, raised while spec code ran, is the spec's fault (to report as its
    error), rather than a stop from outside (Ctrl-C, SIGTERM, --timeout, memory running out)
    to let through."""
    return not isinstance(exc, OUTSIDE)


def interrupt(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGINT and SIGTERM: stop the run (partial counts, exit 152). In a forked
    child that has not set its own handlers yet (a worker stopped while it starts), the signal
    does what it does by default: raised there, Interrupted would be printed as a traceback."""
    if _owner and os.getpid() != _owner:
        signal.signal(signum, dict(DEFAULTS)[signum])
        os.kill(os.getpid(), signum)
        return
    raise Interrupted(signal.Signals(signum).name)


def _restore_defaults() -> None:
    """Put back the default handlers of SIGINT and SIGTERM where `interrupt` is set."""
    for signum, default in DEFAULTS:
        if signal.getsignal(signum) is interrupt:
            signal.signal(signum, default)


def _refuse_exit(code: int = 0) -> NoReturn:
    raise SystemExit(f"os._exit({code!r}) called")


# The signals `guarded` handles, with the handlers it replaces (Python's defaults)
DEFAULTS = ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL))


@contextmanager
def guarded(signals: bool = True) -> Iterator[None]:
    """Run spec code under the rules above: SIGINT (where Python's default handler is set) and
    SIGTERM (where no handler is set) raise Interrupted, and `os._exit` raises SystemExit. Off
    the main thread, or without `signals`, only `os._exit` is guarded."""
    global _depth, _owner
    previous: dict[int, Any] = {}
    if signals and threading.current_thread() is threading.main_thread():
        _owner = os.getpid()
        for signum, default in DEFAULTS:
            if signal.getsignal(signum) is default:
                previous[signum] = signal.signal(signum, interrupt)
    _depth += 1
    os._exit = _refuse_exit
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            os._exit = real_exit
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _unguard_child() -> None:
    """A forked process starts unguarded: multiprocessing ends a child with `os._exit`, which
    must work whatever the child did (its parent may have been inside guarded()), and its
    signals do what they do by default until it sets its own."""
    global _depth
    _depth = 0
    os._exit = real_exit
    _restore_defaults()


os.register_at_fork(after_in_child=_unguard_child)


def in_worker() -> AbstractContextManager[None]:
    """A forked worker process guards the spec code it runs; signals are the engine process's
    to decide about (a worker is stopped with SIGTERM)."""
    return guarded(signals=False)
