"""checker/steps.py on its own: step properties and refinements asked about hand-made steps,
without a search."""

from __future__ import annotations

import pytest

from checker import Record, Spec
from checker.errors import EvaluationError
from checker.model import Model
from checker.result import Step
from checker.steps import Refines, StepCheck, StepChecks, StepViolation
from tests.checker.toys import Halved


def r(x: int) -> Record:
    return Record(x=x)


def grows(s: Record, t: Record) -> bool:
    return t.x >= s.x


def small_steps(s: Record, t: Record) -> bool:
    return t.x - s.x <= 1


def refinement(spec: Spec) -> Refines:
    return Refines("counts", spec, Halved.counts, Model, "test")


def test_a_step_check_says_which_successor_first_breaks_it():
    check = StepCheck("grows", grows, "x never decreases")
    assert check.broken(r(1), r(2)) is None
    assert check.broken(r(2), r(1)) == ""
    assert check.first_broken(r(2), [r(3), r(1), r(0)]) == (1, "")
    assert check.first_broken(r(2), [r(2), r(3)]) is None
    assert check.initial_broken(r(5)) is None  # a step property says nothing of initial states
    assert check.violated() == "step property grows is violated"


def test_a_step_check_that_raises_or_answers_no_bool_is_an_evaluation_error():
    def crashes(s, t):
        return 1 / 0

    with pytest.raises(EvaluationError, match="raised ZeroDivisionError"):
        StepCheck("crashes", crashes, "").broken(r(0), r(1))
    with pytest.raises(EvaluationError, match="returned 1; a step property returns True or False"):
        StepCheck("one", lambda s, t: 1, "").broken(r(0), r(1))


def test_step_checks_raise_the_earliest_successor_and_its_first_check():
    checks = StepChecks([StepCheck("grows", grows, "up"), StepCheck("small", small_steps, "+1")])
    checks.first_broken(r(1), [r(1), r(2)])  # every step keeps both
    with pytest.raises(StepViolation) as raised:
        checks.first_broken(r(1), [r(2), r(5), r(0)])
    # successor 1 breaks `small`, successor 2 `grows`: the earlier successor wins
    assert (raised.value.name, raised.value.index) == ("small", 1)
    assert raised.value.message == "step property small is violated"
    assert checks.formulas() == {"grows": "up", "small": "+1"}
    assert checks.initial_broken(r(0)) is None


def test_a_violation_reads_as_a_sentence_naming_the_last_step():
    violation = StepViolation("grows", 0, "step property grows is violated", r(1), "x fell")
    step = Step("dec", {"by": 2}, r(-1))
    assert violation.sentence(step) == (
        "step property grows is violated by the last step, dec(by=2): x fell"
    )


def test_a_refinement_explains_steps_by_abstract_steps_or_stutters():
    check = refinement(Halved())
    assert check.mapped(r(5)) == Record(n=2)
    assert check.broken(r(0), r(1)) is None  # n stays 0: a stutter
    assert check.broken(r(1), r(2)) is None  # n 0 -> 1: Counter's up
    assert check.broken(r(0), r(4)).startswith("it maps to no step of Counter, from ")
    assert check.first_broken(r(1), [r(2), r(3), r(6)]) == (
        2,
        check.unexplained(Record(n=0), Record(n=3)),
    )
    assert check.initial_broken(r(1)) is None
    assert "no initial state of Counter" in check.initial_broken(r(2))
    assert check.violated() == "refinement counts (refines Counter) is violated"


def test_a_mapping_to_no_abstract_state_is_an_evaluation_error():
    check = refinement(Halved())
    check.mapping = lambda s: Record(m=s.x)
    with pytest.raises(EvaluationError, match="which is not a state of Counter"):
        check.mapped(r(1))
