"""Run TLC on Vanlightly's TLA+ models and mc on their translation (specs/kraft.py and its KIP
layers; specs/kraft_quorum.py for the kip_996 model) over the same configurations; write
docs/tlc-comparison.md.

    python scripts/compare_tlc.py [--peers DIR] [--out FILE] [--shipped] [--only TEXT]

Each configuration is the model's shipped cfg with some constants replaced and the invariant
NoCommittedRecordLostGlobally left out (the cfg says to, when MinISR = DataLossShutdownLimit);
TLC runs with -workers 1 -deadlock in a temporary copy of the model's folder, mc in this
process, without deadlock checking and without that invariant. `--shipped` adds the kip-966
cfg as shipped (3 brokers, one fencing, one data-loss shutdown) with 2 workers for each.
`--only kip-996` runs the configurations whose name has that text and keeps the other rows of
the output as they were. Needs java, tla2tools.jar and CommunityModules.jar (TLA2TOOLS and
COMMUNITY_MODULES, or in PEERS). The tests do not run TLC: they keep mc's counts
(tests/specs/test_kraft.py, tests/specs/test_kraft_quorum.py).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker.liveness import recording, select  # noqa: E402
from checker.loader import load_model, load_spec_class  # noqa: E402
from checker.local.bfs import check  # noqa: E402
from checker.run import check_properties, record  # noqa: E402
from checker.search.options import Options  # noqa: E402
from checker.spec import invariants_of  # noqa: E402

PEERS = Path(os.environ.get("PEERS", "/work/shared/peers"))

# TLA+ constant -> mc constant (the v3.5 model's names for the shutdown limits too)
NAMES = {
    "BrokerCount": "broker_count",
    "InitReplicationFactor": "init_replication_factor",
    "MinISR": "min_isr",
    "InitIsrSize": "init_isr_size",
    "NoDataLossShutdownLimit": "no_data_loss_shutdown_limit",
    "DataLossShutdownLimit": "data_loss_shutdown_limit",
    "CleanShutdownLimit": "no_data_loss_shutdown_limit",
    "UncleanShutdownLimit": "data_loss_shutdown_limit",
    "FenceBrokerLimit": "fence_broker_limit",
    "LeaderShrinkIsrLimit": "leader_shrink_isr_limit",
    "ReassignmentLimit": "reassignment_limit",
    "AvoidLastReplicaStanding": "avoid_last_replica_standing",
    # kip_996 (KRaft with pre-vote); Value and Hosts are sets there, counts here
    "InitClusterSize": "init_cluster_size",
    "MinClusterSize": "min_cluster_size",
    "MaxClusterSize": "max_cluster_size",
    "MaxSpawnedServers": "max_spawned_servers",
    "Hosts": "hosts",
    "Value": "values",
    "MaxEpoch": "max_epoch",
    "MaxValuesPerEpoch": "max_values_per_epoch",
    "MaxRestarts": "max_restarts",
    "MaxPermCrashes": "max_perm_crashes",
    "MaxConnectivityChanges": "max_connectivity_changes",
    "MaxDisruptiveElectionTriggers": "max_disruptive_election_triggers",
    "MaxAddReconfigs": "max_add_reconfigs",
    "MaxRemoveReconfigs": "max_remove_reconfigs",
    "TestLiveness": "test_liveness",
}
ZERO_966 = {
    "NoDataLossShutdownLimit": 0,
    "DataLossShutdownLimit": 0,
    "FenceBrokerLimit": 0,
    "LeaderShrinkIsrLimit": 0,
    "ReassignmentLimit": 0,
}
TWO = {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1}
KIP966 = ("kip-966", "kafka_replication_kip_966", "specs/kip966.py")
V35 = ("v3.5", "kafka_replication_v3_5", "specs/kip903.py")
ZERO_V35 = {
    "CleanShutdownLimit": 0,
    "UncleanShutdownLimit": 0,
    "FenceBrokerLimit": 0,
    "LeaderShrinkIsrLimit": 0,
    "ReassignmentLimit": 0,
}

KIP996 = ("kip_996", "kraft_kip_996", "specs/kraft_quorum.py")
ZERO_996 = {
    "MaxRestarts": 0,
    "MaxPermCrashes": 0,
    "MaxAddReconfigs": 0,
    "MaxRemoveReconfigs": 0,
    "MaxConnectivityChanges": 0,
    "MaxDisruptiveElectionTriggers": 0,
    "MaxSpawnedServers": 3,
    "MaxClusterSize": 3,
}
TWO_996 = {
    **ZERO_996,
    "InitClusterSize": 2,
    "MinClusterSize": 2,
    "MaxClusterSize": 2,
    "MaxSpawnedServers": 2,
}
# With an election, TestLiveness's model has no bound on epochs (and with 2 servers it allows
# neither a crash nor a partition: no election could succeed after it); MaxEpoch bounds them
# without it.
BOUNDED_996 = {**TWO_996, "TestLiveness": False, "MaxEpoch": 2, "Value": "{ }"}

# (name, model, TLA+ constants replaced in the shipped cfg)
CONFIGS = [
    ("kip-966, 2 brokers, no fault", KIP966, {**ZERO_966, **TWO}),
    ("kip-966, 2 brokers, one fencing", KIP966, {**ZERO_966, **TWO, "FenceBrokerLimit": 1}),
    (
        "kip-966, 2 brokers, one data-loss shutdown",
        KIP966,
        {**ZERO_966, **TWO, "DataLossShutdownLimit": 1},
    ),
    (
        "kip-966, 2 brokers, one clean shutdown",
        KIP966,
        {**ZERO_966, **TWO, "NoDataLossShutdownLimit": 1},
    ),
    ("kip-966, 3 brokers, all limits zero", KIP966, dict(ZERO_966)),
    (
        "kip-966, 2 brokers, one ISR shrink, one data-loss shutdown",
        KIP966,
        {**ZERO_966, **TWO, "LeaderShrinkIsrLimit": 1, "DataLossShutdownLimit": 1},
    ),
    (
        "kip-966, 2 brokers, MinISR 2, one fencing (kip966.py's defaults)",
        KIP966,
        {**ZERO_966, **TWO, "MinISR": 2, "FenceBrokerLimit": 1},
    ),
    (
        "kip-966, 2 brokers, one clean and one data-loss shutdown",
        KIP966,
        {**ZERO_966, **TWO, "NoDataLossShutdownLimit": 1, "DataLossShutdownLimit": 1},
    ),
    (
        "kip-966, 2 brokers, one clean and one data-loss shutdown, VIEW with aux_ctrs",
        KIP966,
        {
            **ZERO_966,
            **TWO,
            "NoDataLossShutdownLimit": 1,
            "DataLossShutdownLimit": 1,
            "view_keeps_counters": True,
        },
    ),
    (
        "v3.5, 2 brokers, one fencing (kip841.py's defaults)",
        V35,
        {**ZERO_V35, **TWO, "FenceBrokerLimit": 1},
    ),
    (
        "v3.5, 2 brokers, one unclean shutdown (kip903.py's defaults)",
        V35,
        {**ZERO_V35, **TWO, "UncleanShutdownLimit": 1},
    ),
    ("kip-996, 3 servers, all limits zero", KIP996, dict(ZERO_996)),
    ("kip-996, 2 servers, all limits zero", KIP996, dict(TWO_996)),
    (
        "kip-996, 2 servers, one connectivity change, no TestLiveness",
        KIP996,
        {**TWO_996, "TestLiveness": False, "MaxConnectivityChanges": 1},
    ),
    (
        "kip-996, 2 servers, one crash losing state, no TestLiveness",
        KIP996,
        {**TWO_996, "TestLiveness": False, "MaxPermCrashes": 1},
    ),
    (
        "kip-996, 2 servers, two connectivity changes, MaxEpoch 2, no value",
        KIP996,
        {**BOUNDED_996, "MaxConnectivityChanges": 2},
    ),
    (
        "kip-996, 2 servers, one disruptive election trigger, MaxEpoch 2, no value",
        KIP996,
        {**BOUNDED_996, "MaxDisruptiveElectionTriggers": 1},
    ),
    (
        "kip-996, 2 servers, one restart, MaxEpoch 2, no value",
        KIP996,
        {**BOUNDED_996, "MaxRestarts": 1},
    ),
    (
        "kip-996, 2 servers, a new server added (StartNewServer, AddVoter), one value",
        KIP996,
        {
            **TWO_996,
            "MaxClusterSize": 3,
            "MaxSpawnedServers": 3,
            "MaxAddReconfigs": 1,
            "Value": "{ v1 }",
        },
    ),
]
# Temporal properties, as the model's cfg says to check them: LivenessSpec, without VIEW (mc:
# tla_view=false); the properties TLC checks, and mc's translations of them.
TLC_PROPERTIES = (
    "EventuallyRuns EventuallyUnfenced AlterPartitionEpochEventuallyReachedOrZero"
    " EventuallyMetadataConverges EventuallyWriteIsAcceptedOrRejected"
    " EventuallyAcknowledgedValueFullyReplicated EventuallyReassignmentCompletes"
)
VALUE_PROPERTIES = (
    "EventuallyWriteIsAcceptedOrRejected",
    "EventuallyAcknowledgedValueFullyReplicated",
)
WITHOUT_VALUES = " ".join(p for p in TLC_PROPERTIES.split() if p not in VALUE_PROPERTIES)
RF1 = {**ZERO_966, **TWO, "InitReplicationFactor": 1, "InitIsrSize": 1}
# (name, model, constants, the TLA+ properties checked)
LIVENESS = [
    (
        "kip-966, 2 brokers, MinISR 2, one fencing, liveness (no VIEW)",
        KIP966,
        {**ZERO_966, **TWO, "MinISR": 2, "FenceBrokerLimit": 1},
        TLC_PROPERTIES,
    ),
    (
        "kip-966, 2 brokers, RF 1, one reassignment, liveness without the value properties",
        KIP966,
        {**RF1, "ReassignmentLimit": 1},
        WITHOUT_VALUES,
    ),
    (
        "kip-966, 2 brokers, RF 1, liveness: a write is never acknowledged",
        KIP966,
        RF1,
        TLC_PROPERTIES,
    ),
]
# kip_996's properties, as its model_liveness.cfg checks them (the model has no VIEW); without
# reconfiguration, ReconfigurationNotStuck is a tautology TLC refuses.
LIVENESS.append(
    (
        "kip-996, 3 servers, all limits zero, liveness (model_liveness.cfg)",
        KIP996,
        dict(ZERO_996),
        "ValuesEventuallyAcked EventuallyLeaderElected NotStuckInProspective",
    )
)
# Differ by the order of the search under the model's VIEW (explained in the output).
ORDER_DEPENDENT = {"kip-966, 2 brokers, one clean and one data-loss shutdown"}
SHIPPED = ("kip-966 as shipped (3 brokers, one fencing, one data-loss shutdown)", KIP966, {})


def cfg_text(shipped: str, replace: dict[str, int], liveness: str = "") -> str:
    """The shipped cfg with constants replaced; `liveness`: the TLA+ properties to check, as
    the cfg says for them (LivenessSpec, no VIEW)."""
    lines = []
    for line in shipped.splitlines():
        if liveness and line.strip() == "VIEW view":
            continue
        if liveness and line.strip() == "INIT Init":
            line = "SPECIFICATION LivenessSpec"
        if liveness and line.strip() == "NEXT Next":
            continue
        if liveness and line.strip() == "\\* PROPERTY":
            line = f"PROPERTY {liveness}"
        m = re.match(r"\s*(\w+)\s*=\s*(.*)$", line)
        if m and m.group(1) in replace:
            value = replace[m.group(1)]
            value = str(value).upper() if isinstance(value, bool) else str(value)
            line = f"    {m.group(1)} = {value}"
        if line.strip() == "NoCommittedRecordLostGlobally":
            continue
        lines.append(line)
    return "\n".join(lines) + "\n"


def constants_of(text: str) -> dict[str, str]:
    """The mc constants (as -D text) of a cfg's TLA+ constants."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*(\w+)\s*=\s*(.*?)\s*$", line)
        if m and m.group(1) in NAMES:
            value = m.group(2)
            if value.startswith("{"):  # a set of model values: its size
                value = str(len([v for v in value.strip("{} ").split(",") if v.strip()]))
            out[NAMES[m.group(1)]] = value.lower()
    return out


def run_tlc(
    folder: Path, module: str, cfg: str, workers: int, peers: Path, keep_counters: bool
) -> dict:
    tools = os.environ.get("TLA2TOOLS", str(peers / "tla2tools.jar"))
    community = os.environ.get("COMMUNITY_MODULES", str(peers / "CommunityModules.jar"))
    with tempfile.TemporaryDirectory() as tmp:
        for f in folder.glob("*.tla"):
            shutil.copy(f, tmp)
        if keep_counters:  # the model's view, with the fault counters
            main = Path(tmp, f"{module}.tla")
            text = re.sub(
                r"^view == << (.*) >>$",
                r"view == << \1, aux_ctrs >>",
                main.read_text(),
                flags=re.M,
            )
            main.write_text(text)
        Path(tmp, "compare.cfg").write_text(cfg)
        start = time.time()
        run = subprocess.run(
            [
                "java",
                "-XX:+UseParallelGC",
                "-cp",
                f"{tools}:{community}",
                "tlc2.TLC",
                "-workers",
                str(workers),
                "-deadlock",
                "-config",
                "compare.cfg",
                f"{module}.tla",
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
        seconds = time.time() - start
    out = run.stdout
    counts = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out)
    depth = re.search(r"depth of the complete state graph search is (\d+)", out)
    violated = re.search(r"Invariant (\w+) is violated", out) or re.search(
        r"Temporal properties were violated()", out
    )
    trace = len(re.findall(r"^State \d+: (?!Stuttering)", out, flags=re.M))
    if violated and counts:  # TLC stops at a violation: no complete-search depth
        depth = depth or re.search(r"The depth of the complete state graph search is (\d+)", out)
    if not counts or not (depth or violated):
        raise RuntimeError(f"TLC failed:\n{out[-3000:]}\n{run.stderr[-2000:]}")
    return {
        "generated": int(counts.group(1).replace(",", "")),
        "distinct": int(counts.group(2).replace(",", "")),
        "depth": int(depth.group(1)) if depth else 0,
        "verdict": f"violates {violated.group(1) or 'a property'}" if violated else "ok",
        "trace": trace,
        "seconds": seconds,
    }


def run_mc(spec: str, constants: dict[str, str], workers: int, liveness: str = "") -> dict:
    """mc on the translation; `liveness`: the TLA+ properties to check (their snake-case
    names in mc), without the view and without mc's reachability properties (TLC has none:
    a fault the configuration leaves out would be reported as never reached)."""
    cls, _ = load_spec_class(str(ROOT / spec))
    names = [n for n in invariants_of(cls) if n != "no_committed_record_lost_globally"]
    start = time.time()
    if liveness:
        cls, _ = load_spec_class(str(ROOT / spec))
        if hasattr(cls, "tla_view"):  # the kip-966 family: its VIEW off, as the cfg says
            constants = {**constants, "tla_view": "false"}
        model = load_model(str(ROOT / spec), constants, names, False)
        model.reachables = ()
        props = select(model, snake(liveness))
        result, graph = record(model, recording(model, props), Options(deadlock=False))
        result = check_properties(model, result, props, graph)
        if result.property:
            result.invariant = result.property
    else:
        model = load_model(str(ROOT / spec), constants, names)
        result = check(model, Options(deadlock=False, workers=workers))
    return {
        "generated": result.states_generated,
        "distinct": result.distinct_states,
        "depth": result.depth,
        "verdict": f"violates {result.invariant}" if result.invariant else "ok",
        "trace": len(result.trace),
        "seconds": time.time() - start,
    }


def snake(properties: str) -> list[str]:
    """mc's names of TLA+ properties: EventuallyRuns -> eventually_runs."""
    return [re.sub(r"(?<!^)(?=[A-Z])", "_", p).lower() for p in properties.split()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=Path, default=PEERS)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "tlc-comparison.md")
    parser.add_argument("--shipped", action="store_true", help="also the shipped kip-966 cfg")
    parser.add_argument("--only", default="", help="the configurations whose name has this")
    args = parser.parse_args()
    configs = [(*c, 1, "") for c in CONFIGS] + [(*c[:3], 1, c[3]) for c in LIVENESS]
    configs = [c for c in configs if args.only in c[0]]
    configs += [(*SHIPPED, 2, "")] if args.shipped else []
    rows, same = [], True
    for name, (folder, module, spec), replace, workers, liveness in configs:
        model_dir = args.peers / "vanlightly" / folder
        keep_counters = bool(replace.pop("view_keeps_counters", False))
        shipped = model_dir / f"{module}.cfg"
        if liveness and (model_dir / "model_liveness.cfg").exists():
            shipped = model_dir / "model_liveness.cfg"  # kip_996: its PROPERTY lines
        cfg = cfg_text(shipped.read_text(), replace, liveness)
        if "MaxAddReconfigs = 0" in cfg and "MaxRemoveReconfigs = 0" in cfg:
            # ReconfigurationNotStuck is then \A config_id \in 1..0: TRUE, a tautology TLC
            # refuses
            cfg = cfg.replace("ReconfigurationNotStuck\n", "")
        constants = constants_of(cfg)
        if keep_counters:
            constants["view_keeps_counters"] = "true"
        tlc = run_tlc(model_dir, module, cfg, workers, args.peers, keep_counters)
        mc = run_mc(spec, constants, workers, liveness)
        if liveness and "kip_996" not in folder:
            constants["tla_view"] = "false"
        if tlc["verdict"] == "ok":
            equal = (tlc["distinct"], tlc["depth"]) == (mc["distinct"], mc["depth"])
        else:  # TLC stops at the violation, mc checks properties after its search
            equal = mc["verdict"] != "ok" and tlc["trace"] == mc["trace"]
        same &= equal or name in ORDER_DEPENDENT
        print(f"{name}: TLC {tlc}  mc {mc}  {'equal' if equal else 'DIFFERENT'}", flush=True)
        cls, _ = load_spec_class(str(ROOT / spec))
        invs = [n for n in invariants_of(cls) if n != "no_committed_record_lost_globally"]
        dashes = " ".join(f"-D {k}={v}" for k, v in constants.items())
        dashes += " " + " ".join(f"--invariant {n}" for n in invs)
        if liveness:
            dashes += " " + " ".join(f"--property {n}" for n in snake(liveness))
        rows.append((name, spec, dashes, tlc, mc, equal, workers))
    write(args.out, rows, keep=bool(args.only))
    return 0 if same else 1


def old_lines(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The table rows and constants lines of an earlier run, by configuration name."""
    table, dashes = {}, {}
    if not path.exists():
        return table, dashes
    for line in path.read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| configuration"):
            cells = line.split(" | ")
            if len(cells) == 14:  # written before the trace column
                cells.insert(10, "")
            table[cells[0][2:]] = " | ".join(cells)
        elif line.startswith("- ") and ": `mc check" in line:
            dashes[line[2:].split(": `mc check")[0]] = line
    return table, dashes


def write(path: Path, rows, keep: bool = False) -> None:
    """Write the comparison; with `keep` (a run of some configurations), the rows of the
    other configurations stay as the last run wrote them."""
    old_table, old_dashes = old_lines(path) if keep else ({}, {})
    lines = [
        "# mc and TLC on Vanlightly's Kafka replication and KRaft quorum models",
        "",
        "Written by `scripts/compare_tlc.py` (`make compare-tlc`). TLC runs Jack Vanlightly's",
        "TLA+ models (github.com/Vanlightly/kafka-tlaplus, folder",
        "kafka_data_replication/kraft, MIT licence: `kip-966` and `v3.5`) with `-deadlock` on",
        "the shipped cfg with the constants below replaced and the invariant",
        "NoCommittedRecordLostGlobally left out; mc runs their translation",
        "(`specs/kraft.py` and its KIP layers) with the same constants, without deadlock",
        "checking and without `no_committed_record_lost_globally`. Both identify states by the",
        "model's VIEW (all but the auxiliary variables and the discarded messages). Equal: the",
        "distinct states and the depth are the same. The liveness rows are the cfg's own way",
        "to check temporal properties (`SPECIFICATION LivenessSpec`, no VIEW; mc: `-D",
        "tla_view=false`, the same weak fairness per broker): TLC checks all seven of the",
        "model's properties (EventuallyRuns, EventuallyUnfenced,",
        "AlterPartitionEpochEventuallyReachedOrZero, EventuallyMetadataConverges,",
        "EventuallyWriteIsAcceptedOrRejected, EventuallyAcknowledgedValueFullyReplicated,",
        "EventuallyReassignmentCompletes) or, where the row says so, those without values; mc",
        "their translations (per broker, per value: `--property` below), without its",
        "reachability properties, which TLC has not (so `mc check` with the constants below",
        "reports `elr_in_use` never reached on the RF 1 rows, which have no fault). ok: every",
        "invariant (and property) holds.",
        "",
        "One row differs, and the next shows why: with two kinds of shutdown, two states can",
        "differ only in their fault counters (`aux_ctrs`: which shutdown is still allowed),",
        "which the model's VIEW leaves out. The search keeps the one it reaches first, and",
        "what follows depends on it; TLC generates successors broker by broker (all actions",
        "of broker 1, then of broker 2), mc action by action (each action for every broker),",
        "so each keeps another of such states and their counts differ. With the counters in",
        "the view (TLA+: `view == << ..., aux_ctrs >>`; mc: `-D view_keeps_counters=true`)",
        "no such merging happens and the counts are equal again. (The VIEW without the",
        "counters is then not exact for the model itself: the states a run reports depend on",
        "the order of its search.)",
        "",
        "A violated property is compared by its counterexample: TLC stops at it, mc checks",
        "temporal properties once its search is complete, so their counts differ; equal then",
        "means both find a violation and their traces have as many states (trace: TLC / mc).",
        "",
        "The kip-996 rows are Vanlightly's model of the KRaft quorum with pre-vote (folder",
        "kraft/kip_996) and its translation `specs/kraft_quorum.py`: the shipped",
        "kraft_kip_996.cfg with reconfiguration off (MaxAddReconfigs = MaxRemoveReconfigs = 0,",
        "MaxSpawnedServers = the cluster size) and the limits below. The model has no VIEW:",
        "every variable identifies a state, so the search order cannot matter. With",
        "TestLiveness on (as shipped) an election makes the state space infinite (no bound on",
        "epochs), so the rows with an election turn it off and bound epochs by MaxEpoch = 2;",
        "with 3 servers any fault is beyond a minute of TLC, so those rows have 2 servers. The",
        "liveness row is model_liveness.cfg's: TLC checks ValuesEventuallyAcked,",
        "ReconfigurationNotStuck, EventuallyLeaderElected and NotStuckInProspective, mc their",
        "translations (per value, per server).",
        "",
        "| configuration | mc spec | TLC distinct | mc distinct | TLC depth | mc depth "
        "| TLC generated | mc generated | TLC | mc | trace | TLC s | mc s | workers | equal |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---|",
    ]
    table = dict(old_table)
    for name, spec, _dashes, tlc, mc, equal, workers in rows:
        trace = f"{tlc['trace']} / {mc['trace']}" if tlc["trace"] or mc["trace"] else ""
        table[name] = (
            f"| {name} | `{spec}` | {tlc['distinct']:,} | {mc['distinct']:,} | {tlc['depth']} "
            f"| {mc['depth']} | {tlc['generated']:,} | {mc['generated']:,} "
            f"| {tlc['verdict']} | {mc['verdict']} | {trace} "
            f"| {tlc['seconds']:.1f} | {mc['seconds']:.1f} | {workers} "
            f"| {'yes' if equal else '**no** (VIEW, below)'} |"
        )
    lines += list(table.values())
    lines += ["", "The mc constants of each configuration:", ""]
    constants = dict(old_dashes)
    for name, spec, dashes, *_ in rows:
        constants[name] = f"- {name}: `mc check {spec} --no-deadlock {dashes}`"
    lines += list(constants.values())
    lines += [
        "",
        "(`--no-deadlock` as TLC's `-deadlock`; the specs' own `@terminal` also accepts the",
        "states where the model stops. Generated states differ where mc tries an action's",
        "alternatives that TLC folds: the v3.5 model's CleanShutdown has no clean/unclean",
        "choice, which the translation keeps as a parameter with equal outcomes.)",
        "",
        '## Constraints, step properties and generated states',
        '',
        'These models have no CONSTRAINT and no action property; where a TLA+ model has them, the',
        'translation says which meaning it wants ([tla-translated.md](tla-translated.md) runs TLC',
        'and mc side by side on small modules):',
        '',
        "- TLC's `CONSTRAINT` is `@constraint(admit=False)`: a successor that fails it is",
        '  generated, checked against the invariants and the step properties, and not added to the',
        "  states found; the distinct and generated counts are TLC's. mc's `@constraint` (the",
        '  default) adds it as a distinct state, checked and never expanded: more distinct states,',
        '  and one level deeper. `ACTION_CONSTRAINT` is `@action_constraint`: the step is not',
        '  taken, not generated and not checked (TLC counts it as generated and checks it).',
        "- An action property (`PROPERTY [][A]_vars`, TLC's implied action) is `@step_property`,",
        "  and `PROPERTY A!Spec` of an `INSTANCE` is `refines(...)` without the abstract spec's",
        '  fairness: both are checked on every step, into new states and states found before, as',
        "  TLC checks them; the counterexample is the same behaviour. At a violation TLC's counts",
        "  include the new successors of the last state up to the violating one, mc's stop before",
        "  that state's successors.",
        '- TLC\'s "states generated" counts the initial states, then per state one successor for',
        '  each satisfying binding of each `\\E` and each true disjunct, inside called operators',
        '  too, a successor equal to another again; mc counts each Record an action returns for',
        '  each binding of its parameters. They are equal where each disjunct is an element of the',
        '  list the action returns, and differ where one side folds what the other enumerates (the',
        '  v3.5 CleanShutdown above).',
        '',
    ]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
