"""Resuming a run from its checkpoint (`mc check --resume DIR`), and starting one that writes
them (`--checkpoint DIR`): the run's policy over the checkpoint file of checker/checkpoint/.

A checkpoint's settings say which run it is: the spec file and every module it imports from its
own tree (by SHA-256 of their bytes), the constants, invariants, options and engine, and the
version of mc. Resuming is refused if any of them changed. The number of workers may differ:
the local engine's result is the same for any number. `begin` and `resume` are the policy a
run follows (checker.commands).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

from checker import __version__
from checker.checkpoint import (
    DEFAULT_EVERY,
    FILE_NAME,
    FINGERPRINT,
    CheckpointError,
    Checkpoints,
    Saved,
    Settings,
    prepare,
    read,
)
from checker.constants import typed
from checker.errors import ConfigError, SpecError
from checker.loader import build_model, import_root, import_spec_module, split_target
from checker.loader import spec_class as find_spec_class
from checker.model import Model
from checker.search.options import Options

# -- which run a checkpoint is -----------------------------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def spec_sources(model: Model) -> tuple[Path, dict[str, str]]:
    """The spec file and every module of its tree that it imports, directly or not (its own
    package, and siblings such as specs/ and invariants/ of this repository), with the SHA-256
    of each file: a change to any of them may change the state space."""
    spec_file = Path(model.path).resolve()
    root = import_root(spec_file)
    engine = Path(__file__).resolve().parent
    installed = [Path(p).resolve() for k, p in sysconfig.get_paths().items() if "lib" in k]
    found: dict[Path, None] = {}
    name = type(model.spec).__module__
    todo = [name] + [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        module = sys.modules.get(name)
        if name in seen or module is None:
            continue
        seen.add(name)
        file = getattr(module, "__file__", None)
        path = Path(file).resolve() if file else None
        if path is None or not path.is_relative_to(root) or path.is_relative_to(engine):
            continue
        if any(path.is_relative_to(folder) for folder in installed):
            continue
        found[path] = None
        todo += _imported(module, path)
    rest = sorted(p for p in found if p != spec_file)
    return root, {p.relative_to(root).as_posix(): _sha256(p) for p in [spec_file, *rest]}


def _imported(module: ModuleType, path: Path) -> list[str]:
    """The modules that `module`'s import statements name, with their parent packages (whose
    __init__ runs first)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    package = module.__package__ or ""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            try:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            except (ImportError, ValueError):
                continue
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names]  # submodules, if any
    parents = [".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)]
    return names + parents


def settings_of(model: Model, options: Options, engine: str, every: float | None) -> Settings:
    """The settings of a run of `model` with `options` on `engine` (`every`: seconds between
    checkpoints, None for the default)."""
    root, sources = spec_sources(model)
    return Settings(
        spec=model.path,
        spec_file=str(Path(model.path).resolve()),
        spec_name=model.name,
        root=str(root),
        sources=sources,
        constants=dict(model.constants),
        invariants=[inv.name for inv in model.invariants],
        deadlock=options.deadlock,
        max_depth=options.max_depth,
        max_states=options.max_states,
        engine=engine,
        workers=options.workers,
        every=float(DEFAULT_EVERY if every is None else every),
        symmetry=model.symmetry is not None,
        view=model.view is not None,
        mc_version=__version__,
        fingerprint=FINGERPRINT,
    )


# -- resuming ---------------------------------------------------------------------------------


# An option's value as the command line gives it and a checkpoint's settings record it
OptionValue = bool | int | str | None


def _shown(value: OptionValue) -> str:
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _short(digest: str) -> str:
    return digest[:16]


def _refuse(saved: Saved, why: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {saved.path}: {why}")


def resumed_model(
    saved: Saved,
    spec: str | None,
    defines: Mapping[str, str],
    invariants: Sequence[str],
) -> Model:
    """The model to resume `saved` with: its spec, unchanged, with its constants and
    invariants; `spec`, `defines` and `invariants`, if given, must agree with it."""
    s = saved.settings
    if s.mc_version != __version__ or s.fingerprint != FINGERPRINT:
        raise _refuse(
            saved,
            f"written by mc {s.mc_version} ({s.fingerprint} fingerprints); this is mc"
            f" {__version__} ({FINGERPRINT}): run the spec again without --resume",
        )
    spec_sha = next(iter(s.sources.values()))
    if spec is not None:
        spec, named = split_target(spec)
        if named is not None and named != s.spec_name:
            raise _refuse(saved, f"a checkpoint of {s.spec_name}, not of {named}")
    if spec is None:
        path = s.spec if Path(s.spec).resolve() == Path(s.spec_file) else s.spec_file
        if not Path(path).is_file():
            raise _refuse(saved, f"its spec {s.spec_file} no longer exists")
    else:
        path = spec
        file = Path(spec).resolve()
        moved = file.is_file() and _sha256(file) == spec_sha
        if file != Path(s.spec_file) and not moved:
            raise _refuse(saved, f"a checkpoint of {s.spec_name} ({s.spec}), not of {spec}")
    root = import_root(path)
    for index, (relative, then) in enumerate(s.sources.items()):
        what = "the spec file" if index == 0 else f"{relative} (imported by the spec)"
        try:
            now = _sha256(root / relative)
        except OSError:
            raise _refuse(saved, f"{what} is gone ({root / relative})") from None
        if now != then:
            raise _refuse(
                saved,
                f"{what} changed since the checkpoint (sha256 {_short(now)} vs"
                f" {_short(then)} in the checkpoint)",
            )
    module = import_spec_module(path)
    try:
        cls = find_spec_class(module, s.spec_name)
    except SpecError:
        other = find_spec_class(module).__name__
        raise _refuse(saved, f"a checkpoint of {s.spec_name}, not of {other}") from None
    given = typed(cls, defines)
    differ = [
        f"{n}={v!r} vs {s.constants.get(n)!r}" for n, v in given.items() if v != s.constants.get(n)
    ]
    if differ:
        raise _refuse(saved, f"constants differ: {', '.join(differ)} in the checkpoint")
    if invariants and list(invariants) != s.invariants:
        raise _refuse(
            saved,
            f"invariants differ: {', '.join(invariants)} vs {', '.join(s.invariants) or 'none'}"
            " in the checkpoint",
        )
    values = typed(cls, s.constants, command_line=False)
    return build_model(cls, path, values, s.invariants, s.symmetry, s.view)


def refuse_other_options(saved: Saved, given: Mapping[str, OptionValue]) -> None:
    """Options given on the command line of a resumed run (by their option name) must be
    the checkpoint's."""
    s = saved.settings
    recorded = {
        "--no-deadlock": not s.deadlock,
        "--max-depth": s.max_depth,
        "--max-states": s.max_states,
        "--engine": s.engine,
    }
    differ = [
        f"{k} {_shown(given[k])} vs {_shown(v)}"
        for k, v in recorded.items()
        if k in given and given[k] != v
    ]
    if differ:
        raise _refuse(saved, f"options differ: {', '.join(differ)} in the checkpoint")


def options_of(settings: Settings) -> Options:
    """The search options a checkpoint's run had (its memory budget is this run's to say)."""
    return Options(
        deadlock=settings.deadlock,
        max_depth=settings.max_depth,
        max_states=settings.max_states,
        workers=settings.workers,
    )


def begin(directory: str, settings: Settings) -> Checkpoints:
    """`--checkpoint DIR` for a new run: DIR must be writable and hold no checkpoint."""
    folder = prepare(directory, "--checkpoint")
    if (folder / FILE_NAME).exists():
        try:
            what = f"a checkpoint of {read(folder).describe()}"
        except ConfigError:
            what = "a checkpoint that cannot be read"
        raise ConfigError(
            f"--checkpoint {directory}: it holds {what}: go on with `mc check --resume"
            f" {directory}`, or delete {folder / FILE_NAME} to start over"
        )
    return Checkpoints(folder, settings)


def resume(
    directory: str,
    spec: str | None,
    defines: Mapping[str, str],
    invariants: Sequence[str],
    options: Options,
    engine: str,
    every: float | None,
    given: set[str],
) -> tuple[Model, Checkpoints]:
    """`--resume DIR`: the run its checkpoint holds, checked against the spec on disk and the
    options `given` on the command line (by flag); it saves its own checkpoints in DIR."""
    saved = read(directory)
    folder = prepare(directory, "--resume")
    model = resumed_model(saved, spec, defines, invariants)
    asked = {
        "--no-deadlock": not options.deadlock,
        "--max-depth": options.max_depth,
        "--max-states": options.max_states,
        "--engine": engine,
    }
    refuse_other_options(saved, {k: v for k, v in asked.items() if k in given})
    s = saved.settings
    workers = options.workers if "--workers" in given else s.workers
    note = ""
    if s.engine == "local" and s.workers != workers:
        note = f" (saved by --workers {s.workers}; any number gives the same result)"
    sys.stderr.write(f"mc: resuming {saved.describe()} from {saved.path}{note}\n")
    resumed = options_of(s)
    resumed = Options(resumed.deadlock, resumed.max_depth, resumed.max_states, workers)
    settings = settings_of(model, resumed, s.engine, s.every if every is None else every)
    return model, Checkpoints(folder, settings, saved)


def say_where(checkpoints: Checkpoints) -> None:
    """Say where a stopped run left its checkpoint."""
    written = checkpoints.written
    if written is not None:
        sys.stderr.write(
            f"mc: checkpoint at level {written.level} ({written.states:,} distinct states)"
            f" in {checkpoints.directory}: go on with `mc check --resume {checkpoints.directory}`\n"
        )
