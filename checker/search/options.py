"""What a search is asked: whether deadlocks count, its bounds, its processes and memory, and
the reachability property whose shortest example to report."""

from __future__ import annotations

from dataclasses import dataclass

from checker.search.expansion import LIVE_BYTES

SPILL_BYTES = 256 << 20  # keep up to this many bytes of a level's states in memory


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
