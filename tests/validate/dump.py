"""CONSTRUCTED metadata logs, written in the dump tool's exact format (DumpLogSegments with
--cluster-metadata-decoder), for the tests of `mc validate` that run without Java.

These logs were not written by Kafka: each batch is what Kafka's controller writes for the
event it names, worked out by hand from its source (ReplicationControlManager's
handleBrokerFenced / handleBrokerUnfenced / handleBrokerInControlledShutdown /
handleBrokerUncleanShutdown, ClusterControlManager.registerBroker, PartitionChangeBuilder).
The logs of real runs are tests/fixtures/kafka/ (when they exist).

The cluster: nodes 0, 1, 2 (combined broker+controller), topic "validated" with replicas
[2, 0, 1] (spec brokers 1, 2, 3), min.insync.replicas=2. A broker epoch is the offset of the
batch that registers it, as Kafka's controller gives it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

TOPIC_ID = "8bBHEzL0SKCsPNzxUWqZEg"
TOPIC = "validated"
REPLICAS = [2, 0, 1]
CREATE_TIME = 1765000000000


def rec(kind: str, version: int, **data: object) -> tuple[str, int, dict]:
    return kind, version, data


@dataclass
class Dump:
    lines: list[str] = field(
        default_factory=lambda: [
            "Dumping /tmp/kraft/metadata/__cluster_metadata-0/00000000000000000000.log",
            "Log starting offset: 0",
        ]
    )
    offset: int = 0
    position: int = 0
    epochs: dict[int, int] = field(default_factory=dict)  # node -> its broker epoch
    incarnations: dict[int, int] = field(default_factory=dict)

    def _header(self, count: int, control: bool) -> str:
        last = self.offset + count - 1
        size = 80 + 60 * count
        line = (
            f"baseOffset: {self.offset} lastOffset: {last} count: {count} baseSequence: -1"
            " lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1"
            f" isTransactional: false isControl: {str(control).lower()} deleteHorizonMs:"
            f" OptionalLong.empty position: {self.position} CreateTime: {CREATE_TIME}"
            f" size: {size} magic: 2 compresscodec: none crc: {1000000 + self.offset}"
            " isvalid: true"
        )
        self.position += size
        return line

    def control(self) -> int:
        """A control batch (a leader change of the metadata quorum): stuttering."""
        self.lines.append(self._header(1, True))
        self.lines.append(
            f"| offset: {self.offset} CreateTime: {CREATE_TIME} keySize: 4 valueSize: 29"
            " sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)"
        )
        self.offset += 1
        return self.offset - 1

    def batch(self, *records: tuple[str, int, dict]) -> int:
        """A batch of metadata records; returns its base offset."""
        base = self.offset
        self.lines.append(self._header(len(records), False))
        for kind, version, data in records:
            payload = json.dumps(
                {"type": kind, "version": version, "data": data}, separators=(",", ":")
            )
            self.lines.append(
                f"| offset: {self.offset} CreateTime: {CREATE_TIME} keySize: -1"
                f" valueSize: {len(payload) // 2} sequence: -1 headerKeys: [] payload: {payload}"
            )
            self.offset += 1
        return base

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    # -- what the controller writes ----------------------------------------------------

    def noop(self) -> int:
        return self.batch(rec("NO_OP_RECORD", 0))

    def register(self, node: int, *before: tuple[str, int, dict], epoch: int | None = None):
        """A new incarnation of `node` registers (fenced); `before`: the PartitionChangeRecords
        that remove an unclean broker from the ISR and ELR, written first in the batch."""
        self.incarnations[node] = self.incarnations.get(node, 0) + 1
        new_epoch = self.offset if epoch is None else epoch
        self.epochs[node] = new_epoch
        return self.batch(
            *before,
            rec(
                "REGISTER_BROKER_RECORD",
                3,
                brokerId=node,
                isMigratingZkBroker=False,
                incarnationId=f"inc-{node}-{self.incarnations[node]}",
                brokerEpoch=new_epoch,
                endPoints=[
                    {
                        "name": "PLAINTEXT",
                        "host": "127.0.0.1",
                        "port": 19092 + node,
                        "securityProtocol": 0,
                    }
                ],
                features=[
                    {
                        "name": "metadata.version",
                        "minSupportedVersion": 7,
                        "maxSupportedVersion": 27,
                    }
                ],
                rack=None,
                fenced=True,
                inControlledShutdown=False,
                logDirs=[f"dir-{node}"],
            ),
        )

    def unfence(self, node: int, *after: tuple[str, int, dict]) -> int:
        return self.batch(
            rec(
                "BROKER_REGISTRATION_CHANGE_RECORD",
                0,
                brokerId=node,
                brokerEpoch=self.epochs[node],
                fenced=-1,
            ),
            *after,
        )

    def fence(self, node: int, *before: tuple[str, int, dict]) -> int:
        return self.batch(
            *before,
            rec(
                "BROKER_REGISTRATION_CHANGE_RECORD",
                0,
                brokerId=node,
                brokerEpoch=self.epochs[node],
                fenced=1,
            ),
        )

    def controlled_shutdown(self, node: int, *after: tuple[str, int, dict]) -> int:
        return self.batch(
            rec(
                "BROKER_REGISTRATION_CHANGE_RECORD",
                1,
                brokerId=node,
                brokerEpoch=self.epochs[node],
                inControlledShutdown=1,
            ),
            *after,
        )


def change(**fields: object) -> tuple[str, int, dict]:
    """A PartitionChangeRecord of the validated partition (only the fields that change)."""
    names = {"elr": "eligibleLeaderReplicas", "lke": "lastKnownElr"}
    data: dict[str, object] = {"partitionId": 0, "topicId": TOPIC_ID}
    data.update({names.get(k, k): v for k, v in fields.items()})
    return rec("PARTITION_CHANGE_RECORD", 2, **data)


def started(isr: tuple[int, ...] = tuple(REPLICAS)) -> Dump:
    """A formatted cluster, its brokers registered and unfenced (those not in `isr` stay
    fenced), the topic created with that ISR."""
    d = Dump()
    d.control()
    d.batch(
        rec("FEATURE_LEVEL_RECORD", 0, name="metadata.version", featureLevel=27),
        rec("FEATURE_LEVEL_RECORD", 0, name="eligible.leader.replicas.version", featureLevel=1),
    )
    for node in (0, 1, 2):
        d.batch(
            rec(
                "REGISTER_CONTROLLER_RECORD",
                0,
                controllerId=node,
                incarnationId=f"ctl-{node}",
                zkMigrationReady=False,
            )
        )
    for node in (0, 1, 2):
        d.register(node)
    for node in (0, 1, 2):
        if node in isr:
            d.unfence(node)
    d.noop()
    d.batch(
        rec(
            "CONFIG_RECORD",
            0,
            resourceType=2,
            resourceName=TOPIC,
            name="min.insync.replicas",
            value="2",
        ),
        rec("TOPIC_RECORD", 0, name=TOPIC, topicId=TOPIC_ID),
        partition_record(isr=list(isr)),
    )
    d.noop()
    return d


def partition_record(**fields: object) -> tuple[str, int, dict]:
    """The validated partition's PartitionRecord, as at its creation but for `fields`."""
    data: dict[str, object] = {
        "partitionId": 0,
        "topicId": TOPIC_ID,
        "replicas": REPLICAS,
        "isr": REPLICAS,
        "removingReplicas": [],
        "addingReplicas": [],
        "leader": 2,
        "leaderEpoch": 0,
        "partitionEpoch": 0,
        "directories": ["dir-2", "dir-0", "dir-1"],
    }
    data.update(fields)
    return rec("PARTITION_RECORD", 2, **data)


def follower_restart() -> Dump:
    """Node 1 (broker 3, a follower) killed and restarted, then back in the ISR."""
    d = started()
    d.fence(1, change(isr=[2, 0]))
    d.noop()
    d.register(1)
    d.unfence(1)
    d.noop()
    d.batch(change(isr=[2, 0, 1]))
    d.noop()
    return d


def leader_restart() -> Dump:
    """Node 2 (broker 1, the leader) killed: node 0 leads; node 2 restarts and rejoins."""
    d = started()
    d.fence(2, change(isr=[0, 1], leader=0))
    d.register(2)
    d.unfence(2)
    d.batch(change(isr=[0, 1, 2]))
    d.noop()
    return d


def controlled_shutdown() -> Dump:
    """Node 2 (the leader) shuts down cleanly: in controlled shutdown, leadership moves, then
    fenced; it restarts and registers with the epoch it had (the amend branch of
    ClusterControlManager.registerBroker; the real 4.4.0 log gives a new epoch instead) and
    rejoins."""
    d = started()
    d.controlled_shutdown(2, change(isr=[0, 1], leader=0))
    d.fence(2)
    d.register(2, epoch=d.epochs[2])
    d.unfence(2)
    d.batch(change(isr=[0, 1, 2]))
    return d


def elr_then_election() -> Dump:
    """Two followers killed in turn (the second joins the ELR), then the first one back: the
    ISR reaches MinISR again and the ELR is emptied."""
    d = started()
    d.fence(1, change(isr=[2, 0]))
    d.fence(0, change(isr=[2], elr=[0]))
    d.register(1)
    d.unfence(1)
    d.batch(change(isr=[2, 1], elr=[]))
    return d


def last_known_leader_elected() -> Dump:
    """The ISR emptied by three crashes (Kafka keeps the last leader, node 2, in LastKnownElr);
    node 0 and then node 2 restart uncleanly, each leaving the ELR at its registration; when
    node 2 is unfenced, with ISR and ELR empty, Kafka elects it, the last known leader
    (PartitionChangeBuilder.canElectLastKnownLeader: an unclean election, RECOVERING)."""
    d = started()
    d.fence(1, change(isr=[2, 0]))
    d.fence(0, change(isr=[2], elr=[0]))
    d.fence(2, change(isr=[], leader=-1, elr=[0, 2], lke=[2]))
    d.register(0, change(elr=[2]))
    d.unfence(0)
    d.register(2, change(elr=[]))
    d.unfence(2, change(leader=2, isr=[2], lke=[], leaderRecoveryState=1))
    return d
