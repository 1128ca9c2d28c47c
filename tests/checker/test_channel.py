"""The byte stream between the engine process and its workers (checker.local.channel), and the
messages' split into a msgpack header and a raw payload (checker.search.expansion)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from checker.local.channel import Channel
from checker.search.expansion import Expand, Expanded, Pieces, pack, unpack


def _pieces(count: int) -> list[bytes]:
    return [bytes([i % 251]) * (1 + (i * 7919) % 5000) for i in range(count)]


@pytest.mark.timeout(60)
def test_a_payload_of_many_pieces_larger_than_the_socket_buffers_arrives_whole():
    """More pieces than one sendmsg takes, more bytes than the kernel buffers hold (the
    sender is in the middle of a piece when the kernel stops taking bytes)."""
    left, right = Channel.pair()
    pieces = _pieces(3000)  # about 7.5 MB
    sender = threading.Thread(target=left.send, args=(b"header", pieces))
    sender.start()
    header, payload = right.receive()
    sender.join()
    assert header == b"header"
    assert payload == b"".join(pieces)
    left.send(b"no payload")
    assert right.receive() == (b"no payload", bytearray())
    left.close()
    right.close()


def test_a_closed_peer_reads_as_end_of_file():
    left, right = Channel.pair()
    left.send(b"last")
    left.close()
    assert right.receive()[0] == b"last"
    with pytest.raises(EOFError):
        right.receive()
    right.close()


def _reply(pieces: list[bytes]) -> Expanded:
    sizes = np.array([len(p) for p in pieces], np.uint64)
    return Expanded(
        actions=b"\x00\x00" * len(pieces),
        counts=np.array([len(pieces)], np.uint32).tobytes(),
        stuck=b"\x00",
        positions=np.arange(len(pieces), dtype=np.uint32).tobytes(),
        fps=np.arange(len(pieces), dtype=np.uint64).tobytes(),
        blob=Pieces(pieces),
        offsets=np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)]).tobytes(),
        broken=[[1, "Safe"]],
        reached=[[0, 0]],
    )


def test_a_reply_travels_with_its_encodings_as_the_payload_and_arrives_joined():
    pieces = _pieces(40)
    reply = _reply(pieces)
    header, payload = pack(reply)
    assert payload == pieces  # the encodings themselves: not joined, not copied
    assert b"".join(pieces) not in header
    left, right = Channel.pair()
    left.send(header, payload)
    got = unpack(*right.receive())
    assert isinstance(got, Expanded)
    assert got.blob == b"".join(pieces)
    assert got == Expanded(**{**reply.__dict__, "blob": got.blob})
    left.close()
    right.close()


def test_a_request_without_states_has_no_payload_and_one_with_states_carries_them():
    live = Expand(3, 2, start=5, count=7)
    header, payload = pack(live)
    assert payload == []
    assert unpack(header) == live
    encoded = Expand(4, 2, blob=b"abc", offsets=b"\x00" * 16)
    header, payload = pack(encoded)
    assert payload == [b"abc"]
    assert unpack(header, bytearray(b"abc")) == encoded


def test_messages_sent_together_arrive_one_by_one_in_order():
    """send_all puts several framed messages on the wire in one go; the reader gets each,
    header and payload, in the order sent."""
    left, right = Channel.pair()
    try:
        left.send_all([(b"one", [b"ab", b"c"]), (b"two", []), (b"three", [b"x" * 70000])])
        assert right.receive() == (b"one", bytearray(b"abc"))
        assert right.receive() == (b"two", bytearray())
        assert right.receive() == (b"three", bytearray(b"x" * 70000))
    finally:
        left.close()
        right.close()
