"""The search on Spark: `check`, level by level. A level is one Spark job on DataFrames, so it
also runs on Spark Connect (no RDD API there):

  level k's table (its states, partitioned by ranges of their ranks; each fingerprint
  partition's visited fingerprints; checker.spark.rows) --mapInArrow(expand_part)--> a row per
  candidate (fingerprint, order code, encoding, link), checked where it is made
  --repartition(fp)--> mapInArrow(admit_part): per fingerprint the candidate of smallest code,
  if not visited, sent to its range of ranks --> level k+1's table, cut from its lineage
  (checkpointed) by the job itself; what the tasks report comes back with it (an Observation).

The level tables are kept: their states' links (fp, parent fp, action, binding) are how
counterexamples are walked back (the shallow levels fetched together) and rebuilt with
checker.trace.replay, so traces are identical to the local engine's by construction. Counts
(states generated, coverage, queue) are exact too: when the search stops inside a level, the
part of the level the local engine had explored before stopping is recounted
(checker.spark.stopping)."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.checkpoint import Array, Checkpoints, Count, Saved
from checker.errors import EngineError
from checker.model import ROOT, Model, Successor
from checker.progress import Progress
from checker.result import CheckResult
from checker.search import outcome
from checker.search.levels import LevelSearch, LevelStart
from checker.search.options import Options
from checker.search.outcome import Failed, Stop
from checker.spark.driver import DriverLevels, DriverVisited
from checker.spark.executor import (
    AdmitJob,
    ExpandJob,
    Shipped,
    level_plan,
    task_summaries,
)
from checker.spark.reporting import LevelReports
from checker.spark.rows import (
    LINK_COLUMNS,
    STATE,
    InCluster,
    LevelJob,
    Links,
    Row,
    component,
    link_of,
    signed,
    unsigned,
)
from checker.spark.saving import Checkpointing
from checker.spark.session import is_connect, local_mode, session
from checker.spark.settings import LevelStats, SparkSettings
from checker.spark.ship import explain, ship_code
from checker.spark.signals import Interrupts, from_spark
from checker.spark.stopping import StopsInLevel, one_row
from checker.spark.tables import SessionTables
from checker.spark.warmup import Rehearsal, WarmUp
from checker.spark.watch import ExecutorWatch
from checker.trace import Link, chain_to, replay

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def check(
    model: Model,
    options: Options | None = None,
    progress: Progress | None = None,
    *,
    spark: SparkSession | None = None,
    settings: SparkSettings | None = None,
    on_level: Callable[[LevelStats], None] | None = None,
    checkpoints: Checkpoints | None = None,
) -> CheckResult:
    """Explore every reachable state of `model` on Spark: the same result as the local engine
    (verdict, counts, coverage, trace), computed level by level across the cluster. With
    `checkpoints`, write them (and resume from `checkpoints.resumed`)."""
    if spark is None:
        spark = session()
    options = options or Options()
    settings = settings or SparkSettings()
    search = _Search(spark, model, options, settings, progress, on_level, checkpoints)
    return outcome.run(search)


class _Search(LevelSearch[InCluster | list[Row]]):
    """The search of checker.search.levels, with its states referred to by fingerprint: a
    level's states (its `Frontier`) are rows in the driver, or a table in the cluster. Its
    parts: the small levels expanded in the driver (`driver_levels`), the stops inside a
    Spark level (`stops`), checkpoints (`saving`), the visited set as the driver asks it
    (`visited`), the session's settings and tables (`session`), the executors' warm-up."""

    def __init__(
        self,
        spark: SparkSession,
        model: Model,
        options: Options,
        settings: SparkSettings,
        progress: Progress | None,
        on_level: Callable[[LevelStats], None] | None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        super().__init__(model, options, progress, checkpoints)
        self.spark = spark
        self.settings = settings
        self.reports = LevelReports(progress, on_level)
        self.n_actions = len(model.actions)
        # links[fp] for the states of a trace only: the rest stays in the cluster.
        self.links: dict[int, Link] = {}
        # Per level: its links (fp, parent, action, binding), in a level table in the cluster
        # (its STATE rows) or in the driver.
        self.levels: list[DataFrame | Links] = []
        # The last table in the cluster: its VISITED rows hold the cluster's visited set.
        self.cluster_visited: DataFrame | None = None
        self.visited = DriverVisited(spark, settings.driver_fingerprints)
        self.sizes: list[int] = []  # states per level
        self.session = SessionTables(spark, settings)  # its settings, the tables it cut
        self.shipped: Shipped | None = None
        self.warmup: WarmUp | None = None  # the executors' warm-up, once the levels grow
        self.lost_executors = False  # the cluster lost every executor (checker.spark.watch)
        self.driver_levels = DriverLevels(self)
        self.stops = StopsInLevel(self)
        self.saving = Checkpointing(self)

    # -- set-up and tear-down --------------------------------------------------------------

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            if is_connect(self.spark):
                self.spark.interruptAll()
            else:
                self.spark.sparkContext.cancelAllJobs()

    def close(self) -> None:
        if self.warmup is not None:
            self.warmup.stop()
        self.session.close()
        self.levels.clear()
        self.visited.spark_links.clear()
        self.cluster_visited = None

    # -- as checker.search.outcome.run asks --------------------------------------------------

    def reachability(self) -> dict[str, tuple[tuple[int, int], int]]:
        return {name: (where, where[1]) for name, where in self.reached.items()}

    def interrupted(self) -> None:
        self.cancel()
        if self.lost_executors:
            return  # a checkpoint needs the executors (the level's states are theirs)
        self.save(after_interrupt=True)

    def run(self) -> None:
        """The search, with Ctrl-C and SIGTERM cancelling the jobs in flight, and a failure of
        Spark itself (not of the spec) an EngineError that names its cause."""
        watched = None if local_mode(self.spark) or is_connect(self.spark) else self.spark
        watch = ExecutorWatch(watched, self.settings.executor_wait, self.cancel)
        try:
            with Interrupts(self.cancel) as interrupts, watch:
                try:
                    super().run()
                except Exception as exc:
                    if from_spark(exc):
                        interrupts.raise_held()  # a job cancelled for a signal: raise it now
                    raise
        except (Stop, Failed, EngineError):
            raise
        except Exception as exc:
            if not from_spark(exc):
                raise
            lost = watch.failure()  # a job cancelled as no executor was left
            if lost is not None:
                self.lost_executors = True
                raise lost from None
            raise EngineError(f"Spark failed: {explain(exc)}") from exc

    def explore(self) -> None:
        self.session.configure()
        ship_code(self.spark, self.model)
        self.shipped = Shipped.of(self.model)
        super().explore()

    def place(self, frontier: InCluster | list[Row], level: int) -> InCluster | list[Row]:
        """A small level in the driver, a large one in the cluster. The executors are warmed
        up while the levels grow towards the cluster (an eighth of the way)."""
        size = self.sizes[level - 1]
        if self.warmup is None and size >= self.settings.driver_states // 8:
            self.warmup = self._warm_up(frontier)
        if size < self.settings.driver_states:
            return self.driver_levels.here(frontier, level)
        return self.driver_levels.to_cluster(frontier, level)

    def _warm_up(self, frontier: InCluster | list[Row]) -> WarmUp | None:
        """The executors' rehearsal of a level (checker.spark.warmup) on one of the level's
        states, in a thread; none for a level already in the cluster (a resumed search)."""
        if not isinstance(frontier, list) or not frontier:
            return None
        assert self.shipped is not None
        fp, _, data, _, _, binding = frontier[0]
        s = self.session
        rehearsal = Rehearsal(
            self.shipped, (fp, data, binding), self.n_actions, s.cores, s.partitions
        )
        return WarmUp(self.spark, rehearsal, s.cut).start()

    def expand_level(self, frontier: InCluster | list[Row], level: int) -> InCluster | list[Row]:
        if isinstance(frontier, list):
            return self.driver_levels.expand(frontier, level)
        return self._expand_level(frontier, level)

    def expand_at_bound(self, frontier: InCluster | list[Row], level: int) -> None:
        if isinstance(frontier, list):
            self.driver_levels.at_bound(frontier, level)
        else:
            self.stops.at_depth_bound(frontier, level)

    def trace_to(self, where: int | tuple[int, int]) -> list[Any]:
        """The trace to the state with fingerprint `where` (a stop's: its links are on hand),
        or `(fp, depth)` (a reachability property's: its links fetched first)."""
        if isinstance(where, tuple):
            fp, depth = where
            self.walk_back(fp, depth)
        else:
            fp = where
        return replay(self.model, chain_to(self.links, fp))

    # -- checkpoints (checker.spark.saving) -------------------------------------------------

    def saved_arrays(self, start: LevelStart, after_interrupt: bool) -> dict[str, Array] | None:
        return self.saving.arrays(start, after_interrupt)

    def saved_counts(self, start: LevelStart) -> dict[str, Count]:
        return self.saving.counts(start)

    def saved_reference(self, ref: int) -> int:
        return self.saving.reference(ref)

    def restore(self, saved: Saved) -> tuple[InCluster, int]:
        return self.saving.restore(saved)

    # -- the initial level (in the driver: init() is usually small) ---------------------------

    def new_frontier(self) -> list[Row]:
        return []

    def initial_known(self, fp: int) -> bool:
        return fp in self.links

    def add_initial(self, init: Successor, frontier: list[Row]) -> int:
        fp = init.fp
        self.links[fp] = (None, ROOT, init.binding)
        key = component(init.binding)
        frontier.append((signed(fp), key, init.data, None, ROOT, init.binding))
        return fp

    def initial_done(self, frontier: list[Row]) -> list[Row]:
        self.driver_levels.add(frontier)
        return frontier

    # -- a level on Spark ------------------------------------------------------------

    def add_level(self, table: InCluster, size: int) -> None:
        self.levels.append(table.df)
        self.visited.spark_links.append(table.df)
        self.sizes.append(size)
        self.cluster_visited = table.df

    def tasks_for(self, states: int) -> int:
        """Python tasks for `states` states: one per executor core at least (fewer would leave
        cores idle for the whole level), more for a large level, up to the partitions."""
        per_task = self.settings.states_per_task
        wanted = max(self.session.cores, -(-states // per_task))
        return max(1, min(self.session.partitions, wanted))

    def level_job(
        self, frontier: InCluster, level: int, *, checks: bool, send_fps: bool = False
    ) -> LevelJob:
        """The level's one Spark job: its states expanded (checked unless not `checks`), their
        candidates admitted, the next level's table cut from its lineage."""
        size = self.sizes[level - 1]
        homes = self.tasks_for(size)  # the next level's ranges of ranks: as many as tasks here
        assert self.shipped is not None
        expand = ExpandJob(
            self.shipped,
            frontier.prefix,
            self.options.deadlock,
            checks,
            tuple(self.level_wanted) if checks else (),
            self.settings.task_live_bytes,
        )
        admit = AdmitJob(size, homes, self.n_actions, send_fps)
        plan, observation = level_plan(
            frontier.df, frontier.homes, self.session.partitions, expand, admit
        )
        table = self.session.cut(plan)
        parts = task_summaries(observation)
        counts = np.zeros(homes, np.int64)
        admitted_parts = [p for (stage, _), p in sorted(parts.items()) if stage == "admit"]
        for part in admitted_parts:
            counts += np.asarray(part["homes"], np.int64)
        prefix = tuple(np.concatenate([[0], np.cumsum(counts)]).tolist())
        expanded = [p for (stage, _), p in sorted(parts.items()) if stage == "expand"]
        return LevelJob(InCluster(table, homes, prefix), expanded, admitted_parts)

    def _expand_level(self, frontier: InCluster, level: int) -> InCluster:
        started = time.perf_counter()
        self.level_wanted = self.wanted()
        send_fps = self.visited.spark_fps is not None and (
            self.distinct + self.sizes[level - 1] * 20 <= self.settings.driver_fingerprints
        )
        job = self.level_job(frontier, level, checks=True, send_fps=send_fps)
        count = job.count
        self.stops.in_level(frontier, job, level)
        # The whole level passed: each reachability property satisfied first here.
        for i in self.level_wanted:
            hits = [(code, fp) for p in job.expanded for j, code, fp in p["reached"] if j == i]
            if hits:
                self.reached[self.model.reachables[i].name] = (unsigned(min(hits)[1]), level + 1)
        for part in job.expanded:
            generated = np.asarray(part["generated"], np.int64)
            self.generated += int(generated.sum())
            self.fired += generated
        for part in job.admitted:
            self.new += np.asarray(part["new"], np.int64)
        self.distinct += count
        if count:
            self.depth = level + 1
        self.queue = count
        self.visited.keep_spark_level(job.admitted if send_fps else None)
        self.add_level(job.table, count)
        self.report(level + 1, self.sizes[level - 1], count, time.perf_counter() - started)
        return job.table

    def report(
        self, depth: int, expanded: int, new: int, seconds: float, where: str = "spark"
    ) -> None:
        stats = LevelStats(depth, expanded, new, self.distinct, self.generated, seconds, where)
        self.reports.level(stats)

    # -- traces ----------------------------------------------------------------------------

    def _links(self, table: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        return table.filter(F.col("kind") == STATE).select(*LINK_COLUMNS)

    def walk_back(self, fp: int, level: int) -> None:
        """Fill self.links from the state `fp` at `level` back to its initial state: the
        shallow levels (small in a BFS) in one job, then one look-up per deeper level."""

        fetched: dict[int, Link] = {}
        shallow, total = 0, 0
        while shallow < level and total + self.sizes[shallow] <= self.settings.lookup_batch:
            total += self.sizes[shallow]
            shallow += 1
        frames = [self._links(t) for t in self.levels[:shallow] if not isinstance(t, list)]
        if frames:
            together = functools.reduce(lambda a, b: a.union(b), frames)
            for row in together.collect():
                fetched[unsigned(row["fp"])] = self._link(row)
        for links in self.levels[:shallow]:
            if isinstance(links, list):
                fetched.update((unsigned(t[0]), link_of(t)) for t in links)
        current: int | None = fp
        depth = level
        while current is not None:
            links = self.levels[depth - 1]
            if depth <= shallow:
                link = fetched[current]
            elif isinstance(links, list):
                key = signed(current)
                link = next(link_of(t) for t in links if t[0] == key)
            else:
                link = self._link(one_row(self._links(links), "fp", signed(current)))
            self.links[current] = link
            current = link[0]
            depth -= 1

    @staticmethod
    def _link(row: Any) -> Link:
        parent = row["parent"]
        return (None if parent is None else unsigned(parent), row["action"], row["binding"])
