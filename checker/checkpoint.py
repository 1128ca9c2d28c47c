"""Checkpoints of a long `mc check` run (`--checkpoint DIR`) and resuming one (`--resume DIR`).

An engine hands over its search as it stands at the start of a level (every fingerprint, the
parent links, the level's states, the counts: what it needs to go on from there) as arrays and
plain values; this module writes them with the run's settings to DIR/checkpoint.mc. The file is
written under a temporary name in DIR and renamed over the old one, so that a crash at any
moment leaves the old checkpoint or the new one, whole.

The file is a fixed frame (magic, body length, SHA-256 of the body) and a msgpack body, never
pickle: a map (format version, settings, counts, and the name, type and length of each array),
then each array's bytes in pieces of at most PIECE bytes. Reading checks the length and the
checksum before decoding anything, then decodes with size limits and checks every field, so a
truncated or modified file is a clear error ("corrupt"), never a traceback or code execution.

Resuming is refused if the spec file or a module it imports from its own tree changed (by
SHA-256 of their bytes), if the constants, invariants, options or engine differ, or if another
version of mc wrote the checkpoint. The number of workers may differ: the local engine's result
is the same for any number. `begin` and `resume` are the policy a run follows (checker.run).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import os
import struct
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import msgpack
import numpy as np

from checker import __version__
from checker.constants import typed
from checker.errors import ConfigError, SpecError
from checker.loader import build_model, import_root, import_spec_module, split_target
from checker.loader import spec_class as find_spec_class
from checker.model import Model
from checker.search.options import Options

FILE_NAME = "checkpoint.mc"
FORMAT = 3  # of the body; a reader refuses other versions (2: reachability properties; 3: view)
MAGIC = b"\x89mc-checkpoint\n\x00"
_FRAME = struct.Struct(">16sQ32s")  # magic, body length, SHA-256 of the body
PIECE = 16 << 20  # bytes of an array per msgpack object
DEFAULT_EVERY = 600.0  # seconds between checkpoints
FINGERPRINT = "xxh3_64"  # checker.values.encoding.fingerprint, over its encoding
_DTYPES = ("uint64", "int64", "uint32", "int32", "uint16", "uint8")
_TEMP_PREFIX = ".checkpoint-"


class CheckpointError(ConfigError):
    """A checkpoint that cannot be used: corrupt, or of another spec or other settings (151)."""


@dataclass(frozen=True)
class Settings:
    """What a run was: a checkpoint resumes only the same run."""

    spec: str  # the spec's path as given
    spec_file: str  # its absolute path
    spec_name: str  # its Spec class
    root: str  # the folder it is imported from; `sources` are relative to it
    sources: dict[str, str]  # the spec file (first) and the modules it uses -> SHA-256
    constants: dict[str, Any]  # all of them, typed
    invariants: list[str]
    deadlock: bool
    max_depth: int | None
    max_states: int | None
    engine: str  # local | spark
    workers: int  # informational: any number resumes
    every: float  # seconds between checkpoints; a resumed run keeps it unless told otherwise
    symmetry: bool  # states identified up to the spec's symmetry (a different state space)
    view: bool  # states identified by the spec's view (likewise)
    mc_version: str
    fingerprint: str

    @classmethod
    def of(
        cls,
        model: Model,
        *,
        deadlock: bool,
        max_depth: int | None,
        max_states: int | None,
        engine: str,
        workers: int,
        every: float,
    ) -> Settings:
        root, sources = spec_sources(model)
        return cls(
            spec=model.path,
            spec_file=str(Path(model.path).resolve()),
            spec_name=model.name,
            root=str(root),
            sources=sources,
            constants=dict(model.constants),
            invariants=[inv.name for inv in model.invariants],
            deadlock=deadlock,
            max_depth=max_depth,
            max_states=max_states,
            engine=engine,
            workers=workers,
            every=float(every),
            symmetry=model.symmetry is not None,
            view=model.view is not None,
            mc_version=__version__,
            fingerprint=FINGERPRINT,
        )


# -- which files make the spec -------------------------------------------------------------


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


# -- writing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Array:
    """An array to write: its element type, its length and its bytes in pieces (so that a big
    one is never copied whole)."""

    dtype: str
    count: int
    pieces: Iterable[bytes]

    @classmethod
    def of(cls, values: np.ndarray | Any, dtype: str, count: int | None = None) -> Array:
        """The first `count` elements of a numpy array or an array.array."""
        count = len(values) if count is None else count
        step = max(1, PIECE // np.dtype(dtype).itemsize)
        pieces = (
            np.asarray(values[i : min(i + step, count)], dtype=dtype).tobytes()
            for i in range(0, count, step)
        )
        return cls(dtype, count, pieces)


@dataclass(frozen=True)
class Written:
    """The last checkpoint this run wrote."""

    path: Path
    level: int
    states: int


class Checkpoints:
    """Where and how often a run writes its checkpoints, and the one it resumes, if any."""

    def __init__(
        self, directory: str | os.PathLike[str], settings: Settings, resumed: Saved | None = None
    ) -> None:
        self.directory = Path(directory)
        self.path = self.directory / FILE_NAME
        self.every = settings.every
        self.settings = settings
        self.resumed = resumed
        self.written: Written | None = None
        self._last = time.monotonic()

    def due(self) -> bool:
        return time.monotonic() - self._last >= self.every

    def write(self, counts: Mapping[str, Any], arrays: Mapping[str, Array]) -> Written | None:
        """Write a checkpoint (`counts` holds `level` and `states`, the number of distinct
        states); a failure is reported on stderr and the run goes on with the previous one."""
        try:
            self._write(counts, arrays)
        except OSError as exc:
            sys.stderr.write(f"mc: warning: checkpoint {self.path} not written: {exc}\n")
            return None
        finally:
            self._last = time.monotonic()
        self.written = Written(self.path, int(counts["level"]), int(counts["states"]))
        return self.written

    def _write(self, counts: Mapping[str, Any], arrays: Mapping[str, Array]) -> None:
        header = {
            "format": FORMAT,
            "settings": asdict(self.settings),
            "counts": dict(counts),
            "arrays": [[name, a.dtype, a.count] for name, a in arrays.items()],
        }
        packer = msgpack.Packer(use_bin_type=True)
        self.directory.mkdir(parents=True, exist_ok=True)
        descriptor, temp = tempfile.mkstemp(dir=self.directory, prefix=_TEMP_PREFIX, suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(bytes(_FRAME.size))  # filled in once the body is written
                digest, length = hashlib.sha256(), 0
                for piece in _body(header, arrays, packer):
                    digest.update(piece)
                    file.write(piece)
                    length += len(piece)
                file.seek(0)
                file.write(_FRAME.pack(MAGIC, length, digest.digest()))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def remove(self) -> None:
        """The search ended by itself: its checkpoint is of no more use."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.written = None


def _body(header: dict[str, Any], arrays: Mapping[str, Array], packer: Any) -> Iterator[bytes]:
    yield packer.pack(header)
    for name, array in arrays.items():
        expected = array.count * np.dtype(array.dtype).itemsize
        written = 0
        for piece in array.pieces:
            written += len(piece)
            yield packer.pack(piece)
        if written != expected:  # an engine bug, not a user error
            raise RuntimeError(f"checkpoint array {name}: {written} bytes, expected {expected}")


def prepare(directory: str | os.PathLike[str], option: str) -> Path:
    """Check before the run that checkpoints can be written to `directory`; remove the
    temporary files of a run killed while writing one."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=_TEMP_PREFIX):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {directory}: cannot write: {exc.strerror or exc}") from None
    for stale in folder.glob(f"{_TEMP_PREFIX}*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()
    return folder


# -- reading -------------------------------------------------------------------------------


class Saved:
    """A checkpoint read back: settings, counts and arrays, every access checked."""

    def __init__(
        self,
        path: Path,
        settings: Settings,
        counts: dict[str, Any],
        arrays: dict[str, np.ndarray],
    ) -> None:
        self.path = path
        self.settings = settings
        self.counts = counts
        self.arrays = arrays

    def corrupt(self, why: str) -> CheckpointError:
        return _corrupt(self.path, why)

    def number(self, name: str, low: int = 0) -> int:
        value = self.counts.get(name)
        if type(value) is not int or value < low:
            raise self.corrupt(f"count {name!r} is {value!r}")
        return value

    def numbers(self, name: str, length: int) -> list[int]:
        values = self.counts.get(name)
        if (
            not isinstance(values, list)
            or len(values) != length
            or not all(type(v) is int and v >= 0 for v in values)
        ):
            raise self.corrupt(f"counts {name!r} are not {length} numbers")
        return values

    def reached(self, names: Sequence[str], states: int | None) -> dict[str, tuple[int, int]]:
        """The reachability properties reached before the level: name -> (the first state
        satisfying it, by number below `states` (local engine) or by fingerprint (Spark,
        `states` None), and its depth)."""
        raw = self.counts.get("reached", {})
        if not isinstance(raw, dict):
            raise self.corrupt("counts 'reached' is not a map")
        out = {}
        for name, where in raw.items():
            ok = isinstance(where, list) and len(where) == 2
            if not ok or name not in names or not all(isinstance(v, int) for v in where):
                raise self.corrupt(f"counts 'reached' has a bad entry for {name!r}")
            if states is not None and not 0 <= where[0] < states:
                raise self.corrupt(f"counts 'reached': {name!r} at state {where[0]} of {states}")
            out[name] = (where[0], where[1])
        return out

    def array(self, name: str, dtype: str) -> np.ndarray:
        values = self.arrays.get(name)
        if values is None or values.dtype != np.dtype(dtype):
            raise self.corrupt(f"no {dtype} array {name!r}")
        return values

    def describe(self) -> str:
        s = self.settings
        level, states = self.number("level", 1), self.number("states")
        return f"{s.spec_name} ({s.spec}) at level {level} ({states:,} distinct states)"


def read(directory: str | os.PathLike[str]) -> Saved:
    """The checkpoint in `directory`, checked whole; CheckpointError if it is missing or
    corrupt."""
    path = Path(directory) / FILE_NAME
    try:
        with path.open("rb") as file:
            return _read(path, file)
    except FileNotFoundError:
        raise CheckpointError(f"--resume {directory}: no checkpoint there ({path})") from None
    except IsADirectoryError:
        raise CheckpointError(f"checkpoint {path}: is a folder") from None
    except OSError as exc:
        raise CheckpointError(f"checkpoint {path}: cannot read: {exc.strerror or exc}") from None


def _corrupt(path: Path, why: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {path}: corrupt ({why})")


def _read(path: Path, file: IO[bytes]) -> Saved:
    frame = file.read(_FRAME.size)
    if len(frame) < _FRAME.size or not frame.startswith(MAGIC):
        raise _corrupt(path, "not an mc checkpoint")
    _, length, expected = _FRAME.unpack(frame)
    size = os.fstat(file.fileno()).st_size - _FRAME.size
    if size < length:
        raise _corrupt(path, f"truncated: {size:,} of {length:,} bytes")
    if size > length:
        raise _corrupt(path, f"{size - length:,} bytes after the end")
    digest = hashlib.sha256()
    for block in iter(lambda: file.read(1 << 20), b""):
        digest.update(block)
    if digest.digest() != expected:
        raise _corrupt(path, "checksum mismatch: the file was modified")
    file.seek(_FRAME.size)
    unpacker = msgpack.Unpacker(
        file,
        raw=False,
        use_list=True,
        strict_map_key=True,
        max_buffer_size=PIECE + (1 << 20),
        max_bin_len=PIECE,
        max_str_len=1 << 20,
        max_array_len=1 << 20,
        max_map_len=1 << 16,
        max_ext_len=0,
    )
    try:
        header = next(unpacker)
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            version = header.get("format") if isinstance(header, dict) else None
            raise _corrupt(path, f"format {version!r}, this mc reads format {FORMAT}")
        settings = _settings(path, header.get("settings"))
        counts = header.get("counts")
        listed = header.get("arrays")
        if not isinstance(counts, dict) or not isinstance(listed, list):
            raise _corrupt(path, "no counts or arrays")
        arrays = {}
        for entry in listed:
            if (
                not isinstance(entry, list)
                or len(entry) != 3
                or not isinstance(entry[0], str)
                or entry[1] not in _DTYPES
                or type(entry[2]) is not int
                or entry[2] < 0
            ):
                raise _corrupt(path, f"bad array entry {entry!r}"[:200])
            name, dtype, count = entry
            arrays[name] = _read_array(path, unpacker, name, np.dtype(dtype), count, length)
        if next(unpacker, None) is not None:
            raise _corrupt(path, "data after the last array")
    except CheckpointError:
        raise
    except (StopIteration, ValueError, TypeError, msgpack.UnpackException) as exc:
        raise _corrupt(path, f"{type(exc).__name__}: {exc}"[:300]) from None
    return Saved(path, settings, counts, arrays)


def _read_array(
    path: Path, unpacker: Any, name: str, dtype: np.dtype, count: int, limit: int
) -> np.ndarray:
    total = count * dtype.itemsize
    if total > limit:
        raise _corrupt(path, f"array {name!r} is longer than the file")
    buffer = bytearray(total)
    view = memoryview(buffer)
    filled = 0
    while filled < total:
        piece = next(unpacker)
        if not isinstance(piece, bytes) or filled + len(piece) > total:
            raise _corrupt(path, f"array {name!r} does not match its length")
        view[filled : filled + len(piece)] = piece
        filled += len(piece)
    view.release()
    return np.frombuffer(buffer, dtype=dtype)


def _settings(path: Path, raw: Any) -> Settings:
    if not isinstance(raw, dict):
        raise _corrupt(path, "no settings")
    kinds: dict[str, tuple[type, ...]] = {
        "spec": (str,),
        "spec_file": (str,),
        "spec_name": (str,),
        "root": (str,),
        "sources": (dict,),
        "constants": (dict,),
        "invariants": (list,),
        "deadlock": (bool,),
        "max_depth": (int, type(None)),
        "max_states": (int, type(None)),
        "engine": (str,),
        "workers": (int,),
        "every": (float,),
        "symmetry": (bool,),
        "view": (bool,),
        "mc_version": (str,),
        "fingerprint": (str,),
    }
    values = {}
    for field in fields(Settings):
        value = raw.get(field.name)
        if type(value) not in kinds[field.name]:
            raise _corrupt(path, f"setting {field.name!r} is {value!r}"[:200])
        values[field.name] = value
    if not values["sources"] or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in values["sources"].items()
    ):
        raise _corrupt(path, "bad sources")
    if not all(type(v) in (int, bool, str) for v in values["constants"].values()):
        raise _corrupt(path, "bad constants")
    if not all(isinstance(v, str) for v in values["invariants"]):
        raise _corrupt(path, "bad invariants")
    for name in ("max_depth", "max_states", "workers"):  # as the command line takes them
        if values[name] is not None and values[name] < 1:
            raise _corrupt(path, f"setting {name!r} is {values[name]!r}, not a number from 1")
    if not 0 <= values["every"] < float("inf"):
        raise _corrupt(path, f"setting 'every' is {values['every']!r}")
    return Settings(**values)


# -- resuming ------------------------------------------------------------------------------


def _shown(value: Any) -> str:
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


def refuse_other_options(saved: Saved, given: Mapping[str, Any]) -> None:
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


# -- a run's checkpoints -----------------------------------------------------------------------


def settings_of(model: Model, options: Options, engine: str, every: float | None) -> Settings:
    """The settings of a run of `model` with `options` on `engine` (`every`: seconds between
    checkpoints, None for the default)."""
    return Settings.of(
        model,
        deadlock=options.deadlock,
        max_depth=options.max_depth,
        max_states=options.max_states,
        engine=engine,
        workers=options.workers,
        every=DEFAULT_EVERY if every is None else every,
    )


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
