"""The network of Vanlightly's TLA+ models of Kafka (their `network` module: network.tla beside
each model in github.com/Vanlightly/kafka-tlaplus, e.g. kraft/kip_996/network.tla), shared by the
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
        # The last message set asked about, and its messages by type in `of`'s order: most
        # actions ask, for each of their bindings, about the same state's messages.
        self._by_type: tuple[frozenset[Record] | None, dict[str, list[Record]]] = (None, {})
        self._order: dict[Record, str] = {}  # a message's sort key (its repr), as met

    def __getstate__(self) -> dict[str, Any]:  # (sent to Spark executors without the caches)
        return {**self.__dict__, "_by_type": (None, {}), "_order": {}}

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
        known, by_type = self._by_type
        if known is not msgs:
            by_type = {}
            for m in msgs:
                by_type.setdefault(m.type, []).append(m)
            order = self._order
            if len(order) > 1 << 16:
                order.clear()
            for kind in by_type.values():
                if len(kind) > 1:
                    for m in kind:
                        if m not in order:
                            order[m] = repr(m)
                    kind.sort(key=order.__getitem__)
            self._by_type = (msgs, by_type)
        of_type = by_type.get(type_, ())
        if source is _ANY and dest is _ANY:
            return list(of_type)
        if source is _ANY:
            return [m for m in of_type if m.dest == dest]
        if dest is _ANY:
            return [m for m in of_type if m.source == source]
        return [m for m in of_type if m.dest == dest and m.source == source]


def _always(s: State, a: int, b: int) -> bool:
    return True


def subsets(xs: Iterable[Any]) -> list[frozenset[Any]]:
    """SUBSET xs, smallest first (sets of sets in the order of their sorted elements)."""
    xs = list(xs)
    xs = sorted(xs, key=sorted) if xs and isinstance(xs[0], frozenset) else sorted(xs)
    return [
        frozenset(c) for c in chain.from_iterable(combinations(xs, k) for k in range(len(xs) + 1))
    ]
