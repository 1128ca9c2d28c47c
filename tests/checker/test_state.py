import os
import subprocess
import sys

import pytest

from checker.state import (
    Record,
    StateError,
    decode,
    decode_with_encoder,
    encode,
    fingerprint,
    freeze,
    put,
    without,
)


def test_record_keys_are_canonical_whatever_the_construction_order():
    a = Record(b=1, a=2, c=(1, 2))
    b = Record(c=(1, 2), a=2, b=1)
    assert list(a) == ["a", "b", "c"]
    assert encode(a) == encode(b)
    assert fingerprint(encode(a)) == fingerprint(encode(b))
    assert a == b and hash(a) == hash(b)


def test_sets_encode_canonically_whatever_the_insertion_order():
    one = Record(s=frozenset(["kafka", "raft", "zk", "broker"]))
    two = Record(s=frozenset(["zk", "broker", "raft", "kafka"]))
    assert encode(one) == encode(two)


def test_round_trip_keeps_types():
    state = Record(
        leader=None,
        flag=True,
        one=1,
        name="b0",
        raw=b"\x00\x01",
        log=((1, 2), ()),
        isr={0: 1, 2: 3},
        msgs={Record(kind="fetch", to=1), Record(kind="fetch", to=0)},
        empty=frozenset(),
    )
    back = decode(encode(state))
    assert back == state
    assert isinstance(back, Record) and isinstance(back.isr, Record)
    assert type(back.msgs) is frozenset and type(back.log) is tuple
    assert back.flag is True and back.one == 1 and type(back.one) is int
    assert encode(back) == encode(state)


def test_freeze_converts_mutable_values_and_refuses_floats_and_objects():
    assert freeze([1, [2]]) == (1, (2,))
    assert freeze({1, 2}) == frozenset({1, 2})
    assert isinstance(freeze({"a": [1]}), Record)
    assert freeze({"a": [1]}).a == (1,)
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
    with pytest.raises(AttributeError, match="no field 'ldr'"):
        _ = s.ldr


def test_reserved_field_names_are_refused():
    with pytest.raises(StateError, match="'items' cannot be a field name"):
        Record(items=1)


def test_put_and_without():
    assert put((1, 2, 3), 1, [9]) == (1, (9,), 3)
    r = Record({1: "a", 3: "c"})
    assert list(put(r, 2, "b")) == [1, 2, 3]
    assert put(r, 1, "z")[1] == "z"
    assert without(r, 1) == Record({3: "c"})
    with pytest.raises(StateError):
        put([1, 2], 0, 1)


def test_mixed_key_types_still_sort_deterministically():
    r = Record({"a": 1, 2: "b"})
    assert encode(r) == encode(Record({2: "b", "a": 1}))
    assert decode(encode(r)) == r


def test_huge_ints_cannot_be_encoded():
    with pytest.raises(StateError, match="cannot encode"):
        encode(Record(x=2**70))


FINGERPRINT_SCRIPT = """
from checker.state import Record, encode, fingerprint
s = Record(names=frozenset(["alpha", "beta", "gamma", "delta"]), m={"x": ("a", "b")})
print(fingerprint(encode(s)))
"""


def test_fingerprint_is_stable_across_processes_with_different_hash_seeds():
    prints = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", FINGERPRINT_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        prints.add(int(out))
    assert len(prints) == 1
    assert 0 <= prints.pop() < 2**64


def test_put_refuses_indexes_out_of_range():
    with pytest.raises(IndexError):
        put((1, 2, 3), 3, 0)
    with pytest.raises(IndexError):
        put((1, 2, 3), -1, 0)


def test_successors_encode_by_copying_shared_fields_exactly_as_a_full_encode():
    state = Record(
        log=(1, 2), isr=frozenset({0, 1}), msgs=frozenset({Record(type="a", to=1)}), leader=None
    )
    state, encoder = decode_with_encoder(encode(state))
    successors = [
        state.replace(leader=1),
        state.replace(isr=state.isr | {2}),
        state.replace(msgs=state.msgs | {Record(type="b", to=0)}, log=put(state.log, 0, 7)),
        Record(log=(1, 2), isr={0, 1}, msgs=state.msgs, leader=0),  # built anew
        state,
    ]
    for succ in successors:
        assert encoder.encode(succ) == encode(succ)


def test_records_of_the_same_fields_share_a_shape_with_fast_field_access():
    a, b = Record(x=1, y=2), decode(encode(Record(y=5, x=0)))
    assert type(a) is type(b) and isinstance(a, Record) and type(a).__name__ == "Record"
    assert (a.x, b.y, a.replace(x=3).x) == (1, 5, 3)
    assert type(Record({0: 1})) is Record  # maps keyed by ids get no properties
    with pytest.raises(AttributeError, match="did you mean 'x'"):
        _ = a.xx
    assert Record(x=1) == {"x": 1} and hash(Record(x=1)) == hash(Record(x=1))
