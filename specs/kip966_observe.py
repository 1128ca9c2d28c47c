"""How specs/kip966.py is tied to a real Kafka cluster's metadata log (`mc validate`).

`observe(state)` is the projection: the part of a spec state that the controller's
`__cluster_metadata` log shows (as EWD998ChanTrace ties EWD998Chan to a log). `read(log)`
replays a dump of that log (specs/kafka_metadata_log.py, Kafka's own image) and maps each image
to the same variables, renaming Kafka's node ids and epochs to the spec's. docs/validate.md
says what is modelled, abstracted and ignored.

The projected variables:
- `replicas`, `isr`, `elr`: sets of spec brokers; `leader`: a broker or None.
- `last_known_elr`, on its own: the spec keeps there the ELR members removed below MinISR
  (kip966.py's `apply_partition_change`, after Vanlightly's model); the KIP (its "last known
  leader" paragraph) and Kafka 4.x put the last leader there when the ISR becomes empty
  (PartitionChangeBuilder's `maybeUpdateLastKnownLeader`, `useLastKnownLeaderInBalancedRecovery`
  true by default) and elect it once unfenced, which the spec never does. Kept apart so that a
  divergence names it; `mc validate --ignore last_known_elr` leaves it out (docs/validate.md).
- `leader_epoch`, `partition_epoch`: counted from the topic's PartitionRecord (the spec starts
  at leader epoch 1 and partition epoch 1, or 2 when the ISR is not all the replicas).
- `broker_epoch[b]`, `fenced[b]` for each broker b. Kafka's broker epochs are log offsets; the
  spec's controller hands out the next integer. Both grow with each registration, so the k-th
  registration of a replica broker after the topic's creation is the spec's epoch
  BrokerCount + k (the initial registrations are epochs 1..BrokerCount, by replica order).
  A registration whose epoch is not above every epoch before it has no such renaming: its
  image shows the epoch as ("not increasing", epoch), which no spec state has.
  `fenced` is Kafka's "not active": fenced or in controlled shutdown.
  Kafka registers a broker fenced and unfences it once it has caught up (two batches); the
  spec's controller registers and unfences in one step (ReceiveBrokerRegRequest). Between the
  two, the log does not say which the spec has done: epoch and fencing are UNKNOWN there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.validate import UNKNOWN, Observation, Observed
from specs.kafka_metadata_log import (
    NO_LEADER,
    Image,
    LogFormatError,
    LogRecord,
    Partition,
    min_insync_replicas,
    read_dump,
    replay,
)
from specs.kraft import FENCED
from specs.kraft import NO_LEADER as SPEC_NO_LEADER

# BrokerStart may wait until the controller takes the broker's registration (a partial-order
# reduction the search applies: checker/validate.py). Why no behaviour the log can show is lost:
# once a broker is offline, BrokerStart stays enabled (only it leaves OFFLINE); it changes only
# that broker's state, a new incarnation id (ids are only compared for equality, so starting
# two brokers in the other order renames them) and a RegisterBroker request that only
# ReceiveBrokerRegRequest reads. What an early start allows besides is a shutdown of the
# starting broker, fenced and out of the ISR: hidden unless it elects a leader (a visible step,
# still allowed right after the start), and otherwise it only makes the broker's next
# registration unclean, as the shutdown that stopped it could have (both kinds fence the broker
# and leave the partition the same).
DEFERRED = ("broker_start",)

PARTITION_VARIABLES = (
    "replicas",
    "leader",
    "isr",
    "elr",
    "last_known_elr",
    "leader_epoch",
    "partition_epoch",
)
STUTTERING = ("NO_OP_RECORD", "CONTROL")  # records that change nothing the spec models
BROKER_TYPES = (
    "REGISTER_BROKER_RECORD",
    "BROKER_REGISTRATION_CHANGE_RECORD",
    "FENCE_BROKER_RECORD",
    "UNFENCE_BROKER_RECORD",
    "UNREGISTER_BROKER_RECORD",
)
PARTITION_TYPES = ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD")
NOT_INCREASING = "not increasing"


def observe(s: Any) -> dict[str, Any]:
    """The projection of a spec state: what the controller's metadata log can show."""
    md = s.con_partition_metadata
    image: dict[str, Any] = {
        "replicas": frozenset(md.replicas),
        "leader": None if md.leader == SPEC_NO_LEADER else md.leader,
        "isr": frozenset(md.isr),
        "elr": frozenset(md.get("elr") or ()),
        "last_known_elr": frozenset(md.get("last_known_elr") or ()),
        "leader_epoch": md.leader_epoch,
        "partition_epoch": md.partition_epoch,
    }
    for b, reg in s.con_broker_reg.items():
        image[f"broker_epoch[{b}]"] = reg.broker_epoch
        image[f"fenced[{b}]"] = reg.status == FENCED
    return image


@dataclass
class _Renaming:
    """Kafka's node ids and epochs as the spec's."""

    brokers: dict[int, int]  # Kafka node id -> spec broker
    leader_epoch0: int
    partition_epoch0: int  # Kafka's at the PartitionRecord
    spec_partition_epoch0: int
    epochs: dict[int, Any] = field(default_factory=dict)  # Kafka node id -> spec epoch
    # Kafka's partition epoch bumps for changes of fields the spec does not model
    unmodelled_changes: int = 0
    registrations: int = 0  # of replica brokers since the PartitionRecord

    def ids(self, nodes: tuple[int, ...]) -> frozenset:
        return frozenset(self.brokers.get(n, ("not a replica", n)) for n in nodes)

    def leader(self, node: int) -> Any:
        return None if node == NO_LEADER else self.brokers.get(node, ("not a replica", node))


def _image(image: Image, key: tuple[str, int], names: _Renaming) -> dict[str, Any]:
    p: Partition = image.partitions[key]
    out: dict[str, Any] = {
        "replicas": names.ids(p.replicas),
        "leader": names.leader(p.leader),
        "isr": names.ids(p.isr),
        "elr": names.ids(p.elr),
        "last_known_elr": names.ids(p.last_known_elr),
        "leader_epoch": p.leader_epoch - names.leader_epoch0 + 1,
        "partition_epoch": p.partition_epoch
        - names.partition_epoch0
        + names.spec_partition_epoch0
        - names.unmodelled_changes,
    }
    for node, b in sorted(names.brokers.items(), key=lambda kv: kv[1]):
        reg = image.brokers.get(node)
        epoch = names.epochs.get(node)
        if reg is None:  # unregistered: the spec has no such state
            out[f"broker_epoch[{b}]"], out[f"fenced[{b}]"] = ("unregistered",), True
        elif isinstance(epoch, tuple):
            out[f"broker_epoch[{b}]"], out[f"fenced[{b}]"] = epoch, UNKNOWN
        elif reg.new_incarnation:
            out[f"broker_epoch[{b}]"], out[f"fenced[{b}]"] = UNKNOWN, UNKNOWN
        else:
            out[f"broker_epoch[{b}]"] = epoch
            out[f"fenced[{b}]"] = reg.fenced or reg.in_controlled_shutdown
    return out


def _label(rec: LogRecord, names: _Renaming | None) -> str:
    d = rec.data
    who = d.get("brokerId", d.get("id"))
    if who is not None and names is not None and int(who) in names.brokers:
        who = f"{who} (broker {names.brokers[int(who)]})"
    short = {
        k: v
        for k, v in d.items()
        if k not in ("topicId", "endPoints", "features", "logDirs", "directories", "rack")
    }
    return (
        f"{rec.type} v{rec.version}"
        + (f" node {who}" if who is not None else "")
        + (f" {short}" if short else "")
    )


MODELLED_CHANGES = (
    "isr",
    "leader",
    "replicas",
    "eligibleLeaderReplicas",
    "lastKnownElr",
    "addingReplicas",
    "removingReplicas",
)


def _modelled_change(d: Mapping[str, Any]) -> bool:
    """Whether a PartitionChangeRecord names a field the spec models (a leader of -2 or a
    null list names nothing). Kafka also writes records that only move replicas between
    directories (KIP-858) or mark a recovered leader (`leaderRecoveryState`): the spec has no
    such step, so they are stuttering and the partition epoch they bump is not counted."""
    for name in MODELLED_CHANGES:
        value = d.get(name)
        if value is not None and not (name == "leader" and int(value) == -2):
            return True
    return False


def choose_partition(records: list[LogRecord]) -> tuple[str, str, int, int]:
    """The validated partition: the first PartitionRecord of a topic whose name does not start
    with "__" (internal topics). Returns (topic id, topic name, partition id, its index)."""
    names: dict[str, str] = {}
    for i, rec in enumerate(records):
        if rec.type == "TOPIC_RECORD":
            names[str(rec.data["topicId"])] = str(rec.data["name"])
        if rec.type == "PARTITION_RECORD":
            topic = str(rec.data["topicId"])
            name = names.get(topic, topic)
            if not name.startswith("__"):
                return topic, name, int(rec.data.get("partitionId", 0)), i
    raise ValueError("the log holds no PartitionRecord of a user topic")


def read(path: str | Path) -> Observed:
    """The images the dump at `path` shows, from the topic's PartitionRecord on. A log that
    does not hold what Kafka's records hold is a LogFormatError (a ValueError)."""
    with open(path, encoding="utf-8") as lines:
        records = read_dump(lines)
    try:
        return observations(records)
    except (KeyError, TypeError, AttributeError) as exc:
        raise LogFormatError(
            f"a record lacks a field Kafka writes, or holds another type there ({exc!r})"
        ) from None


def observations(records: list[LogRecord]) -> Observed:
    topic, topic_name, partition_id, start = choose_partition(records)
    key = (topic, partition_id)
    notes: list[str] = []
    ignored: dict[str, int] = {}
    out: list[tuple[LogRecord, dict[str, Any]]] = []
    names: _Renaming | None = None
    previous: dict[str, Any] | None = None
    kafka_epochs: dict[int, int] = {}  # each replica broker's epoch as Kafka registered it
    kept: dict[int, int] = {}  # new incarnations that kept their epoch, per node
    highest = -1  # the highest broker epoch registered so far
    for i, (rec, image) in enumerate(replay(records)):
        floor, highest = highest, image.max_epoch  # floor: the highest before this record
        if i < start:
            continue
        if names is None:
            p = image.partitions[key]
            if not p.replicas:
                raise LogFormatError(f"the PartitionRecord at offset {rec.offset} names no replica")
            unregistered = [n for n in p.replicas if n not in image.brokers]
            if unregistered:
                raise LogFormatError(
                    f"the PartitionRecord at offset {rec.offset} names node {unregistered[0]},"
                    " which no RegisterBrokerRecord before it registers"
                )
            names = _Renaming(
                brokers={node: n for n, node in enumerate(p.replicas, start=1)},
                leader_epoch0=p.leader_epoch,
                partition_epoch0=p.partition_epoch,
                spec_partition_epoch0=1 if set(p.isr) == set(p.replicas) else 2,
            )
            names.epochs = {node: b for node, b in names.brokers.items()}
            kafka_epochs = {node: image.brokers[node].epoch for node in names.brokers}
        elif rec.type in STUTTERING:
            continue
        elif rec.type in BROKER_TYPES:
            node = int(rec.data.get("brokerId", rec.data.get("id", -1)))
            if node not in names.brokers:
                ignored[rec.type + " of a broker that is no replica"] = (
                    ignored.get(rec.type + " of a broker that is no replica", 0) + 1
                )
                continue
            if rec.type == "REGISTER_BROKER_RECORD" and image.registered_anew:
                epoch = int(rec.data["brokerEpoch"])
                if epoch != kafka_epochs[node] and epoch <= floor:
                    names.epochs[node] = (NOT_INCREASING, epoch)
                else:  # a new incarnation: the spec's next epoch
                    if epoch == kafka_epochs[node]:  # Kafka 4.x keeps it on a clean restart
                        kept[node] = kept.get(node, 0) + 1
                    names.registrations += 1
                    names.epochs[node] = len(names.brokers) + names.registrations
                kafka_epochs[node] = epoch
        elif rec.type == "CLEAR_ELR_RECORD":
            if rec.data.get("topicName") not in ("", None, topic_name):
                ignored[rec.type + " of another topic"] = (
                    ignored.get(rec.type + " of another topic", 0) + 1
                )
                continue
        elif rec.type in PARTITION_TYPES:
            if (str(rec.data.get("topicId")), int(rec.data.get("partitionId", 0))) != key:
                ignored[rec.type + " of another partition"] = (
                    ignored.get(rec.type + " of another partition", 0) + 1
                )
                continue
            if rec.type == "PARTITION_CHANGE_RECORD" and not _modelled_change(rec.data):
                names.unmodelled_changes += 1
                what = "PARTITION_CHANGE_RECORD of unmodelled fields only (partition epoch kept)"
                ignored[what] = ignored.get(what, 0) + 1
                continue
        else:
            ignored[rec.type] = ignored.get(rec.type, 0) + 1
            continue
        now = _image(image, key, names)
        if previous is not None and now == previous:
            continue
        out.append((rec, now))
        previous = now
    if names is None:
        raise ValueError("the log ends before the topic's PartitionRecord")
    faults = _faults([image for _, image in out], [rec.batch for rec, _ in out])
    observed = []
    for n, (rec, image_now) in enumerate(out):
        last_in_batch = n + 1 == len(out) or out[n + 1][0].batch != rec.batch
        observed.append(Observation(rec.offset, image_now, _label(rec, names), last_in_batch))
    p0 = out[0][1]
    constants = {
        "broker_count": str(len(names.brokers)),
        "init_replication_factor": str(len(names.brokers)),
        "init_isr_size": str(len(p0["isr"])),
        "min_isr": str(_min_isr(records, topic_name)),
        "values": "0",
        "fence_broker_limit": str(faults.pauses),
        "no_data_loss_shutdown_limit": str(faults.stops),
        # With no value written, a crash that loses the log and one that keeps it differ in
        # nothing the controller sees: the first is left out (docs/validate.md).
        "data_loss_shutdown_limit": "0",
        "leader_shrink_isr_limit": str(faults.shrinks),
        "reassignment_limit": "0",
        # The search meets states by the model's view; kip966's (after the TLA+ model's VIEW)
        # leaves out the fault counters, and merged by it, a state that has used a fault
        # hides one that has it left (whichever came first stays): the complete pass would miss
        # behaviours. The view keeps them here. (It still leaves out the history of discarded
        # messages, as TLC's VIEW does; without it, every closure is a few times larger.)
        "view_keeps_counters": "true",
    }
    notes.append(
        f"topic {topic_name} partition {partition_id}: Kafka nodes "
        + ", ".join(
            f"{node} = broker {b}"
            for node, b in sorted(names.brokers.items(), key=lambda kv: kv[1])
        )
    )
    for node, count in sorted(kept.items()):
        notes.append(
            f"node {node} registered a new incarnation {count} time(s) keeping its broker epoch"
            " (Kafka's clean restart): renamed to a new spec epoch each time"
        )
    for kind, count in sorted(ignored.items()):
        notes.append(f"ignored: {count} {kind}")
    return Observed(constants, observed, len(records), notes)


@dataclass
class Faults:
    """The faults a log shows, as the spec's fault limits count them."""

    stops: int = 0  # fenced, then registered again (or still fenced at the end): a shutdown
    pauses: int = 0  # fenced, then unfenced with the same epoch (or still fenced): FenceBroker
    shrinks: int = 0  # the ISR shrinks in a batch that fences no broker: the leader's request


def _faults(images: list[dict[str, Any]], batches: list[int]) -> Faults:
    """Each time a broker becomes fenced, whether it comes back with a new registration (a
    shutdown or crash: the spec's NoDataLossShutdown or DataLossShutdown) or with the same
    epoch (the spec's FenceBroker, then UnfenceBroker); and the ISR shrinks of no fence."""
    faults = Faults()
    ends = [i for i in range(len(images)) if i + 1 == len(images) or batches[i + 1] != batches[i]]
    for n, end in enumerate(ends):
        before = images[ends[n - 1]] if n else images[0]
        after = images[end]
        fenced = [
            k[len("fenced[") : -1]
            for k, v in after.items()
            if k.startswith("fenced[") and v is True and before.get(k) is not True
        ]
        for b in fenced:
            how = _comeback(images[end:], b)
            faults.stops += how != "unfenced"
            faults.pauses += how != "registered"
        if not fenced and not before["isr"] <= after["isr"]:
            faults.shrinks += 1
    return faults


def _comeback(images: list[dict[str, Any]], b: str) -> str:
    """How broker b, fenced in images[0], is next seen unfenced: "registered" (a new epoch, or
    a registration under way), "unfenced" (the same epoch) or "never"."""
    epoch = images[0][f"broker_epoch[{b}]"]
    for image in images[1:]:
        if image[f"broker_epoch[{b}]"] != epoch:
            return "registered"
        if image[f"fenced[{b}]"] is False:
            return "unfenced"
    return "never"


def _min_isr(records: list[LogRecord], topic: str) -> int:
    """min.insync.replicas of `topic` as the whole log leaves it."""
    last = Image()
    for _, last in replay(records):  # noqa: B007 (the image after the last record)
        pass
    return min_insync_replicas(last, topic)


def describe(image: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in image.items())
