"""The local engine: the breadth-first search of checker.search on one machine.

A level is cut into parts, expanded by expanders (this process, or `workers` forked processes:
checker.local.workers), each part by the expander that holds its states live when it can
(which one, and within what memory: checker.local.expanders, a part the search holds). An
expander returns its candidates (the successors it had not met) with their fingerprints,
invariant verdicts and, when asked, encodings (not asked, the new ones stay with it alone);
for each part, in order, this process admits those that are new
(checker.search.admission, against a numpy set of fingerprints: checker.local.visited), which
become the next level (checker.local.frontier), and tells the expander which to keep. So
the verdict, counts and trace are those of a one-state-at-a-time search, whatever the parts
and the workers. States are numbered in the order they are admitted; a state's link is its
parent's number and its position in the parent's successors. docs/performance.md says why each
piece is there.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import numpy as np

from checker.checkpoint import PIECE, Array, Checkpoints, Saved
from checker.errors import NondeterminismError, SpecError
from checker.local.expanders import Expanders, Sent
from checker.local.frontier import Part, SpilledFrontier
from checker.local.visited import ROOT, FingerprintArray, Links
from checker.local.workers import Worker, start
from checker.model import Model, Successor
from checker.progress import Progress, Snapshot
from checker.result import CheckResult, Step
from checker.search import outcome
from checker.search.admission import Cut, Decision
from checker.search.expansion import (
    Admit,
    Expanded,
    Expansion,
    Initials,
)
from checker.search.levels import LevelSearch, LevelStart
from checker.search.observers import Observer
from checker.search.options import Options
from checker.trace import chain_from_positions, replay
from checker.values.encoding import decode, fingerprint, forget_encodings


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
        # those the caches by identity hold (a state's parts, its tuples' hashes), and those a
        # refinement remembers.
        del search
        forget_encodings()
        if model.steps is not None:
            model.steps.forget()
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
        encodings = observer is not None or checkpoints is not None
        self.expanders = Expanders(options.live_bytes, encodings, self._engine_bytes)
        self._frontiers: tuple[SpilledFrontier, ...] = ()  # the levels' encodings in this process

    def _engine_bytes(self) -> int:
        """The memory the engine's own arrays and encoded levels take in this process."""
        used = self.visited.nbytes + self.links.nbytes
        return used + sum(f.memory_bytes for f in self._frontiers)

    def close(self) -> None:
        self.expanders.close()
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
        options = self.options
        if self.model.every() is None:  # (an `every`'s are built by parts: Initial)
            self.model.initial_states()  # before workers fork: every process has them
        workers = start(self.model, options.workers, recording, options.incremental)
        self.expanders.start(list(workers))
        super().explore()

    # -- the initial level -----------------------------------------------------------------

    def initial_level(self) -> SpilledFrontier:
        """Level 1, admitted in parts as a level's successors are: the expanders encode,
        fingerprint and check the initial states (in parallel with workers) and keep those
        admitted live for level 1. TLC's constraints, step checks, reachability properties
        and observers take the initial states one at a time (LevelSearch.initial_level)."""
        model = self.model
        if model.exclusions or model.steps is not None or model.reachables or self.observer:
            return super().initial_level()
        every = model.every()
        if every is None:
            replies = self.expanders.initial_replies(len(model.initial_part()))
            firsts = [item.part.first for _, item, _ in replies]
        else:  # parts of its candidates: each initial state's index is known once all are in
            replies = self.expanders.initial_replies(every.count, candidates=True)
            firsts = _initial_numbers(model, self.expanders, [r for _, _, r in replies])
        for first, (_, _, reply) in zip(firsts, replies):  # spec code raised on one: none in
            if reply.error is not None:
                model.initial_one(first + reply.error)  # raises it again
                raise NondeterminismError(
                    "the spec is not deterministic: encoding or fingerprinting an initial"
                    " state raised in an expander, and not when done again"
                )
        found = _Level(self.new_frontier(), 1)
        try:
            for first, (worker, item, reply) in zip(firsts, replies):
                self._take_initial(worker, item, first, Expansion(reply, False), found)
        except BaseException:
            found.frontier.close()
            raise
        return self.initial_done(found.frontier)

    def _take_initial(
        self, worker: Worker, item: Sent, first: int, exp: Expansion, found: _Level
    ) -> None:
        """Admit the new initial states of one part (its first is initial state `first`), as
        `_take` admits successors; the counts are those of one initial state at a time (each
        initial state up to a stop is generated)."""
        decision = self.decide(exp, self.visited)
        kept = decision.kept
        keep = False
        if len(kept):
            self.links.add(np.full(len(kept), ROOT), first + exp.positions[kept])
            used = self.expanders.used(worker)
            keep = self._found(worker, item, exp, decision, found, used)
        worker.send(Admit(item.chunk, kept.astype(np.uint32).tobytes(), keep))
        if decision.bad:
            self.generated += int(exp.positions[kept[-1]]) + 1
            self.current = len(self.links) - 1
            self.bad(self.current, exp, decision)
        if decision.over is not None:
            self.generated += decision.over + 1
            raise self.full()
        self.generated += exp.limit

    def new_frontier(self) -> SpilledFrontier:
        return SpilledFrontier(self.options.spill_bytes)

    def initial_known(self, fp: int) -> bool:
        return fp in self.visited

    def add_initial(self, init: Successor, frontier: SpilledFrontier) -> int:
        self.visited.add(np.array([init.fp], dtype=np.uint64))
        self.links.add(np.array([ROOT]), np.array([init.binding]))
        frontier.append(init.data, np.array([0, len(init.data)], dtype=np.uint64))
        return len(self.links) - 1  # (its number)

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
            for worker, item, reply in self.expanders.replies(frontier, level):
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
        item: Sent,
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
        expanders = self.expanders  # (decide asked the visited set: `older`)
        used = expanders.answered(worker, len(decision.used), self.visited.older, exp.encoded_bytes)
        before = found.states
        first = len(self.links)  # the number of the first state admitted now
        self.note_reached(exp, kept, lambda j: first + j, found.depth)
        keep = False
        if len(kept):
            positions = exp.positions[kept]
            parents = exp.parent_of[positions]
            self.links.add(base + part.first + parents, positions - exp.starts[parents])
            self.new += np.bincount(exp.actions[positions], minlength=len(self.new))
            keep = self._found(worker, item, exp, decision, found, used)
        indices = kept.astype(np.uint32).tobytes()
        worker.post(Admit(item.chunk, indices, keep))  # (sent before the engine waits again)
        if len(kept) and self.observer is None:  # (a recorded search's expanders drop none)
            expanders.share(worker, decision.used[kept])
        cut = self.cut(exp, decision, part.first, size, before, found.states)
        if cut is Cut.BAD:
            self.current = len(self.links) - 1
            self.bad(self.current, exp, decision)
        elif cut is Cut.FULL:
            raise self.full()
        elif cut is Cut.PARENT:
            self._settle_parent(exp, part, base)

    def _found(
        self,
        worker: Worker,
        item: Sent,
        exp: Expansion,
        decision: Decision,
        found: _Level,
        used: int | None,
    ) -> bool:
        """Add the candidates admitted (linked already) to the visited set and the next
        level, with their encodings or held by `worker` only; whether it keeps them live."""
        kept, expanders = decision.kept, self.expanders
        first = len(self.links) - len(kept)
        self.visited.add(decision.used[kept])
        self.distinct += len(kept)
        self.depth = found.depth
        number = worker.number
        held = expanders.held[number]
        if item.encodings:
            blob, offsets = exp.encodings(kept)
            keep = expanders.keep(worker, len(blob), used)
            found.add(blob, offsets, number if keep else None, held)
            if self.observer is not None:
                self.observer.admitted(first, exp, kept, blob, offsets)
        else:  # only the expander has them: it keeps them, within its share or not
            expanders.keep(worker, exp.encoded_size(kept), used, must=True)
            keep = True
            found.hold(len(kept), number, held)
            expanders.only[number] += len(kept)
        if keep:
            expanders.held[number] += len(kept)
        return keep

    def _start_level(self, level: int) -> None:
        """The expanders start `level`, with the reachability properties still wanted."""
        self.level_wanted = self.wanted()
        self.expanders.start_level(level, self.level_wanted)

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
        for _, item, reply in self.expanders.replies(frontier, level):
            exp = Expansion(reply, self.options.deadlock)
            self.count(exp, exp.limit, exp.limit)
            cut = cut or not self.visited.known(exp.fps[: exp.candidates]).all()
            if exp.stop is not None:
                self._settle_parent(exp, item.part, base)
        self.queue = size if cut else 0
        if cut:
            raise self.depth_bound()

    # -- parts and expanders -------------------------------------------------------------------

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


def _initial_numbers(model: Model, expanders: Expanders, replies: list[Expanded]) -> list[int]:
    """The parts of the candidates of the spec's `every` answered: the initial states'
    numbers given to the model and to every expander (Initials), and the index of each
    part's first initial state; or the init's error (its `where` raised on one)."""
    for reply in replies:
        if reply.init_raised is not None:
            model.initial_number(reply.init_raised)  # raises it again
            raise NondeterminismError(
                "the spec is not deterministic: its init's `where` raised on a candidate"
                " in an expander, and not when evaluated again"
            )
    numbers = b"".join(reply.numbers for reply in replies)
    if not numbers:
        raise SpecError(f"{model.name}.init() returned no initial state")
    model.learn_initial(numbers)
    for worker in expanders.workers:
        worker.send(Initials(numbers))
    sizes = [len(reply.numbers) // 8 for reply in replies]
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
