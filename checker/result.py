"""The outcome of a check as data: every report (text, JSON, ...) is written from this."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.errors import EvaluationError, ExitCode
from checker.values.record import Record

VERDICT_EXIT = {
    "ok": ExitCode.OK,
    "deadlock": ExitCode.DEADLOCK,
    "violation": ExitCode.VIOLATION,
    "error": ExitCode.EVALUATION_ERROR,
    "incomplete": ExitCode.INCOMPLETE,
}


@dataclass(frozen=True)
class Event:
    """What a step looks like on a sequence chart (from the action's `@on`)."""

    process: str
    kind: str  # "local", "send", "receive" or "call"
    peer: str | None = None  # the other process of a message
    message: str | None = None


@dataclass(frozen=True)
class Step:
    """One state of a trace and the action (with parameters) that led to it."""

    action: str | None  # None for the initial state
    params: dict[str, Any]
    state: Record
    event: Event | None = None  # None for the initial state and actions without @on


# How Jupyter shows a result and a trace (`_repr_html_`): the HTML report, set by
# checker.reports.notebook (which checker.testing, the notebook's API, imports). Results stay
# plain data here, below the reports that render them.
html_of_result: Callable[[CheckResult], str] | None = None
html_of_trace: Callable[[Sequence[Step]], str] | None = None


class Trace(list):  # type: ignore[type-arg]
    """A behavior, its Steps in order: a list, that Jupyter shows as the HTML report."""

    def _repr_html_(self) -> str | None:
        return None if html_of_trace is None else html_of_trace(self)


@dataclass(frozen=True)
class VacuityWarning:
    """Something of the spec that the search never exercised: it passes vacuously there."""

    kind: str  # never-enabled | empty-domain | fired-while-off | undeclared
    name: str  # the action, or the method that looks like one
    message: str


@dataclass
class ActionCoverage:
    name: str
    fired: int = 0  # successors this action generated
    new: int = 0  # of which were new distinct states


@dataclass
class ErrorInfo:
    """Where spec code failed: what raised, with which parameters, and why."""

    kind: str  # "init", "action" or "invariant"
    name: str
    params: dict[str, Any]
    message: str
    traceback: str = ""

    @classmethod
    def of(cls, exc: EvaluationError) -> ErrorInfo:
        return cls(exc.kind, exc.name, exc.params, exc.message, exc.spec_traceback)


@dataclass
class Simulation:
    """How an `mc simulate` run walked: its results are samples, not a proof."""

    seed: int
    traces: int  # walks asked for
    max_depth: int  # states per walk at most, the initial one included
    walks: int = 0  # walks taken
    visited: int = 0  # states visited, a state visited twice counting twice
    found_trace: int | None = None  # the walk (from 1) that reached the verdict
    found_depth: int | None = None  # its depth there, before the trace was shortened


@dataclass
class CheckResult:
    spec: str  # path of the spec file
    spec_name: str
    constants: dict[str, Any]
    invariants: list[str]
    constraints: list[str] = field(default_factory=list)  # state constraints
    action_constraints: list[str] = field(default_factory=list)
    view: bool = False  # states are identified by the spec's view of them
    symmetry: str | None = None  # the symmetry reduction in use: "broker_ids (6 permutations)"
    verdict: str = "ok"  # ok | violation | deadlock | error | incomplete
    invariant: str | None = None  # the violated invariant
    # Temporal properties (checker.liveness) as name -> formula ("eventually has_leader"),
    # and the fairness they assume ("WF(fetch)"); checked once every invariant holds.
    properties: dict[str, str] = field(default_factory=dict)
    fairness: list[str] = field(default_factory=list)
    property: str | None = None  # the violated temporal property (exit 13)
    # Step properties and refinements (checker.steps) as name -> formula ("[][grows]",
    # "refines Abstract"); the one a step violates, and why, in a sentence (the trace ends
    # with that step; an initial state, for a refinement whose mapping of it is no abstract
    # initial state).
    step_properties: dict[str, str] = field(default_factory=dict)
    # The violated invariant fails in a state outside a @constraint(admit=False): the last
    # state of the trace, which the search checked and did not add (TLC's CONSTRAINT).
    outside_constraints: bool = False
    step_property: str | None = None
    step_violation: str | None = None
    # Reachability properties (@reachable): those checked, the depth at which each was first
    # reached, those a complete search never reached (a violation, exit 12), and the one
    # whose shortest example is the trace (`mc check --witness NAME`, the verdict ok).
    reachable: list[str] = field(default_factory=list)
    reached: dict[str, int] = field(default_factory=dict)
    unreached: list[str] = field(default_factory=list)
    witness: str | None = None
    error: ErrorInfo | None = None
    bound: str | None = None  # why an incomplete run stopped
    # The engine could not go on (checker.errors.EngineFailure: out of memory, a worker or the
    # Spark executors lost): the run is incomplete, exit 153; `advice` says what to do.
    engine_failed: bool = False
    advice: str | None = None
    distinct_states: int = 0
    states_generated: int = 0
    depth: int = 0
    queue: int = 0  # states left unexplored when the run stopped
    seconds: float = 0.0
    visited_bytes: int = 0  # memory of the local engine's fingerprint set
    link_bytes: int = 0  # and of its parent links
    closest_fingerprints: int | None = None  # the smallest gap between two found fingerprints
    coverage: list[ActionCoverage] = field(default_factory=list)
    trace: list[Step] = field(default_factory=list)
    simulation: Simulation | None = None  # set by `mc simulate`
    # A temporal property's counterexample is a lasso: `trace`, then back to
    # trace[loop_start] by `loop_back` (the step that closes the cycle) and round again
    # forever; with loop_back None the last state stutters forever (loop_start is its index).
    loop_start: int | None = None
    loop_back: Step | None = None
    liveness_seconds: float = 0.0  # of `seconds`, spent checking the temporal properties
    # The vacuity check (checker.vacuity), after a complete search: what never happened, and
    # the actions the constants switch off (name -> "max_crashes=0"); `strict`: warnings fail.
    warnings: list[VacuityWarning] = field(default_factory=list)
    off: dict[str, str] = field(default_factory=dict)
    strict: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "trace" and type(value) is list:  # as every engine builds it
            value = Trace(value)
        super().__setattr__(name, value)

    def _repr_html_(self) -> str | None:
        """Jupyter shows a result as its HTML report."""
        return None if html_of_result is None else html_of_result(self)

    # builtins.property: the field `property` shadows the builtin in this class body.
    @builtins.property
    def exit_code(self) -> ExitCode:
        if self.verdict == "violation" and self.property is not None:
            return ExitCode.LIVENESS
        if self.verdict == "ok" and self.strict and self.warnings:
            return ExitCode.STRICT
        if self.verdict == "incomplete" and self.engine_failed:
            return ExitCode.ENGINE_ERROR
        return VERDICT_EXIT[self.verdict]

    @builtins.property
    def complete(self) -> bool:
        """Whether the search explored every reachable state (an ok verdict, or a violation
        found on the whole state space: of a temporal property). `mc simulate` never does."""
        if self.simulation is not None:
            return False
        if self.verdict == "violation":  # of a temporal property or a reachability property
            return self.property is not None or bool(self.unreached)
        return self.verdict == "ok"

    @builtins.property
    def collision_probability(self) -> float:
        """TLC's "calculated (optimistic)" estimate that two distinct states shared a 64-bit
        fingerprint, so that one was never explored: each of the generated states that hit
        the set could have been a new state colliding with one of the distinct ones."""
        n = self.distinct_states
        return n * max(0, self.states_generated - n) / 2.0**64

    @builtins.property
    def collision_probability_observed(self) -> float | None:
        """TLC's estimate "based on the actual fingerprints": 1 / the smallest gap."""
        gap = self.closest_fingerprints
        return None if gap is None else 1.0 / gap

    @builtins.property
    def passed(self) -> bool:
        return self.exit_code == ExitCode.OK


@dataclass
class NotChecked:
    """A spec of a multi-spec run (`mc check specs/`) that could not be checked at all: it did
    not load (exit 150) or its constants did not fit (151). Reports list it with the rest."""

    spec: str  # path of the spec file
    message: str
    exit_code: ExitCode = ExitCode.SPEC_ERROR

    @property
    def spec_name(self) -> str:
        return self.spec.rsplit("/", 1)[-1].removesuffix(".py")

    @property
    def passed(self) -> bool:
        return False
