"""Spark on this machine, started from the installed pyspark package: a standalone cluster (a
master and its workers) or a Spark Connect server, every port (web UIs too) a free one chosen at
random and bound to 127.0.0.1. For the tests (session-scoped fixtures) and for measuring by hand:

    .venv/bin/python -m tests.spark_cluster [--cores 2] [--workers 1]  # the master URL; Ctrl-C
    .venv/bin/python -m tests.spark_cluster --connect  # a Connect server: prints sc://...
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


class Processes:
    """Spark daemons started from the installed package, each in its own process group (a
    launcher script and its JVM), logging to files in `folder`; `stop()` ends every process of
    those groups, so no JVM is left behind."""

    def __init__(self, folder: str | None, prefix: str) -> None:
        self.folder = Path(folder or tempfile.mkdtemp(prefix=prefix))
        self.processes: list[subprocess.Popen[bytes]] = []

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=spark_home(),
            SPARK_LOCAL_IP=HOST,
            SPARK_LOCAL_DIRS=str(self.folder / "local"),
            SPARK_LOG_DIR=str(self.folder / "logs"),
            SPARK_PID_DIR=str(self.folder),
        )
        return env

    def _launch(
        self,
        name: str,
        command: list[str],
        env: dict[str, str] | None = None,
        preexec_fn: Callable[[], None] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `command` logging to `name`.log, with `env` over this cluster's environment;
        `preexec_fn` runs in the child before it executes (to join cgroups)."""
        for sub in ("local", "logs"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        process = subprocess.Popen(
            command,
            env={**self._env(), **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends the JVM's children
            preexec_fn=preexec_fn,
        )
        log.close()
        self.processes.append(process)
        return process

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _wait(self, name: str, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if any(p.poll() is not None for p in self.processes):
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the Spark {name} did not start:\n{self.log(name)[-3000:]}")

    def stop(self) -> None:
        for process in reversed(self.processes):
            _signal_group(process.pid, signal.SIGTERM)
        for process in self.processes:
            deadline = time.monotonic() + 20
            while _signal_group(process.pid, 0) and time.monotonic() < deadline:
                process.poll()  # reap the launcher, if it is the one left
                time.sleep(0.2)
            _signal_group(process.pid, signal.SIGKILL)
            process.wait(5)
        self.processes.clear()


def _signal_group(group: int, sig: int) -> bool:
    """Send `sig` to a process group (0: only probe it); whether any process of it was left."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    return True


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((HOST, port)) == 0


class Cluster(Processes):
    """`start()` launches a standalone master and `workers` workers of `cores` cores each and
    waits until they have registered; `stop()` ends them all."""

    def __init__(
        self, cores: int = 2, memory: str = "2g", folder: str | None = None, workers: int = 1
    ) -> None:
        super().__init__(folder, "mc-spark-cluster-")
        self.cores = cores
        self.workers = workers
        self.memory = memory
        self.port = free_port()
        self.webui = free_port()
        self.master = f"spark://{HOST}:{self.port}"

    def _env(self) -> dict[str, str]:
        env = super()._env()
        env.update(
            SPARK_WORKER_DIR=str(self.folder / "work"),
            # No REST submission server (it would listen on 6066).
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        )
        return env

    def _spark_class(self, name: str, *args: str) -> None:
        self._launch(name, [os.path.join(spark_home(), "bin", "spark-class"), *args])

    def _logged(self, name: str, text: str) -> Callable[[], bool]:
        return lambda: text in self.log(name)

    def start(self, timeout: float = 120) -> Cluster:
        (self.folder / "work").mkdir(parents=True, exist_ok=True)
        self._spark_class(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", HOST,
            "--port", str(self.port),
            "--webui-port", str(self.webui),
        )  # fmt: skip
        self._wait("master", self._logged("master", "I have been elected leader"), timeout)
        for n in range(self.workers):
            name = "worker" if n == 0 else f"worker-{n}"
            (self.folder / name).mkdir(exist_ok=True)
            self._spark_class(
                name,
                "org.apache.spark.deploy.worker.Worker",
                "--host", HOST,
                "--port", str(free_port()),
                "--webui-port", str(free_port()),
                "--cores", str(self.cores),
                "--memory", self.memory,
                "--work-dir", str(self.folder / name),
                self.master,
            )  # fmt: skip
            self._wait(name, self._logged(name, "Successfully registered with master"), timeout)
        return self


class ConnectServer(Processes):
    """A Spark Connect server (`sbin/start-connect-server.sh`, in the foreground) running
    Spark in local mode with `cores` cores, its gRPC port and every other port on 127.0.0.1,
    the web UI off. `start()` returns once it accepts connections; `remote` is its URL."""

    def __init__(self, cores: int = 2, folder: str | None = None) -> None:
        super().__init__(folder, "mc-spark-connect-")
        self.cores = cores
        self.port = free_port()
        self.remote = f"sc://{HOST}:{self.port}"

    def _env(self) -> dict[str, str]:
        env = super()._env()
        env["PYSPARK_PYTHON"] = sys.executable  # its Python workers: this environment's
        return env

    def start(self, timeout: float = 120) -> ConnectServer:
        script = os.path.join(spark_home(), "sbin", "start-connect-server.sh")
        self._launch(
            "connect",
            [
                script, "--wait",
                "--master", f"local[{self.cores}]",
                "--conf", f"spark.connect.grpc.binding.address={HOST}",
                "--conf", f"spark.connect.grpc.binding.port={self.port}",
                "--conf", f"spark.driver.host={HOST}",
                "--conf", f"spark.driver.bindAddress={HOST}",
                "--conf", "spark.ui.enabled=false",
                "--conf", f"spark.sql.shuffle.partitions={2 * self.cores}",
            ],
        )  # fmt: skip
        self._wait("connect", lambda: _accepts(self.port), timeout)
        return self

    def listening(self) -> list[str]:
        """The local addresses on which the server's processes listen (from `ss -ltnp`)."""
        groups = {p.pid for p in self.processes}
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
        return [
            line.split()[3]
            for line in out.splitlines()
            if any(_group_of(int(pid)) in groups for pid in re.findall(r"pid=(\d+)", line))
        ]


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def main() -> None:
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    cores = int(sys.argv[sys.argv.index("--cores") + 1]) if "--cores" in sys.argv else 2
    workers = int(sys.argv[sys.argv.index("--workers") + 1]) if "--workers" in sys.argv else 1
    if "--connect" in sys.argv:
        server = ConnectServer(cores=cores).start()
        started: Processes = server
        print(server.remote, server.folder, flush=True)
    else:
        cluster = Cluster(cores=cores, workers=workers).start()
        started = cluster
        print(cluster.master, cluster.folder, flush=True)
    try:
        while all(p.poll() is None for p in started.processes):
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        started.stop()


if __name__ == "__main__":
    main()
