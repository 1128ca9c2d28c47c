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
- `P leads_to Q`: one that reaches a state with P and not Q and stays in not-Q states;
- `[]<>(P leads_to Q)`: one that stays in not-Q states from some point on and passes P
  states again and again.
The counterexample is a lasso: a shortest path to the fair component (or the stuttering
state) and a cycle inside it that takes every action fairness needs, "back to state k".
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from checker import guard
from checker.behaviour import RAISED, TRUE, Behaviour, Recording
from checker.compiled import DomainTooLarge, domain_order
from checker.determinism import not_deterministic
from checker.errors import OUTSIDE, ConfigError, EvaluationError, SpecError, raised
from checker.model import Model
from checker.result import CheckResult, ErrorInfo
from checker.spec import LeadsTo, Spec, fairness_of, properties_of, property_kind
from checker.trace import chain_from_positions, replay
from checker.values import show
from checker.values.record import Record


@dataclass(frozen=True)
class Property:
    """A temporal property compiled for a spec instance: its predicates are bound."""

    name: str
    kind: str  # "eventually", "always_eventually", "leads_to", "always_eventually_leads_to"
    p: Callable[[Record], Any]
    q: Callable[[Record], Any] | None = None  # leads_to's Q
    formula: str = ""  # e.g. "eventually has_leader", "leaderless ~> has_leader"
    declared: str = ""  # the name it is declared under: `name` of `name(b=1)`


@dataclass(frozen=True)
class Constraint:
    """One fairness assumption: of an action as a whole, or of one binding of it."""

    strong: bool
    action: int
    binding: tuple[Any, ...] | None = None  # None: any binding (the action as a whole)


def select(model: Model, names: Sequence[str] | None = None) -> list[Property]:
    """The spec's temporal properties (all, or those `names` selects, in that order). A
    property with domains is one Property per binding, `name(b=1)`; its name selects them
    all, and `name(b=1)` selects one."""
    return select_of(model.spec, model.path, names)


def select_of(spec: Spec, path: str, names: Sequence[str] | None = None) -> list[Property]:
    """`select` for a spec instance (from the file at `path`), before it is compiled: what is
    checked decides how it is compiled (checker.run: no symmetry under liveness)."""
    owner = type(spec).__name__
    try:
        members = properties_of(type(spec))
    except TypeError as exc:  # a property overridden without its decorator
        raise SpecError(f"{path}: {exc}" if path else str(exc)) from None
    declared: dict[str, list[Property]] = {}
    for name, member in members.items():
        kind = property_kind(member)
        if isinstance(member, LeadsTo):
            p, q = member.p.__get__(spec), member.q.__get__(spec)
            declared[name] = [
                Property(
                    f"{name}({_shown(binding)})" if binding else name,
                    kind,
                    functools.partial(p, **binding) if binding else p,
                    functools.partial(q, **binding) if binding else q,
                    member.formula_of(_shown(binding)),
                    name,
                )
                for binding in _bindings(spec, f"{owner}.{name}", member.domains)
            ]
        else:
            words = "eventually" if kind == "eventually" else "always eventually"
            declared[name] = [
                Property(name, kind, getattr(spec, name), None, f"{words} {name}", name)
            ]
    if names is None:
        return [prop for props in declared.values() for prop in props]
    each = {prop.name: [prop] for props in declared.values() for prop in props}
    unknown = [n for n in names if n not in declared and n not in each]
    if unknown:
        raise ConfigError(
            f"--property {unknown[0]}: {owner} has no such temporal property"
            f" (properties: {', '.join(declared) or 'none'})"
        )
    return [prop for n in names for prop in declared.get(n) or each[n]]


def _bindings(spec: Spec, where: str, domains: dict[str, Any]) -> list[dict[str, Any]]:
    """Every binding of a property's parameters (one empty binding if it has none)."""
    values = []
    for param, domain in domains.items():
        if isinstance(domain, str):
            if not hasattr(spec, domain):
                raise SpecError(f"{where}: domain {domain!r} of {param!r} is not a spec attribute")
            domain = getattr(spec, domain)
        try:
            values.append(domain_order(domain))
        except TypeError:
            raise SpecError(
                f"{where}: the domain of {param!r} must be an iterable, not {domain!r}"
            ) from None
        except DomainTooLarge as exc:
            raise SpecError(f"{where}: the domain of {param!r} {exc}") from None
    return [dict(zip(domains, combo)) for combo in itertools.product(*values)]


def _shown(binding: dict[str, Any]) -> str:
    return ", ".join(f"{k}={show(v)}" for k, v in binding.items())


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


def recording(model: Model, properties: Sequence[Property], **more: Any) -> Recording:
    """What the search records for `properties`: their predicates, and the binding keys of
    the actions whose fairness is per binding. Refuses a model under symmetry or a view before
    any search (see `check`)."""
    if properties:
        _refuse_reductions(model)
    predicates: list[tuple[str, Callable[[Record], Any]]] = []
    for prop in properties:
        predicates.append((f"P:{prop.name}", prop.p))
        if prop.q is not None:
            predicates.append((f"Q:{prop.name}", prop.q))
    keyed = frozenset(
        ai for ai, act in enumerate(model.actions) if fairness_of(act.fn).each is not None
    )
    return Recording(tuple(predicates), keyed, **more)


def _refuse_reductions(model: Model) -> None:
    """Symmetry and a view merge states that a fair cycle must tell apart: a lasso of merged
    states need not be a behaviour (TLC's maintainers call liveness under either unsound)."""
    if model.symmetry is not None:
        raise ConfigError(
            f"{model.name}: temporal properties cannot be checked under symmetry reduction:"
            " check them with --no-symmetry"
        )
    if model.view is not None:
        raise ConfigError(
            f"{model.name}: temporal properties cannot be checked under the spec's view:"
            " check them with --no-view"
        )


@guard.guarded()  # spec code cannot end the run (for API users: the CLI guards it too)
def check(
    model: Model,
    result: CheckResult,
    properties: Sequence[Property],
    behaviour: Behaviour | Callable[[], Behaviour],
) -> CheckResult:
    """Check `properties` under the spec's fairness, once the search that produced `result`
    found every invariant to hold; record the outcome in `result` and return it. The state
    graph is `behaviour`, as that search recorded it (`recording(...)`), or a function that
    records it by searching again (checker.run.check_properties). A violation sets verdict
    "violation", `property`, and the lasso (`trace`, `loop_start`, `loop_back`); a predicate
    that raises sets verdict "error"; Ctrl-C (or SIGTERM) verdict "incomplete".
    `result.properties` and `fairness` name what was selected either way."""
    result.properties = {p.name: p.formula for p in properties}
    result.fairness = fairness(model) if properties else []
    if result.verdict != "ok" or not properties:
        return result
    _refuse_reductions(model)
    start = time.perf_counter()
    try:
        if not isinstance(behaviour, Behaviour):
            behaviour = behaviour()  # (the search that produced `result` judged deadlocks)
        graph = StateGraph(model, behaviour)
        graph.raise_predicate_errors(properties)
        for prop in properties:
            lasso = counterexample(graph, prop)
            if lasso is not None:
                _record(model, graph, result, prop, lasso)
                break
    except _PredicateError as exc:
        result.verdict = "error"
        result.error = ErrorInfo.of(exc)
        result.trace = replay(model, chain_from_positions(model, exc.positions))
    except KeyboardInterrupt:  # as the engines do: stop and say what was not decided
        result.verdict = "incomplete"
        result.bound = "interrupted while checking the temporal properties"
    except MemoryError:  # the graph or its components: as the engines do (exit 153)
        result.verdict = "incomplete"
        result.bound = "out of memory while checking the temporal properties"
        result.engine_failed = True
        result.advice = (
            "Every invariant holds. To check the temporal properties, lower the constants, or"
            " check them on a machine with more memory (--no-liveness checks the invariants"
            " alone)."
        )
    result.liveness_seconds = time.perf_counter() - start
    result.seconds += result.liveness_seconds
    if result.verdict != "ok" and result.witness is not None:  # the trace is no witness now
        if result.verdict == "incomplete":
            result.trace = []
        result.witness = None
    return result


# -- the state graph ----------------------------------------------------------------------


class StateGraph:
    """The recorded behaviour without its stutters, with the fairness constraint(s) each
    step takes. A step takes the constraint of its action as a whole (if the action is fair)
    and that of its action and binding (if fair per binding)."""

    def __init__(self, model: Model, behaviour: Behaviour) -> None:
        self.model = model
        self.behaviour = behaviour
        self.n = n = len(behaviour)
        sources = behaviour.sources()
        targets = behaviour.targets.astype(np.int64)
        positions = np.arange(len(targets)) - behaviour.starts[sources]
        moving = sources != targets  # a stutter neither enables nor takes anything
        self.src, self.dst = sources[moving], targets[moving]
        self.position = positions[moving]  # in the source's list of successors
        actions = behaviour.actions[moving].astype(np.int64)
        self.actions = actions
        # Constraints: per fair action, one; per binding of an action fair per binding, one.
        self.constraints: list[Constraint] = []
        whole = np.full(len(model.actions), -1, dtype=np.int64)
        for ai, act in enumerate(model.actions):
            kind = fairness_of(act.fn).whole
            if kind:
                whole[ai] = len(self.constraints)
                self.constraints.append(Constraint(kind == "strong", ai))
        self.whole = whole[actions]  # per step: its action's constraint, or -1
        self.each = np.full(len(actions), -1, dtype=np.int64)
        if behaviour.keys is not None:
            keys = behaviour.keys[moving]
            keyed = keys != 0
            pairs = np.stack([actions[keyed], keys[keyed].astype(np.int64)], axis=1)
            unique, found, inverse = np.unique(
                pairs, axis=0, return_index=True, return_inverse=True
            )
            rank = np.empty(len(unique), dtype=np.int64)  # numbered in the order first met
            rank[np.argsort(found)] = np.arange(len(unique))
            first = len(self.constraints)
            for ai in unique[np.argsort(found), 0].tolist():
                kind = fairness_of(model.actions[ai].fn).each
                self.constraints.append(Constraint(kind == "strong", ai, None))
            self.each[keyed] = first + rank[inverse.reshape(-1)]
        # Where each constraint is enabled: (constraint, state) pairs, distinct.
        taking = np.concatenate(
            [
                np.stack([self.whole, self.src], axis=1)[self.whole >= 0],
                np.stack([self.each, self.src], axis=1)[self.each >= 0],
            ]
        )
        self.enabled = np.unique(taking, axis=0) if len(taking) else np.empty((0, 2), np.int64)
        # The step graph as networkx has it: each (u, v) once, in the order first taken.
        codes = self.src * n + self.dst
        _, first_step = np.unique(codes, return_index=True)
        first_step.sort()
        self.edge_src = self.src[first_step]
        self.edge_dst = self.dst[first_step]
        self.edge_step = first_step  # the step a (u, v) edge stands for

    def raise_predicate_errors(self, properties: Sequence[Property]) -> None:
        """A predicate that raised (or returned a non-bool) on some state: raised again on
        the first such state, as the search met them, with the trace to it."""
        values = self.behaviour.values
        worst = None
        for prop in properties:
            for which, predicate in (("P", prop.p), ("Q", prop.q)):
                if predicate is None:
                    continue
                raised = np.flatnonzero(values[f"{which}:{prop.name}"] == RAISED)
                if len(raised) and (worst is None or raised[0] < worst[0]):
                    worst = (int(raised[0]), prop, predicate)
        if worst is not None:
            state, prop, predicate = worst
            positions = self.path_to(state)
            reached = replay(self.model, chain_from_positions(self.model, positions))[-1].state
            _evaluate(prop, predicate, reached, positions)
            raise not_deterministic(
                f"temporal property {prop.name} raised or failed on {show(reached)} when the"
                " search evaluated it, and not when evaluated again"
            )

    def path_to(self, state: int) -> list[int]:
        """The positions from an initial state (its init index first) to `state`, along the
        steps by which the search found each state."""
        behaviour = self.behaviour
        initial = dict(behaviour.initial)
        first_in = _first_steps_in(behaviour)
        positions = []
        while state not in initial:
            step = first_in[state]
            parent = int(np.searchsorted(behaviour.starts, step, side="right") - 1)
            positions.append(step - int(behaviour.starts[parent]))
            state = parent
        positions.append(initial[state])
        positions.reverse()
        return positions

    def matrix(self, nodes: np.ndarray | None = None, offset: int = 0) -> Any:
        """The step graph (or its part inside the boolean mask `nodes`) as a sparse matrix."""
        src, dst = self.edge_src, self.edge_dst
        if nodes is not None:
            inside = nodes[src] & nodes[dst]
            src, dst = src[inside], dst[inside]
        from scipy.sparse import csr_matrix  # scipy only once a property is checked

        return csr_matrix(
            (np.ones(len(src), dtype=np.int8), (src + offset, dst + offset)),
            shape=(self.n + offset, self.n + offset),
        )


def _first_steps_in(behaviour: Behaviour) -> dict[int, int]:
    """State -> the first step (in the order the search took them) that reaches it."""
    targets, first = np.unique(behaviour.targets, return_index=True)
    return dict(zip(targets.tolist(), first.tolist()))


class _PredicateError(EvaluationError):
    """A property's predicate failed; carries the trace (as positions) to the state."""

    def __init__(self, exc: EvaluationError, positions: list[int]) -> None:
        super().__init__(exc.kind, exc.name, exc.message, state=exc.state, cause=exc.cause)
        self.positions = positions


def _evaluate(
    prop: Property, predicate: Callable[[Record], Any], state: Record, positions: list[int]
) -> bool:
    try:
        value = predicate(state)
    except OUTSIDE:
        raise
    except BaseException as exc:
        error = EvaluationError("property", prop.name, raised(exc), state=state, cause=exc)
        raise _PredicateError(error, positions) from exc
    if value is not True and value is not False:
        error = EvaluationError(
            "property",
            prop.name,
            f"returned {value!r}; a property's predicate returns True or False",
            state=state,
        )
        raise _PredicateError(error, positions)
    return value


# -- fair components and lassos -----------------------------------------------------------


def fair_components(graph: StateGraph, nodes: np.ndarray) -> list[np.ndarray]:
    """The strongly connected sets inside the boolean mask `nodes` (with a step) where a
    behaviour can stay forever, taking all their steps, and be fair (the Emerson-Lei
    refinement for strong fairness), each as a sorted array of states, by smallest state."""
    fair: list[np.ndarray] = []
    work = nodes.copy()
    while work.any():
        labels = _components(graph, work)
        refined = np.zeros(graph.n, dtype=bool)
        for comp in labels:
            drop = _unfair(graph, comp)
            if drop is None:
                fair.append(comp)
            elif len(drop):
                refined[np.setdiff1d(comp, drop)] = True
        work = refined
    return sorted(fair, key=lambda c: int(c[0]))


def _components(graph: StateGraph, nodes: np.ndarray) -> list[np.ndarray]:
    """The strongly connected components inside `nodes` with more than one state."""
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(graph.matrix(nodes), directed=True, connection="strong")
    labels = np.where(nodes, labels, -1)
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    bounds = np.flatnonzero(np.diff(sorted_labels)) + 1
    groups = np.split(order, bounds)
    return [g for g in groups if len(g) > 1 and labels[g[0]] >= 0]


def _unfair(graph: StateGraph, comp: np.ndarray) -> np.ndarray | None:
    """None if a behaviour staying in `comp` and taking all its steps is fair; else the
    states to drop to look for fair components inside it (none: no part of it is fair)."""
    members = np.zeros(graph.n, dtype=bool)
    members[comp] = True
    inside = members[graph.src] & members[graph.dst]
    taken = set(graph.whole[inside].tolist()) | set(graph.each[inside].tolist())
    enabled = graph.enabled[members[graph.enabled[:, 1]]]
    drop: list[np.ndarray] = []
    for c in np.unique(enabled[:, 0]).tolist():
        if c in taken:
            continue
        where = enabled[enabled[:, 0] == c, 1]
        if graph.constraints[c].strong:
            drop.append(where)
        elif len(where) == len(comp):  # weak: enabled all along, never taken
            return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(drop)) if drop else None


@dataclass
class Lasso:
    """A path from an initial state to `path[-1]`, then `cycle` (steps from there back to it)
    repeated forever; an empty cycle stutters at `path[-1]` forever. A step is (u, v, the
    position of the successor in u's list, its action)."""

    path: list[int]
    cycle: list[tuple[int, int, int, int]]


def counterexample(graph: StateGraph, prop: Property) -> Lasso | None:
    """A fair behaviour that violates `prop`, as a lasso, or None if it holds."""
    n = graph.n
    values = graph.behaviour.values
    p_values = values[f"P:{prop.name}"] == TRUE
    q_values = values[f"Q:{prop.name}"] == TRUE if prop.q is not None else None
    initial = [state for state, _ in graph.behaviour.initial]
    offset = 0  # the prefix graph's node of state u is u + offset
    if prop.kind == "leads_to":
        # Two copies of the graph: in the second (offset n), P and not Q held in a state of
        # the path, and Q has not held since; it is entered on a step into such a state.
        assert q_values is not None
        bad = ~q_values
        trigger = bad & p_values
        src, dst = graph.edge_src, graph.edge_dst
        within = bad[src] & bad[dst]
        into = trigger[dst]
        # Each state's edges in the order networkx keeps them: its own, then those into the
        # second copy (in the order of their target's number).
        cross = np.flatnonzero(into)
        cross = cross[np.lexsort((dst[cross], src[cross]))]
        edges = np.concatenate(
            [
                np.stack([src, dst], axis=1),
                np.stack([src[within] + n, dst[within] + n], axis=1),
                np.stack([src[cross], dst[cross] + n], axis=1),
            ]
        )
        order = np.argsort(edges[:, 0], kind="stable")
        edges = edges[order]
        sources = initial + [u + n for u in initial if trigger[u]]
        offset = n
        size = 2 * n
    elif prop.kind == "always_eventually_leads_to":
        # A fair behaviour that stays in not-Q states from some point on and passes a P
        # state again and again: a lasso whose loop starts at a P state.
        assert q_values is not None
        bad = ~q_values
        edges = np.stack([graph.edge_src, graph.edge_dst], axis=1)
        sources = initial
        size = n
    else:
        bad = ~p_values
        edges = np.stack([graph.edge_src, graph.edge_dst], axis=1)
        if prop.kind == "eventually":
            edges = edges[bad[edges[:, 0]] & bad[edges[:, 1]]]
            sources = [u for u in initial if bad[u]]
        else:
            sources = initial
        size = n
    if not sources:
        return None
    distance, parent = _bfs(edges, sources, size)
    reached = bad & (distance[offset : offset + n] >= 0)
    fair_enabled = np.zeros(n, dtype=bool)
    fair_enabled[graph.enabled[:, 1]] = True
    # Where the loop may start: any state, or a P state for []<>(P ~> Q).
    entries = p_values if prop.kind == "always_eventually_leads_to" else np.ones(n, dtype=bool)
    best = None  # (distance, state, 0 to stutter there or 1 to cycle in its component)
    stutter = np.flatnonzero(reached & ~fair_enabled & entries)
    if len(stutter):
        u = int(stutter[np.lexsort((stutter, distance[stutter + offset]))[0]])
        best = (int(distance[u + offset]), u, 0, None)
    for comp in fair_components(graph, reached):
        starts = comp[entries[comp]]
        if not len(starts):
            continue
        u = int(starts[np.lexsort((starts, distance[starts + offset]))[0]])
        candidate = (int(distance[u + offset]), u, 1, comp)
        if best is None or candidate[:3] < best[:3]:
            best = candidate
    if best is None:
        return None
    _, entry, cycles, comp = best
    path = [entry + offset]
    while parent[path[-1]] >= 0:
        path.append(int(parent[path[-1]]))
    states = [u % n if offset else u for u in reversed(path)]
    return Lasso(states, _cycle(graph, comp, entry) if cycles else [])


def _bfs(edges: np.ndarray, sources: list[int], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances (-1: unreached) and parents (-1: a source) of a breadth-first search from
    `sources` in order, each node's edges in their order: the shortest paths networkx's
    multi-source search finds."""
    root = size  # one more node, with an edge to each source, in order
    src = np.concatenate([np.full(len(sources), root), edges[:, 0]])
    dst = np.concatenate([np.array(sources, dtype=np.int64), edges[:, 1]])
    order = np.argsort(src, kind="stable")
    counts = np.bincount(src, minlength=size + 1)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    matrix = csr_matrix((np.ones(len(dst), np.int8), dst[order], indptr), shape=(size + 1,) * 2)
    visit, parent = breadth_first_order(matrix, root, directed=True, return_predecessors=True)
    distance = np.full(size + 1, -1, dtype=np.int64)
    distance[root] = -1
    parent = parent.astype(np.int64)
    for v in visit[1:].tolist():
        u = parent[v]
        distance[v] = 0 if u == root else distance[u] + 1
    parent[parent == root] = -1
    parent[parent < 0] = -1
    return distance[:size], parent[:size]


def _cycle(graph: StateGraph, comp: np.ndarray, entry: int) -> list[tuple[int, int, int, int]]:
    """Steps inside `comp` from `entry` back to it that keep every fairness constraint: each
    constraint enabled in comp is taken, or (weak ones) a state where it is disabled is
    visited. Greedy: the nearest step or state for each constraint in turn (networkx, on the
    component alone)."""
    import networkx as nx

    members = np.zeros(graph.n, dtype=bool)
    members[comp] = True
    inside = np.flatnonzero(members[graph.src] & members[graph.dst])
    within = nx.DiGraph()
    within.add_nodes_from(comp.tolist())
    labels: dict[tuple[int, int], list[tuple[int, int, tuple[int, ...]]]] = {}
    for i in inside.tolist():
        u, v = int(graph.src[i]), int(graph.dst[i])
        taken = tuple(int(c) for c in (graph.whole[i], graph.each[i]) if c >= 0)
        labels.setdefault((u, v), []).append((int(graph.position[i]), int(graph.actions[i]), taken))
    within.add_edges_from(labels)
    enabled_at: dict[int, set[int]] = {}
    members_enabled = graph.enabled[members[graph.enabled[:, 1]]]
    for c, u in members_enabled.tolist():
        enabled_at.setdefault(c, set()).add(u)
    takers: dict[int, list[tuple[int, int, tuple[int, int, tuple[int, ...]]]]] = {}
    for u in sorted(comp.tolist()):
        for v in within.succ[u]:
            for label in labels[u, v]:
                for c in label[2]:
                    takers.setdefault(c, []).append((u, v, label))
    steps: list[tuple[int, int, int, int]] = []
    visited, taken = {entry}, set()
    here = entry
    nodes = set(comp.tolist())

    def take(u: int, v: int, label: tuple[int, int, tuple[int, ...]]) -> None:
        steps.append((u, v, label[0], label[1]))
        visited.add(v)
        taken.update(label[2])

    def walk(to: int) -> None:
        for u, v in itertools.pairwise(nx.shortest_path(within, here, to)):
            take(u, v, labels[u, v][0])

    for c, constraint in enumerate(graph.constraints):
        enabled = enabled_at.get(c, set())
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
            target = min(nodes - enabled, key=lambda w: (distance[w], w))
            walk(target)
            here = target
    if not steps:  # no constraint asked for anything: any cycle through entry will do
        v = min(within.succ[entry])
        take(entry, v, labels[entry, v][0])
        here = v
    walk(entry)
    return steps


def _record(
    model: Model, graph: StateGraph, result: CheckResult, prop: Property, lasso: Lasso
) -> None:
    """Replay the lasso (every engine agrees on its steps) into `result`."""
    behaviour = graph.behaviour
    initial = dict(behaviour.initial)
    positions = [initial[lasso.path[0]]]
    for u, v in itertools.pairwise(lasso.path):
        positions.append(_first_position(graph, u, v))
    positions += [position for _, _, position, _ in lasso.cycle]
    steps = replay(model, chain_from_positions(model, positions))
    result.verdict = "violation"
    result.property = prop.name
    result.loop_start = len(lasso.path) - 1
    if lasso.cycle:
        result.trace, result.loop_back = steps[:-1], steps[-1]
    else:
        result.trace, result.loop_back = steps, None


def _first_position(graph: StateGraph, u: int, v: int) -> int:
    """The position in u's successors of its first step to v."""
    behaviour = graph.behaviour
    start, end = int(behaviour.starts[u]), int(behaviour.starts[u + 1])
    hits = np.flatnonzero(behaviour.targets[start:end] == v)
    return int(hits[0])
