"""The sequence chart's data: lifeline order and how sends and receives are paired."""

from __future__ import annotations

from checker.reports.chart import SPEC, Box, Call, Message, sequence_chart
from checker.result import Event, Step
from checker.values.record import Record


def steps(*events: tuple[str, Event | None]) -> list[Step]:
    """An initial state, then one step per (action, event); states just count."""
    trace = [Step(None, {}, Record(i=0))]
    for i, (action, event) in enumerate(events, start=1):
        trace.append(Step(action, {"k": i}, Record(i=i), event))
    return trace


def test_receive_pairs_with_the_earliest_unmatched_send_of_that_message_on_that_channel():
    trace = steps(
        ("send_a", Event("broker 0", "send", "controller", "AlterPartition")),  # step 2
        ("send_b", Event("broker 0", "send", "controller", "AlterPartition")),  # step 3
        ("other_channel", Event("broker 1", "send", "controller", "AlterPartition")),  # 4
        ("other_message", Event("broker 0", "send", "controller", "Heartbeat")),  # 5
        ("handle", Event("controller", "receive", "broker 0", "AlterPartition")),  # 6
        ("handle", Event("controller", "receive", "broker 0", "AlterPartition")),  # 7
    )
    chart = sequence_chart(trace)
    assert chart.messages == [
        Message("AlterPartition", "broker 0", "controller", 2, 6),
        Message("AlterPartition", "broker 0", "controller", 3, 7),
        Message("AlterPartition", "broker 1", "controller", 4, None),  # still in flight
        Message("Heartbeat", "broker 0", "controller", 5, None),
    ]


def test_receive_without_a_send_calls_local_and_unannotated_steps():
    trace = steps(
        ("deliver", Event("controller", "receive", "broker 2", "Fetch")),
        ("fetch", Event("broker 1", "call", "broker 0", "Fetch")),
        ("reboot", Event("broker 1", "local")),
        ("tick", None),
    )
    chart = sequence_chart(trace, violated="safe")
    assert chart.messages == [Message("Fetch", "broker 2", "controller", None, 2)]
    assert chart.calls == [Call(3, "broker 1", "broker 0", "Fetch")]
    assert chart.boxes == [Box(4, "broker 1", "reboot(k=3)"), Box(5, SPEC, "tick(k=4)")]
    assert chart.steps == [
        "initial state",
        "deliver(k=1)",
        "fetch(k=2)",
        "reboot(k=3)",
        "tick(k=4)",
    ]
    assert chart.violated == "safe"


def test_lifelines_in_order_of_appearance_controller_first_spec_column_last():
    trace = steps(
        ("tick", None),
        ("fetch", Event("broker 1", "call", "broker 0", "Fetch")),
        ("unfence", Event("controller", "local")),
        ("join", Event("broker 2", "send", "controller", "Registration")),
    )
    assert sequence_chart(trace).lifelines == [
        "controller",
        "broker 1",
        "broker 0",
        "broker 2",
        SPEC,
    ]


def test_kip903_counterexample_chart(kip903_result):
    """KAFKA-14139 as drawn by hand: the leader's AlterPartition reaches the controller only
    in the last step, after the follower rebooted with an empty disk and re-registered."""
    trace = kip903_result.trace
    chart = sequence_chart(trace, kip903_result.invariant)
    assert chart.lifelines[0] == "controller"
    leader = f"broker {trace[0].state.leader}"
    (alter,) = [m for m in chart.messages if m.message == "AlterPartition"]
    assert (alter.sender, alter.receiver, alter.received) == (leader, "controller", len(trace))
    assert alter.sent is not None and alter.sent < len(trace) - 1  # slanted across steps
    registered = [c for c in chart.calls if c.message == "BrokerRegistration"]
    assert registered and alter.sent < registered[0].step < alter.received
    # every step but the initial state appears exactly once on the chart
    drawn = [b.step for b in chart.boxes] + [c.step for c in chart.calls]
    drawn += [m.sent for m in chart.messages] + [m.received for m in chart.messages]
    assert sorted(drawn) == list(range(2, len(trace) + 1))
