"""One scenario on a real Kafka 4.4.0 cluster (make kafka-lib's jars, Java 17+): the leader of the
topic's partition killed with kill -9 and restarted. Asserts what the dumped metadata log holds.
A missing JVM or jar is a failure, not a skip: `make test` fetches the jars first."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCENARIOS = ROOT / "scripts" / "kafka" / "scenarios.py"
TOPIC = "mc-kip966"


def payloads(log: str) -> list[tuple[int, dict]]:
    """(offset, record) of each metadata record the dump tool printed."""
    found = []
    for line in log.splitlines():
        if line.startswith("| offset: ") and " payload: " in line:
            offset = int(line.split()[2])
            found.append((offset, json.loads(line.split(" payload: ", 1)[1])))
    return found


@pytest.mark.timeout(300)
def test_leader_kill_on_a_real_cluster(tmp_path: Path) -> None:
    assert shutil.which("java"), "Java 17+ is needed (scripts/ensure-java.sh)"
    assert (ROOT / "scripts" / "kafka" / "lib" / ".stamp").exists(), "run `make kafka-lib`"
    out = tmp_path / "leader-kill.log"
    # A port range of its own, apart from the default one of `make validate-kafka`.
    result = subprocess.run(
        [
            sys.executable,
            str(SCENARIOS),
            "leader-kill",
            "--seed",
            "7",
            "--duration",
            "0",
            "--out",
            str(out),
            "--port-base",
            "29400",
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    records = payloads(out.read_text())
    summary = json.loads(out.with_suffix(".json").read_text())

    features = {
        r["data"]["name"]: r["data"]["featureLevel"]
        for _, r in records
        if r["type"] == "FEATURE_LEVEL_RECORD"
    }
    assert features["eligible.leader.replicas.version"] == 1

    (topic_id,) = [
        r["data"]["topicId"]
        for _, r in records
        if r["type"] == "TOPIC_RECORD" and r["data"]["name"] == TOPIC
    ]
    (partition,) = [
        r["data"]
        for _, r in records
        if r["type"] == "PARTITION_RECORD" and r["data"]["topicId"] == topic_id
    ]
    assert sorted(partition["replicas"]) == [1, 2, 3]
    assert sorted(partition["isr"]) == [1, 2, 3]
    first_leader = partition["leader"]
    assert first_leader in (1, 2, 3)

    # The schedule killed that leader; the controller then moved leadership to another replica
    # and, once it was back, put it in the ISR again.
    assert any(e["event"] == f"kill -9 node {first_leader}" for e in summary["schedule"])
    changes = [
        r["data"]
        for _, r in records
        if r["type"] == "PARTITION_CHANGE_RECORD" and r["data"]["topicId"] == topic_id
    ]
    leaders = [c["leader"] for c in changes if c.get("leader", -2) >= 0]
    assert leaders and leaders[0] != first_leader
    assert any(c.get("isr") is not None and first_leader not in c["isr"] for c in changes)
    assert sorted([c["isr"] for c in changes if c.get("isr") is not None][-1]) == [1, 2, 3]
    # The killed broker's fencing and its registration anew, with a higher broker epoch.
    epochs = [
        r["data"]["brokerEpoch"]
        for _, r in records
        if r["type"] == "REGISTER_BROKER_RECORD" and r["data"]["brokerId"] == first_leader
    ]
    assert len(epochs) == 2 and epochs[1] > epochs[0]
    assert summary["load"]["acked"] > 0

    # The live log is a behaviour of the spec: mc validate accepts it (docs/validate.md).
    checked = subprocess.run(
        [sys.executable, "-m", "checker", "validate", str(ROOT / "specs" / "kip966.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert "Accepted: a behaviour of the spec shows each of the" in checked.stdout
