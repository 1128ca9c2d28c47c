"""A Spec instance compiled: its actions with resolved domains and orders, invariants,
reachability properties, constraints, view and symmetry, checked for the mistakes a spec
can make before any state is explored. `checker.model` runs it."""

from __future__ import annotations

import difflib
import dis
import functools
import inspect
import itertools
import math
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from checker import templates
from checker.errors import OUTSIDE, ConfigError, EvaluationError, SpecError, raised
from checker.result import Event
from checker.spec import (
    On,
    Spec,
    action_constraints_of,
    actions_of,
    admits,
    constants_of,
    constraints_of,
    invariants_of,
    on_of,
    reachables_of,
    refinements_of,
    step_properties_of,
    switches_of,
    terminals_of,
)
from checker.symmetry import Symmetry
from checker.values import fast, kinds
from checker.values.encoding import canonical_order
from checker.values.record import Record

Binding = tuple[Any, ...]


def domain_order(values: Iterable[Any]) -> tuple[Any, ...]:
    """Sets have no stable iteration order across processes: put them in canonical order.
    A domain that is a set in the state (the messages in flight) is the same set object in
    many states, so its order is cached by the set's identity."""
    if type(values) is frozenset:
        if not values:
            return ()
        order = _orders.get(id(values))
        if order is None:
            order = tuple(canonical_order(values))
            if len(_orders) >= _ORDERS:
                _orders.clear()
                _ordered.clear()
            _orders[id(values)] = order
            _ordered.append(values)  # held, so that its id is not reused while cached
        return order
    if isinstance(values, (set, frozenset)):
        return tuple(values) if len(values) <= 1 else tuple(canonical_order(values))
    if type(values) in (tuple, list, range):
        if len(values) > MAX_DOMAIN:
            raise DomainTooLarge(too_large(len(values)))
        return tuple(values)
    found = tuple(itertools.islice(values, MAX_DOMAIN + 1))  # an iterator may never end
    if len(found) > MAX_DOMAIN:
        raise DomainTooLarge(too_large(None))
    return found


MAX_DOMAIN = 1_000_000  # values of a parameter's domain, and bindings of an action, at most


class DomainTooLarge(ValueError):
    """A domain (or the bindings of an action) too large to use: an endless iterator, or a
    mistake (`range(10**9)`)."""


def too_large(size: int | None) -> str:
    what = "has no end" if size is None else f"has {size:,} values"
    return (
        f"{what}, more than the {MAX_DOMAIN:,} that mc takes (an endless iterator such as"
        " itertools.count()?): give a finite domain"
    )


_ORDERS = 1 << 14
_orders: dict[int, tuple[Any, ...]] = {}
_ordered: list[frozenset[Any]] = []


@dataclass(frozen=True)
class Action:
    name: str
    fn: Callable[..., Any]  # bound method (s, *params)
    params: tuple[str, ...]
    # Per parameter: a tuple of values, or a function of the state giving them.
    domains: tuple[Any, ...]
    # All bindings when no domain depends on the state (computed once), else None.
    static_bindings: tuple[Binding, ...] | None
    # Per parameter: None for a tuple of values; for a function, the indexes of the earlier
    # parameters it takes after the state (`replica=lambda s, leader: ...`), () if none.
    depends: tuple[tuple[int, ...] | None, ...]
    on: On | None = None  # where it happens, for sequence charts

    def event(self, state: Record, binding: Binding) -> Event | None:
        """The sequence-chart event of this action fired with `binding` in `state`."""
        if self.on is None:
            return None
        try:
            return templates.event(self.on, {**self.describe(binding), "s": state})
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise EvaluationError(
                "action",
                self.name,
                f"its @on template failed: {type(exc).__name__}: {exc}",
                state=state,
                params=self.describe(binding),
            ) from exc

    def bindings(self, state: Record) -> Sequence[Binding]:
        """The bindings of the parameters in `state`: the product of their domains, the first
        parameter varying slowest (the twin of checker/hot/domains.c's state_bindings)."""
        if self.static_bindings is not None:
            return self.static_bindings
        return self._state_bindings(state)

    def values(self, state: Record) -> Sequence[Any]:
        """The values of a one-parameter action's parameter in `state` (bindings unpacked)."""
        domain = self.domains[0]
        if not callable(domain):
            return domain
        try:
            found = domain(state)
        except BaseException as exc:
            self.domain_failed(state, exc)
        return self.ordered(state, found)

    def ordered(
        self, state: Record, found: Any, index: int = 0, earlier: tuple[Any, ...] = ()
    ) -> tuple[Any, ...]:
        """The values of parameter `index` once its domain gave `found` in `state` (taking
        `earlier`, the values of the earlier parameters it depends on): in canonical order.
        (The successors loop in C asks this of what is neither a tuple, a list nor a set it
        has ordered.)"""
        try:
            return domain_order(found)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise self._domain_error(index, exc, state, earlier) from exc

    def domain_failed(
        self, state: Record, exc: BaseException, index: int = 0, earlier: tuple[Any, ...] = ()
    ) -> typing.NoReturn:
        """Raise the error of parameter `index`'s domain raising `exc` in `state` (given
        `earlier`, as `ordered`)."""
        if isinstance(exc, OUTSIDE):
            raise exc
        raise self._domain_error(index, exc, state, earlier) from exc

    def _state_bindings(self, state: Record) -> tuple[Binding, ...]:
        """The bindings when a domain is a function: built one parameter after another, a
        function of the state alone called once, a function of earlier parameters once per
        binding of those before it (`depends`: their indexes), in product order."""
        prefixes: list[Binding] = [()]
        for index, (domain, depends) in enumerate(zip(self.domains, self.depends)):
            if not callable(domain):
                prefixes = [p + (v,) for p in prefixes for v in domain]
            elif not depends:
                values = self._domain(index, domain, state, ())
                prefixes = [p + (v,) for p in prefixes for v in values]
            else:
                prefixes = [
                    p + (v,)
                    for p in prefixes
                    for v in self._domain(index, domain, state, tuple(p[i] for i in depends))
                ]
        return tuple(prefixes)

    def _domain(
        self, index: int, domain: Callable[..., Any], state: Record, earlier: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """Parameter `index`'s domain in `state` (given the values of the earlier parameters
        it takes), in canonical order."""
        try:
            found = domain(state, *earlier)
        except BaseException as exc:
            self.domain_failed(state, exc, index, earlier)
        return self.ordered(state, found, index, earlier)

    def _domain_error(
        self, index: int, exc: BaseException, state: Record, earlier: tuple[Any, ...]
    ) -> EvaluationError:
        """What parameter `index`'s domain raised (or its size), as the action's error, with
        the earlier parameters it took."""
        said = str(exc) if isinstance(exc, DomainTooLarge) else raised(exc)
        takes = self.depends[index] if index < len(self.depends) else None
        named = [self.params[i] for i in takes or ()]
        return EvaluationError(
            "action",
            self.name,
            f"the domain of parameter {self.params[index]!r} {said}",
            state=state,
            params=dict(zip(named, earlier)) if earlier else None,
            cause=exc,
        )

    def describe(self, binding: Binding) -> dict[str, Any]:
        return dict(zip(self.params, binding))


@dataclass(frozen=True)
class Invariant:
    name: str
    fn: Callable[[Record], Any]


@dataclass(frozen=True)
class Constraint:
    name: str
    fn: Callable[..., Any]  # (s) for a state constraint, (s, t) for an action constraint


class CompiledSpec:
    """What the spec declares, resolved and checked: no state has been computed yet."""

    def __init__(
        self,
        spec: Spec,
        path: str = "",
        invariants: Sequence[str] | None = None,
        symmetry: bool = True,
        view: bool = True,
    ):
        """`symmetry=False` ignores the symmetry the spec declares (`mc check --no-symmetry`),
        `view=False` its view (`--no-view`): every variable then identifies a state."""
        self.spec = spec
        self.path = path
        cls = type(spec)
        self.name = cls.__name__
        self.title = (inspect.getdoc(cls) or cls.__name__).splitlines()[0]
        self.constants = spec.constants
        try:  # an action or predicate overridden without its decorator is a TypeError
            found, predicates = actions_of(cls), invariants_of(cls)
            bounds, steps = constraints_of(cls), action_constraints_of(cls)
            wanted, finals = reachables_of(cls), terminals_of(cls)
            step_props, refined = step_properties_of(cls), refinements_of(cls)
        except TypeError as exc:
            raise SpecError(f"{path}: {exc}" if path else str(exc)) from None
        found = self._ordered(found, spec.action_order)
        self.actions = tuple(self._compile_action(n, f, d) for n, (f, d) in found.items())
        if not self.actions:
            raise SpecError(f"{self.name} declares no actions (decorate methods with @action)")
        # What `Model.successors` loops over: (index, function, arity, static bindings, action,
        # domains), the bindings of a one-parameter action as bare values (no argument
        # unpacking); when the bindings depend on the state, the domain of a one-parameter
        # action, else each parameter's (domain, depends) (see Action.depends), from which C
        # builds the bindings as Action.bindings does.
        self.plan = tuple(
            (
                ai,
                act.fn,
                len(act.params),
                None
                if act.static_bindings is None
                else tuple(b for (b,) in act.static_bindings)
                if len(act.params) == 1
                else act.static_bindings,
                act,
                None
                if act.static_bindings is not None
                else act.domains[0]
                if len(act.params) == 1
                else tuple(zip(act.domains, act.depends)),
            )
            for ai, act in enumerate(self.actions)
        )
        declared = {n: Invariant(n, evaluated_once(spec, n)) for n in predicates}
        if invariants is not None:
            unknown = [n for n in invariants if n not in declared]
            if unknown:
                raise ConfigError(
                    f"--invariant {unknown[0]}: {self.name} has no such invariant"
                    f" (invariants: {', '.join(declared) or 'none'})"
                )
            self.invariants = tuple(declared[n] for n in invariants)
        else:
            self.invariants = tuple(declared.values())
        # Reachability properties: each must hold in some reachable state; those the
        # constants switch off (name -> "max_crashes=0") are not checked.
        constants = constants_of(cls)
        for n, f in wanted.items():
            unknown = [c for c in switches_of(f) if c not in constants]
            if unknown:
                raise SpecError(
                    f"{path or self.name}: reachable {n}: switch={unknown[0]!r} is not a"
                    f" constant ({', '.join(constants) or 'none'})"
                )
        self.reachables_off = {
            n: describe_switch(spec, switches_of(f))
            for n, f in wanted.items()
            if switches_of(f) and not any(getattr(spec, c) for c in switches_of(f))
        }
        self.reachables = tuple(
            Invariant(n, _predicate(spec, n)) for n in wanted if n not in self.reachables_off
        )
        # The spec's intended final states: no successor there is no deadlock.
        self.terminals = tuple(Invariant(n, _predicate(spec, n)) for n in finals)
        # State constraints: those that admit the states outside them (counted, not
        # expanded), and those that do not (TLC's CONSTRAINT: checked, then dropped).
        self.constraints = tuple(
            Constraint(n, _predicate(spec, n)) for n, f in bounds.items() if admits(f)
        )
        self.exclusions = tuple(
            Constraint(n, _predicate(spec, n)) for n, f in bounds.items() if not admits(f)
        )
        # Checks of every step: step properties, and refinements (checker.steps).
        self.step_properties = tuple(Invariant(n, _predicate(spec, n)) for n in step_props)
        self.refinements = tuple(refined.items())
        self.action_constraints = tuple(Constraint(n, _predicate(spec, n)) for n in steps)
        if spec.view is not None and not callable(spec.view):
            raise SpecError(f"{self.name}.view must be a method view(self, s), not {spec.view!r}")
        # The view in use (None: none declared, or turned off). Liveness checking must refuse
        # it, as symmetry: a cycle among merged states need not be a cycle among real states.
        self.view: Callable[[Record], Any] | None = spec.view if view else None
        # The symmetry in use (None: none declared, or turned off). Liveness checking must
        # refuse it: a cycle among representatives need not be a cycle among real states.
        self.symmetry: Symmetry | None = Symmetry.of(spec) if symmetry else None
        # Whether states are identified by more than their encoding.
        self.reduces = self.view is not None or self.symmetry is not None
        # The state variables' types the spec declares (bare annotations), by name.
        self.declared_types = self._declared_types(spec)

    def _ordered(self, found: dict[str, Any], order: Sequence[str] | None) -> dict[str, Any]:
        """The actions in the spec's `action_order`, which names each of them once."""
        if order is None:
            return found
        where = f"{self.path or self.name}: {self.name}.action_order"
        if isinstance(order, str) or not all(isinstance(n, str) for n in order):
            raise SpecError(f"{where} must be a tuple of action names, not {order!r}")
        names = list(order)
        unknown = [n for n in names if n not in found]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(found), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(f"{where} names {unknown[0]!r}, which is no action{hint}")
        twice = [n for n in names if names.count(n) > 1]
        if twice:
            raise SpecError(f"{where} names {twice[0]!r} twice")
        missing = [n for n in found if n not in names]
        if missing:
            raise SpecError(f"{where} leaves out {', '.join(missing)}: name every action once")
        return {n: found[n] for n in names}

    def _declared_types(self, spec: Spec) -> dict[str, kinds.Kind]:
        """The state variables' types the spec declares: its bare annotations (`leader: int |
        None`, no value), in its class and its bases."""
        out: dict[str, kinds.Kind] = {}
        for klass in reversed(type(spec).__mro__):
            if not issubclass(klass, Spec) or klass is Spec:
                continue
            bare = [n for n in vars(klass).get("__annotations__", {}) if n not in vars(klass)]
            if not bare:
                continue
            try:
                hints = typing.get_type_hints(klass)
            except Exception as exc:
                raise SpecError(
                    f"{self.path or self.name}: the annotations of {klass.__name__} cannot be"
                    f" evaluated: {type(exc).__name__}: {exc}"
                ) from None
            for name in bare:
                try:
                    out[name] = kinds.declared(hints[name])
                except kinds.TypeDeclarationError as exc:
                    raise SpecError(
                        f"{self.path or self.name}: {klass.__name__}.{name}: {exc}"
                    ) from None
        return out

    def _compile_action(self, name: str, fn: Callable[..., Any], domains: dict[str, Any]) -> Action:
        code = fn.__code__
        where = f"{code.co_filename}:{code.co_firstlineno}: action {name}"
        sig = list(inspect.signature(fn).parameters)
        if len(sig) < 2:
            raise SpecError(f"{where} must take (self, s, ...): the state comes after self")
        params = tuple(sig[2:])
        missing = [p for p in params if p not in domains]
        extra = [d for d in domains if d not in params]
        if missing:
            raise SpecError(f"{where}: parameter {missing[0]!r} has no domain in @action(...)")
        if extra:
            raise SpecError(f"{where}: @action gives a domain for {extra[0]!r}, not a parameter")
        resolved = []
        depends: list[tuple[int, ...] | None] = []
        for index, p in enumerate(params):
            domain = domains[p]
            if isinstance(domain, str):
                if not hasattr(self.spec, domain):
                    raise SpecError(f"{where}: domain {domain!r} of {p!r} is not a spec attribute")
                domain = getattr(self.spec, domain)
            if callable(domain):
                depends.append(_depends(where, p, domain, params[:index]))
                resolved.append(domain if _reads_state(domain, self.spec) else _kept(domain))
                continue
            depends.append(None)
            try:
                resolved.append(domain_order(domain))
            except TypeError:
                raise SpecError(
                    f"{where}: the domain of {p!r} must be an iterable or a function of the "
                    f"state, not {domain!r}"
                ) from None
            except DomainTooLarge as exc:
                raise SpecError(f"{where}: the domain of {p!r} {exc}") from None
        where_on = on_of(fn)
        if where_on is not None:
            templates.check(where, where_on, params)
        declared = constants_of(type(self.spec))
        for switch in switches_of(fn):
            if switch not in declared:
                known = ", ".join(declared) or "none"
                raise SpecError(f"{where}: switch={switch!r} is not a constant ({known})")
        bound = getattr(self.spec, name)
        static = None
        if not any(callable(d) for d in resolved):
            size = math.prod(len(d) for d in resolved)
            if size > MAX_DOMAIN:
                raise SpecError(
                    f"{where}: {name} has {size:,} bindings of its parameters, more than the"
                    f" {MAX_DOMAIN:,} that mc takes: give smaller domains"
                )
            static = tuple(itertools.product(*resolved))
        return Action(name, bound, params, tuple(resolved), static, tuple(depends), where_on)


def _depends(
    where: str, param: str, domain: Callable[..., Any], earlier: tuple[str, ...]
) -> tuple[int, ...]:
    """The earlier parameters a domain function takes after the state, by index: `lambda s,
    leader: ...` is the domain of a parameter after `leader`, for each value of it."""
    try:
        sig = inspect.signature(domain)
    except (TypeError, ValueError):  # a builtin: a function of the state alone
        return ()
    names = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if not names:
        raise SpecError(f"{where}: the domain of {param!r} must take the state (s, ...)")
    unknown = [n for n in names[1:] if n not in earlier]
    if unknown:
        raise SpecError(
            f"{where}: the domain of {param!r} takes {unknown[0]!r}, which is no earlier"
            f" parameter (a domain takes the state, then earlier parameters by name:"
            f" {', '.join(earlier) or 'none before it'})"
        )
    return tuple(earlier.index(n) for n in names[1:])


# Names whose use lets a function reach its arguments without loading them by name.
_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "_getframe", "currentframe"})
_KEPT = 1 << 12  # the values of a domain that never reads the state, kept per earlier values


def _reads_state(domain: Callable[..., Any], spec: Spec) -> bool:
    """Whether a domain function may read its state: False only for a method of the spec, or a
    function without free variables, whose code never loads its state argument (TLA+'s
    `\\E q \\in Proc \\ {p}`: `others(s, p)` reads p alone). Its values are then a function of
    the constants and the earlier parameters it takes, computed once per those (`_kept`)."""
    fn = domain
    if inspect.ismethod(domain):
        if domain.__self__ is not spec:
            return True
        fn = domain.__func__
    if not inspect.isfunction(fn):
        return True
    code = fn.__code__
    skip = 1 if fn is not domain else 0  # (self)
    if (
        code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        or code.co_argcount <= skip
        or code.co_freevars
        or _FRAME_READERS.intersection(code.co_names)
    ):
        return True
    state = code.co_varnames[skip]
    if state in code.co_cellvars:  # (read by a nested function)
        return True
    for ins in dis.get_instructions(code):
        if ins.opname.startswith(("LOAD_", "DELETE_")) and (
            ins.argval == state or (type(ins.argval) is tuple and state in ins.argval)
        ):
            return True
    return False


def _kept(domain: Callable[..., Any]) -> Callable[..., tuple[Any, ...]]:
    """`domain`, a function that never reads its state (see `_reads_state`), with its values
    in canonical order kept per the earlier parameters' values (at most _KEPT of them): the
    same tuple again, neither called nor ordered again. What it raises is raised each time."""
    kept: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    @functools.wraps(domain)
    def values(state: Record, *earlier: Any) -> tuple[Any, ...]:
        try:
            order = kept.get(earlier)
        except TypeError:  # (an earlier value that cannot be hashed: not kept)
            return domain_order(domain(state, *earlier))
        if order is None:
            order = domain_order(domain(state, *earlier))
            if len(kept) < _KEPT:
                kept[earlier] = order
        return order

    return values


def describe_switch(spec: Spec, names: Sequence[str]) -> str:
    """The constants of a switch and their values: "max_crashes=0", "a, b = 0"."""
    values = [getattr(spec, n) for n in names]
    if len(names) > 1 and len(set(map(repr, values))) == 1:
        return f"{', '.join(names)} = {values[0]}"
    return ", ".join(f"{n}={v}" for n, v in zip(names, values))


class OncePerStatePython:
    """`fn(state)`, evaluated once for the state last given: a second call on that same state
    object gives the result kept (the twin of checker._hot.OncePerState, which also gives the
    variables the first call read to incremental evaluation; without the extension nothing is
    evaluated incrementally). An error is not kept: a second call raises it again."""

    __slots__ = ("__wrapped__", "_result", "_state")

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"OncePerState(fn): fn is not callable: {fn!r}")
        self.__wrapped__ = fn
        self._state: Any = _NOTHING
        self._result: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        one = len(args) == 1 and not kwargs
        if one and args[0] is self._state:
            return self._result
        result = self.__wrapped__(*args, **kwargs)
        if one:
            self._state, self._result = args[0], result
        return result

    def __getattr__(self, name: str) -> Any:  # a name, a doc, __self__: the predicate's
        if name in self.__slots__:
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.__wrapped__,))

    def forget(self) -> None:
        """Drop the state and result kept."""
        self._state, self._result = _NOTHING, None


_NOTHING = object()  # (no state given yet)
OncePerState: type = fast.OncePerState or OncePerStatePython


def evaluated_once(spec: Spec, name: str) -> Callable[..., Any]:
    """The spec's state predicate `name` as the engine evaluates it, once per state: a
    OncePerState, put on the spec object too (an instance attribute, found before the
    method), so that another predicate calling it on the same state, as TLA+'s
    `Inv == TypeOK /\\ ...` does, gets the result the engine's own call kept."""
    kept = vars(spec).get(name)
    if type(kept) is OncePerState:
        return kept  # type: ignore[no-any-return]
    once = OncePerState(_predicate(spec, name))
    vars(spec)[name] = once
    return once  # type: ignore[no-any-return]


def _predicate(spec: Spec, name: str) -> Callable[..., Any]:
    """The spec's predicate `name` as the engine calls it: a shared predicate (a function of
    the state, made a method by its decorator) is called directly, without the method's frame."""
    bound = getattr(spec, name)
    return getattr(bound, "__mc_shared__", bound)
