"""What a spec author writes: a `Spec` subclass with constants, `init`, actions and invariants
(declared with the functions of checker/declarations.py; this module has the Spec class, the
marks and classes those functions leave in a class body, and reads them off a Spec class).

    class Counter(Spec):
        limit = constant(3, "largest value")

        def init(self):
            return Record(x=0)

        @action(step=(1, 2))
        def increment(self, s, step):
            if s.x + step > self.limit:      # guard first
                return None
            return s.replace(x=s.x + step)   # then the effect

        @invariant
        def within_limit(self, s):
            return s.x <= self.limit

An action returns None (disabled), one successor Record, or a list of successors. Each
keyword of `@action` gives a parameter's finite domain: a literal iterable, the name of a spec
attribute (e.g. a property over constants), or a function of the state (e.g. the messages in
flight). Sets are enumerated in canonical order so that runs are deterministic.

Temporal properties (checked by checker.liveness) and the fairness they assume:

        @action(step=(1, 2), fair="weak")    # WF of the action: of any of its bindings
        def increment(self, s, step): ...

        @eventually
        def at_limit(self, s):
            return s.x == self.limit

        x_grows = leads_to(lambda s: s.x == 0, lambda s: s.x > 0)
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from checker.errors import SpecError
from checker.values.record import Record

__all__ = ["AllRules", "Constant", "Fairness", "LeadsTo", "On", "Refinement", "Rule", "Spec"]

MARK_ACTION = "__mc_action__"
MARK_FAIR = "__mc_fair__"
MARK_INVARIANT = "__mc_invariant__"
MARK_CONSTRAINT = "__mc_constraint__"  # its value: whether a state outside it is admitted
MARK_STEP = "__mc_step__"
MARK_REFINES = "__mc_refines__"
MARK_ACTION_CONSTRAINT = "__mc_action_constraint__"
MARK_PROPERTY = "__mc_property__"  # its value is the property's kind
MARK_ON = "__mc_on__"
MARK_ASSUME = "__mc_assume__"
MARK_REACHABLE = "__mc_reachable__"
MARK_TERMINAL = "__mc_terminal__"
MARK_SWITCH = "__mc_switch__"
FAIRNESS_KINDS = ("weak", "strong")


class Constant:
    """A spec constant with a default, overridable with `-D NAME=VALUE`; an int may be bounded
    (`min`, `max`) and any constant limited to `choices`."""

    def __init__(
        self,
        default: int | bool | str,
        doc: str = "",
        *,
        min: int | None = None,
        max: int | None = None,
        choices: Iterable[int | bool | str] | None = None,
    ) -> None:
        if type(default) not in (int, bool, str):
            raise TypeError(f"a constant's default must be an int, bool or str, not {default!r}")
        for bound, value in (("min", min), ("max", max)):
            if value is not None and (type(default) is not int or type(value) is not int):
                raise TypeError(
                    f"constant(..., {bound}={value!r}) bounds an int constant by an int"
                )
        self.default = default
        self.doc = doc
        self.min = min
        self.max = max
        self.choices = tuple(choices) if choices is not None else None
        if self.choices is not None:
            wrong = [c for c in self.choices if type(c) is not type(default)]
            if not self.choices or wrong:
                raise TypeError(
                    f"constant(..., choices=...) lists values of the default's type"
                    f" ({type(default).__name__}), not {self.choices!r}"
                )
        self.name = ""
        problem = self.problem(default)
        if problem is not None:
            raise TypeError(f"a constant's default {default!r} is out of its range: {problem}")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def problem(self, value: int | bool | str) -> str | None:
        """Why `value` is not allowed (its range or choices), or None."""
        if self.min is not None and value < self.min:  # type: ignore[operator]
            return f"it must be at least {self.min}"
        if self.max is not None and value > self.max:  # type: ignore[operator]
            return f"it must be at most {self.max}"
        if self.choices is not None and value not in self.choices:
            return f"it must be one of {', '.join(map(repr, self.choices))}"
        return None

    def refuse(self, value: int | bool | str) -> str | None:
        """The message refusing `value`, with the constant's doc, or None if it is allowed."""
        problem = self.problem(value)
        if problem is None:
            return None
        return f"{self.name}={value}: {problem}" + (f" ({self.doc})" if self.doc else "")

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        # Non-data descriptor: an instance's own value (set by Spec.__init__) shadows this.
        return self if obj is None else self.default

    @property
    def type(self) -> type:
        return type(self.default)

    def parse(self, text: str) -> int | bool | str:
        """Parse a command-line value, typed from the default; ValueError if it does not fit."""
        kind = self.type
        if kind is bool:
            lowered = text.strip().lower()
            if lowered in ("true", "yes", "on", "1"):
                return True
            if lowered in ("false", "no", "off", "0"):
                return False
            raise ValueError(f"expected true or false, got {text!r}")
        if kind is int:
            try:
                return int(text.strip())  # decimal, leading zeros and _ allowed
            except ValueError:
                pass
            try:
                return int(text.strip(), 0)  # 0x10, 0o7, 0b1
            except ValueError:
                raise ValueError(f"expected an integer, got {text!r}") from None
        return text


class Rule(Constant):
    """A rule of the protocol change a spec models: a bool constant, on by default, that says
    in one line what the KIP's step does. `-D NAME=false` switches it off alone; `mc ablate`
    checks the spec with each rule off in turn."""

    def __init__(self, doc: str) -> None:
        if not isinstance(doc, str) or not doc.strip() or "\n" in doc.strip():
            raise TypeError(
                f"rule(...) takes the rule's description, one line from the KIP, not {doc!r}"
            )
        super().__init__(True, doc.strip())


class AllRules(Constant):
    """The bool constant that switches every rule of the spec at once (a KIP's `fixed`):
    false takes the protocol change out, leaving on only the rules given with -D."""

    def __init__(self, doc: str) -> None:
        super().__init__(True, doc)


@dataclass(frozen=True)
class Fairness:
    """The fairness an action is assumed to have, for temporal properties (TLA+'s WF and SF).

    `whole`: of the action as a whole, enabled when any binding is: WF_vars(\\E b: A(b)).
    `each`: of every binding of its parameters on its own: \\A b: WF_vars(A(b)).
    """

    whole: str | None = None  # "weak", "strong" or None
    each: str | None = None


@dataclass(frozen=True)
class On:
    """Where an action happens, for sequence charts: the process it runs on and the message it
    sends, receives or exchanges. Each string is a template formatted with the action's
    parameters and `s`, the state before the step: "broker {b}", "broker {s.leader}"."""

    process: str
    sends: str | None = None  # to this process; delivered by a later step
    receives: str | None = None  # from this process; sent by an earlier step
    calls: str | None = None  # request and response within this one step
    message: str | None = None  # the message's name, e.g. "AlterPartition"

    def __post_init__(self) -> None:
        peers = [p for p in (self.sends, self.receives, self.calls) if p is not None]
        if len(peers) > 1:
            raise TypeError("@on takes at most one of sends=, receives=, calls=")
        if peers and not self.message:
            raise TypeError("@on with sends=, receives= or calls= needs message=")


def on_of(fn: Callable[..., Any]) -> On | None:
    return getattr(fn, MARK_ON, None)


def as_method(fn: Callable[..., Any], arity: int = 1, decorator: str = "") -> Callable[..., Any]:
    """A method `(self, ...)` as it is; a shared predicate of `arity` states (e.g. from
    `invariants/`) wrapped so it can sit in a class body. A method whose state parameter was
    forgotten (`def small(self)`) would pass for a shared predicate, `self` then being the
    state: it is refused."""
    if not callable(fn):
        raise TypeError(f"expected a predicate (self, s) or (s), not {fn!r}")
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(params) != arity:
        return fn
    if params[0].name == "self":
        states = "s" if arity == 1 else "s, t"
        code = getattr(fn, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}: " if code is not None else ""
        shown = ", ".join(p.name for p in params)
        raise SpecError(
            f"{where}{decorator or 'the predicate'} {getattr(fn, '__name__', fn)} takes"
            f" ({shown}): its state parameter is missing; write ({shown}, {states})"
        )
    shared = fn

    @functools.wraps(shared)
    def method(self: Spec, *states: Record) -> Any:
        return shared(*states)

    method.__mc_shared__ = shared  # type: ignore[attr-defined]  # the engine calls it directly
    return method


def _name(fn: Callable[..., Any], default: str) -> str:
    name = getattr(fn, "__name__", "")
    return default if not name or name == "<lambda>" else name


class LeadsTo:
    """P ~> Q, declared in a class body as `name = leads_to(p, q)`: in every fair behaviour,
    each state where P holds is followed (or itself satisfied) by one where Q holds. With
    domains (`leads_to(p, q, b="brokers")`), TLA+'s `\\A b \\in Brokers: P(b) ~> Q(b)`: one
    such property per binding, `p` and `q` taking `(self, s, b)`."""

    __mc_property__ = "leads_to"  # the marker (MARK_PROPERTY) that properties_of looks for
    formula_shape = "{p} ~> {q}"

    def __init__(
        self,
        p: Callable[..., Any],
        q: Callable[..., Any],
        doc: str = "",
        domains: dict[str, Any] | None = None,
    ) -> None:
        self.domains = dict(domains or {})
        arity = 1 + len(self.domains)
        self.p = as_method(p, arity, self.__mc_property__)
        self.q = as_method(q, arity, self.__mc_property__)
        self._names = (_name(p, "P"), _name(q, "Q"))
        params = ", ".join(self.domains)
        self.formula = f"\\A {params}: {self.formula_of(params)}" if params else self.formula_of()
        self.__doc__ = doc

    def formula_of(self, args: str = "") -> str:
        """The formula with `args` after each predicate's name: "b" gives `P(b) ~> Q(b)`,
        "b=1" the formula of one binding."""
        p, q = self._names
        shown = f"({args})" if args else ""
        return self.formula_shape.format(p=p + shown, q=q + shown)


class AlwaysEventuallyLeadsTo(LeadsTo):
    """[](<>(P ~> Q)), declared as `name = always_eventually_leads_to(p, q)`: from some point
    on, P leads to Q; that is, in every fair behaviour where P holds again and again, so does
    Q ([]<>P => []<>Q). Domains as for `leads_to`."""

    __mc_property__ = "always_eventually_leads_to"
    formula_shape = "[]<>({p} ~> {q})"


class Refinement:
    """That this spec refines `abstract` under `mapping` (TLA+'s `INSTANCE Abstract WITH ...`
    and `PROPERTY A!Spec` without its fairness), declared as `name = refines(...)`: each
    initial state maps to an initial state of `abstract`, and each step maps to a step of
    `abstract` (some action with some binding takes the mapped state to the mapped
    successor) or to a stutter (both map to the same abstract state)."""

    __mc_refines__ = True

    def __init__(
        self,
        abstract: type,
        mapping: Callable[..., Any] | str,
        constants: dict[str, Any] | Callable[..., dict[str, Any]] | None,
        doc: str,
    ) -> None:
        if not (isinstance(abstract, type) and issubclass(abstract, Spec)):
            raise TypeError(f"refines(...) takes the abstract Spec class first, not {abstract!r}")
        if not (isinstance(mapping, str) or callable(mapping)):
            raise TypeError(
                f"refines(..., mapping) is a method (self, s), its name, or a function (s), not"
                f" {mapping!r}"
            )
        if constants is not None and not (isinstance(constants, dict) or callable(constants)):
            raise TypeError(
                f"refines(..., constants=) is a dict or a method (self) -> dict, not {constants!r}"
            )
        self.abstract = abstract
        self.mapping = mapping
        self.constants = constants
        self.__doc__ = doc

    def mapping_of(self, spec: Spec) -> Callable[[Record], Any]:
        """The mapping as a function of a state, for the spec instance `spec`."""
        mapping = self.mapping
        if isinstance(mapping, str):
            found = getattr(spec, mapping, None)
            if not callable(found):
                raise SpecError(
                    f"refines({self.abstract.__name__}, {mapping!r}): {type(spec).__name__} has"
                    f" no method {mapping!r}"
                )
            return found  # type: ignore[no-any-return]
        return functools.partial(as_method(mapping, 1, "refines"), spec)

    def constants_of(self, spec: Spec) -> dict[str, Any]:
        """The abstract spec's constants, for the spec instance `spec`."""
        constants = self.constants
        if constants is None:
            return {}
        if callable(constants):
            constants = constants(spec)
        return dict(constants)  # type: ignore[arg-type]


def _role(value: Any) -> str | None:
    """What a class-body member is to mc, if anything."""
    if getattr(value, MARK_ACTION, None) is not None:
        return "an @action"
    if getattr(value, MARK_INVARIANT, None) is not None:
        return "an @invariant"
    if getattr(value, MARK_REACHABLE, None) is not None:
        return "a @reachable"
    if getattr(value, MARK_TERMINAL, None) is not None:
        return "a @terminal"
    if getattr(value, MARK_ASSUME, None) is not None:
        return "an @assume"
    if getattr(value, MARK_CONSTRAINT, None) is not None:
        return "a @constraint"
    if getattr(value, MARK_STEP, None) is not None:
        return "a @step_property"
    if getattr(value, MARK_REFINES, None) is not None:
        return "a refinement"
    if getattr(value, MARK_ACTION_CONSTRAINT, None) is not None:
        return "an @action_constraint"
    if getattr(value, MARK_PROPERTY, None) is not None:
        return "a temporal property"
    if isinstance(value, Constant):
        return "a constant"
    return None


class _ClassBody(dict):  # type: ignore[type-arg]
    """The namespace a Spec class body runs in. Python lets a second `def step` silently replace
    the first, so one of two actions (or invariants, or constants) of the same name would never
    be checked: here it is an error that names both lines."""

    def __init__(self, owner: str) -> None:
        super().__init__()
        self.owner = owner
        self.lines: dict[str, int] = {}

    def __setitem__(self, name: str, value: Any) -> None:
        body = sys._getframe(1)  # the class body's frame: where this name is bound
        old = self.get(name)
        redefined = name in self and inspect.unwrap(value) is not inspect.unwrap(old)
        if redefined and (_role(old) or _role(value)):  # `step = action(step)` is fine
            first, again = _role(old) or "a plain member", _role(value) or "a plain member"
            raise SpecError(
                f"{body.f_code.co_filename}:{body.f_lineno}: {self.owner}.{name} is defined twice"
                f" ({first} on line {self.lines[name]}, {again} on line {body.f_lineno}); Python"
                " would keep only the second: rename one"
            )
        self.lines[name] = body.f_lineno
        super().__setitem__(name, value)


class _SpecMeta(type):
    @classmethod
    def __prepare__(mcs, name: str, bases: tuple[type, ...], **kwargs: Any) -> _ClassBody:
        return _ClassBody(name)


_SCALARS = (int, float, str, bytes, type(None), range)


def _immutable(value: Any) -> bool:
    """Whether a value can be shared by every caller: a number, string, range or None, or a
    tuple, frozenset or Record of such values (not an iterator, used up once)."""
    if isinstance(value, _SCALARS):
        return True
    if type(value) in (tuple, frozenset):
        return all(_immutable(v) for v in value)
    if isinstance(value, Record):
        return all(_immutable(v) for v in value.values())
    return False


class _ConstantLevel:
    """A property of a Spec subclass (no state: a function of the constants, TLA+'s constant
    definition such as `Proc == 1..N`), computed once per spec object when its value is
    immutable (`_immutable`), as TLC computes a constant definition once: actions read it in
    every state. Setting any attribute of the spec forgets the values kept (Spec.__setattr__)."""

    def __init__(self, prop: property, name: str) -> None:
        self.prop, self.name = prop, name
        self.__doc__ = prop.__doc__

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self.prop
        value = self.prop.__get__(obj, owner)
        if _immutable(value) and self._resolves(type(obj)):
            vars(obj)[self.name] = value  # (an instance attribute: found before this)
        return value

    def _resolves(self, cls: type) -> bool:
        """Whether `cls.<name>` is this (not a subclass's override calling super())."""
        for klass in cls.__mro__:
            if self.name in vars(klass):
                return vars(klass)[self.name] is self
        return False


class Spec(metaclass=_SpecMeta):
    """Base class of specs. Subclasses declare constants, `init`, actions and invariants."""

    __constant_level: tuple[str, ...] = ()  # the names of its _ConstantLevel properties

    def __init__(self, **constants: Any) -> None:
        declared = constants_of(type(self))
        for name, value in constants.items():
            if name not in declared:
                raise KeyError(name)
            expected = declared[name].type
            if type(value) is not expected:
                raise TypeError(
                    f"constant {name} is a {expected.__name__}, not {type(value).__name__}"
                )
            refused = declared[name].refuse(value)
            if refused is not None:
                raise ValueError(refused)
            setattr(self, name, value)
        switch = all_rules_of(type(self))
        if switch is not None and not getattr(self, switch):
            for name in rules_of(type(self)):
                if name not in constants:  # a rule given with -D keeps its value
                    setattr(self, name, False)
        for name, const in declared.items():  # every guard reads them: plain attributes
            vars(self).setdefault(name, const.default)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        all_rules_of(cls)  # at most one all_rules constant
        for name, member in list(vars(cls).items()):
            if type(member) is property and member.fset is None and member.fdel is None:
                setattr(cls, name, _ConstantLevel(member, name))
        cls.__constant_level = tuple(
            n for n, m in _members(cls).items() if isinstance(m, _ConstantLevel)
        )

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        for kept in self.__constant_level:  # (a constant changed: computed again)
            vars(self).pop(kept, None)

    def init(self) -> Record | Iterable[Record]:
        """The initial state, or several."""
        raise NotImplementedError

    # Optional: the names of all the actions, in the order the search tries them (TLA+'s
    # Next A \/ B \/ C). By default: definition order, base classes first, an override in the
    # place of the action it overrides, a subclass's new actions after the inherited ones.
    action_order: tuple[str, ...] | None = None

    # A state variable's type, where the initial states do not show it (TLA+'s TypeOK), is a
    # bare annotation in the class body: `leader: int | None` (see checker.values.kinds). Every
    # other variable's kind is taken from the initial states.

    # Optional, like TLC's VIEW: `def view(self, s)` returns the part of state `s` that
    # identifies it (e.g. without a history variable); states with equal views are one state.
    view: Callable[[Record], Any] | None = None

    # Optional, like TLC's SYMMETRY: names of spec attributes (e.g. "broker_ids") whose values
    # are interchangeable, and `def permute(self, s, p)`, which returns state `s` with every
    # one of those values `v` replaced by `p(v)` (checker.symmetry.Permutation).
    symmetry: tuple[str, ...] = ()
    permute: Callable[[Record, Any], Record] | None = None

    @property
    def constants(self) -> dict[str, Any]:
        """The values of all constants, in declaration order."""
        return {name: getattr(self, name) for name in constants_of(type(self))}

    @property
    def rules(self) -> dict[str, bool]:
        """Each rule of the spec (`rule(...)`) and whether it is on in this run."""
        return {name: getattr(self, name) for name in rules_of(type(self))}


def _members(cls: type) -> dict[str, Any]:
    """Class attributes by name in definition order; an override keeps the base's position."""
    members: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        members.update(vars(klass))
    return members


def constants_of(cls: type) -> dict[str, Constant]:
    return {n: v for n, v in _members(cls).items() if isinstance(v, Constant)}


def rules_of(cls: type) -> dict[str, Rule]:
    """The rules a spec declares (`rule(...)`), in declaration order; an inherited one that a
    subclass sets to a plain value (`fenced_ineligible = True`) is no rule of the subclass."""
    return {n: v for n, v in constants_of(cls).items() if isinstance(v, Rule)}


def all_rules_of(cls: type) -> str | None:
    """The name of the constant that switches every rule (`all_rules(...)`), or None."""
    names = [n for n, v in constants_of(cls).items() if isinstance(v, AllRules)]
    if len(names) > 1:
        raise TypeError(
            f"{cls.__name__} declares {len(names)} all_rules constants ({', '.join(names)}):"
            " one switches every rule"
        )
    return names[0] if names else None


def _marked(cls: type, marker: str, decorator: str, noun: str = "") -> dict[str, Any]:
    """Members carrying `marker`, in definition order (bases first). An override must be
    marked again (else it would silently stop being checked); `name = None` removes one."""
    noun = noun or f"{'an' if decorator[1] in 'aeiou' else 'a'} {decorator[1:]}"
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if getattr(value, marker, None) is not None:
                found[name] = value
            elif name in found:
                if value is not None:
                    raise TypeError(
                        f"{klass.__name__}.{name} overrides {noun}: decorate it with {decorator}"
                    )
                del found[name]
    return found


def actions_of(cls: type) -> dict[str, tuple[Callable[..., Any], dict[str, Any]]]:
    """Actions as name -> (function, domains), in definition order (bases first)."""
    marked = _marked(cls, MARK_ACTION, "@action")
    return {n: (f, getattr(f, MARK_ACTION)) for n, f in marked.items()}


def invariants_of(cls: type) -> dict[str, Callable[..., Any]]:
    """Invariants by name, in definition order (bases first)."""
    return _marked(cls, MARK_INVARIANT, "@invariant")


def constraints_of(cls: type) -> dict[str, Callable[..., Any]]:
    """State constraints by name, in definition order (bases first)."""
    return _marked(cls, MARK_CONSTRAINT, "@constraint")


def admits(fn: Callable[..., Any]) -> bool:
    """Whether a state constraint admits the states outside it as distinct states."""
    return getattr(fn, MARK_CONSTRAINT) is not False


def step_properties_of(cls: type) -> dict[str, Callable[..., Any]]:
    """Step properties by name, in definition order (bases first)."""
    return _marked(cls, MARK_STEP, "@step_property")


def refinements_of(cls: type) -> dict[str, Refinement]:
    """Refinements (`name = refines(...)`) by name, in definition order (bases first)."""
    return _marked(cls, MARK_REFINES, "refines(...)", "a refinement")


def action_constraints_of(cls: type) -> dict[str, Callable[..., Any]]:
    """Action constraints by name, in definition order (bases first)."""
    return _marked(cls, MARK_ACTION_CONSTRAINT, "@action_constraint")


def properties_of(cls: type) -> dict[str, Any]:
    """Temporal properties by name, in definition order (bases first): methods marked with
    @eventually or @always_eventually, and `leads_to(...)` objects."""
    return _marked(
        cls,
        MARK_PROPERTY,
        "@eventually, @always_eventually, leads_to(...) or always_eventually_leads_to(...)",
        "a temporal property",
    )


def reachables_of(cls: type) -> dict[str, Callable[..., Any]]:
    """Reachability properties by name, in definition order (bases first)."""
    return _marked(cls, MARK_REACHABLE, "@reachable")


def terminals_of(cls: type) -> dict[str, Callable[..., Any]]:
    """The predicates of intended final states by name, in definition order (bases first)."""
    return _marked(cls, MARK_TERMINAL, "@terminal")


def assumptions_of(cls: type) -> dict[str, Callable[..., Any]]:
    """Assumptions about the constants by name, in definition order (bases first)."""
    return _marked(cls, MARK_ASSUME, "@assume")


def property_kind(member: Any) -> str:
    """A temporal property's kind: eventually, always_eventually, leads_to or
    always_eventually_leads_to."""
    return getattr(member, MARK_PROPERTY)


def switches_of(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The constants that `@action(switch=...)` says switch an action on (none: ())."""
    return getattr(fn, MARK_SWITCH, ())


def fairness_of(fn: Callable[..., Any]) -> Fairness:
    """The fairness `@action` declared for an action's function (none: Fairness())."""
    return getattr(fn, MARK_FAIR, Fairness())
