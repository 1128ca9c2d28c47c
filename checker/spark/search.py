"""The search on Spark: `check`, level by level. A level is one Spark job on DataFrames, so it
also runs on Spark Connect (no RDD API there):

  frontier (fp, key, state) --mapInArrow(Expander)--> candidates (fp, key, state, parent,
  action, binding) --groupBy(fp): min key--> one candidate per state --left anti join visited
  (no shuffle of the visited side: both are hash partitioned on fp)--> new states, persisted:
  the next frontier. Invariants are checked on the new states in the executors in the same job.

Parent links (fp, parent fp, action, binding) are kept per level, partitioned by fp; their
union is the visited set. Counterexamples are walked back with look-ups in them (the shallow
levels fetched together) and rebuilt with checker.trace.replay, so traces are identical to
the local engine's by construction. Counts (states generated, coverage, queue) are exact too:
when the search stops inside a level, the part of the level the local engine had explored
before stopping is recounted (checker.spark.stopping)."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.checkpoint import Checkpoints
from checker.errors import ConfigError, EngineError
from checker.model import ROOT, Model, Successor
from checker.progress import Progress, Snapshot
from checker.result import CheckResult
from checker.search import outcome
from checker.search.expansion import Expander
from checker.search.levels import LevelSearch
from checker.search.options import Options
from checker.search.outcome import Failed, Stop
from checker.spark.driver import DriverLevels
from checker.spark.executor import check_batches, expand_batches
from checker.spark.rows import (
    CANDIDATE_SCHEMA,
    CHECKED_SCHEMA,
    DEADLOCK,
    GENERATED,
    LINK_COLUMNS,
    RAISED,
    SUCCESSOR,
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
from checker.spark.stopping import StopsInLevel
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


class _Search(DriverLevels, StopsInLevel, Checkpointing, LevelSearch):
    """The search of checker.search.levels, with its states referred to by fingerprint."""

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
        self.on_level = on_level
        self.n_actions = len(model.actions)
        # links[fp] for the states of a trace only: the rest stays in the cluster.
        self.links: dict[int, Link] = {}
        # Per level: its links (fp, parent, action, binding), in the cluster or in the driver.
        self.levels: list[DataFrame | Links] = []
        # The link tables in the cluster (Spark levels, and batches of driver levels shipped
        # for a Spark level): their fingerprints are `visited`.
        self.spark_links: list[DataFrame] = []
        self.driver_fps: set[int] = set()  # the fingerprints of the levels held in the driver
        # Those of the levels explored on Spark, sorted, while there are few enough (None:
        # too many, and the cluster is asked).
        self.spark_fps: np.ndarray | None = np.zeros(0, np.int64)
        self.unshipped: list[int] = []  # levels held in the driver and not yet in the cluster
        # The local engine's expander for the driver levels, and the level whose states it
        # holds live (the one the last driver level found), if any.
        self.expander: Expander | None = None
        self.live_level: int | None = None
        self.met_bytes = 0  # the encoded bytes of the states the expander remembers
        self.remember = False  # whether it remembers them across levels
        self.sizes: list[int] = []  # states per level
        self.persisted: list[DataFrame] = []
        self.saved_conf: dict[str, str | None] = {}
        self.observed: list[Any] | None = None
        self.visited: DataFrame | None = None  # the union of the levels' fingerprints
        self.started = time.perf_counter()
        self.lost_executors = False  # the cluster lost every executor (checker.spark.watch)

    # -- set-up and tear-down --------------------------------------------------------------

    def _configure(self) -> None:
        conf = self.spark.conf
        partitions = self.settings.partitions or int(conf.get("spark.sql.shuffle.partitions"))
        wanted = {
            # Adaptive execution would coalesce shuffle partitions and hide the partitioning of
            # checkpointed data: the visited set would be reshuffled every level.
            "spark.sql.adaptive.enabled": "false",
            "spark.sql.shuffle.partitions": str(partitions),
            "spark.sql.codegen.wholeStage": str(self.settings.whole_stage_codegen).lower(),
        }
        for key, value in wanted.items():
            self.saved_conf[key] = conf.get(key, None)
            conf.set(key, value)
        self.partitions = partitions
        self.local = local_mode(self.spark)
        if not self.local and not is_connect(self.spark):
            context = self.spark.sparkContext
            if context.getCheckpointDir() is None:
                directory = conf.get("spark.checkpoint.dir", None)
                if not directory:
                    raise ConfigError(
                        "the Spark engine on a cluster checkpoints to shared storage: set"
                        " spark.checkpoint.dir (e.g. --spark-conf spark.checkpoint.dir=hdfs://...)"
                    )
                context.setCheckpointDir(directory)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            if is_connect(self.spark):
                self.spark.interruptAll()
            else:
                self.spark.sparkContext.cancelAllJobs()

    def close(self) -> None:
        for df in self.persisted:
            with contextlib.suppress(Exception):  # the session may be gone already
                df.unpersist()
        self.persisted.clear()
        self.levels.clear()
        self.spark_links.clear()
        for key, value in self.saved_conf.items():
            try:
                if value is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, value)
            except Exception:
                pass

    def _persist(self, df: DataFrame) -> DataFrame:
        df = df.persist()
        self.persisted.append(df)
        return df

    def _release(self, df: DataFrame | list[Row]) -> None:
        if isinstance(df, list):
            return
        held = [i for i, p in enumerate(self.persisted) if p is df]
        if held:
            del self.persisted[held[0]]
            df.unpersist()
        elif self.local and not is_connect(self.spark):
            # A local checkpoint's blocks would stay until the JVM collects its RDD; free them
            # now (a Connect server frees them when the DataFrame is garbage collected).
            with contextlib.suppress(Exception):
                df._jdf.queryExecution().logical().rdd().unpersist(False)

    def _cut(self, df: DataFrame, eager: bool) -> DataFrame:
        """Cut `df`'s lineage: a local checkpoint in local mode, else a reliable one."""
        return df.localCheckpoint(eager=eager) if self.local else df.checkpoint(eager=eager)

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
        self._configure()
        ship_code(self.spark, self.model)
        super().explore()

    def level_size(self, frontier: DataFrame | list[Row], level: int) -> int:
        return self.sizes[level - 1]

    def place(self, frontier: DataFrame | list[Row], level: int) -> DataFrame | list[Row]:
        """A small level in the driver, a large one in the cluster."""
        if self.sizes[level - 1] < self.settings.driver_states:
            return self._here(frontier, level)
        return self._in_spark(frontier)

    def expand_level(
        self, frontier: DataFrame | list[Row], level: int
    ) -> DataFrame | list[Row]:
        if isinstance(frontier, list):
            return self._driver_level(frontier, level)
        return self._expand_level(frontier, level)

    def expand_at_bound(self, frontier: DataFrame | list[Row], level: int) -> None:
        if isinstance(frontier, list):
            self._driver_depth_bound(frontier, level)
        else:
            self._stop_at_depth_bound(frontier, level)

    def release(self, frontier: DataFrame | list[Row]) -> None:
        self._release(frontier)

    def trace_to(self, where: int | tuple[int, int]) -> list[Any]:
        """The trace to the state with fingerprint `where` (a stop's: its links are on hand),
        or `(fp, depth)` (a reachability property's: its links fetched first)."""
        if isinstance(where, tuple):
            fp, depth = where
            self._walk_back(fp, depth)
        else:
            fp = where
        return replay(self.model, chain_to(self.links, fp))

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
        self._add_here(frontier)
        return frontier

    # -- a level on Spark ------------------------------------------------------------

    def _add_level(self, frontier: DataFrame, size: int) -> None:
        # Lazily checkpointed: materialised by the next level's job, which reads the frontier
        # anyway; from then on the links are a leaf of every plan and keep their partitioning.
        links = self._cut(frontier.select(*LINK_COLUMNS), eager=False)
        self.levels.append(links)
        self.spark_links.append(links)
        self.sizes.append(size)
        fps = links.select("fp")
        self.visited = fps if self.visited is None else self.visited.union(fps)

    def _visited(self) -> DataFrame:
        assert self.visited is not None
        return self.visited.hint("merge")  # never broadcast: it stays partitioned

    def _tasks(self, states: int) -> int:
        """Python tasks for `states` states: fewer than the partitions for a small level, since
        each task has a fixed cost (a Python worker round trip) that dwarfs small work."""
        per_task = self.settings.states_per_task
        return max(1, min(self.partitions, -(-states // per_task)))

    def _observed(self) -> list[Any]:
        """The metrics observed on the candidates as they stream by (built once: every column
        expression is a round trip to the JVM): the successors generated, in all and per
        action, and the smallest key of a state whose expansion raised or that is
        deadlocked."""
        if self.observed is None:
            from pyspark.sql import functions as F

            counted = F.col("kind") == GENERATED
            event = (F.col("kind") == RAISED) | (F.col("kind") == DEADLOCK)
            self.observed = [
                F.sum(F.when(counted, F.col("binding")).otherwise(0)).alias("generated"),
                F.min(F.when(event, F.col("key"))).alias("event"),
                *[
                    F.sum(
                        F.when(counted & (F.col("action") == a), F.col("binding")).otherwise(0)
                    ).alias(f"a{a}")
                    for a in range(self.n_actions)
                ],
            ]
        return self.observed

    def _expand(self, frontier: DataFrame, tasks: int) -> tuple[DataFrame, Any]:
        from pyspark.sql import Observation

        run = functools.partial(expand_batches, self.model, self.options.deadlock)
        states = frontier.select("fp", "key", "state")
        if tasks < self.partitions:
            states = states.coalesce(tasks)  # the frontier's partitioning is not needed here
        candidates = states.mapInArrow(run, CANDIDATE_SCHEMA)
        observation = Observation()
        return candidates.observe(observation, *self._observed()), observation

    def _expand_level(self, frontier: DataFrame, level: int) -> DataFrame:
        from pyspark.sql import functions as F

        started = time.perf_counter()
        tasks = self._tasks(self.sizes[level - 1])
        candidates, observation = self._expand(frontier, tasks)
        chosen = (
            candidates.filter(F.col("kind") == SUCCESSOR)
            .groupBy("fp")
            .agg(F.min(F.struct("key", "state", "parent", "action", "binding")).alias("m"))
            .select("fp", "m.*")
        )
        new = self._persist(chosen.join(self._visited(), "fp", "left_anti"))
        wanted = self.level_wanted = self.wanted()
        send_fps = self.spark_fps is not None and (
            self.distinct + self.sizes[level - 1] * 20 <= self.settings.driver_fingerprints
        )
        run = functools.partial(check_batches, self.model, self.n_actions, wanted, send_fps)
        # Coalescing after the persist keeps the new states partitioned by fp; the partial
        # counts (one row per task) are added up here rather than in one more stage.
        checked = new.coalesce(tasks) if tasks < self.partitions else new
        columns = checked.select("key", "state", "action", "fp")
        parts = columns.mapInArrow(run, CHECKED_SCHEMA).collect()
        count = sum(row["n"] for row in parts)
        new_per_action = [sum(row["new"][a] for row in parts) for a in range(self.n_actions)]
        bad = min((bytes(row["bad"]) for row in parts if row["bad"] is not None), default=None)
        metrics = observation.get
        self._stop_in_level(frontier, new, level, count, metrics, bad)
        # The whole level passed: each reachability property satisfied first here.
        for j, i in enumerate(wanted):
            hits = [
                (bytes(row["reached_key"][j]), row["reached_fp"][j])
                for row in parts
                if row["reached_key"][j] is not None
            ]
            if hits:
                self.reached[self.model.reachables[i].name] = (unsigned(min(hits)[1]), level + 1)
        self.generated += int(metrics["generated"] or 0)
        for a in range(self.n_actions):
            self.fired[a] += int(metrics[f"a{a}"] or 0)
            self.new[a] += new_per_action[a]
        self.distinct += count
        if count:
            self.depth = level + 1
        self.queue = count  # `frontier` is released when the next level starts
        self._keep_fps(parts if send_fps else None)
        if count and (level + 1) % self.settings.checkpoint_every == 0:
            cut = self._cut(new, eager=True)  # bounds the plans and the recomputation
            self._release(new)
            new = cut
        self._add_level(new, count)
        self._report(level + 1, self.sizes[level - 1], count, time.perf_counter() - started)
        return new

    def _report(
        self, depth: int, expanded: int, new: int, seconds: float, where: str = "spark"
    ) -> None:
        stats = LevelStats(depth, expanded, new, self.distinct, self.generated, seconds, where)
        if self.on_level is not None:
            self.on_level(stats)
        progress = self.progress
        if progress is None:
            return
        if progress.bar_enabled:
            progress.report(
                Snapshot(depth - 1, self.distinct, self.generated, new, expanded, expanded)
            )
            return
        elapsed = time.perf_counter() - self.started
        where = ", in the driver" if where == "driver" else ""
        progress.stream.write(
            f"Level {depth}: {new:,} new states from {expanded:,} ({seconds:.2f} s{where});"
            f" {self.distinct:,} distinct, {self.generated:,} generated"
            f" in {elapsed:.1f} s.\n"
        )
        progress.stream.flush()

    # -- traces ----------------------------------------------------------------------------

    def _walk_back(self, fp: int, level: int) -> None:
        """Fill self.links from the state `fp` at `level` back to its initial state: the
        shallow levels (small in a BFS) in one job, then one look-up per deeper level."""

        fetched: dict[int, Link] = {}
        shallow, total = 0, 0
        while shallow < level and total + self.sizes[shallow] <= self.settings.lookup_batch:
            total += self.sizes[shallow]
            shallow += 1
        frames = [links for links in self.levels[:shallow] if not isinstance(links, list)]
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
                link = self._link(self._row(links, "fp", signed(current)))
            self.links[current] = link
            current = link[0]
            depth -= 1

    @staticmethod
    def _link(row: Any) -> Link:
        parent = row["parent"]
        return (None if parent is None else unsigned(parent), row["action"], row["binding"])
