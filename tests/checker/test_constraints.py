"""State and action constraints (TLC's CONSTRAINT and ACTION_CONSTRAINT) and views (VIEW),
on specs small enough to count by hand."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from checker import Record, Spec, action, action_constraint, constraint, invariant, terminal
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options
from tests.bundled import BUNDLED
from tests.checker.overrides import assert_override_rules
from tests.checker.test_incremental import TIMING
from tests.checker.toys import FromZero
from tests.conftest import ROOT


class Counter(FromZero):
    """x counts up by one, without end."""

    @action
    def inc(self, s):
        return s.replace(x=s.x + 1)


class StateBounded(Counter):
    @constraint
    def small(self, s):
        """Expand only states with x <= 1."""
        return s.x <= 1


class StepBounded(Counter):
    @action_constraint
    def small_steps(self, s, t):
        return t.x <= 2


class Guarded(Counter):
    @action
    def inc(self, s):
        return s.replace(x=s.x + 1) if s.x < 2 else None


def counts(result):
    return result.verdict, result.distinct_states, result.states_generated, result.depth


def test_a_state_outside_the_constraint_is_counted_checked_but_not_expanded():
    # x = 0, 1 are expanded; x = 2 is a distinct state but has no successor generated.
    result = check(Model(StateBounded()), Options(deadlock=True))
    assert counts(result) == ("ok", 3, 3, 3)
    assert [(c.name, c.fired, c.new) for c in result.coverage] == [("inc", 2, 2)]


def test_an_action_constraint_discards_the_step_and_makes_no_deadlock():
    # 0 -> 1 -> 2; the step 2 -> 3 is discarded: not generated, and x = 2 is no deadlock
    # (as in TLC: an action is enabled there, the constraint only bounds the search).
    result = check(Model(StepBounded()), Options(deadlock=True))
    assert counts(result) == ("ok", 3, 3, 3)


def test_a_guard_that_disables_the_action_is_a_deadlock():
    result = check(Model(Guarded()), Options(deadlock=True))
    assert result.verdict == "deadlock" and result.trace[-1].state == Record(x=2)


class Grid(Spec):
    """x and y step up to 2."""

    def init(self):
        return Record(x=0, y=0)

    @action(d=("x", "y"))
    def step(self, s, d):
        if s[d] == 2:
            return None
        return s.replace(**{d: s[d] + 1})

    @action_constraint
    def x_first(self, s, t):
        """y may step only once x has."""
        return t.y == s.y or s.x > 0

    @invariant
    def not_corner(self, s):
        return (s.x, s.y) != (self.corner_x, 2)

    corner_x = 9  # no state: the invariant holds


def test_an_action_constraint_sees_both_states():
    # (0,0) -> (1,0); from there every (x >= 1, y) is reachable: 7 states, 8 steps allowed
    # ((0,0)->(0,1) is discarded), and (2,2) is a real deadlock.
    result = check(Model(Grid()), Options(deadlock=False))
    assert counts(result) == ("ok", 7, 9, 5)
    assert [(c.name, c.fired, c.new) for c in result.coverage] == [("step", 8, 6)]
    dead = check(Model(Grid()), Options(deadlock=True))
    assert dead.verdict == "deadlock" and dead.trace[-1].state == Record(x=2, y=2)


def test_a_violation_outside_the_state_constraint_is_still_found():
    class Capped(Grid):
        corner_x = 1

        @constraint
        def within(self, s):
            return s.x + s.y <= 2

    # The violation (1, 2) lies outside the constraint: it is still checked.
    result = check(Model(Capped()))
    assert result.verdict == "violation" and result.invariant == "not_corner"
    assert [(s.action, s.params) for s in result.trace[1:]] == [
        ("step", {"d": "x"}),
        ("step", {"d": "y"}),
        ("step", {"d": "y"}),
    ]


class Logged(Spec):
    """x grows by 1 or 2 up to 3; `log` is a history variable of the steps taken."""

    def init(self):
        return Record(x=0, log=())

    @action(d=(1, 2))
    def add(self, s, d):
        if s.x + d > 3:
            return None
        return s.replace(x=s.x + d, log=s.log + (d,))

    @terminal
    def at_three(self, s):
        return s.x == 3

    def view(self, s):
        return s.x


class LoggedFull(Logged):
    view = None


def test_a_view_identifies_states_by_their_projection():
    # Sequences of 1s and 2s summing to at most 3: 1 + 1 + 2 + 3 = 7 states; 4 views (x).
    full = check(Model(LoggedFull()))
    assert counts(full) == ("ok", 7, 7, 4)
    viewed = check(Model(Logged()))
    # x=0: 2 successors, x=1: 2, x=2: 1, x=3: none.
    assert counts(viewed) == ("ok", 4, 6, 3)


def test_traces_under_a_view_are_the_concrete_states_first_reached():
    class Three(Logged):
        @invariant
        def below_three(self, s):
            return s.x < 3

    result = check(Model(Three()))
    assert result.verdict == "violation"
    assert [s.state for s in result.trace] == [
        Record(x=0, log=()),
        Record(x=1, log=(1,)),
        Record(x=3, log=(1, 2)),
    ]


def test_an_expander_drops_a_successor_whose_view_it_met_before_encoding_it():
    """Expanders meet states by their views (Model.by_view): a successor whose view is that
    of a state met at this level is no candidate (it is not encoded, checked or sent)."""
    model = Model(Logged())
    init = model.initial_states()[0]
    level = model.expand_batch([init], set(model.met([init]))).candidates  # x=1 (1,), x=2 (2,)
    batch = model.expand_batch(level, set(model.met(level)))
    # (1, 1) has the view of the parent (2,), and (2, 1) that of the candidate (1, 2).
    assert batch.candidates == [Record(x=3, log=(1, 2))] and len(batch.fps) == 1
    assert batch.actions == [0, 0, 0] and list(batch.positions) == [1]
    model.by_view = False  # met by the states themselves, as with symmetry
    batch = model.expand_batch(level, set(level))
    assert [s.log for s in batch.candidates] == [(1, 1), (1, 2), (2, 1)]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    ("path", "constants"), [(p, c) for p, c, _, _ in BUNDLED if "kip966" in p or "kraft" in p]
)
def test_meeting_states_by_their_views_changes_no_result(path, constants, workers):
    """The same verdict, counts, coverage and trace as meeting them by the states themselves
    (the engine then drops the same successors, as known, by their fingerprints)."""

    def run(by_view: bool) -> dict:
        model = load_model(ROOT / path, constants)
        assert model.by_view
        model.by_view = by_view
        result = asdict(check(model, Options(workers=workers)))
        return {k: v for k, v in result.items() if k not in TIMING}

    assert run(True) == run(False)


def test_a_view_that_hides_what_an_invariant_sees_is_unsound():
    """The documented caveat: the view merges (1, 1, 1) into (1, 2), so the violation that
    only the longer history shows is never seen."""

    class ShortHistory(Logged):
        @invariant
        def at_most_two_steps(self, s):
            return len(s.log) <= 2

    class ShortHistoryFull(ShortHistory):
        view = None

    assert check(Model(ShortHistory())).verdict == "ok"
    assert check(Model(ShortHistoryFull())).verdict == "violation"


def test_constraints_follow_the_override_rules_of_invariants():
    assert_override_rules(StateBounded, "small", "constraint", lambda model: model.constraints)
    shared = action_constraint(lambda s, t: t.x <= 1)

    class Shared(Counter):
        tiny = shared

    assert counts(check(Model(Shared()))) == ("ok", 2, 2, 2)


def test_a_constraint_that_does_not_return_a_bool_is_an_evaluation_error(mc, write_spec):
    path = write_spec(
        """
        from checker import Record, Spec, action, constraint

        class Bad(Spec):
            def init(self):
                return Record(x=0)

            @action
            def inc(self, s):
                return s.replace(x=s.x + 1)

            @constraint
            def small(self, s):
                return s.x
        """
    )
    run = mc("check", path)
    assert run.code == 75
    assert "Error: constraint small returned 0; a constraint returns True or False" in run.out


def test_mc_check_and_list_show_constraints_and_view(mc, write_spec, tmp_path):
    path = write_spec(
        """
        from checker import Record, Spec, action, action_constraint, constraint

        class Shown(Spec):
            def init(self):
                return Record(x=0, log=())

            @action
            def inc(self, s):
                return s.replace(x=s.x + 1, log=s.log + (s.x,))

            @constraint
            def small(self, s):
                \"\"\"x stays small.\"\"\"
                return s.x <= 2

            @action_constraint
            def no_jump(self, s, t):
                return t.x == s.x + 1

            def view(self, s):
                \"\"\"Forget the log.\"\"\"
                return s.x
        """
    )
    out = tmp_path / "out.json"
    run = mc("check", path, "--json", out)
    assert run.code == 0
    assert "  state constraints: small\n  action constraints: no_jump\n" in run.out
    assert "  view: states are identified by the spec's view of them\n" in run.out
    assert "All invariants" not in run.out and "explored 4 distinct states" in run.out
    doc = json.loads(out.read_text())
    assert (doc["constraints"], doc["action_constraints"], doc["view"], doc["symmetry"]) == (
        ["small"],
        ["no_jump"],
        True,
        None,
    )
    listed = mc("list", path).out
    assert "State constraints:\n  small  x stays small.\n" in listed
    assert "Action constraints:\n  no_jump\n" in listed
    assert "View:\n  view  Forget the log.\n" in listed
