"""Readers-writers with a queue that serves every request in turn (Isaac DeFrain).

Translated from github.com/tlaplus/Examples, specifications/ReadersWriters/ReadersWriters.tla,
checked with specifications/ReadersWriters/MC.cfg (NumActors = 3, INVARIANT TypeOK Safety,
PROPERTY Liveness).

Variables: `readers` and `writers` (sets of actors), `waiting` (a sequence of
<<"read" | "write", actor>> requests, a tuple of pairs). The fairness of `Spec` is on the
actions: WF on each actor's TryRead and TryWrite, WF on ReadOrWrite and on Stop.
"""

from checker import Record, Spec, action, constant, invariant, leads_to


class ReadersWriters(Spec):
    """Readers-writers: a queue of read and write requests, served in order."""

    NumActors = constant(3, "actors (MC.cfg: 3)", min=1)

    waiting: tuple[tuple[str, int], ...]

    @property
    def Actors(self) -> range:
        return range(1, self.NumActors + 1)

    def WaitingToRead(self, s):
        return {actor for kind, actor in s.waiting if kind == "read"}

    def WaitingToWrite(self, s):
        return {actor for kind, actor in s.waiting if kind == "write"}

    def init(self):
        return Record(readers=frozenset(), writers=frozenset(), waiting=())

    @action(actor="Actors", fair_each="weak")
    def TryRead(self, s, actor):
        if actor in self.WaitingToRead(s):
            return None
        return s.replace(waiting=s.waiting + (("read", actor),))

    @action(actor="Actors", fair_each="weak")
    def TryWrite(self, s, actor):
        if actor in self.WaitingToWrite(s):
            return None
        return s.replace(waiting=s.waiting + (("write", actor),))

    @action(fair="weak")
    def ReadOrWrite(self, s):
        if s.waiting == () or s.writers:
            return None
        kind, actor = s.waiting[0]
        if kind == "read":  # Read(actor)
            return s.replace(readers=s.readers | {actor}, waiting=s.waiting[1:])
        if s.readers:  # Write(actor): readers = {}
            return None
        return s.replace(writers=s.writers | {actor}, waiting=s.waiting[1:])

    @action(actor=lambda s: s.readers | s.writers, fair="weak")
    def Stop(self, s, actor):
        """StopActivity(actor) for an actor reading or writing."""
        if actor in s.readers:
            return s.replace(readers=s.readers - {actor})
        return s.replace(writers=s.writers - {actor})

    @invariant
    def TypeOK(self, s):
        actors = set(self.Actors)
        return (
            s.readers <= actors
            and s.writers <= actors
            and all(kind in ("read", "write") and a in actors for kind, a in s.waiting)
        )

    @invariant
    def Safety(self, s):
        return not (s.readers and s.writers) and len(s.writers) <= 1

    # Liveness: \A actor : []<>(actor \in readers), and the same for writers and their
    # negations. []<>P is TRUE ~> P, which takes a domain (always_eventually takes none).
    def always(self, s, actor):
        return True

    def reading(self, s, actor):
        return actor in s.readers

    def writing(self, s, actor):
        return actor in s.writers

    def not_reading(self, s, actor):
        return actor not in s.readers

    def not_writing(self, s, actor):
        return actor not in s.writers

    Liveness_reads = leads_to(always, reading, "[]<>(actor \\in readers)", actor="Actors")
    Liveness_writes = leads_to(always, writing, "[]<>(actor \\in writers)", actor="Actors")
    Liveness_stops_reading = leads_to(
        always, not_reading, "[]<>(actor \\notin readers)", actor="Actors"
    )
    Liveness_stops_writing = leads_to(
        always, not_writing, "[]<>(actor \\notin writers)", actor="Actors"
    )
