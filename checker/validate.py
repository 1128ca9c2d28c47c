"""Trace validation: is an observed behaviour (a log of a real system) a behaviour of the spec?

The engine side knows nothing of the system that wrote the log. It gets a model, a projection
`project(state) -> {variable: value}` (what the log can show of a spec state; the spec has
hidden variables the log cannot show) and the observed images, one per log record that changes
them. It searches breadth first for a behaviour of the spec whose projection, stuttering
removed, equals each image in turn: each image is reached by at most `max_hidden` steps that
leave the projection as it is, then one step that changes it (or none, if the candidate already
shows the image). An observation marked not `required` ends inside an atomic batch of the log:
the spec may explain the batch with one step for all of it (the candidates of before are kept).

An observer may declare actions *deferred*: hidden steps that stay enabled once enabled and
commute with every other step (the behaviours with the step taken early are those with it
taken just before the step that needs it, up to the renaming of values only compared for
equality). The search takes a deferred action only right before a step that changes the
projection: a partial-order reduction, as sound as the observer's claim, which it must argue.

Two passes: a quick one keeps, after each image, only the candidates that took the fewest
hidden steps (a behaviour it finds is a behaviour: it may accept, never reject); if it does not
accept, a complete one keeps every candidate. The verdict is "accepted" (the whole log
consumed), "diverged" (the complete pass found an image no candidate reaches, and no bound cut
it before) or "undecided" (a bound, `max_hidden` or `max_states`, cut the complete pass: a
missing candidate may have been one the bound dropped). An image's value may be UNKNOWN: the
log does not say it, any value matches.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from checker.errors import ConfigError, SpecError
from checker.loader import import_spec_module
from checker.model import Model
from checker.result import Step

Projection = Callable[[Any], Mapping[str, Any]]
ACCEPTED, DIVERGED, UNDECIDED = "accepted", "diverged", "undecided"
MAX_HIDDEN = 40  # hidden steps before an image: the closures of the bundled specs end sooner
MAX_STATES = 300_000  # states a pass generates at most (about a minute of kip966's)


class _Unknown:
    """A value the log does not show: it matches any value of the spec."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "?"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class Observation:
    """The image after a log record: `offset` where it is in the log, `label` what it says."""

    offset: int
    image: Mapping[str, Any]
    label: str = ""
    required: bool = True  # False: inside an atomic batch whose end comes later


@dataclass
class Observed:
    """What a reader made of a log: the spec's constants it implies and the images."""

    constants: dict[str, str]
    observations: list[Observation]
    records: int  # records read from the log
    notes: list[str] = field(default_factory=list)  # what the reader ignored or assumed


class Node:
    """A state of a behaviour being matched, with the step that reached it (`action`: an
    index into the model's actions, -1 for an initial state)."""

    __slots__ = ("action", "binding", "image", "parent", "state")

    def __init__(self, state: Any, action: int, binding: Any, parent: Node | None) -> None:
        self.state, self.action, self.binding, self.parent = state, action, binding, parent
        self.image: dict[str, Any] | None = None  # its projection, once computed

    def step(self, model: Model) -> Step:
        """The step that reached this state."""
        if self.parent is None:
            return Step(None, {}, self.state)
        act = model.actions[self.action]
        event = act.event(self.parent.state, self.binding)
        return Step(act.name, act.describe(self.binding), self.state, event)

    def trace(self, model: Model) -> list[Step]:
        """The behaviour from an initial state to this one, as a trace."""
        nodes, node = [], self
        while node is not None:
            nodes.append(node)
            node = node.parent
        return [node.step(model) for node in reversed(nodes)]


@dataclass(frozen=True)
class Difference:
    variable: str
    spec: Any
    observed: Any


@dataclass
class Validation:
    verdict: str  # ACCEPTED, DIVERGED or UNDECIDED
    observations: int  # images to match
    matched: int  # images matched
    records: int = 0
    offset: int | None = None  # the record where the search diverged or stopped
    label: str = ""
    reason: str = ""  # why undecided: the bound that cut the search
    before: list[Any] = field(default_factory=list)  # the states possible before that record
    before_images: list[dict[str, Any]] = field(default_factory=list)  # their projections
    closest: Step | None = None  # the spec's step nearest to the image it missed
    differences: list[Difference] = field(default_factory=list)
    trace: list[Step] = field(default_factory=list)  # the behaviour matched (its prefix)
    hidden_steps: int = 0  # the most hidden steps an image needed
    states: int = 0  # states generated in all
    seconds: float = 0.0
    ignored: tuple[str, ...] = ()
    constants: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    quick: Validation | None = None  # the quick pass, when it did not accept
    max_hidden: int = 0


def differences(projected: Mapping[str, Any], image: Mapping[str, Any]) -> list[Difference]:
    """The variables whose image value is known and differs from the spec's."""
    out = []
    for name, want in image.items():
        got = projected.get(name, UNKNOWN)
        if want is not UNKNOWN and got != want:
            out.append(Difference(name, got, want))
    return out


def matches(projected: Mapping[str, Any], image: Mapping[str, Any]) -> bool:
    return all(v is UNKNOWN or projected.get(k, UNKNOWN) == v for k, v in image.items())


class Search:
    """One pass over the log: the candidates after each image, found level by level. With
    `fewest_hidden`, only the candidates that take the fewest hidden steps are kept (a quick
    pass that may miss a behaviour, so it only ever accepts); without, every candidate within
    the bounds (a complete pass, which alone may say that the log diverges)."""

    def __init__(
        self,
        model: Model,
        project: Projection,
        max_hidden: int,
        max_states: int,
        ignore: Sequence[str] = (),
        fewest_hidden: bool = False,
        deferred: Sequence[str] = (),
    ) -> None:
        self.model, self.max_hidden, self.max_states = model, max_hidden, max_states
        self.ignore = tuple(ignore)
        self.deferred = frozenset(i for i, a in enumerate(model.actions) if a.name in deferred)
        self.fewest_hidden = fewest_hidden
        self._project = project
        self.states = 0  # states generated
        self.hidden_steps = 0  # the most hidden steps an image needed
        # The successors of each node expanded since the last required image: the images
        # inside a batch search the same hidden closure again, from the same candidates.
        self._children: dict[Node, list[Node]] = {}
        self.cut: str = ""  # the first bound that cut the search, if any

    def project(self, state: Any) -> dict[str, Any]:
        image = dict(self._project(state))
        for name in self.ignore:
            image.pop(name, None)
        return image

    def shown(self, node: Node) -> dict[str, Any]:
        """The node's projection, computed once."""
        if node.image is None:
            node.image = self.project(node.state)
        return node.image

    def image(self, observation: Observation) -> dict[str, Any]:
        return {k: v for k, v in observation.image.items() if k not in self.ignore}

    def successors(self, node: Node) -> list[Node]:
        children = self._children.get(node)
        if children is not None:
            return children
        model, state = self.model, node.state
        if model.constraints and not model.within_constraints(state):
            return []
        states: list[Any] = []
        actions: list[int] = []
        bindings: list[Any] = []
        model.successors(state, states, actions, bindings)
        self.states += len(states)
        children = [Node(t, ai, b, node) for t, ai, b in zip(states, actions, bindings)]
        self._children[node] = children
        return children

    def step(
        self, candidates: list[Node], observation: Observation, closest_miss: bool = False
    ) -> tuple[list[Node], tuple[int, Node | None, list[Difference]]]:
        """The states that show `observation`'s image after at most max_hidden hidden steps
        and one step that changes the projection (or none); with `closest_miss`, also the
        step whose projection differs from the image in the fewest variables."""
        image = self.image(observation)
        known = {k: v for k, v in image.items() if v is not UNKNOWN}
        found: dict[int, Node] = {}
        closest: tuple[int, Node | None, list[Difference]] = (1 << 30, None, [])
        seen: set[int] = set()
        frontier = []
        for node in candidates:
            fp = self.model.fingerprint_of(node.state)
            if fp not in seen:
                seen.add(fp)
                frontier.append(node)
                if matches(self.shown(node), image):
                    found[fp] = node  # the record changes nothing the spec shows here
        needed = 0 if found else -1
        for depth in range(self.max_hidden + 1):
            if found and self.fewest_hidden:
                break
            deeper: list[Node] = []
            for node in frontier:
                here = self.shown(node)
                for t in self.successors(node):
                    projected = self.shown(t)
                    if projected == here:  # a hidden step
                        fp = self.model.fingerprint_of(t.state)
                        if fp in seen:
                            continue
                        seen.add(fp)
                        if depth >= self.max_hidden:
                            self.cut = self.cut or f"--max-hidden {self.max_hidden}"
                        elif t.action in self.deferred:  # only right before a visible step
                            for u in self.successors(t):
                                if self.shown(u) != here and matches(self.shown(u), image):
                                    fu = self.model.fingerprint_of(u.state)
                                    if fu not in found:
                                        found[fu] = u
                                        needed = depth + 1 if needed < 0 else needed
                        else:
                            deeper.append(t)
                        continue
                    if matches(projected, image):
                        fp = self.model.fingerprint_of(t.state)
                        if fp not in found:
                            found[fp] = t
                            needed = depth if needed < 0 else needed
                    elif closest_miss:
                        missed = sum(1 for k, v in known.items() if projected.get(k) != v)
                        if missed < closest[0]:
                            closest = (missed, t, differences(projected, image))
                if self.states > self.max_states:
                    if not self.cut:
                        self.cut = f"--max-states {self.max_states}"
                    return [], closest
            frontier = deeper
            if not frontier:
                break
        self.hidden_steps = max(self.hidden_steps, needed)
        return list(found.values()), closest

    def run(self, observed: Observed, result: Validation) -> None:
        """Match every image in turn; `result` says how far it went and why it stopped."""
        model, observations = self.model, observed.observations
        first = observations[0]
        initial = [Node(s, -1, None, None) for s in model.initial_states()]
        image = self.image(first)
        candidates = [n for n in initial if matches(self.project(n.state), image)]
        result.matched = 0
        if not candidates:
            diffs = [differences(self.project(n.state), image) for n in initial]
            best = min(range(len(initial)), key=lambda i: len(diffs[i]))
            self._stop(result, first, [], (len(diffs[best]), initial[best], diffs[best]))
            return
        result.matched = 1
        for observation in observations[1:]:
            found, closest = self.step(candidates, observation, closest_miss=True)
            if not found and (observation.required or self.states > self.max_states):
                self._stop(result, observation, candidates, closest)
                return
            # Inside a batch, the spec's step may come at its end: the candidates stay.
            candidates = found if observation.required else found + candidates
            if observation.required:
                self._children.clear()
            result.matched += 1
        result.verdict = ACCEPTED  # a behaviour exists, whatever the bounds dropped
        result.offset, result.label, result.reason = None, "", ""
        result.trace = candidates[0].trace(model)

    def _stop(
        self,
        result: Validation,
        observation: Observation,
        before: list[Node],
        closest: tuple[int, Node | None, list[Difference]],
    ) -> None:
        result.verdict = UNDECIDED if self.cut or self.fewest_hidden else DIVERGED
        result.reason = self.cut
        result.offset, result.label = observation.offset, observation.label
        result.before = [n.state for n in before]
        result.before_images = []
        for n in before:
            shown = self.project(n.state)
            if shown not in result.before_images:
                result.before_images.append(shown)
        result.closest = closest[1].step(self.model) if closest[1] is not None else None
        result.differences = closest[2]
        result.trace = before[0].trace(self.model) if before else []


def validate(
    model: Model,
    project: Projection,
    observed: Observed,
    *,
    max_hidden: int = MAX_HIDDEN,
    max_states: int = MAX_STATES,
    ignore: Sequence[str] = (),
    deferred: Sequence[str] = (),
) -> Validation:
    """Match `observed` against `model`'s behaviours (see the module's docstring): a quick
    pass first; if it does not accept, a complete one, whose verdict stands. `deferred`: the
    actions the observer declares may wait until the step that needs them (below)."""
    if not observed.observations:
        raise ConfigError("the log holds no record the projection can show: nothing to validate")
    started = time.monotonic()

    def new_result() -> Validation:
        return Validation(
            ACCEPTED,
            len(observed.observations),
            0,
            records=observed.records,
            ignored=tuple(ignore),
            constants=dict(observed.constants),
            notes=list(observed.notes),
            max_hidden=max_hidden,
        )

    result = new_result()
    quick = Search(model, project, max_hidden, max_states, ignore, True, deferred)
    quick.run(observed, result)
    result.states, result.hidden_steps = quick.states, quick.hidden_steps
    if result.verdict != ACCEPTED:
        first, result = result, new_result()
        complete = Search(model, project, max_hidden, max_states, ignore, False, deferred)
        complete.run(observed, result)
        result.quick = first
        result.states = first.states + complete.states
        result.hidden_steps = max(first.hidden_steps, complete.hidden_steps)
    result.seconds = time.monotonic() - started
    return result


# ----------------------------------------------------------------------------------------
# The spec's observer: a module next to the spec file, <spec>_observe.py
# ----------------------------------------------------------------------------------------


def observer_path(spec_path: str | os.PathLike[str]) -> Path:
    path = Path(os.fspath(spec_path).rpartition("::")[0] or os.fspath(spec_path))
    return path.with_name(f"{path.stem}_observe.py")


def load_observer(spec_path: str | os.PathLike[str]) -> ModuleType:
    """The module that ties a spec to a log: `observe(state)` (the projection) and
    `read(path) -> Observed` (the images a log shows, and the constants it implies)."""
    path = observer_path(spec_path)
    if not path.exists():
        raise SpecError(
            f"{spec_path}: no observer {path.name} next to it (a module with observe(state) and"
            " read(log)) to validate a log against"
        )
    module = import_spec_module(path)
    for name in ("observe", "read"):
        if not callable(getattr(module, name, None)):
            raise SpecError(f"{path}: defines no function {name}(...)")
    return module
