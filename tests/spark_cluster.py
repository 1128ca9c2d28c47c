"""A Spark standalone cluster on this machine, started from the installed pyspark package: one
master and one worker, every port (web UIs too) free ones chosen at random and bound to
127.0.0.1. For the tests (a session-scoped fixture) and for measuring by hand:

    .venv/bin/python -m tests.spark_cluster [--cores 2]   # prints the master URL; Ctrl-C stops
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


class Cluster:
    """`start()` launches the master and a worker and waits until the worker has registered;
    `stop()` ends both (their process groups)."""

    def __init__(self, cores: int = 2, memory: str = "2g", folder: str | None = None) -> None:
        self.cores = cores
        self.memory = memory
        self.folder = Path(folder or tempfile.mkdtemp(prefix="mc-spark-cluster-"))
        self.port = free_port()
        self.webui = free_port()
        self.master = f"spark://{HOST}:{self.port}"
        self.processes: list[subprocess.Popen[bytes]] = []

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=spark_home(),
            SPARK_LOCAL_IP=HOST,
            SPARK_LOCAL_DIRS=str(self.folder / "local"),
            SPARK_WORKER_DIR=str(self.folder / "work"),
            # No REST submission server (it would listen on 6066).
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        )
        return env

    def _launch(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        spark_class = os.path.join(spark_home(), "bin", "spark-class")
        process = subprocess.Popen(
            [spark_class, *args],
            env=self._env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends the JVM's children
        )
        log.close()
        self.processes.append(process)
        return process

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _wait(self, name: str, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log(name):
                return
            if any(p.poll() is not None for p in self.processes):
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the Spark {name} did not start:\n{self.log(name)[-3000:]}")

    def start(self, timeout: float = 120) -> Cluster:
        (self.folder / "local").mkdir(parents=True, exist_ok=True)
        (self.folder / "work").mkdir(parents=True, exist_ok=True)
        self._launch(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", HOST,
            "--port", str(self.port),
            "--webui-port", str(self.webui),
        )  # fmt: skip
        self._wait("master", "I have been elected leader", timeout)
        self._launch(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            "--host", HOST,
            "--port", str(free_port()),
            "--webui-port", str(free_port()),
            "--cores", str(self.cores),
            "--memory", self.memory,
            "--work-dir", str(self.folder / "work"),
            self.master,
        )  # fmt: skip
        self._wait("worker", "Successfully registered with master", timeout)
        return self

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 15)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)
                process.wait(5)
        self.processes.clear()


def main() -> None:
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    cores = int(sys.argv[sys.argv.index("--cores") + 1]) if "--cores" in sys.argv else 2
    cluster = Cluster(cores=cores).start()
    print(cluster.master, cluster.folder, flush=True)
    try:
        while all(p.poll() is None for p in cluster.processes):
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
