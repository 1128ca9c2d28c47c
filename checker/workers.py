"""Expanding chunks of a BFS level, in this process or in forked worker processes.

The local engine (checker.bfs) hands a chunk of encoded states to an expander, which returns
the fingerprints of all their successors in `Model.expand` order, with each one's action, the
number per parent and which parents are deadlocked. The engine decides which successors are
new and asks for those: the expander checks the invariants on them, in order, and returns their
encodings. Requests and replies are dicts of ints and bytes, sent between processes as msgpack
(never pickle); a worker process is forked, so it inherits the model instead of receiving it.
"""

from __future__ import annotations

import multiprocessing
import signal
import traceback
from array import array
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import msgpack
import numpy as np

from checker.errors import EvaluationError
from checker.frontier import Chunk
from checker.model import Model, Successor

Reply = dict[str, Any]


class Expander:
    """Does the work; keeps the successors of its last chunk until the engine picks the new
    ones."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._pending: list[Successor] = []

    def handle(self, request: dict[str, Any]) -> Reply:
        if request["op"] == "expand":
            return self.expand(request["blob"], request["offsets"])
        return self.admit(request["indices"])

    def expand(self, blob: bytes, offsets: bytes) -> Reply:
        """Successor fingerprints (uint64), actions (uint16), counts per state (uint32) and
        whether each state is deadlocked (uint8: no action enabled; a state the constraints
        keep from being expanded is not); `error` is the index of the first state whose
        expansion raised (none after it)."""
        expand = self.model.expand
        bounds = np.frombuffer(offsets, dtype=np.uint64).tolist()
        pending: list[Successor] = []
        counts = array("I")
        stuck = bytearray()
        error = None
        for i in range(len(bounds) - 1):
            try:
                successors = expand(blob[bounds[i] : bounds[i + 1]])
            except EvaluationError:
                error = i
                break
            counts.append(len(successors))
            stuck.append(successors.deadlocked)
            pending += successors
        self._pending = pending
        return {
            "fps": array("Q", [s.fp for s in pending]).tobytes(),
            "actions": array("H", [s.action for s in pending]).tobytes(),
            "counts": counts.tobytes(),
            "stuck": bytes(stuck),
            "error": error,
        }

    def admit(self, indices: bytes) -> Reply:
        """Check the invariants on the chosen successors, in order, and return their
        encodings; stop at the first that violates one (`violation`) or raises (`error`),
        including that state."""
        violated = self.model.violated
        pending = self._pending
        chosen = [pending[i] for i in np.frombuffer(indices, dtype=np.uint32).tolist()]
        reply: Reply = {"violation": None, "invariant": None, "error": None}
        sizes = array("Q", [0])
        for k, succ in enumerate(chosen):
            sizes.append(len(succ.data))
            try:
                broken = violated(succ.state)
            except EvaluationError:
                reply["error"] = k
                break
            if broken is not None:
                reply["violation"], reply["invariant"] = k, broken.name
                break
        kept = chosen[: len(sizes) - 1]
        reply["blob"] = b"".join(s.data for s in kept)
        reply["offsets"] = np.cumsum(np.frombuffer(sizes, dtype=np.uint64)).tobytes()
        self._pending = []
        return reply


class _InProcess:
    """An expander behind the same send/receive interface as a worker process."""

    def __init__(self, model: Model) -> None:
        self.expander = Expander(model)
        self._request: dict[str, Any] | None = None

    def send(self, request: dict[str, Any]) -> None:
        self._request = request

    def receive(self) -> Reply:
        request, self._request = self._request, None
        assert request is not None
        return self.expander.handle(request)

    def close(self) -> None:
        pass


class _Process:
    def __init__(self, model: Model, number: int) -> None:
        context = multiprocessing.get_context("fork")  # the child inherits the loaded model
        self.conn, child = context.Pipe()
        self.number = number
        self.process = context.Process(
            target=_serve, args=(child, model), name=f"mc-worker-{number}", daemon=True
        )
        self.process.start()
        child.close()

    def send(self, request: dict[str, Any]) -> None:
        self.conn.send_bytes(msgpack.packb(request, use_bin_type=True))

    def receive(self) -> Reply:
        try:
            reply = msgpack.unpackb(self.conn.recv_bytes(), raw=False)
        except (EOFError, OSError):
            self.process.join(1)
            raise RuntimeError(
                f"worker process {self.number} died (exit code {self.process.exitcode})"
            ) from None
        if "crash" in reply:
            raise RuntimeError(f"worker process {self.number} failed:\n{reply['crash']}")
        return reply

    def close(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(5)


def _serve(conn: Connection, model: Model) -> None:
    """A worker process's loop: the engine process decides about Ctrl-C and SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    expander = Expander(model)
    while True:
        try:
            request = msgpack.unpackb(conn.recv_bytes(), raw=False)
        except (EOFError, OSError):
            return
        try:
            reply = expander.handle(request)
        except BaseException:  # report, don't die silently: the engine raises it
            reply = {"crash": traceback.format_exc()}
        conn.send_bytes(msgpack.packb(reply, use_bin_type=True))


Worker = _InProcess | _Process


def start(model: Model, count: int) -> Sequence[Worker]:
    """`count` expanders: this process for 1, else that many worker processes."""
    if count <= 1:
        return [_InProcess(model)]
    return [_Process(model, n) for n in range(count)]


def request_expand(chunk: Chunk) -> dict[str, Any]:
    return {"op": "expand", "blob": chunk.blob, "offsets": chunk.offsets.tobytes()}


def request_admit(indices: np.ndarray) -> dict[str, Any]:
    return {"op": "admit", "indices": indices.astype(np.uint32).tobytes()}
