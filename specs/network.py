"""The network of Vanlightly's TLA+ models of Kafka (their `network` module), shared by the
translations (specs/kraft.py, specs/kraft_quorum.py): the messages in flight are a set variable,
and a handled message moves to another. An effect here is the dict of the variables it changes,
which the action applies with its other changes in one `s.replace(**...)`: the way both
translations write an action's effect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain, combinations
from typing import Any

from checker import Record, State

_ANY: Any = object()  # any value of a message field


class Network:
    """Messages in the set variable `messages`, handled ones moved to `handled`; a message
    between two servers that are not `connected` (if given) is lost."""

    def __init__(
        self,
        messages: str,
        handled: str,
        connected: Callable[[State, int, int], bool] | None = None,
    ) -> None:
        self.messages = messages
        self.handled = handled
        self.connected = connected or _always

    def send(self, s: State, m: Record) -> dict[str, Any]:
        """Send: `m` in flight (lost if the two are not connected)."""
        if not self.connected(s, m.dest, m.source):
            return {}
        return {self.messages: s[self.messages] | {m}}

    def send_all(self, s: State, msgs: Iterable[Record]) -> dict[str, Any]:
        connected = self.connected
        kept = [m for m in msgs if connected(s, m.dest, m.source)]
        return {self.messages: s[self.messages].union(kept)} if kept else {}

    def discard(self, s: State, d: Record) -> dict[str, Any]:
        """Discard: `d` handled."""
        return {self.messages: s[self.messages] - {d}, self.handled: s[self.handled] | {d}}

    def reply(self, s: State, d: Record, m: Record) -> dict[str, Any] | None:
        """Reply: `d` handled and `m` sent; not possible (None) while the two are not
        connected, or if `d` is no longer in flight."""
        if not self.connected(s, m.dest, m.source) or d not in s[self.messages]:
            return None
        return {self.messages: (s[self.messages] - {d}) | {m}, self.handled: s[self.handled] | {d}}

    def of(self, s: State, type_: str, dest: Any = _ANY, source: Any = _ANY) -> list[Record]:
        """The messages of a type in flight (to `dest`, from `source`, if given), in a fixed
        order. (Called for every binding of most actions: one list display per case.)"""
        msgs = s[self.messages]
        if source is _ANY and dest is _ANY:
            out = [m for m in msgs if m.type == type_]
        elif source is _ANY:
            out = [m for m in msgs if m.type == type_ and m.dest == dest]
        elif dest is _ANY:
            out = [m for m in msgs if m.type == type_ and m.source == source]
        else:
            out = [m for m in msgs if m.type == type_ and m.dest == dest and m.source == source]
        return sorted(out, key=repr) if len(out) > 1 else out


def _always(s: State, a: int, b: int) -> bool:
    return True


def subsets(xs: Iterable[Any]) -> list[frozenset[Any]]:
    """SUBSET xs, smallest first (sets of sets in the order of their sorted elements)."""
    xs = list(xs)
    xs = sorted(xs, key=sorted) if xs and isinstance(xs[0], frozenset) else sorted(xs)
    return [
        frozenset(c) for c in chain.from_iterable(combinations(xs, k) for k in range(len(xs) + 1))
    ]
