"""What each `mc` command does, once its options are read (checker.cli): `check_files` is a
run of `mc check` over its SPEC arguments (one spec file, a batch of them, or a checkpoint's
spec), `simulate`, `draw` (`mc graph`), `describe` (`mc list`) and `ablate` (`mc ablate`: its
table printed, its reports written). Each spec is loaded and
checked by checker.run; nothing here knows of click.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING

from checker import checkpoint, resuming, run, simulation, supervisor
from checker.ablation import Row, Settings
from checker.batch import SpecFile, spec_files, summary, worst
from checker.deadline import Loading
from checker.errors import ConfigError, ExitCode, McError, SpecError
from checker.loader import NoSpecError, load_model, load_spec_class
from checker.model import Model
from checker.reports import dot, graphviz, listing, mermaid, outputs, text
from checker.reports.sarif import Checked
from checker.result import NotChecked
from checker.spec import constants_of, invariants_of, properties_of
from checker.values import count

if TYPE_CHECKING:  # the Spark engine: imported where it runs
    from checker import spark


class NoSpecGiven(ConfigError):
    """`mc check` with no SPEC, and no checkpoint to take it from."""


def check_files(
    specs: Sequence[str],
    defines: Mapping[str, str],
    config: run.Config,
    wanted: outputs.Outputs,
    given: Set[str] = frozenset(),
) -> int:
    """`mc check SPEC...`: one spec file (its errors end the run), a batch of them (each is
    reported, then a summary), or the spec of a checkpoint; the reports `wanted`, written once
    the run ends; the run's exit code. `given`: the search options given on the command line
    (by flag), which a resumed run must agree with."""
    saved = [
        str(Path(d) / checkpoint.FILE_NAME)
        for d in (config.checkpoint, config.resume)
        if d is not None
    ]
    wanted.validate([*specs, *saved])
    saving = None
    files: list[SpecFile] = []
    model = None
    if config.checkpoint or config.resume or config.checkpoint_every is not None:
        model, saving = _checkpoints(specs, defines, config, given)
        options = resuming.options_of(saving.settings)
        options = dataclasses.replace(options, live_bytes=config.options.live_bytes)
        config = dataclasses.replace(config, options=options, engine=saving.settings.engine)
    elif not specs:
        raise NoSpecGiven("Missing argument 'SPEC...'.")
    else:
        files = spec_files(specs)
        if not files:
            raise SpecError(f"{', '.join(specs)}: no spec to check (no .py file in it)")
    if config.options.workers > 1 and config.engine != "local":
        raise ConfigError("--workers is for --engine local (Spark has its own executors)")
    config = usable_workers(config)
    with run.engine(config) as spark_engine:
        if saving is not None:
            assert model is not None
            wanted.refuse_modules()
            run.check_witness(model, config.witness)
            loaded = run.Loaded(model, run.properties_for(model, config))
            result = run.check(loaded, config, spark_engine, saving)
            resuming.say_where(saving)
            return run.report(result, model, wanted)
        if len(specs) == 1 and files and files[0].explicit:  # one spec file: errors end the run
            invariants = config.invariants or None
            loaded = run.load(files[0].path, defines, config, invariants=invariants)
            wanted.refuse_modules()
            run.check_witness(loaded.model, config.witness)
            return run.report(run.check(loaded, config, spark_engine), loaded.model, wanted)
        runs = check_many(files, defines, config, spark_engine, wanted)
    wanted.write(runs, multi=True)
    return worst(int(c.result.exit_code) for c in runs)


def usable_workers(config: run.Config) -> run.Config:
    """`config` with at most as many worker processes as the CPUs this process may use (two
    at least): more would only share them, each holding its own states (`--workers 1000`
    used to start a thousand processes for a spec of four states)."""
    cpus = usable_cpus()
    usable = max(2, cpus)
    if config.options.workers <= usable:
        return config
    run.note(
        f"--workers {config.options.workers}: this machine lets mc use {cpus} CPUs; it runs"
        f" {usable} worker processes (the result is the same for any number)"
    )
    options = dataclasses.replace(config.options, workers=usable)
    return dataclasses.replace(config, options=options)


def _checkpoints(
    specs: Sequence[str], defines: Mapping[str, str], config: run.Config, given: Set[str]
) -> tuple[Model, checkpoint.Checkpoints]:
    """The model of a run with --checkpoint or --resume, and where it saves checkpoints."""
    if config.resume is None and config.checkpoint is None:
        raise ConfigError("--checkpoint-every needs --checkpoint DIR or --resume DIR")
    if config.resume is not None and config.checkpoint is not None:
        raise ConfigError("--resume DIR saves its checkpoints in DIR: leave out --checkpoint")
    invariants = [] if config.no_invariants else list(config.invariants)
    if config.resume is not None:
        if len(specs) > 1:
            raise ConfigError("--resume DIR goes on with the one spec of its checkpoint")
        return resuming.resume(
            config.resume,
            specs[0] if specs else None,
            defines,
            invariants,
            config.options,
            config.engine,
            config.checkpoint_every,
            set(given),
        )
    assert config.checkpoint is not None
    if len(specs) != 1 or Path(specs[0]).is_dir():
        raise ConfigError("--checkpoint is for a run of one spec file")
    model = run.load(specs[0], defines, config, invariants=invariants or None).model
    settings = resuming.settings_of(model, config.options, config.engine, config.checkpoint_every)
    return model, resuming.begin(config.checkpoint, settings)


def check_many(
    files: Sequence[SpecFile],
    defines: Mapping[str, str],
    config: run.Config,
    spark_engine: spark.SparkEngine | None = None,
    wanted: outputs.Outputs | None = None,
) -> list[Checked]:
    """Load every spec first (so a misspelt -D fails before hours of checking), then check
    them one by one. -D, --invariant and --property apply to the specs that declare the name
    (a spec that declares none of the --invariant and --property names is skipped); a name
    no spec declares is an error. A spec that fails to load is reported and the run goes
    on."""
    loaded: list[run.Loaded | NotChecked] = []
    declared: set[str] = set()
    declared_properties: set[str] = set()
    invariants = config.invariants
    for file in files:
        try:
            with Loading(config.timeout, file.path):
                cls, _ = load_spec_class(file.path)
        except NoSpecError as exc:
            if file.explicit:
                loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
            else:
                run.note(f"{file.path} defines no spec: skipped")
            continue
        except McError as exc:
            loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
            continue
        mine = {k: v for k, v in defines.items() if k in constants_of(cls)}
        selected = [n for n in invariants if n in invariants_of(cls)]
        # `name(b=1)` names one binding of the property `name`
        chosen = [n for n in config.properties or () if n.split("(")[0] in _properties_of(cls)]
        declared |= set(mine) | set(selected)
        declared_properties |= set(chosen)
        if (invariants or config.properties) and not (selected or chosen):
            run.note(f"{file.path} has no --invariant or --property named: skipped")
            continue
        try:
            names = chosen if config.properties else None
            loaded.append(
                run.load(file.path, mine, config, invariants=selected or None, properties=names)
            )
        except McError as exc:
            loaded.append(NotChecked(file.path, str(exc), exc.exit_code))
    unknown = [f"-D {n}" for n in defines if n not in declared]
    unknown += [f"--invariant {n}" for n in invariants if n not in declared]
    unknown += [f"--property {n}" for n in config.properties or () if n not in declared_properties]
    if config.witness is not None and not any(
        config.witness in [r.name for r in item.model.reachables]
        for item in loaded
        if not isinstance(item, NotChecked)
    ):
        unknown.append(f"--witness {config.witness}")
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: no spec of this run declares it")
    if not loaded:
        raise SpecError(f"{', '.join(str(f) for f in files)}: no spec to check")
    if wanted is not None:
        wanted.refuse_modules()
    runs: list[Checked] = []
    for item in loaded:
        if isinstance(item, NotChecked):
            sys.stderr.write(f"mc: error: {item.message}\n")
            runs.append(Checked(item))
            continue
        try:
            result = run.check(item, config, spark_engine)
        except McError as exc:
            sys.stderr.write(f"mc: error: {exc}\n")
            runs.append(Checked(NotChecked(item.model.path, str(exc), exc.exit_code)))
            continue
        sys.stdout.write(text.render(result) + "\n")
        runs.append(Checked(result, item.model))
    sys.stdout.write(summary([c.result for c in runs]))
    return runs


def _properties_of(cls: type) -> dict[str, object]:
    """The spec class's temporal properties; a bad declaration is reported when it loads."""
    try:
        return properties_of(cls)
    except TypeError:
        return {}


def simulate(
    path: str,
    defines: Mapping[str, str],
    seed: int | None,
    walks: Callable[[int], simulation.Options],
    *,
    invariants: Sequence[str] | None,
    progress: float,
    wanted: outputs.Outputs,
) -> int:
    """`mc simulate`: random walks (`walks(seed)`: their options) through the spec at `path`,
    reported as `mc check` reports; `seed` None: a fresh one, said first. The exit code."""
    wanted.validate([path])
    model = load_model(path, defines, invariants)
    wanted.refuse_modules()
    seed = simulation.new_seed() if seed is None else seed
    # On stderr at once, so that even a killed run can be repeated; the report has it too.
    sys.stderr.write(f"mc: seed {seed}\n")
    sys.stderr.flush()
    result = simulation.simulate(model, walks(seed), run.progress(progress))
    return run.report(result, model, wanted)


def draw(
    path: str, defines: Mapping[str, str], max_states: int, paths: Mapping[str, str | None]
) -> int:
    """`mc graph`: the state space of the spec at `path` drawn to `paths` (format -> PATH:
    dot, svg, png, mermaid), or as DOT on stdout if none is given."""
    for name, target in paths.items():
        if target == "":
            raise ConfigError(f"--{name} '': an empty path; give the file to write")
        if target:
            outputs.check_writable(target, f"--{name}")
            outputs.refuse_input(target, f"--{name}", [path])
    for fmt in ("svg", "png"):
        if paths.get(fmt):
            graphviz.require_dot(f"--{fmt}")
    model = load_model(path, defines)
    for name, target in paths.items():
        if target:
            outputs.refuse_module(target, f"--{name}")
    g = run.state_space_graph(model, max_states)
    dot_text = dot.to_dot(g, model.name)
    if paths.get("dot"):
        with outputs.writing("--dot", paths["dot"]) as written:  # type: ignore[arg-type]
            dot.write(g, written, model.name)
    for fmt in ("svg", "png"):
        target = paths.get(fmt)
        if target:
            with outputs.writing(f"--{fmt}", target) as written:
                graphviz.render(dot_text, fmt, written)
    if paths.get("mermaid"):
        with outputs.writing("--mermaid", paths["mermaid"]) as written:  # type: ignore[arg-type]
            mermaid.write(mermaid.flowchart(g), written)
    if not any(paths.values()):
        sys.stdout.write(dot_text)
    else:
        edges = g.number_of_edges()
        sys.stderr.write(f"{model.name}: {len(g):,} states, {edges:,} transitions.\n")
    return 0


def describe(path: str, defines: Mapping[str, str]) -> str:
    """`mc list`: what the spec at `path` declares, as text (checker.reports.listing)."""
    return listing.describe(load_model(path, defines))


def ablate(
    spec: str,
    defines: Mapping[str, str],
    *,
    rules: Sequence[str],
    pairs: bool,
    settings: Settings,
    workers: int | None,
    memory: int | None,
    spark_engine: spark.SparkEngine | None,
    paths: Mapping[str, str | None],
    progress: float,
) -> int:
    """`mc ablate`: run the ablation (`workers` rows side by side, None: as many as the CPUs
    this process may use; within `memory` bytes, None: half of the machine's), write the
    reports asked for (`paths`: report name -> PATH), print its table; the exit code: 152
    interrupted (the table of the rows finished), 153 a row killed, else whether every check
    with every rule on held."""
    for name, path in paths.items():
        if path == "":
            raise ConfigError(f"--{name} '': an empty path; give the file to write")
    wanted = {name: path for name, path in paths.items() if path}
    for i, (name, path) in enumerate(wanted.items()):
        outputs.check_writable(path, f"--{name}")
        outputs.refuse_input(path, f"--{name}", [spec])
        for other, other_path in list(wanted.items())[:i]:
            if outputs.same_file(path, other_path):
                raise ConfigError(
                    f"--{other} {other_path} and --{name} {path}: the same file; each report"
                    " needs its own"
                )
    report_dir = _cells_folder(wanted["html"]) if "html" in wanted else None
    try:
        load_spec_class(spec)  # its modules loaded: no report may overwrite one
    except KeyboardInterrupt as exc:
        raise Stopped(f"{spec}: stopped by {exc or 'SIGINT'} while loading the spec") from None
    for name, path in wanted.items():
        outputs.refuse_module(path, f"--{name}")
    if workers is None:
        workers = usable_cpus() if spark_engine is None else 1
    if memory is None:
        memory = default_memory()

    def said(row: Row) -> None:
        if progress > 0:
            sys.stderr.write(f"mc: ablate: {row.name}: {_row_said(row)}\n")
            sys.stderr.flush()

    def progress_line(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    # mc starts without the ablation's modules (tests/test_startup.py): imported when it runs
    from checker.ablate import rows as ablation
    from checker.reports import ablation as ablation_reports

    with supervisor.signals_restored():  # a second Ctrl-C ends at once (checker.supervisor)
        try:
            result = ablation.ablate(
                spec,
                defines,
                rules=rules,
                pairs=pairs,
                settings=settings,
                workers=workers,
                memory=memory,
                spark_engine=spark_engine,
                report_dir=report_dir,
                on_row=said,
                progress=progress_line,
                progress_every=progress,
            )
        except KeyboardInterrupt as exc:  # while the spec loaded, before any row
            why = f"{spec}: stopped by {exc or 'SIGINT'} before any row was checked"
            raise Stopped(why) from None
        for note in sorted({n for row in result.rows for n in row.notes}):
            sys.stderr.write(note + "\n")
        if result.interrupted is not None:
            sys.stderr.write(
                f"mc: ablate: stopped by {result.interrupted}: the table has the"
                f" {len(result.rows)} of {result.planned} rows that had finished (exit 152)\n"
            )
        for name, path in wanted.items():
            text_of = ablation_reports.WRITERS[name]
            with outputs.writing(f"--{name}", path) as written, open(written, "w") as out:
                out.write(text_of(result))
        sys.stdout.write(ablation_reports.text(result))
        sys.stdout.flush()
    return result.exit_code


class Stopped(McError):
    """Ctrl-C or SIGTERM before any result (loading the spec): nothing to report (152)."""

    exit_code = ExitCode.INCOMPLETE


def _row_said(row: Row) -> str:
    """What a row's line of progress says once it ended."""
    checks = count(row.checks, "check")
    if row.lost is not None:
        return f"{row.lost} ({checks}, {row.seconds:.2f} s)"
    broken = ", ".join(row.broken)
    if row.stopped is not None:
        broken = f"{broken}; then " if broken else ""
        return f"{broken}stopped: {row.stopped} ({checks}, {row.seconds:.2f} s)"
    return f"{broken or 'nothing breaks'} ({checks}, {row.seconds:.2f} s)"


def _cells_folder(page: str) -> str | None:
    """Where the counterexamples' reports of `--html PAGE` go: PAGE's name with `.cells`,
    beside it, made by the first one. None when PAGE is no regular file (a device such as
    /dev/full, a pipe): nothing is written outside the paths named."""
    if os.path.exists(page) and not os.path.isfile(page):
        return None
    folder = os.path.splitext(os.path.abspath(page))[0] + ".cells"
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ConfigError(
            f"--html {page}: its counterexamples' reports go in {folder}, which exists and is"
            " not a folder; move it, or write the page elsewhere"
        )
    return folder


def usable_cpus() -> int:
    """The CPUs this process may use: those its affinity allows, within the CPU quota of its
    cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), one at least."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, max(1, int(quota)))
    return max(1, cpus)


CGROUP = Path("/sys/fs/cgroup")


def cgroup_cpu_quota(root: Path = CGROUP) -> float | None:
    """The CPUs the cgroup's quota allows (2.5 for 250ms per 100ms), None without a quota."""
    try:
        v2 = (root / "cpu.max").read_text().split()
        if v2 and v2[0] != "max":
            return int(v2[0]) / int(v2[1])
        if v2:
            return None
    except (OSError, ValueError, IndexError):
        pass
    for folder in (root / "cpu", root / "cpu,cpuacct", root):
        try:
            quota = int((folder / "cpu.cfs_quota_us").read_text())
            period = int((folder / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        return quota / period if quota > 0 and period > 0 else None
    return None


def default_memory() -> int:
    """mc ablate's default --memory: half of the machine's memory, or of its cgroup's limit
    if lower (bytes)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 4 << 30
    for limit in (CGROUP / "memory.max", CGROUP / "memory" / "memory.limit_in_bytes"):
        try:
            text = limit.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            memory = min(memory, int(text))
    return max(1 << 28, memory // 2)
