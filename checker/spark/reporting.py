"""What the Spark search says as each level ends, a part it holds: the level's LevelStats to
the caller's `on_level` (benchmarks), and to the progress bar, or a line a level when there is
no bar."""

from __future__ import annotations

import time
from collections.abc import Callable

from checker.progress import Progress, Snapshot
from checker.spark.settings import LevelStats


class LevelReports:
    def __init__(
        self, progress: Progress | None, on_level: Callable[[LevelStats], None] | None
    ) -> None:
        self.progress = progress
        self.on_level = on_level
        self.started = time.perf_counter()

    def level(self, stats: LevelStats) -> None:
        if self.on_level is not None:
            self.on_level(stats)
        progress = self.progress
        if progress is None:
            return
        depth, new, expanded = stats.depth, stats.new, stats.expanded
        if progress.bar_enabled:
            progress.report(
                Snapshot(depth - 1, stats.distinct, stats.generated, new, expanded, expanded)
            )
            return
        elapsed = time.perf_counter() - self.started
        where = ", in the driver" if stats.where == "driver" else ""
        progress.stream.write(
            f"Level {depth}: {new:,} new states from {expanded:,} ({stats.seconds:.2f} s{where});"
            f" {stats.distinct:,} distinct, {stats.generated:,} generated"
            f" in {elapsed:.1f} s.\n"
        )
        progress.stream.flush()
