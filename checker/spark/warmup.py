"""The executors made ready before a level needs them: a rehearsal, one level's own job (the
plan of checker.spark.executor.level_plan, cut as the search cuts its levels) on a table of one
state per executor core. Every executor's Python workers start, import mc, load the model and
build their expander, and its JVM runs a level's code paths (both shuffles, the Arrow
transfers, the checkpoint's write) for the first time, which on 0.35-CPU workers cost the first
Spark level 12 to 14 s (docs/scaling.md). Its result is dropped.

Two ways to run it: `WarmUp(...).start()`, in a thread while the driver computes the first
levels (the search does this once the levels reach an eighth of the way to the cluster: a
level's tasks queue behind it otherwise), and `warm_up(spark, model)` before a search, for a
session that serves several or a benchmark that times the search alone; a search in a session
so warmed for its model starts none."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from checker.model import Model
from checker.spark.arrow import level_batch
from checker.spark.executor import AdmitJob, ExpandJob, Shipped, level_plan, task_summaries
from checker.spark.rows import LEVEL_SCHEMA, STATE, home_keys, signed
from checker.spark.settings import SparkSettings
from checker.spark.ship import ship_code
from checker.spark.tables import SessionTables

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


TAG = "mc-warm-up"  # the job's tag, to cancel it alone

_warmed: set[tuple[int, str]] = set()  # (id(session), the model's digest) rehearsed


@dataclass(frozen=True)
class Rehearsal:
    """What the rehearsal level is made of: the model as the tasks carry it, one of its states
    (signed fingerprint, encoding, binding), its actions, and the tasks of each stage (the
    executors' cores) and the fingerprint partitions."""

    shipped: Shipped
    seed: tuple[int, bytes, int]
    actions: int
    tasks: int
    partitions: int


def rehearse(
    spark: SparkSession,
    rehearsal: Rehearsal,
    cut: Callable[[DataFrame], DataFrame],
    rounds: int = 1,
) -> list[int]:
    """Run the rehearsal level `rounds` times (a job each: the driver JVM's compiler keeps
    compiling the planning's and scheduling's code over the first levels); the partitions
    whose expansion task ran, in order."""
    import pyarrow as pa

    n = rehearsal.tasks
    fp, data, binding = rehearsal.seed
    ranks = np.arange(n, dtype=np.int64)
    states = level_batch(
        n,
        kind=np.full(n, STATE, np.int32),
        fp=np.full(n, fp, np.int64),
        code=ranks,
        state=[data] * n,
        binding=np.full(n, binding, np.int32),
        home=np.array(home_keys(n), np.int64),
    )
    source = spark.createDataFrame(pa.Table.from_batches([states]), LEVEL_SCHEMA)
    prefix = tuple(range(n + 1))  # partition j holds the state of rank j
    expand = ExpandJob(rehearsal.shipped, prefix, False, True, (), 16 << 20)
    admit = AdmitJob(n, n, rehearsal.actions, False)
    ran: list[int] = []
    for _ in range(rounds):
        plan, observation = level_plan(source, n, rehearsal.partitions, expand, admit)
        cut(plan)
        ran = sorted(part for stage, part in task_summaries(observation) if stage == "expand")
    _warmed.add((id(spark), rehearsal.shipped.digest))
    return ran


def warmed(spark: SparkSession, shipped: Shipped) -> bool:
    """Whether this session's executors rehearsed a level of this model."""
    return (id(spark), shipped.digest) in _warmed


def warm_up(
    spark: SparkSession, model: Model, settings: SparkSettings | None = None, rounds: int = 3
) -> None:
    """Rehearse a level of `model` `rounds` times now, on its first initial state (mc's code
    shipped first), so that the search that follows in this session starts on warm executors
    and a warm driver."""
    tables = SessionTables(spark, settings or SparkSettings())
    tables.configure()
    try:
        ship_code(spark, model)
        first = model.initial_one(0)
        seed = (signed(first.fp), first.data, first.binding)
        shipped = Shipped.of(model)
        rehearsal = Rehearsal(shipped, seed, len(model.actions), tables.cores, tables.partitions)
        rehearse(spark, rehearsal, tables.cut, rounds)
    finally:
        tables.close()


class WarmUp:
    """`WarmUp(spark, rehearsal, cut).start()`; `stop()` once the search ends (its failure, if
    any, is left to the first level, which reports it in words: checker.spark.ship)."""

    def __init__(
        self, spark: SparkSession, rehearsal: Rehearsal, cut: Callable[[DataFrame], DataFrame]
    ) -> None:
        self.spark = spark
        self.rehearsal = rehearsal
        self.cut = cut
        self.thread = threading.Thread(target=self._run, daemon=True, name="mc-warm-up")
        self.ran: list[int] = []  # the partitions whose expansion task ran, once it ended

    def start(self) -> WarmUp:
        """Start the rehearsal, unless this session's executors rehearsed this model already."""
        if not warmed(self.spark, self.rehearsal.shipped):
            self.thread.start()
        return self

    def _run(self) -> None:
        with contextlib.suppress(Exception):  # cancelled, or the executors cannot run Python
            self.spark.addTag(TAG)  # this thread's jobs only
            self.ran = rehearse(self.spark, self.rehearsal, self.cut)

    def stop(self) -> None:
        """Cancel the job if it still runs (a search that ended before its executors were
        needed), and wait for the thread."""
        if self.thread.is_alive():
            with contextlib.suppress(Exception):
                self.spark.interruptTag(TAG)
        if self.thread.ident is not None:
            self.thread.join()
