"""Walking a spec's states one step at a time, for `mc explore`: paths (what a URL holds), the
choices in a state (every action binding, enabled or with the reason it is not), the spec's
predicates evaluated on a state, and the path of a trace (the engine's, or a `--json`
report's). Nothing here knows about HTTP or HTML.

A path is the initial state's index, then one move per step: `0,fetch.1,crash.0.2` is
initial state 0, then `fetch` with its binding 1 (its index among the action's bindings in
that state, as the engine's parent links count them), then `crash` with binding 0 and its
successor 2 (an action may return several states; the first is left out of the text).
Action names, not indexes, so that a path still reads and survives a reordering of actions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.compiled import Binding
from checker.errors import ConfigError, EvaluationError
from checker.model import Model
from checker.reports.graph import changed_variables, describe_action
from checker.result import Event, Step
from checker.values import to_json
from checker.values.record import Record

_MOVE = re.compile(r"([A-Za-z_]\w*)\.(\d+)(?:\.(\d+))?")


class PathError(ConfigError):
    """A path that does not walk in this spec (made for another spec or other constants)."""


@dataclass(frozen=True)
class Move:
    """One step of a path: action `action` (by name) with its `binding`-th binding, and its
    `successor`-th successor."""

    action: str
    binding: int
    successor: int = 0

    def __str__(self) -> str:
        tail = f".{self.successor}" if self.successor else ""
        return f"{self.action}.{self.binding}{tail}"


@dataclass(frozen=True)
class Path:
    init: int
    moves: tuple[Move, ...] = ()

    def __str__(self) -> str:
        return ",".join([str(self.init), *map(str, self.moves)])

    def then(self, move: Move) -> Path:
        return Path(self.init, (*self.moves, move))

    def prefix(self, states: int) -> Path:
        """The path to its `states`-th state (1: the initial state)."""
        return Path(self.init, self.moves[: states - 1])

    @classmethod
    def parse(cls, text: str) -> Path:
        """The path `str(path)` wrote; PathError if `text` is not one."""
        parts = text.strip().split(",") if text.strip() else ["0"]
        if not parts[0].isdigit():
            raise PathError(f"path {text!r}: it starts with the initial state's number")
        moves = []
        for number, part in enumerate(parts[1:], start=2):
            match = _MOVE.fullmatch(part)
            if match is None:
                raise PathError(
                    f"path {text!r}: step {number} is {part!r}; a step is ACTION.BINDING"
                    " (or ACTION.BINDING.SUCCESSOR)"
                )
            name, binding, successor = match.groups()
            moves.append(Move(name, int(binding), int(successor or 0)))
        return cls(int(parts[0]), tuple(moves))


@dataclass
class Walk:
    """The states along a path: `steps[0]` is the initial state."""

    path: Path
    steps: list[Step]

    @property
    def state(self) -> Record:
        return self.steps[-1].state

    @property
    def depth(self) -> int:
        """The number of states, as --max-depth counts them."""
        return len(self.steps)


@dataclass
class Choice:
    """An action binding in a state: the successor it leads to (`path`), or why it does not."""

    action: str
    params: dict[str, Any]
    path: Path | None = None  # None: disabled
    reason: str | None = None  # why it is disabled (or what it cannot do)
    error: bool = False  # spec code raised: `reason` says what
    state: Record | None = None
    changed: tuple[str, ...] = ()
    violates: list[str] = field(default_factory=list)  # invariants the successor breaks
    outside: str | None = None  # a state constraint the successor is outside of
    revisits: int | None = None  # the successor is this state of the path (from 1)
    of: int = 1  # the binding's successors: it is one of several (a nondeterministic action)

    @property
    def enabled(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class Check:
    """A predicate of the spec on one state: `value` True, False or None (it raised)."""

    kind: str  # invariant | reachable | constraint | terminal
    name: str
    value: bool | None
    message: str = ""


class Navigator:
    """The states of `model` reachable step by step, up to `max_depth` states on a path."""

    def __init__(self, model: Model, max_depth: int | None = None) -> None:
        self.model = model
        self.max_depth = max_depth
        self._action = {act.name: i for i, act in enumerate(model.actions)}

    # -- walking a path --------------------------------------------------------------------

    def walk(self, path: Path) -> Walk:
        """The states along `path`; PathError says which step does not walk here."""
        model = self.model
        initial = model.initial_states()
        if path.init >= len(initial):
            raise PathError(
                f"path {path}: {model.name} has {len(initial)} initial state"
                f"{'s' * (len(initial) != 1)}, not {path.init + 1}"
            )
        steps = [Step(None, {}, initial[path.init])]
        for number, move in enumerate(path.moves, start=2):
            steps.append(self._step(steps[-1].state, move, f"path {path}: step {number}"))
        return Walk(path, steps)

    def _step(self, state: Record, move: Move, where: str) -> Step:
        ai = self._action.get(move.action)
        if ai is None:
            raise PathError(f"{where}: {self.model.name} has no action {move.action!r}")
        act = self.model.actions[ai]
        try:
            bindings = act.bindings(state)
        except EvaluationError as exc:
            raise PathError(f"{where}: {move.action}: {exc.message}") from None
        if move.binding >= len(bindings):
            raise PathError(
                f"{where}: {move.action} has {len(bindings)} bindings here, not {move.binding + 1}"
            )
        binding = bindings[move.binding]
        try:
            successors = self.model.fire(ai, binding, state)
        except EvaluationError as exc:
            raise PathError(
                f"{where}: {move.action}{_args(act.describe(binding))} {exc.message}"
            ) from None
        if move.successor >= len(successors):
            what = "is not enabled" if not successors else f"has {len(successors)} successors"
            raise PathError(f"{where}: {move.action}{_args(act.describe(binding))} {what} here")
        return Step(
            act.name, act.describe(binding), successors[move.successor], _event(act, state, binding)
        )

    # -- what can happen next --------------------------------------------------------------

    def choices(self, walk: Walk) -> list[Choice]:
        """Every action binding in the walk's last state: those enabled first (one choice per
        successor, in the engine's order), then the others, each with its reason."""
        model, state = self.model, walk.state
        outside = self._failing_constraint(state)
        bounded = self.max_depth is not None and walk.depth >= self.max_depth
        seen = {s.state: number for number, s in enumerate(walk.steps, start=1)}
        enabled: list[Choice] = []
        disabled: list[Choice] = []
        for ai, act in enumerate(model.actions):
            try:
                bindings = act.bindings(state)
            except EvaluationError as exc:
                disabled.append(Choice(act.name, {}, reason=exc.message, error=True))
                continue
            if not bindings:
                disabled.append(
                    Choice(act.name, {}, reason="no binding: a parameter's domain is empty here")
                )
            for bi, binding in enumerate(bindings):
                params = act.describe(binding)
                if outside is not None:
                    reason = (
                        f"this state is outside the state constraint {outside}:"
                        " mc does not expand it"
                    )
                    disabled.append(Choice(act.name, params, reason=reason))
                    continue
                found = self._fire(ai, binding, state)
                if isinstance(found, Choice):
                    disabled.append(found)
                    continue
                for k, succ in enumerate(found):
                    choice = Choice(act.name, params, state=succ, of=len(found))
                    choice.changed = changed_variables(succ, state)
                    choice.revisits = seen.get(succ)
                    choice.violates = [
                        c.name for c in self._checks("invariant", succ) if c.value is False
                    ]
                    choice.outside = self._failing_constraint(succ)
                    if bounded:
                        choice.reason = f"the depth bound: --max-depth {self.max_depth} states"
                    else:
                        choice.path = walk.path.then(Move(act.name, bi, k))
                    (disabled if bounded else enabled).append(choice)
        return enabled + disabled

    def _fire(self, ai: int, binding: Binding, state: Record) -> list[Record] | Choice:
        """The successors of one binding, or the disabled choice that says why there are none."""
        act = self.model.actions[ai]
        params = act.describe(binding)
        try:
            raw = act.fn(state, *binding)
        except Exception as exc:
            return Choice(
                act.name, params, reason=f"raised {type(exc).__name__}: {exc}", error=True
            )
        if raw is None:
            return Choice(act.name, params, reason="not enabled: its guard returned None")
        try:
            successors = self.model.fire(ai, binding, state)
        except EvaluationError as exc:
            return Choice(act.name, params, reason=exc.message, error=True)
        if successors:
            return successors
        candidates = [raw] if isinstance(raw, Record) else list(raw)  # fire() checked it
        if not candidates:
            return Choice(act.name, params, reason="not enabled: it returned no state")
        names = [
            c.name
            for c in self.model.action_constraints
            if any(not _quietly(c.fn, state, t) for t in candidates)
        ]
        return Choice(
            act.name,
            params,
            reason=f"the action constraint {', '.join(names) or '(one)'} discards its step",
        )

    # -- the spec's predicates -------------------------------------------------------------

    def checks(self, state: Record) -> list[Check]:
        """Invariants, reachability properties, state constraints and final-state predicates
        on `state`, in that order and as declared."""
        return [
            check
            for kind in ("invariant", "reachable", "constraint", "terminal")
            for check in self._checks(kind, state)
        ]

    def _checks(self, kind: str, state: Record) -> list[Check]:
        members = {
            "invariant": self.model.invariants,
            "reachable": self.model.reachables,
            "constraint": self.model.constraints,
            "terminal": self.model.terminals,
        }[kind]
        out = []
        for member in members:
            try:
                value = member.fn(state)
            except Exception as exc:
                out.append(Check(kind, member.name, None, f"raised {type(exc).__name__}: {exc}"))
                continue
            if value is not True and value is not False:
                out.append(Check(kind, member.name, None, f"returned {value!r}, not True or False"))
                continue
            out.append(Check(kind, member.name, value))
        return out

    def _failing_constraint(self, state: Record) -> str | None:
        for c in self.model.constraints:
            if not _quietly(c.fn, state):
                return c.name
        return None

    def deadlocked(self, walk: Walk, choices: Sequence[Choice]) -> bool:
        """No action enabled (depth bound aside), inside the constraints, and not final."""
        if any(c.enabled or (c.state is not None) for c in choices):
            return False
        if self._failing_constraint(walk.state) is not None:
            return False
        return not any(c.value for c in self._checks("terminal", walk.state))

    # -- traces ----------------------------------------------------------------------------

    def path_of(self, steps: Sequence[Step]) -> Path:
        """The path of a trace the engine built (its states and parameters as Python values)."""
        return self._path_of(
            steps,
            lambda step, state: step.state == state,
            lambda step, params: step.params == params,
            "the trace",
        )

    def path_of_json(self, doc: dict[str, Any], where: str) -> Path:
        """The path of the trace of a `--json` report (states and parameters as JSON)."""
        trace = doc.get("trace")
        if not isinstance(trace, list) or not trace:
            verdict = doc.get("verdict", "?")
            raise ConfigError(f"{where}: the result has no trace (verdict {verdict})")
        for step in trace:
            if not isinstance(step, dict) or "state" not in step or "params" not in step:
                raise ConfigError(
                    f"{where}: not an mc --json report (a trace step is {step!r:.80})"
                )
        return self._path_of(
            trace,
            lambda step, state: step["state"] == _as_json(state),
            lambda step, params: step["params"] == {k: _as_json(v) for k, v in params.items()},
            where,
            lambda step: step.get("action"),
        )

    def _path_of(
        self,
        steps: Sequence[Any],
        same_state: Callable[[Any, Record], bool],
        same_params: Callable[[Any, dict[str, Any]], bool],
        where: str,
        action_of: Callable[[Any], Any] = lambda step: step.action,
    ) -> Path:
        initial = self.model.initial_states()
        index = next((i for i, s in enumerate(initial) if same_state(steps[0], s)), None)
        if index is None:
            raise PathError(
                f"{where}: its first state is none of {self.model.name}'s initial states"
                " (another spec, or other constants?)"
            )
        path, state = Path(index), initial[index]
        for number, step in enumerate(steps[1:], start=2):
            name = action_of(step)
            ai = self._action.get(name) if isinstance(name, str) else None
            if ai is None:
                raise PathError(
                    f"{where}: state {number}: {self.model.name} has no action {name!r}"
                )
            act = self.model.actions[ai]
            move = None
            for bi, binding in enumerate(act.bindings(state)):
                if not same_params(step, act.describe(binding)):
                    continue
                for k, succ in enumerate(self.model.fire(ai, binding, state)):
                    if same_state(step, succ):
                        move, state = Move(name, bi, k), succ
                        break
                break
            if move is None:
                raise PathError(
                    f"{where}: state {number} ({name}) is not a step {self.model.name} takes"
                    f" from state {number - 1} (another spec, or other constants?)"
                )
            path = path.then(move)
        return path


def _event(act: Any, state: Record, binding: Binding) -> Event | None:
    """The step's sequence-chart event; a failing @on template is shown, not raised."""
    try:
        return act.event(state, binding)
    except EvaluationError as exc:
        return Event("(@on failed)", "local", message=exc.message)


def _quietly(fn: Callable[..., Any], *args: Any) -> bool:
    """A constraint's verdict, a constraint that raises counting as one that fails."""
    try:
        return fn(*args) is True
    except Exception:
        return False


def _args(params: dict[str, Any]) -> str:
    return describe_action("", params)


def _as_json(value: Any) -> Any:
    """`value` as a `--json` report holds it once read back."""
    return json.loads(json.dumps(to_json(value)))
