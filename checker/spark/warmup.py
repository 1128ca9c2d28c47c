"""The executors made ready while the driver computes the first levels: a Spark job of one task
per executor core, in a thread, in which each Python worker imports mc, loads the model and
sets up its expander. Without it the first Spark level paid for that (on 0.35-CPU workers,
about 10 s of a level of a few states); with it, that time overlaps the levels the driver
expands itself (checker.spark.driver), and the tasks of a level queue behind it otherwise."""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import TYPE_CHECKING

from checker.spark.executor import Shipped, warm_part

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


TAG = "mc-warm-up"  # the job's tag, to cancel it alone


class WarmUp:
    """`WarmUp(spark, shipped, tasks).start()`; `stop()` once the search ends (its failure, if
    any, is left to the first level, which reports it in words: checker.spark.ship)."""

    def __init__(self, spark: SparkSession, shipped: Shipped, tasks: int) -> None:
        self.spark = spark
        self.shipped = shipped
        self.tasks = tasks
        self.thread = threading.Thread(target=self._run, daemon=True, name="mc-warm-up")
        self.ran: list[int] = []  # the partitions whose task loaded the model, once it ended

    def start(self) -> WarmUp:
        self.thread.start()
        return self

    def _run(self) -> None:
        with contextlib.suppress(Exception):  # cancelled, or the executors cannot run Python
            self.spark.addTag(TAG)  # this thread's jobs only
            one_each = self.spark.range(0, self.tasks, 1, self.tasks)
            warm = one_each.mapInArrow(functools.partial(warm_part, self.shipped), "part int")
            self.ran = sorted(row["part"] for row in warm.collect())

    def stop(self) -> None:
        """Cancel the job if it still runs (a search that ended before its executors were
        needed), and wait for the thread."""
        if self.thread.is_alive():
            with contextlib.suppress(Exception):
                self.spark.interruptTag(TAG)
        self.thread.join()
