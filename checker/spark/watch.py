"""A cluster that loses its last executor: Spark keeps the job's tasks pending until one comes
back, and the driver would wait silently until --timeout. ExecutorWatch asks the driver's JVM,
every few seconds, how many executors are registered; once none has been for
`SparkSettings.executor_wait` seconds (`--spark-conf mc.executorWait=SECONDS`; 0: wait as long
as it takes), it cancels the jobs, and the search ends with an EngineFailure that says so
(exit 153, the counts so far). Local mode (the driver is the executor) and Spark Connect (the
server's business) are not watched."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from checker.errors import EngineFailure

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

POLL = 2.0  # seconds between two questions to the JVM
ADVICE = (
    "Start workers again (or check why they died: their logs, their memory) and run again;"
    " --checkpoint DIR lets a long run go on later from its last level, and --spark-conf"
    " mc.executorWait=0 waits for executors as long as it takes."
)


class ExecutorWatch:
    """`with ExecutorWatch(spark, seconds, cancel) as watch`: `watch.failure()` is the
    EngineFailure to raise once the watch cancelled the jobs (None before)."""

    def __init__(self, spark: SparkSession | None, seconds: int, cancel: Callable[[], None]):
        self.spark = spark
        self.seconds = seconds
        self.cancel = cancel
        self.lost = False
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> ExecutorWatch:
        if self.spark is not None and self.seconds > 0:
            self.thread = threading.Thread(target=self._watch, daemon=True, name="mc-executors")
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()

    def failure(self) -> EngineFailure | None:
        if not self.lost:
            return None
        return EngineFailure(
            f"no Spark executor is left (none registered for {self.seconds} s: the cluster lost"
            " its workers)",
            ADVICE,
        )

    def _watch(self) -> None:
        since: float | None = None  # when the executors were last seen gone
        while not self.stop.wait(POLL):
            if self.lost:  # again, until the search stops: a job may start after a cancel
                self.cancel()
                continue
            count = self._executors()
            if count is None or count > 0:
                since = None
                continue
            now = time.monotonic()
            since = now if since is None else since
            if now - since >= self.seconds:
                self.lost = True
                self.cancel()

    def _executors(self) -> int | None:
        """The executors registered with the driver (its block managers, but its own), or
        None if the JVM cannot be asked."""
        try:
            context: Any = self.spark.sparkContext  # type: ignore[union-attr]
            return int(context._jsc.sc().getExecutorMemoryStatus().size()) - 1
        except Exception:
            return None
