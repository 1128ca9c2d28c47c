"""The `mc` command line. Exit codes follow TLC (see checker.errors.ExitCode)."""

from __future__ import annotations

import inspect
import signal
import sys
import traceback
from collections.abc import Sequence

import click

from checker import __version__, batch, bfs, liveness, spark_engine
from checker.errors import ConfigError, ExitCode, McError, SpecError
from checker.graph import DEFAULT_MAX_STATES, state_space_graph
from checker.loader import NoSpecError, import_spec_module, load_model, spec_class
from checker.model import Model
from checker.progress import Progress
from checker.reports import dot, graphviz, mermaid, outputs, text
from checker.reports.sarif import Checked
from checker.result import CheckResult, NotChecked
from checker.spec import constants_of, fairness_of, invariants_of, properties_of
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mc")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """mc: an explicit-state model checker for protocol specs written in Python."""
    ctx.obj = {"debug": debug}


@cli.command()
@click.argument("specs", metavar="SPEC...", nargs=-1, required=True, type=click.Path())
@define_option
@click.option(
    "--invariant",
    "invariants",
    metavar="NAME",
    multiple=True,
    help="Check only this invariant (repeatable). Default: all the spec declares.",
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
@click.option("--deadlock", is_flag=True, help="Report states with no enabled action (exit 11).")
@click.option("--max-depth", type=click.IntRange(min=1), help="Explore states up to this depth.")
@click.option(
    "--max-states", type=click.IntRange(min=1), help="Stop after this many distinct states."
)
@click.option("--json", "json_path", metavar="PATH", help="Also write the result as JSON.")
@click.option(
    "--progress",
    "progress_interval",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between progress lines on stderr (0: none). A terminal gets a live bar.",
)
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
    "--spark-conf",
    "spark_conf",
    metavar="KEY=VALUE",
    multiple=True,
    help="A Spark setting for --engine spark (repeatable).",
)
@outputs.check_options
def check(
    specs: Sequence[str],
    defines: Sequence[str],
    invariants: Sequence[str],
    properties: Sequence[str],
    no_liveness: bool,
    deadlock: bool,
    max_depth: int | None,
    max_states: int | None,
    json_path: str | None,
    progress_interval: float,
    engine: str,
    master: str | None,
    remote: str | None,
    spark_conf: Sequence[str],
    **report_paths: str | None,
) -> int:
    """Explore every reachable state of each SPEC and check its invariants, then its temporal
    properties under its fairness.

    SPEC is a spec file, or a folder: every spec below it is checked, and the exit code is
    the worst of theirs (150 > 151 > 75 > 12 > 13 > 11 > 152 > 0; see docs/ci.md).
    """
    if no_liveness and properties:
        raise ConfigError("--property and --no-liveness exclude each other")
    wanted = outputs.Outputs(json_path=json_path, **report_paths)
    wanted.validate()
    files = batch.spec_files(specs)
    options = bfs.Options(deadlock=deadlock, max_depth=max_depth, max_states=max_states)
    constants = _parse_defines(defines)
    explorer = _explorer(engine, master, remote, spark_conf)
    try:
        if len(specs) == 1 and files and files[0].explicit:  # one spec file: errors end the run
            model = load_model(files[0].path, constants, invariants or None)
            props = [] if no_liveness else liveness.select(model, properties or None)
            result = _explore(model, options, progress_interval, explorer, props)
            click.echo(text.render(result), nl=False)
            wanted.write([Checked(result, model)], multi=False)
            return int(result.exit_code)
        selection = None if no_liveness else properties
        runs = _check_many(
            files, constants, invariants, selection, options, progress_interval, explorer
        )
    finally:
        if explorer is not None:
            explorer.close()
    wanted.write(runs, multi=True)
    return batch.worst(int(c.result.exit_code) for c in runs)


def _explorer(
    engine: str, master: str | None, remote: str | None, spark_conf: Sequence[str]
) -> spark_engine.Explorer | None:
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
    conf = _parse_pairs(spark_conf, "--spark-conf", "KEY=VALUE")
    return spark_engine.Explorer(master=master, remote=remote, conf=conf)


def _explore(
    model: Model,
    options: bfs.Options,
    progress_interval: float,
    explorer: spark_engine.Explorer | None = None,
    properties: Sequence[liveness.Property] = (),
) -> CheckResult:
    """The invariants on the chosen engine, then (if they hold) the temporal properties."""
    progress = Progress(interval=progress_interval) if progress_interval > 0 else None
    if explorer is not None:
        result = explorer.check(model, options, progress)
    else:
        result = bfs.check(model, options, progress)
    progress = Progress(interval=progress_interval) if progress_interval > 0 else None
    return liveness.check(model, result, properties, progress)


def _check_many(
    files: Sequence[batch.SpecFile],
    constants: dict[str, str],
    invariants: Sequence[str],
    properties: Sequence[str] | None,
    options: bfs.Options,
    progress_interval: float,
    explorer: spark_engine.Explorer | None = None,
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
            cls = spec_class(import_spec_module(file.path))
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
        chosen = [n for n in properties or () if n in _properties_of(cls)]
        declared |= set(mine) | set(selected)
        declared_properties |= set(chosen)
        if (invariants or properties) and not (selected or chosen):
            click.echo(
                f"mc: note: {file.path} has no --invariant or --property named: skipped",
                err=True,
            )
            continue
        try:
            model = load_model(file.path, mine, selected if invariants else None)
            if properties is None:
                loaded.append((model, []))
            else:
                loaded.append((model, liveness.select(model, chosen if properties else None)))
        except McError as exc:
            loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
    unknown = [f"-D {n}" for n in constants if n not in declared]
    unknown += [f"--invariant {n}" for n in invariants if n not in declared]
    unknown += [f"--property {n}" for n in properties or () if n not in declared_properties]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: no spec of this run declares it")
    if not loaded:
        raise SpecError(f"{', '.join(str(f) for f in files) or 'no file'}: no spec to check")
    runs: list[Checked] = []
    for item in loaded:
        if isinstance(item, NotChecked):
            click.echo(f"mc: error: {item.message}", err=True)
            runs.append(Checked(item))
            continue
        model, props = item
        try:
            result = _explore(model, options, progress_interval, explorer, props)
        except McError as exc:
            click.echo(f"mc: error: {exc}", err=True)
            runs.append(Checked(NotChecked(model.path, str(exc), exc.exit_code)))
            continue
        click.echo(text.render(result))
        runs.append(Checked(result, model))
    click.echo(batch.summary([c.result for c in runs]), nl=False)
    return runs


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
        if path:
            outputs.check_writable(path, f"--{name}")
    for fmt in ("svg", "png"):
        if paths[fmt]:
            graphviz.require_dot(f"--{fmt}")
    model = load_model(spec, _parse_defines(defines))
    g = state_space_graph(model, max_states)
    dot_text = dot.to_dot(g, model.name)
    if dot_path:
        dot.write(g, dot_path, model.name)
    for fmt in ("svg", "png"):
        if paths[fmt]:
            graphviz.render(dot_text, fmt, paths[fmt])  # type: ignore[arg-type]
    if mermaid_path:
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
        lines.append(f"  {signature}" + (f"  {doc}" if doc else ""))
    lines += ["", "Invariants:"]
    for inv in model.invariants:
        doc = _first_line(inv.fn)
        lines.append(f"  {inv.name}" + (f"  {doc}" if doc else ""))
    if not model.invariants:
        lines.append("  (none)")
    lines += ["", "Temporal properties:"]
    for prop in liveness.select(model):
        member = getattr(type(model.spec), prop.name)
        doc = _first_line(member)
        lines.append(f"  {prop.name}: {prop.formula}" + (f"  {doc}" if doc else ""))
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


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops a run like Ctrl-C: partial counts, exit 152


def main(argv: Sequence[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = cli.main(args=argv, prog_name="mc", standalone_mode=False)
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
