"""Fault scenarios on a real Kafka 4.x cluster; each ends with the active controller's metadata log.

    python scripts/kafka/scenarios.py NAME [--seed N] [--duration S] [--out FILE]
    python scripts/kafka/scenarios.py --list

A scenario formats and starts a fresh cluster (cluster.py), creates the topic (one partition,
replication factor 3, min.insync.replicas=2), runs the produce/consume load (workload.py) for at
least `--duration` seconds while it applies its faults, waits until the cluster is quiet, and
writes the active controller's `__cluster_metadata` log as the dump tool's metadata decoder prints
it to FILE (tests/fixtures/kafka/NAME.log by default), and beside it NAME.json: the seed, the fault
schedule as it ran (seconds from the start of the load), the load's counts.

The seed fixes the fault schedule (which follower, which order, how long between faults); the
log may still differ between two runs, as Kafka's own timing does.

Exit codes: 0 the log was written; 2 a usage error; 3 the cluster's ports cannot be used (in the
kernel's ephemeral range, or taken), a node exited unasked, the cluster did not reach a state in
time or a Kafka tool failed (the run's directory is kept and named); 130 interrupted (Ctrl-C,
SIGTERM).
Every JVM is killed on any exit.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cluster import BROKERS, DEFAULT_PORT_BASE, TOPIC, Cluster, ClusterError, ports_problem
from kafka.errors import KafkaError
from proxy import AlterPartition, Proxy
from workload import Workload

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "kafka"
KAFKA_VERSION = "4.4.0"
SESSION_TIMEOUT = 6.0  # broker.session.timeout.ms of cluster.py, in seconds


class Interrupted(Exception):
    """SIGTERM, turned into an exception so that the cluster's context manager kills the JVMs."""


class Run:
    """One scenario's cluster, seeded choices and the schedule of what was done when."""

    def __init__(self, cluster: Cluster, seed: int, proxy: Proxy | None = None) -> None:
        self.cluster = cluster
        self.proxy = proxy
        self.rng = random.Random(seed)
        self.events: list[tuple[float, str]] = []
        self.t0 = time.monotonic()

    def note(self, what: str) -> None:
        at = round(time.monotonic() - self.t0, 1)
        self.events.append((at, what))
        print(f"[{at:6.1f} s] {what}", flush=True)

    def load(self, low: float, high: float) -> None:
        """Let the load run for a seeded time between `low` and `high` seconds."""
        time.sleep(self.rng.uniform(low, high))

    def partition(self) -> tuple[int, list[int], list[int]]:
        part = self.cluster.partition()
        if part is None:
            raise ClusterError("the topic's partition is not visible")
        return part

    def leader(self) -> int:
        return self.cluster.leader()

    def followers(self) -> list[int]:
        """The replicas other than the leader, in a seeded order."""
        leader, replicas, _ = self.partition()
        followers = sorted(r for r in replicas if r != leader)
        self.rng.shuffle(followers)
        return followers

    def isr_is(self, expected: set[int], timeout: float = 60.0) -> None:
        def holds() -> bool:
            part = self.cluster.partition()
            return part is not None and set(part[2]) == expected

        self.cluster.wait_for(f"ISR {sorted(expected)}", holds, timeout)
        self.note(f"ISR is {sorted(expected)}")

    def kill(self, node: int) -> None:
        self.cluster.kill(node)
        self.note(f"kill -9 node {node}")

    def stop(self, node: int) -> None:
        self.note(f"SIGTERM node {node} (controlled shutdown)")
        self.cluster.stop(node)
        self.note(f"node {node} stopped")

    def start(self, node: int) -> None:
        self.cluster.start(node)
        self.note(f"start node {node}")

    def registered(self, node: int, timeout: float = 90.0) -> None:
        self.cluster.wait_for(
            f"broker {node} unfenced", lambda: node in self.cluster.unfenced_brokers(), timeout
        )
        self.note(f"broker {node} unfenced")

    def fenced(self, node: int, timeout: float = 60.0) -> None:
        self.cluster.wait_for(
            f"broker {node} fenced", lambda: node not in self.cluster.unfenced_brokers(), timeout
        )
        self.note(f"broker {node} fenced")

    def fully_replicated(self, timeout: float = 90.0) -> None:
        self.cluster.wait_for("a leader and a full ISR", self.cluster.fully_replicated, timeout)
        self.note(f"partition (leader, replicas, ISR) = {self.partition()}")

    def all_down_fenced(self) -> None:
        """No broker answers: wait out the session timeout so the controller fences the last."""
        time.sleep(SESSION_TIMEOUT + 4.0)
        self.note("waited out the session timeout with every replica down")


# -- the scenarios: each returns once its faults are over and the cluster recovers or settles ---


def leader_kill(run: Run) -> None:
    """kill -9 of the partition leader, then its restart."""
    run.load(5, 10)
    _kill_and_restart(run, run.leader())


def follower_kill(run: Run) -> None:
    """kill -9 of a follower, then its restart."""
    run.load(5, 10)
    _kill_and_restart(run, run.followers()[0])


def _kill_and_restart(run: Run, broker: int) -> None:
    """kill -9 of `broker`, which leaves the ISR; load, then its restart, caught up again."""
    run.kill(broker)
    run.isr_is(set(BROKERS) - {broker})
    run.load(5, 10)
    run.start(broker)
    run.fully_replicated()


def controller_failover(run: Run) -> None:
    """kill -9 of the active controller: another controller takes over; then its restart."""
    run.load(5, 10)
    controller = run.cluster.active_controller()
    if controller is None:
        raise ClusterError("no active controller")
    run.kill(controller)
    run.cluster.wait_for(
        "a new active controller",
        lambda: run.cluster.active_controller() not in (None, controller),
        60,
    )
    run.note(f"active controller is now {run.cluster.active_controller()}")
    run.load(5, 10)
    run.start(controller)
    run.note("restarted controller")
    run.load(3, 6)


def broker_fenced(run: Run) -> None:
    """A follower frozen with SIGSTOP until its session expires (fenced), then resumed."""
    run.load(5, 10)
    follower = run.followers()[0]
    run.cluster.freeze(follower)
    run.note(f"SIGSTOP node {follower}")
    run.fenced(follower)
    run.load(2, 5)
    run.cluster.resume(follower)
    run.note(f"SIGCONT node {follower}")
    run.registered(follower)
    run.fully_replicated()


def controlled_shutdown(run: Run) -> None:
    """SIGTERM of the partition leader (a controlled shutdown), then its restart."""
    run.load(5, 10)
    leader = run.leader()
    run.stop(leader)
    run.load(5, 10)
    run.start(leader)
    run.fully_replicated()


def rolling_restart(run: Run) -> None:
    """Each broker in turn (seeded order) shut down with SIGTERM and restarted."""
    order = list(BROKERS)
    run.rng.shuffle(order)
    for broker in order:
        run.load(3, 6)
        run.stop(broker)
        run.load(1, 3)
        run.start(broker)
        run.fully_replicated()


def _empty_the_isr(run: Run, second_down: Callable[[int], None]) -> tuple[int, int, int]:
    """Under load, the two followers taken down in turn (the first killed, the second by
    `second_down`), then the leader killed, and every replica fenced: the ISR is empty. Returns
    (leader, first, second)."""
    run.load(5, 10)
    leader = run.leader()
    first, second = run.followers()
    run.kill(first)
    run.isr_is({leader, second})
    run.load(2, 5)
    second_down(second)
    run.isr_is({leader})
    run.load(2, 5)
    run.kill(leader)
    run.all_down_fenced()
    return leader, first, second


def elr_leader_last(run: Run) -> None:
    """Two followers killed in turn (the second enters the ELR), then the leader: ISR empty."""
    leader, first, second = _empty_the_isr(run, run.kill)
    order = [first, second, leader]
    run.rng.shuffle(order)
    for broker in order:
        run.start(broker)
        run.registered(broker)
        run.load(2, 4)


def elr_member_elected(run: Run) -> None:
    """An ELR member (shut down cleanly) restarted while the ISR is empty, and elected leader."""
    # a clean shutdown of the second: it stays an eligible leader replica
    leader, first, second = _empty_the_isr(run, run.stop)
    run.start(second)
    run.registered(second)
    run.cluster.wait_for(
        f"broker {second} elected leader",
        lambda: (run.cluster.partition() or (-1,))[0] == second,
        60,
    )
    run.note(f"broker {second} elected leader from the ELR")
    run.load(2, 5)
    for broker in (leader, first):
        run.start(broker)
        run.registered(broker)
    run.fully_replicated()


def last_isr_disk_wiped(run: Run) -> None:
    """The last ISR member's data disk wiped while it is down, then every replica restarted."""
    leader, first, second = _empty_the_isr(run, run.kill)
    run.cluster.wipe_data_disk(leader)
    run.note(f"wiped node {leader}'s data disk (log.dirs)")
    run.start(leader)
    run.registered(leader)
    run.load(2, 4)
    for broker in (second, first):
        run.start(broker)
        run.registered(broker)


def delayed_alter_partition(run: Run) -> None:
    """KIP-903's interleaving: the leader's AlterPartition adding a restarted follower held by
    the proxy while that follower is killed and restarts with a new broker epoch; let go, the
    controller must refuse its stale epoch (INELIGIBLE_REPLICA), and the leader asks again."""
    proxy = run.proxy
    assert proxy is not None, "run with the proxy (PROXIED)"
    run.load(5, 10)
    leader = run.leader()
    follower = run.followers()[0]
    run.kill(follower)
    run.isr_is(set(BROKERS) - {follower})
    run.load(2, 5)
    proxy.arm(leader)
    run.note(f"proxy holds node {leader}'s AlterPartition requests")
    run.start(follower)
    held: list[AlterPartition] = []

    def expansion_held() -> bool:
        held[:] = [a for a in proxy.held(leader) if follower in a.isr()]
        return bool(held)

    run.cluster.wait_for(
        f"node {leader}'s AlterPartition adding node {follower}", expansion_held, 90
    )
    request = held[0]
    run.note(
        f"held node {leader}'s AlterPartition, ISR with broker epochs "
        f"{request.summary()['isr_with_epochs']}"
    )
    run.kill(follower)
    run.fenced(follower)
    run.start(follower)
    run.registered(follower)
    proxy.release(leader)
    run.cluster.wait_for("the controller's answer", lambda: request.error is not None, 60)
    run.note(f"released it after {request.held_s:.1f} s; the controller answered {request.error}")
    run.fully_replicated()


# Scenarios that need proxy.py between the brokers and the controllers.
PROXIED = {"delayed-alter-partition"}

SCENARIOS: dict[str, Callable[[Run], None]] = {
    "leader-kill": leader_kill,
    "follower-kill": follower_kill,
    "controller-failover": controller_failover,
    "broker-fenced": broker_fenced,
    "controlled-shutdown": controlled_shutdown,
    "rolling-restart": rolling_restart,
    "elr-leader-last": elr_leader_last,
    "elr-member-elected": elr_member_elected,
    "last-isr-disk-wiped": last_isr_disk_wiped,
    "delayed-alter-partition": delayed_alter_partition,
}


def run_scenario(
    name: str, seed: int, duration: float, out: Path, workdir: Path, port_base: int
) -> dict[str, object]:
    """Run one scenario end to end and write its log to `out` (and the run's summary beside)."""
    started = time.monotonic()
    proxied = name in PROXIED
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(Cluster(workdir, port_base, proxied=proxied))
        proxy = stack.enter_context(Proxy.for_brokers(cluster.proxy_routes())) if proxied else None
        cluster.format()
        cluster.start_all()
        cluster.wait_ready()
        cluster.create_topic()
        workload = Workload(cluster.bootstrap)
        workload.start()
        try:
            run = Run(cluster, seed, proxy)
            run.note(f"load started on {TOPIC}; scenario {name}, seed {seed}")
            SCENARIOS[name](run)
            remaining = duration - (time.monotonic() - run.t0)
            if remaining > 0:
                time.sleep(remaining)
        finally:
            counts = workload.stop()  # its clients closed here, not at exit
        run.note(f"load stopped: {counts.acked} acked of {counts.sent} sent")
        time.sleep(3.0)  # quiet: only NoOpRecords from here on
        controller = cluster.active_controller()
        text = cluster.dump_metadata_log(controller)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    summary: dict[str, object] = {
        "scenario": name,
        "seed": seed,
        "kafka": KAFKA_VERSION,
        "duration_s": duration,
        "load_s": round(run.events[-1][0], 1),
        "wall_s": round(time.monotonic() - started, 1),
        "dumped_controller": controller,
        "schedule": [{"at_s": at, "event": what} for at, what in run.events],
        "load": {
            "sent": counts.sent,
            "acked": counts.acked,
            "failed": counts.failed,
            "consumed": counts.consumed,
            "errors": counts.errors,
        },
    }
    if proxy is not None:  # every AlterPartition through the proxy, with the controller's answer
        summary["alter_partitions"] = [a.summary() for a in proxy.seen]
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _on_sigterm(_signum: int, _frame: object) -> None:
    raise Interrupted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", nargs="?", choices=sorted(SCENARIOS))
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--duration",
        type=float,
        default=120.0,
        help="seconds of produce load at least (default 120)",
    )
    parser.add_argument("--out", type=Path, help="default tests/fixtures/kafka/SCENARIO.log")
    parser.add_argument("--port-base", type=int, default=DEFAULT_PORT_BASE)
    parser.add_argument("--keep", action="store_true", help="keep the run's directory")
    args = parser.parse_args(argv)
    if args.list:
        for name, scenario in SCENARIOS.items():
            print(f"{name:22} {(scenario.__doc__ or '').strip()}")
        return 0
    if args.scenario is None:
        parser.error("name a scenario (or --list)")
    problem = ports_problem(args.port_base)
    if problem is not None:
        print(f"scenarios: {problem}", file=sys.stderr)
        return 3
    signal.signal(signal.SIGTERM, _on_sigterm)
    out = args.out or FIXTURES / f"{args.scenario}.log"
    workdir = Path(tempfile.mkdtemp(prefix=f"mc-kafka-{args.scenario}-"))
    try:
        summary = run_scenario(
            args.scenario, args.seed, args.duration, out, workdir, args.port_base
        )
    except (ClusterError, KafkaError) as err:
        print(f"scenarios: {args.scenario}: {err} (run directory kept: {workdir})", file=sys.stderr)
        return 3
    except (KeyboardInterrupt, Interrupted):
        print(f"scenarios: {args.scenario}: interrupted", file=sys.stderr)
        shutil.rmtree(workdir, ignore_errors=True)
        return 130
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"wrote {out} ({summary['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
