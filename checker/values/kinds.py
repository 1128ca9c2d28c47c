"""The kinds of state variables (TLA+'s TypeOK, inferred): what each variable holds, taken
from the initial states, so that an action that changes one (an int that becomes a bool, a
frozenset that becomes a tuple, a record that gains a field) is reported at that action,
before any invariant sees the state.

A kind is a tuple (tag, a, b), read by the C hot path (checker.values.fast) as well as here:

    ANY                        anything (nothing is known: an empty tuple's elements)
    INT, BOOL, STR, BYTES      exactly that type (True is a bool, never an int)
    NONE                       None (declared only)
    OPTIONAL(x)                None or x (a None in the initial states is None-or-anything)
    TUPLE(x)                   a tuple whose elements are all x
    FIXED((x1, ..., xn))       a tuple of n elements, of kinds x1 ... xn
    SET(x)                     a frozenset of x
    RECORD(shape, fields)      a Record of that shape (its field names); fields[i] is the kind
                               of the record's tuple item i (item 0 is the shape itself)
    MAP(k, v)                  a Map from k to v, or a Record (its keys are names: strs) whose
                               values are v, if k takes strs (the empty record: any map)
    ANYRECORD                  any Record or Map (an empty Record() in the initial states)

`conforms(value, old, kind)` checks a value built from `old` (the value it replaces in the
parent state) by object identity first: what a successor shares with its parent was checked
when the parent was, so only the parts an action rebuilt are looked at. The C hot path has the
same function (this one is its twin, `conforms_python`); `Model.successors` runs it on every
successor, where an action returns it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from operator import is_not
from typing import Any, NamedTuple

from checker.values import fast
from checker.values.display import show
from checker.values.record import Map, Record, shape

ANY, INT, BOOL, STR, BYTES, NONE, OPTIONAL, TUPLE, FIXED, SET, RECORD, MAP, ANYRECORD = range(13)
# While kinds are inferred only: nothing known yet (an empty tuple's elements), which a join
# with any kind replaces, where ANY (elements of several kinds) absorbs it. `simplified` turns
# it into ANY: the checks never see it. Likewise EMPTY, an empty record: a map with nothing
# known yet, or a record of some shape (ANYRECORD once simplified).
NOTHING, EMPTY = 13, 14
MISSING: Any = object()  # no old value to compare with
_EMPTY = shape(())  # the empty record (an empty Map is one too)
_item = tuple.__getitem__
_items = tuple.__iter__
_FIELDS = slice(1, None)  # a record's values, after its shape
_POSITIONS = range(1 << 16)  # indexes for compress(), which stops at the shorter argument


class Kind(NamedTuple):
    tag: int
    a: Any = None
    b: Any = None


K_ANY = Kind(ANY)
K_NOTHING = Kind(NOTHING)
K_EMPTY = Kind(EMPTY)
# An atomic kind carries its type, for the checks of checker.kinds (C switches on the tag).
K_INT, K_BOOL, K_STR, K_BYTES = Kind(INT, int), Kind(BOOL, bool), Kind(STR, str), Kind(BYTES, bytes)
K_NONE = Kind(NONE)
K_ANYRECORD = Kind(ANYRECORD)
_ATOMS = {int: K_INT, bool: K_BOOL, str: K_STR, bytes: K_BYTES}


class Clash(Exception):
    """Two kinds with no common kind; `mixed` for bool and int, which compare equal."""

    def __init__(self, a: Kind, b: Kind) -> None:
        super().__init__(f"{describe(a)} and {describe(b)}")
        self.mixed = {a.tag, b.tag} == {INT, BOOL}


# -- inference -------------------------------------------------------------------------------


def infer(value: Any) -> Kind:
    """The kind of a value (of an initial state). Raises Clash for a bool/int mix inside it:
    True == 1, so the engine could not tell such states apart."""
    kind = _ATOMS.get(value.__class__)
    if kind is not None:
        return kind
    if value is None:
        return Kind(OPTIONAL, K_NOTHING)
    cls = value.__class__
    if cls is tuple:
        kinds = [infer(x) for x in value]
        try:
            return Kind(TUPLE, join_all(kinds))
        except Clash as clash:
            if clash.mixed:
                raise
            return Kind(FIXED, tuple(kinds))
    if cls is frozenset:
        return Kind(SET, _lenient(infer(x) for x in value))
    if cls is Map:
        keys, values = _item(value, 1), _item(value, 2)
        return Kind(MAP, _lenient(map(infer, keys)), _lenient(map(infer, values)))
    if isinstance(value, Record):
        if cls is _EMPTY:
            return K_EMPTY
        return Kind(RECORD, cls, (K_ANY, *map(infer, _item(value, _FIELDS))))
    return K_ANY  # not a frozen value (a list in a built tuple): frozen later, then checked


def _lenient(kinds: Iterable[Kind]) -> Kind:
    """The join of the kinds of a collection's elements (NOTHING if it is empty), ANY if
    they have none (a set of several kinds), a Clash for bool with int."""
    try:
        return join_all(kinds)
    except Clash as clash:
        if clash.mixed:
            raise
        return K_ANY


def join_all(kinds: Iterable[Kind]) -> Kind:
    result = K_NOTHING
    for kind in kinds:
        result = join(result, kind)
    return result


def join(a: Kind, b: Kind) -> Kind:
    """The least kind holding the values of both, or Clash."""
    if a == b:
        return a
    ta, tb = a.tag, b.tag
    if ta == NOTHING:
        return b
    if tb == NOTHING:
        return a
    if ta == ANY or tb == ANY:
        return K_ANY
    if ta in (OPTIONAL, NONE) or tb in (OPTIONAL, NONE):
        inner_a = a.a if ta == OPTIONAL else K_NOTHING if ta == NONE else a
        inner_b = b.a if tb == OPTIONAL else K_NOTHING if tb == NONE else b
        return Kind(OPTIONAL, join(inner_a, inner_b))
    if ta == tb == TUPLE or ta == tb == SET:
        return Kind(ta, join(a.a, b.a))
    if ta == tb == FIXED and len(a.a) == len(b.a):
        return Kind(FIXED, tuple(join(x, y) for x, y in zip(a.a, b.a)))
    if {ta, tb} <= {TUPLE, FIXED}:
        elements = [*(a.a if ta == FIXED else (a.a,)), *(b.a if tb == FIXED else (b.a,))]
        return Kind(TUPLE, join_all(elements))
    if ta == tb == MAP:
        return Kind(MAP, join(a.a, b.a), join(a.b, b.b))
    if ta == tb == RECORD and a.a is b.a:
        return Kind(RECORD, a.a, tuple(join(x, y) for x, y in zip(a.b, b.b)))
    if {ta, tb} == {EMPTY, MAP}:  # a map accepts the empty record
        return a if ta == MAP else b
    if {ta, tb} <= {RECORD, MAP, ANYRECORD, EMPTY}:
        return K_ANYRECORD
    raise Clash(a, b)


def state_kind(
    states: Sequence[Record], declared: Mapping[str, Kind]
) -> tuple[Kind | None, str | None]:
    """The kind of the states (a RECORD kind) from the initial states and the declared
    types; or (None, why) when the initial states do not fit one kind."""
    first = states[0]
    cls = first.__class__
    fields: list[Kind] = [K_ANY]
    for index, name in enumerate(first.keys(), start=1):
        kind = declared.get(name)
        if kind is not None:
            for s in states:
                value = _item(s, index)
                if not conforms(value, MISSING, kind):
                    return None, (
                        f"an initial state has {name} = {show(value)} ({found_kind(value)}),"
                        f" not {describe(kind)} as declared"
                    )
            fields.append(kind)
            continue
        try:
            kind = join_all(infer(_item(s, index)) for s in states)
        except Clash as clash:
            values = ", ".join(show(_item(s, index)) for s in states[:3])
            if clash.mixed:
                return None, (
                    f"{name} mixes bool and int values ({values}): True == 1 in Python, so"
                    " states that differ only there could not be told apart; use one of them"
                )
            return None, f"the initial states give {name} values of different kinds: {clash}"
        fields.append(simplified(kind))
    return Kind(RECORD, cls, tuple(fields)), None


def exact(kind: Kind) -> bool:
    """Whether every value that conforms to `kind` (an inferred kind) adds nothing to it:
    join(kind, infer(value)) is `kind`, and the value nests no deeper than those it was
    inferred from. So for kinds without ANY, OPTIONAL, FIXED or ANYRECORD parts, nor MAP
    with str keys (a record conforms to those, and joins to ANYRECORD)."""
    tag = kind.tag
    if tag <= BYTES:
        return tag != ANY
    if tag in (TUPLE, SET):
        return exact(kind.a)
    if tag == RECORD:
        return all(map(exact, kind.b[1:]))  # (item 0 is the shape: K_ANY)
    if tag == MAP:
        return kind.a.tag not in (ANY, STR) and exact(kind.a) and exact(kind.b)
    return False


def simplified(kind: Kind) -> Kind:
    """The kind to check: NOTHING (nothing was known) is anything, and so is None-or-
    anything (an initial None)."""
    tag = kind.tag
    if tag == NOTHING:
        return K_ANY
    if tag == EMPTY:
        return K_ANYRECORD
    if tag == OPTIONAL:
        inner = simplified(kind.a)
        return K_ANY if inner.tag == ANY else Kind(OPTIONAL, inner)
    if tag in (TUPLE, SET):
        return Kind(tag, simplified(kind.a))
    if tag == FIXED:
        return Kind(FIXED, tuple(map(simplified, kind.a)))
    if tag == MAP:
        return Kind(MAP, simplified(kind.a), simplified(kind.b))
    if tag == RECORD:
        return Kind(RECORD, kind.a, tuple(map(simplified, kind.b)))
    return kind


# -- declared types --------------------------------------------------------------------------


class TypeDeclarationError(ValueError):
    """A type in `types` that mc cannot use."""


def declared(hint: Any) -> Kind:
    """The kind of a declared type (a bare annotation in a spec class): int, bool, str,
    bytes, None, object (anything), X | None, tuple[X, ...], tuple[X, Y], frozenset[X],
    dict[K, V] (a map), Record (any record), or a TypedDict (a record of its fields)."""
    if hint is None or hint is type(None):
        return K_NONE
    if isinstance(hint, type) and hint in _ATOMS:
        return _ATOMS[hint]
    if hint is object or hint is typing.Any:
        return K_ANY
    if hint is Record:
        return K_ANYRECORD
    if hint in (tuple, frozenset, set):
        return Kind(TUPLE if hint is tuple else SET, K_ANY)
    if hint is dict:
        return Kind(MAP, K_ANY, K_ANY)
    if typing.is_typeddict(hint):  # a record of these fields
        fields = typing.get_type_hints(hint)
        names = tuple(sorted(fields))
        try:
            cls = shape(names)
        except Exception as exc:
            raise TypeDeclarationError(f"{hint.__name__}: {exc}") from None
        return Kind(RECORD, cls, (K_ANY, *[declared(fields[n]) for n in names]))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        others = [a for a in args if a is not type(None)]
        if len(others) == 1 and len(args) == 2:
            return Kind(OPTIONAL, declared(others[0]))
        raise TypeDeclarationError(f"{hint}: the only union mc knows is X | None")
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return Kind(TUPLE, declared(args[0]))
        return Kind(FIXED, tuple(declared(a) for a in args))
    if origin in (frozenset, set) and len(args) == 1:
        return Kind(SET, declared(args[0]))
    if origin in (dict, Mapping) and len(args) == 2:
        return Kind(MAP, declared(args[0]), declared(args[1]))
    raise TypeDeclarationError(
        f"{hint!r} is no type mc knows: use int, bool, str, bytes, None, object, X | None,"
        " tuple[X, ...], frozenset[X], dict[K, V], Record or a TypedDict"
    )


def python_type(kind: Kind) -> str:
    """The type to declare for a kind (a record's is Record: its fields are not named)."""
    tag = kind.tag
    simple = {ANY: "object", NOTHING: "object", INT: "int", BOOL: "bool", STR: "str"}
    simple.update({BYTES: "bytes", NONE: "None", EMPTY: "Record"})
    if tag in simple:
        return simple[tag]
    if tag == OPTIONAL:
        return f"{python_type(kind.a)} | None"
    if tag == TUPLE:
        return f"tuple[{python_type(kind.a)}, ...]"
    if tag == FIXED:
        return f"tuple[{', '.join(map(python_type, kind.a))}]"
    if tag == SET:
        return f"frozenset[{python_type(kind.a)}]"
    if tag == MAP:
        return f"dict[{python_type(kind.a)}, {python_type(kind.b)}]"
    return "Record"  # a record of some shape (a TypedDict would say which)


def describe(kind: Kind) -> str:
    """A kind in words: "int", "frozenset of int", "record {a: int, b: str}"."""
    tag = kind.tag
    simple = {ANY: "anything", NOTHING: "anything", INT: "int", BOOL: "bool", STR: "str"}
    simple.update({BYTES: "bytes", EMPTY: "record"})
    if tag in simple:
        return simple[tag]
    if tag == NONE:
        return "None"
    if tag == OPTIONAL:
        return "None" if kind.a.tag in (ANY, NOTHING) else f"{describe(kind.a)} or None"
    if tag in (TUPLE, SET):
        name = "tuple" if tag == TUPLE else "frozenset"
        return name if kind.a.tag in (ANY, NOTHING) else f"{name} of {_grouped(kind.a)}"
    if tag == FIXED:
        return f"tuple ({', '.join(map(describe, kind.a))})"
    if tag == MAP:
        return f"map {_grouped(kind.a)} -> {_grouped(kind.b)}"
    if tag == RECORD:
        fields = zip(kind.a._keys, kind.b[1:])
        return "record {" + ", ".join(f"{n}: {describe(k)}" for n, k in fields) + "}"
    return "record"


def _grouped(kind: Kind) -> str:
    text = describe(kind)
    return f"({text})" if " or " in text or "->" in text else text


# -- checking --------------------------------------------------------------------------------


def conforms_python(value: Any, old: Any, kind: Kind) -> bool:
    """Whether `value` is of `kind`; `old` is the value it replaces (MISSING if none), whose
    parts that `value` still holds (the same objects) are of their kinds already."""
    if value is old:
        return True
    tag = kind[0]
    if tag == ANY:
        return True
    cls = value.__class__
    if tag <= BYTES:
        return cls is kind[1]
    if tag == OPTIONAL:
        return value is None or conforms_python(value, MISSING if old is None else old, kind[1])
    if tag == NONE:
        return value is None
    if tag == TUPLE:
        if cls is not tuple:
            return False
        inner = kind[1]
        if inner[0] == ANY:
            return True
        if inner[0] <= BYTES:  # a tuple of ints, of strs, ...
            expected = inner[1]
            return all(item.__class__ is expected for item in value)
        if old.__class__ is tuple:  # put() or an append: most elements are the old ones
            n = len(old)
            for i, item in enumerate(value):
                before = old[i] if i < n else MISSING
                if item is not before and not conforms_python(item, before, inner):
                    return False
            return True
        return all(conforms_python(item, MISSING, inner) for item in value)
    if tag == RECORD:
        if cls is not kind[1]:
            return False
        fields = kind[2]
        if old.__class__ is cls:
            for i in compress(_POSITIONS, map(is_not, _items(value), _items(old))):
                if not conforms_python(_item(value, i), _item(old, i), fields[i]):
                    return False
            return True
        return all(
            conforms_python(item, MISSING, field) for item, field in zip(_items(value), fields)
        )
    if tag == SET:
        if cls is not frozenset:
            return False
        inner = kind[1]
        if inner[0] == ANY:
            return True
        if inner[0] <= BYTES:
            expected = inner[1]
            return all(item.__class__ is expected for item in value)
        return all(conforms_python(item, MISSING, inner) for item in value)
    if tag == FIXED:
        kinds = kind[1]
        if cls is not tuple or len(value) != len(kinds):
            return False
        before_all = old if old.__class__ is tuple and len(old) == len(kinds) else None
        for i, (item, inner) in enumerate(zip(value, kinds)):
            before = MISSING if before_all is None else before_all[i]
            if item is not before and not conforms_python(item, before, inner):
                return False
        return True
    if tag == MAP:
        if cls is _EMPTY:
            return True
        if cls is not Map:  # a record: a map whose keys are names, if keys may be strs
            if not isinstance(value, Record) or kind[1][0] not in (ANY, STR):
                return False
            inner = kind[2]
            aligned = old.__class__ is cls
            return all(
                item is before or conforms_python(item, before, inner)
                for item, before in zip(
                    _item(value, _FIELDS),
                    _item(old, _FIELDS) if aligned else [MISSING] * len(value),
                )
            )
        keys, values = _item(value, 1), _item(value, 2)
        aligned = old.__class__ is Map and _item(old, 1) is keys
        if not aligned:
            for key in keys:
                if not conforms_python(key, MISSING, kind[1]):
                    return False
        olds = _item(old, 2) if aligned else None
        for i, item in enumerate(values):
            before = MISSING if olds is None else olds[i]
            if item is not before and not conforms_python(item, before, kind[2]):
                return False
        return True
    return isinstance(value, Record)  # ANYRECORD


conforms = fast.pick(conforms_python)


def successor_conforms(succ: Record, state: Record, kind: Kind) -> bool:
    """`conforms(succ, state, kind)` for a successor of `state` of the same shape (the
    engine's common case): the variables it changed are found at C speed (`is not` over the
    two tuples), and only those are looked at."""
    fields = kind[2]
    for i in compress(_POSITIONS, map(is_not, _items(succ), _items(state))):
        before = _item(state, i)
        field = fields[i]
        tag = field[0]
        if tag <= BYTES:  # ANY (0) or an atomic kind
            if tag and _item(succ, i).__class__ is not field[1]:
                return False
        elif not conforms_python(_item(succ, i), before, field):
            return False
    return True


def mismatch(value: Any, kind: Kind, path: str) -> tuple[str, Kind, Any, Kind] | None:
    """Where `value` is not of `kind`: (the path to the part that is not, e.g.
    "faults.unclean", the kind it should have, the part itself, `kind` with that part made
    optional, for a part that is None), or None if it conforms."""
    if conforms(value, MISSING, kind):
        return None
    tag = kind.tag
    optional = Kind(OPTIONAL, kind)

    def inside(part: Any, inner: Kind, where: str, rebuild: Any) -> tuple | None:
        mismatched = mismatch(part, inner, where)
        if mismatched is None:
            return None
        return (*mismatched[:3], rebuild(mismatched[3]))

    if tag == OPTIONAL and value is not None:
        mismatched = inside(value, kind.a, path, lambda k: Kind(OPTIONAL, k))
        if mismatched is not None:
            return mismatched
    elif tag in (TUPLE, FIXED) and value.__class__ is tuple:
        if tag == TUPLE:
            for i, item in enumerate(value):
                mismatched = inside(item, kind.a, f"{path}[{i}]", lambda k: Kind(TUPLE, k))
                if mismatched is not None:
                    return mismatched
        elif len(value) == len(kind.a):
            for i, (item, inner) in enumerate(zip(value, kind.a)):

                def fixed(k: Kind, i: int = i) -> Kind:
                    return Kind(FIXED, (*kind.a[:i], k, *kind.a[i + 1 :]))

                mismatched = inside(item, inner, f"{path}[{i}]", fixed)
                if mismatched is not None:
                    return mismatched
    elif tag == SET and value.__class__ is frozenset:
        for item in value:
            mismatched = inside(item, kind.a, f"an element of {path}", lambda k: Kind(SET, k))
            if mismatched is not None:
                return mismatched
    elif tag == RECORD and value.__class__ is kind.a:
        for i, (name, item) in enumerate(zip(value.keys(), _item(value, _FIELDS)), start=1):

            def field(k: Kind, i: int = i) -> Kind:
                return Kind(RECORD, kind.a, (*kind.b[:i], k, *kind.b[i + 1 :]))

            mismatched = inside(item, kind.b[i], f"{path}.{name}", field)
            if mismatched is not None:
                return mismatched
    elif tag == MAP and isinstance(value, Record):
        for key, item in value.items():
            mismatched = inside(key, kind.a, f"a key of {path}", lambda k: Kind(MAP, k, kind.b))
            if mismatched is not None:
                return mismatched
            where = f"{path}[{show(key)}]"
            mismatched = inside(item, kind.b, where, lambda k: Kind(MAP, kind.a, k))
            if mismatched is not None:
                return mismatched
    return path, kind, value, optional


def found_kind(value: Any) -> str:
    """What a value that did not fit is, in words."""
    if value is None:
        return "None"
    try:
        return describe(infer(value))
    except Clash:
        return type(value).__name__
