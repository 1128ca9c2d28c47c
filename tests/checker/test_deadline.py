"""checker/deadline.py on its own: the --timeout timer around spec code, and what it says it
interrupted."""

from __future__ import annotations

import re
import signal

import pytest

from checker import Record
from checker.deadline import Deadline, Loading, LoadTimeout
from checker.errors import ExitCode, RunTimeout
from checker.loader import load_model
from tests.checker.toys import toy


@pytest.fixture
def spin():
    return load_model(toy("Spin"))


def test_the_deadline_names_the_spec_call_it_interrupted(spin):
    before = signal.getsignal(signal.SIGALRM)  # SIG_DFL, or pytest-timeout's under --timeout
    with pytest.raises(RunTimeout, match=r"0\.2 s reached"), Deadline(spin, 0.2) as deadline:
        spin.spec.spin(Record(n=1), 1)
    assert deadline.fired
    assert deadline.bound == "--timeout 0.2 s reached"
    assert deadline.where is not None
    assert deadline.where.startswith("action spin(k=1) at ")
    assert re.search(r"/toys\.py:\d+ in state \{n: 1\}$", deadline.where)
    assert deadline.note == f"stopped by --timeout 0.2 s while evaluating {deadline.where}"
    assert signal.getsignal(signal.SIGALRM) is before  # disarmed, the handler before it back


def test_a_deadline_that_does_not_fire_leaves_the_run_alone(spin):
    with Deadline(spin, 5) as deadline:
        assert spin.spec.spin(Record(n=0), 1) == Record(n=1)
    assert not deadline.fired and deadline.where is None
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with Deadline(spin, None) as never:  # no --timeout: no timer at all
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert not never.fired


def test_a_deadline_in_the_engine_between_spec_calls_names_no_spec_code(spin):
    with pytest.raises(RunTimeout), Deadline(spin, 0.1) as deadline:
        while True:
            pass
    assert deadline.fired and deadline.where is None
    assert deadline.note == "stopped by --timeout 0.1 s"


def test_loading_that_never_ends_is_a_load_timeout():
    with pytest.raises(LoadTimeout) as raised, Loading(0.1, "specs/forever.py"):
        while True:
            pass
    assert raised.value.exit_code == ExitCode.INCOMPLETE
    assert str(raised.value) == (
        "specs/forever.py: stopped by --timeout 0.1 s while loading the spec (importing it,"
        " checking its constants or compiling it never ended); nothing was explored"
    )
    with Loading(None, "specs/quick.py"):
        pass
