"""The committed real logs (tests/fixtures/kafka/) are what scripts/kafka/scenarios.py claims, and
docs/validate.md's scenarios table is what scripts/kafka/table.py counts from them. No Java."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.conftest import ROOT

# scripts/kafka is not a package: its table.py is loaded by path, sys.path left alone.
_spec = importlib.util.spec_from_file_location("mc_kafka_table", ROOT / "scripts/kafka/table.py")
assert _spec is not None and _spec.loader is not None
table = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = table  # its dataclasses look their module up there
_spec.loader.exec_module(table)

FIXTURES = ROOT / "tests" / "fixtures" / "kafka"
SCENARIO_LOGS = sorted(p for p in FIXTURES.glob("*.log") if p.with_suffix(".json").exists())


def test_every_scenario_has_its_fixture():
    names = {p.stem for p in SCENARIO_LOGS}
    assert names == {
        "leader-kill",
        "follower-kill",
        "controller-failover",
        "broker-fenced",
        "controlled-shutdown",
        "rolling-restart",
        "elr-leader-last",
        "elr-member-elected",
        "last-isr-disk-wiped",
        "delayed-alter-partition",
    }


@pytest.mark.parametrize("log", SCENARIO_LOGS, ids=lambda p: p.stem)
def test_a_fixture_is_a_dump_of_the_formatted_cluster(log):
    records = [r for _, _, r in table.records(log.read_text())]
    features = {
        r["data"]["name"]: r["data"]["featureLevel"]
        for r in records
        if r["type"] == "FEATURE_LEVEL_RECORD"
    }
    assert features["eligible.leader.replicas.version"] == 1
    (topic_id,) = [
        r["data"]["topicId"]
        for r in records
        if r["type"] == "TOPIC_RECORD" and r["data"]["name"] == table.TOPIC
    ]
    (partition,) = [
        r["data"]
        for r in records
        if r["type"] == "PARTITION_RECORD" and r["data"]["topicId"] == topic_id
    ]
    assert sorted(partition["replicas"]) == [1, 2, 3]
    # Only the one topic: the consumer's assign() asked for no group coordinator.
    assert [r["data"]["name"] for r in records if r["type"] == "TOPIC_RECORD"] == [table.TOPIC]
    summary = json.loads(log.with_suffix(".json").read_text())
    assert summary["scenario"] == log.stem and summary["kafka"] == "4.4.0"
    assert summary["load"]["acked"] > 0


def test_each_kip966_event_is_seen_in_some_real_log():
    totals = [table.census(p.read_text()) for p in SCENARIO_LOGS]
    assert sum(c.elr_non_empty for c in totals) > 0
    assert sum(c.isr_empty for c in totals) > 0
    assert sum(c.leader_from_elr for c in totals) > 0
    assert sum(c.unclean_drop for c in totals) > 0


def test_docs_validate_md_shows_the_table_counted_from_the_fixtures():
    assert table.table(FIXTURES) in (ROOT / "docs" / "validate.md").read_text()


def test_the_held_alter_partition_was_refused_for_its_stale_broker_epoch():
    """delayed-alter-partition (KIP-903's interleaving, made by proxy.py): the leader's
    AlterPartition naming the follower's broker epoch was held until the follower registered
    anew with a higher one; the controller refused it (INELIGIBLE_REPLICA) and the metadata log
    shows the ISR expanded only after that registration, by a request naming the new epoch."""
    log = FIXTURES / "delayed-alter-partition.log"
    summary = json.loads(log.with_suffix(".json").read_text())
    (held,) = [a for a in summary["alter_partitions"] if a["held_s"] > 0]
    assert held["error"] == "INELIGIBLE_REPLICA" and held["version"] == 3
    logged = table.records(log.read_text())
    epochs: dict[int, list[int]] = {}
    for _, _, r in logged:
        if r["type"] == "REGISTER_BROKER_RECORD":
            epochs.setdefault(r["data"]["brokerId"], []).append(r["data"]["brokerEpoch"])
    (stale,) = [(b, e) for b, e in held["isr_with_epochs"] if e != epochs[b][0]]
    broker, epoch = stale
    assert epoch in epochs[broker] and epochs[broker][-1] > epoch  # registered anew since
    after = summary["alter_partitions"].index(held)
    (accepted,) = [
        a
        for a in summary["alter_partitions"][after + 1 :]
        if broker in [b for b, _ in a["isr_with_epochs"]]
    ]
    assert (
        accepted["error"] == "NONE"
        and [broker, epochs[broker][-1]] in (accepted["isr_with_epochs"])
    )
    last_registration = max(
        o
        for _, o, r in logged
        if r["type"] == "REGISTER_BROKER_RECORD" and r["data"]["brokerId"] == broker
    )
    expansions = [
        o
        for _, o, r in logged
        if r["type"] == "PARTITION_CHANGE_RECORD" and broker in (r["data"].get("isr") or [])
    ]
    assert expansions and expansions[0] > last_registration
