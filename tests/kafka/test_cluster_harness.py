"""scripts/kafka/cluster.py without Java: the checks that made a CI run wait 120 s for a broker
that had already exited (its port, 39412, was in the kernel's ephemeral range and taken by some
other connection). Ports in that range are refused, a held port is found the way the JVM's bind
would find it, and a node that exits unasked fails the wait at once, naming its first error."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

CLUSTER = ROOT / "scripts" / "kafka" / "cluster.py"
_spec = importlib.util.spec_from_file_location("mc_kafka_cluster", CLUSTER)
assert _spec is not None and _spec.loader is not None
cluster = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = cluster  # its dataclasses look their module up there
_spec.loader.exec_module(cluster)


def test_a_port_base_in_the_ephemeral_range_is_refused_with_the_range_named() -> None:
    ephemeral = cluster.ephemeral_ports()
    problem = cluster.ports_problem(ephemeral.start + 100)
    assert problem is not None
    assert f"{ephemeral.start}-{ephemeral.stop - 1}" in problem
    assert "net.ipv4.ip_local_port_range" in problem
    assert cluster.DEFAULT_PORT_BASE + max(cluster.PORT_OFFSETS) < ephemeral.start


def test_a_port_held_by_a_connection_is_taken_not_only_a_listening_one() -> None:
    base = cluster.DEFAULT_PORT_BASE + 500  # apart from the default cluster and the live test
    assert cluster.ports_problem(base) is None
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.socket()
    try:
        # a connection whose local end is the brokers' port, as an outgoing one's may be
        client.bind(("127.0.0.1", base + 12))
        client.connect(listener.getsockname())
        problem = cluster.ports_problem(base)
        assert problem == f"port {base + 12} is taken (another cluster?)"
    finally:
        client.close()
        listener.close()


def test_a_node_that_exits_unasked_fails_the_wait_at_once(tmp_path: Path) -> None:
    harness = cluster.Cluster(tmp_path, cluster.DEFAULT_PORT_BASE + 500)
    node = harness.nodes[2]
    node.home.mkdir(parents=True)
    (node.home / "server.log").write_text(
        "[2026-12-07 09:43:35,640] INFO Enabling request processing.\n"
        "[2026-12-07 09:43:35,651] ERROR Unable to start acceptor for PLAINTEXT (x.Acceptor)\n"
    )
    node.process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])
    node.process.wait()
    started = time.monotonic()
    with pytest.raises(cluster.ClusterError) as caught:
        harness.wait_for("three unfenced brokers", lambda: False, timeout=60)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert message.startswith("broker 2 exited with code 1 though nothing stopped it: ")
    assert "ERROR Unable to start acceptor for PLAINTEXT" in message


def test_a_node_the_harness_killed_is_no_crash(tmp_path: Path) -> None:
    harness = cluster.Cluster(tmp_path, cluster.DEFAULT_PORT_BASE + 500)
    node = harness.nodes[1]
    node.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    harness.kill(1)
    with pytest.raises(cluster.ClusterError, match="timed out after 1 s waiting for nothing"):
        harness.wait_for("nothing", lambda: False, timeout=1)


def test_scenarios_refuse_an_ephemeral_port_base_with_exit_3_and_no_traceback() -> None:
    base = cluster.ephemeral_ports().start + 100
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts/kafka/scenarios.py"), "leader-kill"]
        + ["--port-base", str(base), "--duration", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith(f"scenarios: ports {base + 1}-{base + 28} overlap")
    assert "Traceback" not in result.stderr
