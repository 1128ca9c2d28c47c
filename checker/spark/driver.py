"""Small levels in the driver. A Spark job costs about a second whatever its size, so a level
with fewer states than SparkSettings.driver_states is expanded here, one state at a time in the
local engine's order, with Model.expand as on the executors; the search moves to Spark when a
level grows past it, and back when the levels shrink. The links of the levels explored here
stay here (and go to the cluster in one batch when a Spark level needs the visited set)."""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from checker.engine import Failed, Stop
from checker.errors import EvaluationError
from checker.model import Successor, Successors
from checker.spark.rows import (
    FRONTIER_COLUMNS,
    FRONTIER_SCHEMA,
    LINK_SCHEMA,
    Row,
    component,
    signed,
    unsigned,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """States are acyclic: the cyclic collector would only walk them (as in checker.local.bfs)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class DriverLevels:
    """_Search's part that expands small levels in the driver."""

    # -- small levels in the driver ----------------------------------------------------------

    def _here(self, frontier: DataFrame | list[Row], level: int) -> list[Row]:
        """The level's states in the driver, in key order (the local engine's): a frontier in
        Spark is collected, and its level's links are kept here from then on."""
        if isinstance(frontier, list):
            return frontier
        rows = frontier.select(*FRONTIER_COLUMNS).collect()
        here = sorted(
            (
                (
                    r["fp"],
                    bytes(r["key"]),
                    bytes(r["state"]),
                    r["parent"],
                    r["action"],
                    r["binding"],
                )
                for r in rows
            ),
            key=lambda row: row[1],
        )
        links = self.levels[level - 1]
        self.spark_links = [df for df in self.spark_links if df is not links]
        self._rebuild_visited()
        self.levels[level - 1] = [(r[0], r[3], r[4], r[5]) for r in here]
        self.driver_fps.update(r[0] for r in here)
        self.unshipped.append(level - 1)
        self._release(frontier)
        return here

    def _in_spark(self, frontier: DataFrame | list[Row]) -> DataFrame:
        """The level's states as a DataFrame partitioned by fp, with every link kept in the
        driver shipped to the visited set first."""
        if not isinstance(frontier, list):
            return frontier
        self._ship_links()
        df = self.spark.createDataFrame(frontier, FRONTIER_SCHEMA)
        return self._persist(df.repartition(self.partitions, "fp"))

    def _ship_links(self) -> None:
        """The links of the levels explored in the driver since the last Spark level, added to
        the visited set in the cluster (one DataFrame for them all, partitioned by fp)."""
        if not self.unshipped:
            return
        rows = [row for i in self.unshipped for row in self.levels[i]]  # type: ignore[union-attr]
        df = self.spark.createDataFrame(rows, LINK_SCHEMA).repartition(self.partitions, "fp")
        self.spark_links.append(self._cut(df, eager=True))
        self._rebuild_visited()
        self.unshipped.clear()

    def _rebuild_visited(self) -> None:
        fps = [links.select("fp") for links in self.spark_links]
        self.visited = functools.reduce(lambda a, b: a.union(b), fps) if fps else None

    def _add_here(self, rows: list[Row]) -> None:
        """A level found in the driver: its links stay here until a Spark level needs them."""
        self.levels.append([(r[0], r[3], r[4], r[5]) for r in rows])
        self.sizes.append(len(rows))
        self.driver_fps.update(r[0] for r in rows)
        self.unshipped.append(len(self.levels) - 1)

    def _keep_fps(self, parts: list[Any] | None) -> None:
        """The fingerprints a Spark level sent back (None: it sent none; from then on the
        cluster is asked)."""
        import numpy as np

        if parts is None or self.spark_fps is None:
            self.spark_fps = None
            return
        new = np.fromiter((fp for row in parts for fp in row["fps"]), np.int64)
        self.spark_fps = np.union1d(self.spark_fps, new)
        if len(self.spark_fps) > self.settings.driver_fingerprints:
            self.spark_fps = None

    def _known(self, fps: Iterable[int]) -> set[int]:
        """Which of the fingerprints (signed) belong to visited states: those of levels held
        here, and one job (the candidates broadcast, the visited set scanned in place) for
        those of the levels in the cluster."""
        asked = set(fps)
        known = asked & self.driver_fps
        rest = asked - known
        if rest and self.visited is not None and self.spark_fps is not None:
            import numpy as np

            ask = np.fromiter(rest, np.int64, len(rest))
            known.update(ask[np.isin(ask, self.spark_fps, assume_unique=True)].tolist())
        elif rest and self.visited is not None:
            from pyspark.sql import functions as F

            candidates = self.spark.createDataFrame([(fp,) for fp in rest], "fp long")
            found = self.visited.join(F.broadcast(candidates), "fp", "left_semi").distinct()
            known.update(row["fp"] for row in found.collect())
        return known

    def _expand_here(self, frontier: list[Row]) -> tuple[list[Successors], int | None]:
        """The successors of the level's states, in order, up to the first state whose
        expansion raises or (with deadlock checking) that is deadlocked: its index, or None."""
        out: list[Successors] = []
        deadlock = self.options.deadlock
        for index, row in enumerate(frontier):
            try:
                successors = self.model.expand(row[2])
            except EvaluationError:
                return out, index
            if not successors and deadlock and successors.deadlocked:
                return out, index
            out.append(successors)
        return out, None

    def _driver_level(self, frontier: list[Row], level: int) -> list[Row]:
        """Expand a small level in the driver, one state at a time in the local engine's order,
        with Model.expand as on the executors: the same new states, parents, keys, counts and
        stops as a Spark level would find, without a Spark job (whose fixed cost is about a
        second)."""
        with _no_gc():
            return self._expand_and_admit(frontier, level)

    def _expand_and_admit(self, frontier: list[Row], level: int) -> list[Row]:
        started = time.perf_counter()
        model = self.model
        expanded, event = self._expand_here(frontier)
        known = self._known(signed(s.fp) for successors in expanded for s in successors)
        wanted = self._level_wanted = self._wanted()
        limit = self.options.max_states
        found: list[Row] = []
        fresh: set[int] = set()
        reached: dict[str, tuple[int, int]] = {}
        size = len(frontier)
        for index, (row, successors) in enumerate(zip(frontier, expanded)):
            fp, key = row[0], row[1]
            self.queue = size - index + len(found)  # as checker.local.bfs, before expanding a state
            for position, succ in enumerate(successors):
                new = signed(succ.fp)
                if new in known or new in fresh:
                    continue
                if limit is not None and self.distinct >= limit:
                    self._count_parent(successors, position)
                    raise Stop("incomplete", bound=f"--max-states {limit} reached")
                fresh.add(new)
                self.distinct += 1
                self.depth = level + 1
                self.new[succ.action] += 1
                found.append(
                    (new, key + component(position), succ.data, fp, succ.action, succ.binding)
                )
                try:
                    broken = model.violated(succ.state)
                    got = model.reached(succ.state, wanted) if wanted and broken is None else ()
                except EvaluationError as exc:
                    self._count_parent(successors, position)
                    self._trace_from(succ, unsigned(fp), level)
                    raise Failed(exc, succ.fp) from exc
                if broken is not None:
                    self._count_parent(successors, position)
                    self._trace_from(succ, unsigned(fp), level)
                    raise Stop("violation", succ.fp, invariant=broken.name)
                for i in got:
                    reached.setdefault(model.reachables[i].name, (succ.fp, level + 1))
            self._count_parent(successors, len(successors) - 1)
        if event is not None:
            row = frontier[event]
            self.queue = size - event + len(found)
            self._walk_back(unsigned(row[0]), level)
            self._raise_parent_event(unsigned(row[0]), row[2])
        for name, where in reached.items():
            self.reached.setdefault(name, where)
        self.queue = len(found)
        self._add_here(found)
        self._report(level + 1, size, len(found), time.perf_counter() - started, "driver")
        return found

    def _count_parent(self, successors: Successors, last: int) -> None:
        """A state's successors counted as checker.local.bfs counts them when it stops at the one at
        `last` (or goes past them all): all generated, those up to `last` fired."""
        self.generated += len(successors)
        for succ in successors[: last + 1]:
            self.fired[succ.action] += 1

    def _trace_from(self, succ: Successor, parent: int, level: int) -> None:
        self.links[succ.fp] = (parent, succ.action, succ.binding)
        self._walk_back(parent, level)

    def _driver_depth_bound(self, frontier: list[Row], level: int) -> None:
        """_stop_at_depth_bound for a level held in the driver."""
        expanded, event = self._expand_here(frontier)
        for successors in expanded:
            self._count_parent(successors, len(successors) - 1)
        if event is not None:
            row = frontier[event]
            self._walk_back(unsigned(row[0]), level)
            self._raise_parent_event(unsigned(row[0]), row[2])
        fps = [signed(s.fp) for successors in expanded for s in successors]
        if len(self._known(fps)) < len(set(fps)):
            self.queue = len(frontier)
            raise Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")
        self.queue = 0
