"""Incremental evaluation's read sets (docs/architecture.md): what a live state keeps of the
variables its parent's guards and its invariants read, and the functions that use them, each
with its C twin in checker/hot/readsets.c (checker.values.fast picks one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from checker.errors import Interrupted
from checker.values import fast
from checker.values.record import Record


class ReadSet(NamedTuple):
    """What incremental evaluation keeps with a live state: its parent's guards' masks (8
    bytes per action binding of a fixed domain: the variables the binding's guard read there,
    marked, if it was disabled), the variables the state changed from its parent (bits, as
    checker._hot numbers them), and its invariants' masks (the variables each read, marked,
    if it held; None: not evaluated so). A candidate's read set, as expand_batch makes it, has
    its parent's invariant masks instead, which its own evaluation starts from and then
    replaces."""

    guards: bytes
    changed: int
    invariants: bytes | None


def holds_python(
    predicates: tuple[Callable[[Record], Any], ...],
    state: Record,
    masks: bytes | None,
    changed: int,
    out: bytearray,
) -> int:
    """-1 if every predicate returns True on `state`, else the index of the first that does not
    (or raises: the caller evaluates that one again, which says why); the twin of the C
    function, which also notes what each read in `out` and skips, by `masks` and `changed`, those
    that cannot have changed (see docs/architecture.md). Here `out` stays all zeros."""
    for k, predicate in enumerate(predicates):
        try:
            if predicate(state) is not True:
                return k
        except Interrupted:
            raise
        except BaseException:
            return k
    return -1


holds = fast.pick(holds_python)


def changed_python(parent: Record, state: Record) -> int:
    """The variables (bit i - 1 for the record's item i, the 63rd on sharing bit 62) whose
    values are not the same objects in `parent` and `state`: a successor shares its unchanged
    variables with its parent."""
    bits = 0
    for i in range(1, len(parent._keys) + 1):
        if tuple.__getitem__(parent, i) is not tuple.__getitem__(state, i):
            bits |= 1 << min(i - 1, 62)
    return bits


changed = fast.pick(changed_python)


def read_sets_of_python(
    read_set: type[ReadSet],
    parent: Record,
    states: list[Record],
    start: int,
    masks: bytes,
    held: bytes | None,
    out: list[ReadSet],
) -> None:
    """Append to `out`, for each of `states[start:]` (the parent's candidates), the ReadSet
    expand_batch keeps with it: the parent's guards' `masks`, the variables the step changed,
    the parent's invariants' masks (`held`)."""
    out += [
        tuple.__new__(read_set, (masks, changed(parent, state), held))
        for state in states[max(start, 0) :]
    ]


read_sets_of = fast.pick(read_sets_of_python)


def verdicts_python(
    predicates: tuple[Callable[[Record], Any], ...],
    states: list[Record],
    read_sets: list[ReadSet],
    read_set: type[ReadSet],
) -> tuple[list[list[int]], list[ReadSet]]:
    """`holds` on each state with its read set: [index, predicate] for each state on which one
    did not hold, and a new list of read sets, each with the state's own invariants' masks
    (those given are not changed)."""
    failing: list[list[int]] = []
    made: list[ReadSet] = []
    for k, (state, before) in enumerate(zip(states, read_sets, strict=True)):
        out = bytearray(8 * len(predicates))
        first = holds(predicates, state, before.invariants, before.changed, out)
        made.append(tuple.__new__(read_set, (before.guards, before.changed, bytes(out))))
        if first >= 0:
            failing.append([k, first])
    return failing, made


verdicts = fast.pick(verdicts_python)
