"""What the local engine remembers about every state it found: 16 bytes.

`Visited` is the set of fingerprints (8 bytes each: a sorted numpy array of the earlier
levels, plus a Python set for the level being built, merged into the array when the level
ends). `Links` gives each state, numbered in order of discovery, its parent's number and its
position in the parent's `Model.expand` list (4 + 4 bytes); a trace is rebuilt from them by
expanding along the chain (checker.trace).
"""

from __future__ import annotations

from array import array

import numpy as np

ROOT = -1  # the parent number of an initial state (its position is its index in init())


class Visited:
    def __init__(self) -> None:
        self._sorted = np.empty(0, dtype=np.uint64)
        self._level: set[int] = set()

    @classmethod
    def of(cls, fps: np.ndarray) -> Visited:
        """The set of `fps` (uint64, sorted, distinct), as a checkpoint holds it."""
        visited = cls()
        visited._sorted = fps
        return visited

    def __len__(self) -> int:
        return len(self._sorted) + len(self._level)

    @property
    def finished(self) -> np.ndarray:
        """The sorted fingerprints of the finished levels (not changed in place later)."""
        return self._sorted

    def known(self, fps: np.ndarray) -> np.ndarray:
        """A boolean mask: which of `fps` (uint64) were found before."""
        found = self.earlier(fps)
        if self._level:
            level = self._level
            rest = np.flatnonzero(~found)
            found[rest] = [fp in level for fp in fps[rest].tolist()]
        return found

    def earlier(self, fps: np.ndarray) -> np.ndarray:
        """A boolean mask: which of `fps` were found at a finished level."""
        if not len(self._sorted):
            return np.zeros(len(fps), dtype=bool)
        at = np.searchsorted(self._sorted, fps)
        at[at == len(self._sorted)] = 0
        return self._sorted[at] == fps

    def __contains__(self, fp: int) -> bool:
        return bool(self.known(np.array([fp], dtype=np.uint64))[0])

    def add(self, fps: np.ndarray) -> None:
        self._level.update(fps.tolist())

    def end_level(self) -> None:
        """Merge this level's fingerprints into the sorted array."""
        if self._level:
            new = np.fromiter(self._level, dtype=np.uint64, count=len(self._level))
            merged = np.concatenate([self._sorted, np.sort(new)])
            merged.sort(kind="stable")  # two sorted runs: a linear merge
            self._sorted = merged
            self._level = set()

    @property
    def nbytes(self) -> int:
        return self._sorted.nbytes + 8 * len(self._level)

    def closest(self) -> int | None:
        """The smallest difference between two fingerprints of the earlier levels."""
        if len(self._sorted) < 2:
            return None
        return int(np.diff(self._sorted).min())


class Links:
    def __init__(self) -> None:
        self.parent = array("i")
        self.position = array("I")

    @classmethod
    def of(cls, parents: np.ndarray, positions: np.ndarray) -> Links:
        links = cls()
        links.add(parents, positions)
        return links

    def __len__(self) -> int:
        return len(self.parent)

    def add(self, parents: np.ndarray, positions: np.ndarray) -> None:
        self.parent.frombytes(parents.astype(np.int32).tobytes())
        self.position.frombytes(positions.astype(np.uint32).tobytes())

    def chain(self, state: int) -> list[int]:
        """The positions from an initial state (its init index first) down to `state`."""
        positions = []
        while state != ROOT:
            positions.append(self.position[state])
            state = self.parent[state]
        positions.reverse()
        return positions

    @property
    def nbytes(self) -> int:
        return self.parent.itemsize * len(self.parent) + self.position.itemsize * len(
            self.position
        )
