"""Simulation (TLC's -simulate): random walks through a model too big to explore exhaustively.

A walk starts at a random initial state and takes a random successor, uniformly among
`Model.expand`'s list, until its depth bound, a state with no successor, or a verdict. Every
visited state is checked against the invariants (and, with `deadlock`, for successors).
Walk k draws from its own `random.Random`, seeded from (seed, k) by a hash that does not
depend on PYTHONHASHSEED: a seed reproduces every walk, and no walk depends on another.

A verdict's walk is then shortened, delta-debugging style: loops, runs of steps, then single
steps are dropped, with any later step that is no longer enabled, as long as the steps left
still reach the same verdict (the same invariant violated, deadlock, or the same action or
invariant raising) and no other verdict on the way; until no single step can be dropped. The
trace reported is rebuilt by `checker.trace.replay`, as the exhaustive engines' traces are.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from checker import guard
from checker.compiled import Binding
from checker.determinism import not_deterministic
from checker.errors import EvaluationError, StateError
from checker.model import ROOT, Model, Successor, Successors
from checker.progress import Progress, WalkSnapshot
from checker.result import ActionCoverage, CheckResult, ErrorInfo, Simulation
from checker.steps import ExcludedViolation, StepViolation
from checker.trace import replay
from checker.values.encoding import encode


@dataclass(frozen=True)
class Options:
    seed: int
    traces: int  # walks to take
    max_depth: int  # states per walk at most, the initial one included (as --max-depth counts)
    deadlock: bool = True  # report states with no enabled action (`--no-deadlock`: not)


def new_seed() -> int:
    """A fresh seed for a run not given one (it is printed, so the run can be repeated)."""
    return int.from_bytes(os.urandom(6), "big")


def walk_random(seed: int, walk: int) -> random.Random:
    """The random source of walk number `walk` (from 1) of a run seeded with `seed`."""
    digest = hashlib.sha256(f"mc simulate {seed} {walk}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class _Move:
    """A step of a walk, by what it does rather than by position, so that it can be replayed
    from another state: binding indexes change with the state when domains do."""

    action: int
    binding: Binding  # the parameter values
    binding_index: int  # their index among the action's bindings where the step was taken
    index: int  # which of the action's successors (`Model.fire`'s list) it took
    fp: int  # fingerprint of the state it reached


@dataclass(frozen=True)
class _Verdict:
    verdict: str  # violation | deadlock | error
    name: str | None = None  # the invariant violated, or what raised
    error: EvaluationError | None = None

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        """What a shortened trace must end in: the same verdict of the same invariant or
        action (an error's message may mention values that change with the trace)."""
        return self.verdict, self.name, self.error.kind if self.error else None


@dataclass
class _Found:
    walk: int
    start: int  # index of the initial state
    moves: list[_Move]
    verdict: _Verdict


@guard.guarded()  # spec code cannot end the run (for API users: the CLI guards it too)
def simulate(model: Model, options: Options, progress: Progress | None = None) -> CheckResult:
    """Take `options.traces` random walks through `model`; return the first verdict found,
    its trace shortened, or "ok" (which, unlike `bfs.check`'s, proves nothing)."""
    result = model.new_result()
    result.reachable = []  # walks prove no reachability property unreached: none is checked
    info = Simulation(options.seed, options.traces, options.max_depth)
    result.simulation = info
    walker = _Walker(model, options, info, progress)
    start = time.perf_counter()
    try:
        found = walker.run()
        if found is not None:
            start_state = walker.initial[found.start]
            moves, verdict = _Shortener(model, walker.passed, start_state, found).run()
            result.verdict = verdict.verdict
            if verdict.verdict == "violation":
                result.invariant = verdict.name
            if verdict.error is not None:
                result.error = ErrorInfo.of(verdict.error)
            chain = [(ROOT, found.start, start_state.fp)]
            chain += [(m.action, m.binding_index, m.fp) for m in moves]
            result.trace = replay(model, chain)
            info.found_trace, info.found_depth = found.walk, len(found.moves) + 1
            if isinstance(verdict.error, StepViolation):  # the walk ends with that step
                _end_with_the_step(model, result, verdict.error)
                info.found_depth += 1
    except EvaluationError as exc:  # only init can raise here: walks catch the rest
        result.verdict = "error"
        result.error = ErrorInfo.of(exc)
    except KeyboardInterrupt:  # Ctrl-C (and SIGTERM, see cli): stop and report what we have
        result.verdict = "incomplete"
        result.bound = f"interrupted after {info.walks:,} of {options.traces:,} traces"
    finally:
        if progress is not None:
            progress.close()
    result.seconds = time.perf_counter() - start
    result.distinct_states = len(walker.seen)
    result.states_generated = walker.generated
    result.depth = walker.depth
    result.coverage = [
        ActionCoverage(a.name, fired, new)
        for a, fired, new in zip(model.actions, walker.fired, walker.new)
    ]
    return result


def _examine(
    model: Model, passed: set[int], state: Successor, expand: bool
) -> tuple[_Verdict | None, Successors]:
    """Check `state` as a walk does: invariants first, then (if `expand`) its successors.
    `passed` caches the fingerprints of states known to satisfy every invariant."""
    try:
        if state.fp not in passed:
            broken = model.violated(state.state)
            if broken is not None:
                return _Verdict("violation", broken.name), Successors()
            passed.add(state.fp)
        if not expand:
            return None, Successors()
        successors = model.expand(state.data)
    except EvaluationError as exc:
        return _Verdict("error", exc.name, exc), Successors()
    return None, successors


def _end_with_the_step(model: Model, result: CheckResult, violation: StepViolation) -> None:
    """A walk whose last state has a step that breaks a step property or a refinement, or
    leads outside TLC's constraints into a state that violates an invariant: a violation,
    whose trace ends with that step (as the search reports it)."""
    step = model.step_of(encode(result.trace[-1].state), violation.index)
    result.trace = [*result.trace, step]
    result.verdict, result.error = "violation", None
    if isinstance(violation, ExcludedViolation):
        result.invariant, result.outside_constraints = violation.name, True
    else:
        result.step_property = violation.name
        result.step_violation = violation.sentence(step)


class _Walker:
    def __init__(
        self, model: Model, options: Options, info: Simulation, progress: Progress | None
    ) -> None:
        self.model = model
        self.options = options
        self.info = info
        self.progress = progress
        self.initial: list[Successor] = []
        self.seen: set[int] = set()  # fingerprints of the states visited
        self.passed: set[int] = set()  # of those, the ones that satisfy every invariant
        self.generated = 0
        self.depth = 0
        self.fired = [0] * len(model.actions)
        self.new = [0] * len(model.actions)

    def run(self) -> _Found | None:
        self.initial = self.model.initial()
        for walk in range(1, self.options.traces + 1):
            found = self._walk(walk)
            self.info.walks = walk
            if found is not None:
                return found
        return None

    def _walk(self, walk: int) -> _Found | None:
        model, options, rng = self.model, self.options, walk_random(self.options.seed, walk)
        start = rng.randrange(len(self.initial))
        state = self.initial[start]
        moves: list[_Move] = []
        while True:
            if self.progress is not None and self.progress.due():
                self._report()
            depth = len(moves) + 1
            self.info.visited += 1
            self.seen.add(state.fp)
            self.depth = max(self.depth, depth)
            last = depth >= options.max_depth
            verdict, successors = _examine(
                model, self.passed, state, expand=not last or options.deadlock
            )
            if verdict is None and successors.deadlocked and options.deadlock:
                verdict = _Verdict("deadlock")
            if verdict is not None:
                return _Found(walk, start, moves, verdict)
            self.generated += len(successors)
            for succ in successors:
                self.fired[succ.action] += 1
            if last or not successors:
                return None
            chosen = rng.randrange(len(successors))
            succ = successors[chosen]
            if succ.fp not in self.seen:
                self.new[succ.action] += 1
            # the position of `succ` among the successors of its own action and binding
            index = sum(
                1
                for other in successors[:chosen]
                if (other.action, other.binding) == (succ.action, succ.binding)
            )
            binding = model.actions[succ.action].bindings(state.state)[succ.binding]
            moves.append(_Move(succ.action, binding, succ.binding, index, succ.fp))
            state = succ

    def _report(self) -> None:
        if self.progress is not None:
            info = self.info
            self.progress.report_walks(
                WalkSnapshot(info.walks, info.traces, info.visited, len(self.seen))
            )


class _Shortener:
    """Drops steps from a verdict's walk while the verdict stays (delta debugging)."""

    def __init__(self, model: Model, passed: set[int], start: Successor, found: _Found) -> None:
        self.model = model
        self.passed = passed
        self.start = start
        self.moves = found.moves
        self.verdict = found.verdict

    def run(self) -> tuple[list[_Move], _Verdict]:
        """The shortened moves and the verdict they end in (an error is raised anew at the
        shortened trace's end, with the parameters it has there)."""
        try:
            while True:
                before = len(self.moves)
                self._cut_loops()
                size = max(len(self.moves) // 2, 1)
                while size >= 1:
                    self._drop_runs(size)
                    size //= 2
                if len(self.moves) == before:  # a whole pass dropped no single step
                    break
        except KeyboardInterrupt:
            pass  # Ctrl-C while shortening: report the trace as short as it got
        ended = self._replay(self.moves)
        if ended is None:  # it reached the verdict a moment ago
            raise not_deterministic(
                f"the walk to the {self.verdict.verdict} no longer reaches it when its steps are"
                " taken again"
            )
        return ended

    def _cut_loops(self) -> None:
        """A walk that comes back to a state can skip the loop: try that first, it is cheap."""
        i = 0
        while i < len(self.moves):
            fps = [self.start.fp] + [m.fp for m in self.moves]
            last = max(j for j, fp in enumerate(fps) if fp == fps[i])
            if last > i and self._try(self.moves[:i] + self.moves[last:]):
                continue
            i += 1

    def _drop_runs(self, size: int) -> None:
        """Try to drop each run of `size` steps, from the first step on."""
        i = 0
        while i < len(self.moves):
            if not self._try(self.moves[:i] + self.moves[i + size :]):
                i += size

    def _try(self, moves: list[_Move]) -> bool:
        ended = self._replay(moves)
        if ended is None:
            return False
        self.moves = ended[0]
        return True

    def _replay(self, moves: Sequence[_Move]) -> tuple[list[_Move], _Verdict] | None:
        """Replay `moves` from the start, skipping those no longer enabled, up to the first
        state with a verdict. The moves taken (with the fingerprints they reach now) and the
        verdict, if it is the one sought; None otherwise."""
        model, state, wanted = self.model, self.start, self.verdict.key
        replayed: list[_Move] = []
        for move in moves:
            verdict, _ = _examine(model, self.passed, state, expand=False)
            if verdict is not None:
                return (replayed, verdict) if verdict.key == wanted else None
            fired = self._step(state, move)
            if fired is not None:
                state, move = fired
                replayed.append(move)
        verdict, successors = _examine(model, self.passed, state, expand=wanted[0] != "violation")
        if verdict is None and wanted[0] == "deadlock" and successors.deadlocked:
            verdict = _Verdict("deadlock")
        if verdict is None or verdict.key != wanted:
            return None
        return replayed, verdict

    def _step(self, state: Successor, move: _Move) -> tuple[Successor, _Move] | None:
        """Fire `move` in `state`, with the same parameters if they are in their domains
        there, else (a domain that depends on the state, e.g. the requests in flight) those at
        the same position. Of the successors, the one with the move's fingerprint, else the
        one at its index. None if that is not enabled or raises: a trace kept must not pass
        through an error. Any choice is safe: the replay must still reach the verdict."""
        act = self.model.actions[move.action]
        try:
            bindings = act.bindings(state.state)
            if move.binding in bindings:
                binding_index = bindings.index(move.binding)
            elif move.binding_index < len(bindings):
                binding_index = move.binding_index
            else:
                return None
            binding = bindings[binding_index]
            targets = self.model.fire(move.action, binding, state.state)
            encoded = [encode(t) for t in targets]
            fps = [self.model.fingerprint_of(t, data) for t, data in zip(targets, encoded)]
        except (EvaluationError, StateError):
            return None
        index = move.index if move.fp not in fps else fps.index(move.fp)
        if index >= len(targets):
            return None
        index = fps.index(fps[index])  # the first with its fingerprint: the one replay takes
        succ = Successor(move.action, binding_index, targets[index], encoded[index], fps[index])
        return succ, _Move(move.action, binding, binding_index, index, succ.fp)
