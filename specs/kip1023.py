"""KIP-1023: follower fetch from tiered offset (the KIP on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

One partition of a topic with tiered storage. Broker 0 leads and never moves: its log runs from
the Log-Start-Offset to the log end, the part below the Local-Log-Start-Offset only in remote
storage, and its RLM task uploads committed segments (below the HWM) and remembers the last
tiered offset. Local retention deletes local segments once tiered; retention deletes the oldest
segment (remote and local), advancing the Log-Start-Offset.

Broker 1 is a new, empty follower. When its Fetch gets OFFSET_OUT_OF_RANGE or
OFFSET_MOVED_TO_TIERED_STORAGE it does what the KIP's ReplicaFetcher does: it lists the leader's
Log-Start-Offset and Earliest-Pending-Upload-Offset (EPUO, the offset after the last tiered
one), builds its auxiliary state (its leader epoch cache) for [Log-Start-Offset, EPUO) from the
remote segments, and fetches from the EPUO. The KIP's two corner cases:

- EPUO unknown (-1): nothing was uploaded yet, or the leader is newly elected and its RLM task
  has not learnt the last tiered offset. The follower lists the leader's Local-Log-Start-Offset:
  if it equals the Log-Start-Offset nothing was uploaded, and it fetches from there; otherwise
  it retries later (when the leader has learnt the offset).
- EPUO below the Log-Start-Offset: tiering was disabled, retention moved the Log-Start-Offset
  past the last tiered offset, and tiering was enabled again with nothing uploaded since. There
  is no valid remote segment: the follower replicates all the leader holds locally.

Each corner case is a rule (`handles_unknown_epuo`, `handles_epuo_below_log_start`), switched
off alone with `-D NAME=false`. With `fixed=False` the follower skips both. It takes -1 to
mean that nothing was uploaded, without the confirmation, so it starts its log where the
leader's local log starts, with no remote state: offsets that are only in remote storage are
lost to it (a gap). It uses an EPUO below the Log-Start-Offset as is; that only stalls it (the
remote segment holding EPUO - 1 is gone, so building the auxiliary state fails and it retries)
and loses nothing.

Faults (limit faults, never healing): a broker's unclean shutdown (the leader comes back as
leader in a new leader epoch with the last tiered offset unknown; the follower loses its
fetcher state), the follower's disk replacement (it is empty again). Disabling tiered storage
is an operator's action, bounded the same way.

Abstracted: the controller and AlterPartition (the ISR changes at once), electing the follower
(`isr_follower_can_serve_committed_offsets` checks it would be safe), producer snapshots, the
active segment, and the pre-KIP path of a follower that is not empty (it takes the KIP's path
too: both discard its records). A Fetch returns one record and the leader learns the
follower's log end at once.
"""

from __future__ import annotations

from checker import (
    Record,
    Spec,
    State,
    action,
    all_rules,
    constant,
    invariant,
    on,
    reachable,
    rule,
    terminal,
)
from invariants import tiered

LEADER, FOLLOWER = 0, 1
UNKNOWN = -1  # ListOffsets' answer when the offset is not known
Epochs = tuple[tuple[int, int], ...]  # a leader epoch cache: (epoch, start offset), in order


class Kip1023(Spec):
    """KIP-1023: an empty follower fetches from the earliest pending upload offset."""

    fixed = all_rules("the follower handles EPUO = -1 and EPUO < Log-Start-Offset")
    handles_unknown_epuo = rule(
        "With EPUO unknown (-1) the follower uses the Local-Log-Start-Offset only once it equals"
        " the Log-Start-Offset (nothing was uploaded); otherwise it retries"
    )
    handles_epuo_below_log_start = rule(
        "With EPUO below the Log-Start-Offset (no valid remote segment yet) the follower"
        " truncates and replicates all the leader holds locally"
    )
    max_records = constant(3, "records the leader may append")
    segment_size = constant(1, "records per log segment (upload and deletion unit)")
    max_unclean_shutdowns = constant(1, "fault bound: crashes keeping the log (leader: new epoch)")
    max_disk_replacements = constant(1, "fault bound: follower crashes with an empty new disk")
    max_tiering_disables = constant(1, "bound: times an operator disables tiered storage")

    FAULTS = ("unclean_shutdowns", "disk_replacements")

    # What the initial state does not show: a new leader has not learnt the offset yet.
    last_tiered_offset: int | None

    def init(self) -> State:
        return Record(
            # The leader (broker 0): its log and leader epoch cache.
            leader_epoch=1,
            leader_epochs=(),
            log_start=0,
            local_log_start=0,
            log_end=0,
            hwm=0,
            isr=frozenset({LEADER}),
            # Its RLM task: tiering on or off, and the last tiered offset it knows (-1: none
            # uploaded; None: a new leader that has not learnt it yet).
            tiering=True,
            last_tiered_offset=-1,
            # Remote storage: the uploaded segments (start, end, epochs).
            remote=frozenset(),
            # The follower (broker 1): its log, epoch cache and where its fetcher stands.
            follower_log_start=0,
            follower_local_log_start=0,
            follower_log_end=0,
            follower_epochs=(),
            follower_step="fetch",
            listed_log_start=None,  # ListOffsets answers of the bootstrap in progress
            listed_epuo=None,
            faults=Record({f: 0 for f in self.FAULTS}),
            tiering_disables=0,
        )

    # -- the leader -------------------------------------------------------------------------

    @action
    @on("broker 0")
    def append_record(self, s: State) -> State | None:
        """A producer appends a record to the leader, in its current leader epoch."""
        if s.log_end >= self.max_records:
            return None
        epochs = s.leader_epochs
        if not epochs or epochs[-1][0] != s.leader_epoch:
            epochs += ((s.leader_epoch, s.log_end),)
        s = s.replace(log_end=s.log_end + 1, leader_epochs=epochs)
        return self.advance_high_watermark(s)

    @action
    @on("broker 0", calls="remote storage", message="copyLogSegmentData")
    def copy_log_segment(self, s: State) -> State | None:
        """The RLM task uploads the next committed segment to remote storage.

        It starts after the last tiered offset (or at the local log, after tiering was
        re-enabled) and updates the highest offset uploaded.
        """
        if not s.tiering or s.last_tiered_offset is None:
            return None
        # After tiering was re-enabled the last tiered offset may lie below the local log.
        start = max(s.last_tiered_offset + 1, s.local_log_start)
        end = start + self.segment_size
        if end > s.hwm:
            return None
        segment = (start, end, _epochs_within(s.leader_epochs, start, end))
        return s.replace(remote=s.remote | {segment}, last_tiered_offset=end - 1)

    @action
    @on("broker 0", calls="remote storage", message="listRemoteLogSegments")
    def learn_highest_remote_offset(self, s: State) -> State | None:
        """A new leader's RLM task runs for the first time: it learns the last tiered offset.

        It reads the highest offset on remote storage (-1 if there is no segment).
        """
        if not s.tiering or s.last_tiered_offset is not None:
            return None
        highest = max((end for _, end, _ in s.remote), default=0) - 1
        return s.replace(last_tiered_offset=highest)

    @action
    @on("broker 0")
    def delete_local_log_segment(self, s: State) -> State | None:
        """Local retention deletes the oldest local segment once it is tiered.

        The Local-Log-Start-Offset moves up; the Log-Start-Offset stays.
        """
        if not s.tiering or s.last_tiered_offset is None:
            return None
        end = s.local_log_start + self.segment_size
        if end - 1 > s.last_tiered_offset:
            return None
        return s.replace(local_log_start=end)

    @action
    @on("broker 0")
    def delete_oldest_segment(self, s: State) -> State | None:
        """Retention deletes the oldest segment, remote and local: the Log-Start-Offset moves up.

        While tiering is on, only a tiered segment expires; while it is off, local retention no
        longer applies and any committed segment may go.
        """
        end = s.log_start + self.segment_size
        if end > s.hwm:
            return None
        if s.tiering and (s.last_tiered_offset is None or end - 1 > s.last_tiered_offset):
            return None
        return s.replace(
            log_start=end,
            local_log_start=max(s.local_log_start, end),
            leader_epochs=_truncate_from_start(s.leader_epochs, end),
            remote=frozenset(g for g in s.remote if g[1] > end),
        )

    @action
    @on("broker 0")
    def disable_tiered_storage(self, s: State) -> State | None:
        """An operator disables tiered storage for the topic: uploads stop.

        Remote data stays readable, and the leader keeps its last tiered offset.
        """
        if not s.tiering or s.tiering_disables >= self.max_tiering_disables:
            return None
        return s.replace(tiering=False, tiering_disables=s.tiering_disables + 1)

    @action
    @on("broker 0")
    def enable_tiered_storage(self, s: State) -> State | None:
        """An operator enables tiered storage for the topic again."""
        if s.tiering:
            return None
        return s.replace(tiering=True)

    # -- the follower's ReplicaFetcher ------------------------------------------------------

    @action
    @on("broker 1", calls="broker 0", message="Fetch")
    def fetch(self, s: State) -> State | None:
        """The follower fetches from its Fetch-Offset; the leader returns a record or an error.

        The Fetch-Offset is the follower's log end. Below the leader's Log-Start-Offset the
        error is OFFSET_OUT_OF_RANGE; below its Local-Log-Start-Offset it is
        OFFSET_MOVED_TO_TIERED_STORAGE, which also returns the Log-Start-Offset.
        """
        if s.follower_step != "fetch":
            return None
        offset = s.follower_log_end
        if offset < s.log_start:
            return s.replace(follower_step="list_earliest")
        if offset < s.local_log_start:
            return s.replace(follower_step="list_pending_upload", listed_log_start=s.log_start)
        if offset == s.log_end:  # nothing to fetch: only a follower joining the ISR fetches
            if FOLLOWER in s.isr or offset < s.hwm:
                return None
            return self.advance_high_watermark(s.replace(isr=s.isr | {FOLLOWER}))
        return self.append_fetched_record(s, offset)

    @action
    @on("broker 1", calls="broker 0", message="ListOffsets(EARLIEST)")
    def list_offsets_earliest(self, s: State) -> State | None:
        """After OFFSET_OUT_OF_RANGE the follower fetches the leader's Log-Start-Offset."""
        if s.follower_step != "list_earliest":
            return None
        return s.replace(follower_step="list_pending_upload", listed_log_start=s.log_start)

    @action
    @on("broker 1", calls="broker 0", message="ListOffsets(EARLIEST_PENDING_UPLOAD)")
    def list_offsets_earliest_pending_upload(self, s: State) -> State | None:
        """The follower fetches the leader's Earliest-Pending-Upload-Offset (EPUO).

        It is the offset after the highest offset on remote storage, or -1 if unknown.
        """
        if s.follower_step != "list_pending_upload":
            return None
        epuo = self.earliest_pending_upload_offset(s)
        log_start = s.listed_log_start
        if epuo == UNKNOWN:
            return s.replace(follower_step="list_local")
        if epuo < log_start and self.handles_epuo_below_log_start:
            # No valid segment on the remote yet: truncate and replicate all data the leader
            # has locally, which starts at the Log-Start-Offset (nothing above it is tiered).
            return self.start_log_at(s, log_start, log_start, ())
        if epuo == log_start:  # an empty auxiliary state: nothing to read from remote storage
            return self.start_log_at(s, log_start, epuo, ())
        return s.replace(follower_step="build_aux", listed_epuo=epuo)

    @action
    @on("broker 1", calls="broker 0", message="ListOffsets(EARLIEST_LOCAL)")
    def list_offsets_earliest_local(self, s: State) -> State | None:
        """EPUO unknown: the follower fetches the leader's Local-Log-Start-Offset to check.

        If it is the Log-Start-Offset, no segment was uploaded and it is used as the EPUO;
        otherwise segments were uploaded but the leader does not know yet, and the partition is
        retried later.
        """
        if s.follower_step != "list_local":
            return None
        local_log_start = s.local_log_start
        if self.handles_unknown_epuo and s.listed_log_start != local_log_start:
            return self.retry(s)
        # Nothing uploaded (confirmed, or with fixed=False assumed): the leader holds the whole
        # log locally and there is no remote state to build.
        return self.start_log_at(s, local_log_start, local_log_start, ())

    @action
    @on("broker 1", calls="remote storage", message="RemoteLogSegmentMetadata")
    def build_remote_log_aux_state(self, s: State) -> State | None:
        """The follower builds the remote log auxiliary state for [Log-Start-Offset, EPUO).

        Its leader epoch cache comes from the remote segments; then its Log-Start-Offset becomes
        the leader's, and its Log-End-Offset and Fetch-Offset the EPUO. Without the segment
        holding EPUO - 1 it fails, and the partition is retried.
        """
        if s.follower_step != "build_aux":
            return None
        log_start, epuo = s.listed_log_start, s.listed_epuo
        if tiered.remote_segment(s, epuo - 1) is None:
            return self.retry(s)
        segments = sorted(g for g in s.remote if g[0] < epuo and g[1] > log_start)
        epochs: Epochs = ()
        for _, _, segment_epochs in segments:
            for epoch, start in segment_epochs:
                if not epochs or epochs[-1][0] != epoch:
                    epochs += ((epoch, start),)
        return self.start_log_at(s, log_start, epuo, _truncate_from_start(epochs, log_start))

    # -- faults -----------------------------------------------------------------------------

    @action(b=(LEADER, FOLLOWER))
    @on("broker {b}")
    def unclean_shutdown(self, s: State, b: int) -> State | None:
        """Fault: a broker crashes and restarts with its whole log.

        The leader, the only ISR member, is elected again in a new leader epoch; its RLM task
        has not learnt the last tiered offset yet. The follower restarts its fetcher and leaves
        the ISR.
        """
        if not self.fault_allowed(s, "unclean_shutdowns"):
            return None
        if b == LEADER:
            if FOLLOWER in s.isr:  # the controller would elect the follower: not modelled
                return None
            s = s.replace(leader_epoch=s.leader_epoch + 1, last_tiered_offset=None)
        s = self.retry(s)  # the follower's requests in the old leader epoch are fenced
        s = s.replace(isr=s.isr - {FOLLOWER})
        return self.advance_high_watermark(self.count_fault(s, "unclean_shutdowns"))

    @action(b=(FOLLOWER,))
    @on("broker {b}")
    def replace_disk(self, s: State, b: int) -> State | None:
        """Fault: the follower fails and comes back with a new, empty disk (out of the ISR)."""
        if not self.fault_allowed(s, "disk_replacements"):
            return None
        s = self.start_log_at(s, 0, 0, ()).replace(isr=s.isr - {b})
        return self.advance_high_watermark(self.count_fault(s, "disk_replacements"))

    # -- helpers ----------------------------------------------------------------------------

    def earliest_pending_upload_offset(self, s: State) -> int:
        """ListOffsets(EARLIEST_PENDING_UPLOAD_TIMESTAMP): the offset after the highest offset
        on remote storage, or -1 when none was uploaded or the leader does not know yet."""
        if s.last_tiered_offset is None or s.last_tiered_offset < 0:
            return UNKNOWN
        return s.last_tiered_offset + 1

    def append_fetched_record(self, s: State, offset: int) -> State:
        """The follower appends the record at `offset` and takes the leader's Log-Start-Offset
        from the response; the leader adds it to the ISR once it reaches the HWM."""
        epoch = tiered.epoch_for(s.leader_epochs, offset)
        epochs = s.follower_epochs
        if not epochs or epochs[-1][0] != epoch:
            epochs += ((epoch, offset),)
        log_start = max(s.follower_log_start, s.log_start)
        s = s.replace(
            follower_log_start=log_start,
            follower_local_log_start=max(s.follower_local_log_start, log_start),
            follower_log_end=offset + 1,
            follower_epochs=_truncate_from_start(epochs, log_start),
        )
        if offset + 1 >= s.hwm:
            s = s.replace(isr=s.isr | {FOLLOWER})
        return self.advance_high_watermark(s)

    def start_log_at(self, s: State, log_start: int, offset: int, epochs: Epochs) -> State:
        """The follower truncates its log fully and starts it at `offset` (its Log-End-Offset
        and Fetch-Offset), with `log_start` and the epoch cache of its auxiliary state."""
        return s.replace(
            follower_log_start=log_start,
            follower_local_log_start=offset,
            follower_log_end=offset,
            follower_epochs=epochs,
            follower_step="fetch",
            listed_log_start=None,
            listed_epuo=None,
        )

    def retry(self, s: State) -> State:
        """The fetcher drops the bootstrap in progress; its next Fetch starts it again."""
        return s.replace(follower_step="fetch", listed_log_start=None, listed_epuo=None)

    def advance_high_watermark(self, s: State) -> State:
        """The HWM is the smallest log end in the ISR."""
        ends = [s.log_end] + ([s.follower_log_end] if FOLLOWER in s.isr else [])
        return s.replace(hwm=max(s.hwm, min(ends)))

    def fault_allowed(self, s: State, fault: str) -> bool:
        return s.faults[fault] < getattr(self, f"max_{fault}")

    def count_fault(self, s: State, fault: str) -> State:
        return s.replace(faults=Record({**s.faults, fault: s.faults[fault] + 1}))

    # -- what happens (reachability properties: each holds somewhere) ------------------------

    @reachable
    def segment_tiered(self, s: State) -> bool:
        """A segment was uploaded to remote storage."""
        return bool(s.remote)

    @reachable
    def follower_started_from_tiered_offset(self, s: State) -> bool:
        """The follower built its auxiliary state and fetches above its Log-Start-Offset."""
        return s.follower_local_log_start > s.follower_log_start

    @reachable(switch="max_unclean_shutdowns")
    def leader_in_a_new_epoch(self, s: State) -> bool:
        """The leader restarted and leads in a new leader epoch."""
        return s.leader_epoch > 1

    @reachable(switch="max_tiering_disables")
    def tiering_disabled(self, s: State) -> bool:
        """An operator disabled tiered storage."""
        return not s.tiering

    @terminal
    def all_replicated(self, s: State) -> bool:
        """The intended end: every record is appended, and the follower holds them all in
        the ISR (with nothing left to upload or delete, no step remains)."""
        return s.log_end == self.max_records and s.follower_log_end == s.log_end

    # -- invariants -------------------------------------------------------------------------

    leader_log_has_no_gap = invariant(tiered.leader_log_has_no_gap)
    follower_log_has_no_gap = invariant(tiered.follower_log_has_no_gap)
    epoch_caches_agree = invariant(tiered.epoch_caches_agree)
    isr_follower_can_serve_committed_offsets = invariant(
        tiered.isr_follower_can_serve_committed_offsets
    )


def _epochs_within(epochs: Epochs, start: int, end: int) -> Epochs:
    """The entries of an epoch cache for the offsets [start, end) (a segment's epochs)."""
    return tuple(
        (epoch, max(first, start))
        for i, (epoch, first) in enumerate(epochs)
        if first < end and (i + 1 == len(epochs) or epochs[i + 1][1] > start)
    )


def _truncate_from_start(epochs: Epochs, offset: int) -> Epochs:
    """The epoch cache after the log start moved to `offset`: earlier entries go, and the one
    covering `offset` now starts there."""
    kept = tuple(e for e in epochs if e[1] >= offset)
    covering = [e for e in epochs if e[1] < offset]
    if covering and (not kept or kept[0][1] > offset):
        kept = ((covering[-1][0], offset),) + kept
    return kept
