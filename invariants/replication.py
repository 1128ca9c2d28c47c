"""Invariants over the KRaft replication model's state (see specs/replication.py for the
variables).

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


def leader_is_eligible(s: State) -> bool:
    """KIP-841: the leader, if any, is neither fenced nor in controlled shutdown."""
    return s.leader is None or (s.leader not in s.fenced and s.leader not in s.shutting_down)


def isr_members_eligible(s: State) -> bool:
    """KIP-841: no fenced or shutting-down replica is in the ISR next to another member.

    A sole member may be fenced: KRaft keeps the last ISR member (until KIP-966).
    """
    if len(s.isr) < 2:
        return True
    return not any(b in s.fenced or b in s.shutting_down for b in s.isr)


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


def no_committed_record_lost(s: State) -> bool:
    """KIP-966: every record ever committed is in the log of the leader, when it runs.

    `committed` is a history variable: the longest log prefix that was ever below a leader's
    high watermark.
    """
    if s.leader is None or not _registered(s, s.leader):  # a crashed leader acts no more
        return True
    return s.log[s.leader][: len(s.committed)] == s.committed


def isr_and_elr_hold_committed_records(s: State) -> bool:
    """KIP-966: every running ISR or ELR member holds every committed record."""
    members = set(s.isr) | set(s.elr)
    return all(s.log[b][: len(s.committed)] == s.committed for b in members if _registered(s, b))


def isr_and_elr_disjoint(s: State) -> bool:
    """KIP-966: ISR and ELR are disjoint sets of the partition's replicas."""
    replicas = range(len(s.log))
    return (
        not set(s.isr) & s.elr
        and all(b in replicas for b in s.isr)
        and all(b in replicas for b in s.elr)
    )


def elr_empty_while_isr_at_least(s: State, min_isr: int) -> bool:
    """KIP-966: the ELR is empty while the ISR has at least MinISR members."""
    return len(s.isr) < min_isr or not s.elr
