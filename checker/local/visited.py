"""What the local engine remembers about every state it found: 16 bytes.

`FingerprintArray` is the set of fingerprints, a `Visited` (checker.search.admission): 8 bytes
each, a sorted numpy array of the earlier levels, plus sorted runs for the level being built,
merged as they pile up like a binary counter's digits, and into the array when the level ends:
every look-up and insertion is a numpy operation over a chunk's fingerprints, never a Python
loop. `Links` gives each state,
numbered in order of discovery, its parent's number and its position in the parent's
`Model.expand` list (4 + 4 bytes); a trace is rebuilt from them by expanding along the chain
(checker.trace).
"""

from __future__ import annotations

from array import array

import numpy as np

ROOT = -1  # the parent number of an initial state (its position is its index in init())


class FingerprintArray:
    def __init__(self) -> None:
        self._sorted = np.empty(0, dtype=np.uint64)
        self._level: list[np.ndarray] = []  # sorted runs, each at most half the one before
        self.older = 0  # of the fingerprints `known` was last given, those of finished levels

    @classmethod
    def of(cls, fps: np.ndarray) -> FingerprintArray:
        """The set of `fps` (uint64, sorted, distinct), as a checkpoint holds it."""
        visited = cls()
        visited._sorted = fps
        return visited

    def __len__(self) -> int:
        return len(self._sorted) + sum(map(len, self._level))

    @property
    def finished(self) -> np.ndarray:
        """The sorted fingerprints of the finished levels (not changed in place later)."""
        return self._sorted

    def known(self, fps: np.ndarray) -> np.ndarray:
        """A boolean mask: which of `fps` (uint64) were found before (`older`: how many of
        them at a finished level)."""
        # Looked up in ascending order (as admission's are): successive binary searches then
        # share the top of their paths, in the cache (about 1.5x faster on a large array).
        order = None if np.all(fps[1:] >= fps[:-1]) else np.argsort(fps)
        ascending = fps if order is None else fps[order]
        found = _within(self._sorted, ascending)
        self.older = int(np.count_nonzero(found))
        for run in self._level:
            found |= _within(run, ascending)
        if order is None:
            return found
        mask = np.empty(len(fps), dtype=bool)
        mask[order] = found
        return mask

    def __contains__(self, fp: int) -> bool:
        # One binary search per array (a trace's states are looked up one at a time: `known`
        # costs some fifteen numpy calls on one-element arrays).
        key = np.uint64(fp)
        for run in (self._sorted, *self._level):
            at = int(run.searchsorted(key))
            if at < len(run) and run[at] == key:
                return True
        return False

    def add(self, fps: np.ndarray) -> None:
        """Add fingerprints not found before (distinct)."""
        if not len(fps):
            return
        runs = self._level
        runs.append(np.sort(fps))
        while len(runs) > 1 and 2 * len(runs[-1]) > len(runs[-2]):
            last = runs.pop()
            runs[-1] = _merged(runs[-1], last)

    def end_level(self) -> None:
        """Merge this level's fingerprints into the sorted array."""
        for run in self._level:
            self._sorted = _merged(self._sorted, run)
        self._level = []

    @property
    def nbytes(self) -> int:
        return self._sorted.nbytes + sum(run.nbytes for run in self._level)

    def closest(self) -> int | None:
        """The smallest difference between two fingerprints of the earlier levels."""
        if len(self._sorted) < 2:
            return None
        return int(np.diff(self._sorted).min())


def _within(run: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """A boolean mask: which of `fps` are in the sorted array `run`."""
    if not len(run):
        return np.zeros(len(fps), dtype=bool)
    at = np.searchsorted(run, fps)
    at[at == len(run)] = 0
    return run[at] == fps


def _merged(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two sorted arrays as one (two sorted runs: the stable sort merges them linearly)."""
    merged = np.concatenate([a, b])
    merged.sort(kind="stable")
    return merged


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
        return self.parent.itemsize * len(self.parent) + self.position.itemsize * len(self.position)
