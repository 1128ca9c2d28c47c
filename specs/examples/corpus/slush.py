"""Slush, the simplest probabilistic consensus protocol of the Avalanche family (Andrew Helwer).

Translated from github.com/tlaplus/Examples, specifications/SlushProtocol/Slush.tla (the TLA+
translation of its PlusCal algorithm), checked with specifications/SlushProtocol/SlushSmall.cfg
(three nodes, SlushIterationCount = 1, SampleSetSize = 2, PickFlipThreshold = 2, INVARIANT
TypeInvariant).

Model values are strings: nodes n1..nK, loop processes l1..lK, query processes q1..qK, with
HostMapping {{n_i, l_i, q_i}}; the client is the process "ClientRequest". NoColor is None.
Each PlusCal label is an action of its process; `pc` maps each process to its label.
`Terminating`, the stuttering step PlusCal adds once every process is done, returns the state
itself.
"""

from itertools import combinations

from checker import Record, Spec, action, constant, invariant, put

RED, BLUE = "Red", "Blue"
COLOR = (RED, BLUE)
QUERY, QUERY_REPLY = "QueryMessageType", "QueryReplyMessageType"
TERMINATION = "TerminationMessageType"


class Slush(Spec):
    """Slush: each node samples others and flips to the colour a threshold of them reports."""

    nodes = constant(3, "nodes, each hosting one loop and one query process (SlushSmall: 3)", min=1)
    SlushIterationCount = constant(1, "rounds of each loop process (SlushSmall: 1)", min=0)
    SampleSetSize = constant(2, "query processes sampled per round (SlushSmall: 2)", min=0)
    PickFlipThreshold = constant(2, "replies of one colour that flip a pick (SlushSmall: 2)", min=0)

    pick: dict[str, str | None]
    message: frozenset[Record]

    @property
    def Node(self) -> tuple[str, ...]:
        return tuple(f"n{i}" for i in range(1, self.nodes + 1))

    @property
    def SlushLoopProcess(self) -> tuple[str, ...]:
        return tuple(f"l{i}" for i in range(1, self.nodes + 1))

    @property
    def SlushQueryProcess(self) -> tuple[str, ...]:
        return tuple(f"q{i}" for i in range(1, self.nodes + 1))

    def HostOf(self, pid: str) -> str:
        """HostMapping {{n_i, l_i, q_i}}: the node of loop or query process pid."""
        return "n" + pid[1:]

    def Pick(self, s, pid):
        return s.pick[self.HostOf(pid)]

    def PendingQueryMessage(self, s, p):
        return {m for m in s.message if m.type == QUERY and m.dst == p}

    def PendingQueryReplyMessage(self, s, p):
        return {m for m in s.message if m.type == QUERY_REPLY and m.dst == p}

    def Terminate(self, s):
        return s.message == {Record(type=TERMINATION, pid=p) for p in self.SlushLoopProcess}

    def init(self):
        pc = {q: "QueryReplyLoop" for q in self.SlushQueryProcess}
        pc.update({lp: "RequireColorAssignment" for lp in self.SlushLoopProcess})
        pc["ClientRequest"] = "ClientRequestLoop"
        return Record(
            pick={n: None for n in self.Node},
            message=frozenset(),
            sampleSet={lp: frozenset() for lp in self.SlushLoopProcess},
            loopVariant={lp: 0 for lp in self.SlushLoopProcess},
            pc=pc,
        )

    def goto(self, s, p, label):
        return put(s.pc, p, label)

    # process SlushQuery \in SlushQueryProcess

    @action(p="SlushQueryProcess")
    def QueryReplyLoop(self, s, p):
        if s.pc[p] != "QueryReplyLoop":
            return None
        label = "WaitForQueryMessageOrTermination" if not self.Terminate(s) else "Done"
        return s.replace(pc=self.goto(s, p, label))

    @action(p="SlushQueryProcess")
    def WaitForQueryMessageOrTermination(self, s, p):
        if s.pc[p] != "WaitForQueryMessageOrTermination":
            return None
        terminate = self.Terminate(s)
        if not (self.PendingQueryMessage(s, p) or terminate):
            return None
        label = "QueryReplyLoop" if terminate else "RespondToQueryMessage"
        return s.replace(pc=self.goto(s, p, label))

    @action(p="SlushQueryProcess", msg="PendingQueryMessage")
    def RespondToQueryMessage(self, s, p, msg):
        if s.pc[p] != "RespondToQueryMessage":
            return None
        color = msg.color if self.Pick(s, p) is None else self.Pick(s, p)
        reply = Record(type=QUERY_REPLY, src=p, dst=msg.src, color=color)
        return s.replace(
            pick=put(s.pick, self.HostOf(p), color),
            message=(s.message - {msg}) | {reply},
            pc=self.goto(s, p, "QueryReplyLoop"),
        )

    # process SlushLoop \in SlushLoopProcess

    @action(p="SlushLoopProcess")
    def RequireColorAssignment(self, s, p):
        if s.pc[p] != "RequireColorAssignment" or self.Pick(s, p) is None:
            return None
        return s.replace(pc=self.goto(s, p, "ExecuteSlushLoop"))

    @action(p="SlushLoopProcess")
    def ExecuteSlushLoop(self, s, p):
        if s.pc[p] != "ExecuteSlushLoop":
            return None
        more = s.loopVariant[p] < self.SlushIterationCount
        return s.replace(pc=self.goto(s, p, "QuerySampleSet" if more else "SlushLoopTermination"))

    def possible_sample_sets(self, s, p):
        """{pidSet \\in SUBSET otherQueryProcesses : Cardinality(pidSet) = SampleSetSize}."""
        others = [q for q in self.SlushQueryProcess if self.HostOf(q) != self.HostOf(p)]
        return [frozenset(c) for c in combinations(others, self.SampleSetSize)]

    @action(p="SlushLoopProcess", possibleSampleSet="possible_sample_sets")
    def QuerySampleSet(self, s, p, possibleSampleSet):
        if s.pc[p] != "QuerySampleSet":
            return None
        queries = {
            Record(type=QUERY, src=p, dst=q, color=self.Pick(s, p)) for q in possibleSampleSet
        }
        return s.replace(
            sampleSet=put(s.sampleSet, p, possibleSampleSet),
            message=s.message | queries,
            pc=self.goto(s, p, "TallyQueryReplies"),
        )

    @action(p="SlushLoopProcess")
    def TallyQueryReplies(self, s, p):
        if s.pc[p] != "TallyQueryReplies":
            return None
        sample = s.sampleSet[p]
        replies = self.PendingQueryReplyMessage(s, p)
        if not all(any(m.src == q for m in replies) for q in sample):
            return None
        red = len({m for m in replies if m.src in sample and m.color == RED})
        blue = len({m for m in replies if m.src in sample and m.color == BLUE})
        pick = s.pick
        if red >= self.PickFlipThreshold:
            pick = put(pick, self.HostOf(p), RED)
        elif blue >= self.PickFlipThreshold:
            pick = put(pick, self.HostOf(p), BLUE)
        consumed = {
            m for m in s.message if m.type == QUERY_REPLY and m.src in sample and m.dst == p
        }
        return s.replace(
            pick=pick,
            message=s.message - consumed,
            sampleSet=put(s.sampleSet, p, frozenset()),
            loopVariant=put(s.loopVariant, p, s.loopVariant[p] + 1),
            pc=self.goto(s, p, "ExecuteSlushLoop"),
        )

    @action(p="SlushLoopProcess")
    def SlushLoopTermination(self, s, p):
        if s.pc[p] != "SlushLoopTermination":
            return None
        return s.replace(
            message=s.message | {Record(type=TERMINATION, pid=p)},
            pc=self.goto(s, p, "Done"),
        )

    # process ClientRequest = "ClientRequest"

    @action
    def ClientRequestLoop(self, s):
        if s.pc["ClientRequest"] != "ClientRequestLoop":
            return None
        uncoloured = any(s.pick[n] is None for n in self.Node)
        label = "AssignColorToNode" if uncoloured else "Done"
        return s.replace(pc=self.goto(s, "ClientRequest", label))

    @action(node="Node", color=COLOR)
    def AssignColorToNode(self, s, node, color):
        if s.pc["ClientRequest"] != "AssignColorToNode":
            return None
        pick = put(s.pick, node, color) if s.pick[node] is None else s.pick
        return s.replace(pick=pick, pc=self.goto(s, "ClientRequest", "ClientRequestLoop"))

    @action
    def Terminating(self, s):
        """Every process is done: stutter (PlusCal's guard against a deadlock at the end)."""
        if any(label != "Done" for label in s.pc.values()):
            return None
        return s

    @invariant
    def TypeInvariant(self, s):
        loops, queries = set(self.SlushLoopProcess), set(self.SlushQueryProcess)

        def is_message(m):
            if m.type == TERMINATION:
                return set(m) == {"type", "pid"} and m.pid in loops
            if m.type == QUERY:
                src, dst = loops, queries
            elif m.type == QUERY_REPLY:
                src, dst = queries, loops
            else:
                return False
            return (
                set(m) == {"type", "src", "dst", "color"}
                and m.src in src
                and m.dst in dst
                and m.color in COLOR
            )

        return (
            set(s.pick) == set(self.Node)
            and all(c in COLOR or c is None for c in s.pick.values())
            and all(is_message(m) for m in s.message)
        )
