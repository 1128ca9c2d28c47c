"""The values a state is made of, as spec authors build them.

A state is a `Record`: an immutable mapping from field names to values, with attribute access
(`s.leader`). Values are None, bool, int, str, bytes, tuples, frozensets and nested Records.
Lists, sets and dicts given by a spec are frozen into tuples, frozensets and Records; floats
and arbitrary objects are refused, because model states must compare exactly.

Underneath, a Record is a tuple: its shape (the class of its set of field names) first, then
the field values in the order of their names. So Python compares and hashes states in C,
`s.leader` is a C-level field accessor, and `s.replace(...)` builds the successor in one
call. Equal content means equal tuples: the fields are kept in canonical order, and the shape
in front keeps `Record(a=1)` apart from `Record(b=1)` and from the plain tuple `(1,)`.

A mapping whose keys are not all field names (ISR members by broker id: `{0: 1, 2: 1}`) is a
`Map`, also a Record, with the same mapping API but no attribute access. `Record({...})`
picks the one that fits the keys, so each content has exactly one representation.

Freezing costs only when a mutable value is given: `replace`, `put` and `Record(...)` accept
the immutable types as they are (a tuple or frozenset built by spec code is taken as it is;
the engine checks every new state's values before it keeps it: checker.values.encoding).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any, ClassVar

from checker.errors import StateError
from checker.values import encoding, fast
from checker.values.encoding import canonical_order

__all__ = [
    "Map",
    "Record",
    "State",
    "choose",
    "freeze",
    "put",
    "update",
    "without",
]

try:  # the C-level field accessor of collections.namedtuple (CPython 3.8+)
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # another Python: a property does the same, slower

    def _tuplegetter(index: int, doc: str | None) -> Any:
        return property(lambda self: tuple.__getitem__(self, index), doc=doc)


def field_of(index: int, doc: str | None) -> Any:
    """The descriptor of a shape's field, the record's item `index`: C's where it loads (it
    notes reads, for incremental evaluation), else namedtuple's."""
    return (fast.field or _tuplegetter)(index, doc)


_item = tuple.__getitem__
_ALL_BUT_SHAPE = slice(1, None)
_MISSING = object()


def _factory(source: Any = _MISSING, /, **fields: Any) -> Record:
    """`Record(...)`: a record of the shape of the given keys."""
    if source is _MISSING:
        make = _makers.get(tuple(fields))
        return (make or _maker(tuple(fields)))(fields)
    items = dict(source)
    items.update(fields)
    if type(source) is dict and not fields and items and all(map(_is_field_name, items)):
        # as Record(**source): the maker of this key order is generated once (and, in C,
        # Record() builds such a dict's record directly from then on)
        return (_makers.get(tuple(items)) or _maker(tuple(items)))(items)
    return mapping({freeze(k): v for k, v in items.items()})


class _PyRecordType(type):
    """`Record(...)` is a factory: it returns a record of the shape of the given keys."""

    def __call__(cls, *args: Any, **fields: Any) -> Any:
        return _factory(*args, **fields)


class _PyShapeType(_PyRecordType):
    """A shape is called with the whole tuple, its shape first: `S((S, 1, 2))`. Calling a
    type with tuple's own constructor is the fastest way to build a tuple subclass."""

    __call__ = type.__call__  # type: ignore[assignment]


# With the C hot path, a Record derives from RecordBase (a tuple with `replace` in C) and
# RecordType (in C) builds it from the keywords of the call.
_Tuple: type = fast.RecordBase or tuple
_RecordType: type = fast.RecordType or _PyRecordType
_ShapeType: type = fast.RecordType or _PyShapeType


class Record(_Tuple, metaclass=_RecordType):  # type: ignore[misc,valid-type]
    """An immutable mapping with canonically ordered keys and attribute access.

    `Record(leader=0, isr={0})` freezes its values; `r.replace(leader=1)` returns a copy with
    some existing fields changed; `put(r, key, value)` and `without(r, key)` add or drop keys.
    """

    __slots__ = ()
    _keys: tuple[Any, ...] = ()  # per shape: the field names, in canonical order
    _index: ClassVar[dict[Any, int]] = {}  # per shape: field name -> position in the tuple

    # -- the mapping API (RecordBase's, in C, with the C hot path) -----------------------------

    if not fast.C:

        def keys(self) -> tuple[Any, ...]:
            """The keys, in canonical order."""
            return self._keys

        def values(self) -> tuple[Any, ...]:
            """The values, in the order of the keys."""
            return _item(self, _ALL_BUT_SHAPE)

        def items(self) -> tuple[tuple[Any, Any], ...]:
            """(key, value) pairs, in the order of the keys."""
            return tuple(zip(self._keys, _item(self, _ALL_BUT_SHAPE)))

        def get(self, key: Any, default: Any = None) -> Any:
            index = self._index.get(key)
            return default if index is None else _item(self, index)

        def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
            index = self._index.get(key)
            if index is None:
                raise KeyError(key)
            return _item(self, index)

        def __contains__(self, key: object) -> bool:
            return key in self._index

        def __iter__(self) -> Iterator[Any]:
            return iter(self._keys)

        def __len__(self) -> int:
            return len(self._keys)

        # RecordBase (C) gives the same message without slowing attribute access down
        def __getattr__(self, name: str) -> Any:  # only reached when `name` is no field
            return _no_field(self, name)

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{k}={v!r}" if _is_field_name(k) else f"{k!r}: {v!r}" for k, v in self.items()
        )
        return f"Record({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._keys, _item(self, _ALL_BUT_SHAPE)))

    def __copy__(self) -> Record:
        return self

    def __deepcopy__(self, memo: Any) -> Record:
        return self

    def _immutable(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a Record is immutable: build a new one with .replace(...) or put(...)")

    __setitem__ = __delitem__ = _immutable
    clear = pop = popitem = setdefault = update = _immutable


State = Record
"""A state is a Record of the spec's variables; the alias is for type hints."""

Mapping.register(Record)


class Map(Record, metaclass=_ShapeType):  # type: ignore[misc]
    """A Record whose keys are not all field names: (Map, keys, values), keys in canonical
    order. Looked up by `m[key]`, never by attribute."""

    __slots__ = ()

    @property
    def _keys(self) -> tuple[Any, ...]:  # type: ignore[override]
        return _item(self, 1)

    @property
    def _index(self) -> dict[Any, int]:  # type: ignore[override]
        return {k: i for i, k in enumerate(_item(self, 1))}

    if not fast.C:  # else RecordBase (C) serves maps too

        def values(self) -> tuple[Any, ...]:
            return _item(self, 2)

        def items(self) -> tuple[tuple[Any, Any], ...]:
            return tuple(zip(_item(self, 1), _item(self, 2)))

        def get(self, key: Any, default: Any = None) -> Any:
            keys = _item(self, 1)
            return _item(self, 2)[keys.index(key)] if key in keys else default

        def __getitem__(self, key: Any) -> Any:
            keys = _item(self, 1)
            if key not in keys:
                raise KeyError(key)
            return _item(self, 2)[keys.index(key)]

        def __contains__(self, key: object) -> bool:
            return key in _item(self, 1)

        def __iter__(self) -> Iterator[Any]:
            return iter(_item(self, 1))

        def __len__(self) -> int:
            return len(_item(self, 1))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (_item(self, 1), _item(self, 2)))

    def replace(self, **changes: Any) -> Record:
        """A map has no fields to replace: use put(m, key, value)."""
        for name in changes:
            raise KeyError(_unknown_field(self, name))
        return self


def _rebuild(keys: tuple[Any, ...], values: tuple[Any, ...]) -> Record:
    """A Record from keys in canonical order and frozen values (unpickling)."""
    return from_pairs(list(zip(keys, values)))  # a list: an empty one is falsy, a zip is not


# -- shapes ---------------------------------------------------------------------------------

# A field name may be any identifier that is no method of Record (tuple's `count` and `index`
# are fine: a field shadows them) and does not start with "_mc_" (generated code's names).
# (`replace` too: without the C hot path each shape gets its own, after Record is made.)
_RESERVED = frozenset(n for n in dir(Record) if n not in ("count", "index")) | {"replace"}


def _is_field_name(key: Any) -> bool:
    if type(key) is not str:
        return False
    valid = _field_names.get(key)
    if valid is None:
        valid = _field_names[key] = (
            key.isidentifier() and key not in _RESERVED and not key.startswith("_mc_")
        )
    return valid


_field_names: dict[str, bool] = {}  # every string key met, and whether it may be a field


_shapes: dict[tuple[str, ...], type[Record]] = {}

# Types whose values are immutable state values as they are. Tuples and frozensets are taken
# as built (their elements are checked when the engine encodes a new state); every Record
# shape is added when it is made.
FROZEN: set[type] = {int, str, bool, bytes, type(None), tuple, frozenset, Map}
# Types that need no look inside at all.
ATOMS: set[type] = {int, str, bool, bytes, type(None), Map}


def shape(keys: tuple[str, ...]) -> type[Record]:
    """The class of records with these field names (in canonical order)."""
    found = _shapes.get(keys)
    if found is None:
        namespace: dict[str, Any] = {
            "__slots__": (),
            "_keys": keys,
            "_index": {k: i + 1 for i, k in enumerate(keys)},
        }
        for i, key in enumerate(keys):
            namespace[key] = field_of(i + 1, f"the field {key!r}")
        found = _ShapeType("Record", (Record,), namespace)
        if not fast.C:  # else RecordBase.replace (in C) serves every shape
            found.replace = _replace_of(found, keys)  # type: ignore[attr-defined]
        _shapes[keys] = found
        FROZEN.add(found)
        ATOMS.add(found)
    return found


def _replace_of(cls: type[Record], keys: tuple[str, ...]) -> Any:
    """A `replace` for one shape, generated so that it runs as one Python call: each field is
    the old value, or the new one (frozen only if it is of a mutable type)."""
    params = "".join(f"{k}=_mc_NO, " for k in keys)
    star = "*, " if keys else ""
    if len(keys) <= 8:  # one tuple display
        fields = "".join(
            f"        _mc_self.{k} if {k} is _mc_NO else"
            f" ({k} if {k}.__class__ in _mc_FROZEN else _mc_freeze({k})),\n"
            for k in keys
        )
        body = f"    return _mc_S((_mc_S,\n{fields}    ))\n"
    else:  # a list of the old values, the changed ones set: fewer steps for wide states
        changes = "".join(
            f"    if {k} is not _mc_NO:\n"
            f"        _mc_v[{i + 1}] = {k} if {k}.__class__ in _mc_FROZEN else _mc_freeze({k})\n"
            for i, k in enumerate(keys)
        )
        body = f"    _mc_v = list(_mc_item(_mc_self, _mc_ALL))\n{changes}    return _mc_S(_mc_v)\n"
    source = (
        f"def replace(_mc_self, /, {star}{params}**_mc_rest):\n"
        "    if _mc_rest:\n"
        "        _mc_unknown(_mc_self, _mc_rest)\n"
        f"{body}"
    )
    namespace = {
        "_mc_NO": _MISSING,
        "_mc_S": cls,
        "_mc_item": _item,
        "_mc_ALL": slice(None),
        "_mc_FROZEN": FROZEN,
        "_mc_freeze": freeze,
        "_mc_unknown": _raise_unknown,
    }
    exec(source, namespace)
    replace = namespace["replace"]
    replace.__doc__ = "A copy with the named existing fields set to new values."
    replace.__qualname__ = "Record.replace"
    return replace


def _no_field(record: Record, name: str) -> Any:
    raise AttributeError(_unknown_field(record, name))


def _raise_unknown(record: Record, changes: dict[str, Any]) -> None:
    raise KeyError(_unknown_field(record, next(iter(changes))))


def _unknown_field(record: Record, name: str) -> str:
    names = [k for k in record if isinstance(k, str)]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"no field {name!r} (fields: {', '.join(names)}){hint}"


# Keyword order as written (`Record(type=..., rm=...)`) -> a function building the record
# from the keyword dict: generated, so that it reads each field and checks its type inline.
_makers: dict[tuple[str, ...], Any] = {}
# A dict's int keys as it lists them -> in order (a spec builds many functions over the same
# numbers); at most _ORDERS of them.
_int_orders: dict[tuple[int, ...], tuple[int, ...]] = {}
_ORDERS = 4096


def _maker(order: tuple[str, ...]) -> Any:
    for key in order:
        if not _is_field_name(key):
            raise StateError(f"{key!r} cannot be a field name: it is a method of Record")
    keys = tuple(sorted(order))
    if fast.maker is not None:  # new() freezes what is not an atom, in C; Record(...) too
        fast.maker(order, shape(keys), tuple(order.index(k) for k in keys))
        fields = "".join(f"_mc_f[{k!r}], " for k in keys)
        source = f"def make(_mc_f):\n    return _mc_new(_mc_S, {fields})\n"
    else:
        fields = "".join(
            f"        _mc_f[{k!r}] if _mc_f[{k!r}].__class__ in _mc_ATOMS"
            f" else _mc_freeze(_mc_f[{k!r}]),\n"
            for k in keys
        )
        source = f"def make(_mc_f):\n    return _mc_S((_mc_S,\n{fields}    ))\n"
    namespace = {
        "_mc_S": shape(keys),
        "_mc_ATOMS": ATOMS,
        "_mc_freeze": freeze,
        "_mc_new": fast.new,
    }
    exec(source, namespace)
    _makers[order] = make = namespace["make"]
    return make


def mapping(items: dict[Any, Any]) -> Record:
    """The Record of a dict whose keys are frozen: a shape if every key is a field name,
    else a Map; values are frozen."""
    if all(map(_is_field_name, items)):
        keys = tuple(sorted(items))
        cls = shape(keys)
        return cls((cls, *[freeze(items[k]) for k in keys]))
    keys = tuple(canonical_order(items))
    return Map((Map, keys, tuple([freeze(items[k]) for k in keys])))


def from_pairs(pairs: Iterable[tuple[Any, Any]]) -> Record:
    """A Record from (key, value) pairs already frozen and in canonical order (decoding)."""
    keys, values = zip(*pairs) if pairs else ((), ())
    cls = _shapes.get(keys)
    if cls is not None:
        return cls((cls, *values))
    if all(map(_is_field_name, keys)):
        cls = shape(keys)
        return cls((cls, *values))
    return Map((Map, keys, values))


def freeze_python(value: Any) -> Any:
    """Return `value` as an immutable state value, or raise StateError (the twin of
    checker._hot's freeze, which calls this for what it does not freeze itself: a Mapping
    other than a dict of int keys or of field names in an order met before, an empty dict,
    a namedtuple, a value it refuses)."""
    kind = type(value)
    if kind in ATOMS:
        return value
    if kind is tuple:
        for item in value:
            if type(item) not in ATOMS:
                return tuple([freeze_python(x) for x in value])
        return value
    if kind is frozenset or kind is set:
        for item in value:
            if type(item) not in ATOMS:
                return frozenset([freeze_python(x) for x in value])
        return value if kind is frozenset else frozenset(value)
    if kind is list or (isinstance(value, tuple) and not isinstance(value, Record)):
        # lists and namedtuples become plain tuples
        return tuple([freeze_python(x) for x in value])
    if isinstance(value, Record):  # a Record of a shape made in another way (unpickled)
        return value
    if kind is dict and value:
        keys = tuple(value)
        for key in keys:
            if key.__class__ is not int:
                break
        else:  # int keys (not bools), a function over numbers: as mapping() makes it
            order = _int_orders.get(keys)
            if order is None:
                order = tuple(sorted(keys))
                if len(_int_orders) < _ORDERS:
                    _int_orders[keys] = order
            return Map((Map, order, tuple([freeze_python(value[k]) for k in order])))
    if isinstance(value, Mapping):
        return mapping({freeze(k): v for k, v in value.items()})
    if isinstance(value, float):
        raise StateError(f"floats cannot be part of a state (got {value!r}); use ints")
    raise StateError(f"a {kind.__name__} cannot be part of a state (got {value!r})")


freeze = fast.pick(freeze_python)


def put_python(container: Any, key: Any, value: Any) -> Any:
    """`container` with `key` set to `value`: a tuple by index or a Record by key (the twin
    of checker._hot's put, which calls this for records and maps)."""
    if value.__class__ not in FROZEN:
        value = freeze(value)
    if container.__class__ is tuple:
        items = list(container)
        if key.__class__ is int and key >= 0:
            try:
                items[key] = value
                return tuple(items)
            except IndexError:
                pass
        raise IndexError(f"put(): index {key!r} out of range for a tuple of {len(container)}")
    if isinstance(container, Map):
        keys, values = _item(container, 1), _item(container, 2)
        if key in keys:
            items = list(values)
            items[keys.index(key)] = value
            return Map((Map, keys, tuple(items)))
        return mapping({**dict(zip(keys, values)), freeze(key): value})
    if isinstance(container, Record):
        index = container._index.get(key)
        if index is not None:
            items = list(_item(container, slice(None)))
            items[index] = value
            return type(container)(items)
        return mapping({**dict(container.items()), freeze(key): value})
    raise StateError(f"put() takes a tuple or a Record, not a {type(container).__name__}")


def update_python(container: Any, *path: Any) -> Any:
    """`container` with the value at `path` replaced by a function of it, as TLA+'s
    `[s EXCEPT !.faults[f] = @ + 1]`: `update(s, "faults", f, lambda n: n + 1)` is
    `s.replace(faults=put(s.faults, f, s.faults[f] + 1))`. The last argument is the function;
    before it, the path: field names, map keys or tuple indexes, outermost first. (The twin
    of checker._hot's update.)"""
    if len(path) < 2:
        raise TypeError("update(container, key, ..., fn) needs a key before the function")
    *keys, fn = path
    if not callable(fn):
        raise TypeError(f"update(): the last argument is a function of the old value, not {fn!r}")
    return _updated(container, keys, fn)


def _updated(container: Any, keys: list[Any], fn: Any) -> Any:
    key, rest = keys[0], keys[1:]
    try:
        old = container[key]
    except (KeyError, IndexError, TypeError) as exc:
        raise type(exc)(f"update(): no {key!r} in {container!r}") from None
    return put(container, key, _updated(old, rest, fn) if rest else fn(old))


update = fast.pick(update_python)


def without_python(record: Record, *keys: Any) -> Record:
    """`record` without the given keys (missing keys are ignored)."""
    if type(record) is not Map:  # a shape: the smaller shape, found once per key set
        drop = _droppers.get((type(record), keys))
        if drop is None:
            drop = _dropper(type(record), keys)
        return drop(record)
    return mapping({k: v for k, v in record.items() if k not in keys})


# (shape, keys dropped) -> a function from a record of that shape to the smaller record.
_droppers: dict[tuple[type, tuple[Any, ...]], Any] = {}


def take_python(shape: type[Record], indices: tuple[int, ...], record: Record) -> Record:
    """The record of `shape` whose fields are those of `record` at `indices` (positions in
    the tuple, from 1)."""
    return shape((shape, *[_item(record, i) for i in indices]))  # type: ignore[call-arg]


take = fast.pick(take_python)


def drop_plan(cls: type[Record], dropped: tuple[Any, ...]) -> tuple[type, tuple[int, ...]]:
    """The shape of a record of shape `cls` without the keys `dropped`, and the positions of
    the fields it keeps."""
    kept = tuple(k for k in cls._keys if k not in dropped)
    return shape(kept), tuple(cls._index[k] for k in kept)


def _dropper(cls: type[Record], dropped: tuple[Any, ...]) -> Any:
    _droppers[(cls, dropped)] = drop = partial(take, *drop_plan(cls, dropped))
    return drop


without = fast.pick(without_python)


# In C: tuples there (the common case: `put(s.log, b, ...)`), records and maps in put_python.
put = fast.pick(put_python)
fast.configure_records(
    FROZEN,
    ATOMS,
    freeze_python,
    _raise_unknown,
    put_python,
    StateError,
    Map,
    _no_field,
    Record,
    _factory,
    _shapes,
    from_pairs,
    without_python,
    drop_plan,
)
encoding.configure(FROZEN, Record, Map, from_pairs)


# -- CHOOSE ---------------------------------------------------------------------------------


def choose(values: Iterable[Any], predicate: Any = None) -> Any:
    """TLA+'s `CHOOSE v \\in S : P(v)`: the first value of `values` for which `predicate`
    holds (any value, without one), in TLC's order when `values` is a set: ints ascending,
    tuples by length then element by element, sets by size then their elements, records by
    their fields, so that the choice is TLC's. TLC orders strings (and model values) as it
    first met them in the modules, which mc cannot know: give such values as a tuple in that
    order (a tuple or list is walked in its own order). No such value is an error, as in
    TLC: ValueError."""
    ordered = sorted(values, key=_tlc_order) if isinstance(values, (set, frozenset)) else values
    for value in ordered:
        if predicate is None or predicate(value):
            return value
    raise ValueError("CHOOSE: no value satisfies the predicate")


def _tlc_order(value: Any) -> tuple[Any, ...]:
    """A sort key that orders values as TLC compares them (strings: lexicographically)."""
    cls = value.__class__
    if cls is bool:
        return (0, value)
    if cls is int:
        return (1, value)
    if cls is str:
        return (2, value)
    if value is None:
        return (3,)
    if cls is bytes:
        return (4, value)
    if cls is tuple:
        return (5, len(value), tuple(map(_tlc_order, value)))
    if cls is frozenset:
        return (6, len(value), tuple(sorted(map(_tlc_order, value))))
    if isinstance(value, Record):
        pairs = sorted((_tlc_order(k), _tlc_order(v)) for k, v in value.items())
        return (7, len(pairs), tuple(pairs))
    raise StateError(f"CHOOSE: {value!r} cannot be part of a state")
