"""A Spec instance compiled for the engines: actions with resolved domains, invariants,
constraints, and the two functions every engine uses: `expand`, a state's successors, and
`fingerprint_of`, what identifies a state (its view, up to symmetry)."""

from __future__ import annotations

import difflib
import inspect
import itertools
import re
import string
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from checker import kinds
from checker.encoding import decode, encode, encode_state, fingerprint
from checker.errors import ConfigError, EvaluationError, SpecError
from checker.record import Map, Record, StateError, canonical_order, freeze
from checker.result import CheckResult, Event, Step
from checker.spec import (
    On,
    Spec,
    action_constraints_of,
    actions_of,
    constants_of,
    constraints_of,
    invariants_of,
    on_of,
    reachables_of,
    switches_of,
    terminals_of,
)
from checker.speedups import hot
from checker.symmetry import Permutation, Symmetry
from checker.values import show

_conforms = kinds.conforms if hot is None else hot.conforms

Binding = tuple[Any, ...]
_REDUCED_CACHE = 1 << 18  # entries (about 25 MB) of Model.fingerprint_of's cache, per process
ROOT = -1  # the action index of an initial state's link; its binding index is its init index


def _domain_order(values: Iterable[Any]) -> tuple[Any, ...]:
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
        return tuple(canonical_order(values))
    return tuple(values)


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
    on: On | None = None  # where it happens, for sequence charts
    # Per parameter whose domain is a function of the state and of earlier parameters
    # (`replica=lambda s, leader: ...`): the indexes of those parameters; else None.
    depends: tuple[tuple[int, ...] | None, ...] = ()

    def event(self, state: Record, binding: Binding) -> Event | None:
        """The sequence-chart event of this action fired with `binding` in `state`."""
        if self.on is None:
            return None
        names = {**self.describe(binding), "s": state}
        on = self.on
        try:
            process = _TEMPLATES.format(on.process, **names)
            for kind, peer in (("send", on.sends), ("receive", on.receives), ("call", on.calls)):
                if peer is not None:
                    return Event(process, kind, _TEMPLATES.format(peer, **names), on.message)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise EvaluationError(
                "action",
                self.name,
                f"its @on template failed: {type(exc).__name__}: {exc}",
                state=state,
                params=self.describe(binding),
            ) from exc
        return Event(process, "local")

    def bindings(self, state: Record) -> Sequence[Binding]:
        if self.static_bindings is not None:
            return self.static_bindings
        if any(self.depends):
            return self._dependent_bindings(state)
        domains = []
        for param, domain in zip(self.params, self.domains):
            if callable(domain):
                domain = self._domain(param, domain, state, ())
            domains.append(domain)
        return tuple(itertools.product(*domains))

    def values(self, state: Record) -> Sequence[Any]:
        """The values of a one-parameter action's parameter in `state` (bindings unpacked)."""
        domain = self.domains[0]
        return self._domain(self.params[0], domain, state, ()) if callable(domain) else domain

    def _dependent_bindings(self, state: Record) -> tuple[Binding, ...]:
        """The bindings when a domain depends on earlier parameters: for each binding of
        those, the values its function gives, in product order (the first parameter
        varying slowest)."""
        prefixes: list[Binding] = [()]
        for param, domain, depends in zip(self.params, self.domains, self.depends):
            if not callable(domain):
                prefixes = [p + (v,) for p in prefixes for v in domain]
            elif not depends:
                values = self._domain(param, domain, state, ())
                prefixes = [p + (v,) for p in prefixes for v in values]
            else:
                prefixes = [
                    p + (v,)
                    for p in prefixes
                    for v in self._domain(param, domain, state, tuple(p[i] for i in depends))
                ]
        return tuple(prefixes)

    def _domain(
        self, param: str, domain: Callable[..., Any], state: Record, earlier: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """A parameter's domain in `state` (given the values of the earlier parameters it
        takes), in canonical order."""
        try:
            return _domain_order(domain(state, *earlier))
        except Exception as exc:
            raise EvaluationError(
                "action",
                self.name,
                f"the domain of parameter {param!r} raised {type(exc).__name__}: {exc}",
                state=state,
                params=dict(zip(self.params, earlier)) if earlier else None,
                cause=exc,
            ) from exc

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


class Successor(NamedTuple):  # a tuple: one is built per generated state
    action: int  # index into Model.actions
    binding: int  # index into the action's bindings in the parent state
    state: Record
    data: bytes  # canonical encoding
    fp: int  # Model.fingerprint_of the state


class Successors(list):  # type: ignore[type-arg]
    """`Model.expand`'s successors, in order. `deadlocked`: no action is enabled in the state.
    A state outside the state constraints is not expanded (no successors, not deadlocked);
    one whose every successor an action constraint discards is not deadlocked either (as in
    TLC: constraints bound the search, they do not make deadlocks)."""

    __slots__ = ("deadlocked",)

    def __init__(self, successors: Iterable[Successor] = (), deadlocked: bool = False) -> None:
        super().__init__(successors)
        self.deadlocked = deadlocked


class Model:
    """The engines' view of a spec: no Kafka, no printing, just states and transitions."""

    def __init__(
        self,
        spec: Spec,
        path: str = "",
        invariants: Sequence[str] | None = None,
        symmetry: bool = True,
    ):
        """`symmetry=False` ignores the symmetry the spec declares (`mc check --no-symmetry`)."""
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
        except TypeError as exc:
            raise SpecError(f"{path}: {exc}" if path else str(exc)) from None
        found = self._ordered(found, spec.action_order)
        self.actions = tuple(self._compile_action(n, f, d) for n, (f, d) in found.items())
        if not self.actions:
            raise SpecError(f"{self.name} declares no actions (decorate methods with @action)")
        # What `successors` loops over: (index, function, arity, static bindings, action),
        # the bindings of a one-parameter action as bare values (no argument unpacking).
        self._plan = tuple(
            (
                ai,
                act.fn,
                len(act.params),
                None
                if act.static_bindings is None
                else tuple(b for b, in act.static_bindings)
                if len(act.params) == 1
                else act.static_bindings,
                act,
            )
            for ai, act in enumerate(self.actions)
        )
        declared = {n: Invariant(n, getattr(spec, n)) for n in predicates}
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
            Invariant(n, getattr(spec, n)) for n in wanted if n not in self.reachables_off
        )
        # The spec's intended final states: no successor there is no deadlock.
        self.terminals = tuple(Invariant(n, getattr(spec, n)) for n in finals)
        self.constraints = tuple(Constraint(n, getattr(spec, n)) for n in bounds)
        self.action_constraints = tuple(Constraint(n, getattr(spec, n)) for n in steps)
        self._constrained = bool(self.action_constraints)
        if spec.view is not None and not callable(spec.view):
            raise SpecError(f"{self.name}.view must be a method view(self, s), not {spec.view!r}")
        self.view: Callable[[Record], Any] | None = spec.view
        # The symmetry in use (None: none declared, or turned off). Liveness checking must
        # refuse it: a cycle among representatives need not be a cycle among real states.
        self.symmetry: Symmetry | None = Symmetry.of(spec) if symmetry else None
        # Whether states are identified by more than their encoding.
        self.reduces = self.view is not None or self.symmetry is not None
        self._reduced_fps: dict[int, int] = {}  # concrete fingerprint -> fingerprint_of
        # The states' kind (checker.kinds), from the initial states and the declared types:
        # known once the initial states are.
        self._declared = self._declared_types(spec)
        self._kinds: kinds.Kind | None = None
        self._initial: list[Record] | None = None

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

    @property
    def declared_types(self) -> dict[str, kinds.Kind]:
        """The state variables' types the spec declares (bare annotations), by name."""
        return dict(self._declared)

    @property
    def kinds(self) -> kinds.Kind:
        """The kind of the states (a RECORD kind: each variable's kind), from the initial
        states and the spec's `types`."""
        if self._kinds is None:
            self.initial_states()
        assert self._kinds is not None
        return self._kinds

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without the driver's fingerprint cache."""
        # Nor with the states' kind, which names the shapes (classes) of this process: an
        # executor infers it again, from its own initial states.
        return {**self.__dict__, "_reduced_fps": {}, "_kinds": None, "_initial": None}

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
                resolved.append(domain)
                depends.append(_depends(where, p, domain, params[:index]))
                continue
            depends.append(None)
            try:
                resolved.append(_domain_order(domain))
            except TypeError:
                raise SpecError(
                    f"{where}: the domain of {p!r} must be an iterable or a function of the "
                    f"state, not {domain!r}"
                ) from None
        where_on = on_of(fn)
        if where_on is not None:
            _check_templates(where, where_on, params)
        declared = constants_of(type(self.spec))
        for switch in switches_of(fn):
            if switch not in declared:
                known = ", ".join(declared) or "none"
                raise SpecError(f"{where}: switch={switch!r} is not a constant ({known})")
        bound = getattr(self.spec, name)
        static = None
        if not any(callable(d) for d in resolved):
            static = tuple(itertools.product(*resolved))
        return Action(name, bound, params, tuple(resolved), static, where_on, tuple(depends))

    def new_result(self) -> CheckResult:
        """An empty result for a check of this model, for an engine to fill in."""
        return CheckResult(
            spec=self.path,
            spec_name=self.name,
            constants=dict(self.constants),
            invariants=[inv.name for inv in self.invariants],
            constraints=[c.name for c in self.constraints],
            action_constraints=[c.name for c in self.action_constraints],
            view=self.view is not None,
            symmetry=None if self.symmetry is None else self.symmetry.describe(),
            reachable=[r.name for r in self.reachables],
        )

    # -- states ----------------------------------------------------------------------------

    def initial_states(self) -> list[Record]:
        if self._initial is not None:
            return list(self._initial)
        try:
            result = self.spec.init()
        except NotImplementedError:
            raise SpecError(f"{self.name} has no initial state: define init(self)") from None
        except Exception as exc:
            raise EvaluationError("init", "init", _raised(exc), cause=exc) from exc
        states = [result] if isinstance(result, Record) else _as_list(result)
        if states is None or not all(isinstance(s, Record) for s in states):
            raise EvaluationError(
                "init", "init", f"must return a Record or a list of Records, not {result!r}"
            )
        if not states:
            raise SpecError(f"{self.name}.init() returned no initial state")
        if any(isinstance(s, Map) for s in states):
            raise EvaluationError(
                "init", "init", "a state's variables must be names (identifiers), not map keys"
            )
        for other in states[1:]:
            if other.keys() != states[0].keys():
                differ = _variables_differ(other, states[0])
                message = f"returned initial states with different variables: one {differ}"
                raise EvaluationError("init", "init", message)
        unknown = [n for n in self._declared if n not in states[0]]
        if unknown:
            names = [str(k) for k in states[0]]
            close = difflib.get_close_matches(unknown[0], names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(
                f"{self.path or self.name}: {self.name} declares the type of {unknown[0]!r},"
                f" which is not a variable of its states (variables: {', '.join(names)}){hint}"
            )
        kind, why = kinds.state_kind(states, self._declared)
        if kind is None:
            raise EvaluationError("init", "init", f"returned states that mc cannot type: {why}")
        self._kinds = kind
        self._initial = states
        return list(states)

    def initial(self) -> list[Successor]:
        """The initial states, encoded and fingerprinted (action ROOT, binding = init index)."""
        out = []
        for index, state in enumerate(self.initial_states()):
            data = _encoded(state, "init", "init", state=None, params={})
            out.append(Successor(ROOT, index, state, data, self.fingerprint_of(state, data)))
        return out

    def fingerprint_of(self, state: Record, data: bytes | None = None) -> int:
        """What identifies `state` in the search (`data`: its encoding, if known): the
        fingerprint of its encoding, or of its view's; with symmetry, of the smallest of
        those over every renaming of the symmetric values."""
        if data is None:
            data = encode(state)
        raw = fingerprint(data)
        if not self.reduces:
            return raw
        fp = self._reduced_fps.get(raw)
        return self._reduce(state, data, raw) if fp is None else fp

    def _reduce(self, state: Record, data: bytes, raw: int) -> int:
        """`fingerprint_of` a state with a view or a symmetry, which costs a view and a
        renaming per permutation: the result is remembered for the state, and (without a
        view) for its renamings, which are the same state to the search. Most states
        generated were generated before, or are renamings of one that was."""
        if self.symmetry is None:
            best = self._encoded_view(state)
            renamed: list[bytes] = []
        else:
            best, renamed = self._representative(state, data)
        fp = fingerprint(best)
        cache = self._reduced_fps
        if len(cache) + len(renamed) >= _REDUCED_CACHE:
            cache.clear()
        cache[raw] = fp
        for other in renamed:
            cache[fingerprint(other)] = fp
        return fp

    def _representative(self, state: Record, data: bytes) -> tuple[bytes, list[bytes]]:
        """The smallest encoding (of the view, if any) of the candidate images of `state`
        (checker.symmetry), and the encodings of those images (without a view)."""
        assert self.symmetry is not None
        best = None
        renamed = []
        for p in self.symmetry.candidates(state):
            image = self._permuted(state, p)
            if self.view is None:
                other = _encoded(image, "permute", "permute", state=state, params={})
                renamed.append(other)
            else:
                other = self._encoded_view(image)
            if best is None or other < best:
                best = other
        assert best is not None
        return best, renamed

    def _encoded_view(self, state: Record) -> bytes:
        assert self.view is not None
        try:
            view = freeze(self.view(state))
        except StateError as exc:
            raise EvaluationError(
                "view", "view", f"returned a value that cannot be encoded: {exc}", state=state
            ) from exc
        except Exception as exc:
            raise EvaluationError("view", "view", _raised(exc), state=state, cause=exc) from exc
        return _encoded(view, "view", "view", state=state, params={})

    def _permuted(self, state: Record, p: Permutation) -> Record:
        assert self.symmetry is not None
        try:
            image = self.symmetry.permute(state, p)
        except Exception as exc:
            raise EvaluationError(
                "permute", "permute", f"{_raised(exc)} (renaming {p})", state=state, cause=exc
            ) from exc
        if not isinstance(image, Record) or image.keys() != state.keys():
            what = (
                f"a state {_variables_differ(image, state)}"
                if isinstance(image, Record)
                else repr(image)
            )
            raise EvaluationError(
                "permute",
                "permute",
                f"returned {what}; it must return the state with the same variables",
                state=state,
            )
        return image

    def within_constraints(self, state: Record) -> bool:
        """Whether `state` satisfies every state constraint (else it is not expanded)."""
        return all(_holds("constraint", c.name, c.fn, state) for c in self.constraints)

    def _allowed(self, ai: int, binding: Binding, state: Record, succ: Record) -> bool:
        """Whether every action constraint allows the step from `state` to `succ`."""
        params = self.actions[ai].describe(binding)
        return all(
            _holds("action constraint", c.name, c.fn, state, succ, params=params)
            for c in self.action_constraints
        )

    def fire(self, ai: int, binding: Binding, state: Record) -> list[Record]:
        """The successors of `state` under action `ai` with parameters `binding`, as `expand`
        gives them: none outside the state constraints, none an action constraint discards."""
        if self.constraints and not self.within_constraints(state):
            return []
        act = self.actions[ai]
        try:
            result = act.fn(state, *binding)
        except Exception as exc:
            raise self._raised_in(ai, binding, state, exc) from exc
        successors = self._successors(ai, binding, state, result)
        if self.action_constraints:
            successors = [t for t in successors if self._allowed(ai, binding, state, t)]
        return successors

    def _raised_in(self, ai: int, binding: Binding, state: Record, exc: Exception) -> Exception:
        act = self.actions[ai]
        return EvaluationError(
            "action", act.name, _raised(exc), state=state, params=act.describe(binding), cause=exc
        )

    def _successors(self, ai: int, binding: Binding, state: Record, result: Any) -> list[Record]:
        """An action's return value as a list of checked successor states."""
        if result is None:
            return []
        many = [result] if isinstance(result, Record) else _as_list(result)
        for succ in many if many is not None else (result,):
            if not isinstance(succ, Record):
                message = (
                    f"returned {result!r}; an action returns None, a Record or a list of Records"
                )
            elif succ.keys() != state.keys():
                message = f"returned a state {_variables_differ(succ, state)}"
            else:
                if not _conforms(succ, state, self.kinds):
                    self._kind_error(ai, binding, state, succ)
                continue
            act = self.actions[ai]
            raise EvaluationError(
                "action", act.name, message, state=state, params=act.describe(binding)
            )
        return many  # type: ignore[return-value]

    def successors(
        self,
        state: Record,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None = None,
    ) -> bool:
        """The engines' shared step: append every successor of `state` to `states`, in the
        fixed order (actions as declared, then parameter bindings, then the action's own
        order), its action index to `actions` and, if given, its binding to `bindings`; none
        that an action constraint discards. Returns whether any action was enabled (the state
        constraints are the caller's to check). This is the hot loop of every engine: one call
        per action and binding, and the common case (an action returning one Record with the
        state's variables) takes the short path. With the C hot path (checker._hot) the same
        loop runs in C (`states` and `actions` must then be lists)."""
        state_kind = self._kinds if self._kinds is not None else self.kinds
        if hot is not None:
            return hot.successors(
                self._plan,
                state,
                states,
                actions,
                bindings,
                self._add,
                self._reraise,
                self._constrained,
                state_kind,
                self._kind_error,
            )
        shape = state.__class__
        add, mark = states.append, actions.append
        conforms = kinds.successor_conforms
        enabled = False
        for ai, fn, arity, static, act in self._plan:
            if arity == 0:
                try:
                    result = fn(state)
                except Exception as exc:
                    raise self._raised_in(ai, (), state, exc) from exc
                if result is None:
                    continue
                if result.__class__ is shape and not self.action_constraints:
                    if not conforms(result, state, state_kind):
                        self._kind_error(ai, (), state, result)
                    add(result)
                    mark(ai)
                    if bindings is not None:
                        bindings.append(())
                    enabled = True
                elif self._add(ai, (), state, result, states, actions, bindings):
                    enabled = True
            elif arity == 1:
                values = static if static is not None else act.values(state)
                for value in values:
                    try:
                        result = fn(state, value)
                    except Exception as exc:
                        raise self._raised_in(ai, (value,), state, exc) from exc
                    if result is None:
                        continue
                    if result.__class__ is shape and not self.action_constraints:
                        if not conforms(result, state, state_kind):
                            self._kind_error(ai, (value,), state, result)
                        add(result)
                        mark(ai)
                        if bindings is not None:
                            bindings.append((value,))
                        enabled = True
                    elif self._add(ai, (value,), state, result, states, actions, bindings):
                        enabled = True
            else:
                for binding in static if static is not None else act.bindings(state):
                    try:
                        result = fn(state, *binding)
                    except Exception as exc:
                        raise self._raised_in(ai, binding, state, exc) from exc
                    if result is None:
                        continue
                    if self._add(ai, binding, state, result, states, actions, bindings):
                        enabled = True
        return enabled

    def _add(
        self,
        ai: int,
        binding: Binding,
        state: Record,
        result: Any,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None,
    ) -> bool:
        """The general case of `successors`: a list of successors, action constraints, or a
        result to check. Returns whether the action was enabled."""
        many = self._successors(ai, binding, state, result)
        for succ in many:
            if self.action_constraints and not self._allowed(ai, binding, state, succ):
                continue
            states.append(succ)
            actions.append(ai)
            if bindings is not None:
                bindings.append(binding)
        return bool(many)

    def _kind_error(self, ai: int, binding: Binding, state: Record, succ: Record) -> None:
        """A successor whose variables are not all of their kinds: raise the error that says
        which variable, both kinds and the action; unless it was only a list or set inside a
        tuple, which the engine freezes (as put() would) before it encodes the state."""
        act = self.actions[ai]
        params = act.describe(binding)
        try:
            frozen = type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
        except StateError as exc:
            raise _unencodable(exc, "action", act.name, state, params) from exc
        state_kind = self.kinds
        if _conforms(frozen, state, state_kind):
            return
        for index, (name, value) in enumerate(frozen.items(), start=1):
            found = kinds.mismatch(value, state_kind.b[index], str(name))
            if found is None:
                continue
            path, expected, part, optional = found
            origin = "as declared" if name in self._declared else "in the initial states"
            message = (
                f"changed the kind of {path}: {kinds.describe(expected)} {origin},"
                f" {kinds.found_kind(part)} in the state it built ({path} = {show(part)})"
            )
            if part is None:
                message += (
                    f"; if {name} may hold None there, declare it in the spec class:"
                    f" {name}: {kinds.python_type(optional)}"
                )
            raise EvaluationError("action", act.name, message, state=state, params=params)
        raise AssertionError("a successor failed its kind check, and no variable does")

    def _reraise(self, ai: int, binding: Binding, state: Record, exc: Exception) -> None:
        """Raise what an action raised as the EvaluationError that says where (for C)."""
        raise self._raised_in(ai, binding, state, exc) from exc

    def expand(self, data: bytes) -> Successors:
        """The successors of an encoded state, as `successors` gives them, each encoded and
        fingerprinted (a successor's binding is its index in the action's bindings); none if
        the state is outside the state constraints."""
        state = decode(data)
        out = Successors()
        if self.constraints and not self.within_constraints(state):
            return out
        states: list[Record] = []
        actions: list[int] = []
        bindings: list[Binding] = []
        enabled = self.successors(state, states, actions, bindings)
        out.deadlocked = not enabled and not self.final(state)
        domains: dict[int, Sequence[Binding]] = {}
        for succ, ai, binding in zip(states, actions, bindings):
            act = self.actions[ai]
            try:
                encoded = encode_state(succ)
            except StateError as exc:
                raise _unencodable(exc, "action", act.name, state, act.describe(binding)) from exc
            if not self.reduces:
                fp = fingerprint(encoded)
            else:
                fp = self._successor_fingerprint(ai, binding, succ, encoded)
            if ai not in domains:
                domains[ai] = act.bindings(state)
            out.append(Successor(ai, domains[ai].index(binding), succ, encoded, fp))
        return out

    def _successor_fingerprint(
        self, ai: int, binding: Binding, succ: Record, encoded: bytes
    ) -> int:
        """`fingerprint_of` a successor; a view or permute that fails says which step built it."""
        try:
            return self.fingerprint_of(succ, encoded)
        except EvaluationError as exc:
            act = self.actions[ai]
            raise EvaluationError(
                exc.kind,
                exc.name,
                f"{exc.message}, on the successor that {act.name} built",
                state=succ,
                params=act.describe(binding),
                cause=exc.cause,
            ) from exc

    def violated(self, state: Record) -> Invariant | None:
        """The first invariant (in declaration order) that `state` violates, if any."""
        for inv in self.invariants:
            if not _holds("invariant", inv.name, inv.fn, state):
                return inv
        return None

    def settle_reachability(
        self,
        result: CheckResult,
        reached: dict[str, tuple[Any, int]],
        witness: str | None,
        trace_to: Callable[[Any], list[Step]],
    ) -> None:
        """After a search that ended by itself (`result.verdict` ok, or any verdict it
        stopped at): record where each reachability property was first reached (`reached`:
        name -> (the engine's reference to the state, its depth)); if the search was complete
        and one was never reached, that is a violation; else the shortest example of
        `witness` becomes the trace (`trace_to` rebuilds it from the reference)."""
        result.reached = {r.name: reached[r.name][1] for r in self.reachables if r.name in reached}
        if result.verdict != "ok":
            return
        result.unreached = [r.name for r in self.reachables if r.name not in reached]
        if result.unreached:
            result.verdict = "violation"
        elif witness is not None:
            result.trace = trace_to(reached[witness][0])
            result.witness = witness

    def final(self, state: Record) -> bool:
        """Whether `state` is one of the spec's intended final states (a @terminal holds),
        where having no successor is no deadlock."""
        return any(_holds("terminal", t.name, t.fn, state) for t in self.terminals)

    def reached(self, state: Record, wanted: Sequence[int]) -> list[int]:
        """Of the reachability properties `wanted` (indexes into `reachables`, in order),
        those that hold in `state`."""
        props = self.reachables
        return [i for i in wanted if _holds("reachable", props[i].name, props[i].fn, state)]


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


def describe_switch(spec: Spec, names: Sequence[str]) -> str:
    """The constants of a switch and their values: "max_crashes=0", "a, b = 0"."""
    values = [getattr(spec, n) for n in names]
    if len(names) > 1 and len(set(map(repr, values))) == 1:
        return f"{', '.join(names)} = {values[0]}"
    return ", ".join(f"{n}={v}" for n, v in zip(names, values))


def _holds(
    kind: str,
    name: str,
    fn: Callable[..., Any],
    *states: Record,
    params: dict[str, Any] | None = None,
) -> bool:
    """Evaluate a predicate of the spec (an invariant or a constraint) on `states`: it must
    return True or False."""
    try:
        ok = fn(*states)
    except Exception as exc:
        raise EvaluationError(
            kind, name, _raised(exc), state=states[0], params=params, cause=exc
        ) from exc
    if ok is not True and ok is not False:
        article = "an" if kind[0] in "aeiou" else "a"
        raise EvaluationError(
            kind,
            name,
            f"returned {ok!r}; {article} {kind} returns True or False",
            state=states[0],
            params=params,
        )
    return ok


class _TemplateFormatter(string.Formatter):
    """str.format, except that an index may name a parameter: "voter {s.leader_id[f]}"."""

    _ACCESSOR = re.compile(r"\.(\w+)|\[(\w+)\]")

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        root = re.match(r"\w*", field_name).group(0)  # type: ignore[union-attr]
        value = kwargs[root]
        for attr, key in self._ACCESSOR.findall(field_name[len(root) :]):
            if attr:
                value = getattr(value, attr)
            else:
                value = value[kwargs[key] if key in kwargs else int(key) if key.isdigit() else key]
        return value, root


_TEMPLATES = _TemplateFormatter()


def _check_templates(where: str, on: On, params: tuple[str, ...]) -> None:
    """Every {name} in an @on template must be a parameter or `s` (the state)."""
    known = {*params, "s"}
    for template in (on.process, on.sends, on.receives, on.calls):
        if template is None:
            continue
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
        except ValueError as exc:
            raise SpecError(f"{where}: @on template {template!r}: {exc}") from None
        for field in fields:
            root = re.split(r"[.\[]", field, maxsplit=1)[0]
            if root not in known:
                raise SpecError(
                    f"{where}: @on template {template!r} names {root!r}; it may use"
                    f" {', '.join(sorted(known))}"
                )


def _encoded(
    succ: Record, kind: str, name: str, *, state: Record | None, params: dict[str, Any]
) -> bytes:
    """Encode a state built by spec code; a value that cannot be encoded is the spec's error."""
    try:
        return encode(succ)
    except StateError as exc:
        raise _unencodable(exc, kind, name, state, params) from exc


def _unencodable(
    exc: StateError, kind: str, name: str, state: Record | None, params: dict[str, Any]
) -> EvaluationError:
    return EvaluationError(
        kind, name, f"built a state that cannot be encoded: {exc}", state=state, params=params
    )


def _variables_differ(state: Record, expected: Record) -> str:
    """How the variables of `state` differ from those `expected` has, in words."""
    added = [str(k) for k in state if k not in expected]
    missing = [str(k) for k in expected if k not in state]
    parts = []
    if added:
        parts.append(f"with the variable{'s' * (len(added) > 1)} {', '.join(added)} added")
    if missing:
        parts.append(f"without the variable{'s' * (len(missing) > 1)} {', '.join(missing)}")
    return " and ".join(parts) or "with other variables"


def _as_list(result: Any) -> list[Any] | None:
    if isinstance(result, (list, tuple)) or inspect.isgenerator(result):
        return list(result)
    return None


def _raised(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {exc}"
