"""What spec code returns, checked (the parts of checker.model share these): a predicate's
True or False, a state it built that can be encoded, and how errors show what it returned."""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable
from typing import Any

from checker.errors import OUTSIDE, EvaluationError, StateError, raised
from checker.values.encoding import encode_state
from checker.values.record import Record


def predicate_holds(
    kind: str,
    name: str,
    fn: Callable[..., Any],
    *states: Record,
    params: dict[str, Any] | None = None,
) -> bool:
    """Evaluate a predicate of the spec (an invariant or a constraint) on `states`: it must
    return True or False."""
    try:
        ok = fn(*states)
    except OUTSIDE:
        raise
    except BaseException as exc:
        raise EvaluationError(
            kind, name, raised(exc), state=states[0], params=params, cause=exc
        ) from exc
    if ok is not True and ok is not False:
        article = "an" if kind[0] in "aeiou" else "a"
        raise EvaluationError(
            kind,
            name,
            f"returned {ok!r}; {article} {kind} returns True or False",
            state=states[0],
            params=params,
        )
    return ok


def spec_encoded(
    succ: Record, kind: str, name: str, *, state: Record | None, params: dict[str, Any]
) -> bytes:
    """Encode a state built by spec code; a value that cannot be encoded is the spec's error.
    encode_state gives encode's bytes, reusing the cached encodings of fields shared with a
    state encoded before (a view's fields are the state's)."""
    try:
        return encode_state(succ)
    except StateError as exc:
        raise unencodable(exc, kind, name, state, params) from exc


def unencodable(
    exc: StateError, kind: str, name: str, state: Record | None, params: dict[str, Any]
) -> EvaluationError:
    return EvaluationError(
        kind, name, f"built a state that cannot be encoded: {exc}", state=state, params=params
    )


def variables_differ(state: Record, expected: Record) -> str:
    """How the variables of `state` differ from those `expected` has, in words."""
    added = [str(k) for k in state if k not in expected]
    missing = [str(k) for k in expected if k not in state]
    parts = []
    if added:
        parts.append(f"with the variable{'s' * (len(added) > 1)} {', '.join(added)} added")
    if missing:
        parts.append(f"without the variable{'s' * (len(missing) > 1)} {', '.join(missing)}")
    return " and ".join(parts) or "with other variables"


_REPR = reprlib.Repr()  # (its settings as attributes: Python 3.10 takes no arguments)
_REPR.maxlevel = _REPR.maxtuple = _REPR.maxlist = _REPR.maxdict = 12
_REPR.maxstring = 80


_REPR = reprlib.Repr()  # (its settings as attributes: Python 3.10 takes no arguments)
_REPR.maxlevel = _REPR.maxtuple = _REPR.maxlist = _REPR.maxdict = 12
_REPR.maxstring = 80


def short(value: Any) -> str:
    """A value returned by spec code, as an error shows it: cut short, however deep."""
    return _REPR.repr(value)


def as_list(result: Any) -> list[Any] | None:
    if isinstance(result, (list, tuple)) or inspect.isgenerator(result):
        return list(result)
    return None
