"""A real Apache Kafka 4.x KRaft cluster on 127.0.0.1, started from the jars of `make kafka-lib`.

Three controllers (node ids 101-103) and three brokers (node ids 1-3) as separate JVMs: with
combined broker+controller nodes, killing two of the three brokers would also take the metadata
quorum down, and the scenarios that reach KIP-966's ELR need every broker down while the
controllers keep writing the log. Each broker has a data disk (`log.dirs`) apart from its
`metadata.log.dir`, so a data disk can be wiped without losing the broker's metadata log.

Every JVM is a child of this process with PR_SET_PDEATHSIG=SIGKILL, and `Cluster` is a context
manager that kills them all on exit, Ctrl-C or SIGTERM: nothing is left running.
"""

from __future__ import annotations

import base64
import ctypes
import json
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

HERE = Path(__file__).resolve().parent
LIB = HERE / "lib"
KAFKA_MAIN = "kafka.Kafka"  # in kafka_2.13 (jar tf)
STORAGE_TOOL = "kafka.tools.StorageTool"  # in kafka_2.13, not in kafka-tools (jar tf)
DUMP_TOOL = "org.apache.kafka.tools.DumpLogSegments"  # in kafka-tools (jar tf)

BROKERS = (1, 2, 3)
CONTROLLERS = (101, 102, 103)
TOPIC = "mc-kip966"
# The feature the issue formats with: KIP-966's eligible leader replicas.
FEATURES = ("eligible.leader.replicas.version=1",)

# Small heaps and the C1 compiler only: six JVMs share two cores with other work.
JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")
HEAP = {"broker": "-Xmx384m", "controller": "-Xmx256m"}

# Timeouts shorter than Kafka's defaults so that a fault shows in the log within seconds.
COMMON_CONFIG = {
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "num.partitions": "1",
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "unclean.leader.election.enable": "false",
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "group.initial.rebalance.delay.ms": "0",
}
CONTROLLER_CONFIG = {
    "process.roles": "controller",
    "broker.session.timeout.ms": "6000",  # a frozen broker is fenced after 6 s
    # the spec has no preferred leader election: none may come (by default every 300 s)
    "auto.leader.rebalance.enable": "false",
}
BROKER_CONFIG = {
    "process.roles": "broker",
    "inter.broker.listener.name": "PLAINTEXT",
    "broker.heartbeat.interval.ms": "1000",
    "replica.lag.time.max.ms": "5000",  # a stalled follower leaves the ISR after 5 s
    "controlled.shutdown.enable": "true",
}

LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""

_PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl


def _die_with_parent() -> None:
    """Run in the child before exec: SIGKILL it when the harness dies, even by kill -9."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# Below Linux's ephemeral range (32768-60999 by default): a port in that range may be taken at
# any moment by another process's outgoing connection, and a broker that cannot bind exits.
DEFAULT_PORT_BASE = 29100
PORT_OFFSETS = (*range(1, 4), *range(11, 14), *range(20, 29))  # controllers, brokers, proxy


class ClusterError(RuntimeError):
    """The cluster did not reach a state in time, a node exited unasked, or a tool failed."""


def classpath() -> str:
    if not (LIB / ".stamp").exists():
        raise ClusterError(f"{LIB} is missing: run `make kafka-lib` (Maven Central)")
    return str(LIB / "*")


def java() -> str:
    path = shutil.which("java")
    if path is None:
        raise ClusterError("no `java` on PATH: Kafka needs Java 17+")
    return path


def random_cluster_id() -> str:
    """A Kafka Uuid as the storage tool's random-uuid prints it: url-safe base64, no padding.

    Not one that starts with '-': the storage tool would read it as an option.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass
class Node:
    node_id: int
    role: str  # "broker" or "controller"
    port: int
    home: Path
    process: subprocess.Popen[bytes] | None = None
    frozen: bool = False
    asked_down: bool = False  # the harness killed or stopped it: an exit is no crash

    @property
    def crashed(self) -> bool:
        """The JVM exited though the harness did not ask it to (a port taken, a fatal error)."""
        return self.process is not None and not self.alive and not self.asked_down

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def metadata_dir(self) -> Path:
        return self.home / "metadata"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class Cluster:
    """Three controllers and three brokers under `workdir`, listening from `port_base` on."""

    def __init__(
        self, workdir: Path, port_base: int = DEFAULT_PORT_BASE, proxied: bool = False
    ) -> None:
        self.workdir = workdir
        self.port_base = port_base
        self.proxied = proxied
        self.cluster_id = random_cluster_id()
        self.nodes: dict[int, Node] = {}
        for i, node_id in enumerate(CONTROLLERS):
            self.nodes[node_id] = Node(
                node_id, "controller", port_base + 1 + i, workdir / f"controller-{node_id}"
            )
        for i, node_id in enumerate(BROKERS):
            self.nodes[node_id] = Node(
                node_id, "broker", port_base + 11 + i, workdir / f"broker-{node_id}"
            )
        self.voters = ",".join(f"{c}@127.0.0.1:{self.nodes[c].port}" for c in CONTROLLERS)
        self.bootstrap = ",".join(f"127.0.0.1:{self.nodes[b].port}" for b in BROKERS)
        self._admin: KafkaAdminClient | None = None

    # -- set-up -------------------------------------------------------------------------------

    def proxy_port(self, broker: int, controller: int) -> int:
        """The port where proxy.py listens for `broker`'s traffic to `controller`."""
        return self.port_base + 20 + 3 * BROKERS.index(broker) + CONTROLLERS.index(controller)

    def proxy_routes(self) -> dict[int, list[tuple[int, int]]]:
        """Per broker, its (proxy port, controller port) pairs: proxy.Proxy.for_brokers's."""
        return {
            b: [(self.proxy_port(b, c), self.nodes[c].port) for c in CONTROLLERS] for b in BROKERS
        }

    def _config(self, node: Node) -> dict[str, str]:
        config = dict(COMMON_CONFIG)
        config["node.id"] = str(node.node_id)
        config["controller.quorum.voters"] = self.voters
        if self.proxied and node.role == "broker":
            # its controllers reached through proxy.py, which may hold an AlterPartition a
            # while: a held request must not time out (30 s by default) and be sent again
            config["controller.quorum.voters"] = ",".join(
                f"{c}@127.0.0.1:{self.proxy_port(node.node_id, c)}" for c in CONTROLLERS
            )
            config["controller.socket.timeout.ms"] = "180000"
        if node.role == "controller":
            config.update(CONTROLLER_CONFIG)
            config["listeners"] = f"CONTROLLER://127.0.0.1:{node.port}"
            config["log.dirs"] = str(node.metadata_dir)
        else:
            config.update(BROKER_CONFIG)
            config["listeners"] = f"PLAINTEXT://127.0.0.1:{node.port}"
            config["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{node.port}"
            config["log.dirs"] = str(node.data_dir)
            config["metadata.log.dir"] = str(node.metadata_dir)
        return config

    def format(self) -> None:
        """Write each node's config and format its directories with the storage tool."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "log4j2.properties").write_text(LOG4J2)
        for node in self.nodes.values():
            node.home.mkdir(parents=True, exist_ok=True)
            lines = [f"{key}={value}" for key, value in sorted(self._config(node).items())]
            (node.home / "server.properties").write_text("\n".join(lines) + "\n")
            self._format(node, "format.log")

    def _format(self, node: Node, log: str, *flags: str) -> None:
        """The storage tool's format of `node` with the cluster's id and features."""
        features = [arg for feature in FEATURES for arg in ("--feature", feature)]
        self._run_tool(
            STORAGE_TOOL,
            "format",
            "--config",
            str(node.home / "server.properties"),
            "--cluster-id",
            self.cluster_id,
            *flags,
            *features,
            log=node.home / log,
        )

    def _run_tool(self, main: str, *args: str, log: Path) -> str:
        command = [java(), "-Xmx256m", *JVM_OPTS, "-cp", classpath(), main, *args]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=180, preexec_fn=_die_with_parent
        )
        log.write_text(result.stdout + result.stderr)
        if result.returncode != 0:
            raise ClusterError(f"{main} {args[0]} exited {result.returncode}; see {log}")
        return result.stdout

    # -- processes ----------------------------------------------------------------------------

    def start(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.alive:
            raise ClusterError(f"node {node_id} is already running")
        command = [
            java(),
            HEAP[node.role],
            *JVM_OPTS,
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={node.home}",
            "-cp",
            classpath(),
            KAFKA_MAIN,
            str(node.home / "server.properties"),
        ]
        with open(node.home / "stdout.log", "ab") as out:
            node.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )
        node.frozen = False
        node.asked_down = False

    def start_all(self) -> None:
        for node_id in CONTROLLERS + BROKERS:
            self.start(node_id)

    def signal(self, node_id: int, signum: int) -> None:
        node = self.nodes[node_id]
        if not node.alive:
            raise ClusterError(f"node {node_id} is not running")
        assert node.process is not None
        node.process.send_signal(signum)

    def kill(self, node_id: int) -> None:
        """kill -9: no controlled shutdown, no clean-shutdown file."""
        node = self.nodes[node_id]
        self.signal(node_id, signal.SIGKILL)
        node.asked_down = True
        assert node.process is not None
        node.process.wait(timeout=30)
        node.frozen = False

    def stop(self, node_id: int, timeout: float = 60.0) -> None:
        """SIGTERM: a broker's controlled shutdown; killed if it takes longer than `timeout`."""
        node = self.nodes[node_id]
        self.signal(node_id, signal.SIGTERM)
        node.asked_down = True
        assert node.process is not None
        try:
            node.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired as err:
            node.process.kill()
            node.process.wait()
            raise ClusterError(f"node {node_id} did not stop within {timeout} s") from err

    def freeze(self, node_id: int) -> None:
        self.signal(node_id, signal.SIGSTOP)
        self.nodes[node_id].frozen = True

    def resume(self, node_id: int) -> None:
        self.signal(node_id, signal.SIGCONT)
        self.nodes[node_id].frozen = False

    def wipe_data_disk(self, node_id: int) -> None:
        """Lose a stopped broker's data disk (log.dirs) and put in a new, empty one, formatted
        as an operator would (the storage tool with --ignore-formatted formats only the empty
        directory; a broker refuses to start on a log dir without meta.properties). Its
        metadata.log.dir stays."""
        node = self.nodes[node_id]
        if node.alive:
            raise ClusterError(f"node {node_id} is running: stop it before wiping its disk")
        shutil.rmtree(node.data_dir)
        node.data_dir.mkdir()
        self._format(node, "format-new-disk.log", "--ignore-formatted")

    def close(self) -> None:
        """Kill every JVM still running (SIGKILL works on a frozen one too)."""
        self._drop_admin()
        for node in self.nodes.values():
            node.asked_down = True
            if node.alive:
                assert node.process is not None
                node.process.kill()
                node.process.wait()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- observation --------------------------------------------------------------------------

    def admin(self) -> KafkaAdminClient:
        if self._admin is None:
            self._admin = KafkaAdminClient(
                bootstrap_servers=self.bootstrap,
                client_id="mc-harness",
                request_timeout_ms=5000,
                bootstrap_timeout_ms=5000,
            )
        return self._admin

    def _drop_admin(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def active_controller(self) -> int | None:
        """The leader at the highest epoch that the running controllers' quorum-state name."""
        best: tuple[int, int] | None = None
        for node_id in CONTROLLERS:
            node = self.nodes[node_id]
            if not node.alive or node.frozen:
                continue
            state_file = node.metadata_dir / "__cluster_metadata-0" / "quorum-state"
            try:
                state = json.loads(state_file.read_text())
            except (OSError, ValueError):
                continue
            leader, epoch = state.get("leaderId", -1), state.get("leaderEpoch", -1)
            if (
                leader in CONTROLLERS
                and self.nodes[leader].alive
                and (best is None or epoch > best[1])
            ):
                best = (leader, epoch)
        return None if best is None else best[0]

    def unfenced_brokers(self) -> set[int]:
        """The registered brokers that are not fenced (DescribeCluster, which lists both)."""
        try:
            brokers = self.admin().describe_cluster()["brokers"]
            return {b["broker_id"] for b in brokers if not b.get("is_fenced", False)}
        except KafkaError:  # no broker reachable
            self._drop_admin()
            return set()

    def partition(self) -> tuple[int, list[int], list[int]] | None:
        """(leader, replicas, isr) of the topic's partition 0 as a broker sees it, or None."""
        try:
            (topic,) = self.admin().describe_topics([TOPIC])
        except KafkaError:
            self._drop_admin()
            return None
        parts = [p for p in topic["partitions"] if p["partition_index"] == 0]
        if topic["error_code"] != 0 or not parts:
            return None
        part = parts[0]
        return part["leader_id"], list(part["replica_nodes"]), list(part["isr_nodes"])

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.raise_if_crashed()
            if predicate():
                return
            time.sleep(0.5)
        raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")

    def raise_if_crashed(self) -> None:
        """Fail at once, naming the node and its first error, when a JVM exited unasked."""
        for node in self.nodes.values():
            if node.crashed:
                assert node.process is not None
                log = node.home / "server.log"
                try:
                    lines = log.read_text(errors="replace").splitlines()
                except OSError:
                    lines = []
                first = next((line for line in lines if "] ERROR " in line), "no ERROR line")
                raise ClusterError(
                    f"{node.role} {node.node_id} exited with code {node.process.returncode}"
                    f" though nothing stopped it: {first.strip()} (see {log})"
                )

    def wait_ready(self, timeout: float = 120.0) -> None:
        self.wait_for("an active controller", lambda: self.active_controller() is not None, timeout)
        self.wait_for(
            "three unfenced brokers", lambda: self.unfenced_brokers() == set(BROKERS), timeout
        )

    def create_topic(self) -> None:
        topic = NewTopic(
            TOPIC,
            num_partitions=1,
            replication_factor=3,
            topic_configs={"min.insync.replicas": "2"},
        )
        deadline = time.monotonic() + 60
        while True:  # a broker not yet in the admin client's metadata is a transient error
            try:
                self.admin().create_topics([topic], timeout_ms=30000)
                break
            except TopicAlreadyExistsError:  # an earlier try got through
                break
            except KafkaError:
                self._drop_admin()
                if time.monotonic() > deadline:
                    raise
                time.sleep(1.0)
        self.wait_for("the topic's partition with a full ISR", self.fully_replicated)

    def fully_replicated(self) -> bool:
        part = self.partition()
        return part is not None and part[0] >= 0 and sorted(part[2]) == sorted(part[1])

    def leader(self) -> int:
        part = self.partition()
        if part is None or part[0] < 0:
            raise ClusterError("the partition has no leader")
        return part[0]

    # -- the log ------------------------------------------------------------------------------

    def metadata_segments(self, controller: int) -> list[Path]:
        log_dir = self.nodes[controller].metadata_dir / "__cluster_metadata-0"
        return sorted(log_dir.glob("*.log"))

    def dump_metadata_log(self, controller: int | None = None) -> str:
        """The controller's __cluster_metadata log as the dump tool's metadata decoder prints it."""
        if controller is None:
            controller = self.active_controller()
        if controller is None:
            raise ClusterError("no active controller to dump the log of")
        files = ",".join(str(path) for path in self.metadata_segments(controller))
        return self._run_tool(
            DUMP_TOOL, "--cluster-metadata-decoder", "--files", files, log=self.workdir / "dump.log"
        )


def ephemeral_ports() -> range:
    """The kernel's range for outgoing connections' local ports (ip_local_port_range)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    except (OSError, ValueError):
        low, high = "32768", "60999"  # Linux's default
    return range(int(low), int(high) + 1)


def ports_problem(port_base: int) -> str | None:
    """Why the cluster's ports from `port_base` cannot be used, or None.

    A port in the ephemeral range is refused: another process's connection may take it between
    this check and the JVM's bind. A port is taken when binding it fails the way Kafka's would
    (SO_REUSEADDR, as the JVM sets): a listener or a connection holds it.
    """
    ports = [port_base + offset for offset in PORT_OFFSETS]
    ephemeral = ephemeral_ports()
    if any(port in ephemeral for port in ports):
        return (
            f"ports {ports[0]}-{ports[-1]} overlap the kernel's ephemeral range"
            f" {ephemeral.start}-{ephemeral.stop - 1} (net.ipv4.ip_local_port_range):"
            f" choose a --port-base below {ephemeral.start - PORT_OFFSETS[-1]}"
        )
    for port in ports:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                return f"port {port} is taken (another cluster?)"
    return None
