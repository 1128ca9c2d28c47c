"""Invariants over the KRaft replication model's state (see specs/kip903.py for the variables).

Each is a plain predicate `(state) -> bool`; a spec picks the ones it wants with
`name = invariant(replication.name)`.
"""

from __future__ import annotations

from checker import State


def _registered(s: State, broker: int) -> bool:
    """The broker runs under its current registration (it is not mid-restart)."""
    return s.local_epoch[broker] == s.broker_epoch[broker]


def leader_in_isr(s: State) -> bool:
    """The partition's leader, if any, is a member of the ISR."""
    return s.leader is None or s.leader in s.isr


def no_stale_epoch_in_isr(s: State) -> bool:
    """KIP-903: every ISR member was admitted with its current broker epoch.

    `isr` maps each member to the broker epoch it was admitted with (the epoch its caught-up
    Fetch carried). A member admitted with an older epoch is a previous incarnation of the
    broker: what it had fetched may be gone.
    """
    return all(epoch == s.broker_epoch[broker] for broker, epoch in s.isr.items())


def isr_members_hold_committed_data(s: State) -> bool:
    """A running ISR member holds every record the leader has committed (below its HWM).

    This is the data-loss consequence KAFKA-14139 describes: a replica whose disk was replaced
    must not sit in the ISR next to committed records it lacks, or electing it loses them.
    """
    if s.leader is None:
        return True
    committed = s.log[s.leader][: s.hwm[s.leader]]
    return all(
        s.log[broker][: len(committed)] == committed for broker in s.isr if _registered(s, broker)
    )
