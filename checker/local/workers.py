"""The expanders of the local engine: this process, or forked worker processes that each run
an Expander (checker.search.expansion) behind the same send/receive interface.

Requests and replies are sent between processes as msgpack (never pickle); a worker process is
forked, so it inherits the model instead of receiving it.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue
import signal
import threading
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection

from checker import guard
from checker.behaviour import Recording
from checker.model import Model
from checker.search.expansion import (
    Crashed,
    Expanded,
    Expander,
    Reply,
    Request,
    pack,
    unpack,
)


class _InProcess:
    """An expander behind the same send/receive interface as a worker process."""

    def __init__(self, model: Model, recording: Recording | None, incremental: bool) -> None:
        self.expander = Expander(model, recording, incremental)
        self._replies: list[Expanded] = []
        self.number = 0

    def send(self, request: Request) -> None:
        reply = self.expander.handle(request)
        if reply is not None:
            self._replies.append(reply)

    def receive(self) -> Expanded:
        return self._replies.pop(0)

    def fileno(self) -> int | None:
        return None

    def close(self) -> None:
        pass


class _Process:
    def __init__(
        self, model: Model, number: int, recording: Recording | None, incremental: bool
    ) -> None:
        context = multiprocessing.get_context("fork")  # the child inherits the loaded model
        self.conn, child = context.Pipe()
        self.number = number
        self.process = context.Process(
            target=_serve,
            args=(child, model, recording, incremental),
            name=f"mc-worker-{number}",
            daemon=True,
        )
        self.process.start()
        child.close()

    def send(self, request: Request) -> None:
        self.conn.send_bytes(pack(request))

    def fileno(self) -> int:
        return self.conn.fileno()

    def receive(self) -> Expanded:
        try:
            reply = unpack(self.conn.recv_bytes())
        except (EOFError, OSError):
            self.process.join(1)
            raise RuntimeError(
                f"worker process {self.number} died (exit code {self.process.exitcode})"
            ) from None
        if isinstance(reply, Crashed):
            raise RuntimeError(f"worker process {self.number} failed:\n{reply.traceback}")
        assert isinstance(reply, Expanded)
        return reply

    def close(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(5)


def _serve(
    conn: Connection, model: Model, recording: Recording | None, incremental: bool
) -> None:
    """A worker process's loop: the engine process decides about Ctrl-C and SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.disable()  # as in the engine process (checker.local.bfs.check)
    with guard.in_worker():
        _answer(conn, Expander(model, recording, incremental))


def _answer(conn: Connection, expander: Expander) -> None:
    # The engine sends up to IN_FLIGHT requests before it reads a reply. A thread takes them
    # off the pipe as they come, so that a large request never waits behind a large reply:
    # with both pipes full, the engine and this process would each wait for the other.
    requests: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=_receive, args=(conn, requests), daemon=True).start()
    while True:
        data = requests.get()
        if data is None:
            return
        request = unpack(data)
        reply: Reply | None
        try:
            reply = expander.handle(request)  # type: ignore[arg-type]
        except BaseException:  # report, don't die silently: the engine raises it
            reply = Crashed(traceback.format_exc())
        if reply is not None:
            conn.send_bytes(pack(reply))


def _receive(conn: Connection, requests: queue.SimpleQueue[bytes | None]) -> None:
    """Move the engine's requests from the pipe to `requests`; None once the pipe is closed."""
    while True:
        try:
            requests.put(conn.recv_bytes())
        except (EOFError, OSError):
            requests.put(None)
            return


Worker = _InProcess | _Process


def start(
    model: Model, count: int, recording: Recording | None = None, incremental: bool = True
) -> Sequence[Worker]:
    """`count` expanders: this process for 1, else that many worker processes (`incremental`:
    see checker.search.incremental)."""
    if count <= 1:
        return [_InProcess(model, recording, incremental)]
    return [_Process(model, n, recording, incremental) for n in range(count)]
