"""`every(x=S, y=T, where=P)`: every record whose field x is a value of S and y one of T, for
which P holds; TLA+'s `{r \\in [x: S, y: T] : P(r)}`, and, returned by a spec's `init`, its
`Init == x \\in S /\\ y \\in T /\\ P`.

The records are the product of the domains in the order the fields are written (the first
varies slowest, as `itertools.product`'s), those for which P is false left out. Each domain's
values are frozen once; a record is then candidate number k of the product, built from those
values by its digits in the domains' sizes (`candidates`, in C with the hot path). So the
engines can hand out ranges of candidates (checker.local), and rebuild an initial state from
its number; iterating an Every gives the same records in the same order, for every other use.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from checker.errors import StateError
from checker.values import fast
from checker.values.record import Record, freeze

PART = 1 << 14  # candidates built at a time when an Every is iterated
MOST = 1 << 62  # candidates an Every may number (they are int64 in C)


def candidates_python(
    shape: type[Record],
    domains: tuple[tuple[Any, ...], ...],
    slots: tuple[int, ...],
    start: int,
    stop: int,
    where: Callable[[Record], Any] | None,
    picked: bytes | None,
) -> tuple[list[Record], bytes, int | None, BaseException | None]:
    """The candidates `start` to `stop - 1` of the product of `domains` (the first varying
    slowest), each the record of `shape` whose item slots[i] is a value of domains[i]; the
    k-th is candidate number k, or picked[k] (int64) given `picked`. Those for which `where`
    (None: all) is true, their numbers (int64 bytes), and None, None; if `where` raises on
    one (or its truth does), the records before it, their numbers, its number and what it
    raised."""
    sizes = [len(d) for d in domains]
    chosen = None
    if picked is not None:
        chosen = array("q")
        chosen.frombytes(picked)
        if start < 0 or stop > len(chosen):
            raise IndexError("candidates: beyond the picked numbers")
    records: list[Record] = []
    numbers = array("q")
    if 0 in sizes:
        return records, b"", None, None
    indexed = list(enumerate(sizes))[::-1]
    for k in range(start, stop):
        number = chosen[k] if chosen is not None else k
        if number < 0:
            raise ValueError("candidates: a negative number")
        values: list[Any] = [shape, *[None] * len(sizes)]
        rest = number
        for i, size in indexed:
            rest, digit = divmod(rest, size)
            values[slots[i]] = domains[i][digit]
        record = shape(tuple(values))
        if where is not None:
            try:
                keep = bool(where(record))
            except BaseException as exc:  # (what C returns too: the caller raises it)
                return records, numbers.tobytes(), number, exc
            if not keep:
                continue
        records.append(record)
        numbers.append(number)
    return records, numbers.tobytes(), None, None


candidates = fast.pick(candidates_python)


class Every:
    """every(x=S, ..., where=P): see the module's docstring. Iterable (the records, in
    order); `part` and `build` give the candidates by number."""

    __slots__ = ("count", "domains", "names", "shape", "slots", "where")

    def __init__(self, where: Callable[[Record], Any] | None, fields: dict[str, Any]) -> None:
        if not fields:
            raise StateError("every() needs a domain: every(x=S, ...)")
        if len(fields) > 64:  # (the C builder's bound)
            raise StateError(f"every() takes at most 64 domains, not {len(fields)}")
        if where is not None and not callable(where):
            raise StateError(f"every(where=...) must be a function of the record, not {where!r}")
        self.names = tuple(fields)
        self.shape: type[Record] = type(Record(**dict.fromkeys(self.names)))
        index = self.shape._index  # type: ignore[attr-defined]
        self.slots = tuple(index[name] for name in self.names)
        domains = []
        for name, domain in fields.items():
            try:
                values = tuple(map(freeze, domain))
            except TypeError as exc:
                raise StateError(f"every(): {name}'s domain must be iterable: {exc}") from None
            domains.append(values)
        self.domains = tuple(domains)
        self.where = where
        self.count = math.prod(map(len, self.domains))  # the candidates
        if self.count > MOST:
            raise StateError(f"every(): {self.count} candidates, more than mc can number")

    def __iter__(self) -> Iterator[Record]:
        for start in range(0, self.count, PART):
            records, _, _, raised = self.part(start, min(start + PART, self.count))
            yield from records
            if raised is not None:
                raise raised

    def part(
        self, start: int, stop: int
    ) -> tuple[list[Record], bytes, int | None, BaseException | None]:
        """Candidates `start` to `stop - 1`: those for which `where` holds, their numbers
        (int64 bytes), and, if `where` raised on one, its number and the exception (see
        candidates_python)."""
        return candidates(self.shape, self.domains, self.slots, start, stop, self.where, None)

    def build(self, numbers: bytes, start: int = 0, stop: int | None = None) -> list[Record]:
        """The candidates of `numbers` (int64 bytes) from the `start`-th to the `stop`-th,
        without `where` (they are those it held for)."""
        end = len(numbers) // 8 if stop is None else stop
        built = candidates(self.shape, self.domains, self.slots, start, end, None, numbers)
        return built[0]

    def covering(self) -> list[Record]:
        """Candidates that, together, have every value of every domain (the i-th has the
        i-th value of each domain, modulo its size): the kinds of the records' fields."""
        sizes = [len(d) for d in self.domains]
        if 0 in sizes:
            return []
        numbers = array("q")
        for j in range(max(sizes)):
            number = 0
            for size in sizes:
                number = number * size + j % size
            numbers.append(number)
        return self.build(numbers.tobytes())

    def __repr__(self) -> str:
        where = "" if self.where is None else f", where={getattr(self.where, '__name__', '?')}"
        return f"every({', '.join(self.names)}{where}: {self.count} candidates)"


def every(*, where: Callable[[Record], Any] | None = None, **domains: Iterable[Any]) -> Every:
    """Every record `Record(x=a, y=b, ...)` with `a` in the domain `x`, `b` in `y`, ...,
    for which `where(record)` holds (all of them without `where`): TLA+'s
    `{r \\in [x: S, y: T] : P(r)}`. Returned by `init`, the initial states
    (`Init == x \\in S /\\ y \\in T /\\ P`), which the engines build and filter in parts, on
    every worker. In the product's order (the first domain varies slowest); iterable."""
    return Every(where, domains)
