"""The byte stream between the engine process and a worker process: framed messages, each a
small msgpack header and an optional raw payload (a part's or a reply's encoded states).

multiprocessing's Connection and msgpack copy a message four times on its way in (a bytes
object as large as the rest of the message for each read, a BytesIO, its value, then
msgpack's copy of each binary field): on kip-966's shipped cfg, whose states encode to about
3.7 KB, the engine process spent about half of its CPU time there. Here a payload goes from
the kernel straight into the buffer it is read as (`recv_into`), and from the sender's bytes
objects straight to the kernel (`sendmsg`, no join), so the encodings are never copied in
Python on the way.

A frame is two little-endian uint64 (the header's size, the payload's), the header, then the
payload. A closed peer reads as EOFError.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Sequence

_SIZES = struct.Struct("<QQ")
_BATCH = 512  # buffers per sendmsg call (IOV_MAX is 1024 on Linux)
BUFFER = 1 << 22  # socket buffer asked for (the kernel caps it): fewer wake-ups per message

Buffer = bytes | bytearray | memoryview


class Channel:
    """One end of a connected stream socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            # (a platform that refuses: the default size only costs speed)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, option, BUFFER)

    @classmethod
    def pair(cls) -> tuple[Channel, Channel]:
        left, right = socket.socketpair()
        return cls(left), cls(right)

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, header: bytes, payload: Sequence[Buffer] = ()) -> None:
        """Send `header` and the concatenation of `payload`'s buffers (not joined here)."""
        self.send_all([(header, payload)])

    def send_all(self, messages: Sequence[tuple[bytes, Sequence[Buffer]]]) -> None:
        """Send messages (header, payload) one after the other, in as few system calls as
        the kernel takes: each call, and each wake-up of the reader, costs more than the
        bytes of a small message."""
        buffers: list[Buffer] = []
        for header, payload in messages:
            size = sum(map(len, payload))  # (bytes-like buffers of single bytes)
            buffers += [_SIZES.pack(len(header), size), header, *payload]
        for i in range(0, len(buffers), _BATCH):
            self._send_all(buffers[i : i + _BATCH])

    def _send_all(self, buffers: list[Buffer]) -> None:
        views = [b for b in buffers if len(b)]
        first = 0
        while first < len(views):
            sent = self.sock.sendmsg(views[first:])
            while first < len(views) and sent >= len(views[first]):
                sent -= len(views[first])
                first += 1
            if sent:  # the kernel took part of a buffer
                views[first] = memoryview(views[first])[sent:]

    def receive(self) -> tuple[bytes, bytearray]:
        """The next message's header and payload (empty if it had none)."""
        header_size, payload_size = _SIZES.unpack(self._read(_SIZES.size))
        header = bytes(self._read(header_size))
        return header, self._read(payload_size)

    def _read(self, size: int) -> bytearray:
        data = bytearray(size)
        view = memoryview(data)
        got = 0
        while got < size:
            n = self.sock.recv_into(view[got:])
            if n == 0:
                raise EOFError("the other end closed the channel")
            got += n
        return data

    def close(self) -> None:
        self.sock.close()
