"""checker/search/outcome.py on its own: how each way a search ends (a Stop, a Failed, Ctrl-C,
the engine failing, or the end) becomes the result, with a search made by hand."""

from __future__ import annotations

import pytest

from checker import Record
from checker.errors import EngineFailure, EvaluationError, ExitCode
from checker.loader import load_model
from checker.result import Step
from checker.search.outcome import MEMORY_ADVICE, Failed, Stop, run
from tests.checker.toys import toy


class Saving:
    """Checkpoints that note whether the search removed its file."""

    removed = False

    def remove(self) -> None:
        self.removed = True


class Search:
    """A search whose `run` raises `ends` (None: ends by itself) at `level`."""

    def __init__(self, model, ends: BaseException | None = None, level: int = 2) -> None:
        self.model, self.ends, self.level = model, ends, level
        self.progress = None
        self.checkpoints = Saving()
        self.witness = None
        self.distinct, self.generated, self.depth, self.queue = 4, 9, 3, 1
        self.fired, self.new = [6, 3], [3, 1]
        self.calls: list[str] = []

    def run(self) -> None:
        if self.ends is not None:
            raise self.ends

    def reachability(self) -> dict:
        return {"ten": (10, 1)}  # Walk's reachability property, reached

    def trace_to(self, where) -> list[Step]:
        return [Step(None, {}, Record(x=where))]

    def interrupted(self) -> None:
        self.calls.append("interrupted")

    def close(self) -> None:
        self.calls.append("close")

    def finish(self, result) -> None:
        result.visited_bytes = 123  # what only this engine measures


@pytest.fixture
def model():
    return load_model(toy("Walk"))


def test_a_search_that_ends_by_itself_is_ok_with_its_counts_and_coverage(model):
    search = Search(model)
    result = run(search)
    assert result.verdict == "ok" and result.exit_code == ExitCode.OK
    assert (result.distinct_states, result.states_generated, result.depth, result.queue) == (
        4,
        9,
        3,
        1,
    )
    assert [(c.name, c.fired, c.new) for c in result.coverage] == [
        ("step", 6, 3),
        ("reset", 3, 1),
    ]
    assert search.calls == ["close"]
    assert search.checkpoints.removed  # nothing to resume
    assert result.visited_bytes == 123


def test_a_stop_sets_the_verdict_its_fields_and_the_trace(model):
    after = Step("inc", {}, Record(x=3))
    result = run(Search(model, Stop("violation", 2, after, invariant="small")))
    assert (result.verdict, result.invariant) == ("violation", "small")
    assert [s.state for s in result.trace] == [Record(x=2), Record(x=3)]
    assert result.exit_code == ExitCode.VIOLATION


def test_spec_code_that_raised_is_an_error_with_its_trace(model):
    error = EvaluationError("action", "inc", "raised ZeroDivisionError: division by zero")
    result = run(Search(model, Failed(error, 1)))
    assert result.verdict == "error" and result.exit_code == ExitCode.EVALUATION_ERROR
    assert (result.error.kind, result.error.name) == ("action", "inc")
    assert [s.state for s in result.trace] == [Record(x=1)]


def test_ctrl_c_is_incomplete_and_keeps_the_checkpoint(model):
    search = Search(model, KeyboardInterrupt())
    result = run(search)
    assert (result.verdict, result.bound) == ("incomplete", "interrupted")
    assert search.calls == ["interrupted", "close"]
    assert not search.checkpoints.removed


def test_an_engine_that_cannot_go_on_ends_incomplete_with_exit_153(model):
    search = Search(model, EngineFailure("a worker was lost", "Use fewer workers."))
    result = run(search)
    assert result.verdict == "incomplete" and result.engine_failed
    assert result.bound == "a worker was lost while expanding level 2"
    assert result.advice == "Use fewer workers."
    assert result.exit_code == ExitCode.ENGINE_ERROR
    assert search.calls == ["interrupted", "close"]
    assert not search.checkpoints.removed


def test_running_out_of_memory_says_what_to_do(model):
    result = run(Search(model, MemoryError(), level=0))
    assert result.bound == "out of memory while expanding the initial states"
    assert result.advice == MEMORY_ADVICE and result.engine_failed
