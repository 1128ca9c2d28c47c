"""KIP-841 on the translated model: without the controller's check, a fenced follower that
keeps fetching is proposed back into the ISR and accepted."""

from __future__ import annotations

from tests.conftest import SPECS
from tests.specs.kips import broken, holds

KIP841 = SPECS / "kip841.py"

FENCED_IN_ISR = [
    "send_fetch_request",
    "receive_fetch_request",  # the leader records broker 2's fetch
    "fence_broker",  # broker 2 is fenced (it keeps running and fetching): ISR {1}
    "receive_metadata_update",  # the leader learns it
    "send_alter_partition_request",  # and proposes {1, 2}, 2 being caught up
    "receive_alter_partition_request",  # accepted: a fenced broker in the ISR
]


def test_fixed_holds_with_the_defaults():
    holds(KIP841, 1_260, 21)


def test_without_the_fix_a_fenced_broker_joins_the_isr():
    result = broken(KIP841, "fenced_broker_not_in_isr", FENCED_IN_ISR)
    last = result.trace[-1].state
    assert last.con_broker_reg[2].status == "FENCED" and last.con_partition_metadata.isr == {1, 2}
