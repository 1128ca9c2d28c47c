"""`mc explore` without a browser: paths, the choices in a state and why one is disabled, the
predicates on a state, a --json report's trace as a path, and find."""

from __future__ import annotations

import json

import pytest

from checker.errors import ConfigError
from checker.explore import page, read_trace
from checker.explore.find import Find, FindError
from checker.explore.navigate import Move, Navigator, Path, PathError
from checker.loader import load_model
from checker.local import bfs
from checker.reports import json_report
from tests.conftest import SPECS

COUNTER = """\
from checker import Record, Spec, action, action_constraint, constraint, invariant, reachable
from checker import terminal

class Counter(Spec):
    def init(self):
        return Record(x=0, y=0)

    @action(step=(1, 2))
    def add(self, s, step):
        if s.x + step > 4:
            return None
        return s.replace(x=s.x + step)

    @action
    def fork(self, s):
        return [s.replace(y=1), s.replace(y=2)] if s.y == 0 else []

    @action
    def unfork(self, s):
        return s.replace(y=0) if s.y else None

    @action
    def jump(self, s):
        return s.replace(x=9)

    @action
    def crash(self, s):
        if s.x == 3:
            raise ValueError("three")
        return None

    @action_constraint
    def no_jumps(self, s, t):
        return t.x != 9

    @constraint
    def small(self, s):
        return s.x < 4

    @invariant
    def below_three(self, s):
        return s.x < 3

    @reachable
    def two(self, s):
        return s.x == 2

    @terminal
    def done(self, s):
        return s.x == 4
"""


@pytest.fixture
def counter(write_spec):
    return Navigator(load_model(str(write_spec(COUNTER)), {}))


def by_label(choices):
    return {(c.action, tuple(c.params.values())): c for c in choices}


def test_a_path_reads_back_as_written():
    path = Path(1, (Move("fetch", 2), Move("crash", 0, 3)))
    assert str(path) == "1,fetch.2,crash.0.3"
    assert Path.parse(str(path)) == path
    assert Path.parse("") == Path(0)
    assert str(path.prefix(2)) == "1,fetch.2"
    for bad in ("x", "0,fetch", "0,fetch.a", "0,1fetch.2"):
        with pytest.raises(PathError):
            Path.parse(bad)


def test_choices_enabled_first_each_with_its_successor_or_reason(counter):
    walk = counter.walk(Path.parse("0,add.1"))  # x = 2
    choices = counter.choices(walk)
    enabled = [c for c in choices if c.enabled]
    assert [(c.action, c.params, str(c.path)) for c in enabled] == [
        ("add", {"step": 1}, "0,add.1,add.0"),
        ("add", {"step": 2}, "0,add.1,add.1"),
        ("fork", {}, "0,add.1,fork.0"),
        ("fork", {}, "0,add.1,fork.0.1"),  # the action's second successor
    ]
    assert choices[: len(enabled)] == enabled
    found = by_label(choices)
    assert found[("add", (1,))].violates == ["below_three"]  # x = 3
    assert found[("add", (2,))].outside == "small"  # x = 4: not expanded, still a state
    assert found[("jump", ())].reason == "the action constraint no_jumps discards its step"
    assert found[("crash", ())].reason == "not enabled: its guard returned None"
    assert not counter.deadlocked(walk, choices)
    three = counter.walk(Path.parse("0,add.1,add.0"))
    crash = by_label(counter.choices(three))[("crash", ())]
    assert crash.error and crash.reason == "raised ValueError: three"


def test_a_state_outside_a_constraint_is_not_expanded(counter):
    walk = counter.walk(Path.parse("0,add.1,add.1"))  # x = 4
    choices = counter.choices(walk)
    assert not any(c.enabled for c in choices)
    assert {c.reason for c in choices} == {
        "this state is outside the state constraint small: mc does not expand it"
    }
    assert not counter.deadlocked(walk, choices)


def test_the_depth_bound_disables_what_is_enabled(write_spec):
    nav = Navigator(load_model(str(write_spec(COUNTER)), {}), max_depth=2)
    choices = nav.choices(nav.walk(Path.parse("0,add.0")))
    assert not any(c.enabled for c in choices)
    add = by_label(choices)[("add", (1,))]
    assert add.state is not None and add.reason == "the depth bound: --max-depth 2 states"


def test_a_step_back_to_a_state_of_the_path_says_so(counter):
    choices = counter.choices(counter.walk(Path.parse("0,add.0,fork.0")))
    assert [(c.action, c.revisits) for c in choices if c.enabled] == [
        ("add", None),
        ("add", None),
        ("unfork", 2),  # y = 0 again: state 2 of the path
    ]


def test_the_predicates_on_a_state(counter):
    checks = counter.checks(counter.walk(Path.parse("0,add.1,add.0")).state)  # x = 3
    assert [(c.kind, c.name, c.value) for c in checks] == [
        ("invariant", "below_three", False),
        ("reachable", "two", False),
        ("constraint", "small", True),
        ("terminal", "done", False),
    ]


@pytest.mark.parametrize(
    "path, message",
    [
        ("3", "path 3: Counter has 1 initial state, not 4"),
        ("0,nope.0", "path 0,nope.0: step 2: Counter has no action 'nope'"),
        ("0,add.5", "path 0,add.5: step 2: add has 2 bindings here, not 6"),
        ("0,crash.0", "path 0,crash.0: step 2: crash() is not enabled here"),
        ("0,fork.0.2", "path 0,fork.0.2: step 2: fork() has 2 successors here"),
    ],
)
def test_a_path_that_does_not_walk_here_says_where(counter, path, message):
    with pytest.raises(PathError) as error:
        counter.walk(Path.parse(path))
    assert str(error.value) == message


@pytest.fixture(scope="module")
def kip903():
    model = load_model(str(SPECS / "kip903.py"), {"fixed": "false"})
    return Navigator(model), bfs.check(model)


def test_a_json_reports_trace_is_a_path_that_walks_to_its_violation(kip903, tmp_path):
    nav, result = kip903
    report = tmp_path / "result.json"
    json_report.write(result, str(report))
    path, label = read_trace(nav, report)
    walk = nav.walk(path)
    assert [s.state for s in walk.steps] == [s.state for s in result.trace]
    assert path == nav.path_of(result.trace)
    assert label == "invariant leader_candidate_completeness is violated (result.json, 14 states)"
    broken = [c.name for c in nav.checks(walk.state) if c.kind == "invariant" and not c.value]
    assert broken == [result.invariant]


def test_a_bad_trace_file_is_a_config_error(kip903, tmp_path):
    nav, result = kip903
    doc = json_report.as_dict(result)
    cases = {
        "not json": "--trace {f}: not a JSON file (Expecting value: line 1 column 1 (char 0))",
        json.dumps({"a": 1}): "--trace {f}: not an mc --json report (no spec_name and trace)",
        json.dumps({**doc, "spec_name": "Kip841"}): "--trace {f}: a result of Kip841, not of"
        " Kip903",
        json.dumps({**doc, "constants": {**doc["constants"], "fixed": True}}): "--trace {f}: a"
        " result with other constants (fixed=true there, false here): pass the same -D",
        json.dumps({**doc, "trace": doc["trace"][:3] + doc["trace"][4:]}): "--trace {f}: state"
        " 4 (receive_fetch_response) is not a step Kip903 takes from state 3 (another spec, or"
        " other constants?)",
        json.dumps([{**doc, "spec_name": "Other"}]): "--trace {f}: no result of Kip903 in it"
        " (results: Other)",
    }
    for number, (text, message) in enumerate(cases.items()):
        file = tmp_path / f"r{number}.json"
        file.write_text(text)
        with pytest.raises(ConfigError) as error:
            read_trace(nav, file)
        assert str(error.value) == message.format(f=file)
    with pytest.raises(ConfigError, match="cannot read: No such file or directory"):
        read_trace(nav, tmp_path / "missing.json")


def test_find_takes_the_engines_shortest_path(kip903):
    nav, _ = kip903
    # The same search as `mc check --witness` on the spec without its invariants (which
    # the find ignores, as it ignores the symmetry).
    model = load_model(nav.model.path, {"fixed": "false"}, invariants=[], symmetry=False)
    witness = bfs.check(
        model, bfs.Options(witness="replica_back_with_an_empty_log", deadlock=False)
    )
    found = Find(nav, "self.replica_back_with_an_empty_log(s)").start()
    found.join(60)
    status = found.status()
    assert status.state == "found", status.message
    assert status.path == nav.path_of(witness.trace)
    assert len(witness.trace) == witness.reached["replica_back_with_an_empty_log"]
    assert status.message.startswith(
        f"found: self.replica_back_with_an_empty_log(s) holds in state {len(witness.trace)}"
    )


def test_find_says_what_it_cannot_do(counter):
    with pytest.raises(FindError, match=r"find: invalid syntax.*: s\.x =="):
        Find(counter, "s.x ==")
    with pytest.raises(FindError, match="write a Python expression"):
        Find(counter, "  ")
    crashed = Find(counter, "s.x == 7").start()
    crashed.join(30)
    assert crashed.status().state == "error"
    assert crashed.status().message == (
        "find: the search stopped: action crash() raised ValueError: three"
    )
    assert str(crashed.status().path) == "0,add.0,add.1"  # x = 3, reached first this way
    jugs = Navigator(load_model(str(SPECS / "examples" / "die_hard.py"), {}))
    absent = Find(jugs, "s.big == 6").start()
    absent.join(30)
    assert absent.status().state == "absent"
    assert absent.status().message == "no reachable state satisfies s.big == 6 (16 distinct states)"
    failing = Find(counter, "1 // (s.x - 2) == 5").start()
    failing.join(30)
    status = failing.status()
    assert status.state == "error"
    assert status.message == (
        "find: 1 // (s.x - 2) == 5 raised ZeroDivisionError: integer division or modulo by zero"
    )
    assert str(status.path) == "0,add.1"  # where it raised: x = 2


def test_a_find_stops_when_asked(write_spec):
    spin = write_spec(
        """\
        from checker import Record, Spec, action

        class Grow(Spec):
            def init(self):
                return Record(n=0, m=0)

            @action(k=(1, 2, 3))
            def grow(self, s, k):
                return s.replace(n=s.n + k)

            @action
            def other(self, s):
                return s.replace(m=(s.m + 1) % 1000)
        """,
        "grow.py",
    )
    find = Find(Navigator(load_model(str(spin), {})), "s.n < 0").start()
    find.stop()
    find.join(30)
    assert find.status().state == "stopped"
    assert find.status().message.startswith("stopped after ")


def test_each_initial_state_is_a_start(write_spec):
    two = write_spec(
        COUNTER.replace("return Record(x=0, y=0)", "return [Record(x=0, y=0), Record(x=1, y=0)]"),
        "two.py",
    )
    nav = Navigator(load_model(str(two), {}))
    shown = page.view(nav, nav.walk(Path.parse("1,add.0")))
    assert shown["inits"] == (
        '<p class="inits">Initial states: <button type="button" data-go="0">1</button>'
        '<button type="button" data-go="1" disabled>2</button></p>'
    )
    assert "x = 1" in shown["text"].split("State 2")[0]
    one = Navigator(load_model(str(SPECS / "examples" / "die_hard.py"), {}))
    assert page.view(one, one.walk(Path(0)))["inits"] == ""
