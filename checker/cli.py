"""The `mc` command line: its commands and options, and how its errors end it (exit codes
follow TLC, see checker.errors.ExitCode). What the commands do is checker.run's and
checker.batch's; a new command is a function here that reads its options and calls them."""

from __future__ import annotations

import atexit
import os
import shlex
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import click

from checker import (
    __version__,
    checkpoint,
    commands,
    constants,
    determinism,
    guard,
    run,
    simulation,
    stdout,
    validate_command,
)
from checker.ablation import Settings
from checker.errors import ConfigError, EvaluationError, ExitCode, McError
from checker.reports import outputs
from checker.reports.graph import DEFAULT_MAX_STATES
from checker.search.options import LIVE_BYTES, Options

F = TypeVar("F", bound=Callable[..., Any])
MAX_SECONDS = 10 * 365 * 86400.0  # what a timer can be set to (and more than any run needs)


def _seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A number of seconds must be a number: `nan` passes FloatRange's comparisons."""
    if value is not None and value != value:
        raise click.BadParameter("not a number of seconds", ctx, param)
    return value


def seconds(minimum_open: bool = False) -> dict[str, Any]:
    """The type of an option in seconds: at least 0 (above 0 if `minimum_open`), finite."""
    return {
        "type": click.FloatRange(min=0, min_open=minimum_open, max=MAX_SECONDS),
        "callback": _seconds,
    }


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator of several options, in the order given (as written above a command)."""

    def apply(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


def number_option(flag: str, minimum: int, help: str, **settings: Any) -> Callable[[F], F]:
    """An option taking a whole number of at least `minimum` (its default shown if it has
    one)."""
    settings.setdefault("show_default", settings.get("default") is not None)
    return click.option(flag, type=click.IntRange(min=minimum), help=help, **settings)


def folder_option(flag: str, name: str, help: str) -> Callable[[F], F]:
    """An option naming a folder (DIR), as the keyword `name`."""
    return click.option(flag, name, metavar="DIR", type=click.Path(file_okay=False), help=help)


def path_options(*names: tuple[str, str]) -> Callable[[F], F]:
    """--NAME PATH options (each a `<name>_path` keyword), from (name, help) pairs."""
    return options(
        *(
            click.option(f"--{name}", f"{name}_path", metavar="PATH", help=text)
            for name, text in names
        )
    )


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
    **seconds(),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between progress lines on stderr (0: none). A terminal gets a live bar.",
)


no_liveness_option = click.option(
    "--no-liveness", is_flag=True, help="Check no temporal property (only the invariants)."
)
max_depth_option = number_option(
    "--max-depth", 1, "Paths of at most this many states (as mc check counts them)."
)
max_states_option = number_option("--max-states", 1, "Stop after this many distinct states.")


def timeout_option(what: str) -> Callable[[F], F]:
    """--timeout SECONDS, bounding `what` ("each spec's search", "each check")."""
    return click.option(
        "--timeout",
        **seconds(minimum_open=True),
        metavar="SECONDS",
        help=f"Stop {what} after SECONDS (exit 152, partial counts) and say which action,"
        " guard or invariant was running: a bound for code that never returns.",
    )


# The Spark engine's options (`mc check`, `mc ablate`): --engine, --master, --remote,
# --spark-conf (checker.run.engine reads them).
spark_options = options(
    click.option(
        "--engine",
        type=click.Choice(["local", "spark"]),
        default="local",
        show_default=True,
        help="local: this machine's processes. spark: the frontier partitioned across a Spark"
        " cluster (mc ablate: the rows one after another on one Spark session).",
    ),
    click.option(
        "--master",
        metavar="URL",
        help="Spark master for --engine spark: local[N], spark://..., yarn, k8s://... (default:"
        " spark-submit's, else local[*]).",
    ),
    click.option("--remote", metavar="URL", help="Spark Connect server (sc://..., or local)."),
    click.option(
        "--spark-conf",
        "spark_conf",
        metavar="KEY=VALUE",
        multiple=True,
        help="A Spark setting for --engine spark (repeatable).",
    ),
)


# The report options of `mc check` and `mc simulate`.
report_options = path_options(*outputs.RUN_OPTIONS, *outputs.TRACE_OPTIONS)


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
@no_liveness_option
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
@max_depth_option
@max_states_option
@timeout_option("each spec's search")
@number_option(
    "--workers",
    1,
    "Local engine: processes expanding states (same result for any number).",
    default=1,
)
@number_option(
    "--memory",
    0,
    default=LIVE_BYTES >> 20,
    metavar="MIB",
    help="Local engine: memory for states kept as Python objects (the level being expanded,"
    " the next, and the states each process remembers meeting), measured as the expanders'"
    " resident memory where the system tells; beyond it states are kept encoded. Only speed"
    " depends on it. Default: a quarter of this machine's memory, at least 1 GiB.",
)
@click.option(
    "--incremental/--no-incremental",
    default=True,
    show_default=True,
    help="Local engine: skip the guards and invariants a step cannot have changed (they read"
    " none of the variables it changed); --no-incremental evaluates them all, to compare."
    " Same results either way.",
)
@number_option(
    "--recheck",
    0,
    default=determinism.RECHECK,
    metavar="N",
    help="Expand every Nth state twice and compare the answers, to catch a spec that is not"
    " deterministic (randomness, the clock, state kept on self: exit 75). 1: every state"
    " (twice the work in the actions); 0: none. Traces are always checked.",
)
@json_option
@progress_option
@spark_options
@click.option(
    "--symmetry/--no-symmetry",
    default=None,
    help="Identify states that differ by a renaming of the values the spec declares"
    " symmetric (e.g. broker ids); --no-symmetry explores them all, to compare. Default: on"
    " where declared, except for specs whose temporal properties are checked.",
)
@click.option(
    "--view/--no-view",
    default=None,
    help="Identify states by the spec's view of them (as TLC's VIEW); --no-view by all their"
    " variables. Default: on where declared, except for specs whose temporal properties are"
    " checked (merged states can close cycles that no behaviour takes).",
)
@folder_option(
    "--checkpoint",
    "checkpoint_dir",
    "Save the search to DIR at the start of a level every --checkpoint-every seconds, and"
    " when Ctrl-C, SIGTERM or --timeout stops it; go on later with --resume DIR.",
)
@click.option(
    "--checkpoint-every",
    **seconds(),
    metavar="SECONDS",
    help=f"Seconds between checkpoints [default: {checkpoint.DEFAULT_EVERY:g}].",
)
@folder_option(
    "--resume",
    "resume_dir",
    "Go on from the checkpoint in DIR, saving there again. SPEC, -D, --invariant and the"
    " search options default to the checkpoint's; if given, they must match it.",
)
@report_options
def check(specs: Sequence[str], defines: Sequence[str], **o: Any) -> int:
    """Explore every reachable state of each SPEC and check its invariants, then its temporal
    properties under its fairness.

    SPEC is a spec file (FILE.py::Class checks that class of it), or a folder: every spec
    below it is checked, and the exit code is
    the worst of theirs (153 > 150 > 151 > 75 > 12 > 13 > 11 > 15 > 152 > 0; see docs/ci.md). With
    --resume DIR, SPEC may be left out: the checkpoint names it.
    """
    if o["no_liveness"] and o["properties"]:
        raise ConfigError("--property and --no-liveness exclude each other")
    if o["no_invariants"] and o["invariants"]:
        raise ConfigError("--invariant and --no-invariants exclude each other")
    wanted = outputs.Outputs(**{k: v for k, v in o.items() if k.endswith("_path")})
    search = ("max_depth", "max_states", "workers", "incremental")
    options = Options(
        not o["no_deadlock"], **{k: o[k] for k in search}, live_bytes=o["memory"] << 20
    )
    config = run.Config(
        options,
        invariants=tuple(o["invariants"]),
        no_invariants=o["no_invariants"],
        properties=None if o["no_liveness"] else tuple(o["properties"]),
        symmetry=o["symmetry"],
        view=o["view"],
        recheck=o["recheck"],
        strict=o["strict"],
        witness=o["witness"],
        progress=o["progress_interval"],
        timeout=o["timeout"],
        engine=o["engine"],
        master=o["master"],
        remote=o["remote"],
        spark_conf=tuple(o["spark_conf"]),
        checkpoint=o["checkpoint_dir"],
        checkpoint_every=o["checkpoint_every"],
        resume=o["resume_dir"],
    )
    given = _given(click.get_current_context())
    try:
        return commands.check_files(specs, constants.defines(defines), config, wanted, given)
    except commands.NoSpecGiven as exc:
        raise click.UsageError(str(exc)) from None


# The search options given on the command line, by parameter: a resumed run must agree.
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
@no_liveness_option
@deadlock_option
@timeout_option("each check (its undecided cells show ?)")
@max_states_option
@number_option(
    "--workers",
    1,
    "Rows checked side by side, each in its own process (same table for any number).",
    show_default="the CPUs this process may use, within its cgroup's CPU quota",
)
@number_option(
    "--memory",
    1,
    metavar="MIB",
    show_default="half of this machine's memory",
    help="The rows' resident memory, summed: a row starts only while the running ones leave"
    " it a share (MIB / --workers), and when they go over it the largest is killed (its cells:"
    " out of memory, exit 153).",
)
@spark_options
@path_options(
    ("html", "Write the table as an HTML page."),
    ("json", "Write the table as JSON."),
    ("junit", "Write JUnit XML: a case per cell."),
    ("markdown", "Write the table in Markdown."),
)
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
    workers: int | None,
    memory: int | None,
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
    breaks nothing is flagged.

    Exit code: 152 when Ctrl-C or SIGTERM stopped it (every row at once; the table of the rows
    finished; a second one ends mc at once, without it), else 153 when a row's process was
    killed or over --memory, else that of the checks with every rule on (0: all held).
    """
    if engine != "local" and (workers or 1) > 1:
        raise ConfigError("--workers is for --engine local (Spark has its own executors)")
    settings = Settings(not no_deadlock, not no_liveness, timeout, max_states)
    spark_session = run.Config(
        engine=engine, master=master, remote=remote, spark_conf=tuple(spark_conf)
    )
    with run.engine(spark_session) as spark_engine:
        return commands.ablate(
            spec,
            constants.defines(defines),
            rules=rules,
            pairs=pairs,
            settings=settings,
            workers=workers,
            memory=None if memory is None else memory << 20,
            spark_engine=spark_engine,
            paths={name.removesuffix("_path"): path for name, path in paths.items()},
            progress=progress_interval,
        )


@cli.command("simulate")
@click.argument("spec", metavar="SPEC", type=click.Path(dir_okay=False))
@define_option
@number_option(
    "--seed",
    0,
    "Seed of the random walks; the same seed takes the same walks. Default: a fresh"
    " one, printed first.",
)
@number_option(
    "--traces", 1, "Random walks to take (the run stops at the first verdict).", default=1000
)
@number_option(
    "--depth",
    1,
    "States per walk at most, the initial one included (as --max-depth counts).",
    default=100,
)
@invariant_option
@deadlock_option
@json_option
@progress_option
@report_options
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

    def walks(seed: int) -> simulation.Options:
        return simulation.Options(
            seed=seed, traces=traces, max_depth=depth, deadlock=not no_deadlock
        )

    defined = constants.defines(defines)
    chosen = invariants or None
    return commands.simulate(
        spec, defined, seed, walks, invariants=chosen, progress=progress_interval, wanted=wanted
    )


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@define_option
@number_option(
    "--max-states",
    1,
    "Refuse (exit 152) a state space with more distinct states than this.",
    default=DEFAULT_MAX_STATES,
)
@path_options(
    ("dot", "Write DOT (default: to stdout)."),
    ("svg", "Write SVG (needs Graphviz's `dot`)."),
    ("png", "Write PNG (needs Graphviz's `dot`)."),
    ("mermaid", "Write a Mermaid flowchart."),
)
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
    return commands.draw(spec, constants.defines(defines), max_states, paths)


@cli.command("list")
@click.argument("spec", type=click.Path(dir_okay=True))
@define_option
def list_spec(spec: str, defines: Sequence[str]) -> int:
    """Show SPEC's constants, actions (with parameter domains and fairness), invariants and
    temporal properties."""
    click.echo(commands.describe(spec, constants.defines(defines)), nl=False)
    return 0


@cli.command("explore")
@click.argument("spec", metavar="SPEC", type=click.Path(dir_okay=False))
@define_option
@click.option(
    "--trace",
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
@max_depth_option
def explore(spec: str, defines: Sequence[str], **options: Any) -> int:
    """Walk SPEC's states in the browser: a local page (127.0.0.1) showing a state, every
    action binding (enabled ones one click away), the invariants on it, the sequence chart
    of the path, and "find" (the shortest path to a state where an expression holds).
    Needs the explore extra: pip install 'mc[explore]'. See docs/explore.md."""
    from checker import explore as explorer  # Werkzeug is imported only here

    command = shlex.join(["mc", "explore", spec, *(a for d in defines for a in ("-D", d))])
    defined = constants.defines(defines)
    return explorer.run(spec, defined, command=command, echo=click.echo, **options)


@cli.command("validate")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.argument("log", type=click.Path(dir_okay=False))
@define_option
@number_option(
    "--max-hidden",
    0,
    "Hidden steps (that change nothing the log shows) searched before a record.",
    default=40,
)
@number_option(
    "--max-states",
    1,
    "States generated at most by a pass; beyond, the verdict is undecided.",
    default=300_000,
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="VARIABLE",
    help="Do not compare this projected variable (repeatable).",
)
@path_options(*outputs.TRACE_OPTIONS[:2])
@json_option
def validate(spec: str, log: str, defines: Sequence[str], **options: Any) -> int:
    """Check that LOG, a log of a real system, is a behaviour of SPEC: the observer next to
    the spec (<spec>_observe.py) reads it and projects the spec's states. Exit 0 accepted,
    16 diverged, 17 undecided (a bound). See docs/validate.md."""
    return validate_command.run(spec, log, constants.defines(defines), echo=click.echo, **options)


def main(argv: Sequence[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        # SIGTERM stops a run as Ctrl-C does (partial counts, exit 152); spec code cannot end
        # the run (checker.guard)
        with guard.guarded():
            code = cli.main(args=argv, prog_name="mc", standalone_mode=False)
            if sys.stdout is not None and not sys.stdout.closed:
                sys.stdout.flush()  # a full disk or a closed pipe says so now, not at exit
    except SystemExit as exc:  # click returns its exits: this one is spec code's, or a pipe's
        if debug:
            traceback.print_exc()
        code = stdout.failed(stdout.failure(exc)) or _spec_exited(exc)
    except click.exceptions.Abort as exc:  # Ctrl-C or SIGTERM outside a search (its own say so)
        name = str(exc.__cause__ or "") or "SIGINT"
        click.echo(f"mc: stopped by {name} before any result was complete: no report", err=True)
        code = ExitCode.INCOMPLETE
    except click.ClickException as exc:  # bad options: usage errors and the like
        if debug:
            traceback.print_exc()
        exc.show()
        code = ExitCode.CONFIG_ERROR
    except McError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"mc: error: {exc}", err=True)
        code = exc.exit_code
    except (AttributeError, ValueError, OSError) as exc:
        failure = stdout.failure(exc)
        if failure is None and not stdout.lost():
            raise
        if debug:
            traceback.print_exc()
        code = stdout.failed(failure) or stdout.closed()
    except MemoryError:  # outside a search (which reports it with its counts): loading, a report
        if debug:
            traceback.print_exc()
        click.echo(
            "mc: error: out of memory before the search or after it (loading the spec, writing"
            " a report): give mc more memory, or lower the constants",
            err=True,
        )
        code = ExitCode.ENGINE_ERROR
    sys.exit(int(code or 0))


def entry() -> NoReturn:
    """The `mc` command (the console script, `python -m checker`): `main`, then the exit
    without the interpreter's teardown, as TLC's System.exit: a search leaves millions of
    objects (states, caches, the fingerprint set's pages) that the teardown would free one by
    one, seconds after the report (3.5 s of a 26 s check of 655,200 states). What the
    teardown does that matters is done first: other threads joined, the atexit functions
    (temporary files, Spark's session) run, the standard streams flushed."""
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    else:  # (main always exits)
        code = 0
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except (OSError, ValueError):  # (main flushed them, and said so if it failed)
            pass
    os._exit(code)


def _spec_exited(exc: SystemExit) -> int:
    click.echo(
        f"mc: error: spec code ended the run with SystemExit({exc.code!r}), outside any"
        " action or invariant that mc could name; the run proves nothing",
        err=True,
    )
    return int(ExitCode.EVALUATION_ERROR)
