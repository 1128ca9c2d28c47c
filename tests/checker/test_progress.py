"""checker.progress on its own: the TLC-style lines on a pipe (their rates over the time since
the start) and the live bar on a terminal, for `mc check` and `mc simulate`."""

from __future__ import annotations

import io

import pytest

from checker import progress
from checker.progress import Progress, Snapshot, WalkSnapshot


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """time.monotonic as the test sets it: now[0]."""
    now = [1000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def test_a_line_gives_the_counts_and_their_rates_since_the_start(clock):
    stream = io.StringIO()
    lines = Progress(stream, interval=5.0, bar=False)
    clock[0] += 65
    lines.report(Snapshot(3, 1_300, 2_600, 40, 10, 50))
    assert stream.getvalue() == (
        "Progress(3) at 00:01:05: 2,600 states generated (40 s/s), 1,300 distinct states found"
        " (20 ds/s), 40 states left on queue.\n"
    )


def test_a_walk_line_gives_the_walks_and_the_states_visited(clock):
    stream = io.StringIO()
    lines = Progress(stream, bar=False)
    clock[0] += 4
    lines.report_walks(WalkSnapshot(walks=10, traces=1000, visited=2_000, distinct=700))
    assert stream.getvalue() == (
        "Progress at 00:00:04: 10 of 1,000 traces (2.5 traces/s), 2,000 states visited"
        " (500 s/s), 700 distinct states.\n"
    )


def test_lines_are_due_every_interval_and_never_with_interval_zero(clock):
    lines, silent = Progress(io.StringIO(), 5.0, bar=False), Progress(io.StringIO(), 0, bar=False)
    clock[0] += 4
    assert not lines.due() and not silent.due()
    clock[0] += 1
    assert lines.due() and not silent.due()
    assert not lines.due()  # the next one is 5 s from now


def test_the_bar_shows_the_level_and_the_walks_and_is_cleared_on_close(clock):
    stream = io.StringIO()
    bar = Progress(stream, bar=True)
    bar.report(Snapshot(2, 10, 20, 5, 3, 7))
    assert "depth 2" in stream.getvalue() and "3/7" in stream.getvalue()
    assert "distinct 10, generated 20, queue 5" in stream.getvalue()
    bar.close()
    walks = Progress(stream, bar=True)
    walks.report_walks(WalkSnapshot(walks=3, traces=10, visited=40, distinct=12))
    assert "simulating" in stream.getvalue() and "visited 40, distinct 12" in stream.getvalue()
    walks.close()
    assert stream.getvalue().endswith("\r")  # the bar erased: the report starts on a clean line
