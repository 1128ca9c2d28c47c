"""The `mc` command line. Exit codes follow TLC (see checker.errors.ExitCode)."""

from __future__ import annotations

import dataclasses
import inspect
import os
import shlex
import socket
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from checker import (
    __version__,
    ablate,
    batch,
    checkpoint,
    guard,
    kinds,
    liveness,
    simulation,
    spark,
    vacuity,
)
from checker.deadline import Deadline
from checker.errors import (
    ConfigError,
    EngineError,
    EvaluationError,
    ExitCode,
    McError,
    SpecError,
)
from checker.loader import NoSpecError, load_model, load_spec_class
from checker.local import bfs
from checker.model import Model
from checker.progress import Progress
from checker.reports import dot, graphviz, mermaid, outputs, text
from checker.reports.graph import DEFAULT_MAX_STATES, state_space_graph
from checker.reports.sarif import Checked
from checker.result import CheckResult, NotChecked
from checker.spec import (
    assumptions_of,
    constants_of,
    fairness_of,
    invariants_of,
    properties_of,
    switches_of,
)
from checker.values import show


def _parse_pairs(items: Sequence[str], option: str, form: str = "NAME=VALUE") -> dict[str, str]:
    values: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"{option} {item}: expected {form}")
        values[name.strip()] = value
    return values


def _parse_defines(defines: Sequence[str]) -> dict[str, str]:
    return _parse_pairs(defines, "-D")


define_option = click.option(
    "-D",
    "defines",
    metavar="NAME=VALUE",
    multiple=True,
    help="Set a constant (repeatable); the value is typed from the constant's default.",
)


invariant_option = click.option(
    "--invariant",
    "invariants",
    metavar="NAME",
    multiple=True,
    help="Check only this invariant (repeatable). Default: all the spec declares.",
)
deadlock_option = click.option(
    "--no-deadlock",
    is_flag=True,
    help="Do not report states with no enabled action (deadlocks, exit 11), as TLC's"
    " -deadlock. A spec marks its intended final states with @terminal instead.",
)
json_option = click.option(
    "--json", "json_path", metavar="PATH", help="Also write the result as JSON."
)
progress_option = click.option(
    "--progress",
    "progress_interval",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between progress lines on stderr (0: none). A terminal gets a live bar.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mc")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """mc: an explicit-state model checker for protocol specs written in Python."""
    ctx.obj = {"debug": debug}
    EvaluationError.engine_frames = debug
    ctx.call_on_close(lambda: setattr(EvaluationError, "engine_frames", False))  # in-process runs


@cli.command()
@click.argument("specs", metavar="SPEC...", nargs=-1, type=click.Path())
@define_option
@invariant_option
@click.option(
    "--no-invariants",
    is_flag=True,
    help="Check no invariant: explore the states (to count them, to check only deadlocks,"
    " reachability or temporal properties).",
)
@click.option(
    "--property",
    "properties",
    metavar="NAME",
    multiple=True,
    help="Check only this temporal property (repeatable). Default: all the spec declares.",
)
@click.option(
    "--no-liveness",
    is_flag=True,
    help="Check no temporal property (only the invariants).",
)
@deadlock_option
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (exit 15) when the vacuity check warns: an action never enabled, a parameter"
    " domain that is empty, a method that looks like an action but is not declared.",
)
@click.option(
    "--witness",
    metavar="NAME",
    help="Print the shortest behavior that reaches a state where the reachability property"
    " NAME (@reachable) holds, as the trace of every report.",
)
@click.option("--max-depth", type=click.IntRange(min=1), help="Explore states up to this depth.")
@click.option(
    "--max-states", type=click.IntRange(min=1), help="Stop after this many distinct states."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Stop each spec's search after SECONDS (exit 152, partial counts) and say which"
    " action, guard or invariant was running: a bound for code that never returns.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Local engine: processes expanding states (same result for any number).",
)
@click.option(
    "--memory",
    type=click.IntRange(min=0),
    default=bfs.LIVE_BYTES >> 20,
    show_default=True,
    metavar="MIB",
    help="Local engine: memory for states kept as Python objects (the level being expanded,"
    " the next, and the states each process remembers meeting); beyond it states are kept"
    " encoded. Only speed depends on it. Default: an eighth of this machine's memory, at"
    " least 1 GiB.",
)
@json_option
@progress_option
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="local: one process. spark: the frontier partitioned across a Spark cluster.",
)
@click.option(
    "--master",
    metavar="URL",
    help="Spark master for --engine spark: local[N], spark://..., yarn, k8s://... (default:"
    " spark-submit's, else local[*]).",
)
@click.option("--remote", metavar="URL", help="Spark Connect server (sc://..., or local).")
@click.option(
    "--symmetry/--no-symmetry",
    default=None,
    help="Identify states that differ by a renaming of the values the spec declares"
    " symmetric (e.g. broker ids); --no-symmetry explores them all, to compare. Default: on"
    " where declared, except for specs whose temporal properties are checked.",
)
@click.option(
    "--spark-conf",
    "spark_conf",
    metavar="KEY=VALUE",
    multiple=True,
    help="A Spark setting for --engine spark (repeatable).",
)
@click.option(
    "--checkpoint",
    "checkpoint_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Save the search to DIR at the start of a level every --checkpoint-every seconds, and"
    " when Ctrl-C, SIGTERM or --timeout stops it; go on later with --resume DIR.",
)
@click.option(
    "--checkpoint-every",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help=f"Seconds between checkpoints [default: {checkpoint.DEFAULT_EVERY:g}].",
)
@click.option(
    "--resume",
    "resume_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Go on from the checkpoint in DIR, saving there again. SPEC, -D, --invariant and the"
    " search options default to the checkpoint's; if given, they must match it.",
)
@outputs.check_options
def check(
    specs: Sequence[str],
    defines: Sequence[str],
    invariants: Sequence[str],
    no_invariants: bool,
    properties: Sequence[str],
    no_liveness: bool,
    no_deadlock: bool,
    strict: bool,
    witness: str | None,
    max_depth: int | None,
    max_states: int | None,
    timeout: float | None,
    workers: int,
    memory: int,
    json_path: str | None,
    progress_interval: float,
    engine: str,
    master: str | None,
    remote: str | None,
    spark_conf: Sequence[str],
    symmetry: bool | None,
    checkpoint_dir: str | None,
    checkpoint_every: float | None,
    resume_dir: str | None,
    **report_paths: str | None,
) -> int:
    """Explore every reachable state of each SPEC and check its invariants, then its temporal
    properties under its fairness.

    SPEC is a spec file (FILE.py::Class checks that class of it), or a folder: every spec
    below it is checked, and the exit code is
    the worst of theirs (150 > 151 > 75 > 12 > 13 > 11 > 15 > 152 > 0; see docs/ci.md). With
    --resume DIR, SPEC may be left out: the checkpoint names it.
    """
    if no_liveness and properties:
        raise ConfigError("--property and --no-liveness exclude each other")
    if no_invariants and invariants:
        raise ConfigError("--invariant and --no-invariants exclude each other")
    wanted = outputs.Outputs(json_path=json_path, **report_paths)
    saved = [
        str(Path(d) / checkpoint.FILE_NAME) for d in (checkpoint_dir, resume_dir) if d is not None
    ]
    wanted.validate([*specs, *saved])
    options = bfs.Options(
        deadlock=not no_deadlock,
        max_depth=max_depth,
        max_states=max_states,
        workers=workers,
        live_bytes=memory << 20,
    )
    chosen = None if no_liveness else tuple(properties)
    run = _Run(options, progress_interval, timeout, symmetry, chosen, strict, witness)
    if no_invariants:
        invariants = []
        run = dataclasses.replace(run, no_invariants=True)
    saving = None
    if checkpoint_dir is not None or resume_dir is not None or checkpoint_every is not None:
        model, saving = _checkpoints(
            specs,
            defines,
            invariants,
            run,
            engine,
            checkpoint_dir,
            checkpoint_every,
            resume_dir,
        )
        options, engine = _options_of(saving.settings), saving.settings.engine
        options = dataclasses.replace(options, live_bytes=memory << 20)
        run = dataclasses.replace(run, options=options)
    elif not specs:
        raise click.UsageError("Missing argument 'SPEC...'.")
    else:
        files = batch.spec_files(specs)
        if not files:
            raise SpecError(f"{', '.join(specs)}: no spec to check (no .py file in it)")
    if options.workers > 1 and engine != "local":
        raise ConfigError("--workers is for --engine local (Spark has its own executors)")
    explorer = _explorer(engine, master, remote, spark_conf)
    try:
        if saving is not None:
            wanted.refuse_modules()
            _check_witness(model, run.witness)
            result = _explore(model, run, explorer, _properties_for(model, run), saving)
            _note_checkpoint(saving)
            return _report(result, model, wanted)
        constants = _parse_defines(defines)
        if len(specs) == 1 and files and files[0].explicit:  # one spec file: errors end the run
            model, props = _load(files[0].path, constants, invariants or None, run)
            wanted.refuse_modules()
            _check_witness(model, run.witness)
            result = _explore(model, run, explorer, props)
            return _report(result, model, wanted)
        runs = _check_many(files, constants, invariants, run, explorer, wanted)
    finally:
        if explorer is not None:
            explorer.close()
    wanted.write(runs, multi=True)
    return batch.worst(int(c.result.exit_code) for c in runs)


def _checkpoints(
    specs: Sequence[str],
    defines: Sequence[str],
    invariants: Sequence[str],
    run: _Run,
    engine: str,
    checkpoint_dir: str | None,
    every: float | None,
    resume_dir: str | None,
) -> tuple[Model, checkpoint.Checkpoints]:
    """The model of a run with --checkpoint or --resume, and where it saves checkpoints."""
    if resume_dir is None and checkpoint_dir is None:
        raise ConfigError("--checkpoint-every needs --checkpoint DIR or --resume DIR")
    if resume_dir is not None and checkpoint_dir is not None:
        raise ConfigError("--resume DIR saves its checkpoints in DIR: leave out --checkpoint")
    if resume_dir is not None:
        given = _given(click.get_current_context())
        return _resumed(resume_dir, specs, defines, invariants, run.options, engine, every, given)
    assert checkpoint_dir is not None
    if len(specs) != 1 or Path(specs[0]).is_dir():
        raise ConfigError("--checkpoint is for a run of one spec file")
    model, _ = _load(specs[0], _parse_defines(defines), invariants or None, run)
    folder = checkpoint.prepare(checkpoint_dir, "--checkpoint")
    if (folder / checkpoint.FILE_NAME).exists():
        try:
            what = f"a checkpoint of {checkpoint.read(folder).describe()}"
        except ConfigError:
            what = "a checkpoint that cannot be read"
        raise ConfigError(
            f"--checkpoint {checkpoint_dir}: it holds {what}: go on with `mc check --resume"
            f" {checkpoint_dir}`, or delete {folder / checkpoint.FILE_NAME} to start over"
        )
    return model, checkpoint.Checkpoints(folder, _settings(model, run.options, engine, every))


_SEARCH_FLAGS = {
    "no_deadlock": "--no-deadlock",
    "max_depth": "--max-depth",
    "max_states": "--max-states",
    "engine": "--engine",
    "workers": "--workers",
}


def _given(ctx: click.Context) -> set[str]:
    """The search options given on the command line (not defaulted), by flag."""
    return {
        flag
        for name, flag in _SEARCH_FLAGS.items()
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)
    }


def _settings(
    model: Model, options: bfs.Options, engine: str, every: float | None
) -> checkpoint.Settings:
    return checkpoint.Settings.of(
        model,
        deadlock=options.deadlock,
        max_depth=options.max_depth,
        max_states=options.max_states,
        engine=engine,
        workers=options.workers,
        every=checkpoint.DEFAULT_EVERY if every is None else every,
    )


def _options_of(settings: checkpoint.Settings) -> bfs.Options:
    return bfs.Options(
        deadlock=settings.deadlock,
        max_depth=settings.max_depth,
        max_states=settings.max_states,
        workers=settings.workers,
    )


def _resumed(
    directory: str,
    specs: Sequence[str],
    defines: Sequence[str],
    invariants: Sequence[str],
    options: bfs.Options,
    engine: str,
    every: float | None,
    given: set[str],
) -> tuple[Model, checkpoint.Checkpoints]:
    """The run a checkpoint holds, checked against the spec on disk and the options given;
    it saves its own checkpoints in the same folder."""
    if len(specs) > 1:
        raise ConfigError("--resume DIR goes on with the one spec of its checkpoint")
    saved = checkpoint.read(directory)
    folder = checkpoint.prepare(directory, "--resume")
    model = checkpoint.resumed_model(
        saved, specs[0] if specs else None, _parse_defines(defines), invariants
    )
    asked = {
        "--no-deadlock": not options.deadlock,
        "--max-depth": options.max_depth,
        "--max-states": options.max_states,
        "--engine": engine,
    }
    checkpoint.refuse_other_options(saved, {k: v for k, v in asked.items() if k in given})
    s = saved.settings
    workers = options.workers if "--workers" in given else s.workers
    note = ""
    if s.engine == "local" and s.workers != workers:
        note = f" (saved by --workers {s.workers}; any number gives the same result)"
    click.echo(f"mc: resuming {saved.describe()} from {saved.path}{note}", err=True)
    resumed = _options_of(s)
    settings = _settings(
        model,
        bfs.Options(resumed.deadlock, resumed.max_depth, resumed.max_states, workers),
        s.engine,
        s.every if every is None else every,
    )
    return model, checkpoint.Checkpoints(folder, settings, saved)


def _note_checkpoint(saving: checkpoint.Checkpoints) -> None:
    """Say where a stopped run left its checkpoint."""
    written = saving.written
    if written is not None:
        click.echo(
            f"mc: checkpoint at level {written.level} ({written.states:,} distinct states)"
            f" in {saving.directory}: go on with `mc check --resume {saving.directory}`",
            err=True,
        )


def _explorer(
    engine: str, master: str | None, remote: str | None, spark_conf: Sequence[str]
) -> spark.Explorer | None:
    """The Spark engine's session holder, or None for the local engine."""
    if engine != "spark":
        for name, value in (
            ("--master", master),
            ("--remote", remote),
            ("--spark-conf", spark_conf),
        ):
            if value:
                raise ConfigError(f"{name} is for --engine spark")
        return None
    if master and remote:
        raise ConfigError("--master and --remote exclude each other")
    if master and master.startswith("spark://"):
        _require_reachable(master)
    conf = _parse_pairs(spark_conf, "--spark-conf", "KEY=VALUE")
    return spark.Explorer(master=master, remote=remote, conf=conf)


def _require_reachable(master: str) -> None:
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


@dataclass(frozen=True)
class _Run:
    """How each spec of a `mc check` run is explored."""

    options: bfs.Options
    progress_interval: float
    timeout: float | None
    symmetry: bool | None = None  # None: the spec's, unless temporal properties are checked
    properties: Sequence[str] | None = ()  # those to check (empty: all declared; None: none)
    strict: bool = False  # the vacuity check's warnings fail the run (exit 15)
    witness: str | None = None  # the reachability property whose example to report
    no_invariants: bool = False  # check no invariant (--no-invariants)


def _check_witness(model: Model, witness: str | None) -> None:
    """--witness names a reachability property of the spec."""
    declared = [r.name for r in model.reachables]
    if witness is not None and witness not in declared:
        raise ConfigError(
            f"--witness {witness}: {model.name} has no such reachability property (reachable:"
            f" {', '.join(declared) or 'none: declare one with @reachable'})"
        )


def _load(
    path: str,
    constants: dict[str, str],
    invariants: Sequence[str] | None,
    run: _Run,
    properties: Sequence[str] | None = None,
) -> tuple[Model, list[liveness.Property]]:
    """The model of a spec and the temporal properties to check on it (`properties`: names,
    or None for those `run` asks for). Symmetry reduction merges states that a lasso must
    tell apart, so a spec whose properties are checked is explored without it, and asking
    for both is refused (TLC only warns)."""
    if run.no_invariants:
        invariants = []
    model = load_model(path, constants, invariants, run.symmetry is not False)
    if run.properties is None:
        return model, []
    names = properties if properties is not None else (run.properties or None)
    props = liveness.select(model, names)
    if props and model.symmetry is not None and run.symmetry is None:
        click.echo(
            f"mc: note: {path}: symmetry is off, as its temporal properties are checked"
            " (--no-liveness checks only the invariants, with symmetry)",
            err=True,
        )
        model = load_model(path, constants, invariants, symmetry=False)
    return model, _properties_for(model, run, names)


def _properties_for(
    model: Model, run: _Run, names: Sequence[str] | None = None
) -> list[liveness.Property]:
    """The temporal properties `run` checks on `model` (`names`: those of a multi-spec run)."""
    if run.properties is None:
        return []
    props = liveness.select(model, names if names is not None else (run.properties or None))
    if props and model.symmetry is not None:
        raise ConfigError(
            f"{model.path}: temporal properties cannot be checked under symmetry reduction (it"
            " merges states that a fair cycle must tell apart): use --no-symmetry, or"
            " --no-liveness to check only the invariants with symmetry"
        )
    return props


def _report(result: CheckResult, model: Model, wanted: outputs.Outputs) -> int:
    """A one-spec run's report: text on stdout, the files asked for; its exit code."""
    click.echo(text.render(result), nl=False)
    wanted.write([Checked(result, model)], multi=False)
    return int(result.exit_code)


def _progress(interval: float) -> Progress | None:
    return Progress(interval=interval) if interval > 0 else None


def _explore(
    model: Model,
    run: _Run,
    explorer: spark.Explorer | None = None,
    properties: Sequence[liveness.Property] = (),
    checkpoints: checkpoint.Checkpoints | None = None,
) -> CheckResult:
    """The invariants on the chosen engine, then (if they hold) the temporal properties, on
    the state graph the local engine recorded as it searched (else it searches again)."""
    declared = [r.name for r in model.reachables]
    witness = run.witness if run.witness in declared else None
    options = dataclasses.replace(run.options, witness=witness)
    with Deadline(model, run.timeout) as deadline:
        progress = _progress(run.progress_interval)
        behaviour = None
        if explorer is not None:
            result = explorer.check(model, options, progress, checkpoints)
        elif properties and checkpoints is None:
            recording = liveness.recording(model, properties)
            result, behaviour = bfs.record(model, recording, options, progress)
        else:
            result = bfs.check(model, options, progress, checkpoints)
        again = _progress(run.progress_interval) if behaviour is None else None
        result = liveness.check(model, result, properties, behaviour, again)
    vacuity.review(model, result)
    result.strict = run.strict
    if deadline.fired and result.verdict == "incomplete":
        result.bound = deadline.bound
        click.echo(f"mc: {deadline.note}", err=True)
    return result


def _check_many(
    files: Sequence[batch.SpecFile],
    constants: dict[str, str],
    invariants: Sequence[str],
    run: _Run,
    explorer: spark.Explorer | None = None,
    wanted: outputs.Outputs | None = None,
) -> list[Checked]:
    """Load every spec first (so a misspelt -D fails before hours of checking), then check
    them one by one. -D, --invariant and --property apply to the specs that declare the name
    (a spec that declares none of the --invariant and --property names is skipped); a name
    no spec declares is an error. `properties` None: no liveness. A spec that fails to load
    is reported and the run goes on."""
    loaded: list[tuple[Model, list[liveness.Property]] | NotChecked] = []
    declared: set[str] = set()
    declared_properties: set[str] = set()
    for file in files:
        try:
            cls, _ = load_spec_class(file.path)
        except NoSpecError as exc:
            if file.explicit:
                loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
            else:
                click.echo(f"mc: note: {file.path} defines no spec: skipped", err=True)
            continue
        except McError as exc:
            loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
            continue
        mine = {k: v for k, v in constants.items() if k in constants_of(cls)}
        selected = [n for n in invariants if n in invariants_of(cls)]
        # `name(b=1)` names one binding of the property `name`
        chosen = [n for n in run.properties or () if n.split("(")[0] in _properties_of(cls)]
        declared |= set(mine) | set(selected)
        declared_properties |= set(chosen)
        if (invariants or run.properties) and not (selected or chosen):
            click.echo(
                f"mc: note: {file.path} has no --invariant or --property named: skipped",
                err=True,
            )
            continue
        try:
            loaded.append(
                _load(file.path, mine, selected or None, run, chosen if run.properties else None)
            )
        except McError as exc:
            loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
    unknown = [f"-D {n}" for n in constants if n not in declared]
    unknown += [f"--invariant {n}" for n in invariants if n not in declared]
    unknown += [f"--property {n}" for n in run.properties or () if n not in declared_properties]
    if run.witness is not None and not any(
        run.witness in [r.name for r in item[0].reachables]
        for item in loaded
        if not isinstance(item, NotChecked)
    ):
        unknown.append(f"--witness {run.witness}")
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: no spec of this run declares it")
    if not loaded:
        raise SpecError(f"{', '.join(str(f) for f in files)}: no spec to check")
    if wanted is not None:
        wanted.refuse_modules()
    runs: list[Checked] = []
    for item in loaded:
        if isinstance(item, NotChecked):
            click.echo(f"mc: error: {item.message}", err=True)
            runs.append(Checked(item))
            continue
        model, props = item
        try:
            result = _explore(model, run, explorer, props)
        except McError as exc:
            click.echo(f"mc: error: {exc}", err=True)
            runs.append(Checked(NotChecked(model.path, str(exc), exc.exit_code)))
            continue
        click.echo(text.render(result))
        runs.append(Checked(result, model))
    click.echo(batch.summary([c.result for c in runs]), nl=False)
    return runs


@cli.command("ablate")
@click.argument("spec", metavar="SPEC", type=click.Path(dir_okay=False))
@define_option
@click.option(
    "--rule",
    "rules",
    metavar="NAME",
    multiple=True,
    help="Switch off only this rule (repeatable). Default: each rule the spec declares.",
)
@click.option("--pairs", is_flag=True, help="Also switch off each pair of rules together.")
@click.option("--no-liveness", is_flag=True, help="Check no temporal property.")
@deadlock_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Stop each check after SECONDS (its undecided cells show ?).",
)
@click.option(
    "--max-states", type=click.IntRange(min=1), help="Stop each check after this many states."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="the CPUs",
    help="Rows checked side by side, each in its own process (same table for any number).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="spark: every check on one Spark session, the rows one after another.",
)
@click.option("--master", metavar="URL", help="Spark master for --engine spark.")
@click.option("--remote", metavar="URL", help="Spark Connect server (sc://..., or local).")
@click.option(
    "--spark-conf", "spark_conf", metavar="KEY=VALUE", multiple=True, help="A Spark setting."
)
@click.option("--html", "html_path", metavar="PATH", help="Write the table as an HTML page.")
@click.option("--json", "json_path", metavar="PATH", help="Write the table as JSON.")
@click.option("--junit", "junit_path", metavar="PATH", help="Write JUnit XML: a case per cell.")
@click.option("--markdown", "markdown_path", metavar="PATH", help="Write the table in Markdown.")
@progress_option
def ablate_command(
    spec: str,
    defines: Sequence[str],
    rules: Sequence[str],
    pairs: bool,
    no_liveness: bool,
    no_deadlock: bool,
    timeout: float | None,
    max_states: int | None,
    workers: int,
    engine: str,
    master: str | None,
    remote: str | None,
    spark_conf: Sequence[str],
    progress_interval: float,
    **paths: str | None,
) -> int:
    """Check SPEC with every rule of its protocol change on, then with each rule off alone, and
    print a table: a row per rule, a column per invariant, reachability and temporal property,
    each cell "holds" or the length of the shortest counterexample. A rule whose removal
    breaks nothing is flagged. Exit code: that of the checks with every rule on (0: all held).
    """
    if workers > 1 and engine != "local":
        if click.get_current_context().get_parameter_source("workers") != (
            click.core.ParameterSource.DEFAULT
        ):
            raise ConfigError("--workers is for --engine local (Spark has its own executors)")
        workers = 1
    settings = ablate.Settings(not no_deadlock, not no_liveness, timeout, max_states)
    explorer = _explorer(engine, master, remote, spark_conf)
    try:
        return ablate.command(
            spec,
            _parse_defines(defines),
            rules=rules,
            pairs=pairs,
            settings=settings,
            workers=workers,
            explorer=explorer,
            paths={name.removesuffix("_path"): path for name, path in paths.items()},
            progress=progress_interval > 0,
            echo=click.echo,
        )
    finally:
        if explorer is not None:
            explorer.close()


@cli.command("simulate")
@click.argument("spec", metavar="SPEC", type=click.Path(dir_okay=False))
@define_option
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Seed of the random walks; the same seed takes the same walks. Default: a fresh"
    " one, printed first.",
)
@click.option(
    "--traces",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Random walks to take (the run stops at the first verdict).",
)
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="States per walk at most, the initial one included (as --max-depth counts).",
)
@invariant_option
@deadlock_option
@json_option
@progress_option
@outputs.check_options
def simulate(
    spec: str,
    defines: Sequence[str],
    seed: int | None,
    traces: int,
    depth: int,
    invariants: Sequence[str],
    no_deadlock: bool,
    json_path: str | None,
    progress_interval: float,
    **report_paths: str | None,
) -> int:
    """Check SPEC's invariants on random walks, for state spaces too big to explore.

    Each walk starts at an initial state and takes random successors, up to --depth states.
    A violation is shortened (steps dropped while it remains) and reported as `mc check`
    reports one, with its exit code; finding none (exit 0) is not a proof.
    """
    wanted = outputs.Outputs(json_path=json_path, **report_paths)
    wanted.validate([spec])
    model = load_model(spec, _parse_defines(defines), invariants or None)
    wanted.refuse_modules()
    seed = simulation.new_seed() if seed is None else seed
    # On stderr at once, so that even a killed run can be repeated; the report has it too.
    click.echo(f"mc: seed {seed}", err=True)
    options = simulation.Options(
        seed=seed, traces=traces, max_depth=depth, deadlock=not no_deadlock
    )
    result = simulation.simulate(model, options, _progress(progress_interval))
    return _report(result, model, wanted)


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@define_option
@click.option(
    "--max-states",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_STATES,
    show_default=True,
    help="Refuse (exit 152) a state space with more distinct states than this.",
)
@click.option("--dot", "dot_path", metavar="PATH", help="Write DOT (default: to stdout).")
@click.option("--svg", "svg_path", metavar="PATH", help="Write SVG (needs Graphviz's `dot`).")
@click.option("--png", "png_path", metavar="PATH", help="Write PNG (needs Graphviz's `dot`).")
@click.option("--mermaid", "mermaid_path", metavar="PATH", help="Write a Mermaid flowchart.")
def graph(
    spec: str,
    defines: Sequence[str],
    max_states: int,
    dot_path: str | None,
    svg_path: str | None,
    png_path: str | None,
    mermaid_path: str | None,
) -> int:
    """Draw SPEC's whole state space: a node per state, an edge per action (small specs).

    Like TLC's -dump dot: initial states are bold, states that violate an invariant red.
    """
    paths = {"dot": dot_path, "svg": svg_path, "png": png_path, "mermaid": mermaid_path}
    for name, path in paths.items():
        if path == "":
            raise ConfigError(f"--{name} '': an empty path; give the file to write")
        if path:
            outputs.check_writable(path, f"--{name}")
            outputs.refuse_input(path, f"--{name}", [spec])
    for fmt in ("svg", "png"):
        if paths[fmt]:
            graphviz.require_dot(f"--{fmt}")
    model = load_model(spec, _parse_defines(defines))
    for name, path in paths.items():
        if path:
            outputs.refuse_module(path, f"--{name}")
    g = state_space_graph(model, max_states)
    dot_text = dot.to_dot(g, model.name)
    if dot_path:
        with outputs.writing("--dot", dot_path):
            dot.write(g, dot_path, model.name)
    for fmt in ("svg", "png"):
        if paths[fmt]:
            with outputs.writing(f"--{fmt}", paths[fmt]):  # type: ignore[arg-type]
                graphviz.render(dot_text, fmt, paths[fmt])  # type: ignore[arg-type]
    if mermaid_path:
        with outputs.writing("--mermaid", mermaid_path):
            mermaid.write(mermaid.flowchart(g), mermaid_path)
    if not any(paths.values()):
        click.echo(dot_text, nl=False)
    else:
        edges = g.number_of_edges()
        click.echo(f"{model.name}: {len(g):,} states, {edges:,} transitions.", err=True)
    return 0


@cli.command("list")
@click.argument("spec", type=click.Path(dir_okay=True))
@define_option
def list_spec(spec: str, defines: Sequence[str]) -> int:
    """Show SPEC's constants, actions (with parameter domains and fairness), invariants and
    temporal properties."""
    model = load_model(spec, _parse_defines(defines))
    click.echo(_describe(model), nl=False)
    return 0


@cli.command("explore")
@click.argument("spec", metavar="SPEC", type=click.Path(dir_okay=False))
@define_option
@click.option(
    "--trace",
    "trace_path",
    metavar="RESULT.json",
    type=click.Path(dir_okay=False),
    help="An `mc check --json` report of this spec: its trace is one click away.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="The port on 127.0.0.1 (0: a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser.")
@click.option(
    "--max-depth",
    type=click.IntRange(min=1),
    help="Paths of at most this many states (as mc check counts them); find too.",
)
def explore(
    spec: str,
    defines: Sequence[str],
    trace_path: str | None,
    port: int,
    open_browser: bool,
    max_depth: int | None,
) -> int:
    """Walk SPEC's states in the browser: a local page (127.0.0.1) showing a state, every
    action binding (enabled ones one click away), the invariants on it, the sequence chart
    of the path, and "find" (the shortest path to a state where an expression holds).
    Needs the explore extra: pip install 'mc[explore]'. See docs/explore.md."""
    from checker import explore as explorer  # Werkzeug is imported only here

    command = shlex.join(["mc", "explore", spec, *(a for d in defines for a in ("-D", d))])
    return explorer.run(
        spec,
        _parse_defines(defines),
        trace=trace_path,
        port=port,
        open_browser=open_browser,
        max_depth=max_depth,
        command=command,
        echo=lambda line: click.echo(line),
    )


def _describe(model: Model) -> str:
    cls = type(model.spec)
    lines = [f"{model.name}: {model.title}", "", "Constants:"]
    declared = constants_of(cls)
    for name, const in declared.items():
        value = model.constants[name]
        default = "" if value == const.default else f" (default {const.default!r})"
        lines.append(f"  {name} = {value!r}{default}  [{const.type.__name__}]  {const.doc}")
    if not declared:
        lines.append("  (none)")
    lines += ["", "Actions:"]
    for act in model.actions:
        domains = [
            f"{p} in {'(per state)' if callable(d) else show(d)}"
            for p, d in zip(act.params, act.domains)
        ]
        doc = _first_line(act.fn)
        signature = f"{act.name}({', '.join(domains)})"
        fair = fairness_of(act.fn)
        if fair.whole:
            signature += f"  [{'SF' if fair.whole == 'strong' else 'WF'}]"
        if fair.each:
            signature += f"  [{'SF' if fair.each == 'strong' else 'WF'} for each binding]"
        switch = switches_of(act.fn)
        if switch:
            signature += f"  [switch: {', '.join(switch)}]"
        lines.append(f"  {signature}" + (f"  {doc}" if doc else ""))
    lines += ["", "Invariants:"]
    for inv in model.invariants:
        doc = _first_line(inv.fn)
        lines.append(f"  {inv.name}" + (f"  {doc}" if doc else ""))
    if not model.invariants:
        lines.append("  (none)")
    lines += ["", "Reachability properties:"]
    for prop in model.reachables:
        doc = _first_line(prop.fn)
        lines.append(f"  {prop.name}" + (f"  {doc}" if doc else ""))
    for name, switch in model.reachables_off.items():
        lines.append(f"  {name}  [off: {switch}]")
    if lines[-1] == "Reachability properties:":
        lines.append("  (none)")
    # Shown only when declared: most specs have none of these.
    for title, members in (
        ("Final states (@terminal)", model.terminals),
        ("Assumptions (@assume)", [(n, f) for n, f in assumptions_of(cls).items()]),
    ):
        if members:
            lines += ["", f"{title}:"]
            for member in members:
                name, fn = (member.name, member.fn) if hasattr(member, "fn") else member
                doc = _first_line(fn)
                lines.append(f"  {name}" + (f"  {doc}" if doc else ""))
    declared = model.declared_types
    if declared:
        lines += ["", "Declared types:"]
        lines += [f"  {name}: {kinds.python_type(kind)}" for name, kind in declared.items()]
    for title, constraints in (
        ("State constraints", model.constraints),
        ("Action constraints", model.action_constraints),
    ):
        if constraints:
            lines += ["", f"{title}:"]
            for c in constraints:
                doc = _first_line(c.fn)
                lines.append(f"  {c.name}" + (f"  {doc}" if doc else ""))
    if model.view is not None:
        doc = _first_line(model.view)
        lines += ["", "View:", "  view" + (f"  {doc}" if doc else "")]
    if model.symmetry is not None:
        lines += ["", f"Symmetry: {model.symmetry.describe()}"]
        for name, values in model.symmetry.sets.items():
            lines.append(f"  {name} = {show(values)}")
    lines += ["", "Temporal properties:"]
    shown = set()  # a property with domains is listed once, as declared
    for prop in liveness.select(model):
        if prop.declared in shown:
            continue
        shown.add(prop.declared)
        member = getattr(type(model.spec), prop.declared)
        formula = getattr(member, "formula", prop.formula)
        doc = _first_line(member)
        lines.append(f"  {prop.declared}: {formula}" + (f"  {doc}" if doc else ""))
    if lines[-1] == "Temporal properties:":
        lines.append("  (none)")
    return "\n".join(lines) + "\n"


def _properties_of(cls: type) -> dict[str, object]:
    """The spec class's temporal properties; a bad declaration is reported when it loads."""
    try:
        return properties_of(cls)
    except TypeError:
        return {}


def _first_line(fn: object) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.splitlines()[0] if doc else ""


def main(argv: Sequence[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        # SIGTERM stops a run as Ctrl-C does (partial counts, exit 152); spec code cannot end
        # the run (checker.guard)
        with guard.guarded():
            code = cli.main(args=argv, prog_name="mc", standalone_mode=False)
    except SystemExit as exc:  # click returns its exits: this one is spec code's
        if debug:
            traceback.print_exc()
        click.echo(
            f"mc: error: spec code ended the run with SystemExit({exc.code!r}), outside any"
            " action or invariant that mc could name; the run proves nothing",
            err=True,
        )
        code = ExitCode.EVALUATION_ERROR
    except click.exceptions.Abort:
        click.echo("mc: aborted", err=True)
        code = 130
    except click.ClickException as exc:  # bad options: usage errors and the like
        exc.show()
        code = ExitCode.CONFIG_ERROR
    except McError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"mc: error: {exc}", err=True)
        code = exc.exit_code
    sys.exit(int(code or 0))
