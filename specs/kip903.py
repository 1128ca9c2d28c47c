"""KIP-903: replicas with a stale broker epoch should not be allowed to join the ISR (the KIP
on the Apache Kafka wiki, cwiki.apache.org/confluence/display/KAFKA; the bug, KAFKA-14139, on
issues.apache.org/jira).

The layer on specs/kip841.py: the leader sends, in AlterPartition, the broker epoch each
proposed new ISR member fetched with (the model's IsrAndEpochs), and the controller rejects
the request with INELIGIBLE_REPLICA if one is not the member's current broker epoch (the
model's IsEligibleBroker, second half): the rule `stale_epoch_ineligible`. With both, this is
Vanlightly's v3.5 model.

With `fixed=False` the epochs are not checked, as before the KIP: KAFKA-14139. A follower
fetches (the leader records its fetch offset), crashes losing its log, restarts and registers
with a new broker epoch; the leader, on its stale record of the follower, proposes it back
into the ISR and the controller accepts: an ISR member lacks committed records.
"""

from __future__ import annotations

from checker import State, all_rules, constant, reachable, rule
from specs.kip841 import Kip841
from specs.kraft import RUNNING


class Kip903(Kip841):
    """KIP-903: broker epochs keep replicas restarted with an empty log out of the ISR."""

    fixed = all_rules("KIP-903: the controller checks the broker epochs of new members")
    fenced_ineligible = True  # KIP-903 came after KIP-841
    stale_epoch_ineligible = rule(
        "The controller rejects an AlterPartition whose new ISR member's broker epoch, from its"
        " Fetch, is not the current one (INELIGIBLE_REPLICA)"
    )
    fence_broker_limit = constant(0, "FenceBrokerLimit: running brokers fenced", min=0)
    data_loss_shutdown_limit = constant(1, "DataLossShutdownLimit: log-losing crashes", min=0)

    @reachable(switch="data_loss_shutdown_limit")
    def replica_back_with_an_empty_log(self, s: State) -> bool:
        """A broker that lost its log runs again, registered, after something was committed."""
        return s.inv_true_hwm > 1 and any(
            s.broker_state[b].status == RUNNING and s.partition_data[b].leo == 1
            for b in self.brokers
        )
