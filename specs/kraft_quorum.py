"""The KRaft metadata quorum (Kafka's Raft) with KIP-996 pre-vote and KIP-853 reconfiguration,
translated state for state from Jack Vanlightly's TLA+ model, github.com/Vanlightly/kafka-tlaplus
(MIT licence): kraft/kip_996/kraft_kip_996.tla, with kraft_kip_996_functions.tla,
kraft_kip_996_types.tla, kraft_kip_996_properties.tla, kraft_kip_996_liveness.tla and
network.tla beside it.

This is the base of specs/kip996.py, whose `fixed=false` takes pre-vote out (the hook
`start_election` below). specs/raft.py's light model (now specs/light/raft.py) tells the same
story in fewer variables.

Every variable of the TLA+ model is a variable here, with the same name and the same values:
servers are 1..max_spawned_servers (the started ones are the keys of `server_ids`), offsets
start at 1, Nil is None, model values are their names as strings ("Leader", "Voter"...),
values are "v1", "v2"... and hosts "h1", "h2"... Per-server functions are maps from the
server id. Messages are a set (`net_messages`); a handled one moves to
`net_messages_processed`, which is part of the state (the model has no VIEW). Each action is
the TLA+ action of the same name (snake case), guard first, then effect; the helpers keep the
TLA+ operators' names. The effects read the state before the step and are gathered into one
`replace`, as each TLA+ variable is primed once per step.

Faults, each bounded by a constant as in the model: a restart that keeps the disk
(max_restarts), a crash that loses it (max_perm_crashes), a change of which server pairs can
talk (max_connectivity_changes), a timeout or resignation although nothing went wrong
(max_disruptive_election_triggers), and the operator's reconfigurations: add or remove a voter,
start a new server (max_add_reconfigs, max_remove_reconfigs, max_spawned_servers). Elections
are bounded by max_epoch only with test_liveness off: with it on (the shipped cfg), the model
adds the guards of its liveness module instead, which keep the search from cycling.
"""

from __future__ import annotations

from itertools import chain, combinations

from checker import (
    Record,
    Spec,
    State,
    action,
    always_eventually,
    assume,
    constant,
    invariant,
    leads_to,
    on,
    put,
    reachable,
    refines,
    terminal,
)
from invariants import kraft_quorum as props
from specs.client_writes import ClientWrites
from specs.network import Network, subsets

# Server states (TLA+ model values)
UNATTACHED, FOLLOWER, PROSPECTIVE = "Unattached", "Follower", "Prospective"
CANDIDATE, LEADER, RESIGNED = "Candidate", "Leader", "Resigned"
DEAD_NO_STATE, ILLEGAL_STATE = "DeadNoState", "IllegalState"
# Log commands
APPEND, INIT_CLUSTER = "AppendCommand", "InitClusterCommand"
ADD_VOTER, REMOVE_VOTER, LEADER_CHANGE = (
    "AddVoterCommand",
    "RemoveVoterCommand",
    ("LeaderChangeRecord"),
)
CONFIG_COMMANDS = (INIT_CLUSTER, ADD_VOTER, REMOVE_VOTER)
# Messages
VOTE_REQ, VOTE_RES = "RequestVoteRequest", "RequestVoteResponse"
BEGIN_QUORUM, FETCH_REQ, FETCH_RES = "BeginQuorumEpochRequest", "FetchRequest", "FetchResponse"
# Results and errors
OK, NOT_OK, DIVERGING = "Ok", "NotOk", "Diverging"
FENCED_LEADER_EPOCH, NOT_LEADER, UNKNOWN_LEADER = "FencedLeaderEpoch", "NotLeader", "UnknownLeader"
INVALID_REQUEST, UNKNOWN_MEMBER, ALREADY_MEMBER = "InvalidRequest", "UnknownMember", "AlreadyMember"
RECONFIG_IN_PROGRESS, LEADER_NOT_READY = "ReconfigInProgress", "LeaderNotReady"

OBSERVER_STATES = frozenset({LEADER, FOLLOWER, UNATTACHED, RESIGNED})
EMPTY_MAP = Record({})
BLANK_FETCH_STATE = Record(pending_fetch=None, last_fetch_res=None, has_fetch_success=False)
NO_CONFIG = Record(id=0, members=frozenset(), committed=False)
SET_ILLEGAL_STATE = Record(
    state=ILLEGAL_STATE, epoch=0, leader=None, votes_recv=frozenset(), voted_for=None
)
FAULTS = (
    "max_restarts",
    "max_perm_crashes",
    "max_connectivity_changes",
    "max_disruptive_election_triggers",
    "max_add_reconfigs",
    "max_remove_reconfigs",
)


def server_pairs(servers) -> list[frozenset]:
    """ServerPairs: the two-server subsets."""
    return [frozenset(c) for c in combinations(sorted(servers), 2)]


class KRaftQuorum(Spec):
    """KRaft (Raft) with KIP-996 pre-vote and KIP-853 reconfiguration (Vanlightly's model)."""

    init_cluster_size = constant(2, "InitClusterSize: the voters at the start", min=1)
    min_cluster_size = constant(2, "MinClusterSize: no RemoveVoter below this size", min=1)
    max_cluster_size = constant(2, "MaxClusterSize: no AddVoter above this size", min=1)
    max_spawned_servers = constant(2, "MaxSpawnedServers: servers ever started", min=1)
    hosts = constant(2, "Hosts: how many hosts (h1, h2, ...) servers run on", min=1)
    values = constant(0, "Value: how many client values (v1, v2, ...) may be written", min=0)
    max_epoch = constant(2, "MaxEpoch: elections bound (only with test_liveness off)", min=1)
    max_values_per_epoch = constant(1, "MaxValuesPerEpoch: appends per leader epoch", min=0)
    max_restarts = constant(0, "MaxRestarts: restarts that keep the disk", min=0)
    max_perm_crashes = constant(0, "MaxPermCrashes: crashes that lose the disk", min=0)
    max_connectivity_changes = constant(0, "MaxConnectivityChanges: network changes", min=0)
    max_disruptive_election_triggers = constant(
        1, "MaxDisruptiveElectionTriggers: timeouts or resignations with no cause", min=0
    )
    max_add_reconfigs = constant(0, "MaxAddReconfigs: AddVoter commands accepted", min=0)
    max_remove_reconfigs = constant(0, "MaxRemoveReconfigs: RemoveVoter commands", min=0)
    test_liveness = constant(False, "TestLiveness: the liveness module's guards, no epoch bound")

    # Variables whose kind the initial state does not show (None or an id, records of
    # several shapes, maps that lose or gain keys): not checked.
    server_ids: object
    leader: object
    voted_for: object
    fetch_state: object
    pending_ack: object
    votes_recv: object
    flwr_end_offset: object
    log: object
    inv_sent: object
    inv_pos_acked: object
    inv_neg_acked: object
    net_messages: object
    net_messages_processed: object

    @assume
    def cluster_sizes(self) -> bool:
        """MinClusterSize <= InitClusterSize <= MaxClusterSize <= hosts and servers.

        The ASSUMEs, and MaxSpawnedServers >= InitClusterSize, which the model needs too."""
        return (
            self.min_cluster_size <= self.init_cluster_size <= self.max_cluster_size
            and self.hosts >= self.init_cluster_size
            and self.max_spawned_servers >= self.init_cluster_size
        )

    @property
    def all_servers(self) -> range:
        """AllServers: 1..MaxSpawnedServers."""
        return range(1, self.max_spawned_servers + 1)

    @property
    def value_set(self) -> tuple[str, ...]:
        return tuple(f"v{i}" for i in range(1, self.values + 1))

    @property
    def host_seq(self) -> tuple[str, ...]:
        return tuple(f"h{i}" for i in range(1, self.hosts + 1))

    # ==================================================================================
    # Init
    # ==================================================================================

    def init(self) -> State:
        servers = frozenset(range(1, self.init_cluster_size + 1))
        init_leader = 1  # CHOOSE i \in 1..InitClusterSize : TRUE is TLC's first, 1
        first_entry = Record(command=INIT_CLUSTER, epoch=1, value=Record(id=1, members=servers))

        def per_server(value):
            return Record({i: value for i in sorted(servers)})

        return Record(
            server_ids=Record(
                {i: Record(host=self.host_seq[i - 1], disk_id=0) for i in sorted(servers)}
            ),
            current_epoch=per_server(1),
            state=Record({i: LEADER if i == init_leader else FOLLOWER for i in sorted(servers)}),
            leader=per_server(init_leader),
            voted_for=per_server(None),
            fetch_state=per_server(
                Record(pending_fetch=None, last_fetch_res=None, has_fetch_success=True)
            ),
            pending_ack=per_server(frozenset()),
            config=per_server(Record(id=1, members=servers, committed=True)),
            votes_recv=per_server(frozenset()),
            flwr_end_offset=per_server(Record({i: 1 for i in sorted(servers)})),
            log=per_server((first_entry,)),
            hwm=per_server(1),
            inv_sent=frozenset(),
            inv_pos_acked=frozenset(),
            inv_neg_acked=frozenset(),
            aux_ctrs=Record(
                prevote_ctr=0,
                election_ctr=0,
                disruptive_ctr=0,
                crash_ctr=0,
                restart_ctr=0,
                add_reconfig_ctr=0,
                remove_reconfig_ctr=0,
            ),
            aux_disk_id_gen=0,
            net_messages=frozenset(),
            net_messages_processed=frozenset(),
            net_connectivity=Record({p: True for p in server_pairs(self.all_servers)}),
            net_connectivity_ctr=0,
        )

    # ==================================================================================
    # Actions (TLA+'s Next)
    # ==================================================================================

    @action(switch="max_connectivity_changes")
    @on("network")
    def change_network_connectivity(self, s: State) -> list[State]:
        """ChangeNetworkConnectivity: the network takes any set of connected server pairs.

        None with a dead server, and with test_liveness one that lets an election succeed;
        messages between servers left unconnected are lost."""
        if s.net_connectivity_ctr >= self.max_connectivity_changes:
            return []
        dead = [i for i in s.server_ids if s.state[i] == DEAD_NO_STATE]
        out = []
        for conn in subsets(s.net_connectivity.keys()):
            if any(i in pair for i in dead for pair in conn):
                continue
            if not self.liveness_elections_can_progress(s, conn):
                continue
            out.append(s.replace(**change_connectivity(s, conn)))
        return out

    # -- Server actions -----------------------------------------------------------------

    @action(srv="all_servers", switch="max_restarts")
    @on("server {srv}")
    def restart_with_state(self, s: State, srv: int) -> State | None:
        """RestartWithState: the server restarts from its disk.

        It keeps state, epoch, leader, vote and log; a leader that is a voter comes back
        resigned, a prospective one or an observer leader unattached. Its HWM and fetch state
        start over and pending writes fail."""
        if (
            s.aux_ctrs.restart_ctr >= self.max_restarts
            or srv not in s.server_ids
            or s.state[srv] == DEAD_NO_STATE
        ):
            return None
        st = s.state[srv]
        if st == LEADER and self.is_voter(s, srv):
            new_state = self.transition_to_resigned(s, srv)
        elif (st == LEADER and self.is_observer(s, srv)) or st == PROSPECTIVE:
            new_state = self.boot_time_unattached(s, srv)
        else:
            new_state = self.no_transition(s, srv)
        return s.replace(
            **apply_state(s, srv, new_state),
            hwm=put(s.hwm, srv, 0),
            **reset_fetch_state_if_follower(s, srv),
            **reset_follower_fetch_state_if_leader(s, srv, s.flwr_end_offset[srv].keys()),
            **fail_any_pending_writes_if_leader(s, srv),
            aux_ctrs=s.aux_ctrs.replace(restart_ctr=s.aux_ctrs.restart_ctr + 1),
        )

    def crash_allowed(self, s: State, srv: int) -> bool:
        """CrashAllowed: with test_liveness, the others can still elect a leader."""
        if not self.test_liveness:
            return True
        return self.liveness_elections_can_progress(s, connected_pairs_without_server(s, srv))

    @action(srv="all_servers", switch="max_perm_crashes")
    @on("server {srv}")
    def crash_lose_state(self, s: State, srv: int) -> State | None:
        """CrashLoseState: a voter crashes and loses its disk; it is cut off and stays dead."""
        if (
            s.aux_ctrs.crash_ctr >= self.max_perm_crashes
            or srv not in s.server_ids
            or not self.is_voter(s, srv)
            or not self.crash_allowed(s, srv)
        ):
            return None
        return s.replace(
            **disconnect_server(s, srv),
            state=put(s.state, srv, DEAD_NO_STATE),
            config=put(s.config, srv, NO_CONFIG),
            current_epoch=put(s.current_epoch, srv, 0),
            leader=put(s.leader, srv, None),
            voted_for=put(s.voted_for, srv, None),
            votes_recv=put(s.votes_recv, srv, frozenset()),
            **reset_fetch_state_if_follower(s, srv),
            **reset_follower_fetch_state_if_leader(s, srv, ()),
            **fail_any_pending_writes_if_leader(s, srv),
            log=put(s.log, srv, ()),
            hwm=put(s.hwm, srv, 0),
            aux_ctrs=s.aux_ctrs.replace(crash_ctr=s.aux_ctrs.crash_ctr + 1),
        )

    def should_resign(self, s: State, srv: int) -> bool:
        """ShouldResign: the leader hears from fewer than a majority (itself not counted when
        it is a member: it is then one of the majority)."""
        members = s.config[srv].members
        connected_peers = sum(
            1
            for peer in members
            if srv != peer
            and connected(s, srv, peer)
            and (
                (self.is_voter(s, peer) and s.current_epoch[srv] >= s.current_epoch[peer])
                or self.is_observer(s, peer)
            )
        )
        min_connected = len(members) // 2 if srv in members else len(members) // 2 + 1
        return connected_peers < min_connected

    @action(srv="all_servers", fair_each="weak")
    @on("server {srv}")
    def check_quorum_resign(self, s: State, srv: int) -> State | None:
        """CheckQuorumResign: a leader that lost its majority resigns.

        So may one that did not, up to the limit of disruptive election triggers."""
        if srv not in s.server_ids or s.state[srv] != LEADER:
            return None
        should_resign = self.should_resign(s, srv)
        if not should_resign and not self.aux_under_disruption_limit(s):
            return None
        return s.replace(
            **apply_state(s, srv, self.transition_to_resigned(s, srv)),
            **fail_any_pending_writes_if_leader(s, srv),
            **reset_follower_fetch_state_if_leader(s, srv, s.config[srv].members),
            aux_ctrs=s.aux_ctrs
            if should_resign
            else s.aux_ctrs.replace(disruptive_ctr=s.aux_ctrs.disruptive_ctr + 1),
        )

    # -- Elections --------------------------------------------------------------------

    def not_enough_votes(self, s: State, srv: int, pre_vote: bool) -> bool:
        """NotEnoughVotes: nothing of this round in flight, no majority, not the leader."""
        return (
            not has_inflight_vote_req(s, srv, VOTE_REQ, pre_vote)
            and not has_inflight_vote_res(s, srv, VOTE_RES, pre_vote)
            and len(s.votes_recv[srv]) < majority_count(s.config[srv].members)
            and s.state[srv] != LEADER
        )

    def send_pre_vote_requests(self, s: State, srv: int) -> dict:
        """SendPreVoteRequests: a pre-vote RequestVote to each other member."""
        return NET.send_all(s, self.vote_requests(s, srv, s.current_epoch[srv], pre_vote=True))

    def vote_requests(self, s: State, srv: int, epoch: int, pre_vote: bool) -> list[Record]:
        """A RequestVote from `srv` for `epoch` to each other member, with its log's end."""
        return [
            message(
                VOTE_REQ,
                srv,
                peer,
                epoch,
                last_log_epoch=last_epoch(s.log[srv]),
                last_log_offset=len(s.log[srv]),
                pre_vote=pre_vote,
            )
            for peer in sorted(s.config[srv].members - {srv})
        ]

    def start_election(self, s: State, srv: int, disruptive: bool) -> State:
        """The effect of a fetch or election timeout: TransitionToProspective and
        SendPreVoteRequests. The hook specs/kip996.py overrides: without pre-vote, it goes
        to Candidate."""
        return s.replace(
            **apply_state(s, srv, self.transition_to_prospective(s, srv, s.current_epoch[srv])),
            **reset_fetch_state_if_follower(s, srv),
            **self.send_pre_vote_requests(s, srv),
            aux_ctrs=self.aux_inc_timeout_ctrs(s, disruptive),
        )

    @action(srv="all_servers", fair_each="weak")
    @on("server {srv}", sends="members", message="PreVote")
    def voter_fetch_timeout(self, s: State, srv: int) -> State | None:
        """VoterFetchTimeout: a follower voter's fetch times out and it starts a pre-vote.

        The timeout has a cause (the last fetch failed or was lost) or none, up to the
        disruptive limit. The voter becomes prospective in its epoch and asks the other
        members for pre-votes."""
        if (
            srv not in s.server_ids
            or not self.is_voter(s, srv)
            or srv not in s.config[srv].members
            or s.state[srv] != FOLLOWER
        ):
            return None
        can_timeout = self.fetch_can_timeout(s, srv)
        if not can_timeout and not self.aux_under_disruption_limit(s):
            return None
        return self.start_election(s, srv, not can_timeout)

    def causal_election_timeout(self, s: State, srv: int) -> bool:
        """CausalElectionTimeout: a candidate short of votes with none to come, or unattached."""
        return (s.state[srv] == CANDIDATE and self.not_enough_votes(s, srv, False)) or s.state[
            srv
        ] == UNATTACHED

    def eventual_election_timeout(self, s: State, srv: int) -> bool:
        """EventualElectionTimeout: for a cause, or without one up to the disruptive limit."""
        if self.causal_election_timeout(s, srv):
            return True
        return s.aux_ctrs.disruptive_ctr < self.max_disruptive_election_triggers and s.state[
            srv
        ] in (CANDIDATE, UNATTACHED)

    @action(srv="all_servers", fair_each="weak")
    @on("server {srv}", sends="members", message="PreVote")
    def voter_election_timeout(self, s: State, srv: int) -> State | None:
        """VoterElectionTimeout: an unattached voter, or a candidate, starts a pre-vote.

        It becomes prospective and asks the other members for pre-votes."""
        if (
            srv not in s.server_ids
            or not self.is_voter(s, srv)
            or srv not in s.config[srv].members
            or not self.eventual_election_timeout(s, srv)
        ):
            return None
        return self.start_election(s, srv, not self.causal_election_timeout(s, srv))

    @action(srv="all_servers", fair_each="weak")
    @on("server {srv}")
    def resigned_election_timeout(self, s: State, srv: int) -> State | None:
        """ResignedElectionTimeout: a resigned leader becomes unattached in the next epoch."""
        if srv not in s.server_ids or s.state[srv] != RESIGNED:
            return None
        new_state = self.transition_to_unattached(s, srv, s.current_epoch[srv] + 1, None)
        return s.replace(**apply_state(s, srv, new_state))

    def grant_pre_vote(self, s: State, srv: int, state0: Record, log_ok: bool) -> bool:
        """GrantPreVote: not a leader, and a follower only if it never fetched from its
        leader in this epoch; the candidate's log is not behind."""
        if state0.state in (UNATTACHED, PROSPECTIVE, CANDIDATE, RESIGNED) and log_ok:
            return True
        return state0.state == FOLLOWER and not s.fetch_state[srv].has_fetch_success and log_ok

    def grant_vote(self, s: State, srv: int, peer: int, state0: Record, log_ok: bool) -> bool:
        """GrantVote: unattached or prospective, and not voted for another (nor knows a
        leader) in the epoch; the candidate's log is not behind."""
        if state0.state not in (UNATTACHED, PROSPECTIVE):
            return False
        if state0.voted_for is not None:
            return state0.voted_for == peer
        if state0.leader is not None:
            return False
        return log_ok

    def final_state(self, s, srv, peer, m, state0, grant, pre_vote) -> Record:
        """FinalState: a pre-vote changes nothing; a granted vote is remembered."""
        if pre_vote:
            return state0
        if grant and state0.state == UNATTACHED:
            return self.transition_to_unattached_add_vote(s, srv, m.replica_epoch, state0, peer)
        if grant and state0.state == PROSPECTIVE:
            return self.transition_to_prospective_add_vote(s, srv, m.replica_epoch, state0, peer)
        return state0

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", receives="server {peer}", message="RequestVote")
    def handle_vote_request(self, s: State, srv: int, peer: int) -> list[State]:
        """HandleVoteRequest: a server answers a pre-vote or vote request.

        A higher epoch makes it unattached (not for a pre-vote: a pre-vote's final state is
        the state before); a granted vote is remembered (TransitionTo*AddVote)."""
        out = []
        for m in NET.of(s, VOTE_REQ, dest=srv, source=peer):
            if s.state[srv] == DEAD_NO_STATE:
                continue
            if m.last_log_epoch > m.replica_epoch:
                error = INVALID_REQUEST
            elif m.replica_epoch < s.current_epoch[srv]:
                error = FENCED_LEADER_EPOCH
            else:
                error = None
            if error is not None:
                response = message(
                    VOTE_RES,
                    srv,
                    peer,
                    s.current_epoch[srv],
                    leader=s.leader[srv],
                    vote_granted=False,
                    pre_vote=m.pre_vote,
                    error=error,
                )
                out += replied(s, m, response)
                continue
            if m.replica_epoch > s.current_epoch[srv]:
                state0 = self.transition_to_unattached(s, srv, m.replica_epoch, None)
            else:
                state0 = self.no_transition(s, srv)
            log_ok = (
                compare_entries(
                    m.last_log_offset,
                    m.last_log_epoch,
                    len(s.log[srv]),
                    last_epoch(s.log[srv]),
                )
                >= 0
            )
            if m.pre_vote:
                grant = self.grant_pre_vote(s, srv, state0, log_ok)
            else:
                grant = self.grant_vote(s, srv, peer, state0, log_ok)
            final = self.final_state(s, srv, peer, m, state0, grant, m.pre_vote)
            response = message(
                VOTE_RES,
                srv,
                peer,
                m.replica_epoch,
                leader=final.leader,
                vote_granted=grant,
                pre_vote=m.pre_vote,
                error=None,
            )
            net = NET.reply(s, m, response)
            if net is None:
                continue
            u = {}
            if s.state[srv] != final.state:
                u.update(reset_fetch_state_if_follower(s, srv))
                u.update(fail_any_pending_writes_if_leader(s, srv))
            out.append(s.replace(**u, **apply_state(s, srv, final), **net))
        return out

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", receives="server {peer}", message="RequestVoteResponse")
    def handle_vote_response(self, s: State, srv: int, peer: int) -> list[State]:
        """HandleVoteResponse: a voter takes a pre-vote or vote response.

        A higher epoch or a known leader may end its election (MaybeHandleCommonResponse);
        else a granted vote of the round it is in counts."""
        out = []
        for m in NET.of(s, VOTE_RES, dest=srv, source=peer):
            if s.state[srv] == DEAD_NO_STATE or not self.is_voter(s, srv):
                continue
            state0 = self.maybe_handle_common_response(s, srv, m.leader, m.replica_epoch, m.error)
            state1 = state0
            if (
                not state0.handled
                and (
                    (state0.state == PROSPECTIVE and m.pre_vote)
                    or (state0.state == CANDIDATE and not m.pre_vote)
                )
                and m.vote_granted
            ):
                state1 = state0.replace(votes_recv=state0.votes_recv | {peer})
            u = {}
            # MaybeLoseLeadership: late responses of a won election may carry a higher epoch.
            if s.state[srv] == LEADER and state1.state != LEADER:
                u.update(fail_any_pending_writes_if_leader(s, srv))
                u.update(reset_follower_fetch_state_if_leader(s, srv, s.config[srv].members))
            out.append(s.replace(**apply_state(s, srv, state1), **u, **NET.discard(s, m)))
        return out

    def within_epoch_limit(self, s: State, srv: int) -> bool:
        """WithinEpochLimit: no bound on elections when testing liveness."""
        return self.test_liveness or s.current_epoch[srv] < self.max_epoch

    @action(srv="all_servers", fair_each="weak")
    @on("server {srv}", sends="members", message="RequestVote")
    def conclude_pre_vote(self, s: State, srv: int) -> State | None:
        """ConcludePreVote: a prospective voter ends its pre-vote.

        With a majority of pre-votes it becomes a candidate in the next epoch and asks for
        votes; with no more pre-votes to come, it follows the leader it knew again, or is
        unattached."""
        if (
            srv not in s.server_ids
            or not self.is_voter(s, srv)
            or s.state[srv] != PROSPECTIVE
            or not self.within_epoch_limit(s, srv)
            or srv not in s.config[srv].members
        ):
            return None
        won = is_quorum(s.votes_recv[srv], s.config[srv].members)
        if not won and not self.no_more_pre_votes_to_count(s, srv):
            return None
        if won:
            return self.become_candidate(s, srv)
        if s.leader[srv] is not None:
            new_state = self.transition_to_follower(s, srv, s.leader[srv], s.current_epoch[srv])
        else:
            new_state = self.transition_to_unattached(s, srv, s.current_epoch[srv], s.leader[srv])
        return s.replace(**apply_state(s, srv, new_state))

    def become_candidate(self, s: State, srv: int) -> State:
        """ConcludePreVote's first case: TransitionToCandidate, vote requests to the others."""
        new_state = self.transition_to_candidate(s, srv)
        return s.replace(
            **apply_state(s, srv, new_state),
            **NET.send_all(s, self.vote_requests(s, srv, new_state.epoch, pre_vote=False)),
        )

    def no_more_pre_votes_to_count(self, s: State, srv: int) -> bool:
        """NoMorePreVotesToCount: no pre-vote request or response of it in flight."""
        return not has_inflight_vote_req(s, srv, VOTE_REQ, True) and not has_inflight_vote_res(
            s, srv, VOTE_RES, True
        )

    @action(srv="all_servers", fair_each="weak")
    @on("server {srv}", sends="members", message="BeginQuorumEpoch")
    def become_leader(self, s: State, srv: int) -> State | None:
        """BecomeLeader: a candidate with a majority of votes leads.

        It appends a LeaderChangeRecord and announces itself with BeginQuorumEpoch."""
        if (
            srv not in s.server_ids
            or s.state[srv] != CANDIDATE
            or not is_quorum(s.votes_recv[srv], s.config[srv].members)
        ):
            return None
        members = s.config[srv].members
        entry = Record(command=LEADER_CHANGE, epoch=s.current_epoch[srv], value=None)
        new_log = s.log[srv] + (entry,)
        # The model sets hwm' for a cluster of one and also says UNCHANGED hwm: the step is
        # then only possible when the two agree.
        if len(members) == 1 and len(new_log) != s.hwm[srv]:
            return None
        return s.replace(
            **apply_state(s, srv, self.transition_to_leader(s, srv)),
            log=put(s.log, srv, new_log),
            **reset_follower_fetch_state_if_leader(s, srv, members),
            **reset_fetch_state_if_follower(s, srv),
            **NET.send_all(
                s,
                [
                    message(BEGIN_QUORUM, srv, peer, s.current_epoch[srv], resend=False)
                    for peer in sorted(members - {srv})
                ],
            ),
        )

    def begin_quorum_epoch_request_timeout(self, s: State, srv: int, peer: int) -> bool:
        """BeginQuorumEpochRequestTimeout: the announcement of this epoch to the peer was lost
        (neither in flight nor processed), the two are connected and the peer still needs it."""
        epoch = s.current_epoch[srv]
        return (
            epoch > 1
            and not not_lost_req_with_replica_epoch(s, srv, peer, BEGIN_QUORUM, epoch)
            and connected(s, srv, peer)
            and (
                epoch > s.current_epoch[peer]
                or (epoch == s.current_epoch[peer] and s.state[peer] != FOLLOWER)
            )
        )

    # Only a lost announcement is sent again, and messages are lost only to the network.
    @action(
        srv="all_servers", peer="all_servers", fair_each="weak", switch="max_connectivity_changes"
    )
    @on("server {srv}", sends="server {peer}", message="BeginQuorumEpoch")
    def resend_begin_quorum_epoch_request(self, s: State, srv: int, peer: int) -> State | None:
        """ResendBeginQuorumEpochRequest: the leader announces itself again.

        To a member whose first announcement was lost."""
        if (
            srv not in s.server_ids
            or s.state[srv] != LEADER
            or srv == peer
            or peer not in s.config[srv].members
            or not self.begin_quorum_epoch_request_timeout(s, srv, peer)
        ):
            return None
        return s.replace(
            **NET.send(
                s,
                message(BEGIN_QUORUM, srv, peer, s.current_epoch[srv], resend=True),
            )
        )

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", receives="server {peer}", message="BeginQuorumEpoch")
    def accept_begin_quorum_request(self, s: State, srv: int, peer: int) -> list[State]:
        """AcceptBeginQuorumRequest: a server learns who leads an epoch.

        Not an older epoch than its own: such a request stays in flight."""
        out = []
        for m in NET.of(s, BEGIN_QUORUM, dest=srv, source=peer):
            if s.state[srv] == DEAD_NO_STATE or m.replica_epoch < s.current_epoch[srv]:
                continue
            new_state = self.maybe_transition(s, srv, peer, m.replica_epoch)
            out.append(
                s.replace(
                    **apply_state(s, srv, new_state),
                    **reset_fetch_state_if_follower(s, srv),
                    **fail_any_pending_writes_if_leader(s, srv),
                    **NET.discard(s, m),
                )
            )
        return out

    # -- Leader and follower actions --------------------------------------------------

    def within_values_per_epoch_limit(self, s: State, srv: int) -> bool:
        """WithinValuesPerEpochLimit: fewer appends in the leader's epoch than the limit."""
        epoch = s.current_epoch[srv]
        appended = sum(1 for e in s.log[srv] if e.epoch == epoch and e.command == APPEND)
        return appended < self.max_values_per_epoch

    @action(srv="all_servers", v="value_set", switch="values")
    @on("server {srv}")
    def handle_client_request(self, s: State, srv: int, v: str) -> State | None:
        """HandleClientRequest: a client writes a new value to a leader."""
        if (
            srv not in s.server_ids
            or s.state[srv] != LEADER
            or v in s.inv_sent
            or not self.within_values_per_epoch_limit(s, srv)
        ):
            return None
        new_log = s.log[srv] + (Record(command=APPEND, epoch=s.current_epoch[srv], value=v),)
        hwm = s.hwm
        if len(s.config[srv].members) == 1:
            hwm = put(hwm, srv, len(new_log))
        return s.replace(
            log=put(s.log, srv, new_log),
            hwm=hwm,
            pending_ack=put(s.pending_ack, srv, s.pending_ack[srv] | {v}),
            inv_sent=s.inv_sent | {v},
        )

    def should_send_fetch(self, s: State, srv: int, peer: int) -> bool:
        """ShouldSendFetch: a follower fetches from its leader; an unattached voter from any
        voter (which tells it who leads); an observer whose fetch timed out from any peer."""
        fs = s.fetch_state[srv]
        if (
            fs.pending_fetch is None
            and s.leader[srv] == peer
            and s.state[srv] == FOLLOWER
            and self.liveness_helps_make_progress(s, srv, peer, len(s.log[srv]) + 1)
            and not self.liveness_in_prevote_cycle(s, srv, peer)
        ):
            return True
        if (
            fs.pending_fetch is None
            and self.is_voter(s, srv)
            and s.state[srv] == UNATTACHED
            and self.liveness_valid_peer(s, srv, peer)
        ):
            return True
        return (
            self.is_observer(s, srv)
            and s.state[srv] == FOLLOWER
            and self.fetch_can_timeout(s, srv)
            and self.liveness_maybe_not_same_peer_again(s, srv, peer)
        )

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", sends="server {peer}", message="Fetch")
    def send_fetch_request(self, s: State, srv: int, peer: int) -> State | None:
        """SendFetchRequest: a Fetch from the end of the log (lost if not connected)."""
        if (
            srv not in s.server_ids
            or peer not in s.server_ids
            or srv == peer
            or not self.should_send_fetch(s, srv, peer)
        ):
            return None
        log = s.log[srv]
        msg = message(
            FETCH_REQ,
            srv,
            peer,
            s.current_epoch[srv],
            fetch_offset=len(log) + 1,
            last_fetched_epoch=log[-1].epoch if log else 0,
        )
        fetch_state = put(s.fetch_state, srv, s.fetch_state[srv].replace(pending_fetch=msg))
        return s.replace(fetch_state=fetch_state, **NET.send(s, msg))

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", receives="server {peer}", message="FetchResponse")
    def reject_fetch_request(self, s: State, srv: int, peer: int) -> list[State]:
        """RejectFetchRequest: not the leader, or another epoch: an error response."""
        out = []
        for m in NET.of(s, FETCH_REQ, dest=srv, source=peer):
            if s.state[srv] == DEAD_NO_STATE:
                continue
            if s.state[srv] != LEADER:
                error = NOT_LEADER
            elif m.replica_epoch < s.current_epoch[srv]:
                error = FENCED_LEADER_EPOCH
            elif m.replica_epoch > s.current_epoch[srv]:
                error = UNKNOWN_LEADER
            else:
                continue
            response = fetch_response(s, srv, peer, m, result=NOT_OK, error=error, hwm=s.hwm[srv])
            out += replied(s, m, response)
        return out

    # Logs diverge when a leader's write is lost to a leader change (with no value written,
    # only from the third epoch on: off with values=0, and vacuity warns if that is wrong).
    @action(srv="all_servers", peer="all_servers", fair_each="weak", switch="values")
    @on("server {srv}", receives="server {peer}", message="FetchResponse")
    def diverging_fetch_request(self, s: State, srv: int, peer: int) -> list[State]:
        """DivergingFetchRequest: the leader answers a diverging fetch position.

        With the end of the follower's last fetched epoch in its own log."""
        out = []
        for m in NET.of(s, FETCH_REQ, dest=srv, source=peer):
            if not self.receivable_equal_epoch(s, m) or s.state[srv] != LEADER:
                continue
            if valid_fetch_position(s, srv, m):
                continue
            end = end_offset_for_epoch(s, srv, m.last_fetched_epoch)
            response = fetch_response(
                s,
                srv,
                peer,
                m,
                result=DIVERGING,
                error=None,
                diverging_epoch=end.epoch,
                diverging_end_offset=end.offset + 1,
                hwm=s.hwm[srv],
            )
            out += replied(s, m, response)
        return out

    def receivable_equal_epoch(self, s: State, m: Record) -> bool:
        return s.state[m.dest] != DEAD_NO_STATE and m.replica_epoch == s.current_epoch[m.dest]

    def new_high_watermark(self, s: State, srv: int, new_end_offset: Record) -> int:
        """NewHighwaterMark: the highest offset a majority holds (the leader counts when it
        is a member), if it is of the leader's epoch; else the HWM as it was."""
        members = s.config[srv].members
        log = s.log[srv]

        def agree(offset: int) -> frozenset:
            held = frozenset(k for k in members if new_end_offset[k] >= offset)
            return held | {srv} if srv in members else held

        agree_offsets = [o for o in range(1, len(log) + 1) if is_quorum(agree(o), members)]
        if agree_offsets and log[max(agree_offsets) - 1].epoch == s.current_epoch[srv]:
            return max(agree_offsets)
        return s.hwm[srv]

    def handle_voter_fetch(self, s: State, srv: int, peer: int, m: Record, entries) -> dict:
        """HandleVoterFetch: the leader records the voter's end offset, may advance the HWM
        (acknowledging values, switching to a committed configuration, or resigning when it
        committed its own removal) and answers with the next record."""
        flwr = s.flwr_end_offset[srv]
        new_end_offset = put(flwr, peer, m.fetch_offset - 1) if peer in flwr else flwr
        new_hwm = self.new_high_watermark(s, srv, new_end_offset)
        log, hwm = s.log[srv], s.hwm[srv]
        leaves = any(
            hwm < offset <= new_hwm
            and log[offset - 1].command == REMOVE_VOTER
            and srv not in log[offset - 1].value.members
            for offset in range(1, len(log) + 1)
        )
        u: dict = {}
        if new_hwm > hwm:
            committed_values = {log[i - 1].value for i in range(hwm + 1, new_hwm + 1)}
            values_to_ack = s.pending_ack[srv] & committed_values
            entry = most_recent_reconfig_entry(log)
            new_config = config_for(entry.offset, entry.entry, new_hwm)
            u["config"] = put(s.config, srv, new_config)
            u["inv_pos_acked"] = s.inv_pos_acked | values_to_ack
            if leaves:  # AdvanceHwmAndResign
                u.update(apply_state(s, srv, self.transition_to_resigned(s, srv)))
                u.update(reset_follower_fetch_state_if_leader(s, srv, ()))
                u["pending_ack"] = put(s.pending_ack, srv, frozenset())
                u["inv_neg_acked"] = s.inv_neg_acked | (s.pending_ack[srv] - values_to_ack)
                u["hwm"] = put(s.hwm, srv, 0)
            else:  # AdvanceHwm
                u["pending_ack"] = put(s.pending_ack, srv, s.pending_ack[srv] - values_to_ack)
                u["flwr_end_offset"] = put(
                    s.flwr_end_offset,
                    srv,
                    Record({k: new_end_offset.get(k, 0) for k in sorted(new_config.members)}),
                )
                u["hwm"] = put(s.hwm, srv, new_hwm)
        else:  # OnlyUpdateFollowerMap
            u["flwr_end_offset"] = put(s.flwr_end_offset, srv, new_end_offset)
        response = fetch_response(
            s,
            srv,
            peer,
            m,
            leader=None if leaves else s.leader[srv],
            result=OK,
            error=None,
            entries=entries,
            hwm=min(new_hwm, m.fetch_offset),
        )
        net = NET.reply(s, m, response)
        return None if net is None else {**u, **net}

    def handle_observer_fetch(self, s: State, srv: int, peer: int, m: Record, entries) -> dict:
        """HandleObserverFetch: the next record, no change at the leader."""
        response = fetch_response(
            s,
            srv,
            peer,
            m,
            result=OK,
            error=None,
            entries=entries,
            hwm=min(m.fetch_offset, s.hwm[srv]),
        )
        return NET.reply(s, m, response)

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", receives="server {peer}", message="FetchResponse")
    def accept_fetch_request(self, s: State, srv: int, peer: int) -> list[State]:
        """AcceptFetchRequest: the leader answers a member's fetch with the next record.

        At a valid position; none at the end of its log."""
        out = []
        for m in NET.of(s, FETCH_REQ, dest=srv, source=peer):
            if (
                not self.receivable_equal_epoch(s, m)
                or s.state[srv] != LEADER
                or peer not in s.config[srv].members
                or not valid_fetch_position(s, srv, m)
            ):
                continue
            log = s.log[srv]
            entries = () if m.fetch_offset > len(log) else (log[m.fetch_offset - 1],)
            if is_peer_voter(s, srv, peer):
                u = self.handle_voter_fetch(s, srv, peer, m, entries)
            else:
                u = self.handle_observer_fetch(s, srv, peer, m, entries)
            if u is not None:
                out.append(s.replace(**u))
        return out

    @action(srv="all_servers", peer="all_servers", fair_each="weak")
    @on("server {srv}", receives="server {peer}", message="FetchResponse")
    def handle_fetch_response(self, s: State, srv: int, peer: int) -> list[State]:
        """HandleFetchResponse: a server takes the answer to its pending fetch.

        An error, a higher epoch or a newly known leader may change its state
        (MaybeHandleCommonResponse); else it appends the record or truncates a diverging
        log, switches to the log's latest configuration and takes the HWM."""
        out = []
        for m in NET.of(s, FETCH_RES, dest=srv, source=peer):
            if s.state[srv] == DEAD_NO_STATE or s.fetch_state[srv].pending_fetch != m.correlation:
                continue
            new_state = self.maybe_handle_common_response(
                s, srv, m.leader, m.replica_epoch, m.error
            )
            u: dict = {}
            if new_state.handled:
                u.update(apply_state(s, srv, new_state))
            else:
                log = s.log[srv]
                if m.result == OK:
                    new_log = log + (m.entries[0],) if m.entries else log
                elif m.result == DIVERGING:
                    new_log = truncate_log(s, srv, m)
                else:
                    new_log = log
                entry = most_recent_reconfig_entry(new_log)
                curr_config = config_for(entry.offset, entry.entry, m.hwm)
                u.update(self.maybe_switch_configurations(s, srv, curr_config, new_state))
                u["log"] = put(s.log, srv, new_log)
                if m.result == OK:
                    u["hwm"] = put(s.hwm, srv, m.hwm)
            u["fetch_state"] = put(s.fetch_state, srv, update_fetch_state_with_fetch_res(s, srv, m))
            out.append(s.replace(**u, **NET.discard(s, m)))
        return out

    def maybe_switch_configurations(
        self, s: State, srv: int, curr_config: Record, new_state: Record
    ) -> dict:
        """MaybeSwitchConfigurations: the server takes the log's latest configuration; one
        that becomes an observer, or a voter, is a follower."""
        u = {
            "leader": put(s.leader, srv, new_state.leader),
            "current_epoch": put(s.current_epoch, srv, new_state.epoch),
            "config": put(s.config, srv, curr_config),
        }
        voter = self.is_voter(s, srv)
        if voter != (srv in curr_config.members):
            u["state"] = put(s.state, srv, FOLLOWER)
            u["votes_recv"] = put(s.votes_recv, srv, frozenset())
        else:
            u["state"] = put(s.state, srv, new_state.state)
            u["votes_recv"] = put(s.votes_recv, srv, new_state.votes_recv)
        u.update(update_follower_end_offset_map(s, srv, curr_config.members))
        return u

    # -- Reconfiguration --------------------------------------------------------------

    # Switched on with AddVoter: a new server only observes unless it is added (a run that
    # starts servers with no AddVoter allowed gets vacuity's warning that this one fired).
    @action(host="host_seq", any_leader="all_servers", switch="max_add_reconfigs")
    @on("server {any_leader}")
    def start_new_server(self, s: State, host: str, any_leader: int) -> State | None:
        """StartNewServer: a server with a blank disk starts as an observer.

        With the configuration of a leader, to which it sends its first Fetch (the model's
        shortcut)."""
        started = s.server_ids
        if len(started) >= self.max_spawned_servers or any_leader not in started:
            return None
        if s.state[any_leader] != LEADER:
            return None
        new = max(started) + 1
        disk_id = s.aux_disk_id_gen + 1
        msg = message(
            FETCH_REQ, new, any_leader, 0, fetch_offset=0, last_fetched_epoch=0, observer=True
        )
        return s.replace(
            aux_disk_id_gen=disk_id,
            server_ids=put(started, new, Record(host=host, disk_id=disk_id)),
            config=put(s.config, new, s.config[any_leader]),
            state=put(s.state, new, UNATTACHED),
            current_epoch=put(s.current_epoch, new, 0),
            leader=put(s.leader, new, None),
            voted_for=put(s.voted_for, new, None),
            fetch_state=put(s.fetch_state, new, BLANK_FETCH_STATE),
            pending_ack=put(s.pending_ack, new, frozenset()),
            votes_recv=put(s.votes_recv, new, frozenset()),
            flwr_end_offset=put(s.flwr_end_offset, new, EMPTY_MAP),
            log=put(s.log, new, ()),
            hwm=put(s.hwm, new, 0),
            **NET.send(s, msg),
        )

    def may_reconfigure(self, s: State, srv: int, target: int, counter: str, limit: int) -> bool:
        """What both reconfigurations need first: fewer of them so far (the `counter` of
        aux_ctrs) than `limit`, and both servers started."""
        return s.aux_ctrs[counter] < limit and srv in s.server_ids and target in s.server_ids

    def add_voter_check(self, s: State, srv: int, add_server: int) -> str:
        """AddVoterCheck"""
        member = add_server in s.config[srv].members
        return reconfig_check(s, srv, ALREADY_MEMBER if member else None)

    @action(srv="all_servers", add_server="all_servers", switch="max_add_reconfigs")
    @on("server {srv}", sends="server {add_server}", message="BeginQuorumEpoch")
    def accept_add_voter_request(self, s: State, srv: int, add_server: int) -> State | None:
        """AcceptAddVoterRequest: a leader appends an AddVoterCommand.

        It needs a committed entry of its epoch and no pending reconfiguration, and uses the
        new configuration at once."""
        if (
            not self.may_reconfigure(s, srv, add_server, "add_reconfig_ctr", self.max_add_reconfigs)
            or self.add_voter_check(s, srv, add_server) != OK
            or not self.liveness_add_voter_liveness_condition(s, srv, add_server)
            or len(s.config[srv].members) >= self.max_cluster_size
        ):
            return None
        members = s.config[srv].members | {add_server}
        return s.replace(
            **append_reconfiguration(s, srv, ADD_VOTER, new=add_server, members=members),
            **NET.send(s, message(BEGIN_QUORUM, srv, add_server, s.current_epoch[srv])),
            aux_ctrs=s.aux_ctrs.replace(add_reconfig_ctr=s.aux_ctrs.add_reconfig_ctr + 1),
        )

    def remove_voter_check(self, s: State, srv: int, peer: int) -> str:
        """RemoveVoterCheck"""
        member = peer in s.config[srv].members
        return reconfig_check(s, srv, None if member else UNKNOWN_MEMBER)

    @action(srv="all_servers", remove_server="all_servers", switch="max_remove_reconfigs")
    @on("server {srv}")
    def accept_remove_voter_request(self, s: State, srv: int, remove_server: int) -> State | None:
        """AcceptRemoveVoterRequest: a leader appends a RemoveVoterCommand.

        It uses the new configuration at once; if it removes itself, it leads on as an
        observer until the command is committed, then resigns."""
        if (
            not self.may_reconfigure(
                s, srv, remove_server, "remove_reconfig_ctr", self.max_remove_reconfigs
            )
            or self.remove_voter_check(s, srv, remove_server) != OK
            or not self.liveness_remove_voter_liveness_condition(s, srv, remove_server)
            or len(s.config[srv].members) <= self.min_cluster_size
        ):
            return None
        members = s.config[srv].members - {remove_server}
        return s.replace(
            **append_reconfiguration(s, srv, REMOVE_VOTER, old=remove_server, members=members),
            aux_ctrs=s.aux_ctrs.replace(remove_reconfig_ctr=s.aux_ctrs.remove_reconfig_ctr + 1),
        )

    # ==================================================================================
    # Safety properties (the model's invariants; predicates in invariants/kraft_quorum.py)
    # ==================================================================================

    def client_view(self, s: State) -> State:
        """What a client sees of the quorum: the values written, committed and failed."""
        return Record(sent=s.inv_sent, acked=s.inv_pos_acked, failed=s.inv_neg_acked)

    client_writes = refines(
        ClientWrites,
        "client_view",
        "Each write is answered once, committed or failed (specs/client_writes.py)",
        constants=lambda self: {"values": self.values},
    )

    no_illegal_state = invariant(props.no_illegal_state)
    log_matching = invariant(props.log_matching)
    election_safety = invariant(props.election_safety)
    leader_completeness = invariant(props.leader_completeness)
    durability = invariant(props.durability)
    valid_roles_and_states = invariant(props.valid_roles_and_states)

    @terminal
    def stopped(self, s: State) -> bool:
        """Where the model stops (TLC runs it with -deadlock).

        At the epoch bound, a prospective voter can no longer conclude its pre-vote; with
        test_liveness, a quorum whose followers have caught up stops fetching (no fetch
        would help)."""
        if any(
            st == PROSPECTIVE and not self.within_epoch_limit(s, i) for i, st in s.state.items()
        ):
            return True
        return self.test_liveness and not s.net_messages

    # What each fault makes happen (each is reached in the small configurations).
    @reachable(switch="max_disruptive_election_triggers")
    def a_new_leader_is_elected(self, s: State) -> bool:
        """A leader of a later epoch than the first (an election ran to its end)."""
        return any(st == LEADER and s.current_epoch[i] > 1 for i, st in s.state.items())

    @reachable(switch="max_disruptive_election_triggers")
    def a_voter_is_prospective(self, s: State) -> bool:
        """A voter asks for pre-votes."""
        return PROSPECTIVE in s.state.values()

    @reachable(switch="max_perm_crashes")
    def a_server_is_dead(self, s: State) -> bool:
        """A voter crashed and lost its disk."""
        return DEAD_NO_STATE in s.state.values()

    @reachable(switch="max_restarts")
    def a_leader_resigned(self, s: State) -> bool:
        """A leader resigned (restarted, or lost its majority)."""
        return RESIGNED in s.state.values()

    @reachable(switch="max_connectivity_changes")
    def a_pair_is_disconnected(self, s: State) -> bool:
        """Two servers cannot talk."""
        return not all(s.net_connectivity.values())

    # ==================================================================================
    # Liveness (the model's, under its Fairness: weak fairness of each server's election,
    # leader and message steps, `fair_each="weak"` above; faults, client writes and
    # reconfigurations are not fair). TLA+'s \A v: P(v) ~> Q(v) is a leads_to with a
    # domain: one property per value or server.
    # ==================================================================================

    def sent(self, s: State, v: str) -> bool:
        return self.test_liveness and v in s.inv_sent

    def acked(self, s: State, v: str) -> bool:
        return (v in s.inv_neg_acked) != (v in s.inv_pos_acked)

    values_eventually_acked = leads_to(
        sent,
        acked,
        "ValuesEventuallyAcked: a written value is acknowledged, positively or negatively.",
        v="value_set",
    )

    def prospective(self, s: State, i: int) -> bool:
        return self.test_liveness and i in s.state and s.state[i] == PROSPECTIVE

    def left_or_cut_off(self, s: State, i: int) -> bool:
        return not (i in s.state and s.state[i] == PROSPECTIVE) or not any(
            i != j and s.state[j] != PROSPECTIVE and connected(s, i, j) for j in s.config[i].members
        )

    not_stuck_in_prospective = leads_to(
        prospective,
        left_or_cut_off,
        "NotStuckInProspective: a server leaves Prospective, unless cut off from every member"
        " that is not prospective.",
        i="all_servers",
    )

    def no_functional_leader(self, s: State) -> bool:
        return self.test_liveness and not props.functional_leader_exists(s)

    eventually_leader_elected = leads_to(
        no_functional_leader,
        props.functional_leader_exists,
        "EventuallyLeaderElected: with no leader a majority of voters follow, one comes.",
    )

    @always_eventually
    def reconfiguration_not_stuck(self, s: State) -> bool:
        """ReconfigurationNotStuck: for each reconfiguration id the run may use, again and
        again a current leader has it committed, or not in its log (members it cannot reach,
        and dead ones, aside)."""
        return not self.test_liveness or all(
            props.config_all_or_nothing(s, config_id)
            for config_id in range(1, self.max_add_reconfigs + self.max_remove_reconfigs + 1)
        )

    # ==================================================================================
    # The model's operators over one server's state
    # ==================================================================================

    def is_voter(self, s: State, srv: int) -> bool:
        return props.is_voter(s, srv)

    def is_observer(self, s: State, srv: int) -> bool:
        return s.state[srv] != DEAD_NO_STATE and srv not in s.config[srv].members

    def aux_under_disruption_limit(self, s: State) -> bool:
        return s.aux_ctrs.disruptive_ctr < self.max_disruptive_election_triggers

    def aux_inc_timeout_ctrs(self, s: State, is_disruptive: bool) -> Record:
        ctrs = s.aux_ctrs
        return ctrs.replace(
            prevote_ctr=ctrs.prevote_ctr + 1 if self.test_liveness else ctrs.prevote_ctr,
            disruptive_ctr=ctrs.disruptive_ctr + 1 if is_disruptive else ctrs.disruptive_ctr,
        )

    def fetch_can_timeout(self, s: State, srv: int) -> bool:
        """FetchCanTimeout: the last fetch from the leader failed, or the pending one (or its
        response) was lost."""
        fs = s.fetch_state[srv]
        res = fs.last_fetch_res
        if res is not None and res.error is not None and res.peer == s.leader[srv]:
            return True
        return fs.pending_fetch is not None and fetch_request_or_res_lost(s, fs.pending_fetch)

    def has_consistent_leader(self, s: State, srv: int, leader_id, epoch: int) -> bool:
        """HasConsistentLeader: the server and its peer agree on who leads the epoch."""
        if leader_id == srv:
            if s.current_epoch[srv] == epoch and (
                not self.is_voter(s, srv) or s.state[srv] in (RESIGNED, PROSPECTIVE, UNATTACHED)
            ):
                return True
            return s.state[srv] == LEADER
        return (
            epoch != s.current_epoch[srv]
            or leader_id is None
            or s.leader[srv] is None
            or s.leader[srv] == leader_id
        )

    def no_transition(self, s: State, srv: int) -> Record:
        return election_state(
            s.state[srv],
            s.current_epoch[srv],
            s.leader[srv],
            s.voted_for[srv],
            votes_recv=s.votes_recv[srv],
        )

    def transition_to_unattached_add_vote(self, s, srv, epoch, state0, vote_recipient) -> Record:
        return add_vote(UNATTACHED, epoch, state0, frozenset(), vote_recipient)

    def boot_time_unattached(self, s: State, srv: int) -> Record:
        # a vote of this epoch survives the restart
        return election_state(UNATTACHED, s.current_epoch[srv], None, s.voted_for[srv])

    def transition_to_unattached(self, s: State, srv: int, epoch: int, leader_id) -> Record:
        """TransitionToUnattached: a higher epoch with no known leader, or (KIP-996) a
        prospective voter that did not win, in its own epoch."""
        cur = s.current_epoch[srv]
        if epoch < cur or (epoch == cur and s.state[srv] != PROSPECTIVE):
            return SET_ILLEGAL_STATE
        return election_state(
            UNATTACHED, epoch, leader_id, None if epoch > cur else s.voted_for[srv]
        )

    def transition_to_follower(self, s: State, srv: int, leader_id, epoch: int) -> Record:
        cur = s.current_epoch[srv]
        if leader_id == srv or epoch < cur or (epoch == cur and s.state[srv] in (LEADER, FOLLOWER)):
            return SET_ILLEGAL_STATE
        return election_state(FOLLOWER, epoch, leader_id, None if epoch > cur else s.voted_for[srv])

    def transition_to_leader(self, s: State, srv: int) -> Record:
        if s.state[srv] != CANDIDATE:
            return SET_ILLEGAL_STATE
        return election_state(LEADER, s.current_epoch[srv], srv, None)

    def transition_to_resigned(self, s: State, srv: int) -> Record:
        if s.state[srv] != LEADER:
            return SET_ILLEGAL_STATE
        return election_state(RESIGNED, s.current_epoch[srv], srv, None)  # it still names itself

    def transition_to_prospective(self, s: State, srv: int, epoch: int) -> Record:
        """TransitionToProspective: it votes for itself at once (its pre-vote requests leave
        in the same step); it keeps the leader it knew and any vote of the epoch."""
        if s.state[srv] in (LEADER, PROSPECTIVE):
            return SET_ILLEGAL_STATE
        return election_state(
            PROSPECTIVE, epoch, s.leader[srv], s.voted_for[srv], votes_recv=frozenset({srv})
        )

    def transition_to_prospective_add_vote(self, s, srv, epoch, state0, vote_recipient) -> Record:
        return add_vote(PROSPECTIVE, epoch, state0, state0.votes_recv, vote_recipient)

    def transition_to_candidate(self, s: State, srv: int) -> Record:
        if s.state[srv] != PROSPECTIVE:
            return SET_ILLEGAL_STATE
        return election_state(
            CANDIDATE, s.current_epoch[srv] + 1, None, srv, votes_recv=frozenset({srv})
        )

    def maybe_transition(self, s: State, srv: int, leader_id, epoch: int) -> Record:
        """MaybeTransition: an inconsistent leader is illegal; a higher epoch makes the server
        a follower (leader known) or unattached; a leader it did not know, a follower."""
        if not self.has_consistent_leader(s, srv, leader_id, epoch):
            return SET_ILLEGAL_STATE
        if epoch > s.current_epoch[srv]:
            if leader_id is None:
                return self.transition_to_unattached(s, srv, epoch, None)
            return self.transition_to_follower(s, srv, leader_id, epoch)
        if leader_id is not None and s.leader[srv] is None:
            return self.transition_to_follower(s, srv, leader_id, epoch)
        return self.no_transition(s, srv)

    def maybe_handle_common_response(self, s: State, srv: int, leader_id, epoch, error) -> Record:
        """MaybeHandleCommonResponse: `handled` says the response is dealt with (a stale
        epoch, a higher one or an error); else the caller goes on with it."""
        cur = s.current_epoch[srv]
        if epoch < cur:
            return with_handled(self.no_transition(s, srv), True, error)
        if epoch > cur or error in (FENCED_LEADER_EPOCH, NOT_LEADER):
            return with_handled(self.maybe_transition(s, srv, leader_id, epoch), True, error)
        if leader_id is not None and s.leader[srv] is None:
            return with_handled(
                self.transition_to_follower(s, srv, leader_id, epoch), error is not None, error
            )
        return with_handled(self.no_transition(s, srv), False, error)

    # -- The liveness module's guards (only with test_liveness) ------------------------

    def liveness_elections_can_progress(self, s: State, conn) -> bool:
        """LIVENESS_ElectionsCanProgress: some live voter is connected to a majority of its
        members (those of its epoch or an older one)."""
        if not self.test_liveness:
            return True
        return any(
            s.state[i] != DEAD_NO_STATE
            and self.is_voter(s, i)
            and self.has_majority_connection_to_members(s, i, conn)
            for i in s.server_ids
        )

    def has_majority_connection_to_members(self, s: State, srv: int, conn) -> bool:
        members = s.config[srv].members
        count = sum(
            1
            for m in members
            if srv != m
            and s.current_epoch[srv] >= s.current_epoch[m]
            and s.state[m] != DEAD_NO_STATE
            and any(srv in pair and m in pair for pair in conn)
        )
        return count >= len(members) // 2

    def liveness_valid_peer(self, s: State, srv: int, peer: int) -> bool:
        """LIVENESS_ValidPeer: fetch from a connected voter that knows a leader."""
        if not self.test_liveness:
            return True
        return self.is_voter(s, peer) and s.leader[peer] is not None and connected(s, srv, peer)

    def liveness_helps_make_progress(self, s: State, srv: int, peer: int, fetch_offset) -> bool:
        """LIVENESS_HelpsMakeProgress: only fetches that can change something."""
        if not self.test_liveness:
            return True
        if s.log[srv] != s.log[peer] or s.hwm[srv] != s.hwm[peer]:
            return True
        if s.state[peer] == LEADER:
            flwr = s.flwr_end_offset[peer]
            if srv not in flwr or flwr[srv] < fetch_offset:
                return True
        return s.current_epoch[srv] != s.current_epoch[peer] or s.state[peer] != LEADER

    def liveness_in_prevote_cycle(self, s: State, srv: int, ldr: int) -> bool:
        """LIVENESS_InPrevoteCycle: cut off from its leader, which a peer that refused it a
        pre-vote still reaches."""
        if not self.test_liveness:
            return False
        if not self.is_voter(s, srv) or connected(s, srv, ldr):
            return False
        return any(
            m.type == VOTE_RES
            and m.pre_vote
            and not m.vote_granted
            and m.leader == ldr
            and m.replica_epoch == s.current_epoch[srv]
            and m.dest == srv
            and connected(s, m.source, ldr)
            for m in s.net_messages_processed
        )

    def liveness_maybe_not_same_peer_again(self, s: State, srv: int, peer: int) -> bool:
        if not self.test_liveness:
            return True
        res = s.fetch_state[srv].last_fetch_res
        if res is not None and res.error == NOT_LEADER:
            return res.peer != peer
        return True

    def liveness_add_voter_liveness_condition(self, s: State, srv: int, add_server: int) -> bool:
        """LIVENESS_AddVoterLivenessCondition: the leader keeps a connected majority."""
        if not self.test_liveness:
            return True
        members = s.config[srv].members
        connected_members = num_connections(s, srv, members) + 1
        add_connected = 1 if connected(s, srv, add_server) else 0
        return connected_members + add_connected > (len(members) + 1) // 2

    def liveness_remove_voter_liveness_condition(
        self, s: State, srv: int, remove_server: int
    ) -> bool:
        """LIVENESS_RemoveVoterLivenessCondition: the leader keeps a connected majority."""
        if not self.test_liveness:
            return True
        members = s.config[srv].members
        count = sum(
            1
            for peer in members
            if peer != remove_server and self.is_voter(s, peer) and connected(s, srv, peer)
        )
        return count > len(members) // 2


# -- Helpers of the functions module ------------------------------------------------------


def message(kind: str, source: int, dest: int, epoch: int, **fields: object) -> Record:
    """A message of type `kind` from `source` to `dest` in `epoch` (the model's records all
    carry the four)."""
    return Record(type=kind, replica_epoch=epoch, source=source, dest=dest, **fields)


def fetch_response(s: State, srv: int, peer: int, m: Record, **fields: object) -> Record:
    """FetchResponse from `srv` to `peer`, answering `m` in `srv`'s epoch; `leader` the
    leader `srv` knows unless given."""
    fields.setdefault("leader", s.leader[srv])
    return message(FETCH_RES, srv, peer, s.current_epoch[srv], correlation=m, **fields)


def replied(s: State, m: Record, response: Record) -> list[State]:
    """The step that handles `m` and sends `response` (none if the network cannot)."""
    net = NET.reply(s, m, response)
    return [] if net is None else [s.replace(**net)]


def reconfig_check(s: State, srv: int, membership_error: str | None) -> str:
    """What AddVoterCheck and RemoveVoterCheck share, in their order: OK or the error;
    `membership_error` the one the target's membership gives (None: none)."""
    if s.state[srv] != LEADER:
        return NOT_LEADER
    if membership_error is not None:
        return membership_error
    if has_pending_config_command(s, srv):
        return RECONFIG_IN_PROGRESS
    if not leader_has_committed_offsets_in_current_epoch(s, srv):
        return LEADER_NOT_READY
    return OK


def append_reconfiguration(s: State, srv: int, command: str, **value: object) -> dict:
    """A leader appends a reconfiguration `command` (the next configuration id, and `value`)
    and takes its configuration at once: the changes to its log, configuration and map of
    its followers' end offsets."""
    entry = Record(
        command=command,
        epoch=s.current_epoch[srv],
        value=Record(id=s.config[srv].id + 1, **value),
    )
    new_log = s.log[srv] + (entry,)
    new_config = config_for(len(new_log), entry, s.hwm[srv])
    return {
        "log": put(s.log, srv, new_log),
        "config": put(s.config, srv, new_config),
        **update_follower_end_offset_map(s, srv, new_config.members),
    }


def election_state(state: str, epoch: int, leader, voted_for, votes_recv=frozenset()) -> Record:
    """A server's role in an epoch, the leader it knows, its vote and the votes it received
    (the model's five per-server election variables, as one record)."""
    return Record(
        state=state, epoch=epoch, leader=leader, votes_recv=votes_recv, voted_for=voted_for
    )


def add_vote(role: str, epoch: int, state0: Record, votes_recv, vote_recipient) -> Record:
    """What TransitionToUnattachedAddVote and TransitionToProspectiveAddVote share: a server
    that is `role` in `epoch` and has not voted casts its vote (anything else is illegal)."""
    if state0.epoch != epoch or state0.state != role or state0.voted_for is not None:
        return SET_ILLEGAL_STATE
    return election_state(role, epoch, state0.leader, vote_recipient, votes_recv=votes_recv)


def with_handled(state: Record, handled: bool, error) -> Record:
    """`state @@ [handled |-> ..., error |-> ...]`"""
    return Record(dict(state.items(), handled=handled, error=error))


def apply_state(s: State, srv: int, ns: Record) -> dict:
    """ApplyState: the server's state, leader, epoch, votes and vote from a transition."""
    return {
        "state": put(s.state, srv, ns.state),
        "leader": put(s.leader, srv, ns.leader),
        "current_epoch": put(s.current_epoch, srv, ns.epoch),
        "votes_recv": put(s.votes_recv, srv, ns.votes_recv),
        "voted_for": put(s.voted_for, srv, ns.voted_for),
    }


def reset_fetch_state_if_follower(s: State, srv: int) -> dict:
    return {"fetch_state": put(s.fetch_state, srv, BLANK_FETCH_STATE)}


def reset_follower_fetch_state_if_leader(s: State, srv: int, members) -> dict:
    return {"flwr_end_offset": put(s.flwr_end_offset, srv, Record({k: 0 for k in sorted(members)}))}


def update_follower_end_offset_map(s: State, srv: int, new_members) -> dict:
    """UpdateFollowerEndOffsetMap: members kept keep their end offset, new ones start at 0."""
    old = s.flwr_end_offset[srv]
    return {
        "flwr_end_offset": put(
            s.flwr_end_offset,
            srv,
            Record({k: old.get(k, 0) for k in sorted(new_members)}),
        )
    }


def fail_any_pending_writes_if_leader(s: State, srv: int) -> dict:
    """FailAnyPendingWritesIfLeader: pending values are acknowledged negatively."""
    return {
        "pending_ack": put(s.pending_ack, srv, frozenset()),
        "inv_neg_acked": s.inv_neg_acked | s.pending_ack[srv],
    }


def update_fetch_state_with_fetch_res(s: State, srv: int, res: Record) -> Record:
    old = s.fetch_state[srv]
    return Record(
        pending_fetch=None,
        last_fetch_res=Record(peer=res.source, error=res.error),
        has_fetch_success=old.has_fetch_success or res.error is None,
    )


def majority_count(ensemble) -> int:
    return len(ensemble) // 2 + 1


def is_quorum(votes: frozenset, ensemble: frozenset) -> bool:
    """votes \\in Quorum(ensemble): a subset of the ensemble, more than half of it."""
    return votes <= ensemble and len(votes) * 2 > len(ensemble)


def last_epoch(log: tuple) -> int:
    return log[-1].epoch if log else 0


def compare_entries(offset1: int, epoch1: int, offset2: int, epoch2: int) -> int:
    """CompareEntries: epoch first, then offset."""
    if epoch1 > epoch2 or (epoch1 == epoch2 and offset1 > offset2):
        return 1
    if epoch1 == epoch2 and offset1 == offset2:
        return 0
    return -1


def highest_common_offset(s: State, srv: int, end_offset_for_epoch: int, epoch: int) -> Record:
    log = s.log[srv]
    common = [
        o
        for o in range(1, len(log) + 1)
        if compare_entries(o, log[o - 1].epoch, end_offset_for_epoch, epoch) <= 0
    ]
    if not common:
        return Record(offset=0, epoch=0)
    return Record(offset=max(common), epoch=log[max(common) - 1].epoch)


def truncate_log(s: State, srv: int, m: Record) -> tuple:
    """TruncateLog: up to the highest entry at or below the diverging position."""
    hco = highest_common_offset(s, srv, m.diverging_end_offset - 1, m.diverging_epoch)
    return s.log[srv][: hco.offset]


def end_offset_for_epoch(s: State, srv: int, last_fetched_epoch: int) -> Record:
    """EndOffsetForEpoch: the highest offset of an epoch at or below the given one."""
    log = s.log[srv]
    offsets = [o for o in range(1, len(log) + 1) if log[o - 1].epoch <= last_fetched_epoch]
    if not offsets:
        return Record(offset=0, epoch=0)
    return Record(offset=max(offsets), epoch=log[max(offsets) - 1].epoch)


def valid_fetch_position(s: State, srv: int, m: Record) -> bool:
    if m.fetch_offset == 1:
        return True
    end = end_offset_for_epoch(s, srv, m.last_fetched_epoch)
    return m.fetch_offset <= end.offset + 1 and m.last_fetched_epoch == end.epoch


def is_peer_voter(s: State, srv: int, peer: int) -> bool:
    return s.state[srv] != DEAD_NO_STATE and peer in s.config[srv].members


def has_pending_config_command(s: State, srv: int) -> bool:
    return not s.config[srv].committed


def most_recent_reconfig_entry(log: tuple) -> Record:
    """MostRecentReconfigEntry: the last configuration command (the model's CHOOSE has none
    to choose from in an empty log: TLC stops with an error, and so does this)."""
    offset = max(o for o in range(1, len(log) + 1) if log[o - 1].command in CONFIG_COMMANDS)
    return Record(offset=offset, entry=log[offset - 1])


def config_for(offset: int, entry: Record, ci: int) -> Record:
    """ConfigFor: the configuration of a reconfiguration entry, committed below `ci`."""
    return Record(id=entry.value.id, members=entry.value.members, committed=ci >= offset)


def leader_has_committed_offsets_in_current_epoch(s: State, srv: int) -> bool:
    epoch, hwm = s.current_epoch[srv], s.hwm[srv]
    return any(e.epoch == epoch and hwm >= o for o, e in enumerate(s.log[srv], 1))


# -- The network (the TLA+ module `network`) ----------------------------------------------


def connected(s: State, a: int, b: int) -> bool:
    """Connected: two distinct servers whose pair is connected."""
    return a != b and s.net_connectivity.get(frozenset((a, b))) is True


NET = Network("net_messages", "net_messages_processed", connected)  # the TLA+ `network`


def num_connections(s: State, target: int, servers) -> int:
    return sum(1 for k in servers if connected(s, target, k))


def connected_pairs_without_server(s: State, srv: int) -> frozenset:
    return frozenset(p for p, up in s.net_connectivity.items() if srv not in p and up)


def change_connectivity(s: State, conn: frozenset) -> dict:
    """ChangeConnectivity: the pairs in `conn` are connected, the rest not; messages between
    servers of no connected pair are dropped (not processed)."""
    return {
        "net_connectivity": Record({p: p in conn for p in s.net_connectivity}),
        "net_messages": frozenset(
            m for m in s.net_messages if any(m.source in p and m.dest in p for p in conn)
        ),
        "net_connectivity_ctr": s.net_connectivity_ctr + 1,
    }


def disconnect_server(s: State, srv: int) -> dict:
    """DisconnectServer: the server's pairs go down; its messages either way are dropped."""
    return {
        "net_connectivity": Record(
            {p: False if srv in p else up for p, up in s.net_connectivity.items()}
        ),
        "net_messages": frozenset(m for m in s.net_messages if m.source != srv and m.dest != srv),
    }


def has_inflight_vote_req(s: State, srv: int, type_: str, pre_vote: bool) -> bool:
    return any(
        m.type == type_ and m.pre_vote == pre_vote and m.source == srv for m in s.net_messages
    )


def has_inflight_vote_res(s: State, srv: int, type_: str, pre_vote: bool) -> bool:
    return any(m.type == type_ and m.pre_vote == pre_vote and m.dest == srv for m in s.net_messages)


def not_lost_req_with_replica_epoch(s: State, source, dest, type_, epoch) -> bool:
    """NotLostReqWithReplicaEpoch: such a request is in flight or was processed."""
    return any(
        m.type == type_ and m.replica_epoch == epoch and m.source == source and m.dest == dest
        for m in chain(s.net_messages, s.net_messages_processed)
    )


def fetch_request_or_res_lost(s: State, req: Record) -> bool:
    """FetchRequestOrResLost: neither the request nor its response is in flight."""
    return req not in s.net_messages and not any(
        m.type == FETCH_RES and m.correlation == req for m in s.net_messages
    )
