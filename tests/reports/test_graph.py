"""Traces and state spaces as networkx graphs, and `mc graph`."""

from __future__ import annotations

import warnings

import networkx as nx
import pydot
import pytest

from checker.loader import load_model
from checker.reports.graph import StateSpaceTooLarge, describe_action, trace_graph
from checker.run import state_space_graph
from checker.values import show
from checker.values.record import Record
from tests.conftest import SPECS

DIE_HARD = str(SPECS / "examples" / "die_hard.py")


def test_trace_graph_is_a_path_of_changed_variables(kip903_result):
    trace = kip903_result.trace
    g = trace_graph(trace, kip903_result.invariant)
    assert nx.is_directed_acyclic_graph(g) and list(nx.topological_sort(g)) == list(
        range(1, len(trace) + 1)
    )
    assert g.number_of_edges() == len(trace) - 1
    first = g.nodes[1]
    assert first["initial"] and first["changed"] == tuple(trace[0].state)
    assert first["label"][0] == "State 1"
    for number in range(2, len(trace) + 1):
        node = g.nodes[number]
        before, after = trace[number - 2].state, trace[number - 1].state
        assert set(node["changed"]) == {k for k in after if after[k] != before[k]}
        assert node["label"][1 : 1 + len(node["changed"])] == [
            f"{k} = {show(after[k])}" for k in node["changed"]
        ]
        step = trace[number - 1]
        assert g.edges[number - 1, number]["label"] == [describe_action(step.action, step.params)]
    assert g.nodes[len(trace)]["violated"] == kip903_result.invariant
    assert not any(g.nodes[n]["violated"] for n in range(1, len(trace)))


def test_state_space_graph_of_die_hard():
    model = load_model(DIE_HARD)
    g = state_space_graph(model)
    assert len(g) == 16  # as TLC counts it
    initial = [n for n, d in g.nodes(data=True) if d["initial"]]
    assert initial == [1] and g.nodes[1]["state"] == Record(small=0, big=0)
    goal = [d["state"] for _, d in g.nodes(data=True) if d["violated"] == "big_is_not_4"]
    assert goal and all(s["big"] == 4 for s in goal)
    # Every transition is an edge labelled with the actions that take it.
    fill_big = g.edges[
        1, next(n for n, d in g.nodes(data=True) if d["state"] == Record(small=0, big=5))
    ]
    assert "fill_big()" in fill_big["label"]
    # With both jugs empty, emptying or pouring changes nothing: one self-loop, four actions.
    assert set(g.edges[1, 1]["label"]) == {
        "empty_small()",
        "empty_big()",
        "small_to_big()",
        "big_to_small()",
    }
    assert all(nx.has_path(g, 1, n) for n in g)


def test_state_space_graph_refuses_above_the_limit():
    with pytest.raises(StateSpaceTooLarge, match="more than 10 distinct states"):
        state_space_graph(load_model(DIE_HARD), max_states=10)
    assert len(state_space_graph(load_model(DIE_HARD), max_states=16)) == 16


def parse_dot(text: str) -> pydot.Dot:
    with warnings.catch_warnings():  # pydot uses pyparsing names deprecated in 3.3
        warnings.simplefilter("ignore", DeprecationWarning)
        (parsed,) = pydot.graph_from_dot_data(text)
    return parsed


def _unquote(text: str) -> str:
    return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def test_mc_graph_prints_dot_that_parses_back(mc):
    result = mc("graph", DIE_HARD)
    assert result.code == 0
    parsed = parse_dot(result.out)
    nodes = {n.get_name(): n for n in parsed.get_nodes() if n.get_name() not in ("node", "edge")}
    assert len(nodes) == 16
    labels = [_unquote(n.get("label")).split("\\l") for n in nodes.values()]
    assert ["State 1", "big = 0", "small = 0", ""] in labels
    edges = {(e.get_source(), e.get_destination()) for e in parsed.get_edges()}
    assert len(edges) == state_space_graph(load_model(DIE_HARD)).number_of_edges()


def test_mc_graph_refuses_a_big_state_space_politely(mc):
    result = mc("graph", DIE_HARD, "--max-states", "5")
    assert result.code == 152
    assert "more than 5 distinct states" in result.err and "lower the constants" in result.err
    assert "Traceback" not in result.err and result.out == ""


def test_mc_graph_writes_mermaid_and_svg(mc, tmp_path):
    if not __import__("shutil").which("dot"):
        pytest.skip("Graphviz's dot is not installed (make test installs it)")
    mmd, svg = tmp_path / "g.mmd", tmp_path / "g.svg"
    result = mc("graph", DIE_HARD, "--mermaid", mmd, "--svg", svg)
    assert result.code == 0 and "16 states" in result.err
    assert mmd.read_text().startswith("flowchart TD")
    assert mmd.read_text().count('"]') == 16
    assert "<svg" in svg.read_text() and "fill_big()" in svg.read_text()
