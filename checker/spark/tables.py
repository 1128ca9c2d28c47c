"""The Spark session as the search uses it, a part the search holds: the settings it runs
with (restored when it ends), and the tables it computes and cuts from their lineage (freed
when it ends)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from checker.errors import ConfigError
from checker.spark.session import is_connect, local_mode
from checker.spark.settings import SparkSettings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class SessionTables:
    def __init__(self, spark: SparkSession, settings: SparkSettings) -> None:
        self.spark = spark
        self.settings = settings
        self.saved_conf: dict[str, str | None] = {}
        self.tables: list[DataFrame] = []  # every table cut, to free at the end
        self.partitions = 0  # the shuffle partitions: the fingerprint partitions
        self.cores = 1  # the executors' cores: each level runs at least this many tasks
        self.local = True

    def configure(self) -> None:
        conf = self.spark.conf
        partitions = self.settings.partitions or int(conf.get("spark.sql.shuffle.partitions"))
        wanted = {
            # Adaptive execution would coalesce shuffle partitions: the states' ranges of ranks
            # and the fingerprint partitions must stay as planned.
            "spark.sql.adaptive.enabled": "false",
            "spark.sql.shuffle.partitions": str(partitions),
            "spark.sql.codegen.wholeStage": str(self.settings.whole_stage_codegen).lower(),
        }
        for key, value in wanted.items():
            self.saved_conf[key] = conf.get(key, None)
            conf.set(key, value)
        self.partitions = partitions
        self.local = local_mode(self.spark)
        if is_connect(self.spark):  # the server's cores are not known here: its partitions
            self.cores = partitions
        else:
            self.cores = min(partitions, self.spark.sparkContext.defaultParallelism)
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

    def cut(self, df: DataFrame) -> DataFrame:
        """Compute `df` and cut its lineage (one job): a local checkpoint in local mode, else a
        reliable one, in spark.checkpoint.dir."""
        cut = df.localCheckpoint(eager=True) if self.local else df.checkpoint(eager=True)
        self.tables.append(cut)
        return cut

    def close(self) -> None:
        if self.local and not is_connect(self.spark):
            # A local checkpoint's blocks would stay until the JVM collects its RDD; free them
            # now (a Connect server frees them when the DataFrame is garbage collected).
            for df in self.tables:
                with contextlib.suppress(Exception):  # the session may be gone already
                    df._jdf.queryExecution().logical().rdd().unpersist(False)
        self.tables.clear()
        for key, value in self.saved_conf.items():
            try:
                if value is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, value)
            except Exception:
                pass
