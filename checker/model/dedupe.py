"""The expanders' exact dedupe: `dedupe` finds a state's candidates, its successors not met
before (in C with the hot path, checker/hot/expansion.c; `dedupe_python` is its twin)."""

from __future__ import annotations

from checker.values import fast
from checker.values.record import Record


def dedupe_python(
    successors: list[Record],
    start: int,
    seen: set[Record],
    candidates: list[Record],
    positions: list[int],
    offset: int,
    parent: Record | None,
) -> int | None:
    """The successors from `start` on that are not in `seen`, added to it and to `candidates`,
    their indexes plus `offset` to `positions` (the twin of the C loop); None when done, else
    the index of a successor that cannot be hashed (the caller freezes it and goes on from
    there). A successor that is `parent` itself (a step that changed nothing) is never new:
    passed over without a look-up (the parent was found, whether or not `seen` still has it)."""
    for index in range(start, len(successors)):
        succ = successors[index]
        if succ is parent:
            continue
        try:
            met = succ in seen
        except TypeError:
            return index
        if not met:
            seen.add(succ)
            candidates.append(succ)
            positions.append(offset + index)
    return None


dedupe = fast.pick(dedupe_python)
