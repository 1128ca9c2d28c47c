"""The Spark engine (`mc check --engine spark`): the same breadth-first search as checker.bfs,
level by level, with the frontier and the visited set partitioned by fingerprint across a
Spark cluster (or `local[*]`, or a Spark Connect server).

One level is one Spark job on DataFrames, so it also runs on Spark Connect (no RDD API there):

  frontier (fp, key, state) --mapInArrow(Model.expand)--> candidates (fp, key, state, parent,
  action, binding) --groupBy(fp): min key--> one candidate per state --left anti join visited
  (no shuffle of the visited side: both are hash partitioned on fp)--> new states, persisted:
  the next frontier. Invariants are checked on the new states in the executors in the same job.

`key` is the state's position in the local engine's order, as bytes that compare like the
tuple (init index, position in the parent's expand list, ...) of its first discovery: a parent
key plus one order-preserving component per level. The minimum key of a fingerprint is thus
the parent the local engine would record, and the smallest key among the states that
violate, deadlock or raise is the one the local engine would report first. Keys are computed
where states are expanded, with no global sort per level; they grow by one byte per level
(two or more for states with over 247 successors).

Parent links (fp, parent fp, action, binding) are kept per level, partitioned by fp; their
union is the visited set. Counterexamples are walked back with look-ups in them (the shallow
levels fetched together) and rebuilt with checker.trace.replay, so traces are identical to
the local engine's by construction. Counts (states generated, coverage, queue) are exact too:
when the search stops inside a level, the part of the level the local engine had explored
before stopping is recounted.

Checkpoints (`--checkpoint DIR`) are the local engine's kind of file (checker.checkpoint): at
the start of a level, the links of the earlier levels and the level's states (with their keys)
are collected to the driver and written there, so a checkpoint is bounded by the driver's
memory; resuming turns them back into DataFrames partitioned by fingerprint.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.machinery
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any

from checker.bfs import Options
from checker.checkpoint import Array, Checkpoints, Saved
from checker.encoding import decode
from checker.errors import ConfigError, EngineError, EvaluationError
from checker.model import ROOT, Model, Successor, Successors
from checker.progress import Progress, Snapshot
from checker.result import ActionCoverage, CheckResult, ErrorInfo
from checker.trace import Link, chain_to, replay

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

# Kinds of the rows the expansion emits: a successor, or an event of the expanded state.
SUCCESSOR, RAISED, DEADLOCK = 0, 1, 2

FRONTIER_COLUMNS = ("fp", "key", "state", "parent", "action", "binding")
FRONTIER_SCHEMA = "fp long, key binary, state binary, parent long, action int, binding int"
CANDIDATE_SCHEMA = (
    "kind int, fp long, key binary, state binary, parent long, action int, binding int"
)
CHECKED_SCHEMA = (
    "n long, new array<long>, bad binary, reached_key array<binary>, reached_fp array<long>"
)
COUNTED_SCHEMA = "fired array<long>"
LINK_COLUMNS = ("fp", "parent", "action", "binding")
LINK_SCHEMA = "fp long, parent long, action int, binding int"

# A level held in the driver: its states as frontier rows (fp, key, state, parent, action,
# binding), in key order, and its links (fp, parent, action, binding); fingerprints signed.
Row = tuple[int, bytes, bytes, "int | None", int, int]
Links = list[tuple[int, "int | None", int, int]]

_TOP = 1 << 64
_SIGN = 1 << 63


def signed(fp: int) -> int:
    """An unsigned 64-bit fingerprint as a Spark long (int64)."""
    return fp - _TOP if fp >= _SIGN else fp


def unsigned(fp: int) -> int:
    """A Spark long back to the unsigned fingerprint of checker.encoding.fingerprint."""
    return fp + _TOP if fp < 0 else fp


def component(index: int) -> bytes:
    """One level of a key: prefix-free and order-preserving, so that concatenated keys compare
    (as unsigned bytes, like Spark's binary ordering) exactly like tuples of indexes."""
    if index < 248:
        return bytes((index,))
    raw = index.to_bytes((index.bit_length() + 7) // 8, "big")
    return bytes((247 + len(raw),)) + raw


def last_component(key: bytes, parent_key: bytes) -> int:
    """The index that `component` appended to `parent_key` to make `key`."""
    rest = key[len(parent_key) :]
    return rest[0] if rest[0] < 248 else int.from_bytes(rest[1:], "big")


@dataclass(frozen=True)
class SparkSettings:
    """How the search uses Spark (the cluster itself is the session's business)."""

    partitions: int | None = None  # fingerprint partitions; default: spark.sql.shuffle.partitions
    checkpoint_every: int = 4  # cut the frontier's lineage every this many levels
    lookup_batch: int = 100_000  # links of shallow levels fetched in one job for a trace
    states_per_task: int = 10_000  # a smaller level runs in fewer tasks than partitions
    # A level with fewer states than this is expanded in the driver (a Spark job costs about a
    # second whatever its size); 0: every level on Spark. `--spark-conf mc.driverLevelStates=N`.
    driver_states: int = 2_000
    # Whole-stage code generation compiles Java for every new plan, and every level is a new
    # plan: it cost more than it saved in the measurements (docs/scaling.md), where the work is
    # in Python. Worth trying on a cluster with very large levels.
    whole_stage_codegen: bool = False


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
    elif local:  # a Connect server started here: a few partitions per core, not 200
        conf.setdefault("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1)))
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        raise EngineError(f"Spark did not start: {_first_line(exc)}") from exc
    if remote is None:
        context = spark.sparkContext
        context.setLogLevel("ERROR")
        if "spark.sql.shuffle.partitions" not in conf:
            # Spark's 200 shuffle partitions cost ~200 tasks per level; two per core are plenty
            # (on a cluster: the cores of the executors registered by now, at least 2).
            spark.conf.set("spark.sql.shuffle.partitions", str(2 * context.defaultParallelism))
    return spark


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


MC_SETTINGS = {"mc.driverLevelStates": "driver_states"}  # --spark-conf key -> SparkSettings


def mc_settings(conf: dict[str, str]) -> SparkSettings:
    """The engine's own settings among `--spark-conf` pairs (`mc.driverLevelStates=N`),
    removed from `conf`."""
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
            raise ConfigError(f"--spark-conf {key}={value}: expected a number of states, 0 or more")
        fields[MC_SETTINGS[key]] = number
    return SparkSettings(**fields)  # type: ignore[arg-type]


class Explorer:
    """The Spark engine for `mc check`: checks models one after another in one session,
    started on first use (a spec that fails to load costs no JVM) and stopped by close() if
    this process started it."""

    def __init__(
        self,
        master: str | None = None,
        remote: str | None = None,
        conf: Mapping[str, str] | None = None,
        settings: SparkSettings | None = None,
    ) -> None:
        require_runtime(remote)  # fail before loading specs, not after
        self.master = master
        self.remote = remote
        self.conf = dict(conf or {})
        given = mc_settings(self.conf)  # the mc.* keys, taken out of Spark's settings
        self.settings = settings or given
        self.spark: SparkSession | None = None
        self.owned = False

    def check(
        self,
        model: Model,
        options: Options | None = None,
        progress: Progress | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> CheckResult:
        if self.spark is None:
            self.owned = self.remote is not None or _active_session() is None
            self.spark = session(self.master, self.remote, self.conf)
        return check(
            model,
            options,
            progress,
            spark=self.spark,
            settings=self.settings,
            checkpoints=checkpoints,
        )

    def close(self) -> None:
        if self.spark is not None and self.owned:
            with contextlib.suppress(Exception):
                self.spark.stop()
        self.spark = None


def _active_session() -> SparkSession | None:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _local_mode(spark: SparkSession) -> bool:
    if is_connect(spark):
        master = spark.conf.get("spark.master", None)
    else:
        master = spark.sparkContext.master
    return master is None or master.startswith("local")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


PACKAGES = "msgpack, xxhash, numpy and pyarrow"  # what the executors need besides mc's code
_FIX = (
    "mc ships its own code to the executors; their Python needs the packages mc depends on"
    f" ({PACKAGES}): ship a packed virtual environment (venv-pack or conda-pack) with"
    " --spark-conf spark.archives=env.tar.gz#env --spark-conf"
    " spark.pyspark.python=./env/bin/python, or point --spark-conf spark.pyspark.python at"
    " a Python that has them on every node"
)


def explain(exc: BaseException) -> str:
    """What went wrong in Spark, in one paragraph: for an error in a Python worker, the
    exception's last line (PySpark puts the worker's whole traceback in the message) and,
    for a module the executors lack or a Python they cannot run, how to fix it."""
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if "Cannot run program" in text:
        line = next(line for line in lines if "Cannot run program" in line)
        program = line.split("Cannot run program", 1)[1].split(":", 1)[0].strip(' "')
        return (
            f"the executors cannot run the Python {program!r} ({line.split(':', 2)[-1].strip()})."
            f" Set --spark-conf spark.pyspark.python to a Python that exists on every node;"
            f" {_FIX}"
        )
    if "Python worker" not in lines[0] and "PythonException" not in text:
        return lines[0]
    # The last line of the worker's traceback: "ModuleNotFoundError: No module named 'x'".
    errors = [line for line in lines if _exception_line(line)]
    last = errors[-1] if errors else lines[-1]
    if last.startswith(("ModuleNotFoundError", "ImportError")):
        module = last.split("named", 1)[1].strip(" '\"") if "named" in last else None
        what = f"the module {module!r}" if module else "a module"
        return f"a Python worker lacks {what} ({last}). {_FIX}"
    if "PYTHON_VERSION_MISMATCH" in text or "different version" in last:
        return f"{last}. Run the executors on the driver's Python version: {_FIX}"
    return f"a Python worker raised {last}"


def _exception_line(line: str) -> bool:
    """Whether a traceback line is an exception's "Name: message" line."""
    head = line.split(":", 1)[0].rsplit(".", 1)[-1]
    return (
        ":" in line
        and head.isidentifier()
        and head[0].isupper()
        and (head.endswith(("Error", "Exception", "Interrupt", "Exit")) or head == "Warning")
    )


def ship_by_value(model: Model) -> None:
    """Make the spec's classes travel inside the pickled tasks, exactly as loaded here: a spec
    is loaded from a file path (or defined in a test). Its whole top-level package goes by
    value (a spec may import sibling specs)."""
    from pyspark import cloudpickle

    top = _spec_package(model)
    module = sys.modules.get(top) if top else None
    if module is not None:
        cloudpickle.register_pickle_by_value(module)


def _spec_package(model: Model) -> str | None:
    """The top-level package (or module) of the spec's code, unless it is installed."""
    name = type(model.spec).__module__
    top = name.partition(".")[0]
    if name == "__main__" or top in SHIPPED or top in metadata.packages_distributions():
        return None
    return top


SHIPPED = ("checker", "invariants")  # mc's own packages, always shipped


def code_zip(model: Model) -> Path:
    """A zip of mc's code for the executors: `checker` and `invariants` (their .py files, and
    the compiled hot path, which checker.speedups loads from the zip if it can, else the
    executors run the pure-Python code), and the spec's top-level package. Its name is the
    hash of its contents, so the same code is the same file."""
    import hashlib
    import zipfile

    top = _spec_package(model)
    if top in _zips:  # the code this process runs: read once
        return _zips[top]
    files: list[tuple[str, Path]] = []

    def add(module: ModuleType) -> None:
        path = Path(module.__file__ or "")
        if not hasattr(module, "__path__"):  # a lone module
            files.append((path.name, path))
            return
        root = path.parent
        for file in sorted(root.rglob("*")):
            if "__pycache__" in file.parts or not file.is_file():
                continue
            compiled = any(file.name.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)
            if file.suffix == ".py" or compiled:
                files.append((file.relative_to(root.parent).as_posix(), file))

    for name in SHIPPED:
        add(importlib.import_module(name))
    if top and top in sys.modules and getattr(sys.modules[top], "__file__", None):
        add(sys.modules[top])
    digest = hashlib.sha256()
    contents = []
    for arcname, file in files:
        data = file.read_bytes()
        digest.update(arcname.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
        contents.append((arcname, data))
    target = Path(tempfile.gettempdir()) / f"mc-code-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for arcname, data in contents:
                archive.writestr(zipfile.ZipInfo(arcname, (1980, 1, 1, 0, 0, 0)), data)
        os.replace(partial, target)
    _zips[top] = target
    return target


_zips: dict[str | None, Path] = {}  # the spec's package -> its zip


_shipped: dict[int, set[str]] = {}  # id(session) -> the zips it was given


def ship_code(spark: SparkSession, model: Model) -> None:
    """Send mc's code and the spec's to the executors, which then need only the third-party
    packages (msgpack, xxhash, numpy, pyarrow): a zip added to the Python path of their
    Python workers, with addPyFile on classic Spark and addArtifacts on Spark Connect."""
    ship_by_value(model)
    path = str(code_zip(model))
    done = _shipped.setdefault(id(spark), set())
    if path in done:
        return
    if is_connect(spark):
        try:
            spark.addArtifacts(path, pyfile=True)
        except Exception as exc:  # the same zip, added by an earlier run in this session
            if "already exists" not in str(exc).lower():
                raise
    else:
        spark.sparkContext.addPyFile(path)
    done.add(path)


# -- the executors' side -----------------------------------------------------------------------


def _arrow() -> Any:
    import pyarrow as pa

    return pa


_CHUNK = 65_536  # rows per Arrow batch sent back to the JVM


def expand_batches(
    model: Model, deadlock: bool, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow: (fp, key, state) -> one row per successor, in Model.expand order, keyed by
    parent key + position; plus a RAISED or DEADLOCK row (with the parent's key) for a state
    whose expansion raised or, with `deadlock`, that is deadlocked (no action enabled)."""
    pa = _arrow()
    names = CANDIDATE_SCHEMA.replace(",", "").split()[::2]
    types = [pa.int32(), pa.int64(), pa.binary(), pa.binary(), pa.int64(), pa.int32(), pa.int32()]
    schema = pa.schema(list(zip(names, types)))
    cols: list[list[Any]] = [[] for _ in names]
    kinds, fps, keys, states, parents, actions, bindings = cols

    def flush() -> pa.RecordBatch:
        batch = pa.RecordBatch.from_arrays(
            [pa.array(c, type=t) for c, t in zip(cols, types)], schema=schema
        )
        for c in cols:
            c.clear()
        return batch

    for batch in batches:
        rows = zip(
            batch.column(0).to_pylist(), batch.column(1).to_pylist(), batch.column(2).to_pylist()
        )
        for fp, key, data in rows:
            try:
                successors = model.expand(data)
            except EvaluationError:
                event = RAISED  # the driver re-runs it to report the error itself
            else:
                if successors:
                    for index, succ in enumerate(successors):
                        kinds.append(SUCCESSOR)
                        fps.append(signed(succ.fp))
                        keys.append(key + component(index))
                        states.append(succ.data)
                        parents.append(fp)
                        actions.append(succ.action)
                        bindings.append(succ.binding)
                    if len(kinds) >= _CHUNK:
                        yield flush()
                    continue
                if not (deadlock and successors.deadlocked):
                    continue
                event = DEADLOCK
            for c, value in zip(cols, (event, fp, key, None, None, None, None)):
                c.append(value)
    if kinds:
        yield flush()


def check_batches(
    model: Model, n_actions: int, wanted: list[int], batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow over new states (key, state, action, fp): one row per partition with their
    count, the count per action, the smallest key of a state that violates an invariant or
    makes one (or a `wanted` reachability property) raise (the driver re-checks that one to
    report it), and for each wanted reachability property the smallest key (and the
    fingerprint) of a state that satisfies it."""
    pa = _arrow()
    count, new, bad = 0, [0] * n_actions, None
    first: list[tuple[bytes, int] | None] = [None] * len(wanted)
    for batch in batches:
        rows = zip(
            batch.column(0).to_pylist(),
            batch.column(1).to_pylist(),
            batch.column(2).to_pylist(),
            batch.column(3).to_pylist(),
        )
        for key, data, action, fp in rows:
            count += 1
            new[action] += 1
            if bad is not None and key > bad:
                continue  # a smaller one is reported anyway: the local engine stops there
            try:
                state = decode(data)
                broken = model.violated(state) is not None
                got = model.reached(state, wanted) if wanted and not broken else ()
            except EvaluationError:
                broken, got = True, ()
            if broken:
                bad = key
            for i in got:
                j = wanted.index(i)
                if first[j] is None or key < first[j][0]:  # type: ignore[index]
                    first[j] = (key, fp)
    yield pa.RecordBatch.from_pydict(
        {
            "n": [count],
            "new": [new],
            "bad": [bad],
            "reached_key": [[f[0] if f else None for f in first]],
            "reached_fp": [[f[1] if f else None for f in first]],
        },
        schema=pa.schema(
            [
                ("n", pa.int64()),
                ("new", pa.list_(pa.int64())),
                ("bad", pa.binary()),
                ("reached_key", pa.list_(pa.binary())),
                ("reached_fp", pa.list_(pa.int64())),
            ]
        ),
    )


def count_batches(
    model: Model, n_actions: int, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow over states (state): their successors per action (the fired counts)."""
    pa = _arrow()
    fired = [0] * n_actions
    for batch in batches:
        for data in batch.column(0).to_pylist():
            for succ in model.expand(data):
                fired[succ.action] += 1
    yield pa.RecordBatch.from_pydict(
        {"fired": [fired]}, schema=pa.schema([("fired", pa.list_(pa.int64()))])
    )


# -- the driver --------------------------------------------------------------------------------


_LINK_TYPES = ("int64", "int64", "int32", "int32")  # of LINK_COLUMNS


def _numbers(table: pa.Table, column: str) -> Any:
    """A numeric Arrow column as numpy, nulls (the parents of initial states) as 0."""
    import pyarrow.compute as pc

    return pc.fill_null(table.column(column), 0).to_numpy()


class _Stop(Exception):
    def __init__(self, verdict: str, fp: int | None = None, **fields: object) -> None:
        self.verdict = verdict
        self.fp = fp
        self.fields = fields


class _Failed(Exception):
    """Spec code raised (an EvaluationError) at the state with fingerprint `fp`."""

    def __init__(self, error: EvaluationError, fp: int | None) -> None:
        self.error = error
        self.fp = fp


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
    """Explore every reachable state of `model` on Spark: the same result as checker.bfs.check
    (verdict, counts, coverage, trace), computed level by level across the cluster. With
    `checkpoints`, write them (and resume from `checkpoints.resumed`)."""
    options = options or Options()
    result = model.new_result()
    if spark is None:
        spark = session()
    search = _Search(spark, model, options, settings or SparkSettings(), progress, on_level)
    search.checkpoints = checkpoints
    start = time.perf_counter()
    try:
        with _Interrupts(search.cancel) as interrupts:
            try:
                search.run()
                reached = {name: (where, where[1]) for name, where in search.reached.items()}
                model.settle_reachability(result, reached, options.witness, search.trace_to)
            except Exception as exc:
                if _from_spark(exc):
                    interrupts.raise_held()  # a job cancelled for a signal: raise it now
                raise
    except _Stop as stop:
        result.verdict = stop.verdict
        for key, value in stop.fields.items():
            setattr(result, key, value)
        if stop.fp is not None:
            result.trace = replay(model, chain_to(search.links, stop.fp))
    except _Failed as failed:
        exc = failed.error
        result.verdict = "error"
        result.error = ErrorInfo.of(exc)
        if failed.fp is not None:
            result.trace = replay(model, chain_to(search.links, failed.fp))
    except KeyboardInterrupt:  # as checker.bfs: stop, cancel the jobs, report what we have
        result.verdict = "incomplete"
        result.bound = "interrupted"
        search.cancel()
        search.save(after_interrupt=True)
    except EngineError:
        raise
    except Exception as exc:
        if not _from_spark(exc):
            raise
        raise EngineError(f"Spark failed: {explain(exc)}") from exc
    finally:
        search.close()
        if progress is not None:
            progress.close()
    if checkpoints is not None and result.bound != "interrupted":
        checkpoints.remove()  # the search ended by itself: nothing to resume
    result.seconds = time.perf_counter() - start
    result.distinct_states = search.distinct
    result.states_generated = search.generated
    result.depth = search.depth
    result.queue = search.queue
    result.coverage = [
        ActionCoverage(a.name, fired, new)
        for a, fired, new in zip(model.actions, search.fired, search.new)
    ]
    return result


class _Interrupts:
    """Ctrl-C, SIGTERM and --timeout (SIGALRM) during a search. An exception raised inside a
    py4j call leaves the gateway in a state where the next call can fail ("Answer from Java
    side is empty"), so a signal that lands there is held: another thread cancels the jobs and
    signals again until the signal lands outside py4j, where the usual handler raises; if the
    cancelled job's error comes first, `raise_held` raises the signal's exception instead.
    PySpark's own Ctrl-C handler is set aside: it cancels with a py4j call nested in the
    interrupted one."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.cancel = cancel
        self.held: int | None = None
        self.handlers: dict[int, tuple[Any, Callable[..., Any]]] = {}  # previous, to call
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in self.SIGNALS:
            previous = signal.getsignal(signum)
            if signum == signal.SIGINT:
                self.handlers[signum] = (previous, signal.default_int_handler)
            elif callable(previous):
                self.handlers[signum] = (previous, previous)
            else:
                continue  # the default action (SIGTERM outside the CLI): left alone
            signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.done.is_set() and signum == self.held:
            return  # a repeat sent just before the holder stopped
        if not _inside_py4j(frame):
            self.done.set()
            self.handlers[signum][1](signum, frame)
            return
        if self.held is None:
            self.held = signum
            self.thread = threading.Thread(target=self._cancel_and_repeat, daemon=True)
            self.thread.start()

    def _cancel_and_repeat(self) -> None:
        assert self.held is not None
        main = threading.main_thread().ident
        while not self.done.wait(0.05):
            with contextlib.suppress(Exception):
                self.cancel()
            if main is not None and not self.done.is_set():
                signal.pthread_kill(main, self.held)

    def raise_held(self) -> None:
        if self.held is not None and not self.done.is_set():
            self.done.set()
            self.handlers[self.held][1](self.held, None)

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()
        for signum, (previous, _) in self.handlers.items():
            signal.signal(signum, previous)


def _inside_py4j(frame: FrameType | None) -> bool:
    marker = f"{os.sep}py4j{os.sep}"
    while frame is not None:
        if marker in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _from_spark(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("pyspark", "py4j", "grpc"))


@dataclass(frozen=True)
class _LevelStart:
    """The search at the start of a level (its states are `frontier`; `levels` of them)."""

    level: int
    frontier: DataFrame | list[Row]
    distinct: int
    generated: int
    depth: int
    fired: list[int]
    new: list[int]
    reached: dict[str, tuple[int, int]]


class _Search:
    def __init__(
        self,
        spark: SparkSession,
        model: Model,
        options: Options,
        settings: SparkSettings,
        progress: Progress | None,
        on_level: Callable[[LevelStats], None] | None,
    ) -> None:
        self.spark = spark
        self.model = model
        self.options = options
        self.settings = settings
        self.progress = progress
        self.on_level = on_level
        self.n_actions = len(model.actions)
        # Counts, exactly as checker.bfs keeps them.
        self.distinct = 0
        self.generated = 0
        self.depth = 0
        self.queue = 0
        self.fired = [0] * self.n_actions
        self.new = [0] * self.n_actions
        # links[fp] for the states of a trace only: the rest stays in the cluster.
        self.links: dict[int, Link] = {}
        # Each reachability property reached so far: name -> (the fingerprint of the first
        # state, in the local engine's order, that satisfies it, and its depth).
        self.reached: dict[str, tuple[int, int]] = {}
        self._level_wanted: list[int] = []  # those not reached when the level started
        # Per level: its links (fp, parent, action, binding), in the cluster or in the driver.
        self.levels: list[DataFrame | Links] = []
        # The link tables in the cluster (Spark levels, and batches of driver levels shipped
        # for a Spark level): their fingerprints are `visited`.
        self.spark_links: list[DataFrame] = []
        self.driver_fps: set[int] = set()  # the fingerprints of the levels held in the driver
        self.unshipped: list[int] = []  # levels held in the driver and not yet in the cluster
        self.sizes: list[int] = []  # states per level
        self.persisted: list[DataFrame] = []
        self.saved_conf: dict[str, str | None] = {}
        self.observed: list[Any] | None = None
        self.visited: DataFrame | None = None  # the union of the levels' fingerprints
        self.start = time.perf_counter()
        self.checkpoints: Checkpoints | None = None
        self.level_start: _LevelStart | None = None

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
        self.local = _local_mode(self.spark)
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

    # -- the search ------------------------------------------------------------------------

    def run(self) -> None:
        self._configure()
        ship_code(self.spark, self.model)
        resumed = self.checkpoints.resumed if self.checkpoints is not None else None
        if resumed is not None:
            frontier, level = self._restore(resumed)
        else:
            frontier, level = self._initial(), 1  # `level`: the depth of the states in `frontier`
        max_depth = self.options.max_depth
        while True:
            size = self.sizes[level - 1]
            if size == 0:
                return
            if size < self.settings.driver_states:
                frontier = self._here(frontier, level)
            else:
                frontier = self._in_spark(frontier)
            self._begin(level, frontier)
            if isinstance(frontier, list):
                if max_depth is not None and level >= max_depth:
                    self._driver_depth_bound(frontier, level)
                    return
                frontier = self._driver_level(frontier, level)
            else:
                if max_depth is not None and level >= max_depth:
                    self._stop_at_depth_bound(frontier, level)
                    return
                frontier = self._expand_level(frontier, level)
            level += 1

    def _wanted(self) -> list[int]:
        """The reachability properties (indexes) that no state has satisfied yet."""
        reachables = self.model.reachables
        return [i for i, r in enumerate(reachables) if r.name not in self.reached]

    def trace_to(self, where: tuple[int, int]) -> list[Any]:
        """The trace to the state with fingerprint `fp` at depth `depth` (its links fetched)."""
        fp, depth = where
        self._walk_back(fp, depth)
        return replay(self.model, chain_to(self.links, fp))

    def _initial(self) -> list[Row]:
        """Level 1 on the driver, exactly as checker.bfs does it (init() is usually small)."""
        model, limit = self.model, self.options.max_states
        try:
            initial = model.initial()
        except EvaluationError as exc:
            raise _Failed(exc, None) from exc
        rows = []
        for init in initial:
            fp = init.fp
            self.generated += 1
            if fp in self.links:
                continue
            if limit is not None and len(self.links) >= limit:
                raise _Stop("incomplete", bound=f"--max-states {limit} reached")
            self.links[fp] = (None, ROOT, init.binding)
            self.distinct += 1
            self.depth = 1
            try:
                broken = model.violated(init.state)
                got = model.reached(init.state, self._wanted()) if broken is None else ()
            except EvaluationError as exc:
                raise _Failed(exc, fp) from exc
            if broken is not None:
                raise _Stop("violation", fp, invariant=broken.name)
            for i in got:
                self.reached[model.reachables[i].name] = (fp, 1)
            key = component(init.binding)
            rows.append((signed(fp), key, init.data, None, ROOT, init.binding))
        self._add_here(rows)
        return rows

    # -- checkpoints --------------------------------------------------------------------------

    def _begin(self, level: int, frontier: DataFrame | list[Row]) -> None:
        """A level starts: keep the search as it stands (and write it, when a checkpoint is
        due); the previous level's states are no longer needed."""
        previous = self.level_start
        self.level_start = _LevelStart(
            level,
            frontier,
            self.distinct,
            self.generated,
            self.depth,
            list(self.fired),
            list(self.new),
            dict(self.reached),
        )
        if previous is not None and previous.frontier is not frontier:
            self._release(previous.frontier)
        if self.checkpoints is not None and self.checkpoints.due():
            self.save()

    def save(self, after_interrupt: bool = False) -> None:
        """Write the search as it stood at the start of the current level: the links of the
        earlier levels and the level's states, collected to the driver."""
        start, checkpoints = self.level_start, self.checkpoints
        if checkpoints is None or start is None:
            return
        try:
            arrays = self._collect(start)
        except Exception as exc:
            if not after_interrupt or not _from_spark(exc):
                raise
            sys.stderr.write(f"mc: warning: no checkpoint written: Spark failed: {exc}\n")
            return
        counts = {
            "level": start.level,
            "states": start.distinct,
            "generated": start.generated,
            "depth": start.depth,
            "fired": start.fired,
            "new": start.new,
            "reached": {name: [signed(fp), depth] for name, (fp, depth) in start.reached.items()},
            "sizes": self.sizes[: start.level],
        }
        checkpoints.write(counts, arrays)

    def _collect(self, start: _LevelStart) -> dict[str, Array]:
        import numpy as np
        import pyarrow as pa
        from pyspark.sql import functions as F

        arrays: dict[str, Array] = {}
        earlier = list(enumerate(self.levels[: start.level - 1], start=1))
        in_spark = [
            links.withColumn("level", F.lit(depth))
            for depth, links in earlier
            if not isinstance(links, list)
        ]
        tables = []  # in order of level: level 1's links (the roots) first
        if in_spark:  # one job for the levels in the cluster
            tables.append(functools.reduce(lambda a, b: a.union(b), in_spark).toArrow())
        for depth, links in earlier:
            if isinstance(links, list):
                columns = {c: [row[i] for row in links] for i, c in enumerate(LINK_COLUMNS)}
                schema = pa.schema(
                    [
                        (c, pa.int64() if t == "int64" else pa.int32())
                        for c, t in zip(LINK_COLUMNS, _LINK_TYPES)
                    ]
                    + [("level", pa.int32())]
                )
                columns["level"] = [depth] * len(links)
                tables.append(pa.table(columns, schema=schema))
        if tables:
            table = pa.concat_tables(tables, promote_options="permissive")
            table = table.take(np.argsort(table.column("level").to_numpy(), kind="stable"))
        for column, dtype in zip(LINK_COLUMNS, _LINK_TYPES):
            values = _numbers(table, column) if tables else np.zeros(0, dtype)
            arrays[f"links.{column}"] = Array.of(values, dtype)
        if isinstance(start.frontier, list):
            rows = start.frontier
            states = pa.table(
                {c: [row[i] for row in rows] for i, c in enumerate(FRONTIER_COLUMNS)},
                schema=pa.schema(
                    [
                        ("fp", pa.int64()),
                        ("key", pa.binary()),
                        ("state", pa.binary()),
                        ("parent", pa.int64()),
                        ("action", pa.int32()),
                        ("binding", pa.int32()),
                    ]
                ),
            )
        else:
            states = start.frontier.select(*FRONTIER_COLUMNS).toArrow()
        for column, dtype in zip(LINK_COLUMNS, _LINK_TYPES):
            arrays[f"frontier.{column}"] = Array.of(_numbers(states, column), dtype)
        for column in ("key", "state"):
            values = states.column(column).to_pylist()
            sizes = np.array([len(v) for v in values], dtype=np.uint64)
            arrays[f"frontier.{column}.sizes"] = Array.of(sizes, "uint64")
            data = np.frombuffer(b"".join(values), dtype=np.uint8)
            arrays[f"frontier.{column}.data"] = Array.of(data, "uint8")
        return arrays

    def _restore(self, saved: Saved) -> tuple[DataFrame, int]:
        """The search as a checkpoint holds it: the earlier levels' links and the level's
        states back in the cluster, partitioned by fingerprint, and the counts."""
        import numpy as np
        import pyarrow as pa

        level = saved.number("level", 1)
        n = self.n_actions
        sizes = saved.numbers("sizes", level)
        links = [saved.array(f"links.{c}", t) for c, t in zip(LINK_COLUMNS, _LINK_TYPES)]
        states = [saved.array(f"frontier.{c}", t) for c, t in zip(LINK_COLUMNS, _LINK_TYPES)]
        if len({len(a) for a in links}) != 1 or len(links[0]) != sum(sizes[:-1]):
            raise saved.corrupt("the links do not match the levels' sizes")
        if len({len(a) for a in states}) != 1 or len(states[0]) != sizes[-1]:
            raise saved.corrupt("the level's states do not match its size")
        blobs = {}
        for column in ("key", "state"):
            lengths = saved.array(f"frontier.{column}.sizes", "uint64")
            data = saved.array(f"frontier.{column}.data", "uint8")
            if len(lengths) != sizes[-1] or int(lengths.sum()) != len(data):
                raise saved.corrupt(f"the level's {column}s do not match their sizes")
            ends = np.cumsum(lengths).tolist()
            raw = data.tobytes()
            blobs[column] = [raw[e - k : e] for e, k in zip(ends, lengths.tolist())]
        for i, data in enumerate(blobs["state"]):
            try:
                decode(data)
            except Exception as exc:
                raise saved.corrupt(f"state {i} of the level does not decode: {exc}") from None
        self.distinct = saved.number("states", 1)
        if self.distinct != sum(sizes):
            raise saved.corrupt("the number of states does not match the levels' sizes")
        self.generated = saved.number("generated")
        self.depth = saved.number("depth")
        self.fired = saved.numbers("fired", n)
        self.new = saved.numbers("new", n)
        names = [r.name for r in self.model.reachables]
        reached = saved.reached(names, None)
        self.reached = {name: (unsigned(fp), depth) for name, (fp, depth) in reached.items()}
        self.queue = sizes[-1]
        first = sizes[0] if level > 1 else 0  # links of level 1 have no parent
        parent = pa.array(links[1], mask=np.arange(len(links[1])) < first)
        earlier = pa.table(
            {"fp": links[0], "parent": parent, "action": links[2], "binding": links[3]}
        )
        start = 0
        for size in sizes[:-1]:
            part = earlier.slice(start, size)
            start += size
            df = self.spark.createDataFrame(part, "fp long, parent long, action int, binding int")
            self._add_restored(df.repartition(self.partitions, "fp"), size)
        roots = level == 1
        table = pa.table(
            {
                "fp": states[0],
                "key": pa.array(blobs["key"], type=pa.binary()),
                "state": pa.array(blobs["state"], type=pa.binary()),
                "parent": pa.array(states[1], mask=np.full(len(states[1]), roots)),
                "action": states[2],
                "binding": states[3],
            }
        )
        frontier = self.spark.createDataFrame(table, FRONTIER_SCHEMA)
        frontier = self._persist(frontier.repartition(self.partitions, "fp"))
        self._add_level(frontier, sizes[-1])
        return frontier, level

    def _add_restored(self, links: DataFrame, size: int) -> None:
        links = self._cut(links, eager=True)
        self.levels.append(links)
        self.spark_links.append(links)
        self.sizes.append(size)
        fps = links.select("fp")
        self.visited = fps if self.visited is None else self.visited.union(fps)

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
        expression is a round trip to the JVM)."""
        if self.observed is None:
            from pyspark.sql import functions as F

            successor = F.col("kind") == SUCCESSOR
            self.observed = [
                F.sum(F.when(successor, 1).otherwise(0)).alias("generated"),
                F.min(F.when(~successor, F.col("key"))).alias("event"),
                *[
                    F.sum(F.when(successor & (F.col("action") == a), 1).otherwise(0)).alias(f"a{a}")
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
        wanted = self._level_wanted = self._wanted()
        run = functools.partial(check_batches, self.model, self.n_actions, wanted)
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
        elapsed = time.perf_counter() - self.start
        where = ", in the driver" if where == "driver" else ""
        progress.stream.write(
            f"Level {depth}: {new:,} new states from {expanded:,} ({seconds:.2f} s{where});"
            f" {self.distinct:,} distinct, {self.generated:,} generated"
            f" in {elapsed:.1f} s.\n"
        )
        progress.stream.flush()

    # -- stopping inside a level -----------------------------------------------------------

    def _stop_in_level(
        self,
        frontier: DataFrame,
        new: DataFrame,
        level: int,
        count: int,
        metrics: Mapping[str, Any],
        bad: bytes | None,
    ) -> None:
        """Stop like checker.bfs would, at the first event of the level in its order: an
        expansion that raised or a deadlock (at the parent's key, before its successors), the
        --max-states bound, or a new state that violates an invariant (or makes one raise)."""
        events: list[tuple[bytes, int, str]] = []
        if metrics["event"] is not None:
            events.append((bytes(metrics["event"]), 0, "parent"))
        limit = self.options.max_states
        if limit is not None and self.distinct + count > limit:
            from pyspark.sql import functions as F

            nth = limit - self.distinct  # states admitted before the one that hits the bound
            row = new.select("key").orderBy(F.col("key")).offset(nth).limit(1).collect()[0]
            events.append((bytes(row["key"]), 1, "limit"))
        if bad is not None:
            events.append((bytes(bad), 2, "bad"))
        if not events:
            return
        key, _, kind = min(events)
        if kind == "parent":
            self._stop_at_parent(frontier, new, level, key)
        else:
            self._stop_at_new_state(frontier, new, level, key, kind)

    def _row(self, df: DataFrame, column: str, value: Any) -> Any:
        from pyspark.sql import functions as F

        rows = df.filter(F.col(column) == F.lit(value)).collect()
        if len(rows) != 1:
            raise EngineError(f"{len(rows)} rows with {column} = {value!r}, expected one")
        return rows[0]

    def _count_before(self, df: DataFrame, key: bytes, *, by_action: bool = False) -> Any:
        from pyspark.sql import functions as F

        before = df.filter(F.col("key") < F.lit(key))
        if not by_action:
            return before.count()
        counts = [0] * self.n_actions
        for row in before.groupBy("action").count().collect():
            counts[row["action"]] = row["count"]
        return counts

    def _fired_before(self, frontier: DataFrame, key: bytes) -> list[int]:
        """Successors per action of the frontier states before `key` (a parent key)."""
        from pyspark.sql import functions as F

        run = functools.partial(count_batches, self.model, self.n_actions)
        part = frontier.filter(F.col("key") < F.lit(key)).select("state")
        tasks = self._tasks(self._count_before(frontier, key))
        if tasks < self.partitions:
            part = part.coalesce(tasks)
        rows = part.mapInArrow(run, COUNTED_SCHEMA).collect()
        return [sum(row["fired"][a] for row in rows) for a in range(self.n_actions)]

    def _settle(
        self,
        frontier: DataFrame,
        new: DataFrame,
        level: int,
        parent_key: bytes,
        fired: list[int],
        new_counts: list[int],
    ) -> None:
        """Counts as checker.bfs has them when it stops while expanding the parent at
        `parent_key`, whose successors up to the event are in `fired` and `new_counts`."""
        before = self._fired_before(frontier, parent_key)
        self.generated += sum(before)
        for a in range(self.n_actions):
            self.fired[a] += before[a] + fired[a]
            self.new[a] += new_counts[a]
        admitted = sum(new_counts)
        self.distinct += admitted
        if admitted:
            self.depth = level + 1
        # bfs sets its queue before expanding each state: size - done + new so far.
        index = self._count_before(frontier, parent_key)
        found = self._count_before(new, parent_key)
        self.queue = self.sizes[level - 1] - index + found

    def _stop_at_parent(self, frontier: DataFrame, new: DataFrame, level: int, key: bytes) -> None:
        row = self._row(frontier, "key", key)
        fp = unsigned(row["fp"])
        new_counts = self._count_before(new, key, by_action=True)
        self._settle(frontier, new, level, key, [0] * self.n_actions, new_counts)
        self._walk_back(fp, level)
        self._raise_parent_event(fp, row["state"])

    def _raise_parent_event(self, fp: int, data: bytes) -> None:
        """Re-run the expansion of the state at `fp` here, to report its error or deadlock
        exactly as the local engine does."""
        try:
            successors = self.model.expand(data)
        except EvaluationError as exc:
            raise _Failed(exc, fp) from exc
        if successors.deadlocked and self.options.deadlock:
            raise _Stop("deadlock", fp)
        raise EngineError("the spec is not deterministic: an event did not happen again")

    def _stop_at_new_state(
        self, frontier: DataFrame, new: DataFrame, level: int, key: bytes, kind: str
    ) -> None:
        state_row = self._row(new, "key", key)
        parent_row = self._row(frontier, "fp", state_row["parent"])
        parent_key = bytes(parent_row["key"])
        successors = self.model.expand(parent_row["state"])
        index = last_component(key, parent_key)
        self.generated += len(successors)
        fired = [0] * self.n_actions
        for succ in successors[: index + 1]:
            fired[succ.action] += 1
        new_counts = self._count_before(new, key, by_action=True)
        fp = unsigned(state_row["fp"])
        if kind == "bad":
            new_counts[state_row["action"]] += 1  # admitted, then checked
        self._settle(frontier, new, level, parent_key, fired, new_counts)
        parent_fp = unsigned(state_row["parent"])
        self.links[fp] = (parent_fp, state_row["action"], state_row["binding"])
        self._walk_back(parent_fp, level)
        if kind == "limit":
            raise _Stop("incomplete", bound=f"--max-states {self.options.max_states} reached")
        try:
            state = decode(state_row["state"])
            broken = self.model.violated(state)
            if broken is None:  # a reachability property raised
                self.model.reached(state, self._level_wanted)
        except EvaluationError as exc:
            raise _Failed(exc, fp) from exc
        if broken is None:
            raise EngineError("the spec is not deterministic: a violation did not happen again")
        raise _Stop("violation", fp, invariant=broken.name)

    def _stop_at_depth_bound(self, frontier: DataFrame, level: int) -> None:
        """As checker.bfs: the states at the bound are expanded and their successors counted;
        the search is complete only if none is new. The first state (in order) that raises
        or deadlocks stops it there."""
        from pyspark.sql import functions as F

        candidates, observation = self._expand(frontier, self._tasks(self.sizes[level - 1]))
        row = (
            candidates.filter(F.col("kind") == SUCCESSOR)
            .join(self._visited(), "fp", "left_anti")
            .agg(F.count(F.lit(1)).alias("n"))
            .collect()[0]
        )
        metrics = observation.get
        if metrics["event"] is not None:
            key = bytes(metrics["event"])
            before = self._fired_before(frontier, key)
            self.generated += sum(before)
            self.fired = [a + b for a, b in zip(self.fired, before)]
            parent = self._row(frontier, "key", key)
            fp = unsigned(parent["fp"])
            self._walk_back(fp, level)
            self._raise_parent_event(fp, parent["state"])
        self.generated += int(metrics["generated"] or 0)
        self.fired = [f + int(metrics[f"a{a}"] or 0) for a, f in enumerate(self.fired)]
        if row["n"]:
            self.queue = self.sizes[level - 1]
            raise _Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")
        self.queue = 0

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

    def _known(self, fps: Iterable[int]) -> set[int]:
        """Which of the fingerprints (signed) belong to visited states: those of levels held
        here, and one job (the candidates broadcast, the visited set scanned in place) for
        those of the levels in the cluster."""
        asked = set(fps)
        known = asked & self.driver_fps
        rest = asked - known
        if rest and self.visited is not None:
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
            self.queue = size - index + len(found)  # as checker.bfs, before expanding a state
            for position, succ in enumerate(successors):
                new = signed(succ.fp)
                if new in known or new in fresh:
                    continue
                if limit is not None and self.distinct >= limit:
                    self._count_parent(successors, position)
                    raise _Stop("incomplete", bound=f"--max-states {limit} reached")
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
                    raise _Failed(exc, succ.fp) from exc
                if broken is not None:
                    self._count_parent(successors, position)
                    self._trace_from(succ, unsigned(fp), level)
                    raise _Stop("violation", succ.fp, invariant=broken.name)
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
        """A state's successors counted as checker.bfs counts them when it stops at the one at
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
            raise _Stop("incomplete", bound=f"--max-depth {self.options.max_depth} reached")
        self.queue = 0

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
                fetched.update((unsigned(t[0]), _link_of(t)) for t in links)
        current: int | None = fp
        depth = level
        while current is not None:
            links = self.levels[depth - 1]
            if depth <= shallow:
                link = fetched[current]
            elif isinstance(links, list):
                key = signed(current)
                link = next(_link_of(t) for t in links if t[0] == key)
            else:
                link = self._link(self._row(links, "fp", signed(current)))
            self.links[current] = link
            current = link[0]
            depth -= 1

    @staticmethod
    def _link(row: Any) -> Link:
        parent = row["parent"]
        return (None if parent is None else unsigned(parent), row["action"], row["binding"])


def _link_of(links: tuple[int, int | None, int, int]) -> Link:
    """A link kept in the driver, as checker.trace has them."""
    _, parent, action, binding = links
    return (None if parent is None else unsigned(parent), action, binding)
