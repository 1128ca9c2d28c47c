"""KIP-903: replicas with a stale broker epoch must not be allowed to join the ISR.

One partition with a replica on every broker, under a KRaft controller. Broker 0 starts as
the leader and the only ISR member, holding one committed record; the other replicas are
empty followers (the starting point of KAFKA-14139).

Modelled: broker registration (each registration a new broker epoch), fencing on missed
heartbeats and unfencing; followers fetching from the leader one record per Fetch, with their
broker epoch (KIP-903); the leader's ReplicaState of each follower; ISR expansion through
AlterPartition requests that stay in flight and may be handled late; the controller's checks
(leader epoch, partition epoch, KIP-841 fenced replicas, and with `fixed` the KIP-903 broker
epochs); reboots keeping or losing the disk; leader election by the controller.

Abstracted: metadata reaches brokers at once; ISR shrink on lag, clean shutdown, lost or
duplicated requests and delayed Fetch responses are left to the shared model of the
replication KIPs.
"""

from __future__ import annotations

from checker import Record, Spec, State, action, constant, invariant, on, put, without
from invariants import replication

NO_REPLICA_STATE = None  # the leader has not seen a Fetch from this follower yet


class Kip903(Spec):
    """KIP-903: broker epochs keep stale replicas out of the ISR."""

    brokers = constant(2, "brokers, each hosting a replica of the partition")
    max_broker_epoch = constant(3, "registrations per broker, the first included (bounds reboots)")
    max_records = constant(2, "records a log may hold (the leader starts with one)")
    fixed = constant(True, "KIP-903: broker epochs in Fetch and AlterPartition, checked")

    @property
    def broker_ids(self) -> range:
        return range(self.brokers)

    def init(self) -> State:
        n = self.brokers
        return Record(
            # The controller: the broker registry and the partition record.
            broker_epoch=(1,) * n,
            fenced=frozenset(),
            leader=0,
            leader_epoch=1,
            partition_epoch=1,
            isr={0: 1},  # member -> the broker epoch it was admitted with
            # Each broker: the epoch of its own registration (None: restarted, not
            # registered yet), its log (the leader epoch of each record) and its HWM.
            local_epoch=(1,) * n,
            log=((1,),) + ((),) * (n - 1),
            hwm=(1,) + (0,) * (n - 1),
            # The leader's view: each follower's ReplicaState and the ISR it proposed.
            replica_state=(NO_REPLICA_STATE,) * n,
            pending_isr=None,
            # AlterPartition requests in flight to the controller.
            alter_partition_requests=frozenset(),
        )

    # -- the leader and its followers -------------------------------------------------------

    @action(b="broker_ids")
    @on("broker {b}")
    def append_record(self, s: State, b: int) -> State | None:
        """A producer writes a record to the leader."""
        if not self.is_leader(s, b) or len(s.log[b]) >= self.max_records:
            return None
        s = s.replace(log=put(s.log, b, s.log[b] + (s.leader_epoch,)))
        return self.advance_high_watermark(s)

    @action(f="broker_ids")
    @on("broker {f}", calls="broker {s.leader}", message="Fetch")
    def fetch(self, s: State, f: int) -> State | None:
        """Follower f fetches from the leader; since KIP-903 the Fetch carries f's broker epoch.

        The follower first truncates a diverging suffix (records of another leader epoch),
        then receives one record. The leader records the fetch offset and the epoch.
        """
        leader = s.leader
        if leader is None or f == leader or not self.is_leader(s, leader):
            return None
        if s.local_epoch[f] is None:
            return None
        leader_log = s.log[leader]
        offset = _common_prefix(s.log[f], leader_log)
        follower_log = leader_log[: offset + 1]
        s = s.replace(
            log=put(s.log, f, follower_log),
            hwm=put(s.hwm, f, min(s.hwm[leader], len(follower_log))),
            replica_state=put(
                s.replica_state, f, Record(fetch_offset=offset, broker_epoch=s.local_epoch[f])
            ),
        )
        return self.advance_high_watermark(s)

    @action(f="broker_ids")
    @on("broker {s.leader}", sends="controller", message="AlterPartition")
    def send_alter_partition(self, s: State, f: int) -> State | None:
        """The leader asks the controller to add caught-up follower f to the ISR."""
        leader = s.leader
        if leader is None or not self.is_leader(s, leader) or s.pending_isr is not None:
            return None
        replica = s.replica_state[f]
        if f in s.isr or replica is None or replica.fetch_offset < s.hwm[leader]:
            return None
        if f in s.fenced:  # KIP-841: fenced replicas are not proposed
            return None
        # KIP-903: propose f only once the epoch of its Fetch matches the metadata cache.
        if self.fixed and replica.broker_epoch != s.broker_epoch[f]:
            return None
        proposed = put(s.isr, f, replica.broker_epoch)
        request = Record(
            leader=leader,
            leader_epoch=s.leader_epoch,
            partition_epoch=s.partition_epoch,
            isr=proposed,
        )
        return s.replace(
            pending_isr=proposed,
            alter_partition_requests=s.alter_partition_requests | {request},
        )

    # -- the controller ---------------------------------------------------------------------

    @action(request=lambda s: s.alter_partition_requests)
    @on("controller", receives="broker {request.leader}", message="AlterPartition")
    def handle_alter_partition(self, s: State, request: Record) -> State:
        """The controller handles an AlterPartition request, however late it arrives."""
        s = s.replace(alter_partition_requests=s.alter_partition_requests - {request})
        if self.alter_partition_error(s, request) is None:
            s = s.replace(isr=request.isr, partition_epoch=s.partition_epoch + 1)
        # The response: accepted, the proposal is now the ISR; rejected, the leader
        # discards it and reverts to the last committed ISR.
        if s.leader_epoch == request.leader_epoch and s.pending_isr == request.isr:
            s = s.replace(pending_isr=None)
        return s

    def alter_partition_error(self, s: State, request: Record) -> str | None:
        if request.leader_epoch != s.leader_epoch:
            return "FENCED_LEADER_EPOCH"
        if request.partition_epoch != s.partition_epoch:
            return "INVALID_UPDATE_VERSION"
        for broker, epoch in request.isr.items():
            if broker in s.fenced:  # KIP-841
                return "INELIGIBLE_REPLICA"
            if self.fixed and epoch != s.broker_epoch[broker]:  # KIP-903
                return "INELIGIBLE_REPLICA"
        return None

    @action(b="broker_ids")
    @on("controller")
    def fence_broker(self, s: State, b: int) -> State | None:
        """The controller fences a broker that stopped heartbeating (it restarted)."""
        if b in s.fenced or s.local_epoch[b] == s.broker_epoch[b]:
            return None
        return self.remove_from_isr(s.replace(fenced=s.fenced | {b}), b)

    @action(b="broker_ids")
    @on("broker {b}", calls="controller", message="BrokerRegistration")
    def register_broker(self, s: State, b: int) -> State | None:
        """A restarted broker registers and gets a new broker epoch; it starts fenced."""
        if s.local_epoch[b] is not None:
            return None
        epoch = s.broker_epoch[b] + 1
        s = s.replace(
            broker_epoch=put(s.broker_epoch, b, epoch),
            local_epoch=put(s.local_epoch, b, epoch),
            fenced=s.fenced | {b},
        )
        return self.remove_from_isr(s, b)

    @action(b="broker_ids")
    @on("controller")
    def unfence_broker(self, s: State, b: int) -> State | None:
        """A registered broker that caught up with the metadata log is unfenced."""
        if b not in s.fenced or s.local_epoch[b] != s.broker_epoch[b]:
            return None
        s = s.replace(fenced=s.fenced - {b})
        if s.leader is None and b in s.isr:
            s = self.change_partition(s, leader=b)
        return s

    # -- faults -----------------------------------------------------------------------------

    @action(b="broker_ids", lose_disk=(True, False))
    @on("broker {b}")
    def reboot_broker(self, s: State, b: int, lose_disk: bool) -> State | None:
        """Broker b crashes and restarts; with `lose_disk` its disk was replaced (empty log).

        Every reboot costs a registration, so `max_broker_epoch` bounds them.
        """
        if s.local_epoch[b] is None or s.broker_epoch[b] >= self.max_broker_epoch:
            return None
        s = s.replace(
            local_epoch=put(s.local_epoch, b, None),
            log=put(s.log, b, ()) if lose_disk else s.log,
            hwm=put(s.hwm, b, 0) if lose_disk else s.hwm,
        )
        if s.leader == b:  # the leader's in-memory state is gone
            s = s.replace(replica_state=(NO_REPLICA_STATE,) * self.brokers, pending_isr=None)
        return s

    # -- invariants -------------------------------------------------------------------------

    no_stale_epoch_in_isr = invariant(replication.no_stale_epoch_in_isr)
    isr_members_hold_committed_data = invariant(replication.isr_members_hold_committed_data)
    leader_in_isr = invariant(replication.leader_in_isr)

    # -- helpers ----------------------------------------------------------------------------

    def is_leader(self, s: State, b: int) -> bool:
        """b is the elected leader and runs under its current registration."""
        return s.leader == b and s.local_epoch[b] == s.broker_epoch[b]

    def advance_high_watermark(self, s: State) -> State:
        """The HWM is the smallest log end among the leader and the maximal ISR (committed
        ISR plus pending additions), as the leader knows them from Fetch requests."""
        leader = s.leader
        members = set(s.isr) | set(s.pending_isr or ())
        ends = [
            len(s.log[m]) if m == leader else _fetch_offset(s.replica_state[m]) for m in members
        ]
        hwm = max(s.hwm[leader], min(ends))
        return s if hwm == s.hwm[leader] else s.replace(hwm=put(s.hwm, leader, hwm))

    def remove_from_isr(self, s: State, b: int) -> State:
        """A fenced broker leaves the ISR, except the last member (KIP-903 keeps that case as
        it was: the last member stays, now known by its new epoch). A new leader is elected if
        b led."""
        if b not in s.isr:
            return s
        if len(s.isr) == 1:
            s = s.replace(isr=put(s.isr, b, s.broker_epoch[b]))
            return self.change_partition(s, leader=None) if s.leader == b else s
        isr = without(s.isr, b)
        leader = s.leader if s.leader != b else self.elect_leader(s, isr)
        return self.change_partition(s, isr=isr, leader=leader)

    def elect_leader(self, s: State, isr: Record) -> int | None:
        """As Kafka's controller: the first replica that is in the ISR and not fenced."""
        return next((b for b in sorted(isr) if b not in s.fenced), None)

    def change_partition(self, s: State, *, leader: int | None, isr: Record | None = None) -> State:
        """A PartitionChangeRecord: a new partition epoch; a new leader also gets a new leader
        epoch and starts with no ReplicaState and no pending ISR change."""
        changes: dict[str, object] = {"partition_epoch": s.partition_epoch + 1}
        if isr is not None:
            changes["isr"] = isr
        if leader != s.leader:
            changes.update(
                leader=leader,
                leader_epoch=s.leader_epoch + 1,
                replica_state=(NO_REPLICA_STATE,) * self.brokers,
                pending_isr=None,
            )
        return s.replace(**changes)


def _common_prefix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _fetch_offset(replica: Record | None) -> int:
    return 0 if replica is None else replica.fetch_offset
