"""The local engine: breadth-first search, level by level, on one machine.

Order is fixed (initial states as `init` lists them; successors as `Model.expand` yields
them), and a state's parent is the first state that reached it, so the counterexample is a
shortest one and is the same on every run and for any number of workers.

A level is cut into parts, expanded by expanders (this process, or `workers` forked
processes: checker.local.workers), each part by the expander that holds its states live when it
can. An expander returns its candidates (the successors it had not met) with their
fingerprints, encodings and invariant verdicts; for each part, in order, this process admits
those that are new (numpy over their fingerprints: checker.local.visited), which become the next
level (checker.local.frontier), and tells the expander which to keep. So the verdict, counts and
trace are those of a one-state-at-a-time search, whatever the parts and the workers; where
that search would have stopped mid-part (a violation, a deadlock, an error, --max-states),
the counts are cut at the same point. docs/performance.md says why each piece is there.

With checkpoints (checker.checkpoint), the search as it stands at the start of each level is
kept until the level ends: it is what a checkpoint holds, written at the first level start
after the interval, and what Ctrl-C, SIGTERM or --timeout leave behind. A resumed search starts
from it and goes on exactly as the interrupted one would have.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait

import numpy as np

from checker import engine
from checker.behaviour import Behaviour, Builder, Recording, predicate_value
from checker.checkpoint import PIECE, Array, Checkpoints, Saved
from checker.encoding import decode, fingerprint
from checker.engine import Failed, Stop
from checker.errors import EvaluationError
from checker.local.frontier import SPILL_BYTES, Frontier, Part
from checker.local.visited import ROOT, Links, Visited
from checker.local.workers import Expansion, Reply, Worker, start
from checker.model import Model
from checker.progress import Progress, Snapshot
from checker.result import CheckResult
from checker.trace import chain_from_positions, replay


def _live_bytes() -> int:
    """The expanders' default budget for live states: an eighth of the machine's memory, at
    least 1 GiB. On kip966's shipped cfg (3 KB states) 3 GiB explored 1.14x the states that
    1 GiB did in 5 minutes (docs/performance.md); TLC's default heap is a quarter of it."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 0
    return max(1 << 30, memory // 8 >> 20 << 20)


LIVE_BYTES = _live_bytes()  # all expanders together, estimated as LIVE_FACTOR x the encoded size
LIVE_FACTOR = 3  # a live state's memory per byte of its encoding (measured: docs/performance.md)
BACK_EDGES = 0.02  # remember states across levels when this share of candidates was older
IN_FLIGHT = 3  # chunks sent to one expander and not yet answered


@dataclass(frozen=True)
class Options:
    deadlock: bool = True  # report states with no enabled action (`--no-deadlock`: not)
    max_depth: int | None = None  # explore states up to this depth (initial states: 1)
    max_states: int | None = None  # stop after this many distinct states
    workers: int = 1  # expanding processes (1: this process)
    spill_bytes: int = SPILL_BYTES  # a level's states beyond this go to a temporary file
    live_bytes: int = LIVE_BYTES  # the expanders' budget for states kept as live objects
    witness: str | None = None  # a reachability property whose shortest example to report


def check(
    model: Model,
    options: Options | None = None,
    progress: Progress | None = None,
    checkpoints: Checkpoints | None = None,
) -> CheckResult:
    """Explore every reachable state of `model`; return the verdict, counts and any trace.
    With `checkpoints`, write them (and resume from `checkpoints.resumed`)."""
    return _run(_Search(model, options or Options(), progress, checkpoints))


def record(
    model: Model,
    recording: Recording,
    options: Options | None = None,
    progress: Progress | None = None,
) -> tuple[CheckResult, Behaviour | None]:
    """`check`, recording the state graph as it goes (checker.behaviour): the result, and
    the behaviour if the search explored every reachable state."""
    search = _Search(model, options or Options(), progress, recording=recording)
    result = _run(search)
    complete = result.verdict == "ok"  # (exploring past violations, they leave it ok)
    return result, search.builder.finish() if complete and search.builder else None


def _run(search: _Search) -> CheckResult:
    collecting = gc.isenabled()
    gc.disable()  # states are acyclic: the cyclic collector would only walk them, again and again
    try:
        return engine.run(search)
    finally:
        if collecting:
            gc.enable()


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
    reached: dict[str, tuple[int, int]]


class _Search:
    def __init__(
        self,
        model: Model,
        options: Options,
        progress: Progress | None,
        checkpoints: Checkpoints | None = None,
        recording: Recording | None = None,
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
        # Each reachability property reached so far: name -> (the first state number that
        # satisfies it, in the search's order, and its depth).
        self.reached: dict[str, tuple[int, int]] = {}
        self._level_wanted: list[int] = []  # those not reached when the level started
        self.workers: list[Worker] = []
        self.recording = recording
        self.builder = Builder(recording) if recording is not None else None
        self._chunks = 0  # chunks sent to expanders so far
        # Estimated bytes of live states each expander holds for this level and the next,
        # and how many states it holds for the next.
        self._live_now: dict[int, int] = {}
        self._live_next: dict[int, int] = {}
        self._held: dict[int, int] = {}
        # Per expander, at the level being expanded: candidates sent, those found at an
        # earlier level; and the encoded bytes of the states it remembers having met.
        self._sent: dict[int, int] = {}
        self._back: dict[int, int] = {}
        self._met: dict[int, int] = {}
        self._loops = False  # whether successors were found at earlier levels

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        if self.start is not None:
            self.start.frontier.close()

    def trace_to(self, state: int) -> list:
        return replay(self.model, chain_from_positions(self.model, self.links.chain(state)))

    # -- as checker.engine.run asks ----------------------------------------------------------

    @property
    def witness(self) -> str | None:
        return self.options.witness

    def reachability(self) -> dict[str, tuple[int, int]]:
        return self.reached

    def interrupted(self) -> None:
        self.save()

    @property
    def distinct(self) -> int:
        return len(self.links)

    def finish(self, result: CheckResult) -> None:
        result.visited_bytes = self.visited.nbytes
        result.link_bytes = self.links.nbytes
        result.closest_fingerprints = self.visited.closest()

    def run(self) -> None:
        try:
            self._explore()
        except EvaluationError as exc:  # spec code raised, on the state being evaluated
            raise Failed(exc, self.current) from exc

    def _explore(self) -> None:
        self.workers = list(start(self.model, self.options.workers, self.recording))
        self._live_next = {w.number: 0 for w in self.workers}
        self._sent = {w.number: 0 for w in self.workers}
        self._back = {w.number: 0 for w in self.workers}
        self._met = {w.number: 0 for w in self.workers}
        resumed = self.checkpoints.resumed if self.checkpoints is not None else None
        if resumed is not None:
            frontier, level = self._restore(resumed)
        else:
            frontier, level = self._initial(), 1  # `level`: the depth of the states in `frontier`
        max_depth = self.options.max_depth
        while len(frontier):
            self._begin(level, frontier)
            if max_depth is not None and level >= max_depth:
                self._stop_at_depth_bound(frontier, level)
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
            if self.builder is not None:
                self.builder.initial.append((number, init.binding))
                values = [predicate_value(p, init.state) for _, p in self.recording.predicates]
                self.builder.add_states(fp, np.array(values, np.uint8), [init.data])
                if broken is not None and self.recording.go_on:
                    self.builder.violations[number] = broken.name
                    broken = None
            if broken is not None:
                raise Stop("violation", number, invariant=broken.name)
            for i in self.model.reached(init.state, self._wanted()):
                self.reached[self.model.reachables[i].name] = (number, 1)
            frontier.append(init.data, np.array([0, len(init.data)], dtype=np.uint64))
        self.current = None
        self.visited.end_level()
        return frontier

    def _wanted(self) -> list[int]:
        """The reachability properties (indexes) that no state has satisfied yet."""
        reachables = self.model.reachables
        return [i for i, r in enumerate(reachables) if r.name not in self.reached]

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
            dict(self.reached),
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
            "reached": {name: list(where) for name, where in start.reached.items()},
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
        self.reached = saved.reached([r.name for r in self.model.reachables], states)
        self.queue = len(sizes)
        self.visited = Visited.of(fps)
        self.links = Links.of(parents, positions)
        offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes, dtype=np.uint64)])
        blob = data.tobytes()
        _check_states(saved, self.visited, blob, offsets)
        frontier = Frontier(self.options.spill_bytes)
        frontier.append(blob, offsets)
        return frontier, level

    def _full(self) -> Stop:
        return Stop("incomplete", bound=f"--max-states {self.options.max_states} reached")

    def _check_room(self, wanted: int) -> int:
        """How many of `wanted` new states the --max-states bound lets in."""
        limit = self.options.max_states
        if limit is None:
            return wanted
        return max(0, min(wanted, limit - len(self.links)))

    def _replies(self, frontier: Frontier, level: int) -> Iterator[tuple[Worker, _Sent, Reply]]:
        """Each part of `frontier` in order with its expansion. Parts are sent in order, each
        to the expander that holds its states live while it has fewer than IN_FLIGHT parts
        in hand, else, encoded, to an idle one; so every expander gets its parts in order."""
        per_part = min(4096, max(16, len(frontier) // (8 * len(self.workers))))
        parts = frontier.plan(per_part)
        busy = {w.number: 0 for w in self.workers}
        sent: dict[int, deque[_Sent]] = {w.number: deque() for w in self.workers}
        arrived: dict[int, tuple[Worker, _Sent, Reply]] = {}
        cursor = done = 0

        def send() -> None:  # as many parts as the expanders may take now
            nonlocal cursor
            while cursor < len(parts):
                worker, live = self._pick(parts[cursor], busy)
                if worker is None:
                    return
                self._chunks += 1
                item = _Sent(cursor, self._chunks, parts[cursor])
                request = self._request(item, level, frontier, live)
                worker.send(request)
                sent[worker.number].append(item)
                busy[worker.number] += 1
                cursor += 1
                if not live:  # the expander remembers the part's states, decoded
                    self._met[worker.number] += len(request["blob"])
                    self._bound_memory(worker)

        while done < len(parts):
            send()
            while done not in arrived:
                for worker in self._answering([w for w in self.workers if busy[w.number]]):
                    reply = worker.receive()
                    item = sent[worker.number].popleft()
                    busy[worker.number] -= 1
                    arrived[item.index] = (worker, item, reply)
                # An expander that answered ahead of the part awaited takes the next one
                # now, rather than wait idle until that part arrives.
                send()
            yield arrived.pop(done)
            done += 1

    def _pick(self, part: Part, busy: dict[int, int]) -> tuple[Worker | None, bool]:
        """Who expands `part` now, and whether from its live states; (None, _) to wait."""
        if part.owner is not None and busy[part.owner] < IN_FLIGHT:
            return self.workers[part.owner], True
        idle = min(self.workers, key=lambda w: busy[w.number])
        limit = 1 if part.owner is not None else IN_FLIGHT  # take another's part only if idle
        return (idle, False) if busy[idle.number] < limit else (None, False)

    def _bound_memory(self, worker: Worker) -> None:
        """Keep the states an expander remembers meeting within its share of the budget,
        inside a level too: a large level's states alone can outgrow it. Forgetting costs
        only duplicate candidates, which the visited set drops."""
        if LIVE_FACTOR * self._met[worker.number] > self.options.live_bytes // len(self.workers):
            worker.send({"op": "forget"})
            self._met[worker.number] = 0

    def _request(self, item: _Sent, level: int, frontier: Frontier, live: bool) -> dict:
        part = item.part
        request = {"op": "expand", "chunk": item.chunk, "level": level}
        if live:
            request.update(start=part.start, count=part.count)
        else:
            chunk = frontier.read(part.first, part.count)
            request.update(blob=chunk.blob, offsets=chunk.offsets.tobytes())
        return request

    @staticmethod
    def _answering(workers: list[Worker]) -> list[Worker]:
        """The workers among `workers` whose answer can be read now (waiting for one)."""
        local = [w for w in workers if w.fileno() is None]
        if local:
            return local
        ready = set(wait([w.conn for w in workers]))  # type: ignore[union-attr]
        return [w for w in workers if w.conn in ready]  # type: ignore[union-attr]

    def _start_level(self, level: int) -> None:
        """Tell the expanders that `level` starts (they drop what they kept of earlier ones),
        and move the live-state budget on: what was found for this level is now expanded.

        An expander drops the successors equal to a state it met; by default it remembers
        the states of the level it expands and the successors it finds there. When many of
        its candidates were states of earlier levels (the spec goes back to states it saw
        before: a broker restarts, a request is lost), from then on it remembers across
        levels, while that memory fits its share of the budget."""
        share = self.options.live_bytes // len(self.workers)
        wanted = self._level_wanted = self._wanted()
        for worker in self.workers:
            number = worker.number
            sent = self._sent[number]
            if sent and self._back[number] >= BACK_EDGES * sent:
                self._loops = True
            forget = (sent and not self._loops) or LIVE_FACTOR * self._met[number] > share
            worker.send({"op": "level", "level": level, "forget": forget, "wanted": wanted})
            if forget:  # it remembers the level's states it holds
                self._met[number] = self._live_next[number] // LIVE_FACTOR
        self._live_now = self._live_next
        self._live_next = {w.number: 0 for w in self.workers}
        self._held = {w.number: 0 for w in self.workers}
        self._back = {w.number: 0 for w in self.workers}
        self._sent = {w.number: 0 for w in self.workers}

    def _expand_level(self, frontier: Frontier, level: int) -> Frontier:
        size = len(frontier)
        base = len(self.links) - size  # the number of the level's first state
        found = _Level(Frontier(self.options.spill_bytes), level + 1)
        self._start_level(level)
        try:
            for worker, item, reply in self._replies(frontier, level):
                exp = Expansion(reply, self.options.deadlock)
                self._take(worker, item, exp, base, size, found, frontier)
                done = item.part.first + item.part.count
                self.queue = size - done + found.states
                if self.progress is not None and self.progress.due():
                    snapshot = Snapshot(
                        level, len(self.links), self.generated, self.queue, done, size
                    )
                    self.progress.report(snapshot)
        except BaseException:  # the search stops inside the level: drop what it found
            found.frontier.close()
            raise
        self.visited.end_level()
        self.queue = found.states
        return found.frontier  # `frontier` is closed when the next level starts

    def _take(
        self,
        worker: Worker,
        item: _Sent,
        exp: Expansion,
        base: int,
        size: int,
        found: _Level,
        frontier: Frontier,
    ) -> None:
        """Admit the new successors of one part, stopping where a one-state-at-a-time search
        would stop: at a violation, at --max-states, at a deadlock or an action that raised."""
        part = item.part
        used = exp.fps[: exp.candidates]
        unique, first = np.unique(used, return_index=True)
        known = self.visited.known(unique)
        fresh = np.sort(first[~known])  # candidates new to the search
        # Candidates found at an earlier level: the expander's memory of the states it met
        # did not reach back far enough (see _start_level).
        self._back[worker.number] += int(np.count_nonzero(self.visited.earlier(unique[known])))
        self._sent[worker.number] += len(used)
        self._met[worker.number] += len(exp._blob)
        self._bound_memory(worker)
        room = self._check_room(len(fresh))
        over = int(exp.positions[fresh[room]]) if room < len(fresh) else None  # refused
        fresh = fresh[:room]
        go_on = self.recording is not None and self.recording.go_on
        stops = exp.raised if go_on else exp.flagged  # a violation, or an invariant that raised
        bad = np.flatnonzero(stops[fresh])
        kept = fresh[: bad[0] + 1] if len(bad) else fresh
        found_before = found.states
        positions = exp.positions[kept]
        self._note_reached(exp, kept, len(self.links), found.depth)
        if len(kept):
            parents = exp.parent_of[positions]
            self.visited.add(used[kept])
            self.links.add(base + part.first + parents, positions - exp.starts[parents])
            self.new += np.bincount(exp.actions[positions], minlength=len(self.new))
            blob, offsets = exp.encodings(kept)
            keep = self._keep(worker, len(blob))
            start = self._held[worker.number]
            if keep:
                self._held[worker.number] += len(kept)
            found.add(blob, offsets, worker.number if keep else None, start)
            self.depth = found.depth
            if self.builder is not None:
                self._record_states(exp, used, kept, blob, offsets)
        else:
            keep = False
        indices = kept.astype(np.uint32).tobytes()
        worker.send({"op": "admit", "chunk": item.chunk, "indices": indices, "keep": keep})

        def stop_at(successor: int) -> None:
            """Counts as a one-state-at-a-time search has them when it stops at `successor`:
            all successors of its parent generated, those up to it fired."""
            parent = int(exp.parent_of[successor])
            self._count(exp, int(exp.ends[parent]), successor + 1)
            earlier = int(np.count_nonzero(exp.parent_of[positions] < parent))
            self.queue = size - (part.first + parent) + found_before + earlier

        if len(bad):
            candidate = int(kept[-1])
            stop_at(int(exp.positions[candidate]))
            self.current = len(self.links) - 1
            invariant = exp.broken.get(candidate)
            if invariant is not None:
                raise Stop("violation", self.current, invariant=invariant)
            state = decode(exp.encoding(candidate))
            self.model.violated(state)
            self.model.reached(state, self._level_wanted)
            raise RuntimeError("an invariant raised in a worker but not when re-evaluated")
        if over is not None:
            stop_at(over)
            raise self._full()
        if self.builder is not None and exp.stop is None:
            self.builder.add_steps(exp.counts, exp.targets, exp.actions[: exp.limit], exp.keys)
        self._count(exp, exp.limit, exp.limit)
        if exp.stop is not None:
            self.queue = size - (part.first + exp.stop) + found.states
            self._raise_at_parent(exp, part, base, frontier)

    def _note_reached(self, exp: Expansion, kept: np.ndarray, first: int, depth: int) -> None:
        """The reachability properties that a candidate admitted now (`kept`, to be numbered
        from `first`) satisfies first: the expander names the first candidate of its part
        for each (chunks are taken in the search's order, so the first one wins)."""
        for k, i in exp.reached:
            name = self.model.reachables[i].name
            if name in self.reached:
                continue
            j = int(np.searchsorted(kept, k))
            if j < len(kept) and int(kept[j]) == k:
                self.reached[name] = (first + j, depth)

    def _record_states(
        self, exp: Expansion, used: np.ndarray, kept: np.ndarray, blob: bytes, offsets: np.ndarray
    ) -> None:
        """The states a part admitted, for the recorded behaviour: fingerprints, predicate
        values, encodings if asked, and (exploring past violations) what they violate."""
        assert self.builder is not None and self.recording is not None
        first = len(self.links) - len(kept)
        if self.recording.go_on:
            for number, candidate in enumerate(kept.tolist(), first):
                if candidate in exp.broken:
                    self.builder.violations[number] = exp.broken[candidate]
        encodings: list[bytes] = []
        if self.recording.states:
            bounds = offsets.tolist()
            encodings = [blob[bounds[i] : bounds[i + 1]] for i in range(len(kept))]
        self.builder.add_states(used[kept], exp.values[kept], encodings)

    def _keep(self, worker: Worker, encoded: int) -> bool:
        """Whether `worker` keeps states of `encoded` bytes live for the next level, within
        its share of the live-state budget (both levels it holds count)."""
        estimate = LIVE_FACTOR * encoded
        share = self.options.live_bytes // len(self.workers)
        number = worker.number
        if self._live_now.get(number, 0) + self._live_next[number] + estimate > share:
            return False
        self._live_next[number] += estimate
        return True

    def _count(self, exp: Expansion, generated: int, fired: int) -> None:
        self.generated += generated
        self.fired += np.bincount(exp.actions[:fired], minlength=len(self.fired))

    def _raise_at_parent(self, exp: Expansion, part: Part, base: int, frontier: Frontier) -> None:
        """Stop at the part's state `exp.stop`: a deadlock, or an action that raised (raised
        again here, so the error carries the state and parameters)."""
        assert exp.stop is not None
        number = base + part.first + exp.stop
        if exp.deadlocked:
            raise Stop("deadlock", number)
        self.current = number
        self.model.expand(frontier.read(part.first + exp.stop, 1).blob)
        raise RuntimeError("an action raised in a worker but not when re-evaluated")

    def _stop_at_depth_bound(self, frontier: Frontier, level: int) -> None:
        """At the depth bound the search is complete only if no state there has a new
        successor; their successors are counted as a full search would count them."""
        size = len(frontier)
        base = len(self.links) - size
        self.queue = size
        cut = False
        self._start_level(level)
        for _, item, reply in self._replies(frontier, level):
            exp = Expansion(reply, self.options.deadlock)
            self._count(exp, exp.limit, exp.limit)
            cut = cut or not self.visited.known(exp.fps[: exp.candidates]).all()
            if exp.stop is not None:
                self._raise_at_parent(exp, item.part, base, frontier)
        self.queue = size if cut else 0
        if cut:
            raise Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")


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


@dataclass(frozen=True)
class _Sent:
    """A part of the level sent to an expander: its index in the level's plan, the
    expander's chunk number (unique in the search) and the part itself."""

    index: int
    chunk: int
    part: Part


class _Level:
    """The states found so far at the next level."""

    def __init__(self, frontier: Frontier, depth: int) -> None:
        self.frontier = frontier
        self.depth = depth
        self.states = 0

    def add(self, blob: bytes, offsets: np.ndarray, owner: int | None, start: int) -> None:
        self.frontier.append(blob, offsets, owner, start)
        self.states += len(offsets) - 1
