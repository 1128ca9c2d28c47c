"""The local engine's expanders, a part its search holds (checker.local.bfs): which expander
expands each part of a level, in order (`replies`), and the live-state budget (--memory, a
share per expander) they keep within: whether an expander keeps the states it found live for
the next level (`keep`), when it forgets the states it met (`bound_memory`, `start_level`),
and whether the engine asks for its candidates' encodings. docs/performance.md says why each
piece is there."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait

import numpy as np

from checker.local.frontier import Part, SpilledFrontier
from checker.local.workers import Worker
from checker.search.expansion import (
    BACK_EDGES,
    LIVE_FACTOR,
    Expand,
    Expanded,
    Forget,
    Initial,
    Known,
    StartLevel,
)

IN_FLIGHT = 3  # parts sent to one expander and not yet answered
WINDOW = 32  # parts handed out past the one awaited, per expander ...
AHEAD_BYTES = 64 << 20  # ... while the replies that wait for it hold fewer encoded bytes
INITIAL_PART = 1 << 16  # initial states per part at most


class Expanders:
    def __init__(self, live_bytes: int, encodings: bool, engine_bytes: Callable[[], int]) -> None:
        """`live_bytes`: the live-state budget; `encodings`: a report needs every candidate's
        encodings (a recorded behaviour, a checkpoint); `engine_bytes`: the memory the
        engine's own arrays and encoded levels take in this process."""
        self.live_bytes = live_bytes
        self.encodings = encodings
        self.engine_bytes = engine_bytes
        self.workers: list[Worker] = []
        self.chunks = 0  # parts sent to expanders so far
        # Estimated bytes of live states each expander holds for this level and the next,
        # and how many states it holds for the next (`only`: without their encodings here).
        self._live_now: dict[int, int] = {}
        self._live_next: dict[int, int] = {}
        self.held: dict[int, int] = {}
        self.only: dict[int, int] = {}
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
        self._loops = False  # whether successors were found at earlier levels
        self.shared = 0  # fingerprints told to other expanders (Known), each time told
        self._answered_used: dict[int, int | None] = {}  # `used` at each one's last answer

    def start(self, workers: list[Worker]) -> None:
        self.workers = workers
        self._live_next = {w.number: 0 for w in workers}
        self._sent = {w.number: 0 for w in workers}
        self._back = {w.number: 0 for w in workers}
        self._met = {w.number: 0 for w in workers}
        self._base = {w.number: w.resident() for w in workers}

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        # An in-process worker holds its expander's live states, and the engine holds this
        # (which holds the engine's `engine_bytes`): a cycle, which only a run of the cyclic
        # collector would free, walking every state (seconds, after the search or on Ctrl-C).
        self.workers = []

    def answered(self, worker: Worker, candidates: int, back: int, met: int) -> int | None:
        """`worker` answered a part with `candidates` candidates, `back` of them found at an
        earlier level (its memory of the states it met did not reach back far enough: see
        start_level), and met states of `met` encoded bytes: keep its memory within its
        share. Its measured memory (`used`), read once: both decisions of the part take it."""
        number = worker.number
        self._back[number] += back
        self._sent[number] += candidates
        self._met[number] += met
        used = self.used(worker)
        self._answered_used[number] = used
        self.bound_memory(worker, used)
        return used

    def replies(
        self, frontier: SpilledFrontier, level: int
    ) -> Iterator[tuple[Worker, Sent, Expanded]]:
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
        sent: dict[int, deque[Sent]] = {w.number: deque() for w in self.workers}
        arrived: dict[int, tuple[Worker, Sent, Expanded]] = {}
        waiting: list[int] = []  # parts not handed out yet, up to the window's end
        ahead = done = waiting_bytes = 0
        unsent = {w.number: 0 for w in self.workers}  # parts posted, not flushed yet

        def flush(everyone: bool) -> None:
            """Send what was posted (Worker.post): to every expander before the engine
            waits, else only to those with no part in hand (they would wait idle). So an
            expander gets a part, the Admit of the one before and the fingerprints the
            others found (Known) in one message, and one wake-up, most often."""
            for worker in self.workers:
                number = worker.number
                if everyone or busy[number] == unsent[number]:
                    worker.flush()
                    unsent[number] = 0

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
                self.chunks += 1
                behind = index < last[worker.number]
                item = Sent(index, self.chunks, part, self._wants_encodings(worker), behind)
                request = self._request(item, level, frontier, live)
                worker.post(request)
                unsent[worker.number] += 1
                waiting.remove(index)
                sent[worker.number].append(item)
                busy[worker.number] += 1
                last[worker.number] = max(index, last[worker.number])
                if request.blob is not None:  # the expander remembers the part's states
                    self._met[worker.number] += len(request.blob)
                    self.bound_memory(worker, self.used(worker))

        while done < len(parts):
            send()
            flush(False)
            while done not in arrived:
                flush(True)
                for worker in self._answering([w for w in self.workers if busy[w.number]]):
                    reply = worker.receive()
                    item = sent[worker.number].popleft()
                    busy[worker.number] -= 1
                    arrived[item.index] = (worker, item, reply)
                    waiting_bytes += len(reply.blob)
                # An expander that answered ahead of the part awaited takes the next one
                # now, rather than wait idle until that part arrives.
                send()
                flush(False)
            answer = arrived.pop(done)
            waiting_bytes -= len(answer[2].blob)
            yield answer
            done += 1
        flush(True)  # (what the engine posted for the last parts)

    def initial_replies(
        self, count: int, candidates: bool = False
    ) -> list[tuple[Worker, Sent, Expanded]]:
        """The `count` initial states (checker.search.expansion.Initial; `candidates`: the
        `count` candidates of the spec's `every`) cut into parts, in order, each sent to the
        expanders in turn, and every reply: the engine admits none before it has them all
        (spec code raising on one, its view or symmetry, stops the search before any initial
        state is admitted, as one state at a time would)."""
        workers = self.workers
        self.held = {w.number: 0 for w in workers}  # (states each holds for level 1)
        self.only = {w.number: 0 for w in workers}
        cuts = 8 * len(workers) if len(workers) > 1 else 1
        per_part = min(INITIAL_PART, max(16, -(-count // cuts)))
        sent: list[tuple[Worker, Sent]] = []
        for index, first in enumerate(range(0, count, per_part)):
            worker = workers[index % len(workers)]
            self.chunks += 1
            size = min(per_part, count - first)
            encodings = self._wants_encodings(worker)
            item = Sent(index, self.chunks, Part(first, size, None, 0), encodings, False)
            worker.send(Initial(item.chunk, first, size, encodings, candidates))
            sent.append((worker, item))
        return [(worker, item, worker.receive()) for worker, item in sent]

    def share(self, worker: Worker, fps: np.ndarray) -> None:
        """Tell the worker processes but `worker` the fingerprints of the states just
        admitted from its part (Known): they drop their candidates among them unchecked."""
        others = [w for w in self.workers if w is not worker and w.fileno() is not None]
        if others:
            request = Known(fps.tobytes())
            for other in others:
                other.post(request)
            self.shared += len(fps)

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
        if self.encodings:
            return True
        # (its memory as measured when it last answered, a few parts ago at most: reading
        # it again for each part handed out cost as much as the rest of the choice)
        used = self._answered_used.get(worker.number, 0)
        if not self._room(worker, self.used(worker) if used == 0 else used):
            return True
        return self.only[worker.number] * len(self.held) > sum(self.held.values())

    def bound_memory(self, worker: Worker, used: int | None) -> None:
        """Keep the states an expander remembers meeting within its share of the budget,
        inside a level too: a large level's states alone can outgrow it. Forgetting costs
        only duplicate candidates, which the visited set drops. Measured memory over the
        share makes it forget once a level (again only if it met much since: the memory a
        set frees is reused, not returned), the estimate when the states met alone are.
        `used`: `used(worker)`."""
        number = worker.number
        share = self.live_bytes // len(self.workers)
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

    def used(self, worker: Worker) -> int | None:
        """The memory `worker` takes for the states it holds and met, measured: its resident
        memory beyond what it had when the search started (for the expander in this process,
        less the engine's own arrays and encoded levels). None where the system does not
        tell; the estimates (LIVE_FACTOR x the encoded bytes) then decide."""
        base = self._base.get(worker.number)
        if base is None or (rss := worker.resident()) is None:
            return None
        used = rss - base
        if worker.fileno() is None:  # this process: the engine's memory is in it too
            used -= self.engine_bytes()
        return max(used, 0)

    def _request(self, item: Sent, level: int, frontier: SpilledFrontier, live: bool) -> Expand:
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

    def start_level(self, level: int, wanted: list[int]) -> None:
        """Tell the expanders that `level` starts (they drop what they kept of earlier ones),
        and move the live-state budget on: what was found for this level is now expanded.

        An expander drops the successors equal to a state it met; by default it remembers
        the states of the level it expands and the successors it finds there. When many of
        its candidates were states of earlier levels (the spec goes back to states it saw
        before: a broker restarts, a request is lost), from then on it remembers across
        levels, while that memory fits its share of the budget."""
        share = self.live_bytes // len(self.workers)
        for worker in self.workers:
            number = worker.number
            sent = self._sent[number]
            if sent and self._back[number] >= BACK_EDGES * sent:
                self._loops = True
            used = self.used(worker)
            full = LIVE_FACTOR * self._met[number] > share if used is None else used > share
            forget = bool(sent and not self._loops) or full
            self._forgot[number] = False
            worker.send(StartLevel(level, forget, wanted))
            if forget:  # it remembers the level's states it holds
                self._met[number] = self._live_next[number] // LIVE_FACTOR
        self._live_now = self._live_next
        self._live_next = {w.number: 0 for w in self.workers}
        self.held = {w.number: 0 for w in self.workers}
        self.only = {w.number: 0 for w in self.workers}  # held, without their encodings here
        self._back = {w.number: 0 for w in self.workers}
        self._sent = {w.number: 0 for w in self.workers}

    def keep(self, worker: Worker, encoded: int, used: int | None, must: bool = False) -> bool:
        """Whether `worker` keeps states of `encoded` bytes live for the next level, within
        its share of the live-state budget: its measured memory `used` (`used`: the states
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
        share = self.live_bytes // len(self.workers)
        if used is None:
            used = self._live_now.get(worker.number, 0) + self._live_next[worker.number] + estimate
        return used < share  # (a budget of 0 keeps none)


@dataclass(frozen=True)
class Sent:
    """A part of the level sent to an expander: its index in the level's plan, the
    expander's chunk number (unique in the search), the part itself, whether the reply
    carries the candidates' encodings, and whether the expander was sent a later part before
    (see Expand)."""

    index: int
    chunk: int
    part: Part
    encodings: bool
    behind: bool
