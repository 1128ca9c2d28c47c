"""The checkpoint file (DIR/checkpoint.mc): what it holds and how it is written and read.

The file is a fixed frame (magic, body length, SHA-256 of the body) and a msgpack body, never
pickle: a map (format version, settings, counts, and the name, type and length of each array),
then each array's bytes in pieces of at most PIECE bytes. Reading checks the length and the
checksum before decoding anything, then decodes with size limits and checks every field, so a
truncated or modified file is a clear error ("corrupt"), never a traceback or code execution.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import IO

import msgpack
import numpy as np

from checker.errors import ConfigError

FILE_NAME = "checkpoint.mc"
FORMAT = 3  # of the body; a reader refuses other versions (2: reachability properties; 3: view)
MAGIC = b"\x89mc-checkpoint\n\x00"
FRAME = struct.Struct(">16sQ32s")  # magic, body length, SHA-256 of the body
PIECE = 16 << 20  # bytes of an array per msgpack object
FINGERPRINT = "xxh3_64"  # checker.values.encoding.fingerprint, over its encoding
_DTYPES = ("uint64", "int64", "uint32", "int32", "uint16", "uint8")


# A checkpoint's counts as an engine writes them: numbers (the level, its states, ...), lists
# of numbers (per action, per level) and the reachability properties reached (name -> [the
# state, its depth]). Read back, they are msgpack's values until Saved's accessors check them.
Count = int | list[int] | dict[str, list[int]]
Counts = Mapping[str, Count]


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
    constants: dict[str, int | bool | str]  # all of them, typed
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


@dataclass(frozen=True)
class Array:
    """An array to write: its element type, its length and its bytes in pieces (so that a big
    one is never copied whole)."""

    dtype: str
    count: int
    pieces: Iterable[bytes]

    @classmethod
    def of(cls, values: np.ndarray | Sequence[int], dtype: str, count: int | None = None) -> Array:
        """The first `count` elements of a numpy array or an array.array."""
        count = len(values) if count is None else count
        step = max(1, PIECE // np.dtype(dtype).itemsize)
        pieces = (
            np.asarray(values[i : min(i + step, count)], dtype=dtype).tobytes()
            for i in range(0, count, step)
        )
        return cls(dtype, count, pieces)


def _body(
    header: dict[str, object], arrays: Mapping[str, Array], packer: msgpack.Packer
) -> Iterator[bytes]:
    yield packer.pack(header)
    for name, array in arrays.items():
        expected = array.count * np.dtype(array.dtype).itemsize
        written = 0
        for piece in array.pieces:
            written += len(piece)
            yield packer.pack(piece)
        if written != expected:  # an engine bug, not a user error
            raise RuntimeError(f"checkpoint array {name}: {written} bytes, expected {expected}")


def write(file: IO[bytes], settings: Settings, counts: Counts, arrays: Mapping[str, Array]) -> None:
    """Write a checkpoint to `file`, open for writing at its start: the frame, then the body
    (the frame's length and checksum filled in once the body is written)."""
    header = {
        "format": FORMAT,
        "settings": asdict(settings),
        "counts": dict(counts),
        "arrays": [[name, a.dtype, a.count] for name, a in arrays.items()],
    }
    packer = msgpack.Packer(use_bin_type=True)
    file.write(bytes(FRAME.size))
    digest, length = hashlib.sha256(), 0
    for piece in _body(header, arrays, packer):
        digest.update(piece)
        file.write(piece)
        length += len(piece)
    file.seek(0)
    file.write(FRAME.pack(MAGIC, length, digest.digest()))


# -- reading ----------------------------------------------------------------------------------


class Saved:
    """A checkpoint read back: settings, counts and arrays, every access checked."""

    def __init__(
        self,
        path: Path,
        settings: Settings,
        counts: dict[str, object],
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
    frame = file.read(FRAME.size)
    if len(frame) < FRAME.size or not frame.startswith(MAGIC):
        raise _corrupt(path, "not an mc checkpoint")
    _, length, expected = FRAME.unpack(frame)
    size = os.fstat(file.fileno()).st_size - FRAME.size
    if size < length:
        raise _corrupt(path, f"truncated: {size:,} of {length:,} bytes")
    if size > length:
        raise _corrupt(path, f"{size - length:,} bytes after the end")
    digest = hashlib.sha256()
    for block in iter(lambda: file.read(1 << 20), b""):
        digest.update(block)
    if digest.digest() != expected:
        raise _corrupt(path, "checksum mismatch: the file was modified")
    file.seek(FRAME.size)
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
    path: Path, unpacker: msgpack.Unpacker, name: str, dtype: np.dtype, count: int, limit: int
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


def _settings(path: Path, raw: object) -> Settings:
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
