"""What the parts of a Model read of it: `Bound`, the protocol checker.model.core.Model
meets. The parts read it at each use, not once: a test or `mc ablate` may narrow a model's
invariants, reachables, step checks or way of meeting states after it is made."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from checker.compiled import Action, CompiledSpec, Constraint, Invariant
from checker.model.context import Context
from checker.steps import StepChecks
from checker.symmetry import Symmetry
from checker.values import kinds
from checker.values.record import Record


class Bound(Protocol):
    """A compiled spec bound for the engines (see checker.compiled.CompiledSpec)."""

    compiled: CompiledSpec
    actions: tuple[Action, ...]
    invariants: tuple[Invariant, ...]
    reachables: tuple[Invariant, ...]
    terminals: tuple[Invariant, ...]
    constraints: tuple[Constraint, ...]
    exclusions: tuple[Constraint, ...]
    action_constraints: tuple[Constraint, ...]
    steps: StepChecks | None
    view: Callable[[Record], Any] | None
    symmetry: Symmetry | None
    reduces: bool
    by_view: bool
    recheck_every: int
    slots: int

    @property
    def kinds(self) -> kinds.Kind: ...

    def initial_states(self) -> list[Record]: ...

    def context(self, by_view: bool = False, identified: bool = False) -> Context: ...
