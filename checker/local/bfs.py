"""The local engine: the breadth-first search of checker.search on one machine.

A level is cut into parts, expanded by expanders (this process, or `workers` forked processes:
checker.local.workers), each part by the expander that holds its states live when it can. An
expander returns its candidates (the successors it had not met) with their fingerprints,
invariant verdicts and, when asked, encodings (not asked, the new ones stay with it alone:
`_wants_encodings`); for each part, in order, this process admits those that are new
(checker.search.admission, against a numpy set of fingerprints: checker.local.visited), which
become the next level (checker.local.frontier), and tells the expander which to keep. So
the verdict, counts and trace are those of a one-state-at-a-time search, whatever the parts
and the workers. States are numbered in the order they are admitted; a state's link is its
parent's number and its position in the parent's successors. docs/performance.md says why each
piece is there.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait

import numpy as np

from checker.checkpoint import PIECE, Array, Checkpoints, Saved
from checker.local.frontier import Part, SpilledFrontier
from checker.local.visited import ROOT, FingerprintArray, Links
from checker.local.workers import Worker, start
from checker.model import Model, Successor
from checker.progress import Progress, Snapshot
from checker.result import CheckResult, Step
from checker.search import outcome
from checker.search.admission import Cut
from checker.search.expansion import (
    BACK_EDGES,
    LIVE_FACTOR,
    Admit,
    Expand,
    Expanded,
    Expansion,
    Forget,
    StartLevel,
)
from checker.search.levels import LevelSearch, LevelStart
from checker.search.observers import Observer
from checker.search.options import Options
from checker.trace import chain_from_positions, replay
from checker.values.encoding import decode, fingerprint, forget_encodings

IN_FLIGHT = 3  # parts sent to one expander and not yet answered
WINDOW = 32  # parts handed out past the one awaited, per expander ...
AHEAD_BYTES = 64 << 20  # ... while the replies that wait for it hold fewer encoded bytes


def check(
    model: Model,
    options: Options | None = None,
    progress: Progress | None = None,
    checkpoints: Checkpoints | None = None,
    observer: Observer | None = None,
) -> CheckResult:
    """Explore every reachable state of `model`; return the verdict, counts and any trace.
    With `checkpoints`, write them (and resume from `checkpoints.resumed`); `observer` watches
    the search (checker.search.observers)."""
    search = _Search(model, options or Options(), progress, checkpoints, observer)
    collecting = gc.isenabled()
    gc.disable()  # states are acyclic: the cyclic collector would only walk them, again and again
    try:
        return outcome.run(search)
    finally:
        # Freed by reference counting now: with the collector back on first, its next run
        # would walk every state the search holds (they were all made while it was off), and
        # those the caches by identity hold (a state's parts, its tuples' hashes).
        del search
        forget_encodings()
        if collecting:
            gc.enable()


class _Search(LevelSearch[SpilledFrontier]):
    def __init__(
        self,
        model: Model,
        options: Options,
        progress: Progress | None,
        checkpoints: Checkpoints | None = None,
        observer: Observer | None = None,
    ) -> None:
        super().__init__(model, options, progress, checkpoints, observer)
        self.visited = FingerprintArray()
        self.links = Links()  # state number -> (parent number, position in its expand list)
        self.fingerprints = self.visited.finished  # those of the states before the level
        self.workers: list[Worker] = []
        self._chunks = 0  # parts sent to expanders so far
        # Estimated bytes of live states each expander holds for this level and the next,
        # and how many states it holds for the next.
        self._live_now: dict[int, int] = {}
        self._live_next: dict[int, int] = {}
        self._held: dict[int, int] = {}
        self._only: dict[int, int] = {}
        # Per expander, at the level being expanded: candidates sent, those found at an
        # earlier level; and the encoded bytes of the states it remembers having met.
        self._sent: dict[int, int] = {}
        self._back: dict[int, int] = {}
        self._met: dict[int, int] = {}
        # Per expander, its resident memory when the search started (None where the system
        # does not tell: the estimates above decide alone), and whether it forgot the states
        # it met in this level because its memory was over its share.
        self._base: dict[int, int | None] = {}
        self._forgot: dict[int, bool] = {}
        self._frontiers: tuple[SpilledFrontier, ...] = ()  # the levels' encodings in this process
        self._loops = False  # whether successors were found at earlier levels

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        super().close()

    def trace_to(self, where: int) -> list[Step]:
        positions = self.links.chain(where)
        chain = chain_from_positions(self.model, positions, self.visited.__contains__)
        return replay(self.model, chain)

    def finish(self, result: CheckResult) -> None:
        result.visited_bytes = self.visited.nbytes
        result.link_bytes = self.links.nbytes
        result.closest_fingerprints = self.visited.closest()

    def explore(self) -> None:
        recording = self.observer.recording if self.observer is not None else None
        self.workers = list(
            start(self.model, self.options.workers, recording, self.options.incremental)
        )
        self._live_next = {w.number: 0 for w in self.workers}
        self._sent = {w.number: 0 for w in self.workers}
        self._back = {w.number: 0 for w in self.workers}
        self._met = {w.number: 0 for w in self.workers}
        self._base = {w.number: w.resident() for w in self.workers}
        super().explore()

    # -- the initial level -----------------------------------------------------------------

    def new_frontier(self) -> SpilledFrontier:
        return SpilledFrontier(self.options.spill_bytes)

    def initial_known(self, fp: int) -> bool:
        return fp in self.visited

    def add_initial(self, init: Successor, frontier: SpilledFrontier) -> int:
        number = len(self.links)
        self.visited.add(np.array([init.fp], dtype=np.uint64))
        self.links.add(np.array([ROOT]), np.array([init.binding]))
        frontier.append(init.data, np.array([0, len(init.data)], dtype=np.uint64))
        return number

    def initial_done(self, frontier: SpilledFrontier) -> SpilledFrontier:
        self.visited.end_level()
        return frontier

    # -- levels ------------------------------------------------------------------------------

    def level_started(self, start: LevelStart[SpilledFrontier]) -> None:
        self.fingerprints = self.visited.finished  # later merges make new arrays

    def release(self, frontier: SpilledFrontier) -> None:
        frontier.close()

    def expand_level(self, frontier: SpilledFrontier, level: int) -> SpilledFrontier:
        size = len(frontier)
        base = len(self.links) - size  # the number of the level's first state
        found = _Level(SpilledFrontier(self.options.spill_bytes), level + 1)
        self._frontiers = (frontier, found.frontier)
        self._start_level(level)
        try:
            for worker, item, reply in self._replies(frontier, level):
                exp = Expansion(reply, self.options.deadlock)
                self._take(worker, item, exp, base, size, found)
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
        return found.frontier  # `frontier` is released when the next level starts

    def _take(
        self,
        worker: Worker,
        item: _Sent,
        exp: Expansion,
        base: int,
        size: int,
        found: _Level,
    ) -> None:
        """Admit the new successors of one part (checker.search.admission), keep them as the
        next level's, and tell the expander which to keep live."""
        part = item.part
        decision = self.decide(exp, self.visited)
        kept = decision.kept
        # Candidates found at an earlier level: the expander's memory of the states it met
        # did not reach back far enough (see _start_level).
        self._back[worker.number] += self.visited.older  # (decide asked the visited set)
        self._sent[worker.number] += len(decision.used)
        self._met[worker.number] += exp.encoded_bytes
        used = self._used(worker)  # (read once: both decisions of the part take it)
        self._bound_memory(worker, used)
        before = found.states
        first = len(self.links)  # the number of the first state admitted now
        self.note_reached(exp, kept, lambda j: first + j, found.depth)
        keep = False
        if len(kept):
            positions = exp.positions[kept]
            parents = exp.parent_of[positions]
            self.visited.add(decision.used[kept])
            self.links.add(base + part.first + parents, positions - exp.starts[parents])
            self.distinct += len(kept)
            self.new += np.bincount(exp.actions[positions], minlength=len(self.new))
            number = worker.number
            held = self._held[number]
            if item.encodings:
                blob, offsets = exp.encodings(kept)
                keep = self._keep(worker, len(blob), used)
                found.add(blob, offsets, number if keep else None, held)
                if self.observer is not None:
                    self.observer.admitted(first, exp, kept, blob, offsets)
            else:  # only the expander has them: it keeps them, within its share or not
                self._keep(worker, exp.encoded_size(kept), used, must=True)
                keep = True
                found.hold(len(kept), number, held)
                self._only[number] += len(kept)
            if keep:
                self._held[number] += len(kept)
            self.depth = found.depth
        indices = kept.astype(np.uint32).tobytes()
        worker.send(Admit(item.chunk, indices, keep))
        cut = self.cut(exp, decision, part.first, size, before, found.states)
        if cut is Cut.BAD:
            self.current = len(self.links) - 1
            self.bad(self.current, exp, decision)
        elif cut is Cut.FULL:
            raise self.full()
        elif cut is Cut.PARENT:
            self._settle_parent(exp, part, base)

    def _settle_parent(self, exp: Expansion, part: Part, base: int) -> None:
        """Stop at the part's state `exp.stop`: a deadlock, or an action that raised (raised
        again here, so the error carries the state and parameters)."""
        assert exp.stop is not None
        self.settle_parent(base + part.first + exp.stop, exp.stops[exp.stop])

    def expand_at_bound(self, frontier: SpilledFrontier, level: int) -> None:
        size = len(frontier)
        base = len(self.links) - size
        self.queue = size
        cut = False
        self._start_level(level)
        for _, item, reply in self._replies(frontier, level):
            exp = Expansion(reply, self.options.deadlock)
            self.count(exp, exp.limit, exp.limit)
            cut = cut or not self.visited.known(exp.fps[: exp.candidates]).all()
            if exp.stop is not None:
                self._settle_parent(exp, item.part, base)
        self.queue = size if cut else 0
        if cut:
            raise self.depth_bound()

    # -- parts and expanders -------------------------------------------------------------------

    def _replies(
        self, frontier: SpilledFrontier, level: int
    ) -> Iterator[tuple[Worker, _Sent, Expanded]]:
        """Each part of `frontier` in order with its expansion. A part goes to the expander
        that holds its states live while it has fewer than IN_FLIGHT parts in hand, else,
        encoded (if the engine has its encodings), to an idle one. Parts are handed out ahead
        of one that waits for its expander (up to WINDOW parts per expander past the one
        awaited, IN_FLIGHT while the replies that wait hold AHEAD_BYTES of encodings); a part
        that comes before one its expander was sent is `behind` (see Expand)."""
        # Eight parts a level per expander and more, to share a level out; one expander (this
        # process) has nothing to share, and a part's own cost is paid once a level.
        cuts = 8 * len(self.workers) if len(self.workers) > 1 else 1
        per_part = min(4096, max(16, len(frontier) // cuts))
        parts = frontier.plan(per_part)
        window, near = WINDOW * len(self.workers), IN_FLIGHT * len(self.workers)
        busy = {w.number: 0 for w in self.workers}
        last = {w.number: -1 for w in self.workers}  # the last part each expander was sent
        sent: dict[int, deque[_Sent]] = {w.number: deque() for w in self.workers}
        arrived: dict[int, tuple[Worker, _Sent, Expanded]] = {}
        waiting: list[int] = []  # parts not handed out yet, up to the window's end
        ahead = done = waiting_bytes = 0

        def send() -> None:  # as many parts as the expanders may take now
            nonlocal ahead
            while ahead < len(parts) and ahead < done + window:
                waiting.append(ahead)
                ahead += 1
            end = done + (near if waiting_bytes >= AHEAD_BYTES else window)
            for index in list(waiting):
                if index >= end:
                    return
                part = parts[index]
                worker, live = self._pick(part, busy)
                if worker is None:
                    continue
                self._chunks += 1
                behind = index < last[worker.number]
                item = _Sent(index, self._chunks, part, self._wants_encodings(worker), behind)
                request = self._request(item, level, frontier, live)
                worker.send(request)
                waiting.remove(index)
                sent[worker.number].append(item)
                busy[worker.number] += 1
                last[worker.number] = max(index, last[worker.number])
                if request.blob is not None:  # the expander remembers the part's states
                    self._met[worker.number] += len(request.blob)
                    self._bound_memory(worker, self._used(worker))

        while done < len(parts):
            send()
            while done not in arrived:
                for worker in self._answering([w for w in self.workers if busy[w.number]]):
                    reply = worker.receive()
                    item = sent[worker.number].popleft()
                    busy[worker.number] -= 1
                    arrived[item.index] = (worker, item, reply)
                    waiting_bytes += len(reply.blob)
                # An expander that answered ahead of the part awaited takes the next one
                # now, rather than wait idle until that part arrives.
                send()
            answer = arrived.pop(done)
            waiting_bytes -= len(answer[2].blob)
            yield answer
            done += 1

    def _pick(self, part: Part, busy: dict[int, int]) -> tuple[Worker | None, bool]:
        """Who expands `part` now, and whether from its live states; (None, _) to wait."""
        owner = part.owner
        if owner is not None and busy[owner] < IN_FLIGHT:
            return self.workers[owner], True
        if not part.encoded:  # only its owner has these states
            return None, False
        idle = min(self.workers, key=lambda w: busy[w.number])
        limit = 1 if owner is not None else IN_FLIGHT  # take another's part only if idle
        return (idle, False) if busy[idle.number] < limit else (None, False)

    def _wants_encodings(self, worker: Worker) -> bool:
        """Whether the engine asks `worker` for its candidates' encodings: without them, it
        has the new ones kept live there, and only `worker` can expand them. So it asks when
        a report needs them (a recorded behaviour, a checkpoint), when `worker` has no room
        left in its share of the live-state budget, and when the states only `worker` holds
        are more than its share of the next level found so far, so that an idle expander can
        take those beyond it."""
        if self.observer is not None or self.checkpoints is not None:
            return True
        if not self._room(worker, self._used(worker)):
            return True
        number, held = worker.number, self._held
        return self._only[number] * len(held) > sum(held.values())

    def _bound_memory(self, worker: Worker, used: int | None) -> None:
        """Keep the states an expander remembers meeting within its share of the budget,
        inside a level too: a large level's states alone can outgrow it. Forgetting costs
        only duplicate candidates, which the visited set drops. Measured memory over the
        share makes it forget once a level (again only if it met much since: the memory a
        set frees is reused, not returned), the estimate when the states met alone are.
        `used`: `_used(worker)`."""
        number = worker.number
        share = self.options.live_bytes // len(self.workers)
        if used is None:
            over = LIVE_FACTOR * self._met[number] > share
        else:
            over = used > share and (
                not self._forgot[number] or LIVE_FACTOR * self._met[number] > share // 4
            )
        if over:
            worker.send(Forget())
            self._met[number] = 0
            self._forgot[number] = True

    def _used(self, worker: Worker) -> int | None:
        """The memory `worker` takes for the states it holds and met, measured: its resident
        memory beyond what it had when the search started (for the expander in this process,
        less the engine's own arrays and encoded levels). None where the system does not
        tell; the estimates (LIVE_FACTOR x the encoded bytes) then decide."""
        base = self._base.get(worker.number)
        if base is None or (rss := worker.resident()) is None:
            return None
        used = rss - base
        if worker.fileno() is None:  # this process: the engine's memory is in it too
            used -= self.visited.nbytes + self.links.nbytes
            used -= sum(f.memory_bytes for f in self._frontiers)
        return max(used, 0)

    def _request(self, item: _Sent, level: int, frontier: SpilledFrontier, live: bool) -> Expand:
        part, asked = item.part, {"encodings": item.encodings, "behind": item.behind}
        if live:
            return Expand(item.chunk, level, part.start, part.count, **asked)
        chunk = frontier.read(part.first, part.count)
        return Expand(item.chunk, level, blob=chunk.blob, offsets=chunk.offsets.tobytes(), **asked)

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
        wanted = self.level_wanted = self.wanted()
        for worker in self.workers:
            number = worker.number
            sent = self._sent[number]
            if sent and self._back[number] >= BACK_EDGES * sent:
                self._loops = True
            used = self._used(worker)
            full = LIVE_FACTOR * self._met[number] > share if used is None else used > share
            forget = bool(sent and not self._loops) or full
            self._forgot[number] = False
            worker.send(StartLevel(level, forget, wanted))
            if forget:  # it remembers the level's states it holds
                self._met[number] = self._live_next[number] // LIVE_FACTOR
        self._live_now = self._live_next
        self._live_next = {w.number: 0 for w in self.workers}
        self._held = {w.number: 0 for w in self.workers}
        self._only = {w.number: 0 for w in self.workers}  # held, without their encodings here
        self._back = {w.number: 0 for w in self.workers}
        self._sent = {w.number: 0 for w in self.workers}

    def _keep(self, worker: Worker, encoded: int, used: int | None, must: bool = False) -> bool:
        """Whether `worker` keeps states of `encoded` bytes live for the next level, within
        its share of the live-state budget: its measured memory `used` (`_used`: the states
        are in it already, as candidates), else the estimates of both levels it holds.
        `must`: it keeps them anyway (the engine has not got their encodings, having found
        room when it handed the part out: `_wants_encodings`)."""
        estimate = LIVE_FACTOR * encoded
        room = self._room(worker, used, estimate)
        if room or must:
            self._live_next[worker.number] += estimate
        return room

    def _room(self, worker: Worker, used: int | None, estimate: int = 0) -> bool:
        """Whether `worker`'s live states are within its share of the budget: its measured
        memory `used`, else the estimates of both levels it holds and `estimate` more."""
        share = self.options.live_bytes // len(self.workers)
        if used is None:
            number = worker.number
            used = self._live_now.get(number, 0) + self._live_next[number] + estimate
        return used < share  # (a budget of 0 keeps none)

    # -- checkpoints ---------------------------------------------------------------------------

    def saved_arrays(
        self, start: LevelStart[SpilledFrontier], after_interrupt: bool
    ) -> dict[str, Array]:
        frontier = start.frontier
        sizes = np.concatenate(
            [np.zeros(0, np.uint64), *(np.diff(c.offsets) for c in frontier.chunks(4096))]
        )
        return {
            "fingerprints": Array.of(self.fingerprints, "uint64"),
            "parents": Array.of(self.links.parent, "int32", start.states),
            "positions": Array.of(self.links.position, "uint32", start.states),
            "frontier.sizes": Array.of(sizes, "uint64"),
            "frontier.data": Array("uint8", int(sizes.sum()), _pieces(frontier)),
        }

    def restore(self, saved: Saved) -> tuple[SpilledFrontier, int]:
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
        self.reached = self.restore_counts(saved, level, states, by_number=True)
        roots = parents == ROOT
        initial = len(self.model.initial_states())
        if np.any(positions[roots] >= initial) or np.any(positions[~roots] >= self.generated):
            raise saved.corrupt("a link's position is past its parent's successors")
        self.distinct = states
        self.queue = len(sizes)
        self.visited = FingerprintArray.of(fps)
        self.links = Links.of(parents, positions)
        offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes, dtype=np.uint64)])
        blob = data.tobytes()
        _check_states(saved, self.visited, blob, offsets)
        frontier = SpilledFrontier(self.options.spill_bytes)
        frontier.append(blob, offsets)
        return frontier, level


def _pieces(frontier: SpilledFrontier) -> Iterator[bytes]:
    """The level's encoded states back to back, in pieces of at most PIECE bytes."""
    for chunk in frontier.chunks(4096):
        for i in range(0, len(chunk.blob), PIECE):
            yield chunk.blob[i : i + PIECE]


def _check_states(
    saved: Saved, visited: FingerprintArray, blob: bytes, offsets: np.ndarray
) -> None:
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
    expander's chunk number (unique in the search), the part itself, whether the reply
    carries the candidates' encodings, and whether the expander was sent a later part before
    (see Expand)."""

    index: int
    chunk: int
    part: Part
    encodings: bool
    behind: bool


class _Level:
    """The states found so far at the next level."""

    def __init__(self, frontier: SpilledFrontier, depth: int) -> None:
        self.frontier = frontier
        self.depth = depth
        self.states = 0

    def add(self, blob: bytes, offsets: np.ndarray, owner: int | None, start: int) -> None:
        self.frontier.append(blob, offsets, owner, start)
        self.states += len(offsets) - 1

    def hold(self, count: int, owner: int, start: int) -> None:
        self.frontier.hold(count, owner, start)
        self.states += count
