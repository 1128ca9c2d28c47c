"""What a search is asked: whether deadlocks count, its bounds, its processes and memory, and
the reachability property whose shortest example to report."""

from __future__ import annotations

import os
from dataclasses import dataclass

SPILL_BYTES = 256 << 20  # keep up to this many bytes of a level's states in memory


def _live_bytes() -> int:
    """The expanders' default budget for live states: a quarter of the machine's memory (as
    TLC's default heap), at least 1 GiB. On kip966's shipped cfg (3 KB states) a larger
    budget keeps its levels live and explores more states in the same time
    (docs/performance.md)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 0
    return max(1 << 30, memory // 4 >> 20 << 20)


LIVE_BYTES = _live_bytes()  # all expanders together (checker.local.bfs measures it on Linux)


@dataclass(frozen=True)
class Options:
    deadlock: bool = True  # report states with no enabled action (`--no-deadlock`: not)
    max_depth: int | None = None  # explore states up to this depth (initial states: 1)
    max_states: int | None = None  # stop after this many distinct states
    workers: int = 1  # expanding processes (1: this process; the local engine)
    spill_bytes: int = SPILL_BYTES  # a level's states beyond this go to a temporary file
    live_bytes: int = LIVE_BYTES  # the expanders' budget for states kept as live objects
    witness: str | None = None  # a reachability property whose shortest example to report
    # Skip the guards and invariants a step cannot have changed (docs/architecture.md);
    # False evaluates them all (`--no-incremental`), with the same results, to compare.
    incremental: bool = True
