"""The local engine: breadth-first search, level by level, on one machine.

Order is fixed (initial states as `init` lists them; successors as `Model.expand` yields
them), and a state's parent is the first state that reached it, so the counterexample is a
shortest one and is the same on every run and for any number of workers.

A level is cut into chunks, expanded by expanders (this process, or `workers` forked
processes: checker.workers). For each chunk, in order, this process picks the successors that
are new (numpy over their fingerprints: checker.visited), the expander checks invariants on
exactly those and returns their encodings, which become the next level (checker.frontier).
So the verdict, counts and trace are those of a one-state-at-a-time search, whatever the
chunking; where that search would have stopped mid-chunk (a violation, a deadlock, an error,
--max-states), the counts are cut at the same point.

With checkpoints (checker.checkpoint), the search as it stands at the start of each level is
kept until the level ends: it is what a checkpoint holds, written at the first level start
after the interval, and what Ctrl-C, SIGTERM or --timeout leave behind. A resumed search starts
from it and goes on exactly as the interrupted one would have.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from checker.checkpoint import PIECE, Array, Checkpoints, Saved
from checker.errors import EvaluationError
from checker.frontier import SPILL_BYTES, Chunk, Frontier
from checker.model import Model
from checker.progress import Progress, Snapshot
from checker.result import ActionCoverage, CheckResult, ErrorInfo
from checker.state import decode, fingerprint
from checker.trace import chain_from_positions, replay
from checker.visited import ROOT, Links, Visited
from checker.workers import Reply, Worker, request_admit, request_expand, start


@dataclass(frozen=True)
class Options:
    deadlock: bool = False  # report states with no enabled action (TLC's -deadlock)
    max_depth: int | None = None  # explore states up to this depth (initial states: 1)
    max_states: int | None = None  # stop after this many distinct states
    workers: int = 1  # expanding processes (1: this process)
    spill_bytes: int = SPILL_BYTES  # a level's states beyond this go to a temporary file


class _Stop(Exception):
    """Ends the search early with a verdict; `state` is the number of the trace's end."""

    def __init__(self, verdict: str, state: int | None = None, **fields: object) -> None:
        self.verdict = verdict
        self.state = state
        self.fields = fields


def check(
    model: Model,
    options: Options | None = None,
    progress: Progress | None = None,
    checkpoints: Checkpoints | None = None,
) -> CheckResult:
    """Explore every reachable state of `model`; return the verdict, counts and any trace.
    With `checkpoints`, write them (and resume from `checkpoints.resumed`)."""
    options = options or Options()
    result = model.new_result()
    search = _Search(model, options, progress, checkpoints)
    start_time = time.perf_counter()
    try:
        search.run()
    except _Stop as stop:
        result.verdict = stop.verdict
        for key, value in stop.fields.items():
            setattr(result, key, value)
        if stop.state is not None:
            result.trace = search.trace_to(stop.state)
    except EvaluationError as exc:
        result.verdict = "error"
        result.error = ErrorInfo.of(exc)
        if search.current is not None:
            result.trace = search.trace_to(search.current)
    except KeyboardInterrupt:  # Ctrl-C (and SIGTERM, see cli): stop and report what we have
        result.verdict = "incomplete"
        result.bound = "interrupted"
        search.save()
    finally:
        search.close()
        if progress is not None:
            progress.close()
    if checkpoints is not None and result.bound != "interrupted":
        checkpoints.remove()  # the search ended by itself: nothing to resume
    result.seconds = time.perf_counter() - start_time
    result.distinct_states = len(search.links)
    result.states_generated = search.generated
    result.depth = search.depth
    result.queue = search.queue
    result.visited_bytes = search.visited.nbytes
    result.link_bytes = search.links.nbytes
    result.closest_fingerprints = search.visited.closest()
    result.coverage = [
        ActionCoverage(a.name, int(fired), int(new))
        for a, fired, new in zip(model.actions, search.fired, search.new)
    ]
    return result


@dataclass(frozen=True)
class _LevelStart:
    """The search at the start of a level (the level's states are `frontier`)."""

    level: int
    frontier: Frontier
    fingerprints: np.ndarray  # Visited.finished then: later merges make new arrays
    states: int  # distinct states then: the links beyond are the level's own work
    generated: int
    depth: int
    fired: np.ndarray
    new: np.ndarray


class _Search:
    def __init__(
        self,
        model: Model,
        options: Options,
        progress: Progress | None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.model = model
        self.options = options
        self.progress = progress
        self.checkpoints = checkpoints
        self.start: _LevelStart | None = None
        self.visited = Visited()
        self.links = Links()  # state number -> (parent number, position in its expand list)
        self.generated = 0
        self.depth = 0
        self.queue = 0
        self.current: int | None = None  # number of the state being evaluated
        self.fired = np.zeros(len(model.actions), dtype=np.int64)
        self.new = np.zeros(len(model.actions), dtype=np.int64)
        self.workers: list[Worker] = []

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        if self.start is not None:
            self.start.frontier.close()

    def trace_to(self, state: int) -> list:
        return replay(self.model, chain_from_positions(self.model, self.links.chain(state)))

    def run(self) -> None:
        self.workers = list(start(self.model, self.options.workers))
        resumed = self.checkpoints.resumed if self.checkpoints is not None else None
        if resumed is not None:
            frontier, level = self._restore(resumed)
        else:
            frontier, level = self._initial(), 1  # `level`: the depth of the states in `frontier`
        max_depth = self.options.max_depth
        while len(frontier):
            self._begin(level, frontier)
            if max_depth is not None and level >= max_depth:
                self._stop_at_depth_bound(frontier)
                return
            frontier = self._expand_level(frontier, level)
            level += 1

    def _initial(self) -> Frontier:
        frontier = Frontier(self.options.spill_bytes)
        for init in self.model.initial():
            self.generated += 1
            if init.fp in self.visited:
                continue
            if not self._check_room(1):
                raise self._full()
            number = len(self.links)
            fp = np.array([init.fp], dtype=np.uint64)
            self.visited.add(fp)
            self.links.add(np.array([ROOT]), np.array([init.binding]))
            self.depth = 1
            self.current = number
            broken = self.model.violated(init.state)
            if broken is not None:
                raise _Stop("violation", number, invariant=broken.name)
            frontier.append(init.data, np.array([0, len(init.data)], dtype=np.uint64))
        self.current = None
        self.visited.end_level()
        return frontier

    def _begin(self, level: int, frontier: Frontier) -> None:
        """A level starts: keep the search as it stands (and write it, when a checkpoint is
        due); the previous level's states are no longer needed."""
        previous = self.start
        self.start = _LevelStart(
            level,
            frontier,
            self.visited.finished,
            len(self.links),
            self.generated,
            self.depth,
            self.fired.copy(),
            self.new.copy(),
        )
        if previous is not None and previous.frontier is not frontier:
            previous.frontier.close()
        if self.checkpoints is not None and self.checkpoints.due():
            self.save()

    def save(self) -> None:
        """Write the search as it stood at the start of the current level (its frontier is
        kept until the level ends), if checkpoints are on."""
        start = self.start
        if self.checkpoints is None or start is None:
            return
        counts = {
            "level": start.level,
            "states": start.states,
            "generated": start.generated,
            "depth": start.depth,
            "fired": start.fired.tolist(),
            "new": start.new.tolist(),
        }
        sizes = np.concatenate(
            [np.zeros(0, np.uint64), *(np.diff(c.offsets) for c in start.frontier.chunks(4096))]
        )
        arrays = {
            "fingerprints": Array.of(start.fingerprints, "uint64"),
            "parents": Array.of(self.links.parent, "int32", start.states),
            "positions": Array.of(self.links.position, "uint32", start.states),
            "frontier.sizes": Array.of(sizes, "uint64"),
            "frontier.data": Array("uint8", int(sizes.sum()), _pieces(start.frontier)),
        }
        self.checkpoints.write(counts, arrays)

    def _restore(self, saved: Saved) -> tuple[Frontier, int]:
        """The search as a checkpoint holds it, every part checked against the others; the
        frontier and the level it is at."""
        level = saved.number("level", 1)
        states = saved.number("states", 1)
        fps = saved.array("fingerprints", "uint64")
        parents = saved.array("parents", "int32")
        positions = saved.array("positions", "uint32")
        sizes = saved.array("frontier.sizes", "uint64")
        data = saved.array("frontier.data", "uint8")
        if not len(fps) == len(parents) == len(positions) == states:
            raise saved.corrupt("the numbers of states, fingerprints and links differ")
        if np.any(fps[1:] <= fps[:-1]):
            raise saved.corrupt("the fingerprints are not sorted")
        if np.any((parents < ROOT) | (parents >= np.arange(states))):
            raise saved.corrupt("a parent link does not point to an earlier state")
        if len(sizes) > states or int(sizes.sum()) != len(data):
            raise saved.corrupt("the level's states do not match their sizes")
        actions = len(self.model.actions)
        self.generated = saved.number("generated")
        self.depth = saved.number("depth")
        self.fired[:] = saved.numbers("fired", actions)
        self.new[:] = saved.numbers("new", actions)
        self.queue = len(sizes)
        self.visited = Visited.of(fps)
        self.links = Links.of(parents, positions)
        offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes, dtype=np.uint64)])
        blob = data.tobytes()
        _check_states(saved, self.visited, blob, offsets)
        frontier = Frontier(self.options.spill_bytes)
        frontier.append(blob, offsets)
        return frontier, level

    def _full(self) -> _Stop:
        return _Stop("incomplete", bound=f"--max-states {self.options.max_states} reached")

    def _check_room(self, wanted: int) -> int:
        """How many of `wanted` new states the --max-states bound lets in."""
        limit = self.options.max_states
        if limit is None:
            return wanted
        return max(0, min(wanted, limit - len(self.links)))

    def _replies(self, frontier: Frontier) -> Iterator[tuple[Worker, Chunk, Reply]]:
        """Each chunk of `frontier` in order with its expansion; every worker keeps one chunk
        in flight, and gets its next one when the caller is done with the reply."""
        per_chunk = min(1024, max(16, len(frontier) // (4 * len(self.workers))))
        chunks = frontier.chunks(per_chunk)
        inflight: deque[tuple[Worker, Chunk]] = deque()
        for worker in self.workers:
            chunk = next(chunks, None)
            if chunk is None:
                break
            worker.send(request_expand(chunk))
            inflight.append((worker, chunk))
        while inflight:
            worker, chunk = inflight.popleft()
            yield worker, chunk, worker.receive()
            chunk = next(chunks, None)
            if chunk is not None:
                worker.send(request_expand(chunk))
                inflight.append((worker, chunk))

    def _expand_level(self, frontier: Frontier, level: int) -> Frontier:
        size = len(frontier)
        base = len(self.links) - size  # the number of the level's first state
        found = _Level(Frontier(self.options.spill_bytes), level + 1)
        for worker, chunk, reply in self._replies(frontier):
            self._take(worker, chunk, _Expansion(reply, self.options.deadlock), base, size, found)
            done = chunk.first + len(chunk)
            self.queue = size - done + found.states
            if self.progress is not None and self.progress.due():
                snapshot = Snapshot(level, len(self.links), self.generated, self.queue, done, size)
                self.progress.report(snapshot)
        self.visited.end_level()
        self.queue = found.states
        return found.frontier  # `frontier` is closed when the next level starts

    def _take(
        self, worker: Worker, chunk: Chunk, exp: _Expansion, base: int, size: int, found: _Level
    ) -> None:
        """Admit the new successors of one chunk, stopping where a one-state-at-a-time search
        would stop: at a violation, at --max-states, at a deadlock or an action that raised."""
        used = exp.fps[: exp.limit]
        unique, first = np.unique(used, return_index=True)
        fresh = np.sort(first[~self.visited.known(unique)])
        room = self._check_room(len(fresh))
        over = int(fresh[room]) if room < len(fresh) else None  # the state --max-states refuses
        fresh = fresh[:room]
        found_before = found.states
        kept = fresh
        admitted: Reply = {"violation": None, "error": None}
        if len(fresh):
            worker.send(request_admit(fresh))
            admitted = worker.receive()
            blob, offsets = admitted["blob"], np.frombuffer(admitted["offsets"], np.uint64)
            kept = fresh[: len(offsets) - 1]
            parents = exp.parent_of[kept]
            self.visited.add(used[kept])
            self.links.add(base + chunk.first + parents, kept - exp.starts[parents])
            self.new += np.bincount(exp.actions[kept], minlength=len(self.new))
            found.add(blob, offsets)
            self.depth = found.depth

        def stop_at(successor: int) -> None:
            """Counts as a one-state-at-a-time search has them when it stops at `successor`:
            all successors of its parent generated, those up to it fired."""
            parent = int(exp.parent_of[successor])
            self._count(exp, int(exp.ends[parent]), successor + 1)
            earlier = int(np.count_nonzero(exp.parent_of[kept] < parent))
            self.queue = size - (chunk.first + parent) + found_before + earlier

        if admitted["violation"] is not None or admitted["error"] is not None:
            stop_at(int(kept[-1]))
            self.current = len(self.links) - 1
            if admitted["violation"] is not None:
                raise _Stop("violation", self.current, invariant=admitted["invariant"])
            self.model.violated(decode(blob[int(offsets[-2]) :]))
            raise RuntimeError("an invariant raised in a worker but not when re-evaluated")
        if over is not None:
            stop_at(over)
            raise self._full()
        self._count(exp, exp.limit, exp.limit)
        if exp.stop is not None:
            self.queue = size - (chunk.first + exp.stop) + found.states
            self._raise_at_parent(exp, chunk, base)

    def _count(self, exp: _Expansion, generated: int, fired: int) -> None:
        self.generated += generated
        self.fired += np.bincount(exp.actions[:fired], minlength=len(self.fired))

    def _raise_at_parent(self, exp: _Expansion, chunk: Chunk, base: int) -> None:
        """Stop at the chunk's state `exp.stop`: a deadlock, or an action that raised (raised
        again here, so the error carries the state and parameters)."""
        assert exp.stop is not None
        number = base + chunk.first + exp.stop
        if exp.deadlocked:
            raise _Stop("deadlock", number)
        self.current = number
        self.model.expand(chunk.state(exp.stop))
        raise RuntimeError("an action raised in a worker but not when re-evaluated")

    def _stop_at_depth_bound(self, frontier: Frontier) -> None:
        """At the depth bound the search is complete only if no state there has a new
        successor; their successors are counted as a full search would count them."""
        size = len(frontier)
        base = len(self.links) - size
        self.queue = size
        cut = False
        for _, chunk, reply in self._replies(frontier):
            exp = _Expansion(reply, self.options.deadlock)
            self._count(exp, exp.limit, exp.limit)
            cut = cut or not self.visited.known(exp.fps[: exp.limit]).all()
            if exp.stop is not None:
                self._raise_at_parent(exp, chunk, base)
        self.queue = size if cut else 0
        if cut:
            raise _Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")


def _pieces(frontier: Frontier) -> Iterator[bytes]:
    """The level's encoded states back to back, in pieces of at most PIECE bytes."""
    for chunk in frontier.chunks(4096):
        for i in range(0, len(chunk.blob), PIECE):
            yield chunk.blob[i : i + PIECE]


def _check_states(saved: Saved, visited: Visited, blob: bytes, offsets: np.ndarray) -> None:
    """Each state of a checkpoint's level decodes and is among its fingerprints."""
    bounds = offsets.tolist()
    fps = np.empty(len(bounds) - 1, dtype=np.uint64)
    for i in range(len(fps)):
        data = blob[bounds[i] : bounds[i + 1]]
        try:
            decode(data)
        except Exception as exc:
            raise saved.corrupt(f"state {i} of the level does not decode: {exc}") from None
        fps[i] = fingerprint(data)
    if not visited.known(fps).all():
        raise saved.corrupt("a state of the level is not among the fingerprints")


class _Expansion:
    """An expander's reply for one chunk, cut at the first state where a one-state-at-a-time
    search would stop (a deadlock when --deadlock is on, or an action that raised)."""

    def __init__(self, reply: Reply, deadlock: bool) -> None:
        self.fps = np.frombuffer(reply["fps"], dtype=np.uint64)
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


class _Level:
    """The states found so far at the next level."""

    def __init__(self, frontier: Frontier, depth: int) -> None:
        self.frontier = frontier
        self.depth = depth
        self.states = 0

    def add(self, blob: bytes, offsets: np.ndarray) -> None:
        self.frontier.append(blob, offsets)
        self.states += len(offsets) - 1
