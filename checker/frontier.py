"""The states of one BFS level, kept as encoded bytes and spilled to disk when large.

A level is a list of segments, each a blob of concatenated encoded states with their offsets
(one more offset than states). Engines append segments as states are found and read the
level back in chunks of at most `size` states, in the order they were found.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np

SPILL_BYTES = 256 << 20  # keep up to this many bytes of states in memory, spill the rest


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
class _Spilled:
    position: int  # where the blob starts in the spill file
    size: int
    offsets: np.ndarray


class Frontier:
    def __init__(self, spill_bytes: int = SPILL_BYTES) -> None:
        self.spill_bytes = spill_bytes
        self._segments: list[tuple[bytes, np.ndarray] | _Spilled] = []
        self._in_memory = 0
        self._file: IO[bytes] | None = None
        self.states = 0
        self.spilled_bytes = 0

    def append(self, blob: bytes, offsets: np.ndarray) -> None:
        """Add states: `blob` holds them back to back, `offsets` (uint64) delimit them."""
        if len(offsets) <= 1:
            return
        self.states += len(offsets) - 1
        if self._in_memory + len(blob) > self.spill_bytes:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="mc-frontier-")  # noqa: SIM115 (closed by close())
            position = self._file.seek(0, 2)
            self._file.write(blob)
            self._segments.append(_Spilled(position, len(blob), offsets))
            self.spilled_bytes += len(blob)
        else:
            self._segments.append((blob, offsets))
            self._in_memory += len(blob)

    def __len__(self) -> int:
        return self.states

    def chunks(self, size: int) -> Iterator[Chunk]:
        """The states in order, in chunks of at most `size` states."""
        first = 0
        blobs: list[bytes] = []
        offsets: list[np.ndarray] = []
        count = 0
        for blob, offs in self._segments_in_order():
            start = 0  # index into this segment's states
            total = len(offs) - 1
            while start < total:
                take = min(size - count, total - start)
                lo, hi = int(offs[start]), int(offs[start + take])
                blobs.append(blob[lo:hi])
                offsets.append(offs[start + 1 : start + take + 1] - lo)
                count += take
                start += take
                if count == size:
                    yield _joined(first, blobs, offsets)
                    first += count
                    blobs, offsets, count = [], [], 0
        if count:
            yield _joined(first, blobs, offsets)

    def _segments_in_order(self) -> Iterator[tuple[bytes, np.ndarray]]:
        for segment in self._segments:
            if isinstance(segment, _Spilled):
                assert self._file is not None
                self._file.seek(segment.position)
                yield self._file.read(segment.size), segment.offsets
            else:
                yield segment

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._segments = []


def _joined(first: int, blobs: list[bytes], offsets: list[np.ndarray]) -> Chunk:
    """One chunk from pieces whose offsets are relative to their own piece (without the 0)."""
    ends = []
    base = 0
    for blob, offs in zip(blobs, offsets):
        ends.append(offs + np.uint64(base))
        base += len(blob)
    all_offsets = np.concatenate([np.zeros(1, dtype=np.uint64), *ends])
    return Chunk(first, b"".join(blobs), all_offsets)
