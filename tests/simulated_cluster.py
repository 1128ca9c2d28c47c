"""A Spark standalone cluster simulated on one machine: the master, each worker and the driver
in a network namespace of their own, joined by veth pairs to a bridge in another namespace
(10.99.0.x addresses that exist only there), each worker (its executor JVM and Python workers
inherit it) and the driver in a CPU cgroup with a quota. For the tests, `make bench-cluster`
(scripts/bench_cluster.py) and measuring by hand (as root):

    .venv/bin/python -m tests.simulated_cluster --workers 2 --quota 0.35  # prints how; Ctrl-C

It needs root, `ip` (iproute2) and the cpu controller (cgroup v1: the cpu and cpuacct
hierarchies, joined both; or cgroup v2's cpu.max and cpu.stat). Where any is missing it raises
EngineError (exit 153) saying what, never falls back to an unconfined cluster. Everything it
made (processes, namespaces, cgroups) goes in `stop()`, which `with` and the command call on
exit, Ctrl-C and SIGTERM; a harness killed outright leaves them, and the next one removes those
of harnesses no longer running.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.errors import ConfigError, EngineError
from tests.spark_cluster import Processes, spark_home

SUBNET = "10.99.0"  # inside the namespaces made here only
MASTER_PORT = 7077  # each part has its own network namespace: fixed ports collide with nothing
PERIOD_US = 100_000  # CFS period of every quota
SHARES = 8192  # the cluster's cgroup's cpu.shares (8x a process of the machine's)
MAX_QUOTAS = 1.8  # CPUs: the quotas' sum leaves the 2 cores' rest to the harness and the system
GROUP_PREFIX = "mc-sim-"  # cgroups: mc-sim-<harness pid>-<n>/<part>
NS_PREFIX = "mcsim"  # namespaces: mcsim<harness pid>x<n>-<part>
# The JVMs of the cluster: C1 only (on a third of a core C2's compiling costs more than its
# code saves over a search's short tasks, docs/scaling.md). The driver's also sized for the
# one core its part stands for (a JVM here counts the machine's 2 cores, and picks G1 and
# its threads for them): its CPU per level fell by a tenth. Not the executors': with the
# serial GC their CPU for the same search rose by 40 % (19.9 against 14.0 CPU s, RM=7).
EXECUTOR_JVM = "-XX:TieredStopAtLevel=1"
DRIVER_JVM = "-XX:TieredStopAtLevel=1 -XX:ActiveProcessorCount=1 -XX:+UseSerialGC"
_count = itertools.count()


# -- cgroups ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CgroupLayout:
    """Where the cpu controller lives: v1 has the `cpu` and `cpuacct` hierarchies (maybe
    mounted together), v2 one hierarchy with cpu.max and cpu.stat."""

    version: int
    cpu: Path
    cpuacct: Path  # v2: the same as cpu


def find_layout(mounts: str | None = None) -> CgroupLayout:
    """The cgroup layout from /proc/self/mounts (v1's cpu controller first, as a hybrid
    machine's v2 hierarchy then has no cpu controller)."""
    text = mounts if mounts is not None else Path("/proc/self/mounts").read_text()
    cpu = cpuacct = v2 = None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        point, kind, options = Path(fields[1]), fields[2], set(fields[3].split(","))
        if kind == "cgroup":
            cpu = point if "cpu" in options and cpu is None else cpu
            cpuacct = point if "cpuacct" in options and cpuacct is None else cpuacct
        elif kind == "cgroup2" and v2 is None:
            controllers = point / "cgroup.controllers"
            if controllers.exists() and "cpu" in controllers.read_text().split():
                v2 = point
    if cpu is not None and cpuacct is not None:
        return CgroupLayout(1, cpu, cpuacct)
    if v2 is not None:
        return CgroupLayout(2, v2, v2)
    raise EngineError(
        "no cgroup with the cpu controller here (neither cgroup v1's cpu and cpuacct"
        " hierarchies nor a cgroup v2 hierarchy offering cpu): the simulated cluster cannot"
        " limit its parts' CPU"
    )


@dataclass(frozen=True)
class CpuReading:
    """A cgroup's counters at one moment: CPU used, CFS periods with runnable tasks, those in
    which the quota ran out (throttled), and the time spent throttled."""

    used_s: float
    periods: int
    throttled: int
    throttled_s: float


class Cgroup:
    """One part's CPU cgroup: `quota` CPUs (None: accounted, not limited)."""

    def __init__(self, layout: CgroupLayout, name: str, quota: float | None) -> None:
        self.layout = layout
        self.name = name
        self.quota = quota
        self.folders = list(dict.fromkeys([layout.cpu / name, layout.cpuacct / name]))

    def create(self) -> None:
        for folder in self.folders:
            folder.mkdir(parents=True)
        limit = round(self.quota * PERIOD_US) if self.quota is not None else None
        if self.layout.version == 1:
            _write(self.folders[0] / "cpu.cfs_period_us", str(PERIOD_US))
            _write(self.folders[0] / "cpu.cfs_quota_us", str(limit if limit else -1))
        else:
            _write(self.folders[0] / "cpu.max", f"{limit or 'max'} {PERIOD_US}")

    def join(self) -> None:
        """Put the calling process in the cgroup (every hierarchy): a `preexec_fn`, so that the
        command and all it starts are in it. Before `ip netns exec`, which mounts its own /sys
        where joining silently does nothing."""
        pid = str(os.getpid()).encode()
        for folder in self.folders:
            fd = os.open(folder / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def read(self) -> CpuReading:
        stat = dict(
            (key, int(value))
            for key, value in (
                line.split() for line in (self.folders[0] / "cpu.stat").read_text().splitlines()
            )
        )
        if self.layout.version == 1:
            used = int((self.folders[-1] / "cpuacct.usage").read_text()) / 1e9
            throttled_s = stat.get("throttled_time", 0) / 1e9
        else:
            used = stat["usage_usec"] / 1e6
            throttled_s = stat.get("throttled_usec", 0) / 1e6
        return CpuReading(used, stat.get("nr_periods", 0), stat.get("nr_throttled", 0), throttled_s)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            procs = folder / "cgroup.procs"
            if procs.exists():
                found.update(int(p) for p in procs.read_text().split())
        return sorted(found)

    def remove(self) -> None:
        """Kill what is left in it (processes the harness started), then remove it."""
        deadline = time.monotonic() + 10
        while (left := self.pids()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        for folder in self.folders:
            if folder.exists():
                folder.rmdir()


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _remove_group_tree(root: Path) -> None:
    """rmdir a harness's cgroup folder and its parts' (children first)."""
    for child in sorted((p for p in root.iterdir() if p.is_dir()), reverse=True):
        _remove_group_tree(child)
    root.rmdir()


def make_group(layout: CgroupLayout, group: str, parts: Iterable[Cgroup]) -> None:
    """Make a harness's cgroup `group` and its parts' below it. The group has a large weight
    against the machine's other work, so that each part gets its quota when the cores are
    shared (the quotas still cap it)."""
    try:
        for hierarchy in dict.fromkeys([layout.cpu, layout.cpuacct]):
            (hierarchy / group).mkdir(exist_ok=True)
        if layout.version == 1:
            _write(layout.cpu / group / "cpu.shares", str(SHARES))
        else:  # the parts' cpu.max needs cpu enabled above them
            for folder in (layout.cpu, layout.cpu / group):
                _write(folder / "cgroup.subtree_control", "+cpu")
            _write(layout.cpu / group / "cpu.weight", str(SHARES * 100 // 1024))
        for cgroup in parts:
            cgroup.create()
    except OSError as exc:
        raise EngineError(f"cannot make the cgroup {group} ({exc})") from None


def remove_group(layout: CgroupLayout, group: str, parts: Iterable[Cgroup]) -> None:
    for cgroup in parts:
        cgroup.remove()
    for hierarchy in dict.fromkeys([layout.cpu, layout.cpuacct]):
        if (hierarchy / group).exists():
            _remove_group_tree(hierarchy / group)


class CpuLimit:
    """A cgroup of its own with `quota` CPUs, for a run outside the cluster (the local engine's
    reference): `with CpuLimit(1.4) as limit:` then `preexec_fn=limit.cgroup.join`."""

    def __init__(self, quota: float, name: str = "local") -> None:
        self.layout = check_host([quota])
        self.group = f"{GROUP_PREFIX}{os.getpid()}-{next(_count)}"
        self.cgroup = Cgroup(self.layout, f"{self.group}/{name}", quota)

    def __enter__(self) -> CpuLimit:
        remove_stale(self.layout)
        try:
            make_group(self.layout, self.group, [self.cgroup])
        except BaseException:
            remove_group(self.layout, self.group, [self.cgroup])
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        remove_group(self.layout, self.group, [self.cgroup])


# -- network namespaces -------------------------------------------------------------------------


def _ip(*args: str) -> None:
    run = subprocess.run(["ip", *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise EngineError(f"`ip {' '.join(args)}` failed: {run.stderr.strip()}")


def _namespaces() -> list[str]:
    run = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in run.stdout.splitlines() if line.strip()]


class Network:
    """A namespace per part, each with `lo` up and an `eth0` (10.99.0.x/24) whose veth peer is
    on a bridge in a namespace of its own; with `rate` (tc's syntax: "1gbit") each part's
    eth0 sends through a token bucket (tbf) of that rate."""

    def __init__(self, tag: str, parts: Sequence[str], rate: str | None = None) -> None:
        self.bridge = f"{tag}-br"
        self.namespaces = {part: f"{tag}-{part}" for part in parts}
        self.addresses = {part: f"{SUBNET}.{i + 1}" for i, part in enumerate(parts)}
        self.rate = rate
        self.made: list[str] = []

    def create(self) -> None:
        self._add(self.bridge)
        _ip("-n", self.bridge, "link", "set", "lo", "up")
        _ip("-n", self.bridge, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.bridge, "link", "set", "br0", "up")
        for i, (part, namespace) in enumerate(self.namespaces.items()):
            self._add(namespace)
            # Made inside the bridge's namespace: no interface ever exists in the host's.
            _ip("-n", self.bridge, "link", "add", f"v{i}", "type", "veth",
                "peer", "name", "eth0", "netns", namespace)  # fmt: skip
            _ip("-n", self.bridge, "link", "set", f"v{i}", "master", "br0", "up")
            _ip("-n", namespace, "addr", "add", f"{self.addresses[part]}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            if self.rate:
                run = subprocess.run(
                    ["ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", "eth0",
                     "root", "tbf", "rate", self.rate, "burst", "256kb", "latency", "50ms"],
                    capture_output=True, text=True,
                )  # fmt: skip
                if run.returncode != 0:
                    raise EngineError(f"tc cannot limit the bandwidth: {run.stderr.strip()}")

    def _add(self, namespace: str) -> None:
        _ip("netns", "add", namespace)
        self.made.append(namespace)

    def command(self, part: str, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.namespaces[part], *argv]

    def remove(self) -> None:
        for namespace in reversed(self.made):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        self.made.clear()


# -- the cluster --------------------------------------------------------------------------------


def check_host(quotas: Sequence[float]) -> CgroupLayout:
    """What the cluster needs here, or EngineError/ConfigError saying what is missing."""
    if any(q <= 0 for q in quotas):
        raise ConfigError(f"every quota must be above 0 CPUs (got {', '.join(map(str, quotas))})")
    if sum(quotas) > MAX_QUOTAS + 1e-9:
        raise ConfigError(
            f"the quotas sum to {sum(quotas):.2f} CPUs, above {MAX_QUOTAS}: lower QUOTA (4"
            " workers and a 0.4 driver need QUOTA <= 0.35) or DRIVER_QUOTA"
        )
    if sys.platform != "linux":
        raise EngineError("the simulated cluster needs Linux (cgroups, network namespaces)")
    if os.geteuid() != 0:
        raise EngineError(
            "the simulated cluster needs root: it makes cgroups and network namespaces"
        )
    if shutil.which("ip") is None:
        raise EngineError("the simulated cluster needs `ip` (iproute2) for network namespaces")
    return find_layout()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(layout: CgroupLayout) -> None:
    """Remove the namespaces and cgroups of harnesses no longer running (killed outright)."""
    for namespace in _namespaces():
        found = re.fullmatch(rf"{NS_PREFIX}(\d+)x\d+-.*", namespace)
        if found and not _alive(int(found.group(1))):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
    for hierarchy in dict.fromkeys([layout.cpu, layout.cpuacct]):
        for folder in hierarchy.glob(f"{GROUP_PREFIX}*"):
            found = re.fullmatch(rf"{GROUP_PREFIX}(\d+)-\d+", folder.name)
            if found and not _alive(int(found.group(1))):
                for part in folder.iterdir():
                    if part.is_dir():
                        Cgroup(layout, f"{folder.name}/{part.name}", None).remove()
                _remove_group_tree(folder)


class SimulatedCluster(Processes):
    """`start()` makes the cgroups and namespaces, starts the master and `workers` workers of
    one core each and waits until they registered; `run_driver()` runs a command as the
    driver; `stop()` ends and removes everything. The parts: "master" (accounted, not
    limited: it only schedules), "driver" (`driver_quota` CPUs), "worker-0"... (`quota`)."""

    def __init__(
        self,
        workers: int = 2,
        quota: float = 0.35,
        driver_quota: float = 0.4,
        memory: str = "1g",
        folder: str | None = None,
        rate: str | None = None,
    ) -> None:
        self.layout = check_host([quota] * workers + [driver_quota])
        super().__init__(folder, "mc-sim-cluster-")
        self.workers = workers
        self.quota = quota
        self.driver_quota = driver_quota
        self.memory = memory
        tag = f"{os.getpid()}-{next(_count)}"
        self.group = f"{GROUP_PREFIX}{tag}"
        self.worker_names = [f"worker-{n}" for n in range(workers)]
        parts = ["master", "driver", *self.worker_names]
        self.network = Network(NS_PREFIX + tag.replace("-", "x"), parts, rate)
        quotas = {"master": None, "driver": driver_quota} | dict.fromkeys(self.worker_names, quota)
        self.cgroups = {p: Cgroup(self.layout, f"{self.group}/{p}", quotas[p]) for p in parts}
        self.master = f"spark://{self.address('master')}:{MASTER_PORT}"
        self._made_group = False

    def address(self, part: str) -> str:
        return self.network.addresses[part]

    def _env(self) -> dict[str, str]:
        env = super()._env()
        env.update(
            SPARK_WORKER_DIR=str(self.folder / "work"),
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
            PYSPARK_PYTHON=sys.executable,
        )
        return env

    def start(self, timeout: float = 120) -> SimulatedCluster:
        remove_stale(self.layout)
        try:
            self._make()
            home = os.path.join(spark_home(), "bin", "spark-class")
            self._part("master", "master", [
                home, "org.apache.spark.deploy.master.Master",
                "--host", self.address("master"), "--port", str(MASTER_PORT),
                "--webui-port", "8080",
            ])  # fmt: skip
            self._wait("master", self._logged("master", "I have been elected leader"), timeout)
            for name in self.worker_names:
                (self.folder / name).mkdir(exist_ok=True)
                self._part(name, name, [
                    home, "org.apache.spark.deploy.worker.Worker",
                    "--host", self.address(name), "--port", "7078", "--webui-port", "8081",
                    "--cores", "1", "--memory", self.memory,
                    "--work-dir", str(self.folder / name), self.master,
                ])  # fmt: skip
            for name in self.worker_names:
                self._wait(name, self._logged(name, "Successfully registered with master"), timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _make(self) -> None:
        self._made_group = True
        make_group(self.layout, self.group, self.cgroups.values())
        (self.folder / "work").mkdir(parents=True, exist_ok=True)
        self.network.create()

    def _logged(self, name: str, text: str) -> Callable[[], bool]:
        return lambda: text in self.log(name)

    def _part(self, name: str, part: str, argv: list[str]) -> subprocess.Popen[bytes]:
        return self._launch(
            name,
            self.network.command(part, argv),
            env={"SPARK_LOCAL_IP": self.address(part)},
            preexec_fn=self.cgroups[part].join,
        )

    def driver_conf(self) -> list[str]:
        """The `--spark-conf` pairs of a driver in this cluster's driver namespace."""
        pairs = {
            "spark.driver.host": self.address("driver"),
            "spark.driver.bindAddress": self.address("driver"),
            "spark.pyspark.python": sys.executable,
            "spark.checkpoint.dir": str(self.folder / "checkpoints"),  # every part's disk
            "spark.executor.memory": self.memory,
            "spark.executor.extraJavaOptions": EXECUTOR_JVM,
            "spark.driver.extraJavaOptions": DRIVER_JVM,
        }
        return [arg for key, value in pairs.items() for arg in ("--spark-conf", f"{key}={value}")]

    def run_driver(
        self, argv: Sequence[str], timeout: float, cwd: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `argv` as the driver: in the driver's namespace and cgroup; its output."""
        env = {k: v for k, v in self._env().items() if not k.startswith("SPARK_WORKER")}
        env["SPARK_LOCAL_IP"] = self.address("driver")
        process = subprocess.Popen(
            self.network.command("driver", list(argv)),
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=self.cgroups["driver"].join,
        )
        self.processes.append(process)  # type: ignore[arg-type]
        try:
            out, err = process.communicate(timeout=timeout)
        finally:
            _stop_group(process)
            self.processes.remove(process)  # type: ignore[arg-type]
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def readings(self) -> dict[str, CpuReading]:
        return {part: cgroup.read() for part, cgroup in self.cgroups.items()}

    def stop(self) -> None:
        super().stop()
        if self._made_group:
            remove_group(self.layout, self.group, self.cgroups.values())
            self._made_group = False
        self.network.remove()

    def __enter__(self) -> SimulatedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _stop_group(process: subprocess.Popen[str]) -> None:
    """End a driver's process group (its JVM too), if any of it is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            continue
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(1)


class Sampler:
    """Reads every cgroup's CPU used every `interval` seconds in a thread, so that a part's
    use over any window (a level, its tasks' run) can be read back (interpolated)."""

    def __init__(self, cgroups: dict[str, Cgroup], interval: float = 0.1) -> None:
        self.cgroups = cgroups
        self.interval = interval
        self.times: list[float] = []
        self.used: dict[str, list[float]] = {part: [] for part in cgroups}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self._sample()

    def _sample(self) -> None:
        now = time.time()
        readings = {part: cgroup.read().used_s for part, cgroup in self.cgroups.items()}
        self.times.append(now)
        for part, used in readings.items():
            self.used[part].append(used)

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            self._sample()

    def at(self, part: str, moment: float) -> float:
        """`part`'s CPU seconds used by `moment` (epoch seconds), interpolated."""
        times, used = self.times, self.used[part]
        if moment <= times[0]:
            return used[0]
        if moment >= times[-1]:
            return used[-1]
        i = next(k for k in range(1, len(times)) if times[k] >= moment)
        share = (moment - times[i - 1]) / max(times[i] - times[i - 1], 1e-9)
        return used[i - 1] + share * (used[i] - used[i - 1])

    def between(self, part: str, begin: float, end: float) -> float:
        return self.at(part, end) - self.at(part, begin)


def main() -> None:
    """Start a cluster, print its master URL and how to run a driver in it, wait for Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m tests.simulated_cluster")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quota", type=float, default=0.35)
    parser.add_argument("--driver-quota", type=float, default=0.4)
    parser.add_argument("--memory", default="1g")
    parser.add_argument("--rate", default=None, help="each part's bandwidth (tbf), e.g. 1gbit")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        cluster = SimulatedCluster(
            args.workers, args.quota, args.driver_quota, args.memory, rate=args.rate
        )
    except (ConfigError, EngineError) as exc:
        print(f"mc: error: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    try:
        cluster.start()
        driver = cluster.cgroups["driver"].folders
        print(f"master {cluster.master}; logs in {cluster.folder}", flush=True)
        print(
            "a driver: echo $$ | tee "
            + " ".join(str(f / "cgroup.procs") for f in driver)
            + f"; ip netns exec {cluster.network.namespaces['driver']} mc check SPEC"
            f" --engine spark --master {cluster.master} " + " ".join(cluster.driver_conf()),
            flush=True,
        )
        while all(p.poll() is None for p in cluster.processes):
            time.sleep(1)
    except EngineError as exc:  # start() stopped what it had started
        print(f"mc: error: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
