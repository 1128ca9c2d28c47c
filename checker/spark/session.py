"""The environment of the Spark engine: Java, pyspark, the master (reachable or not), the Spark
session (classic, or Spark Connect) and the Python its executors run."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

from checker.errors import ConfigError, EngineError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# -- the environment -------------------------------------------------------------------------


def java_problem() -> str | None:
    """Why Spark cannot start a JVM here, or None if Java 17+ is available."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return (
            "the Spark engine needs Java 17 or newer, and no `java` was found"
            " (on PATH or in JAVA_HOME); install it, e.g. with scripts/ensure-java.sh"
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the Spark engine needs Java 17 or newer; running {java} failed: {exc}"
    text = out.stderr + out.stdout
    major = 0
    if 'version "' in text:
        version = text.split('version "', 1)[1].split('"', 1)[0]
        parts = version.split(".")
        try:
            major = int(parts[1] if parts[0] == "1" else parts[0].split("-")[0])
        except (IndexError, ValueError):
            major = 0
    if major < 17:
        return f"the Spark engine needs Java 17 or newer; {java} is {text.splitlines()[0]!r}"
    return None


def require_runtime(remote: str | None = None) -> None:
    """Raise EngineError (exit 153) if pyspark, its Arrow support or Java is missing."""
    try:
        import pyarrow  # noqa: F401  (mapInArrow)
        import pyspark
    except ImportError as exc:
        raise EngineError(
            f"the Spark engine needs pyspark>=4.0 with pyarrow ({exc}): install mc with its"
            " Spark extra, pip install 'mc[spark]' (in a checkout: pip install -e '.[spark]')"
        ) from None
    if int(pyspark.__version__.split(".")[0]) < 4:
        raise EngineError(f"the Spark engine needs pyspark>=4.0, not {pyspark.__version__}")
    if remote is not None:
        try:
            import grpc  # noqa: F401
            import pandas  # noqa: F401
        except ImportError as exc:
            raise EngineError(
                f"Spark Connect needs pyspark's connect extra ({exc}): pip install 'mc[spark]'"
            ) from None
    if remote is None or remote.startswith("local"):  # a JVM starts here
        problem = java_problem()
        if problem:
            raise EngineError(problem)


def require_reachable(master: str) -> None:
    """Spark retries a standalone master it cannot reach for about a minute, printing Java stack
    traces; one TCP connection says it at once. (A port that answers but is no Spark master
    is left to Spark's own error.)"""
    problems = []
    for address in master.removeprefix("spark://").split(","):  # several with ZooKeeper HA
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--master {master}: expected spark://HOST:PORT[,HOST:PORT...]")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
            return
        except OSError as exc:
            problems.append(f"{address}: {exc.strerror or exc}")
    raise EngineError(f"--master {master}: no Spark master answers ({'; '.join(problems)})")


def _quiet() -> None:
    # PySpark 4.x warns that pandas 3 is not fully supported; mc uses no pandas API.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    # A Connect session cannot change static settings such as the UI; that is fine here.
    warnings.filterwarnings("ignore", message="Failed to set spark.ui")


def session(
    master: str | None = None,
    remote: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A Spark session for the engine: classic (`master`, or none: spark-submit's or
    `local[*]`) or Spark Connect (`remote`, e.g. sc://host:15002 or "local").

    The master is set only when given: in code it would override spark-submit's --master.
    """
    if master is not None and remote is not None:
        raise ConfigError("--master and --remote exclude each other")
    require_runtime(remote)
    _quiet()
    from pyspark.sql import SparkSession

    if remote is None:
        existing = SparkSession.getActiveSession()
        if existing is not None:  # e.g. a notebook's or a test's session: use it as it is
            return existing
    conf = dict(conf or {})
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # launched by spark-submit
    local = (remote or master or ("" if submitted else "local")).startswith("local")
    if remote is None or local:
        choose_python(conf, local or _on_this_machine(master))
    builder = SparkSession.builder.appName("mc")
    if remote is not None:
        builder = builder.remote(remote)
    elif master is not None:
        builder = builder.master(master)
    if remote is None:
        conf.setdefault("spark.ui.showConsoleProgress", "false")  # mc prints its own
        conf.setdefault("spark.cleaner.referenceTracking.cleanCheckpoints", "true")
        # A task waits for a core where its input is (a shuffle's map output, a checkpoint's
        # file) for up to 3 s by default, while another executor's core is idle: a level's
        # tasks are short, and every input is one network read away.
        conf.setdefault("spark.locality.wait", "0")
        # Every DataFrame function call otherwise records its Python call site in the JVM
        # (PySpark's DataFrame debugging): about 100 of a level's 200 round trips to the JVM.
        conf.setdefault("spark.python.sql.dataFrameDebugging.enabled", "false")
        if not local:
            # A cluster's driver JVM plans and schedules short jobs: the C2 compiler cost it
            # more CPU than its code saved (docs/scaling.md: half its CPU, the same wall time
            # on a full core; under a 0.4-CPU quota a level's planning twice as fast).
            conf.setdefault("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    elif local:  # a Connect server started here: a few partitions per core, not 200
        conf.setdefault("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1)))
    for key, value in conf.items():
        builder = builder.config(key, value)
    before = children()
    try:
        spark = builder.getOrCreate()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or --timeout: leave no JVM behind
        abandon(children() - before)
        raise
    except Exception as exc:
        raise EngineError(f"Spark did not start: {first_line(exc)}") from exc
    if remote is None:
        context = spark.sparkContext
        context.setLogLevel("ERROR")
        if "spark.sql.shuffle.partitions" not in conf:
            # Spark's 200 shuffle partitions cost ~200 tasks per level. On a cluster one per
            # core (of the executors registered by now, at least 2): a task has a fixed cost
            # and fingerprints hash evenly; in local mode two per core.
            per_core = 2 if local else 1
            spark.conf.set(
                "spark.sql.shuffle.partitions", str(per_core * context.defaultParallelism)
            )
    return spark


def children() -> set[int]:
    """The processes this one started and that still run (Linux: from /proc; elsewhere none
    are known)."""
    me = os.getpid()
    found = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.add(int(entry))
    return found


def abandon(started: set[int]) -> None:
    """A session start interrupted: end the processes it started (spark-submit's JVM, which
    ignores SIGINT and would otherwise run on), and forget pyspark's half-made gateway."""
    for pid in started:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in started:
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    from pyspark import SparkContext

    for name in ("_gateway", "_jvm", "_active_spark_context"):
        with contextlib.suppress(Exception):
            setattr(SparkContext, name, None)


def choose_python(conf: Mapping[str, str], here: bool) -> None:
    """The Python the executors run. PySpark takes it from PYSPARK_PYTHON when the
    SparkContext starts; spark-submit sets that from `spark.pyspark.python`, and so does mc
    for `--spark-conf spark.pyspark.python=...`. Without either, executors on this machine
    (`here`: local mode, or a master on 127.0.0.1) run this interpreter, whose environment
    has what mc needs, rather than whatever `python3` comes first on PATH."""
    python = conf.get("spark.pyspark.python")
    if python:
        os.environ["PYSPARK_PYTHON"] = python
    elif here and "PYSPARK_PYTHON" not in os.environ:
        os.environ["PYSPARK_PYTHON"] = sys.executable


def _on_this_machine(master: str | None) -> bool:
    """Whether a standalone master is on the loopback address (its workers, most likely, too)."""
    if not master or not master.startswith("spark://"):
        return False
    hosts = [a.rpartition(":")[0].strip("[]") for a in master[8:].split(",")]
    return all(h in ("127.0.0.1", "localhost", "::1") for h in hosts)


def active_session() -> SparkSession | None:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def local_mode(spark: SparkSession) -> bool:
    if is_connect(spark):
        master = spark.conf.get("spark.master", None)
    else:
        master = spark.sparkContext.master
    return master is None or master.startswith("local")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
