"""The shared model of one partition under a KRaft controller, before KIP-841, 903 and 966
(the KIPs on the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

Every broker hosts a replica of the partition. The controller holds the broker registry
(broker epochs, fencing, controlled shutdown) and the partition record (leader, ISR, leader
epoch, partition epoch, ELR). Followers fetch from the leader; the leader proposes ISR changes
with AlterPartition requests that stay in flight until the controller handles them. Metadata
reaches the brokers at once (the metadata log is not modelled).

Each KIP module subclasses this model and overrides the hooks its KIP changes (marked "hook"
below), switched by its own `fixed` constant: a reader diffing the two sees the protocol change.

Faults are named actions, each bounded by a constant (limit faults, never healing):
controlled and clean shutdown, unclean shutdown (keeping the log, or losing unflushed records),
disk replacement, heartbeat loss, lost and duplicated AlterPartition requests, and delayed Fetch
responses. A restarted broker re-registers with a new broker epoch.

Fairness (for temporal properties, see specs/kip966.py): each broker that started a controlled
shutdown eventually completes it, and each restarted broker eventually registers and is
unfenced (weak fairness per broker). No other action is assumed to happen.
"""

from __future__ import annotations

from checker import (
    Record,
    Spec,
    State,
    action,
    constant,
    constraint,
    on,
    put,
    reachable,
    without,
)
from specs.logs import common_prefix

NO_REPLICA_STATE = None  # the leader has not seen a Fetch from this follower yet
# The fault bounds that make a broker restart (and register again), and those that fence one:
# the constants that switch on the actions which only follow them (@action(switch=...)).
RESTARTS = (
    "max_unclean_shutdowns",
    "max_unflushed_losses",
    "max_disk_replacements",
    "max_controlled_shutdowns",
)
FENCES = (*RESTARTS, "max_heartbeat_losses")


def switched_by_fix() -> property:
    """A KIP layer's switch (`kip841 = switched_by_fix()`): on as its `fixed` constant says; a
    later KIP sets it True."""
    return property(lambda spec: spec.fixed)


class Replication(Spec):
    """KRaft replication of one partition, before KIP-841, KIP-903 and KIP-966."""

    brokers = constant(2, "brokers, each hosting a replica of the partition")
    max_records = constant(2, "records a log may hold (the leader starts with one)")
    # Fault bounds: how many times each fault may happen in a behaviour.
    max_controlled_shutdowns = constant(0, "fault bound: controlled shutdowns (then clean stop)")
    max_unclean_shutdowns = constant(0, "fault bound: crashes that keep the whole log")
    max_unflushed_losses = constant(0, "fault bound: crashes losing unflushed records")
    max_disk_replacements = constant(0, "fault bound: crashes with the disk replaced (empty log)")
    max_heartbeat_losses = constant(0, "fault bound: running brokers fenced for missed heartbeats")
    max_lost_requests = constant(0, "fault bound: AlterPartition requests lost")
    max_duplicated_requests = constant(0, "fault bound: AlterPartition requests delivered twice")
    max_delayed_fetch_responses = constant(0, "fault bound: Fetch responses delivered late")
    unclean_leader_election = constant(False, "elect an out-of-sync replica when none is left")
    max_partition_epoch = constant(
        0, "search bound: expand no state past this partition epoch (0: no bound)"
    )

    # Variables that may also hold None, which the initial states do not show.
    leader: int | None
    local_epoch: tuple[int | None, ...]

    # Each fault's count in the state; its bound is the constant `max_<name>`.
    FAULTS = (
        "controlled_shutdowns",
        "unclean_shutdowns",
        "unflushed_losses",
        "disk_replacements",
        "heartbeat_losses",
        "lost_requests",
        "duplicated_requests",
        "delayed_fetch_responses",
    )

    @property
    def broker_ids(self) -> range:
        return range(self.brokers)

    def initial_isr(self) -> tuple[int, ...]:
        """hook: who is in the ISR (and holds the committed record) at the start."""
        return (0,)

    def init(self) -> State:
        n, members = self.brokers, self.initial_isr()
        return Record(
            # The controller: the broker registry and the partition record.
            broker_epoch=(1,) * n,
            fenced=frozenset(),
            shutting_down=frozenset(),  # in controlled shutdown
            leader=0,
            leader_epoch=1,
            partition_epoch=1,
            isr={b: 1 for b in members},  # member -> the broker epoch it was admitted with
            elr=frozenset(),  # KIP-966: eligible leader replicas
            last_known_elr=frozenset(),  # KIP-966
            # Each broker: the epoch of its own registration (None: restarted, not registered
            # yet), its log (the leader epoch of each record), its HWM and its clean-shutdown
            # file (the broker epoch written at a clean shutdown, KIP-966).
            local_epoch=(1,) * n,
            log=tuple((1,) if b in members else () for b in range(n)),
            hwm=tuple(1 if b in members else 0 for b in range(n)),
            clean_shutdown_epoch=(None,) * n,
            # The leader's view: each follower's ReplicaState and the ISR it proposed.
            replica_state=(NO_REPLICA_STATE,) * n,
            pending_isr=None,
            # In flight: AlterPartition requests; delayed Fetch responses.
            alter_partition_requests=frozenset(),
            fetch_responses=frozenset(),
            # History: every record ever committed (below a leader's HWM), in order.
            committed=(1,),
            faults=Record({f: 0 for f in self.FAULTS}),
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
        """Follower f fetches from the leader and gets the response at once.

        The Fetch carries f's fetch offset (after truncating a diverging suffix) and its
        broker epoch; the leader records both in f's ReplicaState and answers one record.
        """
        if not self.may_fetch(s, f):
            return None
        s, response = self.handle_fetch(s, f)
        return self.apply_fetch_response(s, response)

    @action(f="broker_ids", switch="max_delayed_fetch_responses")
    @on("broker {s.leader}", sends="broker {f}", message="FetchResponse")
    def delay_fetch_response(self, s: State, f: int) -> State | None:
        """Fault: the leader handles f's Fetch, but the response arrives later."""
        if not self.may_fetch(s, f) or not self.fault_allowed(s, "delayed_fetch_responses"):
            return None
        s, response = self.handle_fetch(s, f)
        s = s.replace(fetch_responses=s.fetch_responses | {response})
        return self.count_fault(s, "delayed_fetch_responses")

    @action(response=lambda s: s.fetch_responses, switch="max_delayed_fetch_responses")
    @on("broker {response.follower}", receives="broker {response.leader}", message="FetchResponse")
    def receive_fetch_response(self, s: State, response: Record) -> State:
        """A follower gets a delayed Fetch response. A restarted follower ignores it, and so
        does one whose leader epoch moved on (the response is from a former leader)."""
        s = s.replace(fetch_responses=s.fetch_responses - {response})
        stale = response.leader_epoch != s.leader_epoch
        if stale or response.broker_epoch != s.local_epoch[response.follower]:
            return s
        return self.apply_fetch_response(s, response)

    @action(f="broker_ids")
    @on("broker {s.leader}", sends="controller", message="AlterPartition")
    def send_alter_partition(self, s: State, f: int) -> State | None:
        """The leader asks the controller to add caught-up follower f to the ISR.

        Caught up: f's last Fetch reached the leader's log end. (Kafka asks for the HWM and
        shrinks after a lag time; with the log end for both, a shrink and an expansion of the
        same follower always have a Fetch between them, so epochs cannot grow forever.)
        """
        leader = s.leader
        if leader is None or not self.is_leader(s, leader) or s.pending_isr is not None:
            return None
        replica = s.replica_state[f]
        if f in s.isr or replica is None or replica.fetch_offset < len(s.log[leader]):
            return None
        if not self.leader_may_propose(s, f, replica):
            return None
        return self.propose_isr(s, put(s.isr, f, replica.broker_epoch))

    @action(f="broker_ids")
    @on("broker {s.leader}", sends="controller", message="AlterPartition")
    def shrink_isr(self, s: State, f: int) -> State | None:
        """The leader asks the controller to remove follower f, which lags behind its log."""
        leader = s.leader
        if leader is None or not self.is_leader(s, leader) or s.pending_isr is not None:
            return None
        if f == leader or f not in s.isr:
            return None
        replica = s.replica_state[f]
        if replica is not None and replica.fetch_offset >= len(s.log[leader]):
            return None
        return self.propose_isr(s, without(s.isr, f))

    # -- the controller ---------------------------------------------------------------------

    @action(request=lambda s: s.alter_partition_requests)
    @on("controller", receives="broker {request.leader}", message="AlterPartition")
    def handle_alter_partition(self, s: State, request: Record) -> State:
        """The controller handles an AlterPartition request, however late it arrives."""
        s = s.replace(alter_partition_requests=s.alter_partition_requests - {request})
        return self.answer_alter_partition(s, request)

    @action(request=lambda s: s.alter_partition_requests, switch="max_duplicated_requests")
    @on("controller", receives="broker {request.leader}", message="AlterPartition")
    def handle_duplicated_alter_partition(self, s: State, request: Record) -> State | None:
        """Fault: the network delivers a copy now; the request stays in flight as well."""
        if not self.fault_allowed(s, "duplicated_requests"):
            return None
        s = self.count_fault(s, "duplicated_requests")
        return self.answer_alter_partition(s, request)

    @action(request=lambda s: s.alter_partition_requests, switch="max_lost_requests")
    @on("broker {request.leader}")
    def lose_alter_partition(self, s: State, request: Record) -> State | None:
        """Fault: the request is lost; the leader times out and reverts to the committed ISR."""
        if not self.fault_allowed(s, "lost_requests"):
            return None
        s = s.replace(alter_partition_requests=s.alter_partition_requests - {request})
        if s.leader_epoch == request.leader_epoch and s.pending_isr == request.isr:
            s = s.replace(pending_isr=None)
        return self.count_fault(s, "lost_requests")

    @action(b="broker_ids", switch=FENCES)
    @on("controller")
    def fence_broker(self, s: State, b: int) -> State | None:
        """The controller fences a broker that stopped heartbeating: it restarted, or (a fault)
        its heartbeats were lost."""
        if b in s.fenced:
            return None
        if s.local_epoch[b] == s.broker_epoch[b]:  # still running: heartbeats were lost
            if not self.fault_allowed(s, "heartbeat_losses"):
                return None
            s = self.count_fault(s, "heartbeat_losses")
        return self.remove_from_isr(s.replace(fenced=s.fenced | {b}), b)

    @action(b="broker_ids", fair_each="weak", switch=RESTARTS)
    @on("broker {b}", calls="controller", message="BrokerRegistration")
    def register_broker(self, s: State, b: int) -> State | None:
        """A restarted broker registers and gets a new broker epoch; it starts fenced and
        leaves controlled shutdown."""
        if s.local_epoch[b] is not None:
            return None
        previous = s.clean_shutdown_epoch[b]
        epoch = s.broker_epoch[b] + 1
        s = s.replace(
            broker_epoch=put(s.broker_epoch, b, epoch),
            local_epoch=put(s.local_epoch, b, epoch),
            clean_shutdown_epoch=put(s.clean_shutdown_epoch, b, None),
            fenced=s.fenced | {b},
            shutting_down=s.shutting_down - {b},
        )
        return self.registered(self.remove_from_isr(s, b), b, previous, epoch - 1)

    @action(b="broker_ids", fair_each="weak", switch=FENCES)
    @on("controller")
    def unfence_broker(self, s: State, b: int) -> State | None:
        """A registered, heartbeating broker is unfenced; a leaderless partition may elect it."""
        if b not in s.fenced or s.local_epoch[b] != s.broker_epoch[b]:
            return None
        s = s.replace(fenced=s.fenced - {b})
        if s.leader is not None:
            return s
        leader, isr = self.choose_leader(s, s.isr)
        return s if leader is None else self.change_partition(s, leader=leader, isr=isr)

    @action(b="broker_ids", switch="max_controlled_shutdowns")
    @on("broker {b}", calls="controller", message="ControlledShutdown")
    def controlled_shutdown(self, s: State, b: int) -> State | None:
        """A broker asks to shut down; the controller moves leadership and the ISR off it."""
        if s.local_epoch[b] != s.broker_epoch[b] or b in s.shutting_down or b in s.fenced:
            return None
        if not self.fault_allowed(s, "controlled_shutdowns"):
            return None
        s = self.count_fault(s, "controlled_shutdowns")
        return self.remove_from_isr(s.replace(shutting_down=s.shutting_down | {b}), b)

    @action(b="broker_ids", switch="unclean_leader_election")
    @on("controller")
    def elect_unclean_leader(self, s: State, b: int) -> State | None:
        """With unclean leader election enabled, a live out-of-sync replica leads when no
        eligible replica is left (data below the HWM may be lost: that is the point)."""
        if not self.unclean_leader_election or s.leader is not None or b in s.isr:
            return None
        if s.local_epoch[b] != s.broker_epoch[b] or not self.electable(s, b):
            return None
        if self.choose_leader(s, s.isr)[0] is not None:
            return None
        return self.change_partition(s, leader=b, isr=Record({b: s.broker_epoch[b]}))

    # -- faults, the most destructive first (so among equally short counterexamples, BFS
    # -- reports the worst fault); a stopped broker restarts at once and must register again

    @action(b="broker_ids", switch="max_disk_replacements")
    @on("broker {b}")
    def replace_disk(self, s: State, b: int) -> State | None:
        """Fault: the broker fails and comes back with a new, empty disk."""
        if s.local_epoch[b] is None or not self.fault_allowed(s, "disk_replacements"):
            return None
        return self.restart(self.count_fault(s, "disk_replacements"), b, ())

    @action(b="broker_ids", switch="max_unflushed_losses")
    @on("broker {b}")
    def lose_unflushed_records(self, s: State, b: int) -> list[State] | None:
        """Fault: the broker crashes and restarts, losing records it had not flushed (any
        non-empty suffix of its log: page-cache writes are not fsynced)."""
        if s.local_epoch[b] is None or not s.log[b]:
            return None
        if not self.fault_allowed(s, "unflushed_losses"):
            return None
        s = self.count_fault(s, "unflushed_losses")
        return [self.restart(s, b, s.log[b][:kept]) for kept in range(len(s.log[b]))]

    @action(b="broker_ids", switch="max_unclean_shutdowns")
    @on("broker {b}")
    def unclean_shutdown(self, s: State, b: int) -> State | None:
        """Fault: the broker crashes and restarts; its whole log had been flushed."""
        if s.local_epoch[b] is None or not self.fault_allowed(s, "unclean_shutdowns"):
            return None
        return self.restart(self.count_fault(s, "unclean_shutdowns"), b, s.log[b])

    @action(b="broker_ids", fair_each="weak", switch="max_controlled_shutdowns")
    @on("broker {b}")
    def clean_shutdown(self, s: State, b: int) -> State | None:
        """After its controlled shutdown, the broker flushes its log, writes its broker epoch
        to the clean-shutdown file (KIP-966), stops and restarts."""
        if b not in s.shutting_down or s.local_epoch[b] is None:
            return None
        s = s.replace(clean_shutdown_epoch=put(s.clean_shutdown_epoch, b, s.local_epoch[b]))
        return self.restart(s, b, s.log[b])

    # -- what the faults make happen (reachability properties: each holds somewhere) --------

    @reachable
    def follower_caught_up(self, s: State) -> bool:
        """A follower's HWM covers every committed record (replication makes progress)."""
        return any(b != s.leader and s.hwm[b] >= len(s.committed) for b in self.broker_ids)

    @reachable(switch=RESTARTS)
    def broker_registered_again(self, s: State) -> bool:
        """A broker restarted and registered again, with a new broker epoch."""
        return any(epoch > 1 for epoch in s.broker_epoch)

    @reachable(switch=FENCES)
    def leader_changed(self, s: State) -> bool:
        """The partition changed leaders (a fault moved leadership off broker 0)."""
        return s.leader_epoch > 1

    @reachable(switch="max_controlled_shutdowns")
    def broker_shutting_down(self, s: State) -> bool:
        """A broker is in controlled shutdown."""
        return bool(s.shutting_down)

    # -- search bounds ----------------------------------------------------------------------

    @constraint
    def partition_epoch_bounded(self, s: State) -> bool:
        """With -D max_partition_epoch=N, states past partition epoch N are checked but not
        expanded (TLC's CONSTRAINT): a quick look at fault combinations too big to explore."""
        return self.max_partition_epoch == 0 or s.partition_epoch <= self.max_partition_epoch

    # -- hooks the KIPs change --------------------------------------------------------------

    def leader_may_propose(self, s: State, f: int, replica: Record) -> bool:
        """hook: may the leader propose caught-up follower f for the ISR?"""
        return True

    def alter_partition_error(self, s: State, request: Record) -> str | None:
        """hook: the controller's validation of an AlterPartition request."""
        if request.leader_epoch != s.leader_epoch:
            return "FENCED_LEADER_EPOCH"
        if request.partition_epoch != s.partition_epoch:
            return "INVALID_UPDATE_VERSION"
        return None

    def electable(self, s: State, b: int) -> bool:
        """hook: may the controller elect b? (KRaft never elects a fenced broker.)"""
        return b not in s.fenced

    def hwm_may_advance(self, s: State) -> bool:
        """hook: may the leader advance the HWM now?"""
        return True

    def remove_from_isr(self, s: State, b: int) -> State:
        """hook: a fenced or shutting-down broker leaves the ISR, except the last member, which
        stays (now known by its current epoch) while the partition loses its leader."""
        if b not in s.isr:
            return s
        if len(s.isr) == 1:
            s = s.replace(isr=put(s.isr, b, s.broker_epoch[b]))
            return self.change_partition(s, leader=None) if s.leader == b else s
        isr, leader = without(s.isr, b), s.leader
        if leader == b:
            leader, isr = self.choose_leader(s, isr)
        return self.change_partition(s, leader=leader, isr=isr)

    def registered(self, s: State, b: int, previous_epoch: int | None, last_epoch: int) -> State:
        """hook: what else a registration changes; `previous_epoch` is the clean-shutdown
        file's content (PreviousBrokerEpoch), `last_epoch` the epoch the controller held."""
        return s

    def isr_changed(self, s: State, old_isr: Record) -> State:
        """hook: called by change_partition after the ISR changed."""
        return s

    def choose_leader(self, s: State, isr: Record) -> tuple[int | None, Record]:
        """hook: the leader to elect from `isr` (the first electable member, in Kafka's order)
        or None, and the ISR that goes with it."""
        return next((b for b in sorted(isr) if self.electable(s, b)), None), isr

    # -- helpers ----------------------------------------------------------------------------

    def fault_allowed(self, s: State, fault: str) -> bool:
        return s.faults[fault] < getattr(self, f"max_{fault}")

    def count_fault(self, s: State, fault: str) -> State:
        return s.replace(faults=put(s.faults, fault, s.faults[fault] + 1))

    def is_leader(self, s: State, b: int) -> bool:
        """b is the elected leader and runs under its current registration."""
        return s.leader == b and s.local_epoch[b] == s.broker_epoch[b]

    def may_fetch(self, s: State, f: int) -> bool:
        leader = s.leader
        return (
            leader is not None
            and f != leader
            and self.is_leader(s, leader)
            and s.local_epoch[f] is not None
            and not any(r.follower == f for r in s.fetch_responses)  # one Fetch at a time
        )

    def handle_fetch(self, s: State, f: int) -> tuple[State, Record]:
        """The leader's side of a Fetch: record f's offset and epoch, build the response."""
        leader_log = s.log[s.leader]
        offset = common_prefix(s.log[f], leader_log)
        replica = Record(fetch_offset=offset, broker_epoch=s.local_epoch[f])
        s = self.advance_high_watermark(s.replace(replica_state=put(s.replica_state, f, replica)))
        response = Record(
            follower=f,
            leader=s.leader,
            leader_epoch=s.leader_epoch,
            broker_epoch=s.local_epoch[f],
            offset=offset,
            records=leader_log[offset : offset + 1],
            hwm=s.hwm[s.leader],
        )
        return s, response

    def apply_fetch_response(self, s: State, response: Record) -> State:
        """The follower truncates to the fetch offset and appends the records."""
        f = response.follower
        log = s.log[f][: response.offset] + response.records
        return s.replace(log=put(s.log, f, log), hwm=put(s.hwm, f, min(response.hwm, len(log))))

    def propose_isr(self, s: State, proposed: Record) -> State:
        request = Record(
            leader=s.leader,
            leader_epoch=s.leader_epoch,
            partition_epoch=s.partition_epoch,
            isr=proposed,
        )
        return s.replace(
            pending_isr=proposed,
            alter_partition_requests=s.alter_partition_requests | {request},
        )

    def answer_alter_partition(self, s: State, request: Record) -> State:
        """Apply the request if valid; the response makes the leader forget its proposal
        (accepted: it is the ISR now; rejected: revert to the last committed ISR)."""
        if self.alter_partition_error(s, request) is None:
            s = self.change_partition(s, isr=request.isr, leader=s.leader)
        if s.leader_epoch == request.leader_epoch and s.pending_isr == request.isr:
            s = s.replace(pending_isr=None)
        return self.advance_high_watermark(s)

    def advance_high_watermark(self, s: State) -> State:
        """The HWM is the smallest log end among the leader and the maximal ISR (committed
        ISR plus pending additions), as the leader knows them from Fetch requests."""
        leader = s.leader
        if leader is None or not self.is_leader(s, leader) or not self.hwm_may_advance(s):
            return s
        members = set(s.isr) | set(s.pending_isr or ())
        ends = [
            len(s.log[m]) if m == leader else _fetch_offset(s.replica_state[m]) for m in members
        ]
        hwm = min(ends)
        if hwm <= s.hwm[leader]:
            return s
        committed = s.log[leader][:hwm]
        if len(committed) > len(s.committed):
            s = s.replace(committed=committed)
        return s.replace(hwm=put(s.hwm, leader, hwm))

    def restart(self, s: State, b: int, log: tuple[int, ...]) -> State:
        """b stops and starts again with `log`; in-memory state is gone, and it must register."""
        s = s.replace(
            local_epoch=put(s.local_epoch, b, None),
            log=put(s.log, b, log),
            hwm=put(s.hwm, b, min(s.hwm[b], len(log))),
            fetch_responses=frozenset(r for r in s.fetch_responses if r.follower != b),
        )
        if s.leader == b:
            s = s.replace(replica_state=(NO_REPLICA_STATE,) * self.brokers, pending_isr=None)
        return s

    def change_partition(self, s: State, *, leader: int | None, isr: Record | None = None) -> State:
        """A PartitionChangeRecord: a new partition epoch; a new leader also gets a new leader
        epoch and starts with no ReplicaState and no pending ISR change."""
        old_isr = s.isr
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
        s = s.replace(**changes)
        return self.isr_changed(s, old_isr) if isr is not None and isr != old_isr else s


def _fetch_offset(replica: Record | None) -> int:
    return 0 if replica is None else replica.fetch_offset
