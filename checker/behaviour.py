"""The state graph a search records, for what needs more than a verdict: temporal properties
(checker.liveness), `mc graph` and the testing helpers.

The local engine's search records it as it goes (checker.local.bfs, `Options(record=...)`): the
states numbered in the order the search found them, and every step of every state, in the
order `Model.successors` lists them (so a step's position among its state's steps is its
position in that list, from which checker.trace rebuilds it). Compact arrays: a fingerprint
per state, where its steps start, and per step the target state and the action; per state,
the value of each predicate asked for; a key per step of the actions whose fairness is per
binding; and, if asked, every state's encoding (for small graphs people look at).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checker.encoding import encode, fingerprint
from checker.errors import Interrupted
from checker.record import Record

# A predicate's value on a state: false, true, or it raised (found again by evaluating it).
FALSE, TRUE, RAISED = 0, 1, 2


@dataclass(frozen=True)
class Recording:
    """What a search records besides its verdict."""

    # (name, predicate) to evaluate on every state, e.g. a temporal property's P and Q.
    predicates: tuple[tuple[str, Callable[[Record], Any]], ...] = ()
    keyed: frozenset[int] = frozenset()  # actions whose steps need their binding's key
    states: bool = False  # keep every state's encoding
    go_on: bool = False  # explore past states that violate an invariant (for drawings)


@dataclass
class Behaviour:
    """The recorded state graph: state u's steps are `targets[starts[u]:starts[u + 1]]`."""

    fps: np.ndarray  # uint64: state -> fingerprint
    starts: np.ndarray  # int64, one more than states
    targets: np.ndarray  # int32: step -> the state it reaches (itself for a stutter)
    actions: np.ndarray  # uint16: step -> action index
    keys: np.ndarray | None  # uint32: step -> its binding's number (0: none asked), or None
    values: dict[str, np.ndarray]  # predicate name -> uint8 per state (FALSE, TRUE, RAISED)
    initial: list[tuple[int, int]]  # (state, its index in init()) for each initial state
    encodings: list[bytes] | None = None  # state -> its encoding, if asked
    violations: dict[int, str] = field(default_factory=dict)  # state -> invariant (go_on)

    def __len__(self) -> int:
        return len(self.fps)

    @property
    def nbytes(self) -> int:
        """The memory of the arrays (encodings aside)."""
        arrays = [self.fps, self.starts, self.targets, self.actions, *self.values.values()]
        if self.keys is not None:
            arrays.append(self.keys)
        return sum(a.nbytes for a in arrays)

    def sources(self) -> np.ndarray:
        """Step -> the state it leaves."""
        return np.repeat(np.arange(len(self.fps)), np.diff(self.starts))


def binding_key(binding: tuple[Any, ...]) -> int:
    """A binding's identity across states and processes: the fingerprint of its encoding
    (never 0, which means "no key")."""
    return fingerprint(encode(binding)) or 1


def predicate_value(predicate: Callable[[Record], Any], state: Record) -> int:
    """FALSE, TRUE, or RAISED if it raised or returned something else than a bool (the
    search goes on; what raised is reported, with the state, if it matters)."""
    try:
        value = predicate(state)
    except Interrupted:
        raise
    except BaseException:
        return RAISED
    return TRUE if value is True else FALSE if value is False else RAISED


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
