"""The application: what a run of `mc check` is (`Config`), how a spec is loaded for it
(`load`: its model and the temporal properties to check on it, the symmetry-versus-liveness
policy decided once), and how it is checked (`check`: the invariants on the chosen engine,
then the temporal properties, the vacuity review, --strict and --timeout); `check_spec` does
both for one spec file. A whole `mc check` run (its SPEC arguments, a batch, checkpoints, the
reports) is checker.commands.check_files.

The command line (checker.cli), the testing helpers (checker.testing) and the commands built
on mc go through here. Notes go to stderr as `mc: note: ...`; nothing here knows of click.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checker import checkpoint, constants, determinism, liveness, vacuity
from checker.behaviour import Behaviour, Recording
from checker.deadline import Deadline, Loading
from checker.errors import ConfigError, EvaluationError
from checker.loader import build_spec, load_spec_class
from checker.local import bfs
from checker.model import Model
from checker.progress import Progress
from checker.reports import outputs, text
from checker.reports.graph import DEFAULT_MAX_STATES, StateSpaceTooLarge, behaviour_graph
from checker.reports.sarif import Checked
from checker.result import CheckResult
from checker.search.observers import Recorder
from checker.search.options import Options
from checker.symmetry import Symmetry

if TYPE_CHECKING:
    import networkx as nx

    from checker import spark


@dataclass(frozen=True)
class Config:
    """How each spec of a run is checked: the search, the engine, what is checked, and where
    checkpoints go."""

    options: Options = field(default_factory=Options)
    invariants: Sequence[str] = ()  # check only these (each spec those it declares); (): all
    no_invariants: bool = False  # check no invariant (--no-invariants)
    properties: Sequence[str] | None = ()  # those to check (empty: all declared; None: none)
    symmetry: bool | None = None  # None: the spec's, unless temporal properties are checked
    view: bool | None = None  # likewise for the spec's view
    recheck: int = determinism.RECHECK  # every Nth state expanded twice (checker.determinism)
    strict: bool = False  # the vacuity check's warnings fail the run (exit 15)
    witness: str | None = None  # the reachability property whose example to report
    progress: float = 0.0  # seconds between progress lines on stderr (0: none)
    timeout: float | None = None  # stop each spec's search after this many seconds
    engine: str = "local"  # local | spark
    master: str | None = None  # Spark: the master URL
    remote: str | None = None  # Spark: a Spark Connect server
    spark_conf: Sequence[str] = ()  # Spark: KEY=VALUE settings
    checkpoint: str | None = None  # save checkpoints in this folder
    checkpoint_every: float | None = None  # seconds between checkpoints (None: the default)
    resume: str | None = None  # go on from the checkpoint in this folder


@dataclass(frozen=True)
class Loaded:
    """A spec ready to check: its model and the temporal properties to check on it."""

    model: Model
    properties: list[liveness.Property]


def note(text: str) -> None:
    sys.stderr.write(f"mc: note: {text}\n")


# -- one spec ----------------------------------------------------------------------------------


def load(
    path: str | os.PathLike[str],
    given: Mapping[str, object] | None = None,
    config: Config = Config(),
    *,
    invariants: Sequence[str] | None = None,
    properties: Sequence[str] | None = None,
    command_line: bool = True,
    quiet: bool = False,
) -> Loaded:
    """The spec at `path` (FILE, or FILE::Class) with the constants `given` (`-D` text, or
    Python values when not `command_line`): its model, with `invariants` (None: all declared),
    and the temporal properties to check on it (`properties`: names, or None for those
    `config` asks for). Symmetry reduction and a view merge states that a lasso must tell
    apart, so a spec whose properties are checked is compiled without them (said on stderr
    unless `quiet`), and asking for both is refused (TLC only warns)."""
    with Loading(config.timeout, path):
        return _load(path, given, config, invariants, properties, command_line, quiet)


def _load(
    path: str | os.PathLike[str],
    given: Mapping[str, object] | None,
    config: Config,
    invariants: Sequence[str] | None,
    properties: Sequence[str] | None,
    command_line: bool,
    quiet: bool,
) -> Loaded:
    cls, file = load_spec_class(path)
    values = constants.typed(cls, given or {}, command_line=command_line)
    spec = build_spec(cls, file, values)
    if config.no_invariants:
        invariants = []
    names = properties if properties is not None else (config.properties or None)
    selected = [] if config.properties is None else liveness.select_of(spec, file, names)
    symmetry, view = config.symmetry is not False, config.view is not False
    off = []
    if selected and config.symmetry is None and Symmetry.of(spec) is not None:
        symmetry = False
        off.append("symmetry")
    if selected and config.view is None and spec.view is not None:
        view = False
        off.append("the view")
    if off and not quiet:
        note(
            f"{path}: {' and '.join(off)} {'are' if len(off) > 1 else 'is'} off, as its"
            " temporal properties are checked (--no-liveness checks only the invariants, with"
            f" {' and '.join(off)})"
        )
    model = Model(spec, path=str(file), invariants=invariants, symmetry=symmetry, view=view)
    return Loaded(model, refuse_reductions(model, selected))


def properties_for(model: Model, config: Config) -> list[liveness.Property]:
    """The temporal properties `config` asks for on a model already compiled (a resumed
    checkpoint's)."""
    if config.properties is None:
        return []
    return refuse_reductions(model, liveness.select(model, config.properties or None))


def refuse_reductions(model: Model, properties: list[liveness.Property]) -> list[liveness.Property]:
    """`properties`, unless the model merges states (symmetry, a view): refused then."""
    if properties and model.symmetry is not None:
        raise ConfigError(
            f"{model.path}: temporal properties cannot be checked under symmetry reduction (it"
            " merges states that a fair cycle must tell apart): use --no-symmetry, or"
            " --no-liveness to check only the invariants with symmetry"
        )
    if properties and model.view is not None:
        raise ConfigError(
            f"{model.path}: temporal properties cannot be checked under the spec's view (it"
            " merges states, so a cycle among them need not be a behaviour): use --no-view, or"
            " --no-liveness to check only the invariants with the view"
        )
    return properties


def check_witness(model: Model, witness: str | None) -> None:
    """--witness names a reachability property of the spec."""
    declared = [r.name for r in model.reachables]
    if witness is not None and witness not in declared:
        raise ConfigError(
            f"--witness {witness}: {model.name} has no such reachability property (reachable:"
            f" {', '.join(declared) or 'none: declare one with @reachable'})"
        )


def check(
    loaded: Loaded,
    config: Config = Config(),
    spark_engine: spark.SparkEngine | None = None,
    checkpoints: checkpoint.Checkpoints | None = None,
) -> CheckResult:
    """Check a loaded spec: the invariants on the chosen engine (the local one, or Spark's
    `spark_engine`), then (if they hold) the temporal properties, on the state graph the local
    engine recorded as it searched (else it searches again); the vacuity review; --strict and
    --timeout."""
    model, properties = loaded.model, loaded.properties
    model.recheck_every = config.recheck
    declared = [r.name for r in model.reachables]
    witness = config.witness if config.witness in declared else None
    options = dataclasses.replace(config.options, witness=witness)
    with Deadline(model, config.timeout) as deadline:
        lines = progress(config.progress)
        behaviour = None
        if spark_engine is not None:
            result = spark_engine.check(model, options, lines, checkpoints)
        elif properties and checkpoints is None:
            recording = liveness.recording(model, properties)
            result, behaviour = record(model, recording, options, lines)
        else:
            result = bfs.check(model, options, lines, checkpoints)
        again = progress(config.progress) if behaviour is None else None
        result = check_properties(model, result, properties, behaviour, again)
    vacuity.review(model, result)
    result.strict = config.strict
    if deadline.fired and result.verdict == "incomplete" and not result.engine_failed:
        result.bound = deadline.bound
        sys.stderr.write(f"mc: {deadline.note}\n")
    return result


def check_spec(
    path: str | os.PathLike[str],
    given: Mapping[str, object] | None = None,
    config: Config = Config(),
    *,
    command_line: bool = True,
) -> tuple[Model, CheckResult]:
    """Load the spec at `path` and check it on `config`'s engine (its own session for
    Spark): the model and the result."""
    loaded = load(path, given, config, command_line=command_line)
    check_witness(loaded.model, config.witness)
    with engine(config) as spark_engine:
        return loaded.model, check(loaded, config, spark_engine)


def record(
    model: Model,
    recording: Recording,
    options: Options | None = None,
    progress: Progress | None = None,
) -> tuple[CheckResult, Behaviour | None]:
    """The local engine's search, recording the state graph as it goes (checker.behaviour):
    the result, and the behaviour if the search explored every reachable state."""
    if model.exclusions:
        names = ", ".join(c.name for c in model.exclusions)
        raise ConfigError(
            f"{model.path or model.name}: the state graph (temporal properties, mc graph) is not"
            f" recorded with @constraint(admit=False) ({names}): its steps into the states"
            " outside would lead nowhere; use @constraint, or --no-liveness"
        )
    recorder = Recorder(recording)
    result = bfs.check(model, options or Options(), progress, observer=recorder)
    complete = result.verdict == "ok"  # (exploring past violations, they leave it ok)
    return result, recorder.behaviour() if complete else None


def check_properties(
    model: Model,
    result: CheckResult,
    properties: Sequence[liveness.Property],
    behaviour: Behaviour | None = None,
    progress: Progress | None = None,
) -> CheckResult:
    """checker.liveness.check on `behaviour`, the graph the search recorded; without it, the
    local engine searches again, recording (a Spark run, or a resumed one)."""

    def again() -> Behaviour:
        wanted = liveness.recording(model, properties)
        # (the search that produced `result` has judged deadlocks already)
        searched, graph = record(model, wanted, Options(deadlock=False), progress)
        if searched.verdict == "incomplete" and searched.bound == "interrupted":
            raise KeyboardInterrupt
        if graph is None:  # the first search found every invariant to hold
            raise determinism.not_deterministic(
                f"searching again to record the state graph, the search ended with"
                f" {searched.verdict} ({text.headline(searched)[0]}), and the first one did not"
            )
        return graph

    return liveness.check(model, result, properties, behaviour if behaviour is not None else again)


def state_space_graph(model: Model, max_states: int = DEFAULT_MAX_STATES) -> nx.DiGraph:
    """Every reachable state of `model` and every transition (`mc graph`): the local engine's
    search, recorded, going on past states that violate an invariant. Raises
    StateSpaceTooLarge when there are more than `max_states`, as soon as the search finds one
    more."""
    recording = Recording(states=True, go_on=True)
    options = Options(deadlock=False, max_states=max_states + 1)  # a deadlock is a state too
    result, behaviour = record(model, recording, options)
    if result.distinct_states > max_states:
        raise StateSpaceTooLarge(
            f"{model.name} has more than {max_states:,} distinct states; `mc graph` draws"
            " small state spaces only: lower the constants with -D, or raise --max-states"
        )
    if behaviour is None:
        assert result.error is not None, result.verdict
        error = result.error
        state = result.trace[-1].state if result.trace else None
        raise EvaluationError(
            error.kind, error.name, error.message, state=state, params=error.params
        )
    return behaviour_graph(model, behaviour)


def report(result: CheckResult, model: Model, wanted: outputs.Outputs) -> int:
    """A one-spec run's report: text on stdout, the files asked for; its exit code."""
    sys.stdout.write(text.render(result))
    wanted.write([Checked(result, model)], multi=False)
    return int(result.exit_code)


def progress(interval: float) -> Progress | None:
    """Progress lines every `interval` seconds on stderr (0: none)."""
    return Progress(interval=interval) if interval > 0 else None


class engine:
    """`with engine(config) as spark_engine`: the Spark engine's session holder for a run (None
    for the local engine), closed when the run ends."""

    def __init__(self, config: Config) -> None:
        self.spark_engine = spark_engine(config)

    def __enter__(self) -> spark.SparkEngine | None:
        return self.spark_engine

    def __exit__(self, *exc: object) -> None:
        if self.spark_engine is not None:
            self.spark_engine.close()


def spark_engine(config: Config) -> spark.SparkEngine | None:
    """The Spark engine's session holder for `config`, or None for the local engine."""
    if config.engine != "spark":
        for name, value in (
            ("--master", config.master),
            ("--remote", config.remote),
            ("--spark-conf", config.spark_conf),
        ):
            if value:
                raise ConfigError(f"{name} is for --engine spark")
        return None
    # Imported here, the one place that starts the Spark engine: `mc check` on the local engine
    # starts without its modules (tests/test_startup.py; the contract counts this import too).
    from checker import spark

    if config.master and config.remote:
        raise ConfigError("--master and --remote exclude each other")
    if config.master and config.master.startswith("spark://"):
        spark.require_reachable(config.master)
    conf = constants.pairs(config.spark_conf, "--spark-conf", "KEY=VALUE")
    return spark.SparkEngine(master=config.master, remote=config.remote, conf=conf)
