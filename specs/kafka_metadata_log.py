"""A KRaft `__cluster_metadata` log as Kafka's dump tool prints it, and the controller image
that Kafka's own replay builds from it (translated from the record schemas of Apache Kafka's
metadata/src/main/resources/common/metadata/*.json and the way its image applies them:
`PartitionRegistration.merge`, the cluster image's broker registrations).

The dump format (`kafka-dump-log.sh --cluster-metadata-decoder`, DumpLogSegments): a batch
header line `baseOffset: B lastOffset: L count: C ... isControl: true|false ...`, then one line
per record, `| offset: O CreateTime: ... payload: {"type":"PARTITION_CHANGE_RECORD",
"version":V,"data":{...}}` (control records print no payload). A line holding only such a JSON
object (with an "offset" key, or numbered by its position) is read too. Tagged fields are
printed only when they differ from their default, so an absent `isr` means "unchanged".

This module knows Kafka, not the spec: specs/kip966_observe.py maps its image to the spec's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

NO_LEADER = -1  # PartitionChangeRecord / PartitionRecord: no leader
NO_LEADER_CHANGE = -2  # PartitionChangeRecord: the leader did not change

_BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+).*?isControl: (true|false)")
_RECORD = re.compile(r"^\|?\s*offset: (\d+)\b")
_PAYLOAD = " payload: "


class LogFormatError(ValueError):
    """A line of the dump that is not what the dump tool prints."""


@dataclass(frozen=True)
class LogRecord:
    offset: int
    batch: int  # the base offset of its batch: a batch is applied atomically
    type: str  # e.g. "PARTITION_CHANGE_RECORD"; "CONTROL" for a control batch's records
    version: int
    data: dict  # the JSON converter's fields (camelCase), as printed


def read_dump(lines: Iterable[str]) -> list[LogRecord]:
    """The records of a dump, in log order (control records with type CONTROL)."""
    records: list[LogRecord] = []
    batch, control = None, False
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith(("Dumping ", "Log starting offset", "Snapshot end")):
            continue
        header = _BATCH.match(line)
        if header:
            batch, control = int(header.group(1)), header.group(3) == "true"
            continue
        if line.startswith("{"):
            records.append(_json_line(line, number, len(records)))
            continue
        found = _RECORD.match(line)
        if not found:
            raise LogFormatError(f"line {number}: not a batch header or a record: {line[:80]!r}")
        offset = int(found.group(1))
        if control or _PAYLOAD not in line:
            records.append(LogRecord(offset, offset if batch is None else batch, "CONTROL", 0, {}))
            continue
        payload = line.split(_PAYLOAD, 1)[1]
        try:
            decoded = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise LogFormatError(f"line {number}: the payload is not JSON ({exc})") from None
        records.append(_record(decoded, offset, offset if batch is None else batch, number))
    return records


def _json_line(line: str, number: int, position: int) -> LogRecord:
    try:
        decoded = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LogFormatError(f"line {number}: not JSON ({exc})") from None
    offset = decoded.get("offset", position) if isinstance(decoded, dict) else position
    batch = decoded.get("batch", offset) if isinstance(decoded, dict) else offset
    return _record(decoded, int(offset), int(batch), number)


def _record(decoded: object, offset: int, batch: int, number: int) -> LogRecord:
    if not isinstance(decoded, dict) or not isinstance(decoded.get("type"), str):
        raise LogFormatError(f'line {number}: a payload is an object with a "type"')
    data = decoded.get("data", {})
    if not isinstance(data, dict):
        raise LogFormatError(f'line {number}: the payload\'s "data" is not an object')
    return LogRecord(offset, batch, decoded["type"], int(decoded.get("version", 0)), data)


# ----------------------------------------------------------------------------------------
# The image
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Broker:
    epoch: int
    incarnation: str
    fenced: bool
    in_controlled_shutdown: bool
    # Registered anew (another incarnation id) and fenced, not unfenced since: a broker that
    # restarted and has not caught up yet. Not when the registration itself says unfenced
    # (Kafka 4.x re-registers a broker still in controlled shutdown as it was).
    new_incarnation: bool = False


@dataclass(frozen=True)
class Partition:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int  # NO_LEADER: none
    leader_epoch: int
    partition_epoch: int
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@dataclass
class Image:
    """What the controller's image holds after each record (the parts that are replayed)."""

    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)  # topic id -> name
    partitions: dict[tuple[str, int], Partition] = field(default_factory=dict)
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    max_epoch: int = -1  # the highest broker epoch registered so far
    registered_anew: bool = False  # the last RegisterBrokerRecord: another incarnation id


# The record types the replay applies; every other type leaves the image as it is.
APPLIED = (
    "REGISTER_BROKER_RECORD",
    "BROKER_REGISTRATION_CHANGE_RECORD",
    "FENCE_BROKER_RECORD",
    "UNFENCE_BROKER_RECORD",
    "UNREGISTER_BROKER_RECORD",
    "TOPIC_RECORD",
    "PARTITION_RECORD",
    "PARTITION_CHANGE_RECORD",
    "CONFIG_RECORD",
    "FEATURE_LEVEL_RECORD",
    "CLEAR_ELR_RECORD",
)


FENCING = ("BROKER_REGISTRATION_CHANGE_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD")


class ReplayError(ValueError):
    """A record the image cannot take (a change to a partition or broker never created)."""


def _ids(value: object) -> tuple[int, ...]:
    return tuple(int(x) for x in value)  # type: ignore[union-attr]


def apply(image: Image, rec: LogRecord) -> None:
    """Apply one record to `image`, as Kafka's image does."""
    d, kind = rec.data, rec.type
    if kind == "REGISTER_BROKER_RECORD":
        bid, epoch = int(d["brokerId"]), int(d["brokerEpoch"])
        old = image.brokers.get(bid)
        anew = old is None or old.incarnation != d.get("incarnationId")
        fenced = bool(d.get("fenced", True))
        image.brokers[bid] = Broker(
            epoch=epoch,
            incarnation=str(d.get("incarnationId")),
            fenced=fenced,
            in_controlled_shutdown=bool(d.get("inControlledShutdown", False)),
            new_incarnation=anew and fenced,
        )
        image.registered_anew = anew
        image.max_epoch = max(image.max_epoch, epoch)
    elif kind in FENCING:
        bid = int(d.get("brokerId", d.get("id", -1)))
        old = image.brokers.get(bid)
        if old is None:
            raise ReplayError(f"offset {rec.offset}: {kind} for broker {bid}, never registered")
        if kind == "FENCE_BROKER_RECORD":
            fenced = 1
        elif kind == "UNFENCE_BROKER_RECORD":
            fenced = -1
        else:
            fenced = int(d.get("fenced", 0))
        new = old
        if fenced == 1:
            new = replace(new, fenced=True)
        elif fenced == -1:
            new = replace(new, fenced=False, new_incarnation=False)
        if int(d.get("inControlledShutdown", 0)) == 1:
            new = replace(new, in_controlled_shutdown=True)
        image.brokers[bid] = new
    elif kind == "UNREGISTER_BROKER_RECORD":
        image.brokers.pop(int(d["brokerId"]), None)
    elif kind == "TOPIC_RECORD":
        image.topics[str(d["topicId"])] = str(d["name"])
    elif kind == "PARTITION_RECORD":
        key = (str(d["topicId"]), int(d.get("partitionId", 0)))
        image.partitions[key] = Partition(
            replicas=_ids(d.get("replicas", ())),
            isr=_ids(d.get("isr", ())),
            leader=int(d.get("leader", NO_LEADER)),
            leader_epoch=int(d.get("leaderEpoch", -1)),
            partition_epoch=int(d.get("partitionEpoch", -1)),
            elr=_ids(d.get("eligibleLeaderReplicas") or ()),
            last_known_elr=_ids(d.get("lastKnownElr") or ()),
            adding=_ids(d.get("addingReplicas") or ()),
            removing=_ids(d.get("removingReplicas") or ()),
        )
    elif kind == "PARTITION_CHANGE_RECORD":
        key = (str(d["topicId"]), int(d.get("partitionId", 0)))
        old_part = image.partitions.get(key)
        if old_part is None:
            raise ReplayError(f"offset {rec.offset}: a change to partition {key}, never created")
        image.partitions[key] = merge(old_part, d)
    elif kind == "CLEAR_ELR_RECORD":
        # Kafka 4.x: empties ELR and LastKnownElr of the topic's partitions (all topics' if no
        # name), as a change record would: a partition with either non-empty gets a new
        # partition epoch (ReplicationControlManager's replay, PartitionRegistration.merge).
        name = str(d.get("topicName") or "")
        for key, part in list(image.partitions.items()):
            if name and image.topics.get(key[0]) != name:
                continue
            if part.elr or part.last_known_elr:
                image.partitions[key] = merge(
                    part, {"eligibleLeaderReplicas": [], "lastKnownElr": []}
                )
    elif kind == "CONFIG_RECORD":
        key = (int(d.get("resourceType", 0)), str(d.get("resourceName", "")))
        values = image.configs.setdefault(key, {})
        if d.get("value") is None:
            values.pop(str(d.get("name")), None)
        else:
            values[str(d["name"])] = str(d["value"])
    elif kind == "FEATURE_LEVEL_RECORD":
        image.features[str(d["name"])] = int(d["featureLevel"])


def merge(p: Partition, d: dict) -> Partition:
    """A PartitionChangeRecord applied (Kafka's PartitionRegistration.merge): null or absent
    fields are unchanged; a leader other than -2 (-1 included) bumps the leader epoch; every
    change bumps the partition epoch."""

    def field_or(name: str, old: tuple[int, ...]) -> tuple[int, ...]:
        value = d.get(name)
        return old if value is None else _ids(value)

    leader = int(d.get("leader", NO_LEADER_CHANGE))
    changed_leader = leader != NO_LEADER_CHANGE
    return Partition(
        replicas=field_or("replicas", p.replicas),
        isr=field_or("isr", p.isr),
        leader=leader if changed_leader else p.leader,
        leader_epoch=p.leader_epoch + 1 if changed_leader else p.leader_epoch,
        partition_epoch=p.partition_epoch + 1,
        elr=field_or("eligibleLeaderReplicas", p.elr),
        last_known_elr=field_or("lastKnownElr", p.last_known_elr),
        adding=field_or("addingReplicas", p.adding),
        removing=field_or("removingReplicas", p.removing),
    )


def replay(records: Iterable[LogRecord]) -> Iterator[tuple[LogRecord, Image]]:
    """Each record with the image after it (the same Image object, updated in place)."""
    image = Image()
    for rec in records:
        if rec.type in APPLIED:
            apply(image, rec)
        yield rec, image


TOPIC_CONFIG, BROKER_CONFIG = 2, 4  # ConfigResource types of a ConfigRecord


def min_insync_replicas(image: Image, topic: str) -> int:
    """min.insync.replicas of `topic`: its own config, else the cluster default, else 1."""
    for key in ((TOPIC_CONFIG, topic), (BROKER_CONFIG, "")):
        value = image.configs.get(key, {}).get("min.insync.replicas")
        if value is not None:
            return int(value)
    return 1
