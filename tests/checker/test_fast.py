"""The hot path's seam (checker.values.fast): each function runs in C (checker._hot) or as its
Python twin, and the two agree, on values drawn by Hypothesis and on the bundled specs."""

from __future__ import annotations

import os
import re
import sys
from array import array
from collections import OrderedDict, namedtuple
from copy import deepcopy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Record, Spec, action, terminal
from checker.compiled import MAX_DOMAIN, OncePerStatePython
from checker.errors import EvaluationError, StateError
from checker.loader import load_model
from checker.model import Batch, Model, ReadSet, dedupe, readsets
from checker.symmetry import Permutation, renamed
from checker.values import fast
from checker.values import kinds as K
from checker.values.encoding import encode, fingerprint
from checker.values.record import Map, freeze, mapping, put, shape
from tests.conftest import ROOT

TWINS = {
    "put",
    "update",
    "freeze",
    "encode",
    "encode_state",
    "decode",
    "decode_all",
    "forget_encodings",
    "conforms",
    "successors",
    "dedupe",
    "holds",
    "changed",
    "read_sets_of",
    "verdicts",
    "encoded",
    "expand_run",
    "take",
    "without",
    "rename",
    "renamed_encodings",
    "signatures",
    "candidates",
}
in_c = pytest.mark.skipif(not fast.C, reason="checker._hot is not built (or MC_PURE_PYTHON=1)")


def pair(name: str):
    native, twin = fast.TWINS[name]
    assert native is not None
    return native, twin


def test_every_function_with_a_c_version_has_its_twin():
    assert set(fast.TWINS) == TWINS
    for name, (native, twin) in fast.TWINS.items():
        assert twin.__name__ == f"{name}_python"
        assert (native is not None) == fast.C


def test_the_c_hot_path_is_built():
    """`pip install` builds checker._hot (setup.py); a failed build is silent by design (the
    twins take over), so the suite says it here."""
    if os.environ.get("MC_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("MC_PURE_PYTHON is set")
    assert fast.C, "checker._hot did not build: run `pip install -v -e .`"
    assert fast.RecordBase in type(Record(a=1)).__mro__


# -- put -----------------------------------------------------------------------------------


@in_c
def test_put():
    """C builds int-keyed maps and puts existing keys itself; the result is the record the
    twin builds (same shape, keys, values, and encoding)."""
    native, twin = pair("put")
    brokers = Record({3: Record(epoch=1), 1: Record(epoch=0), 2: None})
    assert brokers == mapping({1: Record(epoch=0), 2: None, 3: Record(epoch=1)})
    assert type(brokers) is Map and list(brokers) == [1, 2, 3]
    assert Record({1: [1, 2]})[1] == (1, 2) and Record({True: 1}) == mapping({True: 1})
    cases = [
        (brokers, 2, {4}),  # a Map, an existing key, a value to freeze
        (brokers, 4, "new"),  # a key added
        (Record(a=1, b=(1,)), "b", [2]),  # a shape
        (Record(a=1), "c", 3),  # a field added
        ((1, 2, 3), 1, [5]),  # a tuple
    ]
    for container, key, value in cases:
        c, python = native(container, key, value), twin(container, key, value)
        assert c == python and type(c) is type(python) and encode(c) == encode(python)
    assert native(brokers, 2, 7)[2] == 7 and brokers[2] is None  # the original is unchanged
    for container, key in (((1, 2), 2), ((1, 2), -1)):
        with pytest.raises(IndexError):
            native(container, key, 0)
        with pytest.raises(IndexError):
            twin(container, key, 0)


@in_c
def test_a_change_to_what_is_there_already_keeps_the_value():
    """`put` and `replace` that set a value to the object it is already return the container
    itself (a step that changes nothing makes its own state again: the dedupe finds it by
    identity), equal to what the twin builds; an equal value that is another object, or a
    value to freeze, still makes a new container."""
    native, twin = pair("put")
    epoch = Record(epoch=1)
    brokers = Record({1: epoch, 2: None})
    state = Record(a=1, b=(1, 2), brokers=brokers)
    word = "aborted"
    row = (word, "working")
    same = [(brokers, 1, epoch), (brokers, 2, None), (state, "b", state.b), (row, 0, word)]
    for container, key, value in same:
        assert native(container, key, value) is container
        assert twin(container, key, value) == container
    assert state.replace(a=1, b=state.b) is state and state.replace() is state
    assert native(row, 0, "".join(["abort", "ed"])) is not row  # equal, not the same object
    assert native(state, "b", [1, 2]) is not state  # frozen into a new tuple
    changed = state.replace(a=1, b=(3,))
    assert changed is not state and changed == Record(a=1, b=(3,), brokers=brokers)
    assert state == Record(a=1, b=(1, 2), brokers=brokers)  # the original is unchanged


# -- maps: keys added and removed in C (checker/hot/maps.c) ----------------------------------

# Map keys of every kind that orders a Map differently: ints (natural order; negative and
# beyond a long, whose encodings sort otherwise), records, tuples and sets (by encodings),
# strings and bools (left to the twin: they may make a shape, or switch the order).
_map_keys = (
    st.integers(-3, 300)
    | st.sampled_from([2**64 - 1, -(2**63), True])
    | st.sampled_from(["a", "x y"])
    | st.builds(lambda t, q: Record(type=t, q=q), st.sampled_from(["pl", "tok"]), st.integers(0, 3))
    | st.tuples(st.integers(0, 2), st.integers(0, 2))
    | st.frozensets(st.integers(0, 2), max_size=2)
)


def _as_map(pairs):
    """The Map of `pairs`, or the empty record (a bag before its first message)."""
    return Record(dict(pairs)) if pairs else Record()


@in_c
@settings(max_examples=600, deadline=None)
@given(
    st.dictionaries(_map_keys, st.integers(0, 3) | st.just([1]), max_size=6),
    _map_keys | st.just([1, 2]),
    st.integers(0, 3) | st.just([2]) | st.just(0.5),
)
def test_a_key_added_to_a_map_is_where_the_twin_puts_it(pairs, key, value):
    """put of a new key on a Map, in C where the keys' order allows: the twin's Map (the same
    keys in the same order, values, types all the way down, encoding) or its error."""
    native, twin = pair("put")
    container = _as_map(pairs)
    assert _updated_by(native, container, [key, value]) == _updated_by(
        twin, container, [key, value]
    )


@in_c
@settings(max_examples=600, deadline=None)
@given(
    st.dictionaries(_map_keys, st.integers(0, 3), min_size=1, max_size=6),
    st.lists(_map_keys, max_size=3),
)
def test_keys_removed_from_a_map_leave_what_the_twin_leaves(pairs, drop):
    """without on a Map, in C where the order stays: the twin's record (a Map, or a shape or
    an empty record when only field names or nothing is left), its values the same objects."""
    native, twin = pair("without")
    container = _as_map(pairs)
    for keys in (drop, [*pairs][:1], [*pairs]):
        made, expected = native(container, *keys), twin(container, *keys)
        assert made == expected and type(made) is type(expected)
        assert list(made) == list(expected) and encode(made) == encode(expected)
        assert all(made[k] is container[k] for k in made)


# -- update --------------------------------------------------------------------------------

# Frozen containers to update (records of field names, maps of ints, tuples, sets, atoms) and
# paths into them that exist, that do not, and that go through an atom or a set.
_frozen_values = st.recursive(
    st.integers(0, 3) | st.sampled_from(["a", None]),
    lambda children: (
        st.dictionaries(st.sampled_from(["a", "b", "log"]), children, min_size=1).map(
            lambda d: Record(**d)
        )
        | st.dictionaries(st.integers(0, 3), children, min_size=1).map(Record)
        | st.lists(children, max_size=3).map(tuple)
        | st.frozensets(st.integers(0, 3), max_size=3)
    ),
    max_leaves=12,
)
_path_keys = st.lists(st.sampled_from(["a", "b", "log", 0, 1, 2, 5, -1]), min_size=0, max_size=3)
_functions = st.sampled_from(
    [lambda old: (old, 1), lambda old: [old], lambda old: {"k": old}, lambda old: 1 / 0, repr]
)


def _updated_by(function, container, path):
    """What `function` makes of the update: the value with its types and encoding, or the
    error's class and text."""
    try:
        made = function(container, *path)
    except (KeyError, IndexError, TypeError, ZeroDivisionError, StateError) as exc:
        return ("raised", type(exc), str(exc))
    return ("made", made, _types(made), encode(made))


@in_c
@settings(max_examples=500, deadline=None)
@given(_frozen_values, _path_keys, _functions)
def test_update_makes_what_the_twin_makes_and_raises_what_it_raises(container, keys, fn):
    """C's update (EXCEPT with @) gives the twin's value, of the same types all the way down
    with the same encoding, or the same error with the same text: a key that is not there,
    an index out of range, a path through an atom or a set, a function that raises, a result
    that cannot be frozen, and no key or no function at all."""
    native, twin = pair("update")
    assert _updated_by(native, container, [*keys, fn]) == _updated_by(twin, container, [*keys, fn])
    assert _updated_by(native, container, keys) == _updated_by(twin, container, keys)


@in_c
def test_update_in_c_keeps_what_it_does_not_change():
    """A function that returns the old value returns the container itself, as put does; the
    rest of the path is shared, not copied."""
    native, _ = pair("update")
    inner = Record({1: (1, 2), 2: (3,)})
    state = Record(a=inner, b=(inner,))
    assert native(state, "a", 1, lambda old: old) is state
    changed = native(state, "a", 1, lambda old: old + (9,))
    assert changed.a[1] == (1, 2, 9) and changed.a[2] is inner[2] and changed.b is state.b
    assert state.a[1] == (1, 2)  # the original is unchanged


# -- encode, encode_state, decode ----------------------------------------------------------

atoms = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.text(max_size=40)
    | st.binary(max_size=300)
)


def _values(children: st.SearchStrategy) -> st.SearchStrategy:
    names = st.sampled_from(["a", "b", "leader", "isr", "x_1"])
    return (
        st.lists(children, max_size=5).map(tuple)
        | st.frozensets(children.filter(_hashable), max_size=6)
        | st.dictionaries(names, children, max_size=4).map(Record)
        | st.dictionaries(st.integers(-3, 300), children, min_size=1, max_size=4).map(Record)
    )


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


values = st.recursive(atoms, _values, max_leaves=30)


# -- freeze --------------------------------------------------------------------------------

Pair = namedtuple("Pair", "x y")


class Odd:
    """A value no state may hold."""

    def __repr__(self) -> str:
        return "Odd()"


# What spec code hands to Record(...), replace and put: mutable containers of every kind
# (dicts of int keys, of field names in orders met and not, of other keys; lists, sets,
# namedtuples, Mappings that are no dict), frozen values, and values freeze refuses.
raw_atoms = (
    st.none()
    | st.booleans()
    | st.integers(-5, 300)
    | st.sampled_from(["a", "b", "", "x y"])
    | st.just(b"\x00")
    | st.sampled_from([0.5, float("nan"), Odd(), 1j])
)
_names = st.sampled_from(["a", "b", "leader", "isr", "zz", "keys", "_mc_x", "not a name"])
_int_keys = st.integers(-3, 300) | st.sampled_from([2**64 - 1, 2**63, -(2**63)])  # (beyond a long)


def _raw(children: st.SearchStrategy) -> st.SearchStrategy:
    hashable = children.filter(_hashable)
    return (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=4).map(tuple)
        | st.sets(hashable, max_size=4)
        | st.frozensets(hashable, max_size=4)
        | st.dictionaries(_int_keys, children)
        | st.dictionaries(_names, children, max_size=4)
        | st.dictionaries(hashable, children, max_size=3)
        | st.dictionaries(_names, children, max_size=3).map(OrderedDict)
        | st.tuples(children, children).map(lambda xy: Pair(*xy))
        | st.dictionaries(st.sampled_from(["a", "b", "leader"]), atoms, min_size=1).map(
            lambda d: Record(**d)
        )
    )


raw_values = st.recursive(raw_atoms, _raw, max_leaves=20)


def _outcome(function, value):
    """What `function` makes of `value`: the frozen value with its type tree, or the error."""
    try:
        made = function(value)
    except StateError as exc:
        return ("refused", str(exc))
    return ("frozen", made, _types(made), encode(made))


def _types(value):
    if isinstance(value, (tuple, frozenset)):  # (records are tuples)
        inner = sorted(map(repr, map(_types, value))) if type(value) is frozenset else value
        return (type(value), tuple(_types(v) for v in inner) if inner is value else inner)
    return type(value)


@in_c
@settings(max_examples=600, deadline=None)
@given(raw_values)
def test_freeze_makes_what_the_twin_makes_and_refuses_what_it_refuses(value):
    """C freezes what spec code builds into the twin's value: equal, of the same types all the
    way down, with the same encoding; what the twin refuses it refuses with the same message;
    a value frozen already freezes into itself."""
    native, twin = pair("freeze")
    Record(leader=1, isr=2)  # an order of field names met before (C builds those dicts itself)
    made = _outcome(native, value)
    assert made == _outcome(twin, value)
    if made[0] == "frozen":
        frozen = made[1]
        assert _outcome(native, frozen) == made == _outcome(twin, frozen)


@in_c
def test_freeze_in_c_keeps_frozen_values_and_refuses_deep_nesting_as_python_does():
    native, twin = pair("freeze")
    atoms_only = (1, "a", None, Record(a=1), Record({1: 2}))
    for value in (atoms_only, frozenset(atoms_only), Record(a=[1]), "x", 3):
        assert native(value) is value is twin(value)
    assert type(native({1, 2})) is frozenset and native({}) == twin({}) == Record()
    with_bool = {0: 2, True: 3}  # a bool key: no int map
    assert native(with_bool) == twin(with_bool) and list(native(with_bool)) == [0, True]
    assert native({1: [2]}).values() == ((2,),)
    for keys in (range(20, 0, -1), (3, 1, 2), (2**64 - 1, 1, -(2**63))):  # many keys, out of order
        numbers = {k: [k] for k in keys}
        made = native(numbers)
        assert made == twin(numbers) and list(made) == sorted(keys)
        assert made.values() == tuple((k,) for k in sorted(keys))
    assert native({1: 0, 2: 0})._keys is native({2: 1, 1: 1})._keys  # one tuple of keys
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    for function in (native, twin):
        with pytest.raises(RecursionError):
            function(deep)
    for bad, message in (
        ([1, {"a": 0.5}], "floats cannot be part of a state (got 0.5); use ints"),
        ({1: Odd()}, "a Odd cannot be part of a state (got Odd())"),
        (frozenset({1, 2.5}), "floats cannot be part of a state (got 2.5); use ints"),
    ):
        for function in (native, twin):
            with pytest.raises(StateError, match=f"^{re.escape(message)}$"):
                function(bad)


@in_c
@settings(max_examples=400, deadline=None)
@given(values)
def test_encode_and_decode(value):
    encode_c, encode_python = pair("encode")
    decode_c, decode_python = pair("decode")
    data = encode_python(value)
    assert encode_c(value) == data
    assert decode_c(data) == value == decode_python(data)
    assert encode_python(decode_c(data)) == data  # the same types, too


@in_c
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "leader", "isr"]), values, min_size=1))
def test_encode_state(fields):
    native, twin = pair("encode_state")
    state = Record(**fields)
    assert native(state) == twin(state) == encode(state)
    changed = state.replace(**{next(iter(fields)): (1, 2)})  # shares the other fields' values
    assert native(changed) == twin(changed) == encode(changed)


@in_c
def test_encoded_encodes_and_fingerprints_from_start_on():
    """`encoded` is encode_state and the fingerprint of each state from `start` on (of its
    view, given views); a state or view that cannot be encoded raises StateError, the
    encodings before it appended."""
    states = [Record(a=1, b=(1,)), Record(a=2, b=(1, 2)), Record(a=3, b=frozenset({4}))]
    views = [Record(a=s.a) for s in states]
    unencodable = tuple.__new__(type(states[0]), (type(states[0]), 1, [2]))
    for function in pair("encoded"):
        encodings: list[bytes] = [b"kept"]
        fps = array("Q", function(states, 1, fingerprint, encodings, None))
        assert encodings == [b"kept", *map(encode, states[1:])]
        assert list(fps) == [fingerprint(encode(s)) for s in states[1:]]
        assert function(states, 3, fingerprint, encodings, None) == b""
        encodings = []
        fps = array("Q", function(states, 0, fingerprint, encodings, views))
        assert encodings == list(map(encode, states))
        assert list(fps) == [fingerprint(encode(v)) for v in views]
        made: list[bytes] = []
        with pytest.raises(StateError):
            function([*states, unencodable], 2, fingerprint, made, None)
        assert made == [encode(states[2])]
        made = []
        with pytest.raises(StateError):
            function(states, 1, fingerprint, made, [*views[:2], unencodable])
        assert made == [encode(states[1]), encode(states[2])]


@in_c
def test_forget_encodings_drops_the_values_encode_state_holds():
    forget_c, forget_python = pair("forget_encodings")
    native, twin = pair("encode_state")
    state = Record(a=frozenset({("x", 1), ("y", 2)}), b=1)
    field = state.a  # a container: C caches only those
    alone = sys.getrefcount(field)
    for encode_state, forget in ((native, forget_c), (twin, forget_python)):
        data = encode_state(state)
        assert sys.getrefcount(field) > alone  # held by the cache
        forget()
        assert sys.getrefcount(field) == alone
        assert encode_state(state) == data == encode(state)  # encoded again, the same
        forget()


@in_c
@pytest.mark.parametrize("count", [3, 20_000])  # the slots filled listed; past 4,096 not
def test_forget_encodings_drops_every_value_the_caches_hold(count):
    forget, _ = pair("forget_encodings")
    native, _ = pair("encode_state")
    forget()
    fields = [(i, "x") for i in range(count)]  # containers: the encodings' cache holds them
    items = [(i,) for i in range(count)]  # a wide record's tuples: the hashes' cache does
    alone = [sys.getrefcount(v) for v in fields + items]
    for field, item in zip(fields, items, strict=True):
        native(Record(a=field, b=1))
        hash(Record(**{f"v{k}": item if k == 0 else k for k in range(10)}))
    del field, item
    assert sum(sys.getrefcount(v) > n for v, n in zip(fields + items, alone, strict=True)) >= count
    forget()
    assert [sys.getrefcount(v) for v in fields + items] == alone


@in_c
def test_encode_state_keeps_the_encodings_of_values_inside_variables():
    forget_c, forget_python = pair("forget_encodings")
    native, twin = pair("encode_state")
    brokers = mapping(
        {1: Record(log=(1, 2), isr=frozenset({1})), 2: Record(log=(), isr=frozenset())}
    )
    state = Record(brokers=brokers, msgs=frozenset({Record(to=1, log=(3,))}), n=0)
    entry = brokers[2]  # one level inside a variable: cached by C as the variables are
    forget_c()
    alone = sys.getrefcount(entry)
    assert native(state) == encode(state)
    assert sys.getrefcount(entry) > alone
    # A step changes one entry and adds a message; the other entry is the same object.
    succ = state.replace(
        brokers=put(brokers, 1, brokers[1].replace(log=(1, 2, 3))),
        msgs=state.msgs | {Record(to=2, log=())},
    )
    assert succ.brokers[2] is entry
    assert native(succ) == twin(succ) == encode(succ)
    assert native(state) == twin(state) == encode(state)  # the old entry: still its own bytes
    del succ
    forget_c()
    forget_python()  # (the twin keeps the variables' values: succ's map holds `entry`)
    assert sys.getrefcount(entry) == alone


@in_c
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdef"), values, min_size=1), st.data())
def test_take_builds_the_smaller_record_as_its_twin(fields, data):
    native, twin = pair("take")
    record = Record(**fields)
    kept = data.draw(st.lists(st.sampled_from(record._keys), unique=True).map(sorted))
    smaller = shape(tuple(kept))
    indices = tuple(record._index[k] for k in kept)
    made = native(smaller, indices, record)
    assert made == twin(smaller, indices, record) == Record(**{k: fields[k] for k in kept})
    assert type(made) is smaller and hash(made) == hash(twin(smaller, indices, record))
    assert all(made[k] is record[k] for k in kept)  # the same objects: shared, not copied
    with pytest.raises(IndexError):
        native(smaller, (len(record._keys) + 1,) * len(kept) or (0,), record)
    with pytest.raises(TypeError):
        native(tuple, indices, record)


@in_c
@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["aa", "bb", "cc", "dd", "ee", "ff"]), values, min_size=1),
    st.lists(
        st.lists(st.sampled_from(["aa", "bb", "cc", "dd", "ee", "ff", "gg", "zz"]), max_size=4),
        min_size=1,
        max_size=80,
    ),
    st.booleans(),
)
def test_without_drops_keys_as_its_twin(fields, calls, as_map):
    """A record (or a map) without the keys of each call, as the twin makes it: the same
    value, shape and objects. Many key lists (more than its 64 slots), missing keys ("z",
    "g"), the same list again, and lists whose own key objects differ (equal strings made
    apart) all give the twin's record."""
    native, twin = pair("without")
    record = Record(fields) if not as_map else Record({i: v for i, v in enumerate(fields)})
    for keys in calls:
        if as_map:
            keys = [ord(k[0]) - ord("a") for k in keys]
        made, expected = native(record, *keys), twin(record, *keys)
        assert made == expected and type(made) is type(expected)
        assert all(made[k] is record[k] for k in made)
        apart = ["".join(list(k)) if isinstance(k, str) else k for k in keys]
        assert all(a is not k for a, k in zip(apart, keys, strict=True) if isinstance(k, str))
        assert native(record, *apart) == expected
    with pytest.raises(AttributeError):
        native((1, 2), "a")
    with pytest.raises(TypeError):
        native()


@in_c
def test_decode_caches_short_strings_and_shapes_and_stays_the_twins_equal():
    """C decode keeps short strings (interned) and records' shapes in direct-mapped caches:
    more distinct strings than slots (collisions), long strings, non-ASCII ones, and records
    whose names collide in the shape cache all decode as the twin does."""
    decode_c, decode_python = pair("decode")
    words = tuple(f"w{i}-é" if i % 7 == 0 else f"w{i}" for i in range(6000))
    long = "x" * 65
    value = (words, long, tuple(Record({w: i}) for i, w in enumerate(words[:2000])))
    data = encode(value)
    for _ in range(2):  # the second time, from the caches
        got = decode_c(data)
        assert got == value == decode_python(data)
        assert [type(r) for r in got[2]] == [type(r) for r in value[2]]
    first, again = decode_c(encode(("leader", long))), decode_c(encode(("leader", long)))
    assert first[0] is again[0] is sys.intern("leader")
    assert first[1] == again[1] == long
    # Maps keyed by ints are built in C, their keys the tuple Record({...}) maps share (so
    # that kind checks see them unchanged by identity), as the twin builds them otherwise.
    built = Record({1: "a", 2: frozenset({3}), 300: (4,)})
    for got in (decode_c(encode(built)), decode_c(encode(built))):
        assert got == built == decode_python(encode(built))
        assert type(got) is type(built)
        assert got._keys is built._keys


def _packed(states: list) -> tuple[bytes, bytes]:
    """`states` encoded back to back, and their uint64 offsets (as a part travels)."""
    encodings = [encode(s) for s in states]
    bounds = [0]
    for data in encodings:
        bounds.append(bounds[-1] + len(data))
    return b"".join(encodings), array("Q", bounds).tobytes()


@in_c
@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abc"), values, min_size=1), max_size=6))
def test_decode_all_decodes_a_part_as_the_twin_and_shares_equal_values(fields):
    """A part's states decode to what the twin (and decode, one by one) gives; in C, equal
    variables (byte-equal: the same encoding) are one object across the part's states, and so
    are equal values inside them that are not inside a shared one."""
    native, twin = pair("decode_all")
    states = [Record(**f) for f in fields]
    states += states[:2]  # whole states again: every variable met before
    blob, offsets = _packed(states)
    got = native(blob, offsets)
    assert got == states == twin(blob, offsets) == [pair("decode")[1](encode(s)) for s in states]
    assert [encode(s) for s in got] == [encode(s) for s in states]  # the same types, too
    first: dict[bytes, object] = {}
    for state in got:
        for value in state.values():
            if isinstance(value, (tuple, frozenset)):
                assert first.setdefault(encode(value), value) is value


@in_c
def test_decode_all_refuses_broken_parts():
    native, twin = pair("decode_all")
    blob, offsets = _packed([Record(a=(1, 2), s=frozenset({3})), Record(a=(1, 2), s=frozenset())])
    bounds = list(array("Q", offsets))
    bad = [
        (blob[:-1], offsets),  # the last state truncated
        (blob, array("Q", [0, bounds[1] - 1, bounds[2]]).tobytes()),  # cut inside a state
        (blob, array("Q", [0, bounds[2], bounds[1]]).tobytes()),  # out of order
        (blob, offsets[:-1]),  # not uint64s
        (blob, b""),  # no offsets at all
    ]
    for args in bad:
        for decode_all in (native, twin):
            with pytest.raises((ValueError, StateError)):
                decode_all(*args)
    assert native(b"", array("Q", [0]).tobytes()) == [] == twin(b"", array("Q", [0]).tobytes())
    got = native(blob, offsets)
    assert got == twin(blob, offsets) and got[0].a is got[1].a
    assert sys.getrefcount(got[0].a) == 4  # two states and the call's argument: not the memo


@in_c
def test_decode_refuses_broken_bytes():
    native, twin = pair("decode")
    good = encode(Record(a=(1, 2), s=frozenset({3})))
    for bad in (good[:-1], good + b"\x00", b"\xc1", b"\xd4\x05\x90"):
        for decode in (native, twin):
            with pytest.raises((ValueError, StateError)):
                decode(bad)


@in_c
def test_encode_refuses_what_the_twin_refuses():
    native, twin = pair("encode")
    # What spec code can put in a state that replace() and put() do not look into.
    for bad in ((1, 0.5), frozenset({0.5}), (object(),), object(), (1, [2]), 2**64, -(2**63) - 1):
        for encode_value in (native, twin):
            with pytest.raises(StateError):
                encode_value(bad)


# -- conforms ------------------------------------------------------------------------------

# Values of every kind against every kind.
KIND_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["a", "b"]),
    lambda inner: (
        st.lists(inner, max_size=3).map(tuple)
        | st.frozensets(st.integers(0, 3) | st.sampled_from(["a", "b"]), max_size=3)
        | st.dictionaries(st.integers(0, 2), inner, max_size=2).map(Record)
        | st.fixed_dictionaries({"a": inner, "b": inner}).map(lambda d: Record(**d))
    ),
    max_leaves=6,
)


@in_c
@settings(max_examples=300, deadline=None)
@given(KIND_VALUES, KIND_VALUES, KIND_VALUES)
def test_conforms(typed, value, old):
    native, twin = pair("conforms")
    try:
        kind = K.simplified(K.infer(freeze(typed)))
    except K.Clash:
        return
    value, old = freeze(value), freeze(old)
    # The old value is a part of the parent state, which is of its kind: only then may a
    # part that the new value shares with it go unchecked.
    for before in (old, K.MISSING, None, freeze(typed)):
        if before is K.MISSING or twin(before, K.MISSING, kind):
            assert native(value, before, kind) == twin(value, before, kind)
    # A value's own kind fits it, and so does a part shared with the old value.
    assert twin(freeze(typed), K.MISSING, kind)


# -- successors ----------------------------------------------------------------------------


class Shapes(Spec):
    """Actions of every arity and result: none, one, a list, a kind change, an error."""

    def init(self):
        return Record(x=0, log=())

    @action
    def tick(self, s):
        return s.replace(x=s.x + 1) if s.x < 3 else None

    @action(n=(1, 2))
    def add(self, s, n):
        return [s.replace(x=s.x + n), s.replace(log=(*s.log, n))] if s.x < 2 else None

    @action(a=(0, 1), b=lambda s: range(s.x))
    def pair(self, s, a, b):
        return s.replace(log=(a, b)) if a < b else None

    @action(n=(7,))
    def wrong_kind(self, s, n):
        return s.replace(x="seven") if s.x == 3 and s.log == (0, 2) else None

    @action
    def fails(self, s):
        if s.log == (1, 2):
            raise ValueError("no")
        return None

    @action(m=lambda s: Shapes.domain(s))
    def pick(self, s, m):
        return s.replace(log=(m,)) if s.x < 3 and s.log != (m,) else None

    @action(a=(1, 2), b=lambda s, a: Shapes.dependent(s, a), c=lambda s, a: range(a, 3))
    def chain(self, s, a, b, c):
        """Domains of earlier parameters: `b`'s of `a`, `c`'s of `a` (not of `b`)."""
        return s.replace(log=(a, b, c)) if s.x < 3 and len(s.log) < 3 else None

    @action(a=lambda s: (s.x, 5), b=lambda s, a: [a, a + 1] if s.log != (0, 2) else [])
    def both(self, s, a, b):
        """A domain of the state alone before one of an earlier parameter; none at all."""
        return s.replace(log=(b,)) if s.x == 1 and len(s.log) != 1 else None

    @staticmethod
    def dependent(s, a):
        """A dependent domain of every type the loops order, or one that raises."""
        if s.log == (2, 1, 1) and a == 2:
            raise LookupError("two")
        return (
            (a, 0),
            {a},
            {a, 7, 3},
            frozenset({(a, 1)}),
            PICKS,
            [a, 4],
            set(),
            (v for v in (a, s.x)),
            frozenset({"z", "b", str(a)}),
            {True, 0, a + 5},
            {a, "x"},
        )[(3 * s.x + len(s.log) + a) % 11]

    @staticmethod
    def domain(s):
        """A domain of every type the loops order (tuple, set, list, range, iterator, a set
        seen before), one too large, or one that raises."""
        if s.log == (9,):
            raise KeyError("nine")
        if s.log == (2, 2):
            return range(MAX_DOMAIN + 1)
        if s.log == (1, 1):
            return tuple(range(MAX_DOMAIN + 1))
        return (
            (9, 1),
            PICKS,
            frozenset((9, x) for x in range(3)),
            [3, 1],
            range(2),
            frozenset(),
            (v for v in (4, s.x)),
            PICKS,
        )[(s.x + len(s.log)) % 8]


PICKS = frozenset({"b", 2, "a", (1, 2)})  # the same set object in many states


def _successors(name: str, model: Model, state: Record, recording: bool):
    native, twin = pair("successors")
    function = native if name == "c" else twin
    states: list = []
    actions: list = []
    bindings: list | None = [] if recording else None
    try:
        enabled = function(model.context(), state, states, actions, bindings)
    except EvaluationError as exc:
        return "raised", str(exc)
    return enabled, [encode(t) for t in states], actions, bindings


@in_c
@pytest.mark.parametrize(
    ("spec", "constants"),
    [
        (None, {}),
        ("specs/light/kip903.py", {"max_unclean_shutdowns": "0"}),
        ("specs/kraft.py", {}),
        ("specs/kip996.py", {"max_disruptive_election_triggers": "0", "values": "1"}),
        ("specs/examples/die_hard.py", {}),
    ],
)
def test_successors(spec, constants):
    """On the states a few levels deep, both loops give the same successors, actions and
    bindings (or raise the same error: an action's, or a domain's)."""
    model = Model(Shapes()) if spec is None else load_model(ROOT / spec, constants)
    level = model.initial_states()
    seen = set(level)
    for _ in range(4):
        following = []
        for state in level[:200]:
            for recording in (False, True):
                c = _successors("c", model, state, recording)
                assert c == _successors("python", model, state, recording)
            if c[0] == "raised":
                continue
            states: list = []
            model.successors(state, states, [])
            following += [t for t in states if t not in seen and not seen.add(t)]
        level = following
    assert seen


class Sends(Spec):
    """Each process sends each other process one message, two to a process above it (TLA+'s
    `\\E p \\in Proc, q \\in Proc \\ {p}, m \\in Msgs(p, q)`): 3 processes, 9 messages to
    send, so 2^9 states; from one with k sent, 9 - k steps; the last state at depth 10."""

    Proc = (3, 1, 2)

    def init(self):
        return Record(sent=frozenset())

    def others(self, s, p):
        return set(self.Proc) - {p}  # (a set of ints: ordered in C)

    def messages(self, s, p, q):
        return range(2) if p < q else [0]

    @action(p="Proc", q="others", m="messages")
    def send(self, s, p, q, m):
        return None if (p, q, m) in s.sent else s.replace(sent=s.sent | {(p, q, m)})


@in_c
def test_dependent_domains_in_c_and_in_python_give_the_hand_count():
    """A search of Sends with each loop (C's successors, its twin): 512 distinct states, 2,304
    steps (9 x 512 - 9 x 256, the messages not yet sent summed over every state) and 10
    levels, with bindings in the order of product over the sorted domains."""
    model = Model(Sends())
    for function in pair("successors"):
        level, seen, steps, depth = model.initial_states(), set(), 0, 0
        seen.update(level)
        first: list = []
        while level:
            depth += 1
            following = []
            for state in level:
                states: list = []
                bindings: list = []
                function(model.context(), state, states, [], bindings)
                steps += len(states)
                first = first or bindings
                following += [t for t in states if t not in seen and not seen.add(t)]
            level = following
        assert (len(seen), steps, depth) == (512, 2_304, 10)
        assert first == [
            (3, 1, 0), (3, 2, 0), (1, 2, 0), (1, 2, 1), (1, 3, 0), (1, 3, 1), (2, 1, 0),
            (2, 3, 0), (2, 3, 1),
        ]  # fmt: skip


# -- candidates ----------------------------------------------------------------------------

ITEMS = st.lists(
    st.integers(0, 5) | st.tuples(st.integers(0, 3)) | st.just((1, [2])),  # one unhashable
    max_size=12,
)


@in_c
@settings(max_examples=300, deadline=None)
@given(ITEMS, st.sets(st.integers(0, 5)), st.integers(0, 3), st.integers(0, 100), st.data())
def test_dedupe(successors, seen, start, offset, data):
    """Both give the same candidates; a successor that is the parent itself is never one."""
    assert dedupe.dedupe is pair("dedupe")[0]
    parent = data.draw(st.sampled_from([None, *successors]))
    results = []
    for function in pair("dedupe"):
        met, candidates, positions = set(seen), [], []
        stop = function(list(successors), start, met, candidates, positions, offset, parent)
        results.append((stop, met, candidates, positions))
        assert parent is None or all(s is not parent for s in candidates)
    assert results[0] == results[1]


# -- holds and changed (incremental evaluation) ----------------------------------------------

FIELDS = st.fixed_dictionaries({n: st.integers(0, 2) for n in "abcd"})


@in_c
@settings(max_examples=200, deadline=None)
@given(FIELDS, FIELDS)
def test_changed(before, after):
    """The variables whose values are not the same objects: those `replace` gave new values."""
    parent = Record(**{k: (v,) for k, v in before.items()})
    new = {k: (v,) for k, v in after.items() if v != before[k]}
    state = parent.replace(**new) if new else parent
    expected = sum(1 << "abcd".index(k) for k in new)
    for function in pair("changed"):
        assert function(parent, state) == expected


def _reads_b_if_a(s):
    return s.b == 1 if s.a == 1 else True


def _reads_c(s):
    return s.c != 2


@in_c
@settings(max_examples=200, deadline=None)
@given(FIELDS, FIELDS)
def test_holds(before, after):
    """Both say which predicate fails first; C also notes what each read (a marked mask per
    holding predicate) and skips one that held before and read nothing that changed."""
    predicates = (_reads_b_if_a, _reads_c)
    parent = Record(**before)
    new = {k: v for k, v in after.items() if v != before[k]}
    state = parent.replace(**new) if new else parent
    native, twin = pair("holds")
    expected = twin(predicates, state, None, 0, bytearray(16))
    assert native(predicates, state, None, 0, bytearray(16)) == expected
    masks = bytearray(16)
    first = native(predicates, parent, None, 0, masks)
    if first < 0:  # both held in the parent: from its masks, the same answer
        changed = pair("changed")[0](parent, state)
        assert native(predicates, state, bytes(masks), changed, bytearray(16)) == expected
        read = int.from_bytes(masks[8:], "little") & ~(1 << 63)
        assert read == 1 << 2  # _reads_c read c only


# -- OncePerState: a state predicate evaluated once per state (checker.compiled) ------------


class _Counted:
    """A predicate of `field` that counts its calls (raises on a state whose d is 2)."""

    def __init__(self, field: str) -> None:
        self.field, self.calls = field, 0

    def __call__(self, s):
        self.calls += 1
        if s.d == 2:
            raise ValueError("d is 2")
        return getattr(s, self.field) != 2


@pytest.mark.parametrize("made", ["native", "twin"])
def test_once_per_state_keeps_the_last_result_not_an_error(made):
    """Both give the predicate's result, call it once for the same state object (not for an
    equal one, nor after forget), call it again after an error, forward its attributes and
    are copied as a new one of the same predicate."""
    if made == "native" and not fast.C:
        pytest.skip("checker._hot is not built (or MC_PURE_PYTHON=1)")
    kind = fast.OncePerState if made == "native" else OncePerStatePython
    counted = _Counted("a")
    once = kind(counted)
    s, equal = Record(a=1, b=0, c=0, d=0), Record(a=1, b=0, c=0, d=0)
    assert once(s) is True and once(s) is True and counted.calls == 1
    assert once(equal) is True and counted.calls == 2  # another object: evaluated
    once.forget()
    assert once(equal) is True and counted.calls == 3
    bad = Record(a=0, b=0, c=0, d=2)
    for _ in range(2):
        with pytest.raises(ValueError, match="d is 2"):
            once(bad)
    assert counted.calls == 5
    assert once.field == "a" and once.__wrapped__ is counted  # (the predicate's attribute)
    copy = deepcopy(once)  # (by __reduce__, as cloudpickle ships a model to Spark)
    assert type(copy) is kind and copy(s) is True and copy.__wrapped__.calls == 6
    with pytest.raises(TypeError, match="not callable"):
        kind(3)


@in_c
@settings(max_examples=200, deadline=None)
@given(FIELDS, FIELDS)
def test_a_second_call_gives_the_reads_of_the_first(before, after):
    """An invariant calling another (Inv == TypeOK /\\ ...) that the engine evaluated just
    before on the same state gets the result kept, and the variables the first call read are
    noted as Inv's reads too: incremental evaluation re-evaluates Inv when they change, and
    answers as evaluating everything does."""
    type_ok = fast.OncePerState(_Counted("a"))

    def inv(s):
        return s.b != 2 and type_ok(s)

    predicates = (type_ok, inv)
    native, twin = pair("holds")
    parent = Record(**{**before, "d": 0})
    masks = bytearray(16)
    first = native(predicates, parent, None, 0, masks)
    assert type_ok.__wrapped__.calls == 1  # inv's call gave the result kept
    if first < 0:
        inv_reads = int.from_bytes(masks[8:], "little") & ~(1 << 63)
        assert inv_reads == 0b1011  # b, and a and d through TypeOK
        new = {k: v for k, v in after.items() if v != parent[k] and k != "d"}
        state = parent.replace(**new) if new else parent
        changed = pair("changed")[0](parent, state)
        everything = (_Counted("a"), lambda s: s.b != 2 and s.a != 2)
        expected = twin(everything, state, None, 0, bytearray(16))
        assert native(predicates, state, bytes(masks), changed, bytearray(16)) == expected


@in_c
@settings(max_examples=200, deadline=None)
@given(FIELDS, st.lists(FIELDS, max_size=4), st.integers(0, 4))
def test_read_sets_of(before, afters, start):
    """Each state's ReadSet from `start` on: the parent's masks, the variables the step changed
    (as `changed` says), the parent's invariants' masks."""
    parent = Record(**{k: (v,) for k, v in before.items()})
    states = []
    for after in afters:
        new = {k: (v,) for k, v in after.items() if v != before[k]}
        states.append(parent.replace(**new) if new else parent)
    changed = pair("changed")[0]
    expected = [ReadSet(b"m", changed(parent, s), None) for s in states[start:]]
    for function in pair("read_sets_of"):
        out: list[ReadSet] = [ReadSet(b"", 0, b"x")]
        function(ReadSet, parent, states, start, b"m", None, out)
        assert out[1:] == expected and all(type(m) is ReadSet for m in out)
        assert out[0] == ReadSet(b"", 0, b"x")


@in_c
@settings(max_examples=200, deadline=None)
@given(FIELDS, st.lists(FIELDS, max_size=4))
def test_verdicts(before, afters):
    """`holds` on each state with its read set: the [index, predicate] of each failure, and new
    read sets with each state's own invariants' masks (C's are those holds() notes); the read_sets
    given are left as they were."""
    predicates = (_reads_b_if_a, _reads_c)
    parent = Record(**before)
    held = bytearray(16)
    parent_failed = pair("holds")[0](predicates, parent, None, 0, held) >= 0
    states = []
    for after in afters:
        new = {k: v for k, v in after.items() if v != before[k]}
        states.append(parent.replace(**new) if new else parent)
    changed = pair("changed")[0]
    read_sets = [
        ReadSet(b"p", changed(parent, s), None if parent_failed else bytes(held)) for s in states
    ]
    given = list(read_sets)
    native, twin = pair("verdicts")
    expected = []
    for k, s in enumerate(states):
        failed = [i for i, p in enumerate(predicates) if p(s) is not True]
        if failed:
            expected.append([k, failed[0]])
    for function in (native, twin):
        failing, made = function(predicates, states, read_sets, ReadSet)
        assert failing == expected and read_sets == given
        assert [(m.guards, m.changed) for m in made] == [(m.guards, m.changed) for m in read_sets]
        assert all(type(m) is ReadSet for m in made)
    _, made = native(predicates, states, read_sets, ReadSet)
    for s, read_set, mine in zip(states, read_sets, made, strict=True):  # C: holds() on each
        masks = bytearray(16)
        pair("holds")[0](predicates, s, read_set.invariants, read_set.changed, masks)
        assert mine.invariants == bytes(masks)


# -- expand_run (expand_batch's common case) -------------------------------------------------


class Runs(Spec):
    """States that take every way out of expand_run's common case: an action that raises, a
    successor with a list inside a tuple (frozen by the general path), a deadlock (which may
    be an intended final state, when the spec declares some), and steps that change nothing."""

    def init(self):
        return Record(x=0, y=0, log=())

    @action(k=(0, 1, 2))
    def step(self, s, k):
        if s.x == 7:
            return None  # (deadlocked)
        if s.x == 5 and k == 2:
            raise ValueError("five")
        if k == 1 and s.y == 2:
            return None
        return s.replace(x=min(s.x + k, 7), y=(s.y + k) % 3)

    @action
    def unfrozen(self, s):
        return s.replace(log=([s.x],)) if s.x == 3 else None

    @terminal
    def ended(self, s):
        return s.x == 7


@in_c
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 2)), min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 2)), max_size=6),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["encoding", "view", "identify"]),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_expand_run(xs, met, with_memos, ends, fingerprinted, constrained, checked, data):
    """Both expand the same states the same way and stop before the same one: a successor
    to freeze, a deadlock when states may be final (`ends`: the spec declares some), a view
    (the spec's own: any error of it) or an `identify` (a symmetry's representative) that
    raises, or, an error, raised; what they did for that state is undone (the set of met
    states, the lists, the actions) and the finished states are in the counts. Fingerprinted
    by their encodings, their views (frozen: a list is a tuple) or `identify`; within state
    constraints or not."""
    model = Model(Runs())
    by_view = fingerprinted == "view"
    asked: list = []

    def broken(s, successors):
        """A step check: broken (or raising) from (2, 1) alone."""
        asked.append((s, len(successors)))
        return s.x == 2 and s.y == 1

    def outside(t):
        """TLC's constraints: y = 1 with an odd x outside, (6, 0) outside and violating."""
        return 2 if (t.x, t.y) == (6, 0) else int(t.y == 1 and t.x % 2 == 1)

    def view_of(s):
        if s.x == 6 and s.y == 1:
            raise ValueError("six")
        return [s.x, s.y // 2] if s.x % 2 else Record(x=s.x, y=s.y // 2)

    def identify(s, data):
        assert data == encode(s)
        if s.x == 4 and s.y == 0:
            raise EvaluationError("permute", "permute", "four")
        return fingerprint(encode(Record(x=s.x)))

    def within(s):
        return s.y != 2

    def read_set_of(state):
        """A read set as the engine keeps one: the masks of a parent's guards, what changed."""
        parent = Record(x=max(state.x - 1, 0), y=state.y, log=())
        masks, out, acts = bytearray(8 * model.slots), [], []
        try:
            model.successors(parent, out, acts, None, None, 0, masks)
        except EvaluationError:  # (a parent that raises has no read set to give)
            return None
        return ReadSet(bytes(masks), readsets.changed(parent, state), None)

    states = [Record(x=x, y=y, log=()) for x, y in xs]
    start = data.draw(st.integers(0, len(states)))
    stop = data.draw(st.integers(start, len(states) + 1))
    read_sets = None
    if with_memos:
        read_sets = [read_set_of(s) if data.draw(st.booleans()) else None for s in states]
    results = []
    for function in pair("expand_run"):
        seen = {Record(x=x, y=y, log=()) for x, y in met}
        batch = Batch(False, False)
        batch.actions += [9] * 3  # (three successors of earlier states in the batch)
        if with_memos:
            batch.read_sets = []
        if by_view:
            seen = {freeze(view_of(s)) for s in seen if (s.x, s.y) != (6, 1)}
        context = model.context()._replace(
            terminals=ends,
            within=within if constrained else None,
            view=view_of if by_view else None,
            redo=(Exception,) if by_view else (EvaluationError,),
            identify=identify if fingerprinted == "identify" else None,
            broken=broken if checked else None,
            outside=outside if checked else None,
        )
        try:
            got: int | str = function(context, batch, states, start, stop, read_sets, seen)
        except EvaluationError as exc:
            got = exc.message
        successors, actions, views = batch.successors, batch.actions, batch.views
        found, positions, encodings = batch.candidates, batch.positions, batch.encodings
        made = batch.read_sets or []
        counts, stuck, fps = batch.run_counts, batch.stuck, batch.run_fps
        assert successors == []
        assert len(views) == (len(found) if by_view else 0)
        results.append(
            (got, seen, found, views, positions, encodings, made, actions, counts, stuck, fps)
        )
    assert results[0] == results[1]
    assert asked[: len(asked) // 2] == asked[len(asked) // 2 :]  # (each loop asked the same)
    got, seen, found, views, positions, encodings, made, actions, counts, stuck, fps = results[0]
    if checked:  # none outside TLC's constraints is a candidate, though met
        assert not [t for t in found if t.y == 1 and t.x % 2 == 1]
    done = len(stuck)
    after = start + done
    assert len(counts) == 4 * done
    assert len(actions) == 3 + sum(array("I", counts))
    shown = [encode(v) for v in views] if by_view else encodings
    if fingerprinted == "identify":
        shown = [encode(Record(x=s.x)) for s in found]
    assert array("Q", fps).tolist() == [fingerprint(e) for e in shown]
    assert len(found) == len(positions) == len(encodings)
    assert len(made) == (len(found) if with_memos else 0)
    assert set(views if by_view else found) <= seen
    if constrained:
        assert all(c == 0 for c, s in zip(array("I", counts), states[start:]) if s.y == 2)
    if isinstance(got, str):  # raised by the state after the last one counted
        assert "five" in got and states[after].x == 5
    elif got < min(stop, len(states)):  # stopped before a state the general path takes
        x = states[after].x
        assert got == after and (
            x in ((3, 7) if ends else (3,))
            or (by_view and x in (4, 5, 6))
            or (fingerprinted == "identify" and x in (2, 3, 4))
            or (checked and (states[after] == Record(x=2, y=1, log=()) or x in (4, 5, 6)))
        )
    else:
        assert got == after == max(start, min(stop, len(states)))


# -- rename (a symmetry's renaming of values) --------------------------------------------------

RENAMED = st.integers(-2, 4) | st.booleans() | st.none() | st.text(max_size=2) | st.just((1, 2))


@in_c
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.integers(0, 3) | st.text(max_size=1), RENAMED, max_size=5),
    st.lists(RENAMED | st.just([1]), max_size=8),
    st.sampled_from([tuple, list, frozenset]),
)
def test_rename(image, values, container):
    """Both rename the same values the same way: a value outside the image is itself, True
    and False are never renamed (though True == 1 is a key), and an unhashable value is the
    same TypeError."""
    if container is frozenset and any(type(v) is list for v in values):
        return
    results = []
    for function in pair("rename"):
        try:
            results.append(function(image, container(values)))
        except TypeError as exc:
            results.append(str(exc))
    assert results[0] == results[1]
    if isinstance(results[0], list):
        expected = [v if type(v) is bool else image.get(v, v) for v in container(values)]
        assert results[0] == expected
        assert all(type(a) is type(b) for a, b in zip(results[0], expected, strict=True))


# -- renamed_encodings (symmetry over model values) --------------------------------------------

MODEL_VALUES = [
    "r1",
    "r2",
    "r-3",
    "v1",
    "v2",
]  # "r-3" is no field name: records keyed by it are Maps
named_atoms = st.sampled_from([*MODEL_VALUES, "any", "type"]) | st.integers(-40, 300) | st.none()


def _named(children: st.SearchStrategy) -> st.SearchStrategy:
    keys = st.sampled_from([*MODEL_VALUES, "ballot", "type"])
    return (
        st.lists(children, max_size=4).map(tuple)
        | st.frozensets(children.filter(_hashable), max_size=5)
        | st.dictionaries(keys, children, max_size=4).map(Record)
        | st.dictionaries(
            keys | st.integers(0, 3) | st.tuples(keys, st.integers(0, 1)),
            children,
            min_size=1,
            max_size=4,
        ).map(Record)
    )


named_values = st.recursive(named_atoms, _named, max_leaves=25)
renamings = st.permutations(["r1", "r2", "r-3"]).flatmap(
    lambda rs: st.permutations(["v1", "v2"]).map(
        lambda vs: {k: v for k, v in zip(["r1", "r2", "r-3", "v1", "v2"], [*rs, *vs]) if k != v}
    )
)


@in_c
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["msgs", "r1", "owner", "votes"]), named_values, min_size=1),
    st.lists(renamings, min_size=1, max_size=4).map(tuple),
)
def test_renamed_encodings(fields, images):
    """C and the twin give the same bytes for every renaming, which are the encoding of the
    state the twin builds: each model value renamed wherever it is, but not a variable's name
    (the variable "r1"), sets re-sorted and keys put back in canonical order."""
    native, twin = pair("renamed_encodings")
    state = Record(**fields)
    expected = twin(state, images)
    assert native(state, images) == expected
    for image, data in zip(images, expected, strict=True):
        state_renamed = renamed(state, Permutation(image))
        assert data == encode(state_renamed)
        assert fast.TWINS["decode"][1](data) == state_renamed
        back = renamed(state_renamed, Permutation({v: k for k, v in image.items()}))
        assert back == state and encode(back) == encode(state)
    assert native(state, ({},)) == [encode(state)]


@in_c
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["msgs", "r1", "owner", "votes"]), named_values, min_size=1),
    renamings,
)
def test_signatures(fields, image):
    """C and the twin give the same signatures; renaming a state renames its signatures'
    owners and changes none of them (the invariance the search's exactness rests on)."""
    native, twin = pair("signatures")
    markers = {v: b"\xc1%d" % (v[0] == "v") for v in MODEL_VALUES}
    state = Record(**fields)
    found = twin(state, markers)
    assert native(state, markers) == found
    assert set(found) == set(MODEL_VALUES)
    state_renamed = renamed(state, Permutation(image))
    assert native(state_renamed, markers) == {image.get(v, v): s for v, s in found.items()}
