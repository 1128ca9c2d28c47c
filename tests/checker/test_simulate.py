"""`mc simulate`: random walks reproduced by their seed, verdicts shortened, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from checker import Record, Spec, action, invariant
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.result import CheckResult
from checker.simulation import Options, simulate
from checker.values.encoding import encode
from tests.conftest import ROOT, SPECS

DIE_HARD = SPECS / "examples" / "die_hard.py"
KIP903 = SPECS / "light" / "kip903.py"


LINE = """
    from checker import Record, Spec, action, constant, invariant

    class Line(Spec):
        '''x walks up and down 0..top; at top nothing is enabled (a deadlock).'''

        top = constant(5, "the end of the line")
        limit = constant(99, "the invariant wants x below this")
        boom_at = constant(-1, "where the action boom raises")
        oops_at = constant(-1, "where the invariant raises")

        def init(self):
            return Record(x=0)

        @action
        def inc(self, s):
            return s.replace(x=s.x + 1) if s.x < self.top else None

        @action
        def dec(self, s):
            return s.replace(x=s.x - 1) if 0 < s.x < self.top else None

        @action
        def boom(self, s):
            return s.replace(x=1 // 0) if s.x == self.boom_at else None

        @invariant
        def below_limit(self, s):
            if s.x == self.oops_at:
                raise KeyError("oops")
            return s.x < self.limit
"""


class Hops(Spec):
    """x grows by 1, 2 or 3 (one action with three successors), or is halved."""

    def init(self):
        return Record(x=0)

    @action
    def hop(self, s):
        return [s.replace(x=s.x + d) for d in (1, 2, 3)]

    @action
    def halve(self, s):
        return s.replace(x=s.x // 2) if s.x > 1 else None

    @invariant
    def below_ten(self, s):
        return s.x < 10


@pytest.fixture
def line(write_spec):
    """Line's model with these constants."""
    path = write_spec(LINE, "line.py")
    return lambda **constants: load_model(path, {k: str(v) for k, v in constants.items()})


def run(model: Model, seed: int = 1, traces: int = 20, depth: int = 30, **kw) -> CheckResult:
    """Walks without deadlock detection (Line stops at its top), unless asked."""
    kw.setdefault("deadlock", False)
    return simulate(model, Options(seed=seed, traces=traces, max_depth=depth, **kw))


def actions(result: CheckResult) -> list[str | None]:
    return [step.action for step in result.trace[1:]]


def assert_is_a_behavior(model: Model, result: CheckResult) -> None:
    """Each state of the trace is a successor, by its action and parameters, of the one before."""
    assert result.trace[0].state in model.initial_states()
    for before, after in zip(result.trace, result.trace[1:]):
        successors = model.expand(encode(before.state))
        assert any(
            model.actions[s.action].name == after.action
            and model.actions[s.action].bindings(before.state)[s.binding]
            == tuple(after.params.values())
            and s.state == after.state
            for s in successors
        )


def test_same_seed_same_walks_and_result():
    model = load_model(DIE_HARD)
    first, again = [simulate(model, Options(seed=1, traces=100, max_depth=50)) for _ in range(2)]
    assert first.verdict == again.verdict == "violation"
    assert [(s.action, s.state) for s in first.trace] == [(s.action, s.state) for s in again.trace]
    assert first.simulation == again.simulation
    assert (first.distinct_states, first.states_generated, first.coverage) == (
        again.distinct_states,
        again.states_generated,
        again.coverage,
    )
    other = simulate(model, Options(seed=2, traces=100, max_depth=50))
    assert other.simulation is not None and other.simulation.visited == 100 * 50  # no violation


def test_a_violation_is_shortened_to_the_shortest_counterexample():
    model = load_model(DIE_HARD)
    result = simulate(model, Options(seed=1, traces=100, max_depth=50))
    assert result.verdict == "violation" and result.invariant == "big_is_not_4"
    assert result.simulation is not None
    assert (result.simulation.found_trace, result.simulation.found_depth) == (99, 50)
    assert actions(result) == actions(check(model))  # BFS's 7 states, step by step
    assert_is_a_behavior(model, result)


def test_kip903_violation_found_by_simulation_has_the_bfs_length():
    model = load_model(KIP903, {"fixed": "false"})
    result = simulate(model, Options(seed=4, traces=100, max_depth=60))
    assert result.verdict == "violation" and result.invariant == "no_stale_epoch_in_isr"
    assert result.simulation is not None and result.simulation.found_depth == 16
    assert len(result.trace) == len(check(model).trace) == 8
    assert actions(result) == [
        "fetch",
        "fetch",
        "unclean_shutdown",
        "register_broker",
        "unfence_broker",
        "send_alter_partition",
        "handle_alter_partition",
    ]
    assert_is_a_behavior(model, result)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_wandering_walks_shorten_to_the_straight_path(line, seed):
    """A walk up and down the line is cut to its loop-free, monotone core, whatever the seed."""
    violation = run(line(limit=4), seed)
    assert violation.verdict == "violation" and actions(violation) == ["inc"] * 4
    deadlock = run(line(), seed, deadlock=True)
    assert deadlock.verdict == "deadlock" and actions(deadlock) == ["inc"] * 5
    assert deadlock.simulation is not None and deadlock.simulation.found_depth >= 6


def test_errors_are_shortened_and_name_what_raised(line):
    action_error = run(line(boom_at=3))
    assert action_error.verdict == "error" and actions(action_error) == ["inc"] * 3
    assert action_error.error is not None
    assert (action_error.error.kind, action_error.error.name) == ("action", "boom")
    invariant_error = run(line(oops_at=2))
    assert invariant_error.verdict == "error" and actions(invariant_error) == ["inc"] * 2
    assert invariant_error.error is not None
    assert (invariant_error.error.kind, invariant_error.error.name) == ("invariant", "below_limit")


@pytest.mark.parametrize("seed", range(1, 9))
def test_shortening_an_action_with_several_successors_keeps_a_behavior(seed):
    model = Model(Hops())
    result = simulate(model, Options(seed=seed, traces=10, max_depth=40))
    assert result.verdict == "violation" and result.trace[-1].state.x >= 10
    assert result.simulation is not None
    assert len(result.trace) <= result.simulation.found_depth
    assert all(step.state.x < 10 for step in result.trace[:-1])
    assert_is_a_behavior(model, result)


def test_depth_bounds_every_walk_and_deadlocks_end_walks(line):
    result = run(line(top=100), traces=7, depth=6)
    assert result.verdict == "ok" and result.depth == 6
    assert result.simulation is not None and result.simulation.visited == 7 * 6
    assert result.states_generated == sum(c.fired for c in result.coverage)
    short = run(line(top=2), traces=5, depth=50)  # x=2 has no successor: walks end there
    assert short.verdict == "ok" and short.distinct_states == 3
    assert short.simulation is not None and short.simulation.visited < 5 * 50


def test_exit_codes_and_the_not_a_proof_text(mc, write_spec):
    ok = mc("simulate", DIE_HARD, "--seed", "2", "--traces", "100", "--depth", "50")
    assert ok.code == 0
    assert ok.out.startswith("Simulating DieHard") and ok.out.count("seed 2") == 1
    assert ok.err.startswith("mc: seed 2\n")
    assert re.search(
        r"No violation in 100 traces of depth <= 50 \(5,000 states visited, \d+ distinct\);"
        r" simulation is not a proof\.",
        ok.out,
    )
    bad = mc("simulate", DIE_HARD, "--seed", "1", "--traces", "100", "--depth", "50")
    assert bad.code == 12 and "Error: invariant big_is_not_4 is violated." in bad.out
    assert "Found at depth 50 in trace 99, shortened to depth 7 (6 steps):" in bad.out
    spec = write_spec(LINE, "line.py")
    assert mc("simulate", spec, "-D", "top=3", "--seed", "1").code == 11
    assert mc("simulate", spec, "-D", "top=3", "--seed", "1", "--no-deadlock").code == 0
    assert mc("simulate", spec, "-D", "boom_at=2", "--seed", "1").code == 75
    assert mc("simulate", spec, "--invariant", "nope").code == 151


def test_a_run_without_seed_prints_one_that_repeats_it(mc, tmp_path):
    args = [DIE_HARD, "--traces", "30", "--depth", "20", "--progress", "0"]
    first = mc("simulate", *args, "--json", tmp_path / "a.json")
    seed = re.match(r"mc: seed (\d+)\n", first.err)
    assert seed is not None
    again = mc("simulate", *args, "--seed", seed.group(1), "--json", tmp_path / "b.json")
    assert (first.code, _untimed(first.out)) == (again.code, _untimed(again.out))
    docs = [json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json")]
    for doc in docs:
        doc.pop("seconds")
    assert docs[0] == docs[1] and docs[0]["simulation"]["seed"] == int(seed.group(1))


def test_same_output_whatever_the_hash_seed():
    """Sets in states are ordered canonically: walks do not depend on PYTHONHASHSEED."""
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        args = [KIP903, "-D", "fixed=false", "--seed", "4", "--traces", "30", "--depth", "60"]
        run = subprocess.run(
            [sys.executable, "-m", "checker", "simulate", *map(str, args), "--progress", "0"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert run.returncode == 12
        outputs.append(_untimed(run.stdout))
    assert outputs[0] == outputs[1]


def test_trace_reports_and_progress(mc, tmp_path):
    itf, html = tmp_path / "t.itf.json", tmp_path / "t.html"
    args = [DIE_HARD, "--seed", "1", "--traces", "100", "--depth", "50"]
    result = mc("simulate", *args, "--itf", itf, "--html", html, "--progress", "0.000001")
    assert result.code == 12
    assert len(json.loads(itf.read_text())["states"]) == 7
    assert "invariant big_is_not_4 is violated" in html.read_text()
    assert re.search(r"Progress at \d\d:\d\d:\d\d: \d+ of 100 traces", result.err)
    args = [DIE_HARD, "--seed", "2", "--traces", "10", "--depth", "10", "--progress", "0"]
    assert mc("simulate", *args, "--html", html).code == 0
    page = html.read_text()  # no violation found is no proof: amber, not green
    assert '<span class="verdict unsure">No violation in 10 traces of depth &lt;= 10' in page


def _untimed(text: str) -> str:
    return re.sub(r"Finished in .*", "", text)


def test_a_walk_ends_with_the_step_that_breaks_a_step_property_or_leaves_tlcs_constraint():
    from checker.loader import load_model
    from checker.simulation import Options as WalkOptions
    from checker.simulation import simulate as walk
    from tests.conftest import ROOT

    path = ROOT / "specs" / "examples" / "constrained.py"
    slow = walk(load_model(path, {"slow": "true"}), WalkOptions(seed=1, traces=3, max_depth=5))
    assert (slow.verdict, slow.step_property) == ("violation", "slow_steps")
    assert [(s.action, s.state.x) for s in slow.trace] == [(None, 0), ("next", 2)]
    six = walk(load_model(path, {"six": "true"}), WalkOptions(seed=1, traces=30, max_depth=8))
    assert (six.verdict, six.invariant, six.outside_constraints) == ("violation", "not_six", True)
    assert six.trace[-1].state.x == 6
