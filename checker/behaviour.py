"""The state graph a search records, for what needs more than a verdict: temporal properties
(checker.liveness), `mc graph` and the testing helpers.

A search records it as it goes (checker.search.observers.Recorder): the states numbered in the
order the search found them, and every step of every state, in the order `Model.successors`
lists them (so a step's position among its state's steps is its
position in that list, from which checker.trace rebuilds it). Compact arrays: a fingerprint
per state, where its steps start, and per step the target state and the action; per state,
the value of each predicate asked for; a key per step of the actions whose fairness is per
binding; and, if asked, every state's encoding (for small graphs people look at).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checker.errors import OUTSIDE
from checker.values.encoding import encode, fingerprint
from checker.values.record import Record

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
    except OUTSIDE:
        raise
    except BaseException:
        return RAISED
    return TRUE if value is True else FALSE if value is False else RAISED
