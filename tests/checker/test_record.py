"""The author's value API: Records (tuple-backed shapes and maps), freezing, put, without."""

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker.errors import StateError
from checker.values.encoding import canonical_order
from checker.values.record import Map, Record, freeze, put, without


def test_record_keys_are_canonical_whatever_the_construction_order():
    a = Record(b=1, a=2, c=(1, 2))
    b = Record(c=(1, 2), a=2, b=1)
    assert list(a) == ["a", "b", "c"] == list(a.keys())
    assert a == b and hash(a) == hash(b) and type(a) is type(b)
    assert a.values() == (2, 1, (1, 2))
    assert a.items() == (("a", 2), ("b", 1), ("c", (1, 2)))


def test_records_compare_by_field_names_and_values_only():
    assert Record(a=1) != Record(b=1)  # same values, other names
    assert hash(Record(a=1)) != hash(Record(b=1)) or Record(a=1) != Record(b=1)
    assert Record(a=1) != (1,) and Record(a=1) != (1,)  # never equal to a plain tuple
    assert Record(a=1) != {"a": 1}  # nor to a dict: a Record is its own kind of value
    assert Record({0: 1}) != Record({1: 0})
    assert Record({0: 1}) == Record({0: 1}) and Record({"a": 1}) == Record(a=1)
    assert len({Record(a=1), Record(b=1), Record(a=1)}) == 2


def test_a_record_is_a_read_only_mapping():
    r = Record(leader=0, isr=frozenset({0}))
    assert r["leader"] == 0 and r.get("leader") == 0 and r.get("nope", 7) == 7
    assert "leader" in r and "nope" not in r and 0 not in r
    assert len(r) == 2 and bool(r) and not Record()
    assert {**r} == {"isr": frozenset({0}), "leader": 0} and dict(r) == {**r}
    with pytest.raises(KeyError):
        r["nope"]


def test_maps_are_records_looked_up_by_key():
    m = Record({2: "b", 0: "a"})
    assert type(m) is Map and isinstance(m, Record)
    assert list(m) == [0, 2] and m[2] == "b" and 2 in m and 1 not in m
    assert m.items() == ((0, "a"), (2, "b")) and m.get(5) is None and len(m) == 2
    assert repr(m) == "Record(0: 'a', 2: 'b')"
    with pytest.raises(KeyError):
        m[1]
    with pytest.raises(AttributeError):
        _ = m.x


def test_freeze_converts_mutable_values_and_refuses_floats_and_objects():
    assert freeze([1, [2]]) == (1, (2,))
    assert freeze({1, 2}) == frozenset({1, 2})
    assert isinstance(freeze({"a": [1]}), Record)
    assert freeze({"a": [1]}).a == (1,)
    assert freeze({0: [1]})[0] == (1,)
    with pytest.raises(StateError, match="floats"):
        Record(x=0.5)
    with pytest.raises(StateError, match="object"):
        Record(x=object())
    with pytest.raises(StateError, match="floats"):
        Record(x=(1, float("nan")))


def test_records_are_immutable_and_replace_only_known_fields():
    s = Record(leader=0, isr=frozenset({0}))
    with pytest.raises(TypeError, match="immutable"):
        s["leader"] = 1
    with pytest.raises(TypeError, match="immutable"):
        s.update(leader=1)
    with pytest.raises(KeyError, match="did you mean 'leader'"):
        s.replace(leadr=1)
    t = s.replace(leader=1, isr={0, 1})
    assert (s.leader, t.leader, t.isr) == (0, 1, frozenset({0, 1}))
    assert s.replace() == s
    with pytest.raises(AttributeError, match="no field 'ldr'"):
        _ = s.ldr


def test_replace_freezes_only_mutable_values():
    s = Record(log=(), isr=frozenset())
    t = s.replace(log=[1, [2]], isr={3})
    assert t.log == (1, (2,)) and type(t.log) is tuple and t.isr == frozenset({3})
    with pytest.raises(StateError, match="floats"):
        s.replace(log=0.5)


def test_a_record_is_built_from_frozen_values_as_freeze_makes_them():
    """Record(...) keeps a tuple or frozenset of atoms as it is (freeze returns it), and
    freezes anything else the way freeze does, by keyword and from a dict alike."""
    inner = Record(a=1)
    for value in [
        (1, "a", None, True, b"x"),
        frozenset({1, "a", (2, 3)}),
        (inner, 1),
        frozenset({inner}),
        (1, [2]),
        [1, {2}],
        frozenset({Map((Map, (1,), ("b",)))}),
    ]:
        for built in (Record(x=value, y=0), Record({"x": value, "y": 0})):
            assert built.x == freeze(value) and type(built.x) is type(freeze(value))
            assert (built.x is value) == (freeze(value) is value)


def test_wide_records_replace_as_narrow_ones():
    fields = {f"f{i}": i for i in range(20)}
    r = Record(**fields)
    t = r.replace(f3=30, f17=[1])
    assert t.f3 == 30 and t.f17 == (1,) and t.f0 == 0 and t.f19 == 19
    assert t == Record(**{**fields, "f3": 30, "f17": (1,)})


def test_reserved_field_names_are_refused():
    with pytest.raises(StateError, match="'items' cannot be a field name"):
        Record(items=1)
    with pytest.raises(StateError, match="'replace' cannot be a field name"):
        Record(replace=None)  # (without the C hot path too, whose shapes get it one by one)
    assert Record(index=1, count=2).index == 1  # tuple's own methods may be shadowed
    assert type(Record({"items": 1})) is Map  # a reserved name is a map key


def test_put_and_without():
    assert put((1, 2, 3), 1, [9]) == (1, (9,), 3)
    r = Record({1: "a", 3: "c"})
    assert list(put(r, 2, "b")) == [1, 2, 3]
    assert put(r, 1, "z")[1] == "z"
    assert without(r, 1) == Record({3: "c"})
    assert without(r, 1, 3) == Record() and without(Record(a=1), "a") == Record()
    assert without(Record(w1=1, w2=2, w3=3), "w1", "w2") == Record(w3=3)  # a shape of its own
    assert put(Record(a=1), "b", 2) == Record(a=1, b=2)
    assert put(Record(a=1), 0, 2) == Record({"a": 1, 0: 2})
    assert put(Record(a=1), "a", 5) == Record(a=5)
    with pytest.raises(StateError):
        put([1, 2], 0, 1)


@given(
    st.dictionaries(
        st.sampled_from(["leader", "isr", "epoch", "type", "a_1", "z"]),
        st.one_of(st.integers(-5, 5), st.lists(st.integers(0, 3), max_size=3), st.none()),
        min_size=1,
    ),
    st.randoms(use_true_random=False),
)
def test_a_dict_of_field_names_builds_the_record_keywords_build(items, random):
    """Record({"leader": 1, ...}) is Record(leader=1, ...), in any key order, the first time
    (Python) and once the order is known (C builds it directly); its values frozen."""
    from checker.values.record import mapping

    keys = list(items)
    random.shuffle(keys)
    source = {k: items[k] for k in keys}
    for _ in range(2):
        built = Record(source)
        assert built == Record(**source) == mapping(source) and type(built) is type(mapping(source))
        assert all(built[k] == freeze(v) for k, v in source.items())


def test_a_dict_of_other_strings_is_still_a_map():
    for _ in range(2):
        assert type(Record({"a-b": 1, "c": 2})) is Map
        assert type(Record({"keys": 1})) is Map  # a method of Record: no field


def test_a_record_hashes_as_its_tuple_whatever_was_hashed_before():
    """The C hot path remembers the hashes of a state's variables by identity; a record's hash
    stays the tuple's (sets of states behave as on the pure-Python path)."""
    parts = [Record({b: Record(epoch=e) for b in range(1, 4)}) for e in range(3)]
    for _ in range(2):  # the second round finds the variables' hashes remembered
        for k in range(30):
            wide = Record({f"v{i}": parts[(i + k) % 3] if i % 2 else (i, k) for i in range(12)})
            assert hash(wide) == tuple.__hash__(wide)
            assert hash(put(wide, "v1", parts[0])) == tuple.__hash__(put(wide, "v1", parts[0]))
    assert hash(Record(a=1)) == hash((type(Record(a=1)), 1))


def test_a_record_keeps_its_hash_and_its_copies_their_own():
    """The C hot path keeps a record's hash in the record once computed: a record made from
    a hashed one (replace, put, a copy, a subclass with a __dict__) has its own."""
    base = Record(a=1, b=Record({1: (2, 3)}))
    assert hash(base) == hash(base) == tuple.__hash__(base)
    changed = base.replace(a=2)
    assert hash(changed) == tuple.__hash__(changed) != hash(base)
    assert hash(put(base, "b", Record({1: (2, 4)}))) == tuple.__hash__(
        put(base, "b", Record({1: (2, 4)}))
    )
    assert hash(copy.copy(base)) == hash(pickle.loads(pickle.dumps(base))) == hash(base)

    class Loose(type(base)):  # no __slots__: a __dict__ after the items
        pass

    loose = Loose(tuple.__iter__(base))
    loose.note = "kept in the __dict__"
    assert hash(loose) == hash(loose) == tuple.__hash__(loose) and loose.note


def test_put_refuses_indexes_out_of_range():
    with pytest.raises(IndexError):
        put((1, 2, 3), 3, 0)
    with pytest.raises(IndexError):
        put((1, 2, 3), -1, 0)


def test_mixed_key_types_still_sort_deterministically():
    r = Record({"a": 1, 2: "b"})
    assert r == Record({2: "b", "a": 1})
    assert canonical_order({3, 1, 2}) == [1, 2, 3]
    records = [Record(a=2), Record(a=1)]
    assert canonical_order(records) == canonical_order(reversed(records))


def test_records_of_the_same_fields_share_a_shape_with_fast_field_access():
    a, b = Record(x=1, y=2), Record(y=5, x=0)
    assert type(a) is type(b) and isinstance(a, Record) and type(a).__name__ == "Record"
    assert (a.x, b.y, a.replace(x=3).x) == (1, 5, 3)
    with pytest.raises(AttributeError, match="did you mean 'x'"):
        _ = a.xx


def test_records_pickle_and_copy_as_themselves():
    r = Record(a=1, m=Record({0: frozenset({Record(b=2)})}))
    assert pickle.loads(pickle.dumps(r)) == r
    assert copy.copy(r) is r and copy.deepcopy(r) is r
    # Empty ones too (the Spark engine pickles a spec's constants with its tasks).
    for empty in (Record(), Record({}), Record(m=Record({}))):
        assert pickle.loads(pickle.dumps(empty)) == empty


def test_update_is_except_with_at():
    """TLA+'s [s EXCEPT !.faults[f] = @ + 1], the common nested put."""
    from checker import update

    s = Record(faults=Record(crash=0, loss=1), log=((1,), ()), isr={0: 1})
    assert update(s, "faults", "crash", lambda n: n + 1) == s.replace(
        faults=put(s.faults, "crash", s.faults.crash + 1)
    )
    assert update(s, "log", 1, lambda log: log + (2,)).log == ((1,), (2,))
    assert update(s, "isr", 0, lambda epoch: epoch + 1).isr == Record({0: 2})
    with pytest.raises(KeyError, match="update\\(\\): no 'nope' in"):
        update(s, "nope", lambda x: x)
    with pytest.raises(IndexError, match="update\\(\\): no 5 in"):
        update(s, "log", 5, lambda x: x)
    with pytest.raises(TypeError, match="needs a key before the function"):
        update(s, lambda x: x)


def test_empty_values_print_as_python_would_write_them():
    from checker.values import count, show

    assert show(frozenset()) == "set()" and show(frozenset({2, 1})) == "{1, 2}"
    assert show(Record()) == "{}" and show(Record(a=1)) == "{a: 1}"
    assert (count(1, "state"), count(2, "state"), count(1_234, "spec")) == (
        "1 state",
        "2 states",
        "1,234 specs",
    )


def test_choose_picks_what_tlc_picks():
    """docs/tla/Choose.tla: TLC's CHOOSE over each set (its -dump of the initial state)."""
    from checker import choose

    assert choose({3, 1, 2}) == 1
    assert choose({"b", "a"}, lambda v: v != "a") == "b"
    assert choose({"M3", "M1", "M2"}) == "M1"  # model values, declared in this order
    assert choose({(2, 1), (1, 2), (1, 1)}) == (1, 1)
    assert choose({frozenset({2}), frozenset({1, 2}), frozenset({1})}) == frozenset({1})
    assert choose({Record(a=2), Record(a=1)}) == Record(a=1)
    # TLC orders strings as it first met them in the modules: given as a tuple in that order.
    assert choose(("zeta", "alpha", "mid")) == "zeta"
    with pytest.raises(ValueError, match="CHOOSE: no value satisfies the predicate"):
        choose({1, 2}, lambda v: v > 2)


def test_a_shape_class_survives_pickling_by_value():
    """Spark's cloudpickle ships a spec's shape classes by value: their field descriptors (C's
    Field where the extension loads) pickle as `field_of(index, doc)`."""
    cloudpickle = pytest.importorskip("pyspark.cloudpickle")
    state = Record(a=1, b=(2,))
    field = type(state).__dict__["b"]
    again = pickle.loads(pickle.dumps(field))
    assert type(again) is type(field) and again.__get__(state) == (2,)
    shape = pickle.loads(cloudpickle.dumps(type(state)))
    assert shape.b.__doc__ == "the field 'b'"
    assert shape.__dict__["b"].__get__(state) == (2,)


def _plain(value):
    """`value` with each record as a tagged tuple of its shape's keys and its values: what
    record equality must agree with, whatever the objects are and whichever hashes are known."""
    if isinstance(value, Record):
        return ("record", tuple(value.keys()), tuple(_plain(v) for v in value.values()))
    if isinstance(value, tuple):
        return ("tuple", tuple(_plain(v) for v in value))
    if isinstance(value, frozenset):
        return frozenset(_plain(v) for v in value)
    return value


_atoms = st.one_of(st.integers(-2, 2), st.booleans(), st.sampled_from(["a", "b"]))
_values = st.recursive(
    _atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.frozensets(inner, max_size=3),
        st.fixed_dictionaries({"p": inner}, optional={"q": inner}).map(lambda d: Record(**d)),
        st.dictionaries(st.integers(0, 2), inner, max_size=2).map(Record),
    ),
    max_leaves=12,
)


def _rebuilt(value):
    """An equal value made of new objects (records, tuples and sets), no hash known."""
    if isinstance(value, Record):
        return Record(dict(zip(value.keys(), map(_rebuilt, value.values()), strict=True)))
    if isinstance(value, tuple):
        return tuple([_rebuilt(v) for v in value])
    if isinstance(value, frozenset):
        return frozenset([_rebuilt(v) for v in value])
    return value


@given(_values, _values, st.booleans(), st.booleans(), st.booleans())
def test_record_equality_is_that_of_its_keys_and_values(a, b, rebuild, hash_a, hash_b):
    """== and != of records agree with comparing their keys and values, for equal values
    built apart (walked to the end), unequal ones, True beside 1, and whether or not their
    hashes (and their parts') were computed first."""
    x, y = Record(v=a, w=(a, b)), Record(v=_rebuilt(a) if rebuild else b, w=(a, b))
    for value, known in ((x, hash_a), (y, hash_b)):
        if known:
            hash(value)
    expected = _plain(x) == _plain(y)
    assert (x == y) is expected and (x != y) is (not expected)
    assert (y == x) is expected
