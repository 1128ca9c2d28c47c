"""Progress on long runs: TLC-style lines on a pipe or log, a live bar on a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm


@dataclass
class Snapshot:
    depth: int  # the level being expanded
    distinct: int
    generated: int
    queue: int  # states found but not yet expanded
    level_done: int  # states of this level expanded so far
    level_size: int


@dataclass
class WalkSnapshot:
    """Where `mc simulate` is: walks taken, states visited."""

    walks: int  # walks finished
    traces: int  # walks asked for
    visited: int  # states visited, a state visited twice counting twice
    distinct: int


class Progress:
    """Reports a Snapshot at most every `interval` seconds (0 disables the lines)."""

    def __init__(
        self, stream: TextIO | None = None, interval: float = 5.0, bar: bool | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.bar_enabled = self.stream.isatty() if bar is None else bar
        self.start = time.monotonic()
        self.last = self.start
        self._bar: tqdm | None = None
        self._bar_depth = -1

    def due(self) -> bool:
        now = time.monotonic()
        period = 0.2 if self.bar_enabled else self.interval
        if period <= 0 or now - self.last < period:
            return False
        self.last = now
        return True

    def report(self, snap: Snapshot) -> None:
        if not self.bar_enabled:
            self._write(self.line(snap))
            return
        if self._bar is None:
            self._bar = self._new_bar(" states")
        if snap.depth != self._bar_depth:
            self._bar.reset(total=snap.level_size)
            self._bar.set_description(f"depth {snap.depth}")
            self._bar_depth = snap.depth
        self._draw(
            snap.level_done,
            f"distinct {snap.distinct:,}, generated {snap.generated:,}, queue {snap.queue:,}",
        )

    def line(self, snap: Snapshot) -> str:
        clock, rate = self._clock()
        generated = f"{snap.generated:,} states generated ({rate(snap.generated)} s/s)"
        distinct = f"{snap.distinct:,} distinct states found ({rate(snap.distinct)} ds/s)"
        queue = f"{snap.queue:,} states left on queue"
        return f"Progress({snap.depth}) at {clock}: {generated}, {distinct}, {queue}."

    def report_walks(self, snap: WalkSnapshot) -> None:
        if not self.bar_enabled:
            self._write(self.walk_line(snap))
            return
        if self._bar is None:
            self._bar = self._new_bar(" traces", total=snap.traces, desc="simulating")
        self._draw(snap.walks, f"visited {snap.visited:,}, distinct {snap.distinct:,}")

    def walk_line(self, snap: WalkSnapshot) -> str:
        clock, rate = self._clock()
        walks = f"{snap.walks:,} of {snap.traces:,} traces ({rate(snap.walks, 1)} traces/s)"
        visited = f"{snap.visited:,} states visited ({rate(snap.visited)} s/s)"
        return f"Progress at {clock}: {walks}, {visited}, {snap.distinct:,} distinct states."

    def _clock(self) -> tuple[str, Callable[..., str]]:
        """The time since the start as HH:MM:SS, and `rate(count, decimals=0)`: count per
        second since the start."""
        elapsed = max(time.monotonic() - self.start, 1e-9)  # never 0, a divisor

        def rate(count: int, decimals: int = 0) -> str:
            return f"{count / elapsed:,.{decimals}f}"

        return time.strftime("%H:%M:%S", time.gmtime(elapsed)), rate

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _new_bar(self, unit: str, **settings: object) -> tqdm:
        from tqdm import tqdm  # only for a bar on a terminal: mc starts without it

        return tqdm(file=self.stream, unit=unit, leave=False, dynamic_ncols=True, **settings)

    def _draw(self, done: int, postfix: str) -> None:
        assert self._bar is not None
        self._bar.n = done
        self._bar.set_postfix_str(postfix, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
