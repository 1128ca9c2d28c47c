"""The engine's encoding: canonical bytes, the stable fingerprint, the cached state encoder."""

import os
import subprocess
import sys

import pytest

from checker.errors import StateError
from checker.values.encoding import decode, encode, encode_state, fingerprint
from checker.values.record import Map, Record, put


def test_records_encode_canonically_whatever_the_construction_order():
    a = Record(b=1, a=2, c=(1, 2))
    b = Record(c=(1, 2), a=2, b=1)
    assert encode(a) == encode(b)
    assert fingerprint(encode(a)) == fingerprint(encode(b))


def test_the_encoding_is_msgpack_with_sorted_keys_and_sets():
    # A Record is a map with its keys in order, a tuple an array, a set extension 1 holding
    # an array of its elements' encodings in sorted order.
    assert encode(Record(b=(1, 2), a=None)) == b"\x82\xa1a\xc0\xa1b\x92\x01\x02"
    assert encode(frozenset({2, 1})) == b"\xc7\x03\x01\x92\x01\x02"
    assert encode(Record({1: True})) == b"\x81\x01\xc3"


def test_a_set_of_16_elements_or_more_holds_a_longer_array():
    # msgpack's array 16 (0xdc and a 2-byte size) in the set extension, not a fixarray.
    big = frozenset(range(20))
    assert encode(big) == b"\xc7\x17\x01\xdc\x00\x14" + bytes(range(20))
    assert decode(encode(big)) == big


def test_values_nested_deeper_than_any_other_round_trip():
    """Each level of nesting is encoded by its own packer (a packer is not re-entered): 40 are
    more than any other test nests, so the encoder makes new ones here."""
    value: object = 0
    for i in range(40):
        value = frozenset({(value, i)})
    assert decode(encode(value)) == value
    assert encode(decode(encode(value))) == encode(value)


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
        none=Record(),
    )
    back = decode(encode(state))
    assert back == state
    assert isinstance(back, Record) and type(back.isr) is Map and type(back) is type(state)
    assert type(back.msgs) is frozenset and type(back.log) is tuple
    assert back.flag is True and back.one == 1 and type(back.one) is int
    assert encode(back) == encode(state)


def test_the_state_encoder_gives_exactly_the_encoding():
    state = Record(
        log=(1, 2), isr=frozenset({0, 1}), msgs=frozenset({Record(type="a", to=1)}), leader=None
    )
    successors = [
        state.replace(leader=1),
        state.replace(isr=state.isr | {2}),
        state.replace(msgs=state.msgs | {Record(type="b", to=0)}, log=put(state.log, 0, 7)),
        Record(log=(1, 2), isr={0, 1}, msgs=state.msgs, leader=0),  # built anew
        state,
        decode(encode(state)),
    ]
    for succ in successors:
        assert encode_state(succ) == encode(succ)
        assert encode_state(succ) == encode(succ)  # from the cache too


def test_floats_and_objects_built_inside_tuples_and_sets_are_refused_at_encoding():
    s = Record(log=(), msgs=frozenset())
    with pytest.raises(StateError, match="floats"):
        encode_state(s.replace(log=(1, 0.5)))
    with pytest.raises(StateError, match="floats"):
        encode_state(s.replace(msgs=frozenset({0.5})))
    with pytest.raises(StateError, match="object"):
        encode_state(s.replace(log=((object(),),)))


def test_huge_ints_cannot_be_encoded():
    with pytest.raises(StateError, match="cannot encode"):
        encode(Record(x=2**70))
    with pytest.raises(StateError, match="cannot encode"):
        encode_state(Record(x=0).replace(x=2**70))


FINGERPRINT_SCRIPT = """
from checker.values.encoding import encode, encode_state, fingerprint
from checker.values.record import Record
s = Record(names=frozenset(["alpha", "beta", "gamma", "delta"]), m={"x": ("a", "b")})
assert encode(s) == encode_state(s)
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
