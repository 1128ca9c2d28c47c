"""The search against networkx on random finite transition systems: the same reachable
states, the same depth, and a shortest trace to a planted bad state. `matches_networkx` is
also run with two worker processes here, and with the Spark engine in test_spark_engine."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Record, Spec, action, invariant
from checker.local.bfs import check
from checker.model import Model
from checker.result import CheckResult
from checker.search.options import Options


def graph_spec(edges: dict[int, tuple[int, ...]], starts: tuple[int, ...], bad: int) -> Spec:
    class Graph(Spec):
        def init(self):
            return [Record(node=n) for n in starts]

        @action(to=lambda s: edges.get(s.node, ()))
        def step(self, s, to):
            return s.replace(node=to)

        @invariant
        def not_bad(self, s):
            return s.node != bad

    return Graph()


@st.composite
def systems(draw):
    n = draw(st.integers(min_value=1, max_value=25))
    nodes = st.integers(min_value=0, max_value=n - 1)
    edges = draw(st.dictionaries(nodes, st.lists(nodes, max_size=4, unique=True), max_size=n))
    starts = tuple(draw(st.lists(nodes, min_size=1, max_size=3)))
    bad = draw(nodes)
    return {k: tuple(v) for k, v in edges.items()}, starts, bad


def matches_networkx(system, explore: Callable[[Model], CheckResult]) -> None:
    """`explore` checks without deadlocks (a random graph has nodes without edges)."""
    edges, starts, bad = system
    g = nx.DiGraph()
    g.add_nodes_from(starts)
    g.add_edges_from((a, b) for a, targets in edges.items() for b in targets)
    # Multi-source shortest distances from the initial states.
    dist = nx.multi_source_dijkstra_path_length(g, set(starts), weight=None)

    full = explore(Model(graph_spec(edges, starts, bad), invariants=[]))
    assert full.verdict == "ok"
    assert full.distinct_states == len(dist)
    assert full.depth == max(dist.values()) + 1
    assert full.states_generated == len(starts) + sum(len(edges.get(n, ())) for n in dist)

    found = explore(Model(graph_spec(edges, starts, bad)))
    if bad in dist:  # so over many examples: reachable in mc <=> reachable in networkx
        assert found.verdict == "violation"
        assert len(found.trace) == dist[bad] + 1
        path = [step.state.node for step in found.trace]
        assert path[0] in starts and path[-1] == bad
        assert all(b in edges.get(a, ()) for a, b in pairwise(path))
    else:
        assert found.verdict == "ok"


@settings(max_examples=150, deadline=None)
@given(systems())
def test_reachability_depth_and_shortest_trace_match_networkx(system):
    matches_networkx(system, lambda model: check(model, Options(deadlock=False)))


@settings(max_examples=25, deadline=None)
@given(systems())
def test_the_same_with_two_worker_processes(system):
    matches_networkx(system, lambda model: check(model, Options(deadlock=False, workers=2)))
