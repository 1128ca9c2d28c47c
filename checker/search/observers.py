"""What watches a search as it goes, as stateright's CheckerVisitor does: an Observer is told
of each initial state, of the states each part admits and of the steps of the states each part
expanded, in the search's order. The engines call it once per initial state and once per part,
never per state, and not at all when there is none: a search without one pays nothing.

The one observer is the Recorder: it records the behaviour graph (checker.behaviour) that the
temporal properties (checker.liveness), `mc graph` and the testing helpers need. What it asks
of the expanders (every successor's fingerprint, the predicates' values) is its `recording`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from checker.behaviour import Behaviour, Recording, predicate_value
from checker.compiled import Invariant
from checker.model import Successor
from checker.search.expansion import Expansion


class Observer:
    """Watches a search (every method does nothing: a subclass overrides what it needs)."""

    recording: Recording | None = None  # what the expanders compute for it besides a search's
    go_on = False  # the search goes on past a state that violates an invariant

    def initial(self, number: int, init: Successor, broken: Invariant | None) -> None:
        """An initial state admitted as state `number`; `broken`: what it violates."""

    def admitted(
        self, first: int, exp: Expansion, kept: np.ndarray, blob: bytes, offsets: np.ndarray
    ) -> None:
        """The candidates `kept` of a part admitted, in order, from state number `first` on
        (their encodings: `blob` at `offsets`)."""

    def expanded(self, exp: Expansion) -> None:
        """A part's states expanded, each one's steps in order (a part the search stopped in
        is not)."""


class Recorder(Observer):
    """Records the behaviour graph: `behaviour()` once the search explored every state."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.go_on = recording.go_on
        self.builder = Builder(recording)

    def initial(self, number: int, init: Successor, broken: Invariant | None) -> None:
        builder = self.builder
        builder.initial.append((number, init.binding))
        values = [predicate_value(p, init.state) for _, p in self.builder.recording.predicates]
        fp = np.array([init.fp], dtype=np.uint64)
        builder.add_states(fp, np.array(values, np.uint8), [init.data])
        if broken is not None and self.go_on:
            builder.violations[number] = broken.name

    def admitted(
        self, first: int, exp: Expansion, kept: np.ndarray, blob: bytes, offsets: np.ndarray
    ) -> None:
        """The states a part admitted: fingerprints, predicate values, encodings if asked,
        and (exploring past violations) what they violate."""
        builder = self.builder
        if self.go_on:
            for number, candidate in enumerate(kept.tolist(), first):
                if candidate in exp.broken:
                    builder.violations[number] = exp.broken[candidate]
        encodings: list[bytes] = []
        if builder.recording.states:
            bounds = offsets.tolist()
            encodings = [blob[bounds[i] : bounds[i + 1]] for i in range(len(kept))]
        builder.add_states(exp.fps[kept], exp.values[kept], encodings)

    def expanded(self, exp: Expansion) -> None:
        self.builder.add_steps(exp.counts, exp.targets, exp.actions[: exp.limit], exp.keys)

    def behaviour(self) -> Behaviour:
        return self.builder.finish()


class Builder:
    """Collects a behaviour as the search admits states and expands them, in order."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self._fps: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._targets: list[np.ndarray] = []  # fingerprints until the search ends
        self._actions: list[np.ndarray] = []
        self._keys: list[np.ndarray] = []
        self._values: list[np.ndarray] = []  # rows of predicate values, per state
        self.initial: list[tuple[int, int]] = []
        self.encodings: list[bytes] | None = [] if recording.states else None
        self.violations: dict[int, str] = {}
        self.states = 0

    def add_states(self, fps: np.ndarray, values: np.ndarray, encodings: Sequence[bytes]) -> None:
        """States admitted, in order; `values` a row of predicate values per state."""
        if not len(fps):
            return
        self._fps.append(np.asarray(fps, dtype=np.uint64))
        self._values.append(np.asarray(values, dtype=np.uint8).reshape(len(fps), -1))
        if self.encodings is not None:
            self.encodings.extend(encodings)
        self.states += len(fps)

    def add_steps(
        self, counts: np.ndarray, targets: np.ndarray, actions: np.ndarray, keys: np.ndarray | None
    ) -> None:
        """The steps of the next states in order of expansion (`counts` per state); the
        states they reach by fingerprint."""
        self._counts.append(np.asarray(counts, dtype=np.int64))
        self._targets.append(np.asarray(targets, dtype=np.uint64))
        self._actions.append(np.asarray(actions, dtype=np.uint16))
        if keys is not None:
            self._keys.append(np.asarray(keys, dtype=np.uint64))

    def finish(self) -> Behaviour:
        """The behaviour, every step's target a state number (every state was expanded)."""
        fps = _joined(self._fps, np.uint64)
        counts = _joined(self._counts, np.int64)
        starts = np.zeros(len(fps) + 1, dtype=np.int64)
        starts[1 : len(counts) + 1] = np.cumsum(counts)
        starts[len(counts) + 1 :] = starts[len(counts)]
        order = np.argsort(fps)
        fingerprints = _joined(self._targets, np.uint64)
        targets = order[np.searchsorted(fps, fingerprints, sorter=order)].astype(np.int32)
        self._targets = []
        values = _joined(self._values, np.uint8).reshape(len(fps), len(self.recording.predicates))
        names = [name for name, _ in self.recording.predicates]
        return Behaviour(
            fps=fps,
            starts=starts,
            targets=targets,
            actions=_joined(self._actions, np.uint16),
            keys=_numbered(_joined(self._keys, np.uint64)) if self.recording.keyed else None,
            values={name: values[:, i].copy() for i, name in enumerate(names)},
            initial=self.initial,
            encodings=self.encodings,
            violations=self.violations,
        )


def _numbered(keys: np.ndarray) -> np.ndarray:
    """Binding keys (64-bit, 0 for none) as small numbers (0 still none): half the bytes."""
    unique, inverse = np.unique(keys, return_inverse=True)
    if len(unique) and unique[0] != 0:
        inverse = inverse + 1
    return inverse.reshape(-1).astype(np.uint32)


def _joined(pieces: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(pieces).astype(dtype, copy=False) if pieces else np.empty(0, dtype)
