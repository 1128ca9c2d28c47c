"""Safra's termination detection (EWD 998) as a PlusCal algorithm with message bags.

Translated from github.com/tlaplus/Examples, specifications/ewd998/EWD998PCal.tla (the TLA+
translation of its PlusCal algorithm), checked with specifications/ewd998/EWD998PCal.cfg (N = 3,
CONSTRAINT StateConstraint, PROPERTIES EWD998Spec).

`network` maps each node to its bag of messages in flight (TLA+'s Bags: a map from message
record to its count). The five disjuncts of `node(self)` are the five actions below, each
with the process `i` (TLA+'s `self`). StateConstraint is TLC's CONSTRAINT,
`@constraint(admit=False)`. PROPERTY EWD998Spec (the abstract spec's Init and
`[][Next]_vars`, no fairness) is `refines(EWD998, "ewd998")`, under EWD998PCal's mapping:
`token` and `pending` computed from the bags, the other variables as they are.
"""

from itertools import product

from checker import Record, Spec, action, choose, constant, constraint, put, refines, without
from specs.examples.corpus.ewd998 import EWD998

WHITE, BLACK = "white", "black"
PL = Record(type="pl")


def BagAdd(bag, x):
    return put(bag, x, bag[x] + 1 if x in bag else 1)


def BagRemove(bag, x):
    if x not in bag:
        return bag
    return without(bag, x) if bag[x] == 1 else put(bag, x, bag[x] - 1)


class EWD998PCal(Spec):
    """EWD 998 in PlusCal: nodes exchange payload messages and pass a token in bags."""

    N = constant(3, "nodes on the ring (EWD998PCal.cfg: 3)", min=1)

    Initiator = 0

    # a bag holds token and payload messages, records of two shapes
    network: dict[int, dict[Record, int]]

    @property
    def Node(self) -> range:
        return range(self.N)

    def others(self, s, i):
        """Node \\ {i}."""
        return [j for j in self.Node if j != i]

    def pendingMsgs(self, s, i):
        """DOMAIN network[i]."""
        return tuple(s.network[i])

    def init(self):
        network = Record(
            {
                n: Record({Record(type="tok", q=0, color=BLACK): 1})
                if n == self.Initiator
                else Record()
                for n in self.Node
            }
        )
        return [
            Record(
                network=network,
                active=active,
                color=(BLACK,) * self.N,
                counter=(0,) * self.N,
            )
            for active in product((False, True), repeat=self.N)
        ]

    @action(i="Node", to="others")
    def send(self, s, i, to):
        """Send a payload message to another node."""
        if not s.active[i]:
            return None
        return s.replace(
            network=put(s.network, to, BagAdd(s.network[to], PL)),
            counter=put(s.counter, i, s.counter[i] + 1),
        )

    @action(i="Node", msg="pendingMsgs")
    def receive(self, s, i, msg):
        """Receive a payload message: it reactivates the node."""
        if msg.type != "pl":
            return None
        return s.replace(
            counter=put(s.counter, i, s.counter[i] - 1),
            active=put(s.active, i, True),
            color=put(s.color, i, BLACK),
            network=put(s.network, i, BagRemove(s.network[i], msg)),
        )

    @action(i="Node")
    def terminate(self, s, i):
        """The node terminates (it may already be passive: then the step stutters)."""
        return s.replace(active=put(s.active, i, False))

    def passMsg(self, net, frm, old, to, new):
        net = put(net, frm, BagRemove(net[frm], old))
        return put(net, to, BagAdd(net[to], new))

    @action(i="Node", tok="pendingMsgs")
    def pass_token(self, s, i, tok):
        """A passive node other than the initiator passes the token on."""
        if i == self.Initiator or tok.type != "tok" or s.active[i]:
            return None
        color = BLACK if s.color[i] == BLACK else tok.color
        new = Record(type="tok", q=tok.q + s.counter[i], color=color)
        return s.replace(
            network=self.passMsg(s.network, i, tok, i - 1, new),
            color=put(s.color, i, WHITE),
        )

    @action(i="Node", tok="pendingMsgs")
    def initiate_token(self, s, i, tok):
        """The initiator starts a new round when the last one was inconclusive."""
        if i != self.Initiator or tok.type != "tok":
            return None
        # (color[self] = "black" \/ tok.q + counter[self] # 0 \/ tok.color = "black"): TLC
        # generates the successor once per true disjunct, and so does this list
        inconclusive = [s.color[i] == BLACK, tok.q + s.counter[i] != 0, tok.color == BLACK]
        new = Record(type="tok", q=0, color=WHITE)
        succ = s.replace(
            network=self.passMsg(s.network, i, tok, self.N - 1, new),
            color=put(s.color, i, WHITE),
        )
        return [succ for true in inconclusive if true]

    @constraint(admit=False)
    def StateConstraint(self, s):
        return all(c < 3 for c in s.counter)

    def ewd998(self, s):
        """The refinement mapping: EWD998's variables of this state."""
        tpos = choose(self.Node, lambda i: any(m.type == "tok" for m in s.network[i]))
        tok = choose(tuple(s.network[tpos]), lambda m: m.type == "tok")
        return Record(
            active=s.active,
            color=s.color,
            counter=s.counter,
            pending=tuple(s.network[n].get(PL, 0) for n in self.Node),
            token=Record(pos=tpos, q=tok.q, color=tok.color),
        )

    EWD998Spec = refines(
        EWD998, "ewd998", "PROPERTY EWD998Spec", constants=lambda self: {"N": self.N}
    )


spec = EWD998PCal
