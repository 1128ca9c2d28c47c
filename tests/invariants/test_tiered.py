"""The tiered-storage invariants on hand-made states of the KIP-1023 model."""

from __future__ import annotations

from invariants.tiered import (
    FOLLOWER,
    epoch_caches_agree,
    epoch_for,
    follower_log_has_no_gap,
    isr_follower_can_serve_committed_offsets,
    leader_log_has_no_gap,
    remote_segment,
)
from specs.kip1023 import Kip1023

EPOCH_1 = ((1, 0),)  # an epoch cache: leader epoch 1 from offset 0
# Three committed records in epoch 1, on the leader's disk and on the follower's, in the ISR.
SYNCED = Kip1023().init().replace(
    leader_epochs=EPOCH_1,
    log_end=3,
    hwm=3,
    isr=frozenset({0, FOLLOWER}),
    follower_log_end=3,
    follower_epochs=EPOCH_1,
)
TIERED = frozenset({(0, 2, EPOCH_1)})  # offsets 0 and 1 uploaded


def test_epoch_for_reads_the_cache_entry_at_or_before_the_offset():
    cache = ((1, 0), (3, 5))
    assert [epoch_for(cache, o) for o in (0, 4, 5, 9)] == [1, 1, 3, 3]
    assert epoch_for(((2, 4),), 3) is None
    assert epoch_for((), 0) is None


def test_remote_segment_is_the_one_holding_the_offset():
    assert remote_segment(SYNCED.replace(remote=TIERED), 1) == (0, 2, EPOCH_1)
    assert remote_segment(SYNCED.replace(remote=TIERED), 2) is None
    assert remote_segment(SYNCED, 0) is None


def test_the_initial_and_the_synced_state_satisfy_all():
    for state in (Kip1023().init(), SYNCED):
        assert leader_log_has_no_gap(state)
        assert follower_log_has_no_gap(state)
        assert epoch_caches_agree(state)
        assert isr_follower_can_serve_committed_offsets(state)


def test_leader_log_has_no_gap():
    deleted_locally = SYNCED.replace(local_log_start=2)
    assert not leader_log_has_no_gap(deleted_locally)  # offsets 0 and 1 are nowhere
    assert leader_log_has_no_gap(deleted_locally.replace(remote=TIERED))
    # Below the Log-Start-Offset nothing need be anywhere.
    assert leader_log_has_no_gap(deleted_locally.replace(log_start=2))


def test_follower_log_has_no_gap():
    deleted_locally = SYNCED.replace(follower_local_log_start=2)
    assert not follower_log_has_no_gap(deleted_locally)
    assert follower_log_has_no_gap(deleted_locally.replace(remote=TIERED))
    # Remote segments below the follower's own Log-Start-Offset are lost to it.
    assert not follower_log_has_no_gap(
        deleted_locally.replace(remote=TIERED, follower_log_start=1)
    )


def test_epoch_caches_agree():
    other_epoch = SYNCED.replace(follower_epochs=((2, 0),))
    assert not epoch_caches_agree(other_epoch)
    # Only the offsets both logs hold are compared.
    assert epoch_caches_agree(other_epoch.replace(follower_log_end=0))


def test_isr_follower_can_serve_committed_offsets():
    bootstrapped = SYNCED.replace(follower_local_log_start=2, remote=TIERED)
    assert isr_follower_can_serve_committed_offsets(bootstrapped)
    # A segment its epoch cache does not lead to cannot be served ...
    wrong_cache = bootstrapped.replace(follower_epochs=((2, 0),))
    assert not isr_follower_can_serve_committed_offsets(wrong_cache)
    # ... nor an offset in no segment at all,
    assert not isr_follower_can_serve_committed_offsets(bootstrapped.replace(remote=frozenset()))
    # but a follower outside the ISR is not judged.
    outside = wrong_cache.replace(isr=frozenset({0}))
    assert isr_follower_can_serve_committed_offsets(outside)
