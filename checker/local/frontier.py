"""The local engine's `Frontier` (checker.search.levels), `SpilledFrontier`: the states of one
BFS level, kept as encoded bytes and spilled to disk when large, or held only by the expander
that found them.

A level is a list of segments, each a blob of concatenated encoded states with their offsets
(one more offset than states), and where its states are also kept live: the expander that
found them, and their position in its own list for the level (checker.search.expansion). A
segment the engine did not ask the encodings of (`hold`) is only a count: its owner alone can
expand it. Engines append segments as states are found, cut the level into chunks in order
(`plan`), and read a chunk's encodings back (`read`) when no expander holds it live, or for a
checkpoint.
"""

from __future__ import annotations

import bisect
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from checker.search.options import SPILL_BYTES


@dataclass(frozen=True)
class Chunk:
    """Encoded states `first`, `first + 1`, ... of a level (numbered in order of discovery)."""

    first: int
    blob: bytes
    offsets: np.ndarray  # uint64, len(states) + 1, offsets[0] == 0

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def state(self, i: int) -> bytes:
        return self.blob[int(self.offsets[i]) : int(self.offsets[i + 1])]


@dataclass(frozen=True)
class Part:
    """States `first` to `first + count - 1` of a level, to be expanded together: held live
    by expander `owner` from position `start` of its list (owner None: only encoded);
    `encoded`: whether the engine has their encodings (if not, only the owner can expand
    them)."""

    first: int
    count: int
    owner: int | None
    start: int
    encoded: bool = True


@dataclass(frozen=True)
class _Spilled:
    position: int  # where the blob starts in the spill file
    size: int
    offsets: np.ndarray


@dataclass(frozen=True)
class _Held:
    count: int  # states held live by the segment's owner only


@dataclass(frozen=True)
class _Segment:
    first: int  # the number (in the level) of its first state
    data: tuple[bytes, np.ndarray] | _Spilled | _Held
    owner: int | None
    start: int

    @property
    def count(self) -> int:
        if isinstance(self.data, _Held):
            return self.data.count
        offsets = self.data.offsets if isinstance(self.data, _Spilled) else self.data[1]
        return len(offsets) - 1

    @property
    def encoded(self) -> bool:
        return not isinstance(self.data, _Held)


class SpilledFrontier:
    def __init__(self, spill_bytes: int = SPILL_BYTES) -> None:
        self.spill_bytes = spill_bytes
        self._segments: list[_Segment] = []
        self._firsts: list[int] = []
        self._in_memory = 0
        self._file: IO[bytes] | None = None
        self.states = 0
        self.spilled_bytes = 0

    @property
    def memory_bytes(self) -> int:
        """The bytes of encoded states held in memory (the rest are in the file)."""
        return self._in_memory

    def append(
        self, blob: bytes, offsets: np.ndarray, owner: int | None = None, start: int = 0
    ) -> None:
        """Add states: `blob` holds them back to back, `offsets` (uint64) delimit them;
        expander `owner` holds them live from position `start` of its list."""
        if len(offsets) <= 1:
            return
        data: tuple[bytes, np.ndarray] | _Spilled
        if self._in_memory + len(blob) > self.spill_bytes:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="mc-frontier-")  # noqa: SIM115 (closed by close())
            position = self._file.seek(0, 2)
            self._file.write(blob)
            data = _Spilled(position, len(blob), offsets)
            self.spilled_bytes += len(blob)
        else:
            data = (blob, offsets)
            self._in_memory += len(blob)
        self._add(_Segment(self.states, data, owner, start))

    def hold(self, count: int, owner: int, start: int) -> None:
        """Add `count` states that expander `owner` holds live from position `start` of its
        list, and whose encodings the engine has not got."""
        if count:
            self._add(_Segment(self.states, _Held(count), owner, start))

    def _add(self, segment: _Segment) -> None:
        self._segments.append(segment)
        self._firsts.append(self.states)
        self.states += segment.count

    def __len__(self) -> int:
        return self.states

    def plan(self, size: int) -> list[Part]:
        """The level cut into parts of at most `size` states, in order; a part never mixes
        states held by different expanders (or held and only encoded), nor states whose
        encodings the engine has with states it has not."""
        parts: list[Part] = []
        run: list[Any] | None = None  # Part's fields, of the part being built
        for segment in self._segments:
            owner, start, count = segment.owner, segment.start, segment.count
            encoded = segment.encoded
            if (
                run is not None
                and run[2] == owner
                and run[4] == encoded
                and (owner is None or run[3] + run[1] == start)
                and run[1] + count <= size
            ):
                run[1] += count
                continue
            if run is not None:
                parts.append(Part(*run))
            first = segment.first
            while count > size:
                parts.append(Part(first, size, owner, start, encoded))
                first, start, count = first + size, start + size, count - size
            run = [first, count, owner, start, encoded]
        if run is not None:
            parts.append(Part(*run))
        return parts

    def read(self, first: int, count: int) -> Chunk:
        """The encodings of states `first` to `first + count - 1`."""
        blobs: list[bytes] = []
        ends: list[np.ndarray] = []
        base = 0
        at = bisect.bisect_right(self._firsts, first) - 1
        wanted = count
        while wanted:
            segment = self._segments[at]
            blob, offsets = self._load(segment.data)
            lo = first - segment.first
            take = min(wanted, len(offsets) - 1 - lo)
            start, end = int(offsets[lo]), int(offsets[lo + take])
            blobs.append(blob[start:end])
            ends.append(offsets[lo + 1 : lo + take + 1] - np.uint64(start) + np.uint64(base))
            base += end - start
            first += take
            wanted -= take
            at += 1
        offsets = np.concatenate([np.zeros(1, np.uint64), *ends])
        return Chunk(first - count, b"".join(blobs), offsets)

    def chunks(self, size: int) -> Iterator[Chunk]:
        """The states in order, in chunks of at most `size` states."""
        for first in range(0, self.states, size):
            yield self.read(first, min(size, self.states - first))

    def _load(self, data: tuple[bytes, np.ndarray] | _Spilled | _Held) -> tuple[bytes, np.ndarray]:
        if isinstance(data, _Held):  # (the engine asks the owner to expand them instead)
            raise RuntimeError("states held only by the expander that found them were read")
        if isinstance(data, _Spilled):
            assert self._file is not None
            self._file.seek(data.position)
            return self._file.read(data.size), data.offsets
        return data

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._segments = []
        self._firsts = []
