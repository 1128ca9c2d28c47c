"""Kafka 3.5 replication of one partition under the KRaft controller, translated state for
state from Jack Vanlightly's TLA+ model, github.com/Vanlightly/kafka-tlaplus (MIT licence):
kafka_data_replication/kraft/v3.5/kafka_replication_v3_5.tla, with v3_5_functions.tla,
v3_5_types.tla, v3_5_properties.tla and network.tla beside it.

This is the base of the KIP family: specs/kip841.py switches on KIP-841's check that ISR
members are unfenced, specs/kip903.py KIP-903's check of their broker epochs (with both, this
is the v3.5 model), and specs/kip966.py puts KIP-966's Eligible Leader Replicas on top
(kafka_data_replication/kraft/kip-966/kafka_replication_kip_966.tla of the same repository).
Each KIP overrides the hooks marked "hook" below.

Every variable of the TLA+ model is a variable here, with the same name and the same values:
brokers are 1..broker_count, offsets start at 1 (LEO and HWM are exclusive), Nil is None and
NoLeader is the string "NoLeader". Messages (registration, AlterPartition, Fetch, and their
responses) travel through the set `messages`; a handled one moves to `messages_discard`. The
controller's partition state is appended to the metadata log `con_metadata_log` as a full
PartitionChangeRecord, which brokers replicate (`broker_metadata_log`) and act upon. Each action
is the TLA+ action of the same name (snake case): its guard first, then its changes, the
messages it sends and handles among them, applied in one `replace` per successor. The TLA+
operators that set primed variables are helpers of the same names that return their changes
as a dict of variables (an effect, as specs/network.py's), computed from the state before the
step (`s`: TLA+'s unprimed variables) and merged by the action, as in specs/kraft_quorum.py: no
two effects of one step set the same variable (in the TLA+ model, each variable is primed once
per step).

The view is the TLA+ model's `view`: the auxiliary variables (broker epoch source, fault
counters, floor leader offset) and the discarded messages do not identify a state. As in TLC,
of the states with one view the first one reached is kept.

Faults (each bounded by a limit constant, as in the model): fencing a running broker, a clean
shutdown or an unclean one that keeps the log (NoDataLossShutdown), an unclean shutdown that
loses the whole log (DataLossShutdown), the leader timing out ISR members (an ISR shrink) and
partition reassignment by an operator. The TLA+ v3.5 model calls the shutdowns CleanShutdown
and UncleanShutdown; the KIP-966 names are used throughout.
"""

from __future__ import annotations

from checker import (
    Record,
    Spec,
    State,
    action,
    always_eventually,
    always_eventually_leads_to,
    assume,
    constant,
    invariant,
    leads_to,
    on,
    put,
    terminal,
    without,
)
from invariants import kraft
from specs.network import Network, subsets

LEADER, FOLLOWER = "Leader", "Follower"
NO_LEADER = "NoLeader"
CONTROLLER = "Controller"
FENCED, UNFENCED = "FENCED", "UNFENCED"
STARTING, RUNNING, OFFLINE_CLEAN, OFFLINE_DIRTY = (
    "STARTING",
    "RUNNING",
    "OFFLINE_CLEAN",
    "OFFLINE_DIRTY",
)
OFFLINE = (OFFLINE_CLEAN, OFFLINE_DIRTY)
INT_MAX = 10000
BLANK_FETCH_STATE = Record(partition=None, pending_response=False)
BLANK_REPLICA_STATE = Record(leo=None, broker_epoch=0)
BLANK_METADATA = Record(
    replicas=frozenset(),
    isr=frozenset(),
    maximal_isr=frozenset(),
    leader=NO_LEADER,
    leader_epoch=0,
    partition_epoch=0,
)
NO_PENDING_AP = Record(epoch=0, request=None)
# The limits that make a broker restart and register again: the constants that switch on
# the actions which only follow a restart (@action(switch=...)).
RESTARTS = ("no_data_loss_shutdown_limit", "data_loss_shutdown_limit")


NET = Network("messages", "messages_discard")  # the TLA+ module `network`


class KRaftReplication(Spec):
    """Kafka 3.5 KRaft replication of one partition (without KIP-841 and KIP-903's checks)."""

    broker_count = constant(2, "BrokerCount: brokers (more than the RF allow reassignment)", min=1)
    init_replication_factor = constant(2, "InitReplicationFactor: initial replicas", min=1)
    values = constant(1, "Values: how many producer values (A, B, ...) may be written", min=0)
    min_isr = constant(1, "MinISR: min.insync.replicas", min=1)
    init_isr_size = constant(2, "InitIsrSize: initial ISR (the rest start out of sync)", min=1)
    no_data_loss_shutdown_limit = constant(0, "NoDataLossShutdownLimit: clean shutdowns", min=0)
    data_loss_shutdown_limit = constant(0, "DataLossShutdownLimit: log-losing crashes", min=0)
    fence_broker_limit = constant(1, "FenceBrokerLimit: running brokers fenced", min=0)
    leader_shrink_isr_limit = constant(0, "LeaderShrinkIsrLimit: ISR shrinks", min=0)
    reassignment_limit = constant(0, "ReassignmentLimit: partition reassignments", min=0)
    tla_view = constant(True, "identify states by the TLA+ model's VIEW (false: all variables)")
    view_keeps_counters = constant(
        False, "the view keeps aux_ctrs, the fault counters (see docs/tlc-comparison.md)"
    )
    avoid_last_replica_standing = constant(
        True, "AvoidLastReplicaStanding (v3.5): no data-loss crash of the last ISR member"
    )

    # Variables whose kind the initial state does not show.
    con_metadata_log: tuple[Record, ...]
    con_partition_metadata: Record  # leader: a broker or NoLeader
    partition_metadata: object
    broker_metadata_log: object
    broker_fetchers: object
    partition_status: object
    partition_leso: object
    partition_replica_state: object
    partition_pending_ap: object
    partition_data: object
    inv_consumed: tuple[Record, ...]

    fenced_ineligible = False  # hook: ISR members must be UNFENCED (KIP-841's rule)
    stale_epoch_ineligible = False  # hook: their broker epochs must be current (KIP-903's)

    @assume
    def replicas_fit(self) -> bool:
        """MinISR <= InitIsrSize <= InitReplicationFactor <= BrokerCount (the ASSUMEs)."""
        return (
            self.min_isr <= self.init_isr_size <= self.init_replication_factor <= self.broker_count
        )

    @property
    def brokers(self) -> range:
        return range(1, self.broker_count + 1)

    @property
    def value_set(self) -> tuple[str, ...]:
        return tuple(chr(ord("A") + i) for i in range(self.values))

    def view(self, s: State) -> Record:
        """TLA+'s `view`: all but the auxiliary variables and the discarded messages. With
        `tla_view=false`, all variables (as TLC checks temporal properties, without VIEW: the
        view drops the fault counters, so merged states would close cycles of faults; `mc
        check` drops any view itself while it checks temporal properties). With
        `view_keeps_counters`, the view keeps the counters: two states that differ in which
        faults remain are then two states (with two kinds of fault, the model's VIEW merges
        them and keeps whichever the search reached first)."""
        if not self.tla_view:
            return s
        if self.view_keeps_counters:
            return without(s, "aux_broker_epoch", "aux_flo", "messages_discard")
        return without(s, "aux_broker_epoch", "aux_ctrs", "aux_flo", "messages_discard")

    # ==================================================================================
    # Init
    # ==================================================================================

    def partition_change_record(self, **fields) -> Record:
        """hook: a PartitionChangeRecord / controller partition state (KIP-966 adds the ELR)."""
        return Record(fields)

    def init(self) -> State:
        brokers = self.brokers
        replicas = frozenset(range(1, self.init_replication_factor + 1))
        isr = frozenset(range(1, self.init_isr_size + 1))
        part_epoch = 1 if self.init_isr_size == self.init_replication_factor else 2
        record = self.partition_change_record(
            type="PartitionChangeRecord",
            replicas=replicas,
            isr=isr,
            leader=1,
            leader_epoch=1,
            partition_epoch=part_epoch,
        )
        unfenced = frozenset(brokers) - (replicas - isr)
        con_md = self.partition_change_record(
            replicas=replicas,
            isr=isr,
            leader=1,
            leader_epoch=1,
            partition_epoch=part_epoch,
            adding=frozenset(),
            removing=frozenset(),
        )

        def fetchers(b):
            return Record(
                {
                    b1: Record(
                        partition=Record(fetch_offset=1, last_fetched_epoch=0, delayed=False),
                        pending_response=False,
                    )
                    if b != 1 and b1 == 1
                    else BLANK_FETCH_STATE
                    for b1 in brokers
                }
            )

        def metadata(b):
            if b not in replicas:
                return BLANK_METADATA
            if b in isr:
                return Record(
                    replicas=replicas,
                    isr=isr,
                    maximal_isr=isr,
                    leader=1,
                    leader_epoch=1,
                    partition_epoch=part_epoch,
                )
            return Record(
                replicas=replicas,
                isr=replicas,
                maximal_isr=replicas,
                leader=1,
                leader_epoch=1,
                partition_epoch=1,
            )

        return Record(
            con_unfenced=unfenced,
            con_broker_reg=Record(
                {
                    b: Record(
                        status=UNFENCED if b in unfenced else FENCED,
                        broker_epoch=b,
                        incarnation_id=b,
                    )
                    for b in brokers
                }
            ),
            con_metadata_log=(record,),
            con_partition_metadata=con_md,
            broker_state=Record(
                {
                    b: Record(status=RUNNING, broker_epoch=b, incarnation_id=b, registered=True)
                    for b in brokers
                }
            ),
            broker_fetchers=Record({b: fetchers(b) for b in brokers}),
            broker_metadata_log=Record({b: (record,) if b in unfenced else () for b in brokers}),
            partition_status=Record(
                {b: LEADER if b == 1 else FOLLOWER if b in replicas else None for b in brokers}
            ),
            partition_metadata=Record({b: metadata(b) for b in brokers}),
            partition_data=Record({b: Record(log=(), hwm=1, leo=1) for b in brokers}),
            partition_leso=Record({b: 1 if b == 1 else None for b in brokers}),
            partition_replica_state=Record(
                {b: Record({b1: BLANK_REPLICA_STATE for b1 in brokers}) for b in brokers}
            ),
            partition_pending_ap=Record({b: NO_PENDING_AP for b in brokers}),
            aux_broker_epoch=self.broker_count,
            aux_ctrs=Record(
                incarn_ctr=self.broker_count + 1,
                no_data_loss_shutdown_ctr=0,
                data_loss_shutdown_ctr=0,
                fence_broker_ctr=0,
                leader_shrink_isr_ctr=0,
                reassignment_ctr=0,
            ),
            aux_flo=Record({b: INT_MAX for b in brokers}),
            inv_sent=frozenset(),
            inv_pos_acked=frozenset(),
            inv_neg_acked=frozenset(),
            inv_true_hwm=1,
            inv_consumed=(),
            messages=frozenset(),
            messages_discard=frozenset(),
        )

    # ==================================================================================
    # Actions (TLA+'s Next: for each broker, in this order; then the reassignment)
    # ==================================================================================

    @action(b="brokers", fair_each="weak", switch=RESTARTS)
    @on("broker {b}", sends="controller", message="RegisterBroker")
    def broker_start(self, s: State, b: int) -> State | None:
        """BrokerStart: a stopped broker starts and sends a registration request with a new
        incarnation id."""
        if s.broker_state[b].status not in OFFLINE:
            return None
        incarnation = s.aux_ctrs.incarn_ctr
        starting = Record(
            status=STARTING,
            broker_epoch=self.epoch_on_start(s, b),
            incarnation_id=incarnation,
            registered=False,
        )
        return s.replace(
            broker_state=put(s.broker_state, b, starting),
            partition_status=put(s.partition_status, b, None),
            aux_ctrs=s.aux_ctrs.replace(incarn_ctr=incarnation + 1),
            **NET.send(s, self.registration_request(s, b, incarnation)),
        )

    @action(b="brokers", fair_each="weak", switch=RESTARTS)
    @on("broker {b}", receives="controller", message="RegisterBrokerResponse")
    def receive_broker_reg_response(self, s: State, b: int) -> list[State]:
        """ReceiveBrokerRegResponse: the broker runs with its new broker epoch, caught up with
        the metadata log of its registration bar one record (the record ReceiveMetadataUpdate
        then applies)."""
        bs = s.broker_state[b]
        if bs.status != STARTING or bs.registered:
            return []
        out = []
        for m in NET.of(s, "RegisterBrokerResponse", dest=b):
            if bs.incarnation_id != m.incarnation_id:
                continue
            log = s.con_metadata_log[: m.metadata_offset - 1] if m.metadata_offset > 1 else ()
            running = Record(
                status=RUNNING,
                broker_epoch=m.broker_epoch,
                incarnation_id=bs.incarnation_id,
                registered=True,
            )
            out.append(
                s.replace(
                    broker_state=put(s.broker_state, b, running),
                    broker_metadata_log=put(s.broker_metadata_log, b, log),
                    partition_metadata=put(s.partition_metadata, b, BLANK_METADATA),
                    **NET.discard(s, m),
                )
            )
        return out

    @action(b="brokers", fair_each="weak")
    @on("broker {b}")
    def receive_metadata_update(self, s: State, b: int) -> list[State]:
        """ReceiveMetadataUpdate: the broker replicates the metadata log up to a record that
        concerns its replica, and acts on it: remains or becomes leader, remains or becomes
        follower, waits for a leader, or deletes the partition."""
        bs = s.broker_state[b]
        if bs.status in OFFLINE or not bs.registered:
            return []
        out = []
        start = len(s.broker_metadata_log[b])
        for md_offset in range(start + 1, len(s.con_metadata_log) + 1):
            if not self.partition_needs_action(s, b, md_offset):
                continue
            changes = self.apply_metadata_record(s, b, md_offset)
            if changes is not None:
                out.append(s.replace(**changes))
        return out

    @action(b="brokers", fair_each="weak")
    @on("broker {b}", sends="controller", message="AlterPartition")
    def send_alter_partition_request(self, s: State, b: int) -> list[State]:
        """SendAlterPartitionRequest: the leader proposes the replicas it deems caught up as
        the new ISR (some ISR members may time out, up to the shrink limit) and applies the
        maximal ISR (proposed and current) at once."""
        if (
            s.broker_state[b].status != RUNNING
            or self.pending_alter_partition_response(s, b)
            or s.partition_status[b] != LEADER
        ):
            return []
        if s.aux_ctrs.leader_shrink_isr_ctr < self.leader_shrink_isr_limit:
            choices = [t for t in subsets(s.partition_metadata[b].isr) if b not in t]
        else:
            choices = [frozenset()]
        out = []
        for timed_out in choices:
            t = self.do_send_alter_partition_request(s, b, timed_out)
            if t is not None:
                out.append(t)
        return out

    @action(b="brokers", fair_each="weak")
    @on("broker {b}", receives="controller", message="AlterPartitionResponse")
    def receive_alter_partition_response(self, s: State, b: int) -> list[State]:
        """ReceiveAlterPartitionResponse: the leader commits the partition change the
        controller accepted, or rolls back its maximal ISR on an error."""
        if (
            s.broker_state[b].status != RUNNING
            or s.partition_status[b] != LEADER
            or not self.pending_alter_partition_response(s, b)
        ):
            return []
        out = []
        md = s.partition_metadata[b]
        for m in NET.of(s, "AlterPartitionResponse", dest=b):
            if s.partition_pending_ap[b].request != m.request:
                continue
            if m.error is None:
                if m.partition_epoch <= md.partition_epoch or m.leader_epoch != md.leader_epoch:
                    continue
                part_state = Record(
                    replicas=m.replicas,
                    isr=m.isr,
                    maximal_isr=m.isr,
                    leader=m.leader,
                    leader_epoch=m.leader_epoch,
                    partition_epoch=m.partition_epoch,
                )
            else:
                part_state = md.replace(maximal_isr=md.isr)
            out.append(
                s.replace(
                    partition_metadata=put(s.partition_metadata, b, part_state),
                    partition_pending_ap=put(s.partition_pending_ap, b, NO_PENDING_AP),
                    **NET.discard(s, m),
                    **self.maybe_update_hwm_and_ack_on_partition_change(s, b, part_state),
                )
            )
        return out

    @action(b="brokers", fair_each="weak")
    @on("broker {b}", sends="leader", message="Fetch")
    def send_fetch_request(self, s: State, b: int) -> list[State]:
        """SendFetchRequest: a follower's fetcher sends a Fetch to the leader it knows of,
        with its fetch offset and last fetched epoch (until the two have converged)."""
        if s.broker_state[b].status != RUNNING:
            return []
        out = []
        for to in self.brokers:
            fetcher = s.broker_fetchers[b][to]
            if (
                to == b
                or fetcher.partition is None
                or fetcher.pending_response
                or s.partition_metadata[b].leader != to
                or self.converged(s, to, b)
            ):
                continue
            request = Record(
                type="FetchRequest",
                broker_epoch=s.broker_state[b].broker_epoch,
                partition=Record(
                    leader_epoch=s.partition_metadata[b].leader_epoch,
                    fetch_offset=fetcher.partition.fetch_offset,
                    last_fetched_epoch=fetcher.partition.last_fetched_epoch,
                ),
                dest=to,
                source=b,
            )
            fetcher = fetcher.replace(
                pending_response=True, partition=fetcher.partition.replace(delayed=False)
            )
            fetchers = put2(s.broker_fetchers, b, to, fetcher)
            out.append(s.replace(broker_fetchers=fetchers, **NET.send(s, request)))
        return out

    @action(b="brokers", fair_each="weak")
    @on("broker {b}", receives="follower", message="FetchResponse")
    def receive_fetch_request(self, s: State, b: int) -> list[State]:
        """ReceiveFetchRequest: the leader answers a Fetch with an error (not the leader, or
        another leader epoch), a diverging epoch, or the next record; it records the follower's
        fetch offset and broker epoch and may advance the HWM."""
        if s.broker_state[b].status != RUNNING:
            return []
        return [self.answer_fetch(s, b, m) for m in NET.of(s, "FetchRequest", dest=b)]

    @action(b="brokers", fair_each="weak")
    @on("broker {b}", receives="leader", message="FetchResponse")
    def receive_fetch_response(self, s: State, b: int) -> list[State]:
        """ReceiveFetchResponse: the follower ignores a response for another fetch, delays on
        an error, truncates on a diverging epoch, or appends the record and takes the HWM."""
        if s.broker_state[b].status != RUNNING:
            return []
        out = []
        for m in NET.of(s, "FetchResponse", dest=b):
            if s.broker_fetchers[b][m.source].pending_response:
                out.append(s.replace(**self.handle_fetch_response(s, b, m), **NET.discard(s, m)))
        return out

    @action(b="brokers")
    @on("broker {b}")
    def write_record_to_leader(self, s: State, b: int) -> list[State]:
        """WriteRecordToLeader: a producer writes a new value to the leader, whose maximal ISR
        is at least MinISR; the HWM may advance at once."""
        md = s.partition_metadata[b]
        if (
            s.broker_state[b].status != RUNNING
            or s.partition_status[b] != LEADER
            or len(md.maximal_isr) < self.min_isr
        ):
            return []
        out = []
        for v in self.value_set:
            if v in s.inv_sent:
                continue
            data = s.partition_data[b]
            new_leo = data.leo + 1
            new_record = Record(epoch=md.leader_epoch, offset=data.leo, value=v)
            old_hwm = data.hwm
            max_committed = self.get_commit_offset(
                s, b, md.maximal_isr, new_leo, s.partition_replica_state[b]
            )
            new_hwm = (
                max_committed + 1
                if self.can_advance_hwm(b, md.isr, old_hwm, max_committed + 1)
                else old_hwm
            )
            written = Record(log=data.log + (new_record,), hwm=max(new_hwm, old_hwm), leo=new_leo)
            acks = (
                self.update_hwm_invariant_vars(s, b, old_hwm, new_hwm, True)
                if new_hwm > old_hwm
                else {}
            )
            out.append(
                s.replace(
                    partition_data=put(s.partition_data, b, written),
                    inv_sent=s.inv_sent | {v},
                    aux_flo=put(s.aux_flo, b, data.leo) if s.aux_flo[b] == INT_MAX else s.aux_flo,
                    **acks,
                )
            )
        return out

    @action(b="brokers", switch="data_loss_shutdown_limit")
    @on("broker {b}")
    def data_loss_shutdown(self, s: State, b: int) -> list[State]:
        """DataLossShutdown (v3.5: UncleanShutdown): the broker crashes and loses its whole
        log; the controller detects it and fences it."""
        if s.aux_ctrs.data_loss_shutdown_ctr >= self.data_loss_shutdown_limit:
            return []
        if s.broker_state[b].status in OFFLINE or not self.may_lose_data(s, b):
            return []
        crashed = {
            "broker_state": put(
                s.broker_state,
                b,
                Record(status=OFFLINE_DIRTY, broker_epoch=0, incarnation_id=0, registered=False),
            ),
            "partition_status": put(s.partition_status, b, None),
            "partition_data": put(s.partition_data, b, Record(log=(), hwm=1, leo=1)),
            "partition_leso": put(s.partition_leso, b, None),
            "aux_ctrs": s.aux_ctrs.replace(
                data_loss_shutdown_ctr=s.aux_ctrs.data_loss_shutdown_ctr + 1
            ),
        }
        return [s.replace(**crashed, **changes) for changes in self.shut_down(s, b)]

    @action(b="brokers", clean=(True, False), switch="no_data_loss_shutdown_limit")
    @on("broker {b}")
    def no_data_loss_shutdown(self, s: State, b: int, clean: bool) -> list[State]:
        """NoDataLossShutdown (v3.5: CleanShutdown): the broker shuts down cleanly, or crashes
        keeping its log; the controller detects it and fences it."""
        if s.aux_ctrs.no_data_loss_shutdown_ctr >= self.no_data_loss_shutdown_limit:
            return []
        if s.broker_state[b].status in OFFLINE:
            return []
        stopped = {
            "broker_state": put(
                s.broker_state,
                b,
                Record(
                    status=OFFLINE_CLEAN,
                    broker_epoch=self.epoch_on_shutdown(s, b, clean),
                    incarnation_id=0,
                    registered=False,
                ),
            ),
            "partition_status": put(s.partition_status, b, None),
            "aux_ctrs": s.aux_ctrs.replace(
                no_data_loss_shutdown_ctr=s.aux_ctrs.no_data_loss_shutdown_ctr + 1
            ),
        }
        return [s.replace(**stopped, **changes) for changes in self.shut_down(s, b)]

    @action(b="brokers", fair_each="weak", switch=RESTARTS)
    @on("controller", receives="broker {b}", message="RegisterBroker")
    def receive_broker_reg_request(self, s: State, b: int) -> list[State]:
        """ReceiveBrokerRegRequest: the controller accepts a registration from a fenced broker
        (or the same incarnation), assigns a new broker epoch and unfences it."""
        out = []
        reg = s.con_broker_reg[b]
        for m in NET.of(s, "RegisterBrokerRequest", source=b):
            if reg.status != FENCED and reg.incarnation_id != m.incarnation_id:
                continue
            broker_epoch = s.aux_broker_epoch + 1
            response = Record(
                type="RegisterBrokerResponse",
                broker_epoch=broker_epoch,
                incarnation_id=m.incarnation_id,
                metadata_offset=len(s.con_metadata_log),
                dest=b,
                source=CONTROLLER,
            )
            registered = Record(
                status=UNFENCED, broker_epoch=broker_epoch, incarnation_id=m.incarnation_id
            )
            reply = NET.reply(s, m, response)
            out += [
                s.replace(
                    con_broker_reg=put(s.con_broker_reg, b, registered),
                    aux_broker_epoch=broker_epoch,
                    **reply,
                    **changes,
                )
                for changes in self.on_registration(s, b, m)
            ]
        return out

    @action(b="brokers", fair_each="weak")
    @on("controller", receives="broker {b}", message="AlterPartition")
    def receive_alter_partition_request(self, s: State, b: int) -> list[State]:
        """ReceiveAlterPartitionRequest: the controller validates the request (leader, broker
        epoch, partition epoch, eligible ISR), applies the new ISR (perhaps completing a
        reassignment) and answers with the new partition state, or with an error."""
        out = []
        for m in NET.of(s, "AlterPartitionRequest", source=b):
            out.extend(self.handle_alter_partition(s, b, m))
        return out

    @action(b="brokers", switch="fence_broker_limit")
    @on("controller")
    def fence_broker(self, s: State, b: int) -> list[State]:
        """FenceBroker: the controller fences an unfenced broker (missed heartbeats)."""
        if s.aux_ctrs.fence_broker_ctr >= self.fence_broker_limit:
            return []
        if s.con_broker_reg[b].status != UNFENCED:
            return []
        return [
            s.replace(
                con_broker_reg=put(s.con_broker_reg, b, s.con_broker_reg[b].replace(status=FENCED)),
                aux_ctrs=s.aux_ctrs.replace(fence_broker_ctr=s.aux_ctrs.fence_broker_ctr + 1),
                **changes,
            )
            for changes in self.handle_broker_fenced(s, b)
        ]

    @action(b="brokers", fair_each="weak", switch="fence_broker_limit")
    @on("controller")
    def unfence_broker(self, s: State, b: int) -> list[State]:
        """UnfenceBroker: the controller unfences a fenced, running broker (a heartbeat)."""
        if s.con_broker_reg[b].status != FENCED or s.broker_state[b].status != RUNNING:
            return []
        unfenced = put(s.con_broker_reg, b, s.con_broker_reg[b].replace(status=UNFENCED))
        return [
            s.replace(con_broker_reg=unfenced, **changes)
            for changes in self.handle_broker_unfenced(s, b)
        ]

    @action(switch="reassignment_limit")
    @on("controller")
    def perform_partition_reassignment(self, s: State) -> list[State]:
        """PerformPartitionReassignment: an operator adds and removes replicas; the controller
        completes it at once if it can, else when the adding replicas join the ISR."""
        if s.aux_ctrs.reassignment_ctr >= self.reassignment_limit or reassignment_in_progress(s):
            return []
        md = s.con_partition_metadata
        out = []
        all_subsets = subsets(self.brokers)
        for adding in all_subsets:
            for removing in all_subsets:
                if not self.valid_reassignment(s, adding, removing):
                    continue
                grow = md.replicas | adding
                final_replicas = grow - removing
                final_isr = md.isr - removing
                complete = adding <= final_isr and len(final_isr) >= self.min_isr and final_replicas
                if complete:
                    new = self.completed_reassignment(s, final_isr, final_replicas)
                else:
                    new = self.pending_reassignment(
                        md, grow, md.isr, md.get("elr"), adding, removing
                    )
                counted = s.aux_ctrs.replace(reassignment_ctr=s.aux_ctrs.reassignment_ctr + 1)
                out += [
                    s.replace(
                        aux_ctrs=counted, **self.apply_partition_change(s, leader=leader, **new)
                    )
                    for leader in self.new_leaders(md, new["isr"])
                ]
        return out

    # ==================================================================================
    # Safety properties (the TLA+ model's invariants; predicates in invariants/kraft.py)
    # ==================================================================================

    leader_completeness = invariant(kraft.leader_completeness)
    leader_candidate_completeness = invariant(kraft.leader_candidate_completeness)

    @invariant
    def replication_quorum_superset(self, s: State) -> bool:
        """ReplicationQuorumSupersetProperty: a non-stale leader's maximal ISR covers the
        controller's leader candidates (KIP-966: while its ISR is at least MinISR)."""
        return kraft.replication_quorum_superset(s, self.superset_min_isr())

    @invariant
    def log_matching(self, s: State) -> bool:
        """LogMatchingProperty: below both replicas' HWMs, their logs hold the same values."""
        return kraft.log_matching(s, self.values)

    metadata_log_matching = invariant(kraft.metadata_log_matching)
    consistent_read = invariant(kraft.consistent_read)
    no_committed_record_lost_globally = invariant(kraft.no_committed_record_lost_globally)

    @terminal
    def settled(self, s: State) -> bool:
        """Where the model stops (TLC runs it with -deadlock): no broker is starting and no
        leader waits for an AlterPartition response; the followers have converged with the
        leader (SendFetchRequest waits for a difference). Stale messages may stay in flight
        (a Fetch or AlterPartition response nobody waits for): the model keeps them."""
        return not any(
            s.broker_state[b].status == STARTING or self.pending_alter_partition_response(s, b)
            for b in self.brokers
        )

    # ==================================================================================
    # Liveness (the TLA+ model's, under its fairness: weak fairness of each broker's
    # protocol steps, `fair_each="weak"` above; faults are not fair). TLA+'s \A b: P(b) ~>
    # Q(b) is a leads_to with the domain b="brokers", one property per broker.
    # ==================================================================================

    @always_eventually
    def eventually_metadata_converges(self, s: State) -> bool:
        """EventuallyMetadataConverges: again and again, each replica's partition metadata is
        the controller's, or it is a follower with no record to act on, or it was removed."""
        md = s.con_partition_metadata
        for b in self.brokers:
            mine = s.partition_metadata[b]
            if (mine.isr, mine.leader, mine.leader_epoch, mine.partition_epoch) == (
                md.isr,
                md.leader,
                md.leader_epoch,
                md.partition_epoch,
            ):
                continue
            if s.partition_status[b] == FOLLOWER and not any(
                self.partition_needs_action(s, b, o)
                for o in range(len(s.broker_metadata_log[b]) + 1, len(s.con_metadata_log) + 1)
            ):
                continue
            if s.partition_status[b] is None and b not in md.replicas:
                continue
            return False
        return True

    def starting(self, s: State, b: int) -> bool:
        return _status(s, b) == STARTING

    def running_unfenced(self, s: State, b: int) -> bool:
        return _status(s, b) == RUNNING and s.con_broker_reg[b].status == UNFENCED

    eventually_runs = leads_to(
        starting,
        running_unfenced,
        "EventuallyRuns: a starting broker comes to run, unfenced.",
        b="brokers",
    )

    def fenced(self, s: State, b: int) -> bool:
        return s.con_broker_reg[b].status == FENCED

    def unfenced(self, s: State, b: int) -> bool:
        return s.con_broker_reg[b].status == UNFENCED

    eventually_unfenced = leads_to(
        fenced, unfenced, "EventuallyUnfenced: a fenced broker is unfenced again.", b="brokers"
    )

    def awaiting_alter_partition(self, s: State, b: int) -> bool:
        return s.partition_pending_ap[b].epoch > 0

    def alter_partition_epoch_reached_or_zero(self, s: State, b: int) -> bool:
        epoch = s.partition_pending_ap[b].epoch
        return epoch in (0, s.partition_metadata[b].partition_epoch)

    alter_partition_epoch_eventually_reached_or_zero = always_eventually_leads_to(
        awaiting_alter_partition,
        alter_partition_epoch_reached_or_zero,
        "AlterPartitionEpochEventuallyReachedOrZero: a replica's AlterPartition comes to the"
        " partition epoch it expects, or is given up.",
        b="brokers",
    )

    def written(self, s: State, v: str) -> bool:
        return v in s.inv_sent

    def acknowledged(self, s: State, v: str) -> bool:
        return v in s.inv_pos_acked or v in s.inv_neg_acked

    eventually_write_is_accepted_or_rejected = leads_to(
        written,
        acknowledged,
        "EventuallyWriteIsAcceptedOrRejected: a written value is acknowledged, one way or"
        " the other.",
        v="value_set",
    )

    def positively_acknowledged(self, s: State, v: str) -> bool:
        return v in s.inv_pos_acked

    def on_every_replica(self, s: State, v: str) -> bool:
        return all(
            any(e.value == v for e in s.partition_data[b].log)
            for b in s.con_partition_metadata.replicas
        )

    eventually_acknowledged_value_fully_replicated = leads_to(
        positively_acknowledged,
        on_every_replica,
        "EventuallyAcknowledgedValueFullyReplicated: an acknowledged value reaches every replica.",
        v="value_set",
    )

    # TLA+ reads the model's `\/ adding # {} \/ removing # {} ~> done` as `adding # {} \/
    # (removing # {} ~> done)`, a formula of the initial state, where adding is empty: what
    # TLC checks is removing # {} ~> done, translated so.
    def removing_replicas(self, s: State) -> bool:
        return bool(s.con_partition_metadata.removing)

    def reassignment_done(self, s: State) -> bool:
        md = s.con_partition_metadata
        return not md.adding and not md.removing

    eventually_reassignment_completes = leads_to(
        removing_replicas,
        reassignment_done,
        "EventuallyReassignmentCompletes: a reassignment that removes replicas completes.",
    )

    # ==================================================================================
    # Hooks the KIPs change
    # ==================================================================================

    def superset_min_isr(self) -> int:
        """hook: from which leader ISR size the maximal ISR must cover the candidates."""
        return 0

    def epoch_on_start(self, s: State, b: int) -> int:
        """hook: the broker epoch a starting broker holds (v3.5: none, 0)."""
        return 0

    def epoch_on_shutdown(self, s: State, b: int, clean: bool) -> int:
        """hook: the broker epoch a shut-down broker keeps (v3.5: none, 0)."""
        return 0

    def registration_request(self, s: State, b: int, incarnation: int) -> Record:
        """hook: the RegisterBrokerRequest (KIP-966 adds the broker epoch from file)."""
        return Record(
            type="RegisterBrokerRequest",
            broker_id=b,
            incarnation_id=incarnation,
            dest=CONTROLLER,
            source=b,
        )

    def on_registration(self, s: State, b: int, m: Record) -> list[dict]:
        """hook: what the controller does to the partition when b registers: the changes of
        each successor."""
        return self.handle_broker_unfenced(s, b)

    def may_lose_data(self, s: State, b: int) -> bool:
        """hook: AvoidLastReplicaStanding keeps the last ISR member from losing its log."""
        isr = s.con_partition_metadata.isr
        return not (self.avoid_last_replica_standing and b in isr and len(isr) == 1)

    def safe_to_advance_hwm(self, b: int, isr: frozenset) -> bool:
        """hook: may the HWM advance with this ISR (v3.5: always)."""
        return True

    def can_advance_hwm(self, b: int, isr: frozenset, old_hwm: int, new_hwm: int) -> bool:
        return new_hwm > old_hwm and self.safe_to_advance_hwm(b, isr)

    def remove_broker_from_isr(self, isr: frozenset, b: int) -> frozenset:
        """hook: MaybeRemoveBrokerFromISR (v3.5: the ISR cannot drop below one member)."""
        return isr if len(isr) == 1 else isr - {b}

    def update_elr_on_isr_or_replica_change(self, s: State, isr, replicas):
        """hook: the ELR after an ISR or replica change (none before KIP-966)."""
        return None

    def is_eligible_broker(self, s: State, b: int, broker_epoch: int) -> bool:
        """hook: IsEligibleBroker: may b be in the ISR the leader proposes."""
        reg = s.con_broker_reg[b]
        if self.fenced_ineligible and reg.status != UNFENCED:
            return False
        stale = broker_epoch != 0 and reg.broker_epoch != broker_epoch
        return not (self.stale_epoch_ineligible and stale)

    def maybe_update_partition_on_broker_change(
        self, s: State, new_isr: frozenset, new_elr, new_unfenced: frozenset
    ) -> list[dict]:
        """hook: MaybeUpdatePartitionOnBrokerChange: elect a new leader if needed (from the
        unfenced ISR members), or record the ISR change; the changes of each successor."""
        md = s.con_partition_metadata
        no_leader_change = (md.leader == NO_LEADER and not (new_isr & new_unfenced)) or (
            md.leader in new_isr and md.leader in new_unfenced
        )
        if no_leader_change and new_isr == md.isr:
            return [{}]
        if no_leader_change:
            return [self.change(s, md.leader, new_isr, new_elr, md.leader_epoch)]
        candidates = sorted(new_isr & new_unfenced)
        if candidates:
            return [self.change(s, c, new_isr, new_elr, md.leader_epoch + 1) for c in candidates]
        return [self.change(s, NO_LEADER, new_isr, new_elr, md.leader_epoch + 1)]

    def apply_partition_change(self, s: State, **md) -> dict:
        """ApplyPartitionChange: the controller's new partition state, appended to the
        metadata log. hook: KIP-966 also keeps the ELR and LastKnownELR."""
        md.pop("elr", None)
        return {
            "con_partition_metadata": self.partition_change_record(**md),
            "con_metadata_log": s.con_metadata_log
            + (self.partition_change_record(type="PartitionChangeRecord", **md),),
        }

    # ==================================================================================
    # Helpers (the TLA+ operators of the same names)
    # ==================================================================================

    def change(self, s, leader, isr, elr, leader_epoch) -> dict:
        md = s.con_partition_metadata
        return self.apply_partition_change(
            s,
            replicas=md.replicas,
            leader=leader,
            isr=isr,
            elr=elr,
            leader_epoch=leader_epoch,
            partition_epoch=md.partition_epoch + 1,
            adding=md.adding,
            removing=md.removing,
        )

    def handle_broker_fenced(self, s: State, b: int) -> list[dict]:
        """HandleBrokerFenced: the changes of each successor."""
        md = s.con_partition_metadata
        new_isr = self.remove_broker_from_isr(md.isr, b)
        new_elr = self.update_elr_on_isr_or_replica_change(s, new_isr, md.replicas)
        new_unfenced = s.con_unfenced - {b}
        return [
            {"con_unfenced": new_unfenced, **changes}
            for changes in self.maybe_update_partition_on_broker_change(
                s, new_isr, new_elr, new_unfenced
            )
        ]

    def handle_broker_unfenced(self, s: State, b: int) -> list[dict]:
        """HandleBrokerUnfenced: with no leader, the controller may elect one."""
        md = s.con_partition_metadata
        new_unfenced = s.con_unfenced | {b}
        if md.leader != NO_LEADER:
            return [{"con_unfenced": new_unfenced}]
        return [
            {"con_unfenced": new_unfenced, **changes}
            for changes in self.maybe_update_partition_on_broker_change(
                s, md.isr, md.get("elr"), new_unfenced
            )
        ]

    def shut_down(self, s: State, b: int) -> list[dict]:
        """What both shutdowns share: fetch sessions dropped, the replica's leader state
        reset, pending writes failed, and the controller fences the broker."""
        failed = (
            self.fail_pending_writes(s, b)
            if s.partition_status[b] == LEADER and s.partition_data[b].hwm < s.partition_data[b].leo
            else {}
        )
        shut = {
            **drop_fetch_sessions(self, s, b),
            "partition_replica_state": put(
                s.partition_replica_state,
                b,
                Record({b1: BLANK_REPLICA_STATE for b1 in self.brokers}),
            ),
            "partition_pending_ap": put(s.partition_pending_ap, b, NO_PENDING_AP),
            **failed,
            "con_broker_reg": put(s.con_broker_reg, b, s.con_broker_reg[b].replace(status=FENCED)),
            "aux_flo": put(s.aux_flo, b, INT_MAX),
        }
        return [{**shut, **changes} for changes in self.handle_broker_fenced(s, b)]

    def pending_alter_partition_response(self, s: State, b: int) -> bool:
        return s.partition_pending_ap[b].epoch > s.partition_metadata[b].partition_epoch

    def converged(self, s: State, leader: int, follower: int) -> bool:
        dl, df = s.partition_data[leader], s.partition_data[follower]
        rs = s.partition_replica_state[leader][follower]
        return (
            dl.leo == df.leo
            and dl.hwm == df.hwm
            and rs.leo == df.leo
            and rs.broker_epoch == s.broker_state[follower].broker_epoch
        )

    def partition_needs_action(self, s: State, b: int, md_offset: int) -> bool:
        if s.partition_status[b] == LEADER:
            return True
        md = s.partition_metadata[b]
        record = s.con_metadata_log[md_offset - 1]
        if b in md.replicas:
            return record.leader_epoch > md.leader_epoch
        return b in record.replicas

    # -- commit offset and high watermark ----------------------------------------------

    def get_commit_offset(self, s, b, maximal_isr, leo, replica_state) -> int:
        """GetCommitOffset: the highest offset replicated to the whole maximal ISR."""
        if s.partition_data[b].leo == 1:
            return 0
        for offset in range(leo - 1, 0, -1):
            if all(
                b1 == b or (replica_state[b1].leo is not None and replica_state[b1].leo > offset)
                for b1 in maximal_isr
            ):
                return offset
        return 0

    def send_acks_for(self, s, b, lower, higher, positive) -> dict:
        """SendAcksFor: acknowledge the values this leader wrote at offsets lower..higher."""
        log, flo = s.partition_data[b].log, s.aux_flo[b]
        acked = s.inv_pos_acked | s.inv_neg_acked
        values = frozenset(
            v
            for v in s.inv_sent
            if v not in acked
            and any(log[o - 1].value == v and o >= flo for o in range(lower, higher + 1))
        )
        if positive:
            return {"inv_pos_acked": s.inv_pos_acked | values, "inv_neg_acked": s.inv_neg_acked}
        return {"inv_neg_acked": s.inv_neg_acked | values, "inv_pos_acked": s.inv_pos_acked}

    def update_hwm_invariant_vars(self, s, b, old_hwm, new_hwm, positive) -> dict:
        if positive:
            acks = self.send_acks_for(s, b, old_hwm, new_hwm - 1, True)
        else:
            acks = self.send_acks_for(s, b, old_hwm, s.partition_data[b].leo - 1, False)
        if new_hwm > s.inv_true_hwm:
            log = s.partition_data[b].log
            if new_hwm - 1 > len(log):
                # As TLC: SubSeq(LogOf(b), ...) past the (pre-write) log is an error of the
                # model, reached when a write commits at once (values >= 2, |ISR| = 1).
                raise ValueError("SubSeq past the end of the log (as TLC reports)")
            consumed = s.inv_consumed + log[s.inv_true_hwm - 1 : new_hwm - 1]
            return {**acks, "inv_true_hwm": new_hwm, "inv_consumed": consumed}
        return {**acks, "inv_true_hwm": s.inv_true_hwm, "inv_consumed": s.inv_consumed}

    def maybe_advance_high_watermark(self, s, b, isr, old_hwm, new_hwm, positive) -> dict:
        if not self.can_advance_hwm(b, isr, old_hwm, new_hwm):
            return {}
        return {
            "partition_data": put(s.partition_data, b, s.partition_data[b].replace(hwm=new_hwm)),
            **self.update_hwm_invariant_vars(s, b, old_hwm, new_hwm, positive),
        }

    def maybe_update_hwm_and_ack_on_partition_change(self, s, b, part_md) -> dict:
        new_hwm = (
            self.get_commit_offset(
                s, b, part_md.maximal_isr, s.partition_data[b].leo, s.partition_replica_state[b]
            )
            + 1
        )
        positive = len(part_md.maximal_isr) >= self.min_isr
        return self.maybe_advance_high_watermark(
            s, b, part_md.isr, s.partition_data[b].hwm, new_hwm, positive
        )

    def fail_pending_writes(self, s, b) -> dict:
        data = s.partition_data[b]
        return self.send_acks_for(s, b, data.hwm, data.leo - 1, False)

    def maybe_fail_pending_writes(self, s, b, part_state) -> dict:
        data = s.partition_data[b]
        if data.hwm < data.leo and (len(part_state.isr) < self.min_isr or b != part_state.leader):
            return self.fail_pending_writes(s, b)
        return {}

    # -- metadata updates ----------------------------------------------------------------

    def apply_metadata_record(self, s: State, b: int, md_offset: int) -> dict | None:
        record = s.con_metadata_log[md_offset - 1]
        curr = s.partition_metadata[b]
        new_md = Record(
            replicas=record.replicas,
            isr=record.isr,
            maximal_isr=record.isr,
            leader=record.leader,
            leader_epoch=record.leader_epoch,
            partition_epoch=record.partition_epoch,
        )
        is_new_leader = s.partition_status[b] != LEADER and record.leader == b
        replicated = {
            "broker_metadata_log": put(
                s.broker_metadata_log,
                b,
                s.broker_metadata_log[b]
                + s.con_metadata_log[len(s.broker_metadata_log[b]) : md_offset],
            )
        }
        if new_md.partition_epoch <= curr.partition_epoch:
            return replicated  # MetadataNoOp
        applied = {
            **replicated,
            "partition_metadata": put(
                s.partition_metadata, b, new_md if b in new_md.replicas else BLANK_METADATA
            ),
        }
        if b in curr.replicas and b not in new_md.replicas:
            return {**applied, **self.delete_partition(s, b, new_md)}
        if curr.leader == b and record.leader == b:
            if curr.leader_epoch == new_md.leader_epoch:
                return {**applied, **self.remain_leader(s, b, new_md)}
            return {**applied, **self.become_leader_in_new_epoch(s, b, new_md, is_new_leader)}
        if curr.leader != b and record.leader == b:
            return {**applied, **self.become_leader_in_new_epoch(s, b, new_md, is_new_leader)}
        if b in new_md.replicas and record.leader != NO_LEADER:
            if new_md.leader_epoch == curr.leader_epoch and curr.leader != b and new_md.leader != b:
                return applied  # RemainFollower
            return {**applied, **self.become_follower_in_new_epoch(s, b, new_md)}
        if b not in new_md.replicas:
            return None
        return {**applied, **self.wait_for_leader_change(s, b, new_md)}

    def remain_leader(self, s, b, new_md) -> dict:
        changes = self.maybe_update_hwm_and_ack_on_partition_change(s, b, new_md)
        if new_md.partition_epoch < s.partition_pending_ap[b].epoch:
            return changes
        return {**changes, "partition_pending_ap": put(s.partition_pending_ap, b, NO_PENDING_AP)}

    def become_leader_in_new_epoch(self, s, b, new_md, is_new_leader) -> dict:
        rs = s.partition_replica_state[b]
        rs = Record(
            {
                b1: rs[b1] if not is_new_leader and b1 in new_md.isr else BLANK_REPLICA_STATE
                for b1 in self.brokers
            }
        )
        return {
            "partition_status": put(s.partition_status, b, LEADER),
            "partition_leso": put(s.partition_leso, b, s.partition_data[b].leo),
            **self.maybe_update_hwm_and_ack_on_partition_change(s, b, new_md),
            "partition_replica_state": put(s.partition_replica_state, b, rs),
            "partition_pending_ap": put(s.partition_pending_ap, b, NO_PENDING_AP),
            **remove_partition_from_fetchers(s, b),
        }

    def ensure_leadership_renounced(self, s, b, new_md) -> dict:
        return {
            **self.maybe_fail_pending_writes(s, b, new_md),
            "partition_replica_state": put(
                s.partition_replica_state,
                b,
                Record({b1: BLANK_REPLICA_STATE for b1 in self.brokers}),
            ),
            "partition_pending_ap": put(s.partition_pending_ap, b, NO_PENDING_AP),
            "aux_flo": put(s.aux_flo, b, INT_MAX),
        }

    def become_follower_in_new_epoch(self, s, b, new_md) -> dict:
        fetchers = self.add_partition_to_fetcher(s, b, new_md.leader, new_md.leader_epoch)
        return self.not_leading(s, b, new_md, FOLLOWER, fetchers)

    def wait_for_leader_change(self, s, b, new_md) -> dict:
        return self.not_leading(s, b, new_md, None, remove_partition_from_fetchers(s, b))

    def delete_partition(self, s, b, new_md) -> dict:
        emptied = put(s.partition_data, b, Record(log=(), hwm=1, leo=1))
        fetchers = remove_partition_from_fetchers(s, b)
        return {"partition_data": emptied, **self.not_leading(s, b, new_md, None, fetchers)}

    def not_leading(self, s, b, new_md, status, fetchers: dict) -> dict:
        """What the three above share: the replica's new status (and no LESO), its fetchers'
        changes, and EnsureLeadershipRenounced."""
        return {
            "partition_status": put(s.partition_status, b, status),
            "partition_leso": put(s.partition_leso, b, None),
            **fetchers,
            **self.ensure_leadership_renounced(s, b, new_md),
        }

    def add_partition_to_fetcher(self, s, b, leader, leader_epoch) -> dict:
        fetchers = s.broker_fetchers[b]
        if (
            leader_epoch <= s.partition_metadata[b].leader_epoch
            and fetchers[leader].partition is not None
        ):
            return {}
        log = s.partition_data[b].log
        added = Record(
            fetch_offset=s.partition_data[b].leo,
            last_fetched_epoch=log[-1].epoch if log else 0,
            delayed=False,
        )
        new = Record(
            {
                peer: fetchers[peer].replace(partition=added if peer == leader else None)
                for peer in self.brokers
            }
        )
        return {"broker_fetchers": put(s.broker_fetchers, b, new)}

    # -- AlterPartition ------------------------------------------------------------------

    def follower_is_caught_up(self, s, b, follower, curr_isr, timed_out_isr) -> bool:
        if follower in curr_isr:
            return follower not in timed_out_isr
        leo = s.partition_replica_state[b][follower].leo
        return leo is not None and leo >= s.partition_data[b].hwm and leo >= s.partition_leso[b]

    def do_send_alter_partition_request(self, s, b, timed_out_isr) -> State | None:
        if b in timed_out_isr:
            return None
        md = s.partition_metadata[b]
        curr_isr = md.isr
        proposed = frozenset(
            b1
            for b1 in md.replicas
            if b1 == b or self.follower_is_caught_up(s, b, b1, curr_isr, timed_out_isr)
        )
        if proposed == curr_isr:
            return None
        epochs = Record(
            {
                b1: s.broker_state[b].broker_epoch
                if b1 == b
                else 0
                if b1 in curr_isr
                else s.partition_replica_state[b][b1].broker_epoch
                for b1 in proposed
            }
        )
        request = Record(
            type="AlterPartitionRequest",
            isr=proposed,
            isr_and_epochs=epochs,
            leader=b,
            leader_epoch=md.leader_epoch,
            partition_epoch=md.partition_epoch,
            broker_epoch=s.broker_state[b].broker_epoch,
            source=b,
            dest=CONTROLLER,
        )
        # __AvoidCycle: a request sent before only again if the controller would accept it.
        if (request in s.messages or request in s.messages_discard) and (
            self.validate_alter_partition_request(s, b, request) is not None
        ):
            return None
        shrinks = s.aux_ctrs.leader_shrink_isr_ctr + (1 if curr_isr - proposed else 0)
        return s.replace(
            **NET.send(s, request),
            partition_metadata=put(
                s.partition_metadata, b, md.replace(maximal_isr=proposed | curr_isr)
            ),
            partition_pending_ap=put(
                s.partition_pending_ap,
                b,
                Record(epoch=md.partition_epoch + 1, request=request),
            ),
            aux_ctrs=s.aux_ctrs.replace(leader_shrink_isr_ctr=shrinks),
        )

    def validate_alter_partition_request(self, s, b, m) -> str | None:
        md = s.con_partition_metadata
        if (
            b != md.leader
            or m.broker_epoch != s.con_broker_reg[b].broker_epoch
            or m.partition_epoch != md.partition_epoch
        ):
            return "FencedLeaderEpoch"
        if all(self.is_eligible_broker(s, b1, e) for b1, e in m.isr_and_epochs.items()):
            return None
        return "IneligibleReplica"

    def handle_alter_partition(self, s, b, m) -> list[State]:
        md = s.con_partition_metadata
        error = self.validate_alter_partition_request(s, b, m)
        if error is not None:
            response = Record(
                type="AlterPartitionResponse",
                error=error,
                request=m,
                dest=b,
                source=CONTROLLER,
            )
            return [s.replace(**NET.reply(s, m, response))]
        final_replicas = md.replicas - md.removing
        final_isr = m.isr - md.removing
        complete = (
            reassignment_in_progress(s)
            and md.adding <= final_isr
            and len(final_isr) >= self.min_isr
        )
        if complete:
            new = self.completed_reassignment(s, final_isr, final_replicas)
        else:
            elr = self.update_elr_on_isr_or_replica_change(s, m.isr, md.replicas)
            new = self.pending_reassignment(md, md.replicas, m.isr, elr, md.adding, md.removing)
        out = []
        for leader in self.new_leaders(md, new["isr"]):
            response = Record(
                type="AlterPartitionResponse",
                error=None,
                replicas=new["replicas"],
                isr=new["isr"],
                leader=leader,
                leader_epoch=new["leader_epoch"],
                partition_epoch=new["partition_epoch"],
                request=m,
                dest=b,
                source=CONTROLLER,
            )
            out.append(
                s.replace(
                    **NET.reply(s, m, response),
                    **self.apply_partition_change(s, leader=leader, **new),
                )
            )
        return out

    def completed_reassignment(self, s: State, isr: frozenset, replicas: frozenset) -> dict:
        """The partition change that completes a reassignment: the final replicas and ISR, a
        new leader epoch, nothing left to add or remove."""
        md = s.con_partition_metadata
        return dict(
            replicas=replicas,
            isr=isr,
            elr=self.update_elr_on_isr_or_replica_change(s, isr, replicas),
            leader_epoch=md.leader_epoch + 1,
            partition_epoch=md.partition_epoch + 1,
            adding=frozenset(),
            removing=frozenset(),
        )

    def pending_reassignment(self, md, replicas, isr, elr, adding, removing) -> dict:
        """The partition change of a reassignment still in progress: same leader epoch."""
        return dict(
            replicas=replicas,
            isr=isr,
            elr=elr,
            leader_epoch=md.leader_epoch,
            partition_epoch=md.partition_epoch + 1,
            adding=adding,
            removing=removing,
        )

    def new_leaders(self, md, isr: frozenset) -> list[int]:
        """The leaders a partition change may name: the current one if it stays in the ISR,
        else any member of it."""
        return [md.leader] if md.leader in isr else sorted(isr)

    def valid_reassignment(self, s, adding, removing) -> bool:
        replicas = s.con_partition_metadata.replicas
        return (
            (adding or removing)
            and len(replicas) + len(adding) - len(removing) >= self.min_isr
            and not (adding & replicas)
            and removing <= replicas
        )

    # -- Fetch ---------------------------------------------------------------------------

    def last_offset_for_epoch(self, s, b, req_epoch, is_leader) -> Record:
        """LastOffsetForEpoch: the end offset of the highest epoch <= req_epoch."""
        log, leo = s.partition_data[b].log, s.partition_data[b].leo
        leader_epoch = s.partition_metadata[b].leader_epoch
        if not log or req_epoch == log[-1].epoch or (is_leader and leader_epoch == req_epoch):
            return Record(epoch=req_epoch, offset=leo)
        higher = [e.offset for e in log if e.epoch > req_epoch]
        if higher:
            # the first offset of the lowest epoch above req_epoch
            lowest = min(e.epoch for e in log if e.epoch > req_epoch)
            higher_epoch_offset = min(e.offset for e in log if e.epoch == lowest)
        elif is_leader and leader_epoch > req_epoch:
            higher_epoch_offset = leo
        else:
            higher_epoch_offset = None
        floor = [e.epoch for e in log if e.epoch <= req_epoch]
        if floor:
            return Record(epoch=max(floor), offset=higher_epoch_offset)
        return Record(epoch=req_epoch, offset=higher_epoch_offset)

    def answer_fetch(self, s: State, b: int, m: Record) -> State:
        md, data = s.partition_metadata[b], s.partition_data[b]
        req = m.partition

        def response(changes: dict | None = None, **fields: object) -> State:
            """The step that answers m (the response's `fields` over their defaults) and makes
            these `changes`."""
            defaults = {"error": None, "diverging_epoch": None, "hwm": data.hwm, "records": ()}
            fields = {**defaults, **fields}
            body = Record(leader_epoch=md.leader_epoch, fetch_offset=req.fetch_offset, **fields)
            response = Record(type="FetchResponse", partition=body, dest=m.source, source=m.dest)
            return s.replace(**(changes or {}), **NET.reply(s, m, response))

        if s.partition_status[b] != LEADER or md.leader_epoch != req.leader_epoch:
            if md.leader_epoch < req.leader_epoch:
                error = "UnknownLeaderEpoch"
            elif md.leader_epoch > req.leader_epoch:
                error = "FencedLeaderEpoch"
            else:
                error = "NotLeaderOrFollower"
            return response(error=error)
        last_epoch = self.last_offset_for_epoch(s, b, req.last_fetched_epoch, True)
        if last_epoch.epoch < req.last_fetched_epoch or last_epoch.offset < req.fetch_offset:
            return response(diverging_epoch=last_epoch)
        rs = put(
            s.partition_replica_state[b],
            m.source,
            Record(leo=req.fetch_offset, broker_epoch=m.broker_epoch),
        )
        old_hwm = data.hwm
        max_committed = self.get_commit_offset(s, b, md.maximal_isr, data.leo, rs)
        new_hwm = (
            max_committed + 1
            if self.can_advance_hwm(b, md.isr, old_hwm, max_committed + 1)
            else old_hwm
        )
        records = (data.log[req.fetch_offset - 1],) if req.fetch_offset < data.leo else ()
        changes = {
            "partition_replica_state": put(s.partition_replica_state, b, rs),
            **self.maybe_advance_high_watermark(s, b, md.isr, old_hwm, new_hwm, True),
        }
        return response(changes, hwm=max(new_hwm, old_hwm), records=records)

    def handle_fetch_response(self, s: State, b: int, m: Record) -> dict:
        """HandleFetchResponse: its changes (the follower's fetcher, and its log)."""
        fetcher = s.broker_fetchers[b][m.source]
        resp = m.partition
        if (
            fetcher.partition is None
            or fetcher.partition.fetch_offset != resp.fetch_offset
            or s.partition_metadata[b].leader_epoch != resp.leader_epoch
        ):
            idle = fetcher.replace(pending_response=False)
            return {"broker_fetchers": put2(s.broker_fetchers, b, m.source, idle)}
        if resp.error is not None:
            fetcher = fetcher.replace(
                pending_response=False, partition=fetcher.partition.replace(delayed=True)
            )
            return {"broker_fetchers": put2(s.broker_fetchers, b, m.source, fetcher)}
        data = s.partition_data[b]
        if resp.diverging_epoch is not None:
            after = self.truncate_to_safe_point(s, b, resp.diverging_epoch)
            last_fetched_epoch = after.log[-1].epoch if after.log else 0
            new_leo = after.leo
        else:
            new_leo = len(data.log) + len(resp.records) + 1
            after = Record(
                log=data.log + resp.records,
                hwm=resp.hwm if resp.hwm <= new_leo else data.hwm,
                leo=new_leo,
            )
            last_fetched_epoch = (
                resp.records[-1].epoch if resp.records else fetcher.partition.last_fetched_epoch
            )
        fetcher = Record(
            partition=Record(
                fetch_offset=new_leo, last_fetched_epoch=last_fetched_epoch, delayed=False
            ),
            pending_response=False,
        )
        return {
            "partition_data": put(s.partition_data, b, after),
            "broker_fetchers": put2(s.broker_fetchers, b, m.source, fetcher),
        }

    def truncate_to_safe_point(self, s, b, diverging_epoch) -> Record:
        local = self.last_offset_for_epoch(s, b, diverging_epoch.epoch, False)
        if local.epoch != diverging_epoch.epoch or local.offset < diverging_epoch.offset:
            truncate_to = local.offset
        else:
            truncate_to = diverging_epoch.offset
        data = s.partition_data[b]
        if truncate_to > 1:
            return Record(log=data.log[: truncate_to - 1], leo=truncate_to, hwm=data.hwm)
        return Record(log=(), hwm=data.hwm, leo=1)


def _status(s: State, b: int) -> str | None:
    bs = s.broker_state.get(b)
    return None if bs is None else bs.status


def put2(maps: Record, b: int, b1: int, value) -> Record:
    return put(maps, b, put(maps[b], b1, value))


def reassignment_in_progress(s: State) -> bool:
    md = s.con_partition_metadata
    return bool(md.adding or md.removing)


def remove_partition_from_fetchers(s: State, b: int) -> dict:
    fetchers = s.broker_fetchers[b]
    new = Record(
        {
            b1: Record(partition=None, pending_response=f.pending_response)
            for b1, f in fetchers.items()
        }
    )
    return {"broker_fetchers": put(s.broker_fetchers, b, new)}


def drop_fetch_sessions(spec: KRaftReplication, s: State, b: int) -> dict:
    """DropFetchSessions: in-flight Fetch messages to or from b are dropped; b's fetchers are
    blank and those of brokers waiting on b fail (delayed)."""
    dropped = frozenset(
        m
        for m in s.messages
        if m.type in ("FetchRequest", "FetchResponse") and (m.dest == b or m.source == b)
    )
    fetchers = {}
    for b1 in spec.brokers:
        f = s.broker_fetchers[b1]
        if b1 == b:
            fetchers[b1] = Record({b2: BLANK_FETCH_STATE for b2 in spec.brokers})
        elif f[b].pending_response and f[b].partition is not None:
            fetchers[b1] = put(
                f,
                b,
                f[b].replace(
                    pending_response=False, partition=f[b].partition.replace(delayed=True)
                ),
            )
        elif f[b].pending_response:
            fetchers[b1] = put(f, b, f[b].replace(pending_response=False))
        else:
            fetchers[b1] = f
    return {
        "messages": s.messages - dropped,
        "messages_discard": s.messages_discard | dropped,
        "broker_fetchers": Record(fetchers),
    }
