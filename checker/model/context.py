"""The Context: what the C hot path reads of a model (checker/hot/successors.c reads it by
name, and keeps the attributes of the last one it met), made once per model and kind of batch
(checker.model.core.Model.context)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from checker.values import kinds
from checker.values.record import Record


class Context(NamedTuple):
    """What `successors` and `expand_run` need of a model (C reads it by name: see
    checker/hot/successors.c), made once per model and kind of batch, never changed."""

    plan: tuple[Any, ...]  # CompiledSpec.plan
    add: Callable[..., bool]  # a result that is not one successor of the state's shape
    reraise: Callable[..., None]  # what an action raised
    constrained: bool  # whether there are action constraints
    kinds: kinds.Kind | None  # the states' kind
    kind_error: Callable[..., None]  # a successor whose variables are not of their kinds
    read_set: type  # ReadSet
    fingerprint: Callable[[bytes], int]
    slots: int  # the guards' masks: one per action binding of a fixed domain
    terminals: bool  # whether a state without successors may be an intended final state
    bail: tuple[type[BaseException], ...]  # the errors that send a state to the general path
    within: Callable[[Record], bool] | None  # inside the state constraints (None: no constraint)
    view: Callable[[Record], Any] | None  # met by their views: the spec's view
    redo: tuple[type[BaseException], ...]  # the errors of `view`, `identify` that send it there
    identify: Callable[[Record, bytes], int] | None  # a candidate's fingerprint, from its encoding
    # The checks a search's batch makes that C asks too (Expansion.checked: None in the
    # contexts a model makes, and in a batch that rebuilds a step already checked): whether
    # a step of the state breaks a step check (or raises: the general path says so), and
    # whether a candidate is outside TLC's constraints (0 no, 1 yes, 2 the general path's).
    broken: Callable[[Record, list[Record]], bool] | None = None
    outside: Callable[[Record], int] | None = None
