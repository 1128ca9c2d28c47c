"""The engine's side of state values: their canonical msgpack encoding and the fingerprint.

The encoding is canonical: a Record is a msgpack map with its keys in canonical order, a
tuple an array, and a frozenset an extension holding an array of its elements' encodings in
sorted order. Two equal states therefore have the same bytes on every process and machine,
and the fingerprint (xxh3-64 of those bytes) is stable too; Python's `hash()` is never used
for it (it changes with PYTHONHASHSEED). The encoding is what crosses processes, reaches disk
(frontier spill, checkpoints) and travels to Spark executors.

Encoding is also where a state's values are checked: a tuple or frozenset built by spec code
is taken as it is by `replace` and `put`, so a float or an object inside one is refused here,
when the engine first meets the state.

`encode`, `encode_state` and `decode` run in C with the hot path (checker.values.fast); the
Python twins are here, and know records through what checker.values.record hands them
(`configure`), as the C ones do: this module imports no record code. `canonical_order`, the
order of set elements and map keys, is the order of their encodings.
"""

from __future__ import annotations

import itertools
import reprlib
from array import array
from collections.abc import Callable, Iterable
from typing import Any

import msgpack
import xxhash

from checker.errors import StateError
from checker.values import fast

__all__ = [
    "MAX_DEPTH",
    "NESTED",
    "canonical_order",
    "decode",
    "decode_all",
    "deeper_than",
    "element_encoding",
    "encode",
    "encode_state",
    "encoded",
    "fingerprint",
]

SET_EXT = 1  # msgpack extension code of a frozenset: the sorted encodings of its elements
MAX_DEPTH = 500  # levels of nested values in a state (checker/hot/encode.c's put_value too)
NESTED = f"a state value nested deeper than {MAX_DEPTH} levels"

_item = tuple.__getitem__
_VALUES = slice(1, None)
# Field values packed as they are (no look inside); everything else goes through _default.
_PLAIN = frozenset({int, str, bool, bytes, type(None)})


class _NoRecord:
    """Stands for the record classes until checker.values.record hands them over."""


# What the twins know of records (`configure`): the types whose values are frozen as they are
# (every record shape is added when it is made), the Record and Map classes, and the record of
# decoded (key, value) pairs.
_FROZEN: set[type] = {int, str, bool, bytes, type(None), tuple, frozenset}
_Record: type = _NoRecord
_Map: type = _NoRecord
_from_pairs: Any = None


def configure(frozen: set[type], record: type, map_type: type, from_pairs: Any) -> None:
    """What the Python twins need of checker.values.record (which imports this module)."""
    global _FROZEN, _Record, _Map, _from_pairs
    _FROZEN, _Record, _Map, _from_pairs = frozen, record, map_type, from_pairs


def _default(value: Any) -> Any:
    """What msgpack cannot pack by itself: with strict types it packs only exact dicts,
    lists and atoms. A Record becomes a dict in key order, a tuple a list."""
    kind = type(value)
    if kind is tuple:
        if not _FROZEN.issuperset(map(type, value)):
            _refuse_elements(value)
        return list(value)
    as_dict = _as_dict.get(kind)
    if as_dict is not None:
        return as_dict(value)
    if kind is frozenset:
        return _set_extension(value)
    if kind is _Map:
        return dict(zip(_item(value, 1), _item(value, 2)))
    if isinstance(value, _Record):
        _as_dict[kind] = as_dict = _dict_maker(kind._keys)
        return as_dict(value)
    if kind is int:
        raise StateError(f"cannot encode {value}: integers must fit in 64 bits")
    raise StateError(f"a {kind.__name__} cannot be part of a state (got {value!r})")


# Per Record shape: a function building the dict msgpack packs for it (generated, so that
# it is one dict display of field reads).
_as_dict: dict[type, Any] = {}


def _dict_maker(keys: tuple[str, ...]) -> Any:
    fields = ", ".join(f"{k!r}: _mc_v.{k}" for k in keys)
    namespace: dict[str, Any] = {}
    exec(f"def as_dict(_mc_v):\n    return {{{fields}}}\n", namespace)
    return namespace["as_dict"]


def _refuse_elements(values: Any) -> None:
    for value in values:
        if type(value) not in _FROZEN:
            if isinstance(value, float):
                raise StateError(f"floats cannot be part of a state (got {value!r}); use ints")
            raise StateError(f"a {type(value).__name__} cannot be part of a state (got {value!r})")


def _set_extension(value: frozenset[Any]) -> msgpack.ExtType:
    if not value:
        return _EMPTY_SET
    # The successors of a state share its unchanged sets: encode each set object once.
    ext = _set_encodings.get(id(value))
    if ext is not None:
        return ext
    if not _FROZEN.issuperset(map(type, value)):
        _refuse_elements(value)
    elements = list(map(_element_encodings.get, map(id, value)))
    if None in elements:  # a set built from another shares its elements: encode new ones
        elements = [_element(v) if e is None else e for v, e in zip(value, elements)]
    elements.sort()
    ext = _ext(SET_EXT, _array_header(len(elements)) + b"".join(elements))
    _remember(_set_encodings, _sets_kept, value, ext)
    return ext


def canonical_order(values: Iterable[Any]) -> list[Any]:
    """A deterministic order for set elements and map keys, the same in every process:
    natural order when all are ints or all are strings, else the order of their encodings
    (frozensets are only partially ordered by `<`, so sorted() would depend on input order).
    Iterate a set in this order when the order matters: `for m in canonical_order(s.msgs)`."""
    values = list(values)
    kinds = set(map(type, values))
    if kinds <= {int, bool} or kinds == {str}:
        return sorted(values)
    return sorted(values, key=element_encoding)


def _element(value: Any) -> bytes:
    data = encode(value)
    _remember(_element_encodings, _elements_kept, value, data)
    return data


def element_encoding(value: Any) -> bytes:
    """`encode(value)` for a value that is (or will be) a set element: cached by identity."""
    data = _element_encodings.get(id(value))
    return data if data is not None else _element(value)


def _remember(cache: dict[int, Any], kept: list[Any], value: Any, encoding: Any) -> None:
    """Cache an encoding by the identity of its (immutable) value. The cache holds the value
    itself, so that its id cannot be reused by another object while the entry exists."""
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
        kept.clear()
    cache[id(value)] = encoding
    kept.append(value)


def _array_header(size: int) -> bytes:
    """msgpack's header of an array of `size` items (a set is such an array inside the
    extension, so one C call decodes it)."""
    if size < 16:
        return bytes((0x90 | size,))
    if size < 1 << 16:
        return b"\xdc" + size.to_bytes(2, "big")
    return b"\xdd" + size.to_bytes(4, "big")


def _map_header(size: int) -> bytes:
    if size < 16:
        return bytes((0x80 | size,))
    if size < 1 << 16:
        return b"\xde" + size.to_bytes(2, "big")
    return b"\xdf" + size.to_bytes(4, "big")


def _ext(code: int, data: bytes) -> msgpack.ExtType:
    """msgpack.ExtType without its argument checks (a third of a set's encoding time)."""
    return tuple.__new__(msgpack.ExtType, (code, data))


_EMPTY_SET = _ext(SET_EXT, _array_header(0))
_CACHE_SIZE = 1 << 16
_set_encodings: dict[int, msgpack.ExtType] = {}  # id of a set -> its extension
_sets_kept: list[frozenset[Any]] = []
_element_encodings: dict[int, bytes] = {}  # id of a set element -> its encoding
_elements_kept: list[Any] = []
# One Packer per nesting level: `_default` encodes set elements while an outer pack is still
# in progress, and a Packer must not be re-entered. strict_types: tuples and Records (tuple
# subclasses) come to `_default` instead of being packed as msgpack arrays.
_packers: list[msgpack.Packer] = []
_depth = 0


def encode_python(value: Any) -> bytes:
    """The canonical msgpack bytes of a frozen state value."""
    global _depth
    if _depth == len(_packers):
        _packers.append(msgpack.Packer(default=_default, use_bin_type=True, strict_types=True))
    packer = _packers[_depth]
    _depth += 1
    try:
        return packer.pack(value)
    except UnicodeEncodeError as exc:
        raise _unencodable_text(exc) from None
    except (OverflowError, ValueError) as exc:
        if deeper_than(value, MAX_DEPTH):  # msgpack's own limit is a little deeper
            raise StateError(NESTED) from None
        raise StateError(f"cannot encode {reprlib.repr(value)}: {exc}") from None
    finally:
        _depth -= 1


def encode_state_python(state: Any) -> bytes:
    """`encode(state)`, for the states an engine meets: a successor built by `replace` shares
    its unchanged field values (the same objects) with its parent, so the encoding of each
    field value is cached by the value's identity, and only changed fields are packed."""
    kind = type(state)
    encoder = _state_encoders.get(kind)
    if encoder is None:
        if kind is _Map or not isinstance(state, _Record):
            return encode_python(state)
        _state_encoders[kind] = encoder = _state_encoder(kind._keys)
    return encoder(state)


def _state_encoder(keys: tuple[str, ...]) -> Any:
    """The encoder of one shape of states: the map header and each key's encoding are
    constants, each field's encoding comes from the cache (generated: one call per state)."""
    heads = [encode_python(k) for k in keys]
    if heads:
        heads[0] = _map_header(len(keys)) + heads[0]
    parts = "".join(
        f"_mc_k{i}, _mc_get(id(_mc_v{i} := _mc_s.{k})) or _mc_miss(_mc_v{i}), "
        for i, k in enumerate(keys)
    )
    source = f"def encode_state(_mc_s):\n    return b''.join(({parts}))\n"
    if not keys:
        source = "def encode_state(_mc_s):\n    return _mc_empty\n"
    namespace: dict[str, Any] = {
        "_mc_get": _field_encodings.get,
        "_mc_miss": _field_encoding,
        "_mc_empty": _map_header(0),
        **{f"_mc_k{i}": head for i, head in enumerate(heads)},
    }
    exec(source, namespace)
    return namespace["encode_state"]


def _field_encoding(value: Any) -> bytes:
    """The encoding of a field value that is not in the cache (and now is)."""
    kind = type(value)
    if kind in _PLAIN or (kind is tuple and _PLAIN.issuperset(map(type, value))):
        data = _plain(value)  # atoms, and tuples of atoms, need no hook
    else:
        data = encode_python(value)
    _remember(_field_encodings, _fields_kept, value, data)
    return data


_state_encoders: dict[type, Any] = {}
_field_encodings: dict[int, bytes] = {}  # id of a field value -> its encoding
_fields_kept: list[Any] = []


def forget_encodings_python() -> None:
    """Empty the caches of encodings by identity (of fields, sets and set elements), dropping
    the values they hold: for a process that meets other states next (a Spark task's states
    are decoded afresh, so no entry of the previous task's would be used again)."""
    for cache, kept in (
        (_field_encodings, _fields_kept),
        (_set_encodings, _sets_kept),
        (_element_encodings, _elements_kept),
    ):
        cache.clear()
        kept.clear()


def _plain(value: Any) -> bytes:
    """The encoding of an atom or a tuple of atoms (no hook needed: tuples packed as arrays)."""
    try:
        return _plain_packer.pack(value)
    except OverflowError:
        raise StateError(f"cannot encode {value!r}: integers must fit in 64 bits") from None
    except UnicodeEncodeError as exc:
        raise _unencodable_text(exc) from None


def _unencodable_text(exc: UnicodeEncodeError) -> StateError:
    """A str that UTF-8 cannot encode (a lone surrogate, as `"\udc80"` or a file name read
    with surrogateescape), in the C encoder's words."""
    return StateError(
        "a str that is not valid Unicode text (a lone surrogate) cannot be part of a state"
        f" (got {exc.object!r})"
    )


def deeper_than(value: Any, depth: int) -> bool:
    """Whether `value` nests tuples, frozensets or Records more than `depth` levels deep
    (without recursion: the value may be too deep for Python's)."""
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > depth:
            return True
        if isinstance(item, tuple):  # a Record too: its class, then its values
            stack.extend((inner, level + 1) for inner in tuple.__iter__(item))
        elif isinstance(item, frozenset):
            stack.extend((inner, level + 1) for inner in item)
    return False


_plain_packer = msgpack.Packer(use_bin_type=True)


def _ext_hook(code: int, data: bytes) -> Any:
    if code == SET_EXT:
        return frozenset(decode_python(data))
    raise StateError(f"unknown msgpack extension type {code}")


def decode_python(data: bytes) -> Any:
    """The state value that `encode` turned into `data`."""
    return msgpack.unpackb(
        data,
        use_list=False,
        object_pairs_hook=_from_pairs,
        ext_hook=_ext_hook,
        strict_map_key=False,
        raw=False,
    )


def decode_all_python(blob: bytes, offsets: bytes) -> list[Any]:
    """The states encoded back to back in `blob`, at uint64 `offsets` (one more than the
    states). In C, byte-equal values among them decode to one object."""
    raw = memoryview(offsets).cast("B")
    if len(raw) == 0 or len(raw) % 8:
        raise ValueError("offsets must be uint64s, one more than the states")
    bounds = raw.cast("Q")
    if any(a > b for a, b in itertools.pairwise(bounds)) or bounds[-1] > len(blob):
        raise ValueError("offsets out of order or past the blob's end")
    view = memoryview(blob)
    return [decode_python(view[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1)]


def encoded_python(
    states: list[Any],
    start: int,
    fingerprint: Callable[[bytes], int],
    encodings: list[bytes],
    views: list[Any] | None,
) -> bytes:
    """encode_state() of each of `states[start:]`, appended to `encodings`; their
    fingerprints returned as uint64s (native order); with `views` (aligned with `states`),
    the fingerprints of the views' encodings instead. On an error the encodings made so far
    stay appended."""
    fps = array("Q")
    for k in range(max(start, 0), len(states)):
        data = encode_state(states[k])
        encodings.append(data)
        fps.append(fingerprint(data if views is None else encode_state(views[k])))
    return fps.tobytes()


# The 64-bit fingerprint (unsigned) of an encoded state: xxh3, the builtin itself (no Python
# call in between on the hot path, where it runs once per candidate).
fingerprint: Callable[[bytes], int] = xxhash.xxh3_64_intdigest


# The same bytes in C: fast enough to encode every new state whole.
encode = fast.pick(encode_python)
encode_state = fast.pick(encode_state_python)
encoded = fast.pick(encoded_python)
decode = fast.pick(decode_python)
decode_all = fast.pick(decode_all_python)
forget_encodings = fast.pick(forget_encodings_python)
