"""How the search uses Spark (SparkSettings, also set with `--spark-conf mc.KEY=VALUE`), and
what it reports of each level (LevelStats)."""

from __future__ import annotations

from dataclasses import dataclass

from checker.errors import ConfigError


@dataclass(frozen=True)
class SparkSettings:
    """How the search uses Spark (the cluster itself is the session's business)."""

    partitions: int | None = None  # fingerprint partitions; default: spark.sql.shuffle.partitions
    lookup_batch: int = 100_000  # links of shallow levels fetched in one job for a trace
    # A level of fewer states runs in fewer tasks than partitions (but one per executor core).
    states_per_task: int = 10_000
    # What a task's expander may remember of the states it met (to drop successors equal to
    # them before they are encoded), as encoded bytes; beyond it, it forgets them.
    task_live_bytes: int = 128 << 20
    # A level with fewer states than this is expanded in the driver (a Spark job costs about a
    # second whatever its size); 0: every level on Spark. `--spark-conf mc.driverLevelStates=N`.
    driver_states: int = 2_000
    # The driver also keeps the fingerprints of the Spark levels (8 bytes each, sent back with
    # each level's counts) while there are at most this many, so that small levels after
    # Spark ones need no job to know which successors are visited.
    driver_fingerprints: int = 10_000_000
    # Whole-stage code generation compiles Java for every new plan, and every level is a new
    # plan: it cost more than it saved in the measurements (docs/scaling.md), where the work is
    # in Python. Worth trying on a cluster with very large levels.
    whole_stage_codegen: bool = False
    # Seconds the search waits for an executor when the cluster has none left (its workers
    # died), before it ends with exit 153 (checker.spark.watch); 0: as long as it takes.
    # `--spark-conf mc.executorWait=SECONDS`.
    executor_wait: int = 30


@dataclass(frozen=True)
class LevelStats:
    """One level of the search, for progress lines and benchmarks."""

    depth: int  # the depth of the states found at this level
    expanded: int  # states of the previous level expanded
    new: int  # new distinct states found
    distinct: int  # distinct states so far
    generated: int  # states generated so far
    seconds: float  # wall time of the level
    where: str = "spark"  # "driver" for a small level expanded there


MC_SETTINGS = {  # --spark-conf key -> SparkSettings
    "mc.driverLevelStates": "driver_states",
    "mc.executorWait": "executor_wait",
}


def mc_settings(conf: dict[str, str]) -> SparkSettings:
    """The engine's own settings among `--spark-conf` pairs (`mc.driverLevelStates=N`,
    `mc.executorWait=SECONDS`), removed from `conf`."""
    fields: dict[str, int] = {}
    for key in [k for k in conf if k.startswith("mc.")]:
        value = conf.pop(key)
        if key not in MC_SETTINGS:
            known = ", ".join(MC_SETTINGS)
            raise ConfigError(f"--spark-conf {key}: not a setting of mc's Spark engine ({known})")
        try:
            number = int(value)
        except ValueError:
            number = -1
        if number < 0:
            raise ConfigError(f"--spark-conf {key}={value}: expected a number, 0 or more")
        fields[MC_SETTINGS[key]] = number
    return SparkSettings(**fields)  # type: ignore[arg-type]
