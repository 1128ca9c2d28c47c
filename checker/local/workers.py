"""The expanders of the local engine: this process, or forked worker processes that each run
an Expander (checker.search.expansion) behind the same send/receive interface.

Requests and replies are sent between processes as msgpack (never pickle), with the encoded
states they carry as raw payload (checker.local.channel); a worker process is forked, so it
inherits the model instead of receiving it.

A worker that dies (killed, out of memory) ends the search with an EngineFailure naming it
(exit 153, the counts so far); a worker whose engine process dies ends too: on Linux the kernel
kills it (PR_SET_PDEATHSIG), elsewhere it reads the end of its pipe, which it sees only because
each worker closes the engine's ends of the other workers' pipes that it inherited.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from checker import errors, guard
from checker.behaviour import Recording
from checker.errors import EngineFailure, McError
from checker.local.channel import Channel
from checker.model import Model
from checker.search.expansion import (
    Crashed,
    Expanded,
    Expander,
    Known,
    Reply,
    Request,
    pack,
    unpack,
)
from checker.search.outcome import MEMORY_ADVICE


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

    def post(self, request: Request) -> None:
        self.send(request)  # (nothing to gather: handled at once)

    def flush(self) -> None:
        pass

    def receive(self) -> Expanded:
        return self._replies.pop(0)

    def fileno(self) -> int | None:
        return None

    def resident(self) -> int | None:
        return resident()

    def close(self) -> None:
        pass


WORKER_ADVICE = (
    "If memory ran out (the kernel's out-of-memory killer sends SIGKILL), use fewer --workers"
    " or a lower --memory; --checkpoint DIR lets a long run go on later from its last level."
)
PR_SET_PDEATHSIG = 1  # linux/prctl.h


class _Process:
    def __init__(
        self,
        model: Model,
        number: int,
        recording: Recording | None,
        siblings: Sequence[Channel] = (),
        incremental: bool = True,
    ) -> None:
        context = multiprocessing.get_context("fork")  # the child inherits the loaded model
        self.conn, child = Channel.pair()
        self.number = number
        inherited = [*siblings, self.conn]  # the engine's ends, which the child must close
        self.process = context.Process(
            target=_serve,
            args=(child, model, recording, inherited, os.getpid(), incremental),
            name=f"mc-worker-{number}",
            daemon=True,
        )
        self.process.start()
        child.close()
        self._outbox: list[tuple[bytes, list[bytes]]] = []
        self._known: list[bytes] = []  # fingerprints posted (Known), sent with the next request

    def send(self, request: Request) -> None:
        """Send `request` now (after those posted)."""
        self.post(request)
        self.flush()

    def post(self, request: Request) -> None:
        """Send `request` with the next flush (in order): the engine gathers what it has
        for a worker while it takes a reply, and sends it in one go before it waits.
        Fingerprints (Known) are joined into one message and go with the next request that
        is not: alone, a message's system call and wake-up cost more than they save."""
        if isinstance(request, Known):
            self._known.append(request.fps)
        else:
            self._outbox.append(pack(request))

    def flush(self) -> None:
        if not self._outbox:
            return
        messages, self._outbox = self._outbox, []
        if self._known:
            messages.insert(0, pack(Known(b"".join(self._known))))
            self._known = []
        try:
            self.conn.send_all(messages)
        except OSError:  # a broken pipe: the worker is gone
            raise self._died() from None

    def fileno(self) -> int:
        return self.conn.fileno()

    def resident(self) -> int | None:
        return resident(self.process.pid)

    def receive(self) -> Expanded:
        try:
            reply = unpack(*self.conn.receive())
        except (EOFError, OSError):
            raise self._died() from None
        if isinstance(reply, Crashed):
            raise self._crashed(reply)
        assert isinstance(reply, Expanded)
        return reply

    def _died(self) -> EngineFailure:
        self.process.join(1)
        code = self.process.exitcode
        if code is None:
            how = "it closed its pipe"
        elif code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"exit code {code}"
        return EngineFailure(f"worker process {self.number} died ({how})", WORKER_ADVICE)

    def _crashed(self, reply: Crashed) -> Exception:
        if reply.error == "MemoryError":
            return EngineFailure(f"out of memory in worker process {self.number}", MEMORY_ADVICE)
        known = getattr(errors, reply.error, None) if reply.error else None
        if isinstance(known, type) and issubclass(known, McError):
            return known(reply.message)
        return RuntimeError(f"worker process {self.number} failed:\n{reply.traceback}")

    def close(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(5)


def _serve(
    conn: Channel,
    model: Model,
    recording: Recording | None,
    inherited: Sequence[Channel],
    parent: int,
    incremental: bool,
) -> None:
    """A worker process's loop: the engine process decides about Ctrl-C and SIGTERM."""
    _die_with(parent)
    for other in inherited:  # else this process would keep the others' pipes open
        other.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.disable()  # as in the engine process (checker.local.bfs.check)
    with guard.in_worker():
        _answer(conn, Expander(model, recording, incremental))


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when the engine process dies (Linux), and end now if
    it died already."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # the pipe's end still ends it
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(0)


def _answer(conn: Channel, expander: Expander) -> None:
    # The engine sends up to IN_FLIGHT requests before it reads a reply. A thread takes them
    # off the pipe as they come, so that a large request never waits behind a large reply:
    # with both pipes full, the engine and this process would each wait for the other.
    requests: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
    threading.Thread(target=_receive, args=(conn, requests, expander), daemon=True).start()
    while True:
        request = requests.get()
        if request is None:
            return
        reply: Reply | None
        try:
            reply = expander.handle(request)
        except MemoryError:
            expander.release()  # room to answer
            reply = Crashed("", "MemoryError")
        except McError as exc:  # the spec is not deterministic, ...
            reply = Crashed(traceback.format_exc(), type(exc).__name__, str(exc))
        except BaseException:  # report, don't die silently: the engine raises it
            reply = Crashed(traceback.format_exc())
        if reply is not None:
            try:
                conn.send(*pack(reply))
            except OSError:  # the engine closed the pipe: it stopped (a signal) or is gone
                return


def _receive(
    conn: Channel, requests: queue.SimpleQueue[Request | None], expander: Expander
) -> None:
    """Move the engine's requests from the pipe to `requests`; None once the pipe is closed.
    The fingerprints the engine admitted from other workers (Known) are noted at once, not
    queued: the batch being expanded then drops its candidates among them (the requests
    queued before would keep them back until the batches they were meant for are done)."""
    while True:
        try:
            request = unpack(*conn.receive())
        except (EOFError, OSError):
            requests.put(None)
            return
        if isinstance(request, Known):
            expander.note_known(request)
        else:
            requests.put(request)  # type: ignore[arg-type]


Worker = _InProcess | _Process


def resident(pid: int | None = None) -> int | None:
    """The resident memory of process `pid` (this one by default) in bytes, where the system
    tells (Linux's /proc); else None."""
    try:  # (os.open and os.read, not open(): the engine asks once per part)
        fd = os.open(f"/proc/{pid or 'self'}/statm", os.O_RDONLY)
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
        return int(data.split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return None


PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def start(
    model: Model, count: int, recording: Recording | None = None, incremental: bool = True
) -> Sequence[Worker]:
    """`count` expanders: this process for 1, else that many worker processes (`incremental`:
    see docs/architecture.md)."""
    if count <= 1:
        return [_InProcess(model, recording, incremental)]
    workers: list[_Process] = []
    for n in range(count):
        workers.append(_Process(model, n, recording, [w.conn for w in workers], incremental))
    return workers
