"""How state values are shown to people (text) and to programs (JSON)."""

from __future__ import annotations

from typing import Any

from checker.values.encoding import canonical_order
from checker.values.record import Record


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, plural unless n is 1: "1 state", "1,234 distinct states"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def show(value: Any) -> str:
    """A compact, Python-like rendering: sets as {a, b} (the empty set as set()), records as
    {key: value} (the empty record as {})."""
    if isinstance(value, Record):
        return "{" + ", ".join(f"{_key(k)}: {show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, frozenset):
        if not value:
            return "set()"
        return "{" + ", ".join(show(v) for v in canonical_order(value)) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(show(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _key(key: Any) -> str:
    return key if isinstance(key, str) and key.isidentifier() else show(key)


def to_json(value: Any) -> Any:
    """A JSON-compatible form: records as objects (keys as strings), sets and tuples as lists."""
    if isinstance(value, Record):
        return {k if isinstance(k, str) else show(k): to_json(v) for k, v in value.items()}
    if isinstance(value, frozenset):
        return [to_json(v) for v in canonical_order(value)]
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value
