"""The breadth-first search every engine runs: the initial level, then level after level until
one is empty or the depth bound is reached, with the counts a one-state-at-a-time search keeps.

Order is fixed (initial states as `init` lists them; successors as `Model.expand` lists them),
and a state's parent is the first state that reached it, so a counterexample is a shortest
one, the same on every run and for every engine. An engine (checker.local, checker.spark)
subclasses LevelSearch over its `Frontier` (a level's states, as it holds them) and says how a
level is expanded and where its states live: the hooks below that raise NotImplementedError.
It admits a level's candidates against its `Visited` (checker.search.admission). A state is
referred to as the engine numbers it (`Ref`: locally, its number in order of discovery; on
Spark, its fingerprint).

With checkpoints (checker.checkpoint), the search as it stands at the start of each level is
kept until the level ends (`LevelStart`): it is what a checkpoint holds, written at the first
level start after the interval, and what Ctrl-C, SIGTERM or --timeout leave behind. A resumed
search starts from it and goes on exactly as the interrupted one would have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from checker.checkpoint import Array, Checkpoints, Count, Saved
from checker.errors import EvaluationError
from checker.model import Model, Successor
from checker.progress import Progress
from checker.result import CheckResult, Step
from checker.search.admission import Admission, Ref
from checker.search.observers import Observer
from checker.search.options import Options
from checker.search.outcome import Failed, Stop


class Frontier(Protocol):
    """The states of one level, as an engine holds them (checker.local: encoded, spilled to
    disk when large; checker.spark: rows in the driver, or a table in the cluster)."""

    def __len__(self) -> int:
        """How many states the level has."""


F = TypeVar("F", bound=Frontier)


@dataclass(frozen=True)
class LevelStart(Generic[F]):
    """The search at the start of a level: its states (`frontier`, the engine's) and counts."""

    level: int
    frontier: F
    states: int  # distinct states then
    generated: int
    depth: int
    fired: np.ndarray
    new: np.ndarray
    reached: dict[str, tuple[Ref, int]]


class LevelSearch(Admission, Generic[F]):
    """One search of one model by one engine, as checker.search.outcome.run runs it."""

    def __init__(
        self,
        model: Model,
        options: Options,
        progress: Progress | None = None,
        checkpoints: Checkpoints | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.model = model
        self.options = options
        self.progress = progress
        self.checkpoints = checkpoints
        self.observer = observer
        actions = len(model.actions)
        # Counts, as a one-state-at-a-time search keeps them.
        self.distinct = 0
        self.generated = 0
        self.depth = 0
        self.queue = 0
        self.fired = np.zeros(actions, dtype=np.int64)  # per action: successors generated
        self.new = np.zeros(actions, dtype=np.int64)  # and new distinct states found
        # Each reachability property reached so far: name -> (the first state, in the search's
        # order, that satisfies it, as the engine refers to states, and its depth).
        self.reached: dict[str, tuple[Ref, int]] = {}
        self.level_wanted: list[int] = []  # those not reached when the level started
        self.current: Ref | None = None  # the state being evaluated
        self.start: LevelStart[F] | None = None
        self.level = 0  # the level being expanded

    # -- how the engine computes the levels ----------------------------------------------------

    def new_frontier(self) -> F:
        """An empty level, to hold the initial states."""
        raise NotImplementedError

    def add_initial(self, init: Successor, frontier: F) -> Ref:
        """Admit an initial state (new to the search) into `frontier`; its reference."""
        raise NotImplementedError

    def initial_known(self, fp: int) -> bool:
        """Whether an initial state with fingerprint `fp` was admitted already."""
        raise NotImplementedError

    def initial_done(self, frontier: F) -> F:
        """The initial level, once every initial state is in `frontier`."""
        return frontier

    def place(self, frontier: F, level: int) -> F:
        """The level's states where the engine expands them (Spark: the driver or the
        cluster)."""
        return frontier

    def expand_level(self, frontier: F, level: int) -> F:
        """Expand the level and admit its new successors: the next level."""
        raise NotImplementedError

    def expand_at_bound(self, frontier: F, level: int) -> None:
        """At the depth bound, the search is complete only if no state there has a new
        successor: expand the level, count its successors as a full search would, and stop
        (`depth_bound`) if one is new."""
        raise NotImplementedError

    def release(self, frontier: F) -> None:
        """A level no longer needed (the next one has started)."""

    def restore(self, saved: Saved) -> tuple[F, int]:
        """The search as the checkpoint holds it: the level's states and the level."""
        raise NotImplementedError

    def saved_arrays(self, start: LevelStart[F], after_interrupt: bool) -> dict[str, Array] | None:
        """What a checkpoint of the search at `start` holds besides its counts (None: no
        checkpoint can be written now)."""
        raise NotImplementedError

    def saved_counts(self, start: LevelStart[F]) -> dict[str, Count]:
        """The engine's own counts in a checkpoint, besides the search's."""
        return {}

    def saved_reference(self, ref: Ref) -> int:
        """A state's reference as a checkpoint holds it."""
        return int(ref)

    def level_started(self, start: LevelStart[F]) -> None:
        """A level starts (`start`: the search as it stands)."""

    # -- as checker.search.outcome.run asks ----------------------------------------------------

    @property
    def witness(self) -> str | None:
        return self.options.witness

    def reachability(self) -> dict[str, tuple[Any, int]]:
        return self.reached

    def trace_to(self, where: Any) -> list[Step]:
        raise NotImplementedError

    def interrupted(self) -> None:
        self.save(after_interrupt=True)

    def close(self) -> None:
        if self.start is not None:
            self.release(self.start.frontier)

    def finish(self, result: CheckResult) -> None:
        pass

    def run(self) -> None:
        try:
            self.explore()
        except EvaluationError as exc:  # spec code raised, on the state being evaluated
            raise Failed(exc, self.current) from exc

    # -- the search ----------------------------------------------------------------------------

    def explore(self) -> None:
        resumed = self.checkpoints.resumed if self.checkpoints is not None else None
        if resumed is not None:
            frontier, level = self.restore(resumed)
        else:
            frontier, level = self.initial_level(), 1  # `level`: the depth of its states
        max_depth = self.options.max_depth
        while len(frontier):
            frontier = self.place(frontier, level)
            self.begin(level, frontier)
            if max_depth is not None and level >= max_depth:
                self.expand_at_bound(frontier, level)
                return
            frontier = self.expand_level(frontier, level)
            level += 1

    def initial_level(self) -> F:
        """Level 1: the initial states, in the order `init` lists them."""
        model, observer = self.model, self.observer
        frontier = self.new_frontier()
        steps = model.steps
        for init in model.initial():
            self.generated += 1
            if model.exclusions and model.excluded(init.state):  # TLC's CONSTRAINT
                broken = model.violated(init.state)
                if broken is not None:
                    raise Stop(
                        "violation",
                        None,
                        Step(None, {}, init.state),
                        invariant=broken.name,
                        outside_constraints=True,
                    )
                continue
            if self.initial_known(init.fp):
                continue
            if not self.room(1):
                raise self.full()
            ref = self.add_initial(init, frontier)
            self.distinct += 1
            self.depth = 1
            self.current = ref
            broken = model.violated(init.state)
            refused = None if steps is None else steps.initial_broken(init.state)
            if refused is not None and broken is None:
                name, why = refused
                raise Stop("violation", ref, step_property=name, step_violation=why)
            if observer is not None:
                observer.initial(ref, init, broken)
                if observer.go_on:
                    broken = None
            if broken is not None:
                raise Stop("violation", ref, invariant=broken.name)
            for i in model.reached(init.state, self.wanted()):
                self.reached[model.reachables[i].name] = (ref, 1)
        self.current = None
        return self.initial_done(frontier)

    def wanted(self) -> list[int]:
        """The reachability properties (indexes) that no state has satisfied yet."""
        reachables = self.model.reachables
        return [i for i, r in enumerate(reachables) if r.name not in self.reached]

    def depth_bound(self) -> Stop:
        return Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")

    def begin(self, level: int, frontier: F) -> None:
        """A level starts: keep the search as it stands (and write it, when a checkpoint is
        due); the previous level's states are no longer needed."""
        previous = self.start
        self.level = level
        self.start = LevelStart(
            level,
            frontier,
            self.distinct,
            self.generated,
            self.depth,
            self.fired.copy(),
            self.new.copy(),
            dict(self.reached),
        )
        self.level_started(self.start)
        if previous is not None and previous.frontier is not frontier:
            self.release(previous.frontier)
        if self.checkpoints is not None and self.checkpoints.due():
            self.save()

    def save(self, after_interrupt: bool = False) -> None:
        """Write the search as it stood at the start of the current level (its frontier is
        kept until the level ends), if checkpoints are on."""
        start, checkpoints = self.start, self.checkpoints
        if checkpoints is None or start is None:
            return
        arrays = self.saved_arrays(start, after_interrupt)
        if arrays is None:
            return
        counts = {
            "level": start.level,
            "states": start.states,
            "generated": start.generated,
            "depth": start.depth,
            "fired": start.fired.tolist(),
            "new": start.new.tolist(),
            "reached": {
                name: [self.saved_reference(ref), depth]
                for name, (ref, depth) in start.reached.items()
            },
            **self.saved_counts(start),
        }
        checkpoints.write(counts, arrays)

    def restore_counts(
        self, saved: Saved, level: int, states: int, by_number: bool
    ) -> dict[str, tuple[int, int]]:
        """The counts a checkpoint holds at the start of `level`, with `states` distinct
        states, each checked against the others (a checksum only says that the file is as mc
        wrote it); the reachability properties reached, as saved (a state by number if
        `by_number`, else by fingerprint), for the engine to map."""
        actions = len(self.model.actions)
        self.generated = saved.number("generated")
        self.depth = saved.number("depth")
        self.fired[:] = saved.numbers("fired", actions)
        self.new[:] = saved.numbers("new", actions)
        max_depth = self.options.max_depth
        if max_depth is not None and level > max_depth:
            raise saved.corrupt(f"level {level} is past the depth bound {max_depth}")
        if self.depth != level:  # the level's states are the deepest found
            raise saved.corrupt(f"depth {self.depth} at the start of level {level}")
        if states > self.generated or int(self.fired.sum()) > self.generated:
            raise saved.corrupt(f"{states:,} states from {self.generated:,} generated")
        if int(self.new.sum()) >= states or np.any(self.new > self.fired):
            raise saved.corrupt("the new states per action do not add up")
        names = [r.name for r in self.model.reachables]
        reached = saved.reached(names, states if by_number else None)
        if any(not 1 <= depth <= level for _, depth in reached.values()):
            raise saved.corrupt("a reachability property reached at a depth past the level")
        return reached
