"""KIP-841: fenced replicas should not be allowed to join the ISR in KRaft (the KIP on
the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA).

The layer on specs/kraft.py (Kafka 3.5 KRaft replication, translated from Vanlightly's TLA+
model): the controller rejects an AlterPartition whose proposed ISR holds a broker that is not
UNFENCED, with INELIGIBLE_REPLICA (the model's IsEligibleBroker, first half). In the model a
shutting-down broker is fenced at once (the shutdowns fence it), so "fenced or shutting down"
is "fenced" here. Its one rule is `fenced_ineligible`, read in IsEligibleBroker
(specs/kraft.py's `is_eligible_broker`). With `fixed=False` the controller trusts the leader,
as before the KIP: a fenced follower that keeps fetching is proposed and accepted
(`fenced_broker_not_in_isr`).
"""

from __future__ import annotations

from checker import State, all_rules, invariant, reachable, rule
from invariants import kraft
from specs.kraft import FENCED, KRaftReplication


class Kip841(KRaftReplication):
    """KIP-841: the controller keeps fenced brokers out of the ISR."""

    fixed = all_rules("KIP-841: the controller checks that ISR members are unfenced")
    fenced_ineligible = rule(
        "The controller rejects an AlterPartition whose new ISR holds a fenced or shutting-down"
        " replica (INELIGIBLE_REPLICA)"
    )

    @reachable(switch="fence_broker_limit")
    def fenced_follower_fetching(self, s: State) -> bool:
        """A fenced broker runs and still has the partition in a fetcher."""
        return any(
            s.con_broker_reg[b].status == FENCED
            and any(f.partition is not None for f in s.broker_fetchers[b].values())
            for b in self.brokers
        )

    @invariant
    def fenced_broker_not_in_isr(self, s: State) -> bool:
        """No fenced broker is in the ISR (ValidControllerState), except as the ISR's last
        member where the ISR cannot become empty (before KIP-966)."""
        if self.last_isr_member_stays:
            return kraft.fenced_broker_not_in_larger_isr(s)
        return kraft.fenced_broker_not_in_isr(s)

    last_isr_member_stays = True  # hook: KIP-966 empties the ISR
