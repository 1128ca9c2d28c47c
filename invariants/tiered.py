"""Invariants over a tiered partition: a leader's log split between remote storage and its local
disk, and a follower bootstrapped from it (see specs/kip1023.py for the variables).

Each is a plain predicate `(state) -> bool`; a spec picks the ones it wants with
`name = invariant(tiered.name)`.

Offsets below the partition's Log-Start-Offset are deleted and need not be anywhere. An epoch
cache is a tuple of `(leader epoch, start offset)` entries in offset order; a remote segment is
`(start, end, epochs)`: it holds the offsets [start, end), and `epochs` are its entries.
"""

from __future__ import annotations

from checker import State

FOLLOWER = 1  # the follower's broker id (the leader is broker 0)

Epochs = tuple[tuple[int, int], ...]


def epoch_for(epochs: Epochs, offset: int) -> int | None:
    """The leader epoch an epoch cache gives `offset`, or None before its first entry."""
    found = None
    for epoch, start in epochs:
        if start > offset:
            break
        found = epoch
    return found


def remote_segment(s: State, offset: int) -> tuple[int, int, Epochs] | None:
    """The remote segment holding `offset`, if one was uploaded and not yet deleted."""
    return next((g for g in s.remote if g[0] <= offset < g[1]), None)


def _in_follower_local_log(s: State, offset: int) -> bool:
    return s.follower_local_log_start <= offset < s.follower_log_end


def leader_log_has_no_gap(s: State) -> bool:
    """No gap on the leader: each offset in [Log-Start-Offset, HWM) is remote or local.

    Local retention deletes only segments that are already tiered.
    """
    return all(
        remote_segment(s, o) is not None or s.local_log_start <= o < s.log_end
        for o in range(s.log_start, s.hwm)
    )


def follower_log_has_no_gap(s: State) -> bool:
    """No gap on the follower: each offset in [Log-Start-Offset, HWM) it passed is readable.

    Readable: in its local log, or in remote storage within the follower's log (at or above its
    own Log-Start-Offset: the range its auxiliary state covers). An offset below the follower's
    Log-Start-Offset is lost to it: elected, it would serve (and keep in remote storage) only
    its own log.
    """
    end = min(s.hwm, s.follower_log_end)
    return all(
        _in_follower_local_log(s, o)
        or (s.follower_log_start <= o and remote_segment(s, o) is not None)
        for o in range(s.log_start, end)
    )


def epoch_caches_agree(s: State) -> bool:
    """The follower's leader epoch cache agrees with the leader's on the offsets both hold.

    Its auxiliary state was built from the right segments.
    """
    low = max(s.log_start, s.follower_log_start)
    high = min(s.log_end, s.follower_log_end)
    return all(
        epoch_for(s.follower_epochs, o) == epoch_for(s.leader_epochs, o) for o in range(low, high)
    )


def isr_follower_can_serve_committed_offsets(s: State) -> bool:
    """A follower in the ISR could serve every committed offset if it were elected.

    Committed: [Log-Start-Offset, HWM). It serves one from its local log, or from the remote
    segment its epoch cache leads to (remote reads look a segment up by epoch and offset).
    """
    if FOLLOWER not in s.isr:
        return True
    for o in range(s.log_start, s.hwm):
        if _in_follower_local_log(s, o):
            continue
        segment = remote_segment(s, o)
        if o < s.follower_log_start or segment is None:
            return False
        if epoch_for(segment[2], o) != epoch_for(s.follower_epochs, o):
            return False
    return True
