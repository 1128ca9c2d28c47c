"""Immutable state values, their canonical msgpack encoding and the 64-bit fingerprint.

A state is a `Record`: an immutable mapping from variable names to values, with attribute
access (`s.leader`). Values are None, bool, int, str, bytes, tuples, frozensets and nested
Records. Lists, sets and dicts given by a spec are frozen into tuples, frozensets and Records;
floats and arbitrary objects are refused, because model states must compare exactly.

The encoding is canonical: Record keys are kept sorted, and a frozenset is a msgpack extension
holding an array of its elements in the order of their own encodings. Two equal states
therefore have the same bytes on every process and machine, and the fingerprint (xxh3-64 of
those bytes) is stable too; Python's `hash()` of strings is never used (it changes with
PYTHONHASHSEED).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

import msgpack
import xxhash

__all__ = [
    "DeltaEncoder",
    "Record",
    "State",
    "StateError",
    "canonical_order",
    "decode",
    "decode_with_encoder",
    "encode",
    "fingerprint",
    "freeze",
    "put",
    "without",
]

_SET_EXT = 1  # msgpack extension code of a frozenset: the sorted encodings of its elements


class StateError(TypeError):
    """A value that cannot be part of a state (a float, an object, an unsortable key...)."""


def canonical_order(values: Iterable[Any]) -> list[Any]:
    """A deterministic order for set elements and record keys, the same in every process:
    natural order when all are ints or all are strings, else the order of their encodings
    (frozensets are only partially ordered by `<`, so sorted() would depend on input order)."""
    values = list(values)
    kinds = {type(v) for v in values}
    if kinds <= {int, bool} or kinds == {str}:
        return sorted(values)
    return sorted(values, key=encode)


class Record(dict):
    """An immutable, canonically ordered mapping with attribute access.

    `Record(leader=0, isr={0})` freezes its values; `r.replace(leader=1)` returns a copy with
    some existing fields changed; `put(r, key, value)` and `without(r, key)` add or drop keys.
    """

    __slots__ = ("_hash",)  # computed on first use: records are often set elements

    def __init__(self, *args: Any, **fields: Any) -> None:
        items = dict(*args, **fields) if args else fields
        if not _RESERVED.isdisjoint(items):
            key = min(k for k in items if isinstance(k, str) and k in _RESERVED)
            raise StateError(f"{key!r} cannot be a field name: it is a method of Record")
        if not args:  # keyword fields only (the common case): string keys, sorted
            for key in sorted(items):
                dict.__setitem__(self, key, freeze(items[key]))
        else:
            frozen = {freeze(k): freeze(v) for k, v in items.items()}
            dict.__init__(self, ((k, frozen[k]) for k in canonical_order(frozen)))
        self.__class__ = _shape(tuple(self))

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(_unknown_field(self, name)) from None

    def replace(self, **changes: Any) -> Record:
        """A copy with the named existing fields set to new values (keys keep their order)."""
        for name in changes:
            if name not in self:
                raise KeyError(_unknown_field(self, name))
        new = Record.__new__(type(self))  # same keys, same shape
        dict.update(new, self)
        for name, value in changes.items():
            dict.__setitem__(new, name, freeze(value))
        return new

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return _cached_hash(self)  # the slot itself: no __getattr__ fallback
        except AttributeError:
            self._hash: int = hash(tuple(self.items()))
            return self._hash

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{k}={v!r}" if isinstance(k, str) and k.isidentifier() else f"{k!r}: {v!r}"
            for k, v in self.items()
        )
        return f"Record({inner})"

    def _immutable(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a Record is immutable: build a new one with .replace(...) or put(...)")

    __setitem__ = __delitem__ = __ior__ = _immutable  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _immutable  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_record_from_pairs, (list(self.items()),))


_cached_hash = Record._hash.__get__  # type: ignore[attr-defined]

State = Record
"""A state is a Record of the spec's variables; the alias is for type hints."""

_RESERVED = frozenset(dir(Record))


def _unknown_field(record: Record, name: str) -> str:
    names = [k for k in record if isinstance(k, str)]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"no field {name!r} (fields: {', '.join(names)}){hint}"


def _record_from_pairs(pairs: Iterable[tuple[Any, Any]]) -> Record:
    """Build a Record from pairs that are already frozen and in canonical order."""
    record = Record.__new__(Record)
    dict.update(record, pairs)
    record.__class__ = _shape(tuple(record))
    return record


# Field access is the commonest operation of spec code. `Record.__getattr__` runs only after
# the normal lookup failed (slow: ~0.4 us), so each set of string keys gets its own subclass
# with a property per field (~0.04 us). Records of other keys (maps by broker id...) stay
# plain Records, so there are as many shapes as the spec has kinds of records.
_shapes: dict[tuple[Any, ...], type[Record]] = {}


def _shape(keys: tuple[Any, ...]) -> type[Record]:
    shape = _shapes.get(keys)
    if shape is None:
        if all(type(k) is str and k.isidentifier() for k in keys):
            fields = {k: property(itemgetter(k)) for k in keys}
            shape = type("Record", (Record,), {"__slots__": (), **fields})
            _ATOMS.add(shape)
        else:
            shape = Record
        _shapes[keys] = shape
    return shape


_ATOMS = {int, str, bool, bytes, type(None), Record}  # and every shape of Record


def freeze(value: Any) -> Any:
    """Return `value` as an immutable state value, or raise StateError."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is tuple:
        for item in value:
            if type(item) not in _ATOMS:
                return tuple(freeze(x) for x in value)
        return value
    if kind is frozenset or kind is set:
        return frozenset(freeze(x) for x in value)
    if kind is list or isinstance(value, tuple):  # lists and namedtuples become plain tuples
        return tuple(freeze(x) for x in value)
    if isinstance(value, Mapping):
        return value if isinstance(value, Record) else Record(value)
    if isinstance(value, float):
        raise StateError(f"floats cannot be part of a state (got {value!r}); use ints")
    raise StateError(f"a {kind.__name__} cannot be part of a state (got {value!r})")


def put(container: Any, key: Any, value: Any) -> Any:
    """`container` with `key` set to `value`: a tuple by index or a Record by key."""
    if type(container) is tuple:
        if not (type(key) is int and 0 <= key < len(container)):
            raise IndexError(f"put(): index {key!r} out of range for a tuple of {len(container)}")
        return container[:key] + (freeze(value),) + container[key + 1 :]
    if isinstance(container, Record):
        if key in container:
            new = Record.__new__(type(container))
            dict.update(new, container)
            dict.__setitem__(new, key, freeze(value))
            return new
        return Record({**container, key: value})
    raise StateError(f"put() takes a tuple or a Record, not a {type(container).__name__}")


def without(record: Record, *keys: Any) -> Record:
    """`record` without the given keys (missing keys are ignored)."""
    return _record_from_pairs((k, v) for k, v in record.items() if k not in keys)


def _default(value: Any) -> Any:
    if type(value) is frozenset:
        if not value:
            return _EMPTY_SET
        # The successors of a state share its unchanged sets: encode each set object once.
        cached = _set_encodings.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        elements = sorted(map(_element, value))
        ext = msgpack.ExtType(_SET_EXT, _array_header(len(elements)) + b"".join(elements))
        if len(_set_encodings) >= _CACHE_SIZE:
            _set_encodings.clear()
        _set_encodings[id(value)] = (value, ext)  # holding `value` keeps its id unique
        return ext
    if isinstance(value, int):
        raise StateError(f"cannot encode {value}: integers must fit in 64 bits")
    raise StateError(f"a {type(value).__name__} cannot be part of a state (got {value!r})")


def _element(value: Any) -> bytes:
    """The encoding of a set element. A set built from another (`s.msgs | {m}`) shares its
    element objects, so element encodings are cached by identity too (values are immutable)."""
    cached = _element_encodings.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1]
    data = encode(value)
    if len(_element_encodings) >= _CACHE_SIZE:
        _element_encodings.clear()
    _element_encodings[id(value)] = (value, data)
    return data


def _array_header(size: int) -> bytes:
    """msgpack's header of an array of `size` items (a set is such an array inside the
    extension, so one C call decodes it)."""
    if size < 16:
        return bytes((0x90 | size,))
    if size < 1 << 16:
        return b"\xdc" + size.to_bytes(2, "big")
    return b"\xdd" + size.to_bytes(4, "big")


_EMPTY_SET = msgpack.ExtType(_SET_EXT, _array_header(0))
_CACHE_SIZE = 4096
_set_encodings: dict[int, tuple[frozenset[Any], msgpack.ExtType]] = {}
_element_encodings: dict[int, tuple[Any, bytes]] = {}
# One Packer per nesting level: `_default` encodes set elements while an outer pack is still
# in progress, and a Packer must not be re-entered.
_packers: list[msgpack.Packer] = []
_depth = 0


def encode(value: Any) -> bytes:
    """The canonical msgpack bytes of a frozen state value."""
    global _depth
    if _depth == len(_packers):
        _packers.append(msgpack.Packer(default=_default, use_bin_type=True))
    packer = _packers[_depth]
    _depth += 1
    try:
        return packer.pack(value)
    except (OverflowError, ValueError) as exc:
        raise StateError(f"cannot encode {value!r}: {exc}") from None
    finally:
        _depth -= 1


class DeltaEncoder:
    """Encodes the successors of one state. A successor built by `replace`/`put` shares its
    unchanged field values (the same objects) with the state, so their encodings are copied
    from the state's own bytes instead of being packed again. The bytes are exactly
    `encode(successor)`. Build it with `decode_with_encoder`."""

    __slots__ = ("_fields", "_header", "_keys", "_values")

    def __init__(
        self, header: bytes, keys: list[bytes], fields: list[bytes], values: list[Any]
    ) -> None:
        self._header = header
        self._keys = keys  # the encoding of each key
        self._fields = fields  # the encoding of each key and its value
        self._values = values

    def encode(self, succ: Record) -> bytes:
        """`encode(succ)` for a Record with the same keys as the state."""
        parts = [self._header]
        append = parts.append
        for field, key, old, new in zip(self._fields, self._keys, self._values, succ.values()):
            append(field if new is old else key + encode(new))
        return b"".join(parts)


def decode_with_encoder(data: bytes) -> tuple[Record, DeltaEncoder]:
    """Decode an encoded state, and note where each field's bytes are for its successors."""
    global _reader
    reader = _reader  # reused: building an Unpacker costs more than decoding a small state
    reader.feed(data)
    try:
        base = reader.tell()
        size = reader.read_map_header()
        tell, unpack = reader.tell, reader.unpack
        header_end = tell() - base
        names, values, keys, fields = [], [], [], []
        for _ in range(size):
            start = tell() - base
            names.append(unpack())
            middle = tell() - base
            values.append(unpack())
            end = tell() - base
            keys.append(data[start:middle])
            fields.append(data[start:end])
    except BaseException:
        _reader = _unpacker()  # drop whatever is left in the buffer
        raise
    state = _record_from_pairs(zip(names, values))
    return state, DeltaEncoder(data[:header_end], keys, fields, values)


def _unpacker() -> msgpack.Unpacker:
    return msgpack.Unpacker(
        use_list=False,
        object_pairs_hook=_record_from_pairs,
        ext_hook=_ext_hook,
        strict_map_key=False,
        raw=False,
    )


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _SET_EXT:
        return frozenset(decode(data))
    raise StateError(f"unknown msgpack extension type {code}")


_reader = _unpacker()


def decode(data: bytes) -> Any:
    """The state value that `encode` turned into `data`."""
    return msgpack.unpackb(
        data,
        use_list=False,
        object_pairs_hook=_record_from_pairs,
        ext_hook=_ext_hook,
        strict_map_key=False,
        raw=False,
    )


def fingerprint(data: bytes) -> int:
    """The 64-bit fingerprint (unsigned) of an encoded state."""
    return xxhash.xxh3_64_intdigest(data)
