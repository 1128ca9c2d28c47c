"""What the Spark engine's tables hold: their columns, fingerprints as Spark longs, and the
keys that order states as the local engine does.

`key` is a state's position in the local engine's order, as bytes that compare like the tuple
(init index, position in the parent's expand list, ...) of its first discovery: a parent key
plus one order-preserving component per level. The minimum key of a fingerprint is thus the
parent the local engine would record, and the smallest key among the states that violate,
deadlock or raise is the one the local engine would report first. Keys are computed where
states are expanded, with no global sort per level; they grow by one byte per level (two or
more for states with over 247 successors)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.trace import Link

if TYPE_CHECKING:
    import pyarrow as pa


# Kinds of the rows the expansion emits: a candidate successor, an event of the expanded state
# (its expansion raised, or it is deadlocked), or the number of successors an action generated
# in a batch (in the `binding` column; successors met before in the batch have no row).
SUCCESSOR, RAISED, DEADLOCK, GENERATED = 0, 1, 2, 3

FRONTIER_COLUMNS = ("fp", "key", "state", "parent", "action", "binding")
FRONTIER_SCHEMA = "fp long, key binary, state binary, parent long, action int, binding int"
CANDIDATE_SCHEMA = (
    "kind int, fp long, key binary, state binary, parent long, action int, binding int"
)
CHECKED_SCHEMA = (
    "n long, new array<long>, bad binary, reached_key array<binary>, reached_fp array<long>,"
    " fps array<long>"
)
COUNTED_SCHEMA = "fired array<long>"
LINK_COLUMNS = ("fp", "parent", "action", "binding")
LINK_SCHEMA = "fp long, parent long, action int, binding int"

# A level held in the driver: its states as frontier rows (fp, key, state, parent, action,
# binding), in key order, and its links (fp, parent, action, binding); fingerprints signed.
Row = tuple[int, bytes, bytes, "int | None", int, int]
Links = list[tuple[int, "int | None", int, int]]

_TOP = 1 << 64
_SIGN = 1 << 63


def signed(fp: int) -> int:
    """An unsigned 64-bit fingerprint as a Spark long (int64)."""
    return fp - _TOP if fp >= _SIGN else fp


def unsigned(fp: int) -> int:
    """A Spark long back to the unsigned fingerprint of checker.values.encoding.fingerprint."""
    return fp + _TOP if fp < 0 else fp


def component(index: int) -> bytes:
    """One level of a key: prefix-free and order-preserving, so that concatenated keys compare
    (as unsigned bytes, like Spark's binary ordering) exactly like tuples of indexes."""
    if index < 248:
        return bytes((index,))
    raw = index.to_bytes((index.bit_length() + 7) // 8, "big")
    return bytes((247 + len(raw),)) + raw


def last_component(key: bytes, parent_key: bytes) -> int:
    """The index that `component` appended to `parent_key` to make `key`."""
    rest = key[len(parent_key) :]
    return rest[0] if rest[0] < 248 else int.from_bytes(rest[1:], "big")


LINK_TYPES = ("int64", "int64", "int32", "int32")  # of LINK_COLUMNS


def numbers(table: pa.Table, column: str) -> Any:
    """A numeric Arrow column as numpy, nulls (the parents of initial states) as 0."""
    import pyarrow.compute as pc

    return pc.fill_null(table.column(column), 0).to_numpy()


def link_of(links: tuple[int, int | None, int, int]) -> Link:
    """A link kept in the driver, as checker.trace has them."""
    _, parent, action, binding = links
    return (None if parent is None else unsigned(parent), action, binding)
