"""scripts/kafka/proxy.py without Java: an AlterPartition v3 frame, written byte by byte as
Kafka's generated AlterPartitionRequestData writes it, is held while the broker is armed (no
byte reaches the controller), decoded (the ISR with its broker epochs), let go on release, and
the controller's answer (INELIGIBLE_REPLICA) matched to it; other requests pass at once."""

from __future__ import annotations

import importlib.util
import socket
import struct
import sys
import threading
import time

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("mc_kafka_proxy", ROOT / "scripts/kafka/proxy.py")
assert _spec is not None and _spec.loader is not None
proxy_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = proxy_module  # its dataclasses look their module up there
_spec.loader.exec_module(proxy_module)

TOPIC_ID = bytes(range(16))


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def alter_partition_v3(correlation_id: int, isr: list[tuple[int, int]]) -> bytes:
    header = struct.pack(">hhih", 56, 3, correlation_id, 5) + b"mc-ap" + b"\x00"
    members = b"".join(struct.pack(">iq", b, e) + b"\x00" for b, e in isr)
    partition = struct.pack(">ii", 0, 4) + bytes([len(isr) + 1]) + members
    partition += struct.pack(">bi", 0, 9) + b"\x00"
    body = struct.pack(">iq", 2, 40) + b"\x02" + TOPIC_ID + b"\x02" + partition + b"\x00\x00"
    return frame(header + body)


def alter_partition_response(correlation_id: int, error: int) -> bytes:
    partition = struct.pack(">ihii", 0, error, 2, 4) + b"\x03" + struct.pack(">ii", 2, 1)
    partition += struct.pack(">bi", 0, 9) + b"\x00"
    body = struct.pack(">ih", 0, 0) + b"\x02" + TOPIC_ID + b"\x02" + partition + b"\x00\x00"
    return frame(struct.pack(">i", correlation_id) + b"\x00" + body)


def api_versions(correlation_id: int) -> bytes:
    return frame(struct.pack(">hhih", 18, 3, correlation_id, 0) + b"\x00\x00\x00")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            assert chunk, "connection closed"
            data += chunk
        return data

    return exactly(struct.unpack(">i", exactly(4))[0])


class FakeController:
    """Answers every AlterPartition with INELIGIBLE_REPLICA and echoes other frames' ids."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received: list[int] = []  # api keys, in the order they arrived
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            while True:
                try:
                    request = read_frame(conn)
                except AssertionError:
                    return
                api_key, _, correlation_id = struct.unpack_from(">hhi", request)
                self.received.append(api_key)
                if api_key == 56:
                    conn.sendall(alter_partition_response(correlation_id, 107))
                else:
                    conn.sendall(frame(struct.pack(">i", correlation_id)))


def test_an_armed_brokers_alter_partition_is_held_decoded_and_let_go():
    controller = FakeController()
    listen = free_port()
    with (
        proxy_module.Proxy.for_brokers({2: [(listen, controller.port)]}) as proxy,
        socket.create_connection(("127.0.0.1", listen), timeout=10) as broker,
    ):
        broker.sendall(api_versions(1))
        assert struct.unpack(">i", read_frame(broker)) == (1,)  # not held: passes
        proxy.arm(2)
        broker.sendall(alter_partition_v3(2, [(2, 40), (3, 77)]) + api_versions(3))
        deadline = time.monotonic() + 5
        while not proxy.held(2) and time.monotonic() < deadline:
            time.sleep(0.05)
        (held,) = proxy.held(2)
        assert held.isr() == [2, 3]
        assert held.summary()["isr_with_epochs"] == [[2, 40], [3, 77]]
        assert (held.partitions[0][0], held.partitions[0][1]) == (4, 9)
        time.sleep(0.3)
        assert controller.received == [18], "the held request (and the one behind it) wait"
        proxy.release(2)
        assert struct.unpack_from(">i", read_frame(broker)) == (2,)
        assert struct.unpack(">i", read_frame(broker)) == (3,)  # its order kept
        assert controller.received == [18, 56, 18]
        assert held.error == "INELIGIBLE_REPLICA" and held.held_s >= 0.3
        assert not proxy.held(2)
        broker.sendall(alter_partition_v3(4, [(2, 40)]))  # released: no longer held
        read_frame(broker)
        assert proxy.seen[-1].error == "INELIGIBLE_REPLICA" and proxy.seen[-1].held_s == 0
    controller.server.close()
