"""Expanding chunks of a BFS level, in this process or in forked worker processes.

The local engine (checker.local.bfs) hands a chunk of a level to an expander: states the expander
itself keeps as live objects (it found them at the previous level), or their encodings. The
expander computes every successor with `Model.successors` and drops at once those equal (by
`==`, on Python's own hash) to a state it has met at this level: a parent, or a successor it
already sent. Only the others, the candidates, are encoded and fingerprinted, and checked
against the invariants; it sends the engine their fingerprints, encodings and verdicts, with
the action of every successor and the number per parent.

The engine decides which candidates are new (in chunk order, so that the search is that of
one state at a time) and tells the expander, which keeps them, still live, for the next level
(unless the engine's memory budget for live states says otherwise). A successor dropped as
already met is never new: the expander met it as a parent (visited), or sent it earlier in
this level, and the engine handles each expander's chunks in the order the expander did.

Requests and replies are dicts of ints and bytes, sent between processes as msgpack (never
pickle); a worker process is forked, so it inherits the model instead of receiving it.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue
import signal
import threading
import traceback
from array import array
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import msgpack
import numpy as np

from checker import guard
from checker.behaviour import Recording, binding_key, predicate_value
from checker.compiled import Binding
from checker.encoding import decode, encode_state, fingerprint
from checker.errors import EvaluationError
from checker.model import Model
from checker.record import Record, StateError, freeze
from checker.speedups import hot

Reply = dict[str, Any]
Request = dict[str, Any]


class Expander:
    """Does the work. Keeps, per level, the live states the engine gave it to keep (in the
    order it kept them), the states it met at the current level, and the candidates of the
    chunks the engine has not yet decided about.

    When the search records its behaviour (checker.behaviour), it also returns the
    fingerprint of every successor (the states it met are then a dict: state -> fingerprint),
    the values of the recorded predicates on the candidates, and the binding key of the steps
    of the actions that need one."""

    def __init__(self, model: Model, recording: Recording | None = None) -> None:
        self.model = model
        self.recording = recording
        self.levels: dict[int, list[Record]] = {}  # level -> its live states kept here
        self.seen: set[Record] | dict[Record, int] = {} if recording else set()
        self.fps: dict[int, list[int]] = {}  # level -> its kept states' fingerprints (recording)
        # chunk -> (level, candidates, their fingerprints)
        self.pending: dict[int, tuple[int, list[Record], array]] = {}
        # The reachability properties (indexes) not reached when the level started: checked
        # on the level's candidates.
        self.wanted: list[int] = list(range(len(model.reachables)))

    def handle(self, request: Request) -> Reply | None:
        """Answer an "expand" request; "admit", "forget" and "level" requests have no
        answer."""
        op = request["op"]
        if op == "expand":
            return self.expand(request)
        if op == "admit":
            self.admit(request)
        elif op == "forget":  # the engine keeps this memory within its budget
            self.seen = {} if self.recording else set()
        elif op == "level":
            wanted = request.get("wanted", list(range(len(self.model.reachables))))
            self.start_level(request["level"], request.get("forget", True), wanted)
        else:
            raise ValueError(f"unknown request {op!r}")
        return None

    def start_level(self, level: int, forget: bool, wanted: list[int]) -> None:
        """The engine starts expanding `level`: earlier levels and undecided candidates (of a
        depth-bound probe) are dropped; the states met are those kept for this level, or
        (`forget` False) all those met so far; `wanted`: the reachability properties that no
        state has satisfied yet."""
        self.wanted = wanted
        for old in [n for n in self.levels if n < level]:
            del self.levels[old]
            self.fps.pop(old, None)
        self.pending.clear()
        if forget and self.recording:
            self.seen = dict(zip(self.levels.get(level, ()), self.fps.get(level, ())))
        elif forget:
            self.seen = set(self.levels.get(level, ()))

    def admit(self, request: Request) -> None:
        level, candidates, fps = self.pending.pop(request["chunk"])
        if request["keep"]:
            indices = np.frombuffer(request["indices"], np.uint32).tolist()
            self.levels.setdefault(level + 1, []).extend([candidates[i] for i in indices])
            if self.recording:
                self.fps.setdefault(level + 1, []).extend([fps[i] for i in indices])

    def expand(self, request: Request) -> Reply:
        """Successors of the chunk's states: the action of each (uint16), the number per state
        (uint32), whether each state is deadlocked (uint8: no action enabled; a state the
        constraints keep from being expanded is not); and the candidates: their positions
        among the successors (uint32), fingerprints (uint64), encodings (a blob and uint64
        offsets), the first invariant each violates and those whose invariants (or
        reachability properties) raised, and the first candidate satisfying each wanted
        reachability property. `error` is the index of the first state whose expansion raised
        (none after it). With `bindings` in the request (not when recording), also each
        candidate's binding index (uint32, Model.binding_index), which the Spark engine's links
        keep."""
        model = self.model
        level = request["level"]
        if "blob" in request:
            states = _decoded(request["blob"], request["offsets"])
            if self.recording:
                fingerprint_of = self.model.fingerprint_of
                self.seen.update((s, fingerprint_of(s)) for s in states)  # type: ignore[union-attr]
            else:
                self.seen.update(states)  # type: ignore[union-attr]
        else:
            first = request["start"]
            states = self.levels[level][first : first + request["count"]]
        seen = self.seen
        successors: list[Record] = []
        actions: list[int] = []
        counts = array("I")
        stuck = bytearray()
        candidates: list[Record] = []
        positions: list[int] = []
        fps = array("Q")
        encodings: list[bytes] = []
        error = None
        constraints = model.constraints
        reduces = model.reduces
        recording = self.recording
        steps = _Steps(recording) if recording else None  # every successor's fingerprint...
        indexes = array("I") if request.get("bindings") and not recording else None
        keyed = recording is not None and recording.keyed
        bindings: list[Binding] | None = [] if keyed or indexes is not None else None
        domains: dict[int, Sequence[Binding]] = {}  # the state's bindings, by action
        total = 0  # successors of the chunk so far
        for i, state in enumerate(states):
            if constraints and not model.within_constraints(state):
                counts.append(0)
                stuck.append(0)
                continue
            try:
                enabled = model.successors(state, successors, actions, bindings)
                if not enabled and model.terminals and model.final(state):
                    enabled = True  # an intended final state: no deadlock
                first = len(candidates)
                if steps is not None:
                    steps.take(model, state, successors, actions, total, seen, bindings)
                    candidates += steps.found
                    positions += steps.positions
                    fps.extend([seen[succ] for succ in steps.found])  # type: ignore[index]
                    encodings += steps.encodings
                else:
                    _unmet(model, state, successors, actions, total, seen, candidates, positions)
                    for succ, position in zip(candidates[first:], positions[first:]):
                        try:
                            data = encode_state(succ)
                        except StateError as exc:
                            raise _unencodable(model, actions[position], state, exc) from exc
                        fp = model.fingerprint_of(succ, data) if reduces else fingerprint(data)
                        if indexes is not None:
                            binding = bindings[position - total]  # type: ignore[index]
                            ai = actions[position]
                            indexes.append(model.binding_index(state, ai, binding, domains))
                        fps.append(fp)
                        encodings.append(data)
            except EvaluationError:  # the engine raises it again, with the state and step
                error = i
                del actions[total:]
                if steps is not None:
                    steps.cut(total)
                break
            if bindings is not None:
                bindings.clear()
                domains.clear()
            counts.append(len(successors))
            stuck.append(not enabled)
            total += len(successors)
            successors.clear()  # freed now, while they are still in the cache
        del candidates[len(fps) :]  # those of a state whose expansion raised were not encoded
        broken, raised, reached = self._verdicts(candidates)
        self.pending[request["chunk"]] = (level, candidates, fps)
        sizes = np.fromiter(map(len, encodings), np.uint64, len(encodings))
        reply: Reply = {
            "actions": array("H", actions).tobytes(),
            "counts": counts.tobytes(),
            "stuck": bytes(stuck),
            "positions": array("I", positions[: len(candidates)]).tobytes(),
            "fps": fps.tobytes(),
            "blob": b"".join(encodings),
            "offsets": np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)]).tobytes(),
            "broken": broken,
            "raised": raised,
            "reached": reached,
            "error": error,
        }
        if steps is not None:
            reply.update(steps.reply(self.model, candidates))
        if indexes is not None:
            reply["bindings"] = indexes.tobytes()
        return reply

    def _verdicts(
        self, candidates: list[Record]
    ) -> tuple[list[list[Any]], list[int], list[list[int]]]:
        """[candidate, invariant] for each candidate that violates one; the candidates on
        which an invariant or a reachability property raised (the engine raises it again if
        that candidate is new); and [candidate, property] for the first candidate that
        satisfies each wanted reachability property (the first new one is the first
        candidate: a candidate met before was checked when it was new)."""
        broken: list[list[Any]] = []
        raised: list[int] = []
        reached: list[list[int]] = []
        model = self.model
        violated = model.violated
        wanted = self.wanted
        hit: set[int] = set()
        for k, state in enumerate(candidates):
            try:
                invariant = violated(state)
                got = model.reached(state, wanted) if wanted else ()
            except EvaluationError:
                raised.append(k)
                continue
            if invariant is not None:
                broken.append([k, invariant.name])
            for i in got:
                if i not in hit:
                    hit.add(i)
                    reached.append([k, i])
        return broken, raised, reached


class Expansion:
    """An expander's reply for one part, cut at the first state where a one-state-at-a-time
    search would stop (a deadlock when --deadlock is on, or an action that raised)."""

    def __init__(self, reply: Reply, deadlock: bool) -> None:
        self.actions = np.frombuffer(reply["actions"], dtype=np.uint16)
        counts = np.frombuffer(reply["counts"], dtype=np.uint32).astype(np.int64)
        self.stop: int | None = reply["error"]
        self.deadlocked = False
        if deadlock:
            empty = np.flatnonzero(np.frombuffer(reply["stuck"], dtype=np.uint8))
            if len(empty) and (self.stop is None or empty[0] < self.stop):
                self.stop, self.deadlocked = int(empty[0]), True
        self.ends = np.cumsum(counts)
        self.starts = self.ends - counts
        parents = len(counts) if self.stop is None else self.stop
        self.limit = int(self.ends[parents - 1]) if parents else 0  # successors to consider
        self.parent_of = np.repeat(np.arange(len(counts)), counts)
        # The candidates: successors the expander had not met, in order.
        self.positions = np.frombuffer(reply["positions"], dtype=np.uint32).astype(np.int64)
        self.fps = np.frombuffer(reply["fps"], dtype=np.uint64)
        self.candidates = int(np.searchsorted(self.positions, self.limit))
        self._blob = reply["blob"]
        self._offsets = np.frombuffer(reply["offsets"], dtype=np.uint64)
        self.broken: dict[int, str] = {k: name for k, name in reply["broken"]}
        self.raised = np.zeros(len(self.positions), dtype=bool)
        self.raised[reply["raised"]] = True
        self.flagged = self.raised.copy()
        self.flagged[list(self.broken)] = True
        self.reached: list[list[int]] = reply["reached"]  # [candidate, reachable property]
        indexes = reply.get("bindings")  # of the candidates, if asked for
        self.bindings = None if indexes is None else np.frombuffer(indexes, np.uint32)
        # What a recorded search also gets (checker.behaviour), cut as the rest.
        if "targets" in reply:
            parents = len(counts) if self.stop is None else self.stop
            self.counts = counts[:parents]
            self.targets = np.frombuffer(reply["targets"], dtype=np.uint64)[: self.limit]
            keys = reply.get("keys")
            self.keys = None if keys is None else np.frombuffer(keys, np.uint64)[: self.limit]
            values = np.frombuffer(reply["values"], dtype=np.uint8)
            rows = len(self.positions)
            self.values = values.reshape(rows, len(values) // rows if rows else 0)

    def encoding(self, candidate: int) -> bytes:
        return self._blob[int(self._offsets[candidate]) : int(self._offsets[candidate + 1])]

    def encodings(self, kept: np.ndarray) -> tuple[bytes, np.ndarray]:
        """The encodings of the candidates `kept` (ascending), back to back, with offsets."""
        offsets = self._offsets
        if len(kept) and int(kept[-1]) == len(kept) - 1:  # the first ones: one slice
            return self._blob[: int(offsets[len(kept)])], offsets[: len(kept) + 1]
        bounds = offsets.tolist()
        blob = self._blob
        pieces = [blob[bounds[k] : bounds[k + 1]] for k in kept.tolist()]
        sizes = np.fromiter(map(len, pieces), np.uint64, len(pieces))
        return b"".join(pieces), np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)])


class _Steps:
    """What a recorded search needs of a chunk besides the candidates: the fingerprint of
    every successor, the key of the steps whose action has per-binding fairness, and the
    values of the recorded predicates on the candidates."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.targets = array("Q")
        self.keys = array("Q")
        self.found: list[Record] = []  # the last state's candidates, their positions and
        self.positions: list[int] = []  # encodings (their fingerprints are in `seen`)
        self.encodings: list[bytes] = []

    def take(
        self,
        model: Model,
        state: Record,
        successors: list[Record],
        actions: list[int],
        offset: int,
        seen: dict[Record, int],
        bindings: list[Binding] | None,
    ) -> None:
        """A state's successors: each one's fingerprint, from `seen` or computed for a
        candidate (added to `seen` at once: a later successor may equal it)."""
        self.found, self.positions, self.encodings = [], [], []
        keyed = self.recording.keyed
        for index, succ in enumerate(successors):
            try:
                fp = seen.get(succ)
            except TypeError:
                succ = successors[index] = _refrozen(model, state, actions[offset + index], succ)
                fp = seen.get(succ)
            if fp is None:
                try:
                    data = encode_state(succ)
                except StateError as exc:
                    raise _unencodable(model, actions[offset + index], state, exc) from exc
                fp = seen[succ] = model.fingerprint_of(succ, data)
                self.found.append(succ)
                self.positions.append(offset + index)
                self.encodings.append(data)
            self.targets.append(fp)
            if bindings is not None:
                ai = actions[offset + index]
                self.keys.append(binding_key(bindings[index]) if ai in keyed else 0)

    def cut(self, total: int) -> None:
        """Forget the steps of a state whose expansion raised."""
        del self.targets[total:]
        del self.keys[total:]

    def reply(self, model: Model, candidates: list[Record]) -> Reply:
        values = bytearray()
        for state in candidates:
            for _, predicate in self.recording.predicates:
                values.append(predicate_value(predicate, state))
        out: Reply = {"targets": self.targets.tobytes(), "values": bytes(values)}
        if self.recording.keyed:
            out["keys"] = self.keys.tobytes()
        return out


def _unmet(
    model: Model,
    state: Record,
    successors: list[Record],
    actions: list[int],
    offset: int,
    seen: set[Record],
    found: list[Record],
    positions: list[int],
) -> None:
    """Add `state`'s successors that are not in `seen` to it and to `found`, their positions
    in the chunk (`offset` + their index) to `positions` (in C with checker._hot). The
    successors' actions are `actions[offset:]`."""
    start = 0
    if hot is not None:
        while True:
            stop = hot.candidates(successors, start, seen, found, positions, offset)
            if stop is None:
                return
            # A list or set inside a tuple: freeze it as put() would, then go on from there.
            ai = actions[offset + stop]
            successors[stop] = _refrozen(model, state, ai, successors[stop])
            start = stop
    for index, succ in enumerate(successors):
        try:
            met = succ in seen
        except TypeError:
            succ = successors[index] = _refrozen(model, state, actions[offset + index], succ)
            met = succ in seen
        if not met:
            seen.add(succ)
            found.append(succ)
            positions.append(offset + index)


def _decoded(blob: bytes, offsets: bytes) -> list[Record]:
    bounds = np.frombuffer(offsets, np.uint64).tolist()
    return [decode(blob[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1)]


def _refrozen(model: Model, state: Record, ai: int, succ: Record) -> Record:
    """A successor holding a mutable value inside a tuple, with that value frozen."""
    try:
        return type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
    except StateError as exc:
        raise _unencodable(model, ai, state, exc) from exc


def _unencodable(model: Model, ai: int, state: Record, exc: StateError) -> EvaluationError:
    return EvaluationError(
        "action",
        model.actions[ai].name,
        f"built a state that cannot be encoded: {exc}",
        state=state,
    )


class _InProcess:
    """An expander behind the same send/receive interface as a worker process."""

    def __init__(self, model: Model, recording: Recording | None) -> None:
        self.expander = Expander(model, recording)
        self._replies: list[Reply] = []
        self.number = 0

    def send(self, request: Request) -> None:
        reply = self.expander.handle(request)
        if reply is not None:
            self._replies.append(reply)

    def receive(self) -> Reply:
        return self._replies.pop(0)

    def fileno(self) -> int | None:
        return None

    def close(self) -> None:
        pass


class _Process:
    def __init__(self, model: Model, number: int, recording: Recording | None) -> None:
        context = multiprocessing.get_context("fork")  # the child inherits the loaded model
        self.conn, child = context.Pipe()
        self.number = number
        self.process = context.Process(
            target=_serve,
            args=(child, model, recording),
            name=f"mc-worker-{number}",
            daemon=True,
        )
        self.process.start()
        child.close()

    def send(self, request: Request) -> None:
        self.conn.send_bytes(msgpack.packb(request, use_bin_type=True))

    def fileno(self) -> int:
        return self.conn.fileno()

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


def _serve(conn: Connection, model: Model, recording: Recording | None) -> None:
    """A worker process's loop: the engine process decides about Ctrl-C and SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.disable()  # as in the engine process (checker.local.bfs.check)
    with guard.in_worker():
        _answer(conn, Expander(model, recording))


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
        request = msgpack.unpackb(data, raw=False)
        try:
            reply = expander.handle(request)
        except BaseException:  # report, don't die silently: the engine raises it
            reply = {"crash": traceback.format_exc()}
        if reply is not None:
            conn.send_bytes(msgpack.packb(reply, use_bin_type=True))


def _receive(conn: Connection, requests: queue.SimpleQueue[bytes | None]) -> None:
    """Move the engine's requests from the pipe to `requests`; None once the pipe is closed."""
    while True:
        try:
            requests.put(conn.recv_bytes())
        except (EOFError, OSError):
            requests.put(None)
            return


Worker = _InProcess | _Process


def start(model: Model, count: int, recording: Recording | None = None) -> Sequence[Worker]:
    """`count` expanders: this process for 1, else that many worker processes."""
    if count <= 1:
        return [_InProcess(model, recording)]
    return [_Process(model, n, recording) for n in range(count)]
