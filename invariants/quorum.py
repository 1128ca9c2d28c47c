"""Invariants over the KRaft quorum model's state (see specs/light/raft.py for the variables)."""

from __future__ import annotations

from checker import State


def election_safety(s: State) -> bool:
    """Raft: at most one leader is ever elected in an epoch."""
    epochs = [epoch for epoch, _ in s.elected]
    return len(epochs) == len(set(epochs))


def log_matching(s: State) -> bool:
    """Raft: two logs with a record of the same epoch at the same offset agree up to there."""
    logs = s.log
    for i, a in enumerate(logs):
        for b in logs[i + 1 :]:
            for offset in range(min(len(a), len(b))):
                if a[offset] == b[offset] and a[:offset] != b[:offset]:
                    return False
    return True


def leader_completeness(s: State) -> bool:
    """Raft: a leader of the committing epoch or a later one holds every committed record."""
    return all(
        s.log[n][: len(s.committed)] == s.committed
        for n, role in enumerate(s.role)
        if role == "leader" and s.epoch[n] >= s.commit_epoch
    )


def no_epoch_bump_while_cut_off(s: State) -> bool:
    """KIP-996: a voter cut off from the quorum does not raise its epoch."""
    return all(since is None or s.epoch[n] == since for n, since in enumerate(s.isolated_epoch))


def leader_not_disrupted(s: State) -> bool:
    """KIP-996: a voter that comes back from a partition never makes a voter abandon a leader
    that a majority still follows (a history variable the model sets when it happens)."""
    return not s.disrupted


def reads_are_linearizable(s: State) -> bool:
    """KIP-996: every read returns a state at least as new as every write acknowledged before
    the read started (`answered` holds (returned offset, writes acknowledged at the start))."""
    return all(returned >= acknowledged for returned, acknowledged in s.answered)
