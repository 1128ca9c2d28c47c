"""A TCP proxy on 127.0.0.1 between the brokers and the controllers that can hold a broker's
AlterPartition requests: KIP-903's interleaving (a leader's ISR expansion naming a follower's
broker epoch, delivered after that follower restarted with a new epoch) made on purpose.

The kernel here has no `netem`, so the delay is made in user space. Each broker's
`controller.quorum.voters` names the proxy's ports instead of the controllers' (cluster.py), so
everything a broker sends its controllers (Raft fetches of the metadata log, heartbeats,
AlterPartition) passes here. Bytes from a controller go back unchanged. Bytes to a controller
are cut into Kafka request frames (a 4-byte size, then the request header: api key, version,
correlation id); every frame is forwarded at once except an AlterPartition (api key 56) of an
*armed* broker, which is held, with every later frame of its connection behind it (a
connection's requests keep their order: the client matches responses in order), until the
scenario releases it. AlterPartition has a connection of its own in the broker (its own
controller channel), so holding it delays no heartbeat and no metadata fetch.

Each AlterPartition that passes is decoded (versions 2 and 3, Kafka 4.x's) with its response:
the ISR it proposes, with the broker epochs v3 carries (KIP-903), and the controller's error
code (107 INELIGIBLE_REPLICA: a replica fenced, in controlled shutdown or of a stale epoch).

The proxy runs an asyncio loop in a thread of its own; `Proxy` is a context manager that stops
it and closes every connection.
"""

from __future__ import annotations

import asyncio
import functools
import struct
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

ALTER_PARTITION = 56
ERRORS = {
    0: "NONE",
    58: "FENCED_LEADER_EPOCH",
    74: "UNKNOWN_LEADER_EPOCH",
    106: "NEW_LEADER_ELECTED",
    107: "INELIGIBLE_REPLICA",
    108: "OPERATION_NOT_ATTEMPTED",
    102: "INVALID_UPDATE_VERSION",
}


@dataclass
class AlterPartition:
    """One AlterPartition request a broker sent, as the proxy saw it go and come back."""

    broker: int
    correlation_id: int
    version: int
    sent_at: float  # time.time() when the proxy read it
    # per partition: (leader epoch, partition epoch, [(broker id, broker epoch or -1)])
    partitions: list[tuple[int, int, list[tuple[int, int]]]]
    holding: bool = False  # held by the proxy right now
    held_s: float = 0.0
    error: str | None = None  # the partition's error code in the response, by name
    answered_at: float | None = None

    def isr(self) -> list[int]:
        return [b for _, _, members in self.partitions for b, _ in members]

    def summary(self) -> dict[str, object]:
        return {
            "broker": self.broker,
            "version": self.version,
            "isr_with_epochs": [list(m) for _, _, members in self.partitions for m in members],
            "leader_epoch": self.partitions[0][0] if self.partitions else None,
            "partition_epoch": self.partitions[0][1] if self.partitions else None,
            "held_s": round(self.held_s, 1),
            "error": self.error,
        }


class _Reader:
    """Kafka's wire types over one frame: big-endian fixed ints, unsigned varints."""

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data, self.at = data, at

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            byte = self.data[self.at]
            self.at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def tagged(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.at += self.uvarint()

    def compact_count(self) -> int:
        return self.uvarint() - 1


def decode_request(broker: int, frame: bytes) -> AlterPartition:
    """An AlterPartition request frame (without its size), header v2, body v2 or v3."""
    r = _Reader(frame)
    r.take(">h")
    version = r.take(">h")
    correlation_id = r.take(">i")
    client_id = r.take(">h")
    r.at += max(client_id, 0)
    r.tagged()
    r.take(">i")  # BrokerId
    r.take(">q")  # BrokerEpoch
    partitions = []
    for _ in range(r.compact_count()):
        r.at += 16  # TopicId
        for _ in range(r.compact_count()):
            r.take(">i")  # PartitionIndex
            leader_epoch = r.take(">i")
            members = []
            for _ in range(r.compact_count()):
                if version >= 3:
                    member = (r.take(">i"), r.take(">q"))
                    r.tagged()
                else:
                    member = (r.take(">i"), -1)
                members.append(member)
            r.take(">b")  # LeaderRecoveryState
            partition_epoch = r.take(">i")
            r.tagged()
            partitions.append((leader_epoch, partition_epoch, members))
        r.tagged()
    return AlterPartition(broker, correlation_id, version, time.time(), partitions)


def decode_response_error(frame: bytes) -> tuple[int, str]:
    """(correlation id, the first partition's error, else the top-level one) of a response."""
    r = _Reader(frame)
    correlation_id = r.take(">i")
    r.tagged()
    r.take(">i")  # ThrottleTimeMs
    error = r.take(">h")
    if error == 0 and r.compact_count() > 0:
        r.at += 16  # TopicId
        if r.compact_count() > 0:
            r.take(">i")
            error = r.take(">h")
    return correlation_id, ERRORS.get(error, str(error))


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    look: Callable[[bytes], Awaitable[None]],
) -> None:
    """Every Kafka frame (a 4-byte size, then the frame) from `reader` to `writer`, each shown
    to `look` first, which may hold it (and every frame behind it)."""
    while True:
        size_bytes = await reader.readexactly(4)
        frame = await reader.readexactly(struct.unpack(">i", size_bytes)[0])
        await look(frame)
        writer.write(size_bytes + frame)
        await writer.drain()


@dataclass
class _Route:
    broker: int
    listen_port: int
    controller_port: int


@dataclass
class Proxy:
    """Listens on `routes`' ports; forwards each to its controller port, holding when armed."""

    routes: list[_Route]
    armed: set[int] = field(default_factory=set)
    seen: list[AlterPartition] = field(default_factory=list)
    _release: dict[int, threading.Event] = field(default_factory=dict)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def for_brokers(cls, brokers: dict[int, list[tuple[int, int]]]) -> Proxy:
        """`brokers`: per broker id, its (proxy port, controller port) pairs."""
        return cls(
            [_Route(b, listen, target) for b, pairs in brokers.items() for listen, target in pairs]
        )

    # -- the scenario's side (any thread) ------------------------------------------------------

    def arm(self, broker: int) -> None:
        """Hold `broker`'s AlterPartition requests from now on, until `release`."""
        with self._lock:
            self._release[broker] = threading.Event()
            self.armed.add(broker)

    def release(self, broker: int) -> None:
        """Let the held requests of `broker` go, and hold no more of them."""
        with self._lock:
            self.armed.discard(broker)
            event = self._release.pop(broker, None)
        if event is not None:
            event.set()

    def held(self, broker: int) -> list[AlterPartition]:
        with self._lock:
            return [a for a in self.seen if a.broker == broker and a.holding]

    def start(self) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                servers = [
                    loop.run_until_complete(
                        asyncio.start_server(
                            lambda rd, wr, route=route: self._serve(route, rd, wr),
                            "127.0.0.1",
                            route.listen_port,
                            reuse_address=True,
                        )
                    )
                    for route in self.routes
                ]
            except OSError as err:
                failure.append(err)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                for server in servers:
                    server.close()
                tasks = asyncio.all_tasks(loop)
                for task in tasks:
                    task.cancel()
                if tasks:
                    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
                loop.close()

        self._thread = threading.Thread(target=run, name="mc-proxy", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]

    def close(self) -> None:
        for broker in list(self.armed):
            self.release(broker)
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self) -> Proxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop's side -----------------------------------------------------------------------

    async def _serve(
        self, route: _Route, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", route.controller_port)
        except OSError:  # the controller is down: the broker sees a refused connection
            client_w.close()
            return
        pending: dict[int, AlterPartition] = {}
        up = asyncio.ensure_future(
            _relay(client_r, server_w, functools.partial(self._request, route.broker, pending))
        )
        down = asyncio.ensure_future(
            _relay(server_r, client_w, functools.partial(self._response, pending))
        )
        try:
            await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass  # the proxy is closing: the connection goes with it
        finally:
            for task, writer in ((up, server_w), (down, client_w)):
                task.cancel()
                writer.close()
            for task in (up, down):  # one side closed (IncompleteReadError): nothing to report
                if task.done() and not task.cancelled():
                    task.exception()

    async def _request(self, broker: int, pending: dict[int, AlterPartition], frame: bytes) -> None:
        """A request frame on its way to a controller: an AlterPartition is decoded, noted
        until its response, and held while its broker is armed."""
        if struct.unpack_from(">h", frame)[0] != ALTER_PARTITION:
            return
        request = decode_request(broker, frame)
        with self._lock:
            self.seen.append(request)
            event = self._release.get(broker) if broker in self.armed else None
        pending[request.correlation_id] = request
        if event is not None:
            started = time.monotonic()
            request.holding = True
            await asyncio.get_running_loop().run_in_executor(None, event.wait)
            request.holding = False
            request.held_s = time.monotonic() - started

    @staticmethod
    async def _response(pending: dict[int, AlterPartition], frame: bytes) -> None:
        """A response frame on its way back to a broker: an AlterPartition's error noted."""
        request = pending.pop(struct.unpack_from(">i", frame)[0], None)  # its correlation id
        if request is not None:
            request.error = decode_response_error(frame)[1]
            request.answered_at = time.time()
