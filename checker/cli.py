"""The `mc` command line. Exit codes follow TLC (see checker.errors.ExitCode)."""

from __future__ import annotations

import inspect
import sys
import traceback
from collections.abc import Sequence

import click

from checker import __version__, bfs
from checker.errors import ConfigError, ExitCode, McError
from checker.loader import load_model
from checker.model import Model
from checker.progress import Progress
from checker.reports import json_report, text
from checker.spec import constants_of
from checker.values import show


def _parse_defines(defines: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for item in defines:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"-D {item}: expected NAME=VALUE")
        values[name.strip()] = value
    return values


def _writable(path: str | None, option: str) -> None:
    """Fail before a long run, not after it, if an output file cannot be written."""
    if path is None:
        return
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot write: {exc.strerror}") from None


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
@click.argument("spec", type=click.Path(dir_okay=True))
@define_option
@click.option(
    "--invariant",
    "invariants",
    metavar="NAME",
    multiple=True,
    help="Check only this invariant (repeatable). Default: all the spec declares.",
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
def check(
    spec: str,
    defines: Sequence[str],
    invariants: Sequence[str],
    deadlock: bool,
    max_depth: int | None,
    max_states: int | None,
    json_path: str | None,
    progress_interval: float,
) -> int:
    """Explore every reachable state of SPEC and check its invariants."""
    _writable(json_path, "--json")
    model = load_model(spec, _parse_defines(defines), invariants or None)
    progress = Progress(interval=progress_interval, bar=None if progress_interval > 0 else False)
    options = bfs.Options(deadlock=deadlock, max_depth=max_depth, max_states=max_states)
    result = bfs.check(model, options, progress if progress_interval > 0 else None)
    click.echo(text.render(result), nl=False)
    if json_path:
        json_report.write(result, json_path)
    return int(result.exit_code)


@cli.command("list")
@click.argument("spec", type=click.Path(dir_okay=True))
@define_option
def list_spec(spec: str, defines: Sequence[str]) -> int:
    """Show SPEC's constants, actions (with parameter domains) and invariants."""
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
        if act.static_bindings is not None:
            domains = [
                f"{p} in {show(tuple(dict.fromkeys(b[i] for b in act.static_bindings)))}"
                for i, p in enumerate(act.params)
            ]
        else:
            domains = [
                f"{p} in {'(per state)' if callable(d) else show(d)}"
                for p, d in zip(act.params, act.dynamic)
            ]
        doc = _first_line(act.fn)
        signature = f"{act.name}({', '.join(domains)})"
        lines.append(f"  {signature}" + (f"  {doc}" if doc else ""))
    lines += ["", "Invariants:"]
    for inv in model.invariants:
        doc = _first_line(inv.fn)
        lines.append(f"  {inv.name}" + (f"  {doc}" if doc else ""))
    if not model.invariants:
        lines.append("  (none)")
    return "\n".join(lines) + "\n"


def _first_line(fn: object) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.splitlines()[0] if doc else ""


def main(argv: Sequence[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
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
