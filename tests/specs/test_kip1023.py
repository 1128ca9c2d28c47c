"""KIP-1023: the bootstrap from the earliest pending upload offset leaves no gap; without the
corner-case handling, a follower bootstrapped under a new leader misses tiered offsets."""

from __future__ import annotations

from checker import action, invariant, on
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.spec import invariants_of
from specs.kip1023 import Kip1023
from tests.conftest import SPECS
from tests.specs.kips import actions, broken, holds

KIP1023 = SPECS / "kip1023.py"

UNKNOWN_EPUO_GAP = [
    "append_record",  # offset 0, committed (the follower is not in the ISR)
    "copy_log_segment",  # the RLM task uploads [0, 1): last tiered offset 0
    "delete_local_log_segment",  # local retention: the leader's local log starts at 1
    "unclean_shutdown",  # the leader is elected again; it has not learnt the tiered offset
    "fetch",  # the empty follower fetches 0: OFFSET_MOVED_TO_TIERED_STORAGE, log start 0
    "list_offsets_earliest_pending_upload",  # -1: unknown
    "list_offsets_earliest_local",  # 1: taken as "nothing uploaded", the follower starts at 1
]


def test_fixed_holds_over_the_documented_state_space():
    result = holds(KIP1023, 42_368, 24)
    fired = {c.name for c in result.coverage if c.fired}
    assert fired == {c.name for c in result.coverage}  # every action, every fault


def test_without_the_fix_a_follower_bootstrapped_under_a_new_leader_has_a_gap():
    result = broken(KIP1023, "follower_log_has_no_gap")
    assert actions(result) == UNKNOWN_EPUO_GAP and len(result.trace) == 8
    assert result.trace[4].params == {"b": 0}
    last = result.trace[-1].state
    assert (last.log_start, last.local_log_start, last.hwm) == (0, 1, 1)
    assert last.remote == {(0, 1, ((1, 0),))}  # offset 0 is only in remote storage...
    assert (last.follower_log_start, last.follower_log_end) == (1, 1)  # ...and lost to it


def test_the_trace_says_where_each_step_happens():
    result = check(load_model(KIP1023, {"fixed": "false"}))
    assert [
        (e.process, e.kind, e.peer, e.message) for e in (s.event for s in result.trace[1:])
    ] == [
        ("broker 0", "local", None, None),
        ("broker 0", "call", "remote storage", "copyLogSegmentData"),
        ("broker 0", "local", None, None),
        ("broker 0", "local", None, None),
        ("broker 1", "call", "broker 0", "Fetch"),
        ("broker 1", "call", "broker 0", "ListOffsets(EARLIEST_PENDING_UPLOAD)"),
        ("broker 1", "call", "broker 0", "ListOffsets(EARLIEST_LOCAL)"),
    ]


def test_without_the_fix_the_gap_reaches_an_isr_member():
    model = load_model(KIP1023, {"fixed": "false"}, ["isr_follower_can_serve_committed_offsets"])
    result = check(model)
    assert result.invariant == "isr_follower_can_serve_committed_offsets"
    assert actions(result) == [*UNKNOWN_EPUO_GAP, "fetch"]  # it catches up: in the ISR
    assert result.trace[-1].state.isr == {0, 1}


class OnlyUnknownEpuoSkipped(Kip1023):
    handles_unknown_epuo = False


class OnlyEpuoBelowLogStartSkipped(Kip1023):
    handles_epuo_below_log_start = False

    @invariant
    def never_builds_below_log_start(self, s):
        return not (s.follower_step == "build_aux" and s.listed_epuo < s.listed_log_start)


def test_skipping_the_unknown_epuo_check_alone_makes_the_gap():
    result = check(Model(OnlyUnknownEpuoSkipped()))
    assert result.invariant == "follower_log_has_no_gap"
    assert actions(result) == UNKNOWN_EPUO_GAP


def test_skipping_the_below_log_start_check_alone_only_stalls_the_follower():
    # Building the auxiliary state needs the segment holding EPUO - 1, which retention removed
    # with the offsets below the Log-Start-Offset: the follower retries, and loses nothing.
    spec = OnlyEpuoBelowLogStartSkipped(max_records=2)
    result = check(Model(spec, invariants=list(invariants_of(Kip1023))))
    assert (result.verdict, result.distinct_states) == ("ok", 7_692)
    stalled = check(Model(spec, invariants=["never_builds_below_log_start"]))
    assert stalled.verdict == "violation"  # the path the skipped check guards is reached
    assert actions(stalled)[-2:] == [
        "list_offsets_earliest",
        "list_offsets_earliest_pending_upload",
    ]


class CornerCasesReached(Kip1023):
    @invariant
    def epuo_never_below_log_start(self, s):
        epuo = self.earliest_pending_upload_offset(s)
        return not (s.follower_step == "list_pending_upload" and 0 <= epuo < s.listed_log_start)

    @invariant
    def unknown_epuo_never_retried(self, s):
        return not (s.follower_step == "list_local" and s.listed_log_start != s.local_log_start)


def test_with_the_fix_the_epuo_falls_below_the_log_start():
    result = check(Model(CornerCasesReached(), invariants=["epuo_never_below_log_start"]))
    assert actions(result) == [
        "append_record",
        "append_record",
        "copy_log_segment",  # last tiered offset 0
        "delete_oldest_segment",  # retention: log start 1
        "disable_tiered_storage",
        "delete_oldest_segment",  # retention without tiering: log start 2, past EPUO 1
        "fetch",  # OFFSET_OUT_OF_RANGE
        "list_offsets_earliest",  # the follower is about to get EPUO 1 < log start 2
    ]


def test_with_the_fix_an_unknown_epuo_is_retried():
    result = check(Model(CornerCasesReached(), invariants=["unknown_epuo_never_retried"]))
    assert actions(result) == UNKNOWN_EPUO_GAP[:-1]  # the next step retries, not starts at 1


class WrongAuxEpochs(Kip1023):
    """A broken follower: its auxiliary state gives every offset the current leader epoch."""

    @action
    @on("broker 1", calls="remote storage", message="RemoteLogSegmentMetadata")
    def build_remote_log_aux_state(self, s):
        built = super().build_remote_log_aux_state(s)
        if built is None or not built.follower_epochs:
            return built
        return built.replace(follower_epochs=((s.leader_epoch, built.follower_epochs[0][1]),))


def test_a_wrong_auxiliary_epoch_cache_is_caught():
    result = check(Model(WrongAuxEpochs()))
    assert result.invariant == "epoch_caches_agree"
    assert actions(result)[-1] == "build_remote_log_aux_state"


def test_cli_exit_code_without_the_fix(mc):
    result = mc("check", KIP1023, "-D", "fixed=false", "--progress", "0")
    assert result.code == 12
    assert "State 5: unclean_shutdown(b=0)" in result.out
