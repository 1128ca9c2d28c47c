"""The Spark engine (`mc check --engine spark`): the breadth-first search of checker.search,
level by level, with the frontier and the visited set partitioned by fingerprint across a
Spark cluster (or `local[*]`, or a Spark Connect server). Small levels are expanded in the
driver; the others are one Spark job each. Same verdict, counts and counterexample as the
local engine.

The modules, each readable on its own:

- `session`: Java, pyspark, the master, the Spark session and the executors' Python;
- `ship`: mc's code to the executors (a zip), and errors from them explained;
- `rows`: the tables' columns, fingerprints as Spark longs, and the keys that keep the local
  engine's order;
- `executor`: what runs in the executors (expand, check, count);
- `settings`: SparkSettings (`--spark-conf mc.driverLevelStates=N`) and LevelStats;
- `search`: `check`, the search level by level, a level as a Spark job, traces;
- `driver`: small levels expanded in the driver;
- `warmup`: the executors' rehearsal of a level, during a search or before one (`warm_up`);
- `stopping`: stopping inside a level like the local engine;
- `saving`: checkpoints;
- `signals`: Ctrl-C, SIGTERM and --timeout during Spark jobs;
- `engine`: one session for every spec of a `mc check` run.

Nothing here imports pyspark at module level: the local engine runs without it.
"""

from checker.spark.engine import SparkEngine
from checker.spark.rows import component, last_component, signed, unsigned
from checker.spark.search import check
from checker.spark.session import (
    is_connect,
    java_problem,
    require_reachable,
    require_runtime,
    session,
)
from checker.spark.settings import LevelStats, SparkSettings, mc_settings
from checker.spark.ship import code_zip, explain, ship_code
from checker.spark.warmup import warm_up

__all__ = [
    "LevelStats",
    "SparkEngine",
    "SparkSettings",
    "check",
    "code_zip",
    "component",
    "explain",
    "is_connect",
    "java_problem",
    "last_component",
    "mc_settings",
    "require_reachable",
    "require_runtime",
    "session",
    "ship_code",
    "signed",
    "unsigned",
    "warm_up",
]
