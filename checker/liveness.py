"""Temporal properties under fairness, checked on the reachable state graph, as TLC does.

Semantics (TLA+'s). A behaviour may stutter: every state has an implicit step to itself, and
an action step that leaves the state unchanged is a stutter too (<<A>>_vars). An action is
*enabled* in a state when it has a successor other than the state itself. A behaviour is fair
when, for every action A declared fair (`@action(fair=...)`, see checker.spec.Fairness):
- weak (WF): A is not enabled continuously from some point on without being taken again and
  again;
- strong (SF): A is not enabled again and again without being taken again and again.

On a finite graph, the states a behaviour visits infinitely often form a strongly connected
set X, and it can take every step inside X infinitely often. So a fair behaviour that stays
in a set S of states from some point on exists iff S holds
- a state where no fair action is enabled: the behaviour stutters there forever (a
  deadlocked state always qualifies), or
- a strongly connected component C (with a step) in which every weakly fair action enabled
  in all of C's states is taken by a step inside C, and every strongly fair action enabled
  in some state of C is taken inside C. When only strong fairness fails, the states that
  enable an untaken action are removed and the components of the rest are examined again
  (the Emerson-Lei refinement).

A property is violated when such a behaviour contradicts it:
- `eventually P`: one reachable through not-P states only, staying in not-P states;
- `always eventually P`: one that stays in not-P states from some reachable point on;
- `P leads_to Q`: one that reaches a state with P and not Q and stays in not-Q states.
The counterexample is a lasso: a shortest path to the fair component (or the stuttering
state) and a cycle inside it that takes every action fairness needs, "back to state k".
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from checker.errors import ConfigError, EvaluationError, SpecError
from checker.model import ROOT, Model
from checker.progress import Progress, Snapshot
from checker.record import Record
from checker.result import CheckResult, ErrorInfo
from checker.spec import fairness_of, properties_of, property_kind
from checker.trace import Link, chain_to, replay

Label = tuple[int, int, tuple[int, ...]]  # (action, binding index, fairness constraints it takes)


@dataclass(frozen=True)
class Property:
    """A temporal property compiled for a spec instance: its predicates are bound."""

    name: str
    kind: str  # "eventually", "always_eventually" or "leads_to"
    p: Callable[[Record], Any]
    q: Callable[[Record], Any] | None = None  # leads_to's Q
    formula: str = ""  # e.g. "eventually has_leader", "leaderless ~> has_leader"


@dataclass(frozen=True)
class Constraint:
    """One fairness assumption: of an action as a whole, or of one binding of it."""

    strong: bool
    action: int
    binding: tuple[Any, ...] | None = None  # None: any binding (the action as a whole)


def select(model: Model, names: Sequence[str] | None = None) -> list[Property]:
    """The spec's temporal properties (all, or those `names` selects, in that order)."""
    spec = model.spec
    try:
        members = properties_of(type(spec))
    except TypeError as exc:  # a property overridden without its decorator
        raise SpecError(f"{model.path}: {exc}" if model.path else str(exc)) from None
    declared = {}
    for name, member in members.items():
        kind = property_kind(member)
        if kind == "leads_to":
            p, q = member.p.__get__(spec), member.q.__get__(spec)
            declared[name] = Property(name, kind, p, q, member.formula)
        else:
            words = "eventually" if kind == "eventually" else "always eventually"
            declared[name] = Property(name, kind, getattr(spec, name), None, f"{words} {name}")
    if names is None:
        return list(declared.values())
    unknown = [n for n in names if n not in declared]
    if unknown:
        raise ConfigError(
            f"--property {unknown[0]}: {model.name} has no such temporal property"
            f" (properties: {', '.join(declared) or 'none'})"
        )
    return [declared[n] for n in names]


def fairness(model: Model) -> list[str]:
    """The fairness the spec declares, in TLA+ terms: "WF(fetch)", "SF(elect(b)) for each b"."""
    described = []
    for act in model.actions:
        fair = fairness_of(act.fn)
        if fair.whole:
            described.append(f"{_wf(fair.whole)}({act.name})")
        if fair.each:
            params = ", ".join(act.params)
            each = f" for each {params}" if params else ""
            described.append(f"{_wf(fair.each)}({act.name}({params})){each}")
    return described


def _wf(kind: str) -> str:
    return "SF" if kind == "strong" else "WF"


def check(
    model: Model,
    result: CheckResult,
    properties: Sequence[Property],
    progress: Progress | None = None,
) -> CheckResult:
    """Check `properties` under the spec's fairness, once the safety run that produced
    `result` found every invariant to hold; record the outcome in `result` and return it.
    A violation sets verdict "violation", `property`, and the lasso (`trace`, `loop_start`,
    `loop_back`); a predicate that raises sets verdict "error"; Ctrl-C (or SIGTERM) verdict
    "incomplete". `result.properties` and `fairness` name what was selected either way."""
    result.properties = {p.name: p.formula for p in properties}
    result.fairness = fairness(model) if properties else []
    if result.verdict != "ok" or not properties:
        return result
    if model.symmetry is not None:  # it merges states that a fair cycle must tell apart
        raise ConfigError(
            f"{model.name}: temporal properties cannot be checked under symmetry reduction:"
            " check them with --no-symmetry"
        )
    start = time.perf_counter()
    try:
        graph = explore(model, properties, progress)
        for prop in properties:
            lasso = counterexample(graph, prop)
            if lasso is not None:
                _record(model, graph, result, prop, lasso)
                break
    except _PredicateError as exc:
        result.verdict = "error"
        result.error = ErrorInfo.of(exc)
        result.trace = replay(model, chain_to(exc.parents, exc.fp))
    except KeyboardInterrupt:  # as the engines do: stop and say what was not decided
        result.verdict = "incomplete"
        result.bound = "interrupted while checking the temporal properties"
    finally:
        if progress is not None:
            progress.close()
    result.liveness_seconds = time.perf_counter() - start
    result.seconds += result.liveness_seconds
    if result.verdict != "ok" and result.witness is not None:  # the trace is no witness now
        if result.verdict == "incomplete":
            result.trace = []
        result.witness = None
    return result


# -- the state graph ----------------------------------------------------------------------


@dataclass
class StateGraph:
    """The reachable states, numbered in breadth-first order, and their non-stuttering steps."""

    fps: list[int] = field(default_factory=list)  # node -> fingerprint
    init_index: dict[int, int] = field(default_factory=dict)  # initial node -> its init index
    parents: dict[int, Link] = field(default_factory=dict)  # for the trace to a failing state
    steps: nx.DiGraph = field(default_factory=nx.DiGraph)  # u -> v for u != v, no attributes
    # (u, v) -> every (action, binding, constraints) of that step: tuples of ints, which the
    # garbage collector stops tracking. The graph's dicts it tracks, and walks on every full
    # collection: built during the search, they made it 2.5 times slower on kip996, so
    # `steps` is built from these once the search is over.
    labels: dict[tuple[int, int], tuple[Label, ...]] = field(default_factory=dict)
    holds: dict[str, tuple[bytearray, bytearray]] = field(default_factory=dict)  # P, Q per node
    constraints: list[Constraint] = field(default_factory=list)
    enabled: list[set[int]] = field(default_factory=list)  # per constraint: where enabled
    transitions: int = 0  # successors generated, stutters included

    def fair_somewhere(self) -> set[int]:
        """The states where some fair action is enabled (so stuttering there is unfair)."""
        return set().union(*self.enabled)

    def label(self, u: int, v: int) -> Label:
        return self.labels[u, v][0]


class _PredicateError(EvaluationError):
    """A property's predicate failed; carries what is needed to rebuild the trace to it."""

    def __init__(self, exc: EvaluationError, fp: int, parents: dict[int, Link]) -> None:
        super().__init__(exc.kind, exc.name, exc.message, state=exc.state, cause=exc.cause)
        self.fp = fp
        self.parents = parents


def explore(
    model: Model, properties: Sequence[Property], progress: Progress | None = None
) -> StateGraph:
    """Every reachable state (through Model.initial and Model.expand only), each property's
    predicates on it, and every step with the fairness constraints it takes."""
    graph = StateGraph()
    node_of: dict[int, int] = {}
    declared = [fairness_of(act.fn) for act in model.actions]
    # Per action: the constraint of the action as a whole (if fair), as a 0- or 1-tuple.
    whole = [
        (_new_constraint(graph, fair.whole, ai, None),) if fair.whole else ()
        for ai, fair in enumerate(declared)
    ]
    each: dict[tuple[int, tuple[Any, ...]], int] = {}  # (action, binding) -> its constraint
    for prop in properties:
        graph.holds[prop.name] = (bytearray(), bytearray())

    def admit(fp: int, state: Record, link: Link) -> int:
        node = node_of[fp] = len(graph.fps)
        graph.fps.append(fp)
        graph.parents[fp] = link
        for prop in properties:
            p_values, q_values = graph.holds[prop.name]
            p_values.append(_evaluate(prop, prop.p, state, fp, graph.parents))
            if prop.q is not None:
                q_values.append(_evaluate(prop, prop.q, state, fp, graph.parents))
        return node

    frontier: list[tuple[int, bytes, Record]] = []
    for init in model.initial():
        graph.transitions += 1
        if init.fp not in node_of:
            node = admit(init.fp, init.state, (None, ROOT, init.binding))
            graph.init_index[node] = init.binding
            frontier.append((node, init.data, init.state))
    depth = 1
    while frontier:
        next_level: list[tuple[int, bytes, Record]] = []
        for done, (u, data, state) in enumerate(frontier):
            successors = model.expand(data)
            bindings: dict[int, Sequence[tuple[Any, ...]]] = {}  # per action, in this state
            graph.transitions += len(successors)
            for succ in successors:
                v = node_of.get(succ.fp)
                if v is None:
                    v = admit(succ.fp, succ.state, (graph.fps[u], succ.action, succ.binding))
                    next_level.append((v, succ.data, succ.state))
                if v == u:
                    continue  # a stutter: neither enables nor takes anything
                taken = whole[succ.action]
                kind = declared[succ.action].each
                if kind:
                    if succ.action not in bindings:
                        bindings[succ.action] = model.actions[succ.action].bindings(state)
                    key = (succ.action, tuple(bindings[succ.action][succ.binding]))
                    if key not in each:
                        each[key] = _new_constraint(graph, kind, *key)
                    taken = (*taken, each[key])
                for c in taken:
                    graph.enabled[c].add(u)
                label = (succ.action, succ.binding, taken)
                graph.labels[u, v] = graph.labels.get((u, v), ()) + (label,)
            if progress is not None and progress.due():
                queue = len(frontier) - done - 1 + len(next_level)
                progress.report(
                    Snapshot(
                        depth, len(graph.fps), graph.transitions, queue, done + 1, len(frontier)
                    )
                )
        frontier = next_level
        depth += 1
    graph.steps.add_nodes_from(range(len(graph.fps)))
    graph.steps.add_edges_from(graph.labels)
    return graph


def _new_constraint(
    graph: StateGraph, kind: str, action: int, binding: tuple[Any, ...] | None
) -> int:
    graph.constraints.append(Constraint(kind == "strong", action, binding))
    graph.enabled.append(set())
    return len(graph.constraints) - 1


def _evaluate(
    prop: Property,
    predicate: Callable[[Record], Any],
    state: Record,
    fp: int,
    parents: dict[int, Link],
) -> bool:
    try:
        value = predicate(state)
    except Exception as exc:
        error = EvaluationError(
            "property", prop.name, f"raised {type(exc).__name__}: {exc}", state=state, cause=exc
        )
        raise _PredicateError(error, fp, parents) from exc
    if value is not True and value is not False:
        error = EvaluationError(
            "property",
            prop.name,
            f"returned {value!r}; a property's predicate returns True or False",
            state=state,
        )
        raise _PredicateError(error, fp, parents)
    return value


# -- fair components and lassos -----------------------------------------------------------


def fair_components(graph: StateGraph, nodes: set[int]) -> list[set[int]]:
    """The strongly connected sets inside `nodes` (with a step) where a behaviour can stay
    forever, taking all their steps, and be fair (the Emerson-Lei refinement for SF)."""
    within = graph.steps.subgraph(nodes)
    work = [c for c in nx.strongly_connected_components(within) if len(c) > 1]
    fair = []
    while work:
        comp = work.pop()
        taken = _taken_inside(graph, comp)
        unfair, drop = False, set()
        for c, constraint in enumerate(graph.constraints):
            enabled = graph.enabled[c] & comp
            if c in taken or not enabled:
                continue
            if constraint.strong:
                drop |= enabled
            elif len(enabled) == len(comp):  # weak: enabled all along, never taken
                unfair = True
                break
        if unfair:
            continue  # any part of comp breaks the same weak fairness
        if drop:
            rest = within.subgraph(comp - drop)
            work.extend(c for c in nx.strongly_connected_components(rest) if len(c) > 1)
        else:
            fair.append(comp)
    return sorted(fair, key=min)


def _taken_inside(graph: StateGraph, comp: set[int]) -> set[int]:
    taken: set[int] = set()
    for u in comp:
        for v in graph.steps.succ[u]:
            if v in comp:
                for _, _, constraints in graph.labels[u, v]:
                    taken.update(constraints)
    return taken


@dataclass
class Lasso:
    """A path from an initial state to `path[-1]`, then `cycle` (steps from there back to it)
    repeated forever; an empty cycle stutters at `path[-1]` forever."""

    path: list[int]
    cycle: list[tuple[int, int, Label]]


def counterexample(graph: StateGraph, prop: Property) -> Lasso | None:
    """A fair behaviour that violates `prop`, as a lasso, or None if it holds."""
    n = len(graph.fps)
    p_values, q_values = graph.holds[prop.name]
    initial = list(graph.init_index)
    offset = 0  # the prefix graph's node of state u is u + offset
    if prop.kind == "leads_to":
        # Two copies of the graph: in the second (offset n), P and not Q held in a state of
        # the path, and Q has not held since; it is entered on a step into such a state.
        bad = {u for u in range(n) if not q_values[u]}
        trigger = {u for u in bad if p_values[u]}
        prefix = nx.DiGraph(graph.steps.edges())
        prefix.add_edges_from((u + n, v + n) for u, v in graph.steps.subgraph(bad).edges())
        prefix.add_edges_from((u, v + n) for u, v in graph.steps.in_edges(trigger))
        sources = initial + [u + n for u in initial if u in trigger]
        prefix.add_nodes_from(sources)
        offset = n
    else:
        bad = {u for u in range(n) if not p_values[u]}
        if prop.kind == "eventually":
            prefix = graph.steps.subgraph(bad)
            sources = [u for u in initial if u in bad]
        else:
            prefix = graph.steps
            sources = initial
    if not sources:
        return None
    distance = nx.multi_source_dijkstra_path_length(prefix, sources, weight=None)
    reached = {u for u in bad if u + offset in distance}
    fair_enabled = graph.fair_somewhere()
    # Candidates: (distance, state, 0 to stutter there or 1 to cycle in its component).
    candidates = [(distance[u + offset], u, 0, None) for u in reached if u not in fair_enabled]
    for comp in fair_components(graph, reached):
        candidates += [(distance[u + offset], u, 1, comp) for u in comp]
    if not candidates:
        return None
    _, entry, cycles, comp = min(candidates, key=lambda c: c[:3])
    _, path = nx.multi_source_dijkstra(prefix, sources, target=entry + offset, weight=None)
    states = [u % n if offset else u for u in path]
    return Lasso(states, _cycle(graph, comp, entry) if cycles else [])


def _cycle(graph: StateGraph, comp: set[int], entry: int) -> list[tuple[int, int, Label]]:
    """Steps inside `comp` from `entry` back to it that keep every fairness constraint: each
    constraint enabled in comp is taken, or (weak ones) a state where it is disabled is
    visited. Greedy: the nearest step or state for each constraint in turn."""
    within = graph.steps.subgraph(comp)
    takers: dict[int, list[tuple[int, int, Label]]] = {}
    for u in sorted(comp):
        for v in within.succ[u]:
            for label in graph.labels[u, v]:
                for c in label[2]:
                    takers.setdefault(c, []).append((u, v, label))
    steps: list[tuple[int, int, Label]] = []
    visited, taken = {entry}, set()
    here = entry

    def take(u: int, v: int, label: Label) -> None:
        steps.append((u, v, label))
        visited.add(v)
        taken.update(label[2])

    def walk(to: int) -> None:
        for u, v in itertools.pairwise(nx.shortest_path(within, here, to)):
            take(u, v, graph.label(u, v))

    for c, constraint in enumerate(graph.constraints):
        enabled = graph.enabled[c] & comp
        if not enabled or c in taken:
            continue
        if not constraint.strong and visited - enabled:
            continue  # weak, and already disabled in a state of the cycle
        distance = nx.single_source_shortest_path_length(within, here)
        if c in takers:
            u, v, label = min(takers[c], key=lambda e: (distance[e[0]], e[0], e[1]))
            walk(u)
            take(u, v, label)
            here = v
        else:  # weak, disabled somewhere in comp (else comp would not be fair)
            target = min(comp - enabled, key=lambda w: (distance[w], w))
            walk(target)
            here = target
    if not steps:  # no constraint asked for anything: any cycle through entry will do
        v = min(within.succ[entry])
        take(entry, v, graph.label(entry, v))
        here = v
    walk(entry)
    return steps


def _record(
    model: Model, graph: StateGraph, result: CheckResult, prop: Property, lasso: Lasso
) -> None:
    """Replay the lasso (every engine agrees on its steps) into `result`."""
    fps = graph.fps
    first = lasso.path[0]
    chain = [(ROOT, graph.init_index[first], fps[first])]
    chain += [(*graph.label(u, v)[:2], fps[v]) for u, v in itertools.pairwise(lasso.path)]
    chain += [(action, binding, fps[v]) for _, v, (action, binding, _) in lasso.cycle]
    steps = replay(model, chain)
    result.verdict = "violation"
    result.property = prop.name
    result.loop_start = len(lasso.path) - 1
    if lasso.cycle:
        result.trace, result.loop_back = steps[:-1], steps[-1]
    else:
        result.trace, result.loop_back = steps, None
