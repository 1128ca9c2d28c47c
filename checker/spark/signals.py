"""Ctrl-C, SIGTERM and --timeout while Spark jobs run."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from checker import guard

if TYPE_CHECKING:
    pass


class Interrupts:
    """Ctrl-C, SIGTERM and --timeout (SIGALRM) during a search. An exception raised inside a
    py4j call leaves the gateway in a state where the next call can fail ("Answer from Java
    side is empty"), so a signal that lands there is held: another thread cancels the jobs and
    signals again until the signal lands outside py4j, where the usual handler raises; if the
    cancelled job's error comes first, `raise_held` raises the signal's exception instead.
    PySpark's own Ctrl-C handler is set aside: it cancels with a py4j call nested in the
    interrupted one."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.cancel = cancel
        self.held: int | None = None
        self.handlers: dict[int, tuple[Any, Callable[..., Any]]] = {}  # previous, to call
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in self.SIGNALS:
            previous = signal.getsignal(signum)
            if signum == signal.SIGINT:  # an interrupt, not the spec's KeyboardInterrupt
                self.handlers[signum] = (previous, guard.interrupt)
            elif callable(previous):
                self.handlers[signum] = (previous, previous)
            else:
                continue  # the default action (SIGTERM outside the CLI): left alone
            signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.done.is_set() and signum == self.held:
            return  # a repeat sent just before the holder stopped
        if not _inside_py4j(frame):
            self.done.set()
            self.handlers[signum][1](signum, frame)
            return
        if self.held is None:
            self.held = signum
            self.thread = threading.Thread(target=self._cancel_and_repeat, daemon=True)
            self.thread.start()

    def _cancel_and_repeat(self) -> None:
        assert self.held is not None
        main = threading.main_thread().ident
        while not self.done.wait(0.05):
            with contextlib.suppress(Exception):
                self.cancel()
            if main is not None and not self.done.is_set():
                signal.pthread_kill(main, self.held)

    def raise_held(self) -> None:
        if self.held is not None and not self.done.is_set():
            self.done.set()
            self.handlers[self.held][1](self.held, None)

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()
        for signum, (previous, _) in self.handlers.items():
            signal.signal(signum, previous)


def _inside_py4j(frame: FrameType | None) -> bool:
    marker = f"{os.sep}py4j{os.sep}"
    while frame is not None:
        if marker in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def from_spark(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("pyspark", "py4j", "grpc"))
