"""The child processes of a command that runs its jobs side by side (`mc ablate`'s rows), and
the one rule they follow: the command decides when they end.

- Each job runs in a forked child that sends its result back as JSON (never pickle), and
  status messages while it runs (a row's search: its level, states and rate).
- Ctrl-C (SIGINT, sent by a terminal to the whole process group) is ignored by the children:
  the command process receives it, as SIGTERM, and ends every child with SIGKILL at once,
  keeping the results of the jobs that had ended (`Finished.interrupted`). A child sent
  SIGTERM on its own dies of it (nothing of the spec's runs in a handler). Once interrupted,
  a second SIGINT or SIGTERM ends the command at once (exit 152) without waiting for the
  reports: `ending_at_once` is installed until `restore_signals`.
- A child dies with its command: the kernel kills it when the command process dies
  (PR_SET_PDEATHSIG on Linux); elsewhere its next message finds the pipe closed.
- A child killed by a signal (the kernel's out-of-memory killer sends SIGKILL) ends its job
  as "killed (signal 9)"; the other jobs go on.
- `memory`: the children's summed resident memory of their own is capped (the private pages
  of /proc/PID/smaps_rollup: a forked child's pages shared with its parent are the parent's,
  counted once, not once per child). A job starts only while the
  running ones leave a share (`memory / slots`) free; when the sum goes over the cap, the
  largest child is killed and its job ends "out of memory".
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import multiprocessing
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from types import FrameType
from typing import Any

from checker import guard
from checker.errors import ExitCode
from checker.local.workers import PR_SET_PDEATHSIG, resident

# A job: `work(job, say)` in the child, `say(status)` sending a JSON-able status to the parent;
# it returns the job's JSON-able result.
Work = Callable[[Any, Callable[[Any], None]], Any]
TICK = 0.2  # seconds between looks at the children's memory and the progress callback


@dataclass
class Ended:
    """How one job ended: its `result`, or why it has none (`lost`: "killed (signal 9)",
    "out of memory (...)", "failed: ...")."""

    index: int
    result: Any = None
    lost: str | None = None
    out_of_memory: bool = False
    seconds: float = 0.0


@dataclass
class Running:
    """A job running in its child: the last status it sent, its resident memory (bytes)."""

    index: int
    started: float
    status: Any = None
    resident: int = 0


@dataclass
class Finished:
    """The jobs that ended, in the jobs' order (those that never ended are missing), and the
    signal that interrupted the command (None: every job ended)."""

    ended: list[Ended] = field(default_factory=list)
    interrupted: str | None = None


class _Child:
    def __init__(self, index: int, work: Work, job: Any) -> None:
        context = multiprocessing.get_context("fork")  # the child inherits the loaded modules
        for stream in (sys.stdout, sys.stderr):  # else the child would write their buffers too
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        self.conn, sender = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_child_main,
            args=(sender, self.conn, work, job, os.getpid()),
            name=f"mc-job-{index}",
            daemon=True,
        )
        self.process.start()
        sender.close()
        self.running = Running(index, time.monotonic())
        self.result: Any = None
        self.failed: str | None = None
        self.over: str | None = None  # why the supervisor killed it (memory)

    def read(self) -> bool:
        """Take the messages waiting on the pipe; False once the child has closed it."""
        try:
            while self.conn.poll():
                message = json.loads(self.conn.recv_bytes())
                if "status" in message:
                    self.running.status = message["status"]
                elif "result" in message:
                    self.result = message["result"]
                else:
                    self.failed = message.get("failed", "failed")
        except (EOFError, OSError, ValueError):
            return False
        return True

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            if self.process.pid is not None:
                os.kill(self.process.pid, signal.SIGKILL)

    def ended(self) -> Ended:
        self.conn.close()
        self.process.join()
        seconds = time.monotonic() - self.running.started
        index = self.running.index
        if self.result is not None:
            return Ended(index, self.result, seconds=seconds)
        if self.over is not None:
            return Ended(index, lost=self.over, out_of_memory=True, seconds=seconds)
        if self.failed is not None:
            return Ended(index, lost=self.failed, seconds=seconds)
        code = self.process.exitcode
        if code is not None and code < 0:
            return Ended(index, lost=f"killed (signal {-code})", seconds=seconds)
        return Ended(index, lost=f"its process ended with exit code {code}", seconds=seconds)


def run(
    work: Work,
    jobs: Sequence[Any],
    *,
    slots: int,
    memory: int | None = None,
    on_end: Callable[[Ended], None] | None = None,
    on_tick: Callable[[list[Running]], None] | None = None,
) -> Finished:
    """Run `work` on each of `jobs`, at most `slots` children at a time (and within `memory`
    bytes of resident memory, summed), calling `on_end` as each ends and `on_tick` with the
    running ones every TICK seconds. Ctrl-C or SIGTERM: every child killed, the jobs ended so
    far returned with `interrupted` set."""
    waiting = deque(range(len(jobs)))
    running: dict[Connection, _Child] = {}
    ended: dict[int, Ended] = {}
    share = memory // max(1, slots) if memory is not None else None
    interrupted: str | None = None
    try:
        while waiting or running:
            while waiting and len(running) < slots and _fits(running, memory, share):
                i = waiting.popleft()
                child = _Child(i, work, jobs[i])
                running[child.conn] = child
            ready = wait(list(running), timeout=TICK)
            for conn in ready:
                child = running[conn]  # type: ignore[index]
                if not child.read() or child.result is not None or child.failed is not None:
                    del running[conn]  # type: ignore[arg-type]
                    done = child.ended()
                    ended[done.index] = done
                    if on_end is not None:
                        on_end(done)
            _watch_memory(list(running.values()), memory)
            if on_tick is not None:
                on_tick([c.running for c in running.values()])
    except KeyboardInterrupt as exc:  # checker.guard's Interrupted: Ctrl-C or SIGTERM
        interrupted = str(exc) or "SIGINT"
        _install_ending_at_once(list(running.values()))
    finally:
        for child in running.values():
            child.kill()
        for child in running.values():
            child.conn.close()
            child.process.join()
    return Finished([ended[i] for i in sorted(ended)], interrupted)


def _fits(running: dict[Connection, _Child], memory: int | None, share: int | None) -> bool:
    if memory is None or share is None or not running:
        return True
    return sum(c.running.resident for c in running.values()) + share <= memory


def private_resident(pid: int) -> int | None:
    """The resident memory process `pid` does not share (bytes): Linux's private pages, else
    its whole resident memory where the system tells no more."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            fields = dict(line.split(b":", 1) for line in rollup.read().splitlines()[1:])
        return sum(int(fields[k].split()[0]) for k in (b"Private_Clean", b"Private_Dirty")) << 10
    except (OSError, ValueError, KeyError):
        return resident(pid)


def _watch_memory(children: list[_Child], memory: int | None) -> None:
    """Measure each child; over the cap, the largest is killed (its job: out of memory)."""
    for child in children:
        child.running.resident = private_resident(child.process.pid) or 0
    if memory is None:
        return
    total = sum(c.running.resident for c in children)
    if total > memory and children:
        largest = max(children, key=lambda c: c.running.resident)
        if largest.over is None:
            largest.over = (
                f"out of memory ({largest.running.resident >> 20:,} MiB resident of its own;"
                f" the rows together went over --memory {memory >> 20:,} MiB)"
            )
            largest.kill()


# -- in the child -------------------------------------------------------------------------------


def _child_main(
    sender: Connection, receiver: Connection, work: Work, job: Any, parent: int
) -> None:
    """A child: dies with its parent, leaves Ctrl-C to it, dies of SIGTERM, and sends its
    job's result (or why it failed: never a traceback on the terminal)."""
    receiver.close()
    become_child(parent)

    def say(status: Any) -> None:
        sender.send_bytes(json.dumps({"status": status}).encode())

    try:
        message = {"result": work(job, say)}
    except MemoryError:
        message = {"failed": "out of memory (MemoryError in its process)"}
    except BaseException as exc:  # reported as the job's failure, never printed
        message = {"failed": f"mc failed: {type(exc).__name__}: {exc} (a bug in mc)"}
    try:
        sender.send_bytes(json.dumps(message).encode())
        sender.close()
    except OSError:  # the parent is gone
        pass


def become_child(parent: int) -> None:
    """In a forked child of process `parent`: die with it, leave Ctrl-C to it (a terminal
    sends SIGINT to the whole group), and die of SIGTERM at once. A handler of its own, so that
    checker.guard does not turn SIGTERM into an interrupt raised through spec code and the
    search's `finally` blocks (whose tracebacks nobody would read)."""
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _die_of_signal)


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux), and end now if it
    died already."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        guard.real_exit(0)


def _die_of_signal(signum: int, frame: FrameType | None) -> None:
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


# -- a second signal ----------------------------------------------------------------------------

_saved: dict[int, Any] = {}


def _install_ending_at_once(children: list[_Child]) -> None:
    """After the first interrupt, while the command kills its children and writes what it
    has: a second SIGINT or SIGTERM ends it at once (exit 152), without the reports."""

    def now(signum: int, frame: FrameType | None) -> None:
        for child in children:
            child.kill()
        with contextlib.suppress(OSError):
            os.write(
                2,
                f"mc: {signal.Signals(signum).name} again: ended at once, without the"
                " table and reports\n".encode(),
            )
        guard.real_exit(int(ExitCode.INCOMPLETE))

    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.signal(signum, now)
        _saved.setdefault(signum, previous)


def restore_signals() -> None:
    """Put back the handlers that `_install_ending_at_once` replaced."""
    for signum, handler in _saved.items():
        signal.signal(signum, handler)
    _saved.clear()


@contextlib.contextmanager
def signals_restored() -> Iterator[None]:
    """`with signals_restored():` a command that runs `run`, its reports written inside."""
    try:
        yield
    finally:
        restore_signals()
