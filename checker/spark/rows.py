"""What the Spark engine's tables hold: their columns, fingerprints as Spark longs, the codes
that order a level's states as the local engine does, and where Spark's hash partitioning
sends a row.

A level on Spark is one table (`LEVEL_SCHEMA`) with three kinds of rows: the level's states
(STATE: fingerprint, order code, encoding and parent link), per fingerprint partition the
fingerprints visited so far (VISITED: one sorted int64 array, or one fingerprint sent by the
driver), and what each task reports (SUMMARY: msgpack).

A state's `code` is its position in the local engine's order within its level, an int64: the
rank of its parent in the parent's level, then its index among the parent's successors
(`Model.expand`'s order) plus one, in INDEX_BITS bits; code `rank << INDEX_BITS` (index 0) is
the parent itself, which the local engine meets before its successors. Ranks are dense (0 to
the level's size - 1): a level's states are partitioned by ranges of their parents' ranks
(`home`), so a task ranks its states from the number of states in the partitions before its
own, which the driver knows. The driver's own levels keep byte keys (`component`) that compare
like tuples of indexes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from checker.trace import Link

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame


# Kinds of rows of a level's table.
STATE, VISITED, SUMMARY = 0, 1, 2

LEVEL_COLUMNS = ("kind", "fp", "code", "state", "parent", "action", "binding", "home")
LEVEL_SCHEMA = (
    "kind int, fp long, code long, state binary, parent long, action int, binding int, home long"
)
LINK_COLUMNS = ("fp", "parent", "action", "binding")
LINK_TYPES = ("int64", "int64", "int32", "int32")  # of LINK_COLUMNS
COUNTED_SCHEMA = "fired array<long>"

INDEX_BITS = 22  # of a code: a successor's index + 1 (0: the parent itself)
MAX_SUCCESSORS = (1 << INDEX_BITS) - 2  # per state, in a level on Spark
INDEX_MASK = (1 << INDEX_BITS) - 1

# A level held in the driver: its states as rows (fp, key, state, parent, action, binding), in
# key order, and its links (fp, parent, action, binding); fingerprints signed.
Row = tuple[int, bytes, bytes, "int | None", int, int]
Links = list[tuple[int, "int | None", int, int]]

_TOP = 1 << 64
_SIGN = 1 << 63


@dataclass(frozen=True)
class InCluster:
    """A level whose states are in the cluster: its table, in `homes` partitions of
    consecutive ranks, partition j's first state of rank `prefix[j]` (`prefix[homes]`: the
    level's size)."""

    df: DataFrame
    homes: int
    prefix: tuple[int, ...]

    def __len__(self) -> int:
        return self.prefix[-1]

    def states(self) -> DataFrame:
        from pyspark.sql import functions as F

        return self.df.filter(F.col("kind") == STATE)


@dataclass(frozen=True)
class LevelJob:
    """What a level's job reported: the next level, and its tasks' summaries."""

    table: InCluster
    expanded: list[dict[str, Any]]  # per expansion task
    admitted: list[dict[str, Any]]  # per fingerprint partition

    @property
    def count(self) -> int:
        return sum(sum(part["new"]) for part in self.admitted)

    def first(self, what: str) -> tuple[int, int] | None:
        """The smallest (code, fp) of an `event` or a `bad` candidate, if any."""
        found = [tuple(part[what]) for part in self.expanded if part[what] is not None]
        return min(found) if found else None  # type: ignore[return-value]


def signed(fp: int) -> int:
    """An unsigned 64-bit fingerprint as a Spark long (int64)."""
    return fp - _TOP if fp >= _SIGN else fp


def unsigned(fp: int) -> int:
    """A Spark long back to the unsigned fingerprint of checker.values.encoding.fingerprint."""
    return fp + _TOP if fp < 0 else fp


def component(index: int) -> bytes:
    """One level of a driver key: prefix-free and order-preserving, so that concatenated keys
    compare (as unsigned bytes) exactly like tuples of indexes."""
    if index < 248:
        return bytes((index,))
    raw = index.to_bytes((index.bit_length() + 7) // 8, "big")
    return bytes((247 + len(raw),)) + raw


def last_component(key: bytes, parent_key: bytes) -> int:
    """The index that `component` appended to `parent_key` to make `key`."""
    rest = key[len(parent_key) :]
    return rest[0] if rest[0] < 248 else int.from_bytes(rest[1:], "big")


def parent_code(rank: int) -> int:
    """The code of an event of the parent of rank `rank` itself (before its successors')."""
    return rank << INDEX_BITS


def parent_rank(code: int) -> int:
    return code >> INDEX_BITS


def successor_index(code: int) -> int:
    """The index among its parent's successors of the state with this code."""
    return (code & INDEX_MASK) - 1


def home_of(rank: int, size: int, homes: int) -> int:
    """The partition (of `homes`) of the states whose parent has rank `rank` in a level of
    `size` states: equal ranges of ranks, in order."""
    return rank * homes // max(size, 1)


# -- Spark's hash partitioning ------------------------------------------------------------------

_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _mix(h1: int, k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _M32
    k1 = (_rotl(k1, 15) * 0x1B873593) & _M32
    h1 ^= k1
    return (_rotl(h1, 13) * 5 + 0xE6546B64) & _M32


def spark_hash(value: int) -> int:
    """Spark's `hash()` of a long (Murmur3_x86_32.hashLong, seed 42), as a signed int."""
    value &= (1 << 64) - 1
    h1 = _mix(_mix(42, value & _M32), value >> 32) ^ 8
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M32
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def spark_partition(value: int, partitions: int) -> int:
    """The partition `repartition(partitions, column)` sends a long `value` to."""
    return spark_hash(value) % partitions


@lru_cache(maxsize=64)
def home_keys(partitions: int) -> tuple[int, ...]:
    """For each partition j of `partitions`, a long that `repartition(partitions, column)` sends
    to j: the `home` column holds these, so that a level's ranges of ranks land one per
    partition, in order."""
    keys: list[int | None] = [None] * partitions
    missing, value = partitions, 0
    while missing:
        j = spark_partition(value, partitions)
        if keys[j] is None:
            keys[j] = value
            missing -= 1
        value += 1
    return tuple(k for k in keys if k is not None)


def numbers(table: pa.Table, column: str) -> Any:
    """A numeric Arrow column as numpy, nulls (the parents of initial states) as 0."""
    import pyarrow.compute as pc

    return pc.fill_null(table.column(column), 0).to_numpy()


def link_of(links: tuple[int, int | None, int, int]) -> Link:
    """A link kept in the driver, as checker.trace has them."""
    _, parent, action, binding = links
    return (None if parent is None else unsigned(parent), action, binding)
