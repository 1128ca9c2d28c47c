"""Where `mc explore` runs spec code: in child processes of the server, never in its own.

A Python thread cannot be stopped, so a guard that loops, or a find expression such as
`10**10**8 == 0` (one C call that runs for minutes holding the interpreter), would freeze the
server and let no signal through. Here each runs in a forked child (checker.supervisor's
rules: it dies with the server, leaves Ctrl-C to it) under a time and memory limit, past which
the child is killed (SIGKILL) and the request answered with what happened; the next request
forks a fresh one. The server's own threads only wait on pipes, so a page request is answered
at once whatever the spec does.

- `Views`: one child answering the page's views one at a time (the guards of every choice and
  the invariants of the state run there), VIEW_SECONDS each.
- `Child.find`: a child per find (checker.explore.find), FIND_SECONDS and FIND_MEMORY.

Messages are JSON, their size capped (MAX_REPLY): a spec's 100 MB error text is cut, not sent
on every poll.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from checker import supervisor
from checker.local.workers import resident

VIEW_SECONDS = 5.0
VIEW_MEMORY = 1 << 30
FIND_SECONDS = 60.0
FIND_MEMORY = 1 << 30
MAX_REPLY = 16 << 20  # bytes of JSON a child may send in one message
MAX_TEXT = 4000  # characters of a message (an error's text) shown on the page
POLL = 0.05  # seconds between looks at a child's memory and clock


class Overrun(Exception):
    """A child went past its limit (or died): what happened, for the page."""


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, cut to `limit` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters cut)"


class Child:
    """A forked child running `main(conn)`, the parent's end of its pipe, its limits."""

    def __init__(self, main: Callable[[Connection], None], name: str) -> None:
        context = multiprocessing.get_context("fork")  # it inherits the loaded model
        self.conn, theirs = context.Pipe()
        self.process = context.Process(
            target=_child_main, args=(main, theirs, self.conn, os.getpid()), name=name, daemon=True
        )
        _forked_by_one_thread(self.process.start)
        theirs.close()
        self.started = time.monotonic()

    def send(self, message: Any) -> None:
        self.conn.send_bytes(json.dumps(message).encode())

    def receive(self, seconds: float, memory: int, what: str, limit: float | None = None) -> Any:
        """The child's next message, within `seconds` and `memory`; else Overrun (it is killed,
        and `what` did not finish within `limit` seconds, `seconds` by default)."""
        deadline = time.monotonic() + seconds
        while True:
            if self.conn.poll(POLL):
                try:
                    return json.loads(self.conn.recv_bytes(MAX_REPLY))
                except (EOFError, OSError):
                    raise Overrun(f"{what}: {self._death()}") from None
            used = resident(self.process.pid) or 0
            if used > memory:
                self.kill()
                raise Overrun(
                    f"{what} used more than {memory >> 20:,} MiB ({used >> 20:,} MiB resident):"
                    " stopped"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise Overrun(
                    f"{what} did not finish within {limit or seconds:g} s: stopped (a guard,"
                    " invariant or expression that never returns?)"
                )

    def _death(self) -> str:
        self.process.join(1)
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"its process was killed (signal {-code})"
        return f"its process ended (exit code {code})"

    def alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        """SIGKILL, from any thread: its pipe then reads as ended (Overrun in `receive`)."""
        with contextlib.suppress(OSError):
            if self.process.pid is not None:
                os.kill(self.process.pid, signal.SIGKILL)
        self.process.join(5)

    def close(self) -> None:
        """Kill it and close the pipe: by the one thread that reads the pipe."""
        self.kill()
        self.conn.close()


_forks: queue.SimpleQueue[tuple[Callable[[], None], threading.Event]] = queue.SimpleQueue()
_forker: threading.Thread | None = None
_forker_lock = threading.Lock()


def _forked_by_one_thread(start: Callable[[], None]) -> None:
    """Run `start` (a fork) in one thread that lives as long as the server: the kernel kills a
    child when the *thread* that forked it ends (PR_SET_PDEATHSIG), and a request's thread
    ends with its request."""
    global _forker
    with _forker_lock:
        if _forker is None:
            _forker = threading.Thread(target=_fork_loop, name="mc-explore-forker", daemon=True)
            _forker.start()
    done = threading.Event()
    _forks.put((start, done))
    done.wait()


def _fork_loop() -> None:
    while True:
        start, done = _forks.get()
        try:
            start()
        finally:
            done.set()


def _child_main(
    main: Callable[[Connection], None], conn: Connection, parents: Connection, parent: int
) -> None:
    parents.close()
    supervisor.become_child(parent)
    with contextlib.suppress(EOFError, OSError):  # the server went away
        main(conn)


class Views:
    """One child drawing the page's views, one at a time, each within VIEW_SECONDS."""

    def __init__(
        self, draw: Callable[[str], tuple[int, Any]], seconds: float = VIEW_SECONDS
    ) -> None:
        self.draw = draw  # path text -> (HTTP status, view), run in the child
        self.seconds = seconds
        self.lock = threading.Lock()
        self.child: Child | None = None

    def view(self, path: str) -> tuple[int, Any]:
        with self.lock:
            if self.child is None or not self.child.alive():
                self.child = Child(self._serve, "mc-explore-views")
            try:
                self.child.send(path)
                status, doc = self.child.receive(self.seconds, VIEW_MEMORY, f"drawing {path}")
            except Overrun as exc:
                self.child.close()
                self.child = None  # killed: the next view forks a fresh one
                return 503, {"error": cut(f"path {path}: {exc}"), "path": path}
            return status, doc

    def _serve(self, conn: Connection) -> None:
        while True:
            path = json.loads(conn.recv_bytes())
            status, doc = self.draw(path)
            data = json.dumps([status, doc]).encode()
            if len(data) > MAX_REPLY:
                doc = {"error": f"path {path}: the view is too large to show", "path": path}
                data = json.dumps([413, doc]).encode()
            conn.send_bytes(data)

    def close(self) -> None:
        child = self.child
        if child is not None:
            child.kill()  # at once, even while a request waits for it (holding the lock)
        with self.lock:
            if self.child is not None:
                self.child.close()
                self.child = None
