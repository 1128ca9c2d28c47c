"""The metadata logs of real Kafka runs (tests/fixtures/kafka/, one dump per scenario, written
by scripts/kafka's cluster and the dump tool): each is read, and validated against
specs/kip966.py within 60 s with one worker, to a verdict (accepted or diverged, not
undecided). What each verdict means for its scenario is docs/validate.md's table."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from checker.loader import load_model
from checker.validate import ACCEPTED, DIVERGED, validate
from specs import kip966_observe
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "kafka"
DUMP_STARTS = ("Dumping ", "Log starting offset", "baseOffset: ")


def fixtures() -> list[Path]:
    """The dumps in the fixtures folder (its README and other files left out)."""
    if not FIXTURES.is_dir():
        return []
    found = []
    for path in sorted(FIXTURES.iterdir()):
        if path.is_file() and path.suffix not in (".md", ".json"):
            with path.open(encoding="utf-8", errors="replace") as lines:
                if lines.readline().startswith(DUMP_STARTS):
                    found.append(path)
    return found


@pytest.mark.parametrize("log", fixtures(), ids=lambda p: p.name)
def test_a_real_log_validates_to_a_verdict_within_a_minute(log):
    started = time.monotonic()
    observed = kip966_observe.read(log)
    assert observed.observations, "the log shows the validated partition"
    model = load_model(ROOT / "specs" / "kip966.py", observed.constants)
    result = validate(model, kip966_observe.observe, observed)
    elapsed = time.monotonic() - started
    assert result.verdict in (ACCEPTED, DIVERGED), (result.verdict, result.reason, result.offset)
    assert elapsed <= 60, f"{log.name}: {elapsed:.1f} s"


# What docs/validate.md's findings say of each real log: (verdict, the variables the closest
# step differs in) compared in full, then with --ignore last_known_elr.
FINDINGS = {
    **{
        name: ((ACCEPTED, set()), (ACCEPTED, set()))
        for name in (
            "topic-created.log",
            "leader-kill.log",
            "follower-kill.log",
            "controller-failover.log",
            "broker-fenced.log",
            "controlled-shutdown.log",
            "rolling-restart.log",
            "delayed-alter-partition.log",  # the refused request writes no record
        )
    },
    "elr-leader-last.log": (
        (DIVERGED, {"last_known_elr"}),
        (DIVERGED, {"leader", "isr"}),  # Kafka elects the last known leader; the spec waits
    ),
    "elr-member-elected.log": ((DIVERGED, {"last_known_elr"}), (ACCEPTED, set())),
    "last-isr-disk-wiped.log": (
        (DIVERGED, {"last_known_elr"}),
        (DIVERGED, {"leader", "isr"}),  # the last known leader, its disk wiped, elected
    ),
}


@pytest.mark.parametrize("log", [p for p in fixtures() if p.name in FINDINGS], ids=lambda p: p.name)
def test_a_real_log_gives_the_finding_docs_validate_md_reports(log):
    observed = kip966_observe.read(log)
    model = load_model(ROOT / "specs" / "kip966.py", observed.constants)
    for ignore, (verdict, variables) in zip(((), ("last_known_elr",)), FINDINGS[log.name]):
        result = validate(
            model,
            kip966_observe.observe,
            observed,
            ignore=ignore,
            deferred=kip966_observe.DEFERRED,
        )
        assert result.verdict == verdict, (ignore, result.verdict, result.offset)
        assert variables <= {d.variable for d in result.differences}, result.differences


# mc ablate's rules of specs/kip966.py, each switched off alone, on the real log of an ELR
# member elected (accepted with every rule on, LastKnownElr aside): the variable the log then
# diverges on. hwm_needs_min_isr is not there: the high watermark is not in the metadata log.
RULES_THE_LOG_NEEDS = {
    "elr": "elr",
    "elect_from_elr": "leader",
    "isr_may_become_empty": "isr",
    "epoch_on_file": "elr",
}


@pytest.mark.parametrize("rule", sorted(RULES_THE_LOG_NEEDS))
def test_a_real_log_that_needs_a_rule_diverges_with_it_off(rule):
    log = FIXTURES / "elr-member-elected.log"
    if not log.exists():
        pytest.skip("the fixture is not here")
    observed = kip966_observe.read(log)
    model = load_model(ROOT / "specs" / "kip966.py", {**observed.constants, rule: "false"})
    result = validate(
        model,
        kip966_observe.observe,
        observed,
        ignore=("last_known_elr",),
        deferred=kip966_observe.DEFERRED,
    )
    assert result.verdict == DIVERGED, (result.verdict, result.reason)
    assert RULES_THE_LOG_NEEDS[rule] in {d.variable for d in result.differences}
