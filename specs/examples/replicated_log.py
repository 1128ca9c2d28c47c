"""A replicated log: one leader, followers fetching, and a high watermark the ISR must hold.

The worked example of docs/writing-specs.md; it uses every feature of the spec API.

Broker 0 leads one partition and never fails; brokers 1..followers fetch from it (one
follower by default, like replicas A and B of KAFKA-14139), each with at most one Fetch
outstanding, and the network may lose a Fetch response. The leader keeps the offset of each
follower's latest Fetch (its view of the follower), shrinks and expands the ISR, and
advances the high watermark (HWM) to the smallest offset every ISR member is known to hold.
Logs are kept as log end offsets: with one leader they cannot diverge.

With `-D fixed=false` the leader also counts the records it has sent to a follower, but
that the follower has not confirmed with its next Fetch, so the HWM can overtake an ISR
member's log and `hwm_held_by_isr` fails.
"""

from checker import Record, Spec, action, constant, invariant, on, put, without
from invariants import replication


class ReplicatedLog(Spec):
    """A leader, followers fetching, and a high watermark the ISR must hold."""

    followers = constant(1, "followers fetching from the leader (broker 0)")
    max_records = constant(2, "records the leader's log may hold")
    fixed = constant(True, "the HWM counts only records a follower's Fetch has confirmed")

    @property
    def follower_ids(self):
        return range(1, self.followers + 1)

    def init(self):
        return Record(
            leader=0,
            log_end=[0] * (self.followers + 1),  # each broker's log end offset (a tuple)
            hwm=0,  # the leader's high watermark
            isr={0, *self.follower_ids},  # a set: frozen into a frozenset
            fetch_offset={f: 0 for f in self.follower_ids},  # a dict: frozen into a Record
            responses=Record(),  # follower -> its Fetch response in flight
        )

    @action(batch=(1, 2))
    @on("broker {s.leader}")
    def produce(self, s, batch):
        """A producer appends a batch of records to the leader's log."""
        end = s.log_end[s.leader] + batch
        if end > self.max_records:
            return None
        return s.replace(log_end=put(s.log_end, s.leader, end))

    @action(f="follower_ids")
    @on("broker {s.leader}", sends="broker {f}", message="Fetch response")
    def fetch(self, s, f):
        """Follower f fetches from its log end; the leader notes the offset and responds."""
        if f in s.responses:  # one Fetch outstanding per follower
            return None
        offset = s.log_end[f]
        response = Record(offset=offset, records=s.log_end[s.leader] - offset)
        return s.replace(
            fetch_offset=put(s.fetch_offset, f, offset),
            responses=put(s.responses, f, response),
        )

    @action(f=lambda s: tuple(s.responses))
    @on("broker {f}", receives="broker {s.leader}", message="Fetch response")
    def receive(self, s, f):
        """The Fetch response to follower f arrives and is appended, or the network loses it."""
        response = s.responses[f]
        lost = s.replace(responses=without(s.responses, f))
        delivered = lost.replace(log_end=put(s.log_end, f, response.offset + response.records))
        return [delivered, lost]

    @action(f="follower_ids")
    @on("broker {s.leader}")
    def shrink_isr(self, s, f):
        """The leader removes follower f, which has not fetched up to its log end, from the ISR."""
        if f not in s.isr or s.fetch_offset[f] >= s.log_end[s.leader]:
            return None
        return s.replace(isr=s.isr - {f})

    @action(f="follower_ids")
    @on("broker {s.leader}")
    def expand_isr(self, s, f):
        """The leader adds follower f back to the ISR once f has fetched up to the HWM."""
        if f in s.isr or s.fetch_offset[f] < s.hwm:
            return None
        return s.replace(isr=s.isr | {f})

    @action
    @on("broker {s.leader}")
    def advance_high_watermark(self, s):
        """The leader moves the HWM up to the smallest offset it believes the ISR holds."""
        hwm = min(self.believed_log_end(s, r) for r in s.isr)
        if hwm <= s.hwm:
            return None
        return s.replace(hwm=hwm)

    def believed_log_end(self, s, r):
        """The log end offset of replica r as the leader knows it (not an action)."""
        if r == s.leader:
            return s.log_end[r]
        if not self.fixed and r in s.responses:  # the bug: records sent count as replicated
            return s.responses[r].offset + s.responses[r].records
        return s.fetch_offset[r]

    leader_in_isr = invariant(replication.leader_in_isr)

    @invariant
    def hwm_within_leader_log(self, s):
        """The HWM never passes the leader's log end."""
        return 0 <= s.hwm <= s.log_end[s.leader]

    @invariant
    def hwm_held_by_isr(self, s):
        """Every ISR member holds every record below the HWM: committed means replicated."""
        return all(s.log_end[r] >= s.hwm for r in s.isr)
