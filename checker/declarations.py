"""The functions a spec's class body declares with: `constant` and `rule`, `@action` and `@on`,
`@invariant` and the other predicates, the temporal properties, `refines`. Each marks what it
declares (an attribute `MARK_...` of checker/spec.py, or an instance of one of its classes);
checker/spec.py reads the marks off a Spec class (`actions_of`, `invariants_of`, ...).
`from checker import ...` re-exports them for spec authors (see checker/spec.py's example).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from checker.errors import SpecError
from checker.spec import (
    FAIRNESS_KINDS,
    MARK_ACTION,
    MARK_ACTION_CONSTRAINT,
    MARK_ASSUME,
    MARK_CONSTRAINT,
    MARK_FAIR,
    MARK_INVARIANT,
    MARK_ON,
    MARK_PROPERTY,
    MARK_REACHABLE,
    MARK_STEP,
    MARK_SWITCH,
    MARK_TERMINAL,
    AllRules,
    AlwaysEventuallyLeadsTo,
    Constant,
    Fairness,
    LeadsTo,
    On,
    Refinement,
    Rule,
    as_method,
)


def constant(
    default: int | bool | str,
    doc: str = "",
    *,
    min: int | None = None,
    max: int | None = None,
    choices: Iterable[int | bool | str] | None = None,
) -> Any:
    """Declare a constant in a Spec class body: `brokers = constant(2, "brokers", min=1)`.
    A value out of `min`..`max` or not among `choices` is refused when the spec is loaded."""
    return Constant(default, doc, min=min, max=max, choices=choices)


def rule(doc: str) -> Any:
    """Declare a rule of the KIP in a Spec class body, read as a bool where its step is:
    `elect_from_elr = rule("With no ISR member, the controller elects an unfenced ELR member")`
    then `if self.elect_from_elr: ...`. On by default; `-D elect_from_elr=false` switches it
    off alone, `-D fixed=false` (an `all_rules` constant) every rule not given with -D."""
    return Rule(doc)


def all_rules(doc: str) -> Any:
    """Declare the constant that switches every rule of the spec: `fixed = all_rules("KIP-966
    as a whole")`. True by default; with false each rule is off unless given with -D."""
    return AllRules(doc)


def action(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    fair: str | None = None,
    fair_each: str | None = None,
    switch: str | tuple[str, ...] | None = None,
    **domains: Any,
) -> Any:
    """Mark a Spec method `(self, s, **params)` as an action; keywords give parameter domains.

    `fair="weak"|"strong"` assumes weak or strong fairness of the action (any binding);
    `fair_each=` of each binding separately. Only temporal properties use them.
    `switch="max_crashes"` names the constant (or constants: a tuple) that switches the action
    on: while it is 0 or False (all of them are), the action is expected never to be enabled,
    and the vacuity check lists it as off instead of warning that it never was.
    """
    for option, kind in (("fair", fair), ("fair_each", fair_each)):
        if kind is not None and kind not in FAIRNESS_KINDS:
            raise TypeError(f"@action({option}=...) must be 'weak' or 'strong', not {kind!r}")
    switches = (switch,) if isinstance(switch, str) else tuple(switch or ())
    if not all(isinstance(name, str) for name in switches):
        raise TypeError(f"@action(switch=...) names constants, not {switch!r}")

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        setattr(f, MARK_ACTION, dict(domains))
        if fair or fair_each:
            setattr(f, MARK_FAIR, Fairness(fair, fair_each))
        if switches:
            setattr(f, MARK_SWITCH, switches)
        return f

    return mark(fn) if fn is not None else mark


def on(
    process: str,
    *,
    sends: str | None = None,
    receives: str | None = None,
    calls: str | None = None,
    message: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Say where an action runs, for sequence charts (the engine itself ignores it):

    @action(f="broker_ids")
    @on("broker {f}", calls="broker {s.leader}", message="Fetch")
    def fetch(self, s, f): ...
    """
    where = On(process, sends, receives, calls, message)

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        setattr(f, MARK_ON, where)
        return f

    return mark


def _predicate(
    fn: Callable[..., Any], marker: str, arity: int, decorator: str
) -> Callable[..., Any]:
    """Mark `fn` (made a method if it is a shared predicate) with `marker`."""
    fn = as_method(fn, arity, decorator)
    setattr(fn, marker, True)
    return fn


def invariant(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a predicate as an invariant.

    A method `(self, s)` is used as it is; a shared predicate `(s)` (e.g. from `invariants/`)
    is wrapped so it can sit in a class body:
    `leader_in_isr = invariant(replication.leader_in_isr)`.
    """
    return _predicate(fn, MARK_INVARIANT, 1, "@invariant")


def eventually(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a predicate P as the temporal property <>P: every fair behaviour reaches a state
    where P holds. A method `(self, s)` or a shared predicate `(s)`, as for `invariant`."""
    fn = as_method(fn, 1, "@eventually")
    setattr(fn, MARK_PROPERTY, "eventually")
    return fn


def always_eventually(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a predicate P as []<>P: in every fair behaviour P holds again and again (it never
    stays false forever from some point on)."""
    fn = as_method(fn, 1, "@always_eventually")
    setattr(fn, MARK_PROPERTY, "always_eventually")
    return fn


def leads_to(
    p: Callable[..., Any], q: Callable[..., Any], doc: str = "", **domains: Any
) -> LeadsTo:
    """Declare P ~> Q. `p` and `q` are methods `(self, s)` defined above in the class body, or
    shared predicates `(s)` (lambdas included); `doc` describes it in `mc list`. Keyword
    arguments give parameters with their domains, as `@action` does (a spec attribute's name
    or an iterable): `leads_to(starting, running, b="brokers")` checks `starting(s, b) ~>
    running(s, b)` for each b, each a property of its own, `name(b=1)`."""
    return LeadsTo(p, q, doc, domains)


def always_eventually_leads_to(
    p: Callable[..., Any], q: Callable[..., Any], doc: str = "", **domains: Any
) -> AlwaysEventuallyLeadsTo:
    """Declare []<>(P ~> Q) (TLA+'s `[]<>(\\A b: P(b) ~> Q(b))` with domains, as `leads_to`):
    a fair behaviour where P holds again and again but Q, from some point on, never does,
    violates it."""
    return AlwaysEventuallyLeadsTo(p, q, doc, domains)


def constraint(fn: Callable[..., Any] | None = None, /, *, admit: bool = True) -> Any:
    """Mark a predicate `(self, s)` as a state constraint: a state where it is False is
    checked against the invariants and never expanded. `admit=True` (the default) counts it
    as a distinct state; `admit=False` is TLC's CONSTRAINT: it is not added to the states
    found (a successor that fails it is generated, checked, and dropped, each time it is
    generated). A shared predicate `(s)` is wrapped as `invariant` wraps one."""
    if not isinstance(admit, bool):
        raise TypeError(f"@constraint(admit=...) is True or False, not {admit!r}")

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        method = as_method(f, 1, "@constraint")

        # A wrapper of its own: one predicate may be a constraint of each kind in two specs.
        @functools.wraps(method)
        def marked(*args: Any) -> Any:
            return method(*args)

        setattr(marked, MARK_CONSTRAINT, admit)
        return marked

    return mark(fn) if fn is not None else mark


def step_property(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a predicate `(self, s, t)` over a step from `s` to its successor `t` as a step
    property (TLA+'s `[][A]_vars`, an action property): every step the search takes, into a
    new state or one found before, must satisfy it; a step that does not is a violation
    (exit 12) whose trace ends with that step. A shared predicate `(s, t)` is wrapped as
    `invariant` wraps one."""
    return _predicate(fn, MARK_STEP, 2, "@step_property")


def refines(
    abstract: type,
    mapping: Callable[..., Any] | str,
    doc: str = "",
    *,
    constants: dict[str, Any] | Callable[..., dict[str, Any]] | None = None,
) -> Refinement:
    """Declare in a class body that this spec refines `abstract` (a Spec class) under
    `mapping`: a method `(self, s)` or its name, or a function `(s)`, returning the abstract
    state (a Record of the abstract spec's variables) for a state `s` of this spec.
    `constants`: the abstract spec's constants, a dict or a method `(self) -> dict` (its
    defaults otherwise). Only safety: the abstract spec's fairness is not checked."""
    return Refinement(abstract, mapping, constants, doc)


def action_constraint(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a predicate `(self, s, t)` over a step from `s` to its successor `t` as an action
    constraint (TLC's ACTION_CONSTRAINT): a step where it is False is not taken. A shared
    predicate `(s, t)` is wrapped as `invariant` wraps one."""
    return _predicate(fn, MARK_ACTION_CONSTRAINT, 2, "@action_constraint")


def assume(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a method `(self) -> bool` as an assumption about the constants (TLA+'s ASSUME):
    checked when the spec is loaded, before the search; constants for which it is False are
    refused (exit 151) with its docstring."""
    if not callable(fn):
        raise TypeError(f"@assume takes a method (self), not {fn!r}")
    params = list(inspect.signature(fn).parameters)
    if len(params) != 1:
        code = getattr(fn, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}: " if code is not None else ""
        raise SpecError(
            f"{where}@assume {getattr(fn, '__name__', fn)} takes ({', '.join(params)}): an"
            " assumption is a method (self) of the constants alone"
        )
    setattr(fn, MARK_ASSUME, True)
    return fn


def reachable(
    fn: Callable[..., Any] | None = None, /, *, switch: str | tuple[str, ...] | None = None
) -> Any:
    """Mark a predicate P as a reachability property: some reachable state satisfies P (as
    stateright's `sometimes`). A search that ends without reaching one is a violation;
    `mc check --witness NAME` prints the shortest behavior to such a state. A method
    `(self, s)` or a shared predicate `(s)`, as for `invariant`. `switch=` names the
    constant(s) that switch it on, as for an action: while 0 or False, it is not checked
    (a fault that cannot happen)."""
    switches = (switch,) if isinstance(switch, str) else tuple(switch or ())

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        f = _predicate(f, MARK_REACHABLE, 1, "@reachable")
        if switches:
            setattr(f, MARK_SWITCH, switches)
        return f

    return mark(fn) if fn is not None else mark


def terminal(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a predicate as the spec's intended final states: a reachable state with no
    successor where it holds is not a deadlock. A method `(self, s)` or a shared predicate
    `(s)`, as for `invariant`."""
    return _predicate(fn, MARK_TERMINAL, 1, "@terminal")
