"""Step properties (`@step_property`, TLA+'s `[][A]_vars`), refinements (`refines(...)`,
TLA+'s `PROPERTY A!Spec` under `INSTANCE ... WITH`) and TLC's CONSTRAINT
(`@constraint(admit=False)`), on specs small enough to follow by hand."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from checker import (
    Record,
    Spec,
    action,
    constant,
    constraint,
    invariant,
    refines,
    step_property,
)
from checker.errors import EvaluationError, ExitCode, SpecError
from checker.local.bfs import check
from checker.model import Model
from checker.result import Step
from checker.search.options import Options
from checker.steps import Refines, StepCheck, StepChecks, StepViolation


class Counter(Spec):
    """x goes up by 1 or 2 up to `top`, and back to 0 from the top."""

    top = constant(3, "the largest value")

    def init(self):
        return Record(x=0)

    @action(d=(1, 2))
    def inc(self, s, d):
        return s.replace(x=s.x + d) if s.x + d <= self.top else None

    @action
    def reset(self, s):
        return s.replace(x=0) if s.x == self.top else None


class ByOne(Counter):
    @step_property
    def by_one(self, s, t):
        """x goes up by one, or back to 0."""
        return t.x in (s.x + 1, 0)


class NeverDown(Counter):
    @step_property
    def never_down(self, s, t):
        return t.x >= s.x


def steps(result):
    return [(s.action, s.params, s.state.x) for s in result.trace]


def test_a_step_property_violation_ends_the_trace_with_that_step():
    result = check(Model(ByOne()), Options())
    assert (result.verdict, result.exit_code, result.step_property) == (
        "violation",
        ExitCode.VIOLATION,
        "by_one",
    )
    assert steps(result) == [(None, {}, 0), ("inc", {"d": 2}, 2)]
    assert result.step_violation == "step property by_one is violated by the last step, inc(d=2)"
    assert result.invariant is None
    # The search stops at the state whose step violates it, before its successors count.
    assert (result.distinct_states, result.states_generated, result.queue) == (1, 1, 1)


def test_a_step_into_a_state_found_before_is_checked_too():
    # reset leads back to x = 0, the initial state: the shortest behavior ending in it.
    result = check(Model(NeverDown()), Options())
    assert steps(result) == [
        (None, {}, 0),
        ("inc", {"d": 1}, 1),
        ("inc", {"d": 2}, 3),
        ("reset", {}, 0),
    ]
    assert result.step_property == "never_down"


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_any_number_of_workers_gives_the_same_verdict_trace_and_counts(workers):
    alone = check(Model(NeverDown(top=6)), Options())
    together = check(Model(NeverDown(top=6)), Options(workers=workers))
    assert steps(together) == steps(alone)
    assert (together.distinct_states, together.states_generated, together.step_violation) == (
        alone.distinct_states,
        alone.states_generated,
        alone.step_violation,
    )


def test_a_model_without_step_checks_has_none():
    assert Model(Counter()).steps is None
    assert check(Model(Counter()), Options()).step_properties == {}


class Raising(Counter):
    @step_property
    def broken(self, s, t):
        return 1 / (t.x - 2) > -10


class NotBool(Counter):
    @step_property
    def vague(self, s, t):
        return None


def test_a_step_property_that_raises_or_returns_no_bool_is_the_specs_error():
    raised = check(Model(Raising()), Options())
    assert raised.verdict == "error" and raised.exit_code == ExitCode.EVALUATION_ERROR
    assert (raised.error.kind, raised.error.name) == ("step property", "broken")
    assert raised.error.message == "raised ZeroDivisionError: division by zero"
    assert steps(raised) == [(None, {}, 0)]  # the state whose step it was evaluated on
    vague = check(Model(NotBool()), Options())
    assert vague.error.message == "returned None; a step property returns True or False"


def test_a_step_property_without_its_states_is_refused():
    with pytest.raises(SpecError, match=r"@step_property p takes \(self, s\)"):

        class Forgot(Counter):
            @step_property
            def p(self, s):
                return True


# -- refinement -------------------------------------------------------------------------------


class HourClock(Spec):
    """TLA+'s HourClock: the hour goes round."""

    def init(self):
        return [Record(hr=h) for h in range(1, 13)]

    @action
    def tick(self, s):
        return s.replace(hr=s.hr % 12 + 1)


class HourMinuteClock(Spec):
    """A clock with minutes: it refines HourClock, its minute steps mapping to stutters."""

    minutes = constant(3, "minutes per hour")
    skip = constant(0, "the hour at which a broken clock jumps two hours (0: none)")

    def init(self):
        return [Record(hr=h, mn=0) for h in range(1, 13)]

    @action
    def tick(self, s):
        if s.mn + 1 < self.minutes:
            return s.replace(mn=s.mn + 1)
        hours = 2 if s.hr == self.skip else 1
        return s.replace(hr=(s.hr + hours - 1) % 12 + 1, mn=0)

    def hours(self, s):
        return Record(hr=s.hr)

    hour_clock = refines(HourClock, "hours")


def test_a_refinement_that_holds():
    result = check(Model(HourMinuteClock()), Options())
    assert (result.verdict, result.distinct_states, result.states_generated) == ("ok", 36, 48)
    assert result.step_properties == {"hour_clock": "refines HourClock"}


def test_a_step_no_abstract_action_explains_is_a_counterexample():
    result = check(Model(HourMinuteClock(skip=3)), Options())
    assert (result.verdict, result.exit_code, result.step_property) == (
        "violation",
        ExitCode.VIOLATION,
        "hour_clock",
    )
    assert [(s.action, s.state.hr, s.state.mn) for s in result.trace] == [
        (None, 3, 0),
        ("tick", 3, 1),
        ("tick", 3, 2),
        ("tick", 5, 0),
    ]
    assert result.step_violation == (
        "refinement hour_clock (refines HourClock) is violated by the last step, tick(): it maps"
        " to no step of HourClock, from {hr: 3} to {hr: 5}"
    )


class MidnightStart(HourMinuteClock):
    def init(self):
        return [Record(hr=0, mn=0)]


def test_an_initial_state_that_maps_to_no_abstract_initial_state():
    result = check(Model(MidnightStart()), Options())
    assert (result.verdict, result.step_property) == ("violation", "hour_clock")
    assert [s.action for s in result.trace] == [None]
    assert result.step_violation == (
        "refinement hour_clock (refines HourClock) is violated: the initial state maps to"
        " {hr: 0}, no initial state of HourClock"
    )


class WrongMapping(HourMinuteClock):
    def hours(self, s):
        return Record(hour=s.hr)


def test_a_mapping_that_gives_no_abstract_state_is_the_specs_error():
    result = check(Model(WrongMapping()), Options())
    assert result.verdict == "error" and result.exit_code == ExitCode.EVALUATION_ERROR
    assert (result.error.kind, result.error.name) == ("refinement", "hour_clock")
    assert result.error.message == (
        "mapped a state to {hour: 1}, which is not a state of HourClock (a Record of hr)"
    )


# -- checker.steps on its own: what a search asks of the step checks, without a search ----

GROWS = StepCheck("grows", lambda s, t: t.x > s.x, "[][x' > x]")
SMALL = StepCheck("small", lambda s, t: t.x < 5, "[][x' < 5]")


def test_a_step_check_says_which_step_breaks_it():
    s = Record(x=1)
    assert (GROWS.broken(s, Record(x=2)), GROWS.broken(s, Record(x=1))) == (None, "")
    assert GROWS.first_broken(s, [Record(x=2), Record(x=0), Record(x=1)]) == (1, "")
    assert GROWS.first_broken(s, [Record(x=3)]) is None
    assert GROWS.initial_broken(s) is None  # a step property says nothing of initial states
    assert GROWS.violated() == "step property grows is violated"


def test_a_step_check_that_returns_no_bool_or_raises_is_the_specs_error():
    with pytest.raises(EvaluationError, match="returned 1; a step property returns True or"):
        StepCheck("one", lambda s, t: 1, "one").broken(Record(x=0), Record(x=1))
    with pytest.raises(EvaluationError, match="raised ZeroDivisionError") as raised:
        StepCheck("div", lambda s, t: 1 / t.x > 0, "div").broken(Record(x=1), Record(x=0))
    assert (raised.value.kind, raised.value.name) == ("step property", "div")


def test_step_checks_stop_at_the_first_successor_that_breaks_any_of_them():
    checks = StepChecks([GROWS, SMALL])
    assert checks.first_broken(Record(x=1), [Record(x=2), Record(x=4)]) is None
    # successor 1 breaks `grows`, successor 0 `small`: the earlier successor is the violation
    with pytest.raises(StepViolation) as raised:
        checks.first_broken(Record(x=1), [Record(x=6), Record(x=0)])
    assert (raised.value.name, raised.value.index, raised.value.message) == (
        "small",
        0,
        "step property small is violated",
    )
    step = Step(action="inc", params={"d": 5}, state=Record(x=6))
    said = "step property small is violated by the last step, inc(d=5)"
    assert raised.value.sentence(step) == said
    assert checks.formulas() == {"grows": "[][x' > x]", "small": "[][x' < 5]"}
    assert checks.initial_broken(Record(x=9)) is None


def test_a_refinement_explains_a_step_by_a_step_of_its_abstract_spec_or_a_stutter():
    (refinement,) = Model(HourMinuteClock()).steps.checks
    assert isinstance(refinement, Refines) and refinement.formula == "refines HourClock"
    assert refinement.mapped(Record(hr=3, mn=2)) == Record(hr=3)
    assert refinement.broken(Record(hr=3, mn=1), Record(hr=3, mn=2)) is None  # a stutter
    assert refinement.broken(Record(hr=12, mn=2), Record(hr=1, mn=0)) is None  # HourClock's tick
    assert refinement.abstract_successors(Record(hr=12)) == frozenset({Record(hr=1)})
    steps_from_3 = [Record(hr=4, mn=0), Record(hr=5, mn=0)]
    assert refinement.first_broken(Record(hr=3, mn=2), steps_from_3) == (
        1,
        "it maps to no step of HourClock, from {hr: 3} to {hr: 5}",
    )
    assert refinement.initial_broken(Record(hr=1, mn=0)) is None
    assert refinement.initial_broken(Record(hr=0, mn=0)) == (
        "refinement hour_clock (refines HourClock) is violated: the initial state maps to"
        " {hr: 0}, no initial state of HourClock"
    )


class Ticks(Spec):
    """An abstract clock that ticks `step` hours at a time."""

    step = constant(1, "hours per tick")

    def init(self):
        return Record(hr=1)

    @action
    def tick(self, s):
        return s.replace(hr=(s.hr + self.step - 1) % 12 + 1)


class EveryOtherHour(Spec):
    def init(self):
        return Record(hr=1, half=False)

    @action
    def tick(self, s):
        if not s.half:
            return s.replace(half=True)
        return s.replace(hr=(s.hr + 1) % 12 + 1, half=False)

    two_hours = refines(Ticks, lambda s: Record(hr=s.hr), constants={"step": 2})
    one_hour = refines(Ticks, lambda s: Record(hr=s.hr), constants=lambda self: {"step": 1})


def test_the_abstract_specs_constants_and_a_mapping_function():
    result = check(Model(EveryOtherHour()), Options())
    # two_hours holds; one_hour, declared after it, fails at the first hour step.
    assert (result.step_property, [s.action for s in result.trace]) == (
        "one_hour",
        [None, "tick", "tick"],
    )


def test_the_abstract_specs_constants_must_fit():
    class Unknown(EveryOtherHour):
        two_hours = refines(Ticks, lambda s: Record(hr=s.hr), constants={"steps": 2})

    with pytest.raises(SpecError, match="the constants of Ticks do not fit: no constant 'steps'"):
        Model(Unknown())


# -- TLC's CONSTRAINT ------------------------------------------------------------------------


class Up(Spec):
    """x goes up by 1 or 2 without end; TLC's counts in the comments (docs/tla/Con.tla)."""

    six = constant(False, "check the invariant x # 6")

    def init(self):
        return Record(x=0)

    @action(d=(1, 2))
    def next(self, s, d):
        return s.replace(x=s.x + d)

    @invariant
    def not_six(self, s):
        return not self.six or s.x != 6


class Admitted(Up):
    @constraint
    def bound(self, s):
        return s.x <= 4


class LikeTlc(Up):
    @constraint(admit=False)
    def bound(self, s):
        return s.x <= 4


def test_tlcs_constraint_checks_the_states_outside_but_does_not_add_them():
    # TLC, CONSTRAINT x <= 4: 11 states generated, 5 distinct states found, depth 3.
    tlc = check(Model(LikeTlc()), Options(deadlock=False))
    assert (tlc.verdict, tlc.states_generated, tlc.distinct_states, tlc.depth) == ("ok", 11, 5, 3)
    # mc's @constraint adds x = 5 and x = 6 as distinct states, not expanded.
    mine = check(Model(Admitted()), Options(deadlock=False))
    assert (mine.verdict, mine.states_generated, mine.distinct_states, mine.depth) == (
        "ok",
        11,
        7,
        4,
    )


def test_an_invariant_is_checked_on_a_state_outside_tlcs_constraint():
    # TLC: "Invariant NotSix is violated", the behavior x = 0, 2, 4, 6.
    result = check(Model(LikeTlc(six=True)), Options(deadlock=False))
    assert (result.verdict, result.invariant, result.outside_constraints) == (
        "violation",
        "not_six",
        True,
    )
    assert [(s.action, s.state.x) for s in result.trace] == [
        (None, 0),
        ("next", 2),
        ("next", 4),
        ("next", 6),
    ]


def test_a_constraint_of_each_kind_from_one_predicate():
    def small(s):
        return s.x <= 4

    class One(Up):
        bound = constraint(small)

    class Other(Up):
        bound = constraint(small, admit=False)

    assert len(Model(One()).constraints) == 1 and not Model(One()).exclusions
    assert len(Model(Other()).exclusions) == 1 and not Model(Other()).constraints


def test_tlcs_constraint_and_a_recorded_state_graph_refuse_each_other():
    from checker.errors import ConfigError
    from checker.run import state_space_graph

    with pytest.raises(
        ConfigError, match=r"not recorded with @constraint\(admit=False\) \(bound\)"
    ):
        state_space_graph(Model(LikeTlc()))


# -- every report, and liveness ------------------------------------------------------------


BY_ONE = """\
from checker import Record, Spec, action, eventually, step_property

class Counter(Spec):
    def init(self):
        return Record(x=0)

    @action(d=(1, 2))
    def inc(self, s, d):
        return s.replace(x=s.x + d) if s.x + d <= 3 else None

    @action
    def reset(self, s):
        return s.replace(x=0) if s.x == 3 else None

    @step_property
    def never_down(self, s, t):
        return t.x >= s.x

    @eventually
    def at_top(self, s):
        return s.x == 3
"""


def test_every_report_names_the_step_and_liveness_records_with_step_checks(
    mc, write_spec, tmp_path
):
    spec = write_spec(BY_ONE)
    out = {k: tmp_path / f"r.{k}" for k in ("json", "junit", "sarif", "itf", "html")}
    run = mc("check", spec, *[a for k, p in out.items() for a in (f"--{k}", p)])
    said = "step property never_down is violated by the last step, reset()"
    assert run.code == 12
    assert f"Error: {said}." in run.out
    assert "  step properties: never_down ([][never_down])" in run.out
    report = json.loads(out["json"].read_text())
    assert (report["step_property"], report["step_violation"]) == ("never_down", said)
    assert [s["action"] for s in report["trace"]] == [None, "inc", "inc", "reset"]
    failures = ET.parse(out["junit"]).getroot().iter("failure")
    assert [f.get("message") for f in failures] == [said]
    sarif = json.loads(out["sarif"].read_text())["runs"][0]["results"]
    assert sarif[0]["ruleId"] == "Counter.never_down" and said in sarif[0]["message"]["text"]
    itf = json.loads(out["itf"].read_text())
    assert itf["#meta"]["description"] == f"mc: Counter, verdict violation: {said}"
    assert said in out["html"].read_text()


def test_a_recorded_search_with_fairness_per_binding_checks_the_steps():
    from checker import eventually
    from checker.liveness import check as check_properties
    from checker.liveness import recording, select
    from checker.run import record

    class Spinner(Spec):
        """Process 0 spins; process 1 finishes once. Fairness of each binding: recorded keys."""

        spins = constant(True, "the spin step is allowed by the step property")

        def init(self):
            return Record(spin=0, done=False)

        @action(p=(0, 1), fair_each="weak")
        def tick(self, s, p):
            if p == 0:
                return s.replace(spin=1 - s.spin)
            return None if s.done else s.replace(done=True)

        done = eventually(lambda s: s.done)

        @step_property
        def spin_allowed(self, s, t):
            return self.spins or t.spin == s.spin

    model = Model(Spinner(), symmetry=False)
    props = select(model)
    result, behaviour = record(model, recording(model, props), Options(deadlock=False))
    assert check_properties(model, result, props, behaviour).verdict == "ok"
    model = Model(Spinner(spins=False), symmetry=False)
    result, behaviour = record(model, recording(model, props), Options(deadlock=False))
    assert (result.verdict, result.step_property, behaviour) == ("violation", "spin_allowed", None)
    assert [(s.action, s.params) for s in result.trace] == [(None, {}), ("tick", {"p": 0})]
