"""A message-sequence chart of a trace, as data: lifelines, and what happens on them per step.

Built only from each step's `Event` (the spec's `@on` annotations), so the engine needs no
idea of what a broker or a controller is. Writers (SVG, Mermaid) draw it.

Pairing: a `receive` at step j is matched with the earliest unmatched `send` of an earlier
step with the same message name, from the receiver's peer to the receiver (FIFO per channel
and message name). A send never matched is still in flight when the trace ends; a receive with
no matching send (the spec does not annotate the sender) is drawn as arriving at its step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from checker.reports.graph import describe_action, lasso_line
from checker.result import CheckResult, Step

CONTROLLER = "controller"  # drawn first when present: it is the hub of the KRaft protocols
SPEC = "(spec)"  # the column of steps whose action has no @on


@dataclass(frozen=True)
class Message:
    """An arrow from `sender` to `receiver`. Steps are numbered from 1, as in the reports."""

    message: str
    sender: str
    receiver: str
    sent: int | None  # None: the send is not in the trace (the receiver's step draws it)
    received: int | None  # None: still in flight when the trace ends


@dataclass(frozen=True)
class Call:
    """A request and its response within one step."""

    step: int
    caller: str
    callee: str
    message: str


@dataclass(frozen=True)
class Box:
    """A local event (or an action without @on, on the SPEC column)."""

    step: int
    process: str
    text: str


@dataclass
class Chart:
    lifelines: list[str]
    steps: list[str]  # the description of each step: steps[0] is step 1
    messages: list[Message] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    violated: str | None = None  # the invariant the last step breaks
    loop: str | None = None  # for a lasso: how it goes on ("Back to state 2: fetch(f=1) ...")

    def lane(self, process: str) -> int:
        return self.lifelines.index(process)


def result_chart(result: CheckResult) -> Chart:
    """The sequence chart of a result's trace, closed by its violated invariant or by how its
    lasso goes on."""
    violated = result.invariant if result.verdict == "violation" else None
    loop = lasso_line(result)
    if loop is not None:
        loop += f" (temporal property {result.property} is violated)"
    return sequence_chart(result.trace, violated, loop)


def sequence_chart(
    trace: Sequence[Step], violated: str | None = None, loop: str | None = None
) -> Chart:
    order: list[str] = []

    def see(process: str | None) -> None:
        if process is not None and process not in order:
            order.append(process)

    steps = [describe_action(s.action, s.params) for s in trace]
    chart = Chart([], steps, violated=violated, loop=loop)
    pending: list[tuple[int, str, str, str]] = []  # unmatched sends: (step, from, to, message)
    for number, step in enumerate(trace, start=1):
        if step.action is None:
            continue  # the initial state: nothing happens on any lifeline
        event = step.event
        if event is None:
            see(SPEC)
            chart.boxes.append(Box(number, SPEC, chart.steps[number - 1]))
            continue
        see(event.process)
        see(event.peer)
        message = event.message or ""
        if event.kind == "local" or event.peer is None:
            chart.boxes.append(Box(number, event.process, chart.steps[number - 1]))
        elif event.kind == "send":
            pending.append((number, event.process, event.peer, message))
        elif event.kind == "call":
            chart.calls.append(Call(number, event.process, event.peer, message))
        else:  # receive
            match = next(
                (p for p in pending if p[1:] == (event.peer, event.process, message)), None
            )
            if match is None:
                chart.messages.append(Message(message, event.peer, event.process, None, number))
            else:
                pending.remove(match)
                chart.messages.append(Message(message, match[1], match[2], match[0], number))
    for sent, sender, receiver, message in pending:
        chart.messages.append(Message(message, sender, receiver, sent, None))
    chart.messages.sort(key=lambda m: (m.sent or m.received or 0, m.received or 0))
    chart.lifelines = sorted(order, key=lambda p: (p != CONTROLLER, p == SPEC, order.index(p)))
    return chart
