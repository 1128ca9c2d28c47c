"""A client's view of its writes to the KRaft quorum, the abstract spec that
specs/kraft_quorum.py refines (`client_writes = refines(ClientWrites, ...)`).

A client writes each value once; the quorum answers each write once: positively (the value is
committed) or negatively (the leader lost its leadership, or resigned, first), never both and
never twice. One step of the quorum may answer several writes at once (a high watermark that
moves past several values, or a leader that resigns with values pending); every other step of
the quorum (elections, fetches, faults) changes nothing a client sees: a stutter here.
"""

from __future__ import annotations

from checker import Record, Spec, State, action, constant, terminal
from specs.network import subsets


class ClientWrites(Spec):
    """Writes answered once each: committed or failed."""

    values = constant(1, "values a client may write (v1, v2, ...)", min=0)

    @property
    def value_set(self) -> tuple[str, ...]:
        return tuple(f"v{i}" for i in range(1, self.values + 1))

    def init(self) -> State:
        return Record(sent=frozenset(), acked=frozenset(), failed=frozenset())

    @action(v="value_set")
    def write(self, s: State, v: str) -> State | None:
        """A client writes v, once."""
        return None if v in s.sent else s.replace(sent=s.sent | {v})

    @action(
        acks=lambda s: subsets(s.sent - s.acked - s.failed),
        fails=lambda s: subsets(s.sent - s.acked - s.failed),
    )
    def answer(self, s: State, acks: frozenset, fails: frozenset) -> State | None:
        """Writes not answered yet are answered: `acks` committed, `fails` failed."""
        if not (acks or fails) or acks & fails:
            return None
        return s.replace(acked=s.acked | acks, failed=s.failed | fails)

    @terminal
    def all_answered(self, s: State) -> bool:
        """Every value written and answered: nothing is left to happen."""
        return s.sent == set(self.value_set) and s.acked | s.failed == s.sent
