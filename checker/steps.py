"""The checks of a step (s, t) the search takes: a spec's step properties (`@step_property`,
TLA+'s `[][A]_vars`) and refinements (`refines(...)`, TLA+'s `PROPERTY Abstract!Spec` without
fairness), and what a violation of one is (`StepViolation`). `Model.expand_batch` asks
`StepChecks.first_broken` once per expanded state, and only when the spec declares one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from checker.errors import EvaluationError, Interrupted, SpecError
from checker.values import show
from checker.values.record import Record

if TYPE_CHECKING:
    from checker.spec import Refinement, Spec

_ABSTRACT_CACHE = 1 << 16  # abstract states whose successors a refinement remembers
_MAPPED_CACHE = 1 << 14  # states whose abstract state a refinement remembers (few: their memory
# is outside the live-state budget; more hardly saves time on ewd998)


class StepViolation(EvaluationError):
    """Successor `index` of the state expanded (in `Model.expand`'s order) breaks the step
    check `name`: the search stops at that state, and its trace ends with that step."""

    def __init__(
        self, name: str, index: int, message: str, state: Record, detail: str = ""
    ) -> None:
        super().__init__("step property", name, message, state=state)
        self.index = index
        self.detail = detail  # why, beyond `message`: "it maps to no step of ..."

    def sentence(self, step: Any) -> str:
        """The violation in a sentence, naming `step` (checker.result.Step), the last one."""
        params = ", ".join(f"{k}={show(v)}" for k, v in step.params.items())
        said = f"{self.message} by the last step, {step.action}({params})"
        return f"{said}: {self.detail}" if self.detail else said


class ExcludedViolation(StepViolation):
    """Successor `index` fails a constraint that does not admit it (TLC's CONSTRAINT) and
    violates the invariant `name`: the search stops at the state expanded, and its trace ends
    with the step into that successor."""


class StepCheck:
    """A predicate of a step, with how its violation reads."""

    def __init__(self, name: str, fn: Callable[[Record, Record], Any], formula: str) -> None:
        self.name = name
        self.fn = fn
        self.formula = formula  # what it says, for the reports

    def broken(self, s: Record, t: Record) -> str | None:
        """Why the step from `s` to `t` breaks it (beyond that it does), or None."""
        try:
            ok = self.fn(s, t)
        except (Interrupted, EvaluationError):
            raise
        except BaseException as exc:
            raise EvaluationError(
                "step property",
                self.name,
                f"raised {type(exc).__name__}: {exc}",
                state=s,
                cause=exc,
            ) from exc
        if ok is not True and ok is not False:
            raise EvaluationError(
                "step property",
                self.name,
                f"returned {ok!r}; a step property returns True or False",
                state=s,
            )
        return None if ok else ""

    def violated(self) -> str:
        """That it is violated, in words."""
        return f"step property {self.name} is violated"

    def first_broken(self, s: Record, successors: Sequence[Record]) -> tuple[int, str] | None:
        """The first of the steps from `s` to `successors` that breaks it, and why."""
        for index, t in enumerate(successors):
            why = self.broken(s, t)
            if why is not None:
                return index, why
        return None

    def initial_broken(self, s: Record) -> str | None:
        """Why the initial state `s` breaks it, in a sentence, or None (a step property says
        nothing of initial states)."""
        return None

    def forget(self) -> None:
        """Drop what it remembers of the states met (none: a Refines remembers)."""


class Refines(StepCheck):
    """`refines(Abstract, mapping)` at work: the abstract spec's model, the mapping, and the
    abstract successors of the abstract states met (remembered: many concrete steps map to
    steps from one abstract state). The abstract states of the last states met are remembered
    too: a state is reached by many steps (a search generates each distinct state several
    times) and is expanded after it was reached, and its mapping, a function of the state,
    gives the same abstract state each time."""

    def __init__(
        self, name: str, spec: Spec, refinement: Refinement, model_class: type, where: str
    ) -> None:
        abstract_class = refinement.abstract
        self.abstract_name = abstract_class.__name__
        try:
            abstract = abstract_class(**refinement.constants_of(spec))
        except (KeyError, TypeError, ValueError) as exc:
            detail = f"no constant {exc}" if isinstance(exc, KeyError) else str(exc)
            raise SpecError(
                f"{where}: {type(spec).__name__}.{name}: the constants of {self.abstract_name}"
                f" do not fit: {detail}"
            ) from None
        self.model = model_class(abstract)  # a checker.model.Model (which imports this module)
        self.mapping = refinement.mapping_of(spec)
        super().__init__(
            name, lambda s, t: self.broken(s, t) is None, f"refines {self.abstract_name}"
        )
        self._successors: dict[Record, frozenset[Record]] = {}
        self._mapped: dict[Record, Record] = {}
        self._initial: frozenset[Record] | None = None
        self._shape: type | None = None

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without its caches, nor with the abstract
        states' shape, a class of this process (an executor finds its own)."""
        return {
            **self.__dict__,
            "_successors": {},
            "_mapped": {},
            "_initial": None,
            "_shape": None,
        }

    def mapped(self, s: Record) -> Record:
        """The abstract state of `s`."""
        try:
            a = self.mapping(s)
        except (Interrupted, EvaluationError):
            raise
        except BaseException as exc:
            raise EvaluationError(
                "refinement",
                self.name,
                f"raised {type(exc).__name__}: {exc}",
                state=s,
                cause=exc,
            ) from exc
        if a.__class__ is self._shape:
            return a
        variables = self.model.initial_states()[0].keys()
        if not isinstance(a, Record) or a.keys() != variables:
            raise EvaluationError(
                "refinement",
                self.name,
                f"mapped a state to {show(a)}, which is not a state of {self.abstract_name} (a"
                f" Record of {', '.join(map(str, variables))})",
                state=s,
            )
        self._shape = a.__class__  # the abstract states' shape: no need to look again
        return a

    def forget(self) -> None:
        self._successors.clear()
        self._mapped.clear()

    def abstract_successors(self, a: Record) -> frozenset[Record]:
        found = self._successors.get(a)
        if found is None:
            states: list[Record] = []
            self.model.successors(a, states, [])
            found = frozenset(states)
            if len(self._successors) >= _ABSTRACT_CACHE:
                self._successors.clear()
            self._successors[a] = found
        return found

    def first_broken(self, s: Record, successors: Sequence[Record]) -> tuple[int, str] | None:
        """As StepCheck's, with `s` mapped once for all its steps, and each state mapped once
        while it is remembered (`_mapped`)."""
        a = self.kept_mapped(s)
        explained = self.abstract_successors(a)
        kept_mapped = self.kept_mapped
        for index, t in enumerate(successors):
            b = kept_mapped(t)
            if b != a and b not in explained:
                return index, self.unexplained(a, b)
        return None

    def kept_mapped(self, s: Record) -> Record:
        """`mapped(s)`, remembered for the last _MAPPED_CACHE states (not for a state that
        cannot be hashed: a list inside, frozen later)."""
        kept = self._mapped
        try:
            a = kept.get(s)
        except TypeError:
            return self.mapped(s)
        if a is None:
            a = self.mapped(s)
            if len(kept) >= _MAPPED_CACHE:
                kept.clear()
            kept[s] = a
        return a

    def broken(self, s: Record, t: Record) -> str | None:
        a, b = self.mapped(s), self.mapped(t)
        return None if a == b or b in self.abstract_successors(a) else self.unexplained(a, b)

    def unexplained(self, a: Record, b: Record) -> str:
        return f"it maps to no step of {self.abstract_name}, from {show(a)} to {show(b)}"

    def violated(self) -> str:
        return f"refinement {self.name} ({self.formula}) is violated"

    def initial_broken(self, s: Record) -> str | None:
        if self._initial is None:
            self._initial = frozenset(self.model.initial_states())
        a = self.mapped(s)
        if a in self._initial:
            return None
        return (
            f"{self.violated()}: the initial state maps to {show(a)}, no initial state of"
            f" {self.abstract_name}"
        )


class StepChecks:
    """Every step check of a model, in declaration order (step properties, then
    refinements)."""

    def __init__(self, checks: Sequence[StepCheck]) -> None:
        self.checks = tuple(checks)

    def first_broken(self, s: Record, successors: Sequence[Record]) -> None:
        """Raise StepViolation for the first successor of `s` (in order) whose step breaks a
        check (the first check it breaks)."""
        first: tuple[int, str, StepCheck] | None = None
        for check in self.checks:
            found = check.first_broken(s, successors if first is None else successors[: first[0]])
            if found is not None:
                first = (*found, check)
        if first is not None:
            index, why, check = first
            raise StepViolation(check.name, index, check.violated(), s, why)

    def initial_broken(self, s: Record) -> tuple[str, str] | None:
        """The first check the initial state `s` breaks, and why; or None."""
        for check in self.checks:
            why = check.initial_broken(s)
            if why is not None:
                return check.name, why
        return None

    def forget(self) -> None:
        """Drop what the checks remember of the states met: after a search, what they hold is
        no use, and the cyclic collector, on again, would walk it (seconds)."""
        for check in self.checks:
            check.forget()

    def formulas(self) -> dict[str, str]:
        return {c.name: c.formula for c in self.checks}
