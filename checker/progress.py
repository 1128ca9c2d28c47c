"""Progress on long runs: TLC-style lines on a pipe or log, a live bar on a terminal."""

from __future__ import annotations

import sys
import time
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
        if self.bar_enabled:
            self._draw_bar(snap)
        else:
            self.stream.write(self.line(snap) + "\n")
            self.stream.flush()

    def line(self, snap: Snapshot) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        clock = time.strftime("%H:%M:%S", time.gmtime(elapsed))
        return (
            f"Progress({snap.depth}) at {clock}: {snap.generated:,} states generated"
            f" ({snap.generated / elapsed:,.0f} s/s), {snap.distinct:,} distinct states found"
            f" ({snap.distinct / elapsed:,.0f} ds/s), {snap.queue:,} states left on queue."
        )

    def report_walks(self, snap: WalkSnapshot) -> None:
        if self.bar_enabled:
            if self._bar is None:
                from tqdm import tqdm  # only for a bar on a terminal: mc starts without it

                self._bar = tqdm(
                    file=self.stream,
                    unit=" traces",
                    leave=False,
                    dynamic_ncols=True,
                    total=snap.traces,
                    desc="simulating",
                )
            self._bar.n = snap.walks
            self._bar.set_postfix_str(
                f"visited {snap.visited:,}, distinct {snap.distinct:,}", refresh=False
            )
            self._bar.refresh()
        else:
            self.stream.write(self.walk_line(snap) + "\n")
            self.stream.flush()

    def walk_line(self, snap: WalkSnapshot) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        clock = time.strftime("%H:%M:%S", time.gmtime(elapsed))
        return (
            f"Progress at {clock}: {snap.walks:,} of {snap.traces:,} traces"
            f" ({snap.walks / elapsed:,.1f} traces/s), {snap.visited:,} states visited"
            f" ({snap.visited / elapsed:,.0f} s/s), {snap.distinct:,} distinct states."
        )

    def _draw_bar(self, snap: Snapshot) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(file=self.stream, unit=" states", leave=False, dynamic_ncols=True)
        if snap.depth != self._bar_depth:
            self._bar.reset(total=snap.level_size)
            self._bar.set_description(f"depth {snap.depth}")
            self._bar_depth = snap.depth
        self._bar.n = snap.level_done
        self._bar.set_postfix_str(
            f"distinct {snap.distinct:,}, generated {snap.generated:,}, queue {snap.queue:,}",
            refresh=False,
        )
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
