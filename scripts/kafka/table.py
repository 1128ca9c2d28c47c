"""The scenarios' table of docs/validate.md, counted from the dumped logs in tests/fixtures/kafka/.

    python scripts/kafka/table.py [FIXTURES_DIR]
    python scripts/kafka/table.py --verdicts [FIXTURES_DIR]

`--verdicts` prints the other table instead: each log (topic-created.log too) validated with
`mc validate specs/kip966.py LOG --json` (one process), compared in full, then with `--ignore
last_known_elr`: its records, images, hidden steps, states, verdict and seconds as measured.

For each SCENARIO.log (with SCENARIO.json beside it: the schedule and the load) it replays the
topic's partition through the records as Kafka's image does (a PartitionChangeRecord's leader -2
and an absent or null ISR, ELR or LastKnownElr leave the value unchanged; a ClearElrRecord empties
ELR and LastKnownElr) and counts the KIP-966 events:

- ELR non-empty: records after which the partition's ELR is non-empty and was empty before;
- ISR empty: records after which the ISR is empty and was not before;
- leader from ELR: records that give a leaderless partition a leader that was in its ELR;
- unclean drop: records, in the same batch as a broker's RegisterBrokerRecord (Kafka writes them
  just before it), that take that broker out of the partition's ELR or LastKnownElr (the
  controller's answer to a registration after an unclean shutdown);
- leader from LastKnownElr: records that give a leaderless partition a leader in its LastKnownElr
  but neither in its ISR nor its ELR (Kafka's recovery of the last known leader, with
  leaderRecoveryState 1).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "kafka"
TOPIC = "mc-kip966"


@dataclass
class Partition:
    leader: int = -1
    isr: list[int] = field(default_factory=list)
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)


@dataclass
class Census:
    records: int = 0  # metadata records (payload lines), NoOpRecords included
    no_ops: int = 0
    partition_changes: int = 0
    leaders: list[int] = field(default_factory=list)  # each leader the partition had, in order
    elr_non_empty: int = 0
    isr_empty: int = 0
    leader_from_elr: int = 0
    unclean_drop: int = 0
    leader_from_last_known_elr: int = 0


def records(log: str) -> list[tuple[int, int, dict]]:
    """(batch base offset, offset, record) of each metadata record the dump tool printed."""
    found = []
    batch = -1
    for line in log.splitlines():
        if line.startswith("baseOffset: "):
            batch = int(line.split()[1])
        elif line.startswith("| offset: ") and " payload: " in line:
            offset = int(line.split()[2])
            found.append((batch, offset, json.loads(line.split(" payload: ", 1)[1])))
    return found


def _changed(value: list[int] | None, old: list[int]) -> list[int]:
    return old if value is None else list(value)


def census(log: str) -> Census:
    counts = Census()
    topic_id = None
    part: Partition | None = None
    logged = records(log)
    registered = {
        batch: record["data"]["brokerId"]
        for batch, _, record in logged
        if record["type"] == "REGISTER_BROKER_RECORD"
    }  # batch base offset -> broker
    for batch, _offset, record in logged:
        counts.records += 1
        kind, data = record["type"], record["data"]
        if kind == "NO_OP_RECORD":
            counts.no_ops += 1
        elif kind == "TOPIC_RECORD" and data["name"] == TOPIC:
            topic_id = data["topicId"]
        elif kind == "PARTITION_RECORD" and data["topicId"] == topic_id:
            part = Partition(
                data["leader"],
                list(data["isr"]),
                list(data.get("eligibleLeaderReplicas") or []),
                list(data.get("lastKnownElr") or []),
            )
            counts.leaders.append(part.leader)
        elif (
            kind == "CLEAR_ELR_RECORD"
            and part is not None
            and data.get("topicName") in (None, "", TOPIC)
        ):
            part.elr, part.last_known_elr = [], []
        elif (
            kind == "PARTITION_CHANGE_RECORD" and part is not None and (data["topicId"] == topic_id)
        ):
            counts.partition_changes += 1
            before = Partition(part.leader, part.isr, part.elr, part.last_known_elr)
            leader = data.get("leader", -2)
            after = Partition(
                before.leader if leader == -2 else leader,
                _changed(data.get("isr"), before.isr),
                _changed(data.get("eligibleLeaderReplicas"), before.elr),
                _changed(data.get("lastKnownElr"), before.last_known_elr),
            )
            if after.elr and not before.elr:
                counts.elr_non_empty += 1
            if not after.isr and before.isr:
                counts.isr_empty += 1
            if before.leader < 0 <= after.leader and after.leader in before.elr:
                counts.leader_from_elr += 1
            if (
                before.leader < 0 <= after.leader
                and after.leader in before.last_known_elr
                and after.leader not in before.elr + before.isr
            ):
                counts.leader_from_last_known_elr += 1
            broker = registered.get(batch)
            if broker is not None and (
                (broker in before.elr and broker not in after.elr)
                or (broker in before.last_known_elr and broker not in after.last_known_elr)
            ):
                counts.unclean_drop += 1
            if after.leader != before.leader:
                counts.leaders.append(after.leader)
            part = after
    return counts


def row(log_path: Path) -> str:
    counts = census(log_path.read_text())
    summary = json.loads(log_path.with_suffix(".json").read_text())
    faults = "; ".join(
        e["event"]
        for e in summary["schedule"][1:-1]
        if not e["event"].startswith(("ISR is", "partition (", "broker "))
    )
    load = summary["load"]
    leaders = " → ".join(str(leader) for leader in counts.leaders)
    return (
        f"| {summary['scenario']} | {faults} | {summary['load_s']:.0f} s "
        f"({load['acked']} of {load['sent']} acked) | {counts.records} "
        f"({counts.no_ops} NoOp) | {counts.partition_changes} | {leaders} "
        f"| {counts.elr_non_empty} | {counts.isr_empty} | {counts.leader_from_elr} "
        f"| {counts.unclean_drop} | {counts.leader_from_last_known_elr} |"
    )


HEADER = (
    "| scenario | faults (node ids, in order) | produce load | records | partition "
    "changes | leaders | ELR non-empty | ISR empty | leader from ELR | unclean drop "
    "| leader from LastKnownElr |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def table(fixtures: Path = FIXTURES) -> str:
    logs = sorted(p for p in fixtures.glob("*.log") if p.with_suffix(".json").exists())
    return "\n".join([HEADER, *(row(p) for p in logs)])


def validated(log: Path, *options: str) -> dict:
    """`mc validate specs/kip966.py LOG --json` (its exit code is the verdict's: not checked)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "verdict.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "checker",
                "validate",
                "specs/kip966.py",
                str(log),
                "--json",
                str(report),
                *options,
            ],
            cwd=ROOT,
            capture_output=True,
            check=False,
            timeout=600,
        )
        return json.loads(report.read_text())


def _verdict(result: dict) -> str:
    if result["verdict"] != "diverged":
        return result["verdict"]
    names = ", ".join(d["variable"] for d in result["differences"])
    return f"diverged at {result['offset']} ({names})"


def verdict_row(log: Path) -> str:
    full = validated(log)
    ignoring = validated(log, "--ignore", "last_known_elr")
    return (
        f"| `{log.name}` | {full['records']} | {full['images']} | {full['hidden_steps']} "
        f"| {full['states']:,} | {_verdict(full)} | {full['seconds']:.1f} "
        f"| {_verdict(ignoring)} ({ignoring['states']:,} states, "
        f"{ignoring['seconds']:.1f} s) |"
    )


VERDICT_HEADER = (
    "| log | records | images | hidden steps (most an image needed) | states "
    "generated | verdict | seconds | with `--ignore last_known_elr` |\n"
    "|---|---|---|---|---|---|---|---|"
)


def verdicts(fixtures: Path = FIXTURES) -> str:
    return "\n".join([VERDICT_HEADER, *(verdict_row(p) for p in sorted(fixtures.glob("*.log")))])


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--verdicts"]
    folder = Path(arguments[0]) if arguments else FIXTURES
    print(verdicts(folder) if "--verdicts" in sys.argv[1:] else table(folder))
