"""The Spark engine on real processes: a standalone master and worker, and a Spark Connect server,
started from the installed pyspark package (tests.spark_cluster), and `mc check` run as a command
against them, as a user runs it. Skipped where Java or pyspark is missing, with the reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checker.errors import EngineError, ExitCode
from tests.conftest import ROOT

pytest.importorskip("pyspark", reason="the Spark engine needs pyspark")
pytest.importorskip("pyarrow", reason="the Spark engine needs pyarrow")

from checker.spark import java_problem
from tests.simulated_cluster import SimulatedCluster
from tests.spark_cluster import Cluster, ConnectServer

JAVA = java_problem()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    if JAVA:
        pytest.skip(JAVA)
    folder = tmp_path_factory.mktemp("spark-cluster")  # logs, work and local dirs
    started = Cluster(cores=2, memory="2g", folder=str(folder)).start()
    yield started
    started.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    if JAVA:
        pytest.skip(JAVA)
    folder = tmp_path_factory.mktemp("spark-connect")  # logs and local dirs
    started = ConnectServer(cores=2, folder=str(folder)).start()
    yield started
    started.stop()


def mc_command(
    cluster: Cluster | ConnectServer,
    tmp_path: Path,
    *args: str,
    python: str | None = None,
    driver: int = 0,
):
    """`mc check ... --engine spark --master <the cluster>` (or `--remote <the server>`) in a
    fresh process; levels below `driver` states run in the driver (0: every level on the
    executors)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    conf = ["--spark-conf", f"mc.driverLevelStates={driver}"]
    if isinstance(cluster, ConnectServer):  # the server's Spark settings are its own
        target = ["--remote", cluster.remote]
    else:
        target = ["--master", cluster.master]
        conf += [
            "--spark-conf", f"spark.checkpoint.dir={tmp_path / 'checkpoints'}",
            "--spark-conf", "spark.ui.enabled=false",
            "--spark-conf", "spark.task.maxFailures=1",
        ]  # fmt: skip
    if python:
        conf += ["--spark-conf", f"spark.pyspark.python={python}"]
    command = [sys.executable, "-m", "checker", "check", *args, "--progress", "0"]
    command += ["--engine", "spark", *target, *conf]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )


KIP903_ACTIONS = [
    "initial",
    "fetch",
    "fetch",
    "send_alter_partition",
    "replace_disk",
    "register_broker",
    "unfence_broker",
    "handle_alter_partition",
]


def local_report(*args: str):
    run = subprocess.run(
        [sys.executable, "-m", "checker", "check", *args, "--progress", "0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return run.returncode, _report(run.stdout)


def _report(out: str) -> list[str]:
    return [line for line in out.splitlines() if "Finished in" not in line]


def bare_python(tmp_path: Path) -> str:
    """A Python with the third-party packages of this environment but without mc: this
    interpreter without `site` (so no .pth file adds the editable checker), its
    site-packages on PYTHONPATH after Spark's own entries."""
    import pyspark

    site = str(Path(pyspark.__file__).resolve().parent.parent)
    wrapper = tmp_path / "bare-python"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} -S "$@"\n'
    )
    wrapper.chmod(0o755)
    probe = subprocess.run(
        [str(wrapper), "-c", "import checker"], cwd=tmp_path, capture_output=True, text=True
    )
    assert probe.returncode != 0 and "No module named 'checker'" in probe.stderr
    return str(wrapper)


def test_a_bundled_spec_on_a_standalone_cluster_whose_python_lacks_mc(cluster, tmp_path):
    """mc ships its code: the executors' Python has only the third-party packages, and the
    report is the local engine's, trace included. Levels 1 to 3 (1, 6 and 20 states) run in
    the driver, the next ones (44, 78, 122, 174) on the executors."""
    spec = str(ROOT / "specs" / "light" / "kip903.py")
    args = (spec, "-D", "max_unclean_shutdowns=0", "-D", "fixed=false")
    run = mc_command(cluster, tmp_path, *args, python=bare_python(tmp_path), driver=40)
    assert (run.returncode, _report(run.stdout)) == local_report(*args), run.stderr[-3000:]
    assert run.returncode == ExitCode.VIOLATION
    assert "Error: invariant no_stale_epoch_in_isr is violated." in run.stdout


def test_an_executor_python_without_a_module_is_named_with_the_fix(cluster, tmp_path):
    python = shutil.which("python3", path="/usr/bin")
    if python is None:
        pytest.skip("no /usr/bin/python3")
    probe = subprocess.run(
        [python, "-c", "import sys, msgpack; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
    )
    if probe.returncode == 0:
        pytest.skip(f"{python} has msgpack")
    same = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info[:2])"], text=True, capture_output=True
    ).stdout.strip()
    if same != str(tuple(sys.version_info[:2])):
        pytest.skip(f"{python} is Python {same}, not the driver's")
    spec = str(ROOT / "specs" / "examples" / "die_hard.py")
    run = mc_command(cluster, tmp_path, spec, python=python)
    assert run.returncode == ExitCode.ENGINE_ERROR, run.stderr[-3000:]
    error = [line for line in run.stderr.splitlines() if line.startswith("mc: error:")]
    assert len(error) == 1, run.stderr[-3000:]
    assert re.search(r"a Python worker lacks the module '\w+' \(ModuleNotFoundError", error[0])
    assert "spark.archives=" in error[0] and "spark.pyspark.python" in error[0]


def test_a_bundled_spec_on_a_spark_connect_server(connect_server, tmp_path):
    """`mc check --remote sc://...` against a Connect server started with
    sbin/start-connect-server.sh: mc's code goes to it as artifacts, levels 1 to 3 run in the
    driver and the next ones on the server, and the report is the local engine's. The server
    listens on 127.0.0.1 only."""
    spec = str(ROOT / "specs" / "light" / "kip903.py")
    args = (spec, "-D", "max_unclean_shutdowns=0", "-D", "fixed=false")
    run = mc_command(connect_server, tmp_path, *args, driver=40)
    assert (run.returncode, _report(run.stdout)) == local_report(*args), run.stderr[-3000:]
    assert run.returncode == ExitCode.VIOLATION
    assert "157 distinct states found" in run.stdout
    actions = re.findall(r"^State \d+: (\w+)", run.stdout, re.MULTILINE)
    assert actions == KIP903_ACTIONS
    addresses = connect_server.listening()
    assert addresses and all(a.rsplit(":", 1)[0] in LOOPBACK for a in addresses), addresses


LOOPBACK = ("127.0.0.1", "[::ffff:127.0.0.1]")


def test_kip903_on_a_simulated_cluster_of_two_cpu_limited_workers_in_namespaces(tmp_path):
    """tests/simulated_cluster.py: the master, two 1-core workers and the driver each in a
    network namespace of its own (10.99.0.x, on no interface of the host) and a CPU cgroup
    (workers 0.5 CPU, driver 0.8): `mc check` as the driver gives the local engine's report,
    counterexample included, the executors run in the workers' throttled cgroups, and nothing
    is left once the cluster stops."""
    if JAVA:
        pytest.skip(JAVA)
    try:
        cluster = SimulatedCluster(workers=2, quota=0.5, driver_quota=0.8, folder=str(tmp_path))
    except EngineError as exc:  # not root, no cpu controller, no `ip`: the harness says which
        pytest.skip(str(exc))
    spec = str(ROOT / "specs" / "light" / "kip903.py")
    args = (spec, "-D", "max_unclean_shutdowns=0", "-D", "fixed=false")
    try:
        cluster.start()
        before = cluster.readings()
        run = cluster.run_driver(
            [sys.executable, "-m", "checker", "check", *args, "--progress", "0",
             "--engine", "spark", "--master", cluster.master, *cluster.driver_conf(),
             "--spark-conf", "mc.driverLevelStates=40", "--spark-conf", "spark.task.maxFailures=1"],
            timeout=300,
            cwd=str(tmp_path),
        )  # fmt: skip
        after = cluster.readings()
        host = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
        inside = subprocess.run(
            cluster.network.command("master", ["ip", "-o", "addr"]), capture_output=True, text=True
        ).stdout
        namespaces = list(cluster.network.namespaces.values()) + [cluster.network.bridge]
        folders = [f for c in cluster.cgroups.values() for f in c.folders]
        started = [p.pid for p in cluster.processes]  # master and workers (process groups)
    finally:
        cluster.stop()
    assert (run.returncode, _report(run.stdout)) == local_report(*args), run.stderr[-3000:]
    assert run.returncode == ExitCode.VIOLATION
    assert "157 distinct states found" in run.stdout
    assert re.findall(r"^State \d+: (\w+)", run.stdout, re.MULTILINE) == KIP903_ACTIONS
    for worker in cluster.worker_names:  # its executor ran there, held to its quota
        used = after[worker].used_s - before[worker].used_s
        assert used > 0.5 and after[worker].throttled > 0, (worker, used, after[worker])
    assert after["driver"].used_s - before["driver"].used_s > 2
    assert "10.99.0." not in host and f"inet {cluster.address('master')}/24" in inside
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(name in listed.split() for name in namespaces)
    assert not any(folder.exists() for folder in folders)
    assert len(started) == 3 and not any(_group_alive(pid) for pid in started)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
