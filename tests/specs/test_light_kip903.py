"""KIP-903: the fix holds over the documented state space; without it, KAFKA-14139."""

from __future__ import annotations

from checker.loader import load_model
from checker.local.bfs import check
from tests.conftest import SPECS
from tests.specs.kips import actions, broken

KIP903 = SPECS / "light" / "kip903.py"

KAFKA_14139 = [
    "fetch",  # B fetches the committed record...
    "fetch",  # ...and its next Fetch tells leader A it caught up
    "send_alter_partition",  # A asks to add B (epoch 1) to the ISR
    "replace_disk",  # B fails and comes back with an empty disk
    "register_broker",  # B registers again: epoch 2, fenced
    "unfence_broker",  # ...and is unfenced
    "handle_alter_partition",  # the late AlterPartition adds B, empty, to the ISR
]


def test_fixed_holds_over_the_documented_state_space():
    result = check(load_model(KIP903))
    assert result.verdict == "ok"
    assert (result.distinct_states, result.depth) == (16_755, 39)
    fired = {c.name for c in result.coverage if c.fired}
    assert {"replace_disk", "unclean_shutdown", "send_alter_partition", "shrink_isr"} <= fired


def test_without_the_fix_the_kafka_14139_interleaving_is_found():
    result = broken(KIP903, "no_stale_epoch_in_isr", KAFKA_14139)  # 8 states: the shortest
    assert result.trace[4].params == {"b": 1}
    last = result.trace[-1].state
    assert dict(last.isr) == {0: 1, 1: 1} and last.broker_epoch == (1, 2)
    assert last.log == ((1,), ()) and last.hwm[0] == 1  # B is in the ISR without the record


def test_the_trace_says_where_each_step_happens():
    result = check(load_model(KIP903, {"fixed": "false"}))
    assert [
        (e.process, e.kind, e.peer, e.message) for e in (s.event for s in result.trace[1:])
    ] == [
        ("broker 1", "call", "broker 0", "Fetch"),
        ("broker 1", "call", "broker 0", "Fetch"),
        ("broker 0", "send", "controller", "AlterPartition"),
        ("broker 1", "local", None, None),
        ("broker 1", "call", "controller", "BrokerRegistration"),
        ("controller", "local", None, None),
        ("controller", "receive", "broker 0", "AlterPartition"),
    ]


def test_without_the_fix_committed_data_is_missing_from_the_isr():
    model = load_model(KIP903, {"fixed": "false"}, ["isr_members_hold_committed_data"])
    result = check(model)
    assert result.invariant == "isr_members_hold_committed_data"
    assert actions(result) == KAFKA_14139


def test_cli_exit_code_without_the_fix(mc):
    result = mc("check", KIP903, "-D", "fixed=false", "--progress", "0")
    assert result.code == 12
    assert "State 5: replace_disk(b=1)" in result.out
