"""The shared model of a KRaft quorum: pull-based Raft among a few voters (KIP-595, on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

Each voter has an epoch, a role (follower, prospective, candidate, leader), the leader it knows,
its vote, and a log of records (the epoch of each). Followers fetch from the leader; a fetch
that reaches the leader keeps the follower's fetch timer alive (`heard`). When the timer
expires a voter starts an election; a leader that cannot reach a majority resigns (the
progress timeout of KIP-595). RPCs are atomic request-and-response steps between two voters
that can reach each other. Faults: a voter is cut off from all others (`isolate_voter`,
bounded) and later rejoins (`heal_voter`, never bounded).

History variables for the invariants: `elected` (every (epoch, leader) pair ever elected),
`committed` and `commit_epoch` (the longest log prefix ever committed, and the epoch of the
leader that committed it), `isolated_epoch` (each cut-off voter's epoch when it was cut off),
`zombies` (voters that came back from a partition with an epoch they raised while cut off) and
`disrupted` (set when a zombie's vote request made a voter abandon a leader that a majority
was still following).

Fairness (for temporal properties, see specs/light/kip996.py), weak and per voter or pair of voters:
every voter's timers expire (`fetch_timeout`, `resign`, `start_election`), voters that can
reach each other exchange Vote and BeginQuorumEpoch requests, and a cut-off voter rejoins
(`heal_voter`). Faults, Fetch and client writes are not assumed to happen.

Subclasses (specs/light/kip996.py, specs/light/kip996_read.py) add what their KIP changes.
"""

from __future__ import annotations

from checker import Record, Spec, State, action, constant, on, put, reachable, update
from checker.symmetry import Permutation
from specs.logs import common_prefix

FOLLOWER, PROSPECTIVE, CANDIDATE, LEADER = "follower", "prospective", "candidate", "leader"


class Raft(Spec):
    """KRaft: pull-based Raft among the voters of the metadata quorum."""

    voters = constant(3, "voters in the quorum")
    max_epoch = constant(3, "epochs an election may reach (bounds elections)")
    max_records = constant(1, "records a log may hold")
    max_isolations = constant(1, "fault bound: voters cut off from the quorum")

    # What the initial state does not show: no known leader, no vote.
    leader_id: tuple[int | None, ...]
    voted_for: tuple[int | None, ...]

    # Voters are interchangeable: every action takes any voter, none prefers an id (voter 0
    # starting as the leader is fine: only the behaviour must be symmetric, not the start).
    symmetry = ("voter_ids",)

    @property
    def voter_ids(self) -> range:
        return range(self.voters)

    def permute(self, s: State, p: Permutation) -> State:
        """s with every voter id v renamed p(v) (a subclass adding variables extends it)."""
        return s.replace(
            epoch=p.indexed(s.epoch),
            role=p.indexed(s.role),
            leader_id=p.indexed(s.leader_id, p),
            voted_for=p.indexed(s.voted_for, p),
            votes=p.indexed(s.votes, p.set),
            heard=p.indexed(s.heard),
            log=p.indexed(s.log),
            isolated=p.set(s.isolated),
            elected=frozenset((epoch, p(leader)) for epoch, leader in s.elected),
            isolated_epoch=p.indexed(s.isolated_epoch),
            zombies=p.set(s.zombies),
        )

    @property
    def majority(self) -> int:
        return self.voters // 2 + 1

    def init(self) -> State:
        n = self.voters
        return Record(
            epoch=(1,) * n,
            role=(LEADER,) + (FOLLOWER,) * (n - 1),
            leader_id=(0,) * n,  # the leader each voter knows in its epoch (None: unknown)
            voted_for=(0,) * n,
            votes=(frozenset(),) * n,  # votes (or pre-votes) granted to this voter
            heard=(True,) * n,  # its fetch timer has not expired: it has a live leader
            log=((),) * n,
            isolated=frozenset(),
            # History variables.
            elected=frozenset({(1, 0)}),
            committed=(),
            commit_epoch=0,
            isolated_epoch=(None,) * n,
            zombies=frozenset(),
            disrupted=False,
            faults=Record(isolations=0),
        )

    # -- faults: network partitions ---------------------------------------------------------
    # (Elections follow a voter cut off: with max_isolations=0 their actions are off.)

    @action(n="voter_ids", switch="max_isolations")
    @on("voter {n}")
    def isolate_voter(self, s: State, n: int) -> State | None:
        """Fault: voter n is cut off from every other voter."""
        if n in s.isolated or s.faults.isolations >= self.max_isolations:
            return None
        return s.replace(
            isolated=s.isolated | {n},
            isolated_epoch=put(s.isolated_epoch, n, s.epoch[n]),
            faults=s.faults.replace(isolations=s.faults.isolations + 1),
        )

    @action(n="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {n}")
    def heal_voter(self, s: State, n: int) -> State | None:
        """Voter n can reach the others again."""
        if n not in s.isolated:
            return None
        raised = s.epoch[n] > s.isolated_epoch[n]
        return s.replace(
            isolated=s.isolated - {n},
            isolated_epoch=put(s.isolated_epoch, n, None),
            zombies=s.zombies | {n} if raised else s.zombies,
        )

    # -- timers -----------------------------------------------------------------------------

    @action(n="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {n}")
    def fetch_timeout(self, s: State, n: int) -> State | None:
        """n's fetch timer expires: it has not reached a leader of its epoch for too long.
        (Timers only expire when the leader is out of reach: a healthy quorum fetches in
        time.)"""
        if s.role[n] == LEADER or not s.heard[n] or self.reaches_its_leader(s, n):
            return None
        return s.replace(heard=put(s.heard, n, False))

    @action(n="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {n}")
    def resign(self, s: State, n: int) -> State | None:
        """A leader that a majority has not fetched from resigns (KIP-595's progress timeout)."""
        if s.role[n] != LEADER or len(self.reachable(s, n)) + 1 >= self.majority:
            return None
        return self.become_follower(s, n, s.epoch[n], None)

    @action(n="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {n}")
    def start_election(self, s: State, n: int) -> State | None:
        """n's election timer expires without a live leader: it becomes a candidate in the
        next epoch and votes for itself."""
        if s.role[n] == LEADER or s.heard[n] or s.epoch[n] >= self.max_epoch:
            return None
        return self.become_candidate(s, n)

    # -- RPCs -------------------------------------------------------------------------------

    @action(c="voter_ids", v="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {c}", calls="voter {v}", message="Vote")
    def request_vote(self, s: State, c: int, v: int) -> State | None:
        """Candidate c asks voter v for its vote in c's epoch."""
        if s.role[c] != CANDIDATE or c == v or v in s.votes[c] or not self.connected(s, c, v):
            return None
        if s.epoch[v] > s.epoch[c]:  # c learns of a newer epoch and steps down
            return self.become_follower(s, c, s.epoch[v], None)
        if s.epoch[v] < s.epoch[c]:
            s = self.observe_higher_epoch(s, v, s.epoch[c], c)
        if s.voted_for[v] not in (None, c) or not self.log_up_to_date(s, c, v):
            return s
        s = s.replace(voted_for=put(s.voted_for, v, c), votes=put(s.votes, c, s.votes[c] | {v}))
        return self.become_leader(s, c) if len(s.votes[c]) >= self.majority else s

    @action(l="voter_ids", n="voter_ids", fair_each="weak", switch="max_isolations")
    @on("voter {l}", calls="voter {n}", message="BeginQuorumEpoch")
    def begin_quorum_epoch(self, s: State, l: int, n: int) -> State | None:  # noqa: E741
        """Leader l tells voter n that it leads (or learns from n of a newer epoch)."""
        if s.role[l] != LEADER or l == n or not self.connected(s, l, n):
            return None
        if s.epoch[n] > s.epoch[l]:
            return self.become_follower(s, l, s.epoch[n], None)
        if s.epoch[n] == s.epoch[l] and s.leader_id[n] == l:
            return None
        return self.become_follower(s, n, s.epoch[l], l)

    @action(f="voter_ids")
    @on("voter {f}", calls="voter {s.leader_id[f]}", message="Fetch")
    def fetch(self, s: State, f: int) -> State | None:
        """Follower f fetches from its leader: it truncates a diverging suffix and gets one
        record; the leader commits what a majority holds from its own epoch."""
        if s.role[f] != FOLLOWER or not self.reaches_its_leader(s, f):
            return None
        leader = s.leader_id[f]
        theirs, mine = s.log[leader], s.log[f]
        keep = common_prefix(mine, theirs)
        s = s.replace(log=put(s.log, f, theirs[: keep + 1]), heard=put(s.heard, f, True))
        return self.advance_commit(s, leader)

    @action(n="voter_ids", switch="max_records")
    @on("voter {n}")
    def append_record(self, s: State, n: int) -> State | None:
        """The leader appends a record from a client in its epoch."""
        if s.role[n] != LEADER or len(s.log[n]) >= self.max_records:
            return None
        return update(s, "log", n, lambda log: log + (s.epoch[n],))

    # -- what happens (reachability properties: each holds somewhere) ------------------------

    @reachable(switch="max_isolations")
    def voter_cut_off(self, s: State) -> bool:
        """A voter is cut off from the others."""
        return bool(s.isolated)

    @reachable(switch="max_isolations")
    def new_leader_elected(self, s: State) -> bool:
        """A leader was elected after the first one."""
        return any(epoch > 1 for epoch, _ in s.elected)

    # -- helpers ----------------------------------------------------------------------------

    def connected(self, s: State, a: int, b: int) -> bool:
        return a not in s.isolated and b not in s.isolated

    def reachable(self, s: State, n: int) -> list[int]:
        return [m for m in self.voter_ids if m != n and self.connected(s, n, m)]

    def reaches_its_leader(self, s: State, n: int) -> bool:
        leader = s.leader_id[n]
        return (
            leader is not None
            and leader != n
            and s.role[leader] == LEADER
            and s.epoch[leader] == s.epoch[n]
            and self.connected(s, n, leader)
        )

    def log_up_to_date(self, s: State, c: int, v: int) -> bool:
        """c's log is at least as up to date as v's: last epoch, then length."""
        return _last_epoch_and_length(s.log[c]) >= _last_epoch_and_length(s.log[v])

    def leader_followed_by_majority(self, s: State, leader: int | None) -> bool:
        """A leader of its epoch whose fetchers (and itself) are a majority."""
        if leader is None or s.role[leader] != LEADER:
            return False
        followers = [
            m
            for m in self.voter_ids
            if m != leader
            and s.leader_id[m] == leader
            and s.heard[m]
            and s.epoch[m] == s.epoch[leader]
            and self.connected(s, m, leader)
        ]
        return len(followers) + 1 >= self.majority

    def observe_higher_epoch(self, s: State, v: int, epoch: int, sender: int) -> State:
        """v sees a request from a newer epoch and follows it with no known leader. If the
        sender is a zombie and v was following a leader that a majority still follows (or is
        that leader), the zombie has disrupted the quorum."""
        followed = s.leader_id[v] if s.role[v] != LEADER else v
        if sender in s.zombies and self.leader_followed_by_majority(s, followed):
            s = s.replace(disrupted=True)
        return self.become_follower(s, v, epoch, None)

    def become_follower(self, s: State, n: int, epoch: int, leader: int | None) -> State:
        new_epoch = epoch != s.epoch[n]
        if new_epoch:
            s = s.replace(zombies=s.zombies - {n})
        return s.replace(
            epoch=put(s.epoch, n, epoch),
            role=put(s.role, n, FOLLOWER),
            leader_id=put(s.leader_id, n, leader),
            voted_for=put(s.voted_for, n, None) if new_epoch else s.voted_for,
            votes=put(s.votes, n, frozenset()),
            heard=put(s.heard, n, leader is not None),
        )

    def become_candidate(self, s: State, n: int) -> State:
        if n not in s.isolated:  # a new epoch won in the open: no longer a zombie's
            s = s.replace(zombies=s.zombies - {n})
        return s.replace(
            epoch=put(s.epoch, n, s.epoch[n] + 1),
            role=put(s.role, n, CANDIDATE),
            leader_id=put(s.leader_id, n, None),
            voted_for=put(s.voted_for, n, n),
            votes=put(s.votes, n, frozenset({n})),
        )

    def become_leader(self, s: State, n: int) -> State:
        return s.replace(
            role=put(s.role, n, LEADER),
            leader_id=put(s.leader_id, n, n),
            votes=put(s.votes, n, frozenset()),
            elected=s.elected | {(s.epoch[n], n)},
        )

    def advance_commit(self, s: State, leader: int) -> State:
        """Raft's commit rule: the longest prefix of the leader's log that a majority holds,
        ending with a record of the leader's own epoch."""
        log = s.log[leader]
        for end in range(len(log), len(s.committed), -1):
            holders = sum(1 for m in self.voter_ids if s.log[m][:end] == log[:end])
            if holders >= self.majority and log[end - 1] == s.epoch[leader]:
                return s.replace(committed=log[:end], commit_epoch=s.epoch[leader])
        return s


def _last_epoch_and_length(log: tuple[int, ...]) -> tuple[int, int]:
    return (log[-1] if log else 0, len(log))
