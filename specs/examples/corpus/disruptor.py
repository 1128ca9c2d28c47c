"""A multi-producer, multi-consumer Disruptor ring buffer (Nicholas Schultz-Møller).

Translated from github.com/tlaplus/Examples, specifications/Disruptor/Disruptor_MPMC.tla with
the RingBuffer.tla it instantiates, checked with specifications/Disruptor/Disruptor_MPMC.cfg
(MaxPublished = 10, Writers = {w1, w2}, Readers = {r1, r2, r3}, Size = 4, INVARIANTS TypeOk
NoDataRaces, CONSTRAINT StateConstraint, CHECK_DEADLOCK FALSE).

Writers and readers are model values, the strings w1.. and r1..; NULL is None. The ring
buffer is a record of three tuples indexed by slot (`slots`, and the `readers` and `writers`
accessing each slot); `claimed_sequence`, `read`, `pc` and `consumed` are maps keyed by
writer or reader. StateConstraint is TLC's CONSTRAINT: `@constraint(admit=False)`.
"""

from checker import Record, Spec, action, constant, constraint, invariant, put, update

ACCESS, ADVANCE = "Access", "Advance"


class Disruptor(Spec):
    """Disruptor MPMC: producers claim and publish sequences, every consumer reads them all."""

    MaxPublished = constant(10, "events published at most (the state constraint)", min=1)
    writers = constant(2, "writer threads w1.. (Disruptor_MPMC.cfg: 2)", min=1)
    readers = constant(3, "reader threads r1.. (Disruptor_MPMC.cfg: 3)", min=1)
    Size = constant(4, "slots of the ring buffer", min=1)

    consumed: dict[str, tuple[int, ...]]

    @property
    def Writers(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(1, self.writers + 1))

    @property
    def Readers(self) -> tuple[str, ...]:
        return tuple(f"r{i}" for i in range(1, self.readers + 1))

    @property
    def LastIndex(self) -> int:
        return self.Size - 1

    def IndexOf(self, sequence):
        return sequence % self.Size

    def init(self):
        slots = range(self.Size)
        return Record(
            ringbuffer=Record(
                slots=tuple(None for _ in slots),
                readers=tuple(frozenset() for _ in slots),
                writers=tuple(frozenset() for _ in slots),
            ),
            next_sequence=0,
            claimed_sequence={w: -1 for w in self.Writers},
            published=tuple(False for _ in slots),
            read={r: -1 for r in self.Readers},
            consumed={r: () for r in self.Readers},
            pc={a: ADVANCE for a in self.Writers + self.Readers},
        )

    def MinReadSequence(self, s):
        return min(s.read.values())

    def IsPublished(self, s, sequence):
        """published[index] is TRUE if the slot was published in an even round."""
        is_even = (sequence // self.Size) % 2 == 0
        return s.published[self.IndexOf(sequence)] == is_even

    # Producer actions

    @action(writer="Writers")
    def BeginWrite(self, s, writer):
        seq = s.next_sequence
        index = self.IndexOf(seq)
        if self.MinReadSequence(s) < seq - self.Size:  # clear of all consumers?
            return None
        if s.pc[writer] != ADVANCE:
            return None
        rb = update(s.ringbuffer, "writers", index, lambda ws: ws | {writer})
        return s.replace(
            claimed_sequence=put(s.claimed_sequence, writer, seq),
            next_sequence=seq + 1,
            pc=put(s.pc, writer, ACCESS),
            ringbuffer=update(rb, "slots", index, lambda _: seq),
        )

    @action(writer="Writers")
    def EndWrite(self, s, writer):
        seq = s.claimed_sequence[writer]
        index = self.IndexOf(seq)
        if s.pc[writer] != ACCESS:
            return None
        return s.replace(
            pc=put(s.pc, writer, ADVANCE),
            ringbuffer=update(s.ringbuffer, "writers", index, lambda ws: ws - {writer}),
            published=update(s.published, index, lambda p: not p),  # Xor(TRUE, @)
        )

    # Consumer actions

    @action(reader="Readers")
    def BeginRead(self, s, reader):
        next = s.read[reader] + 1
        index = self.IndexOf(next)
        if not self.IsPublished(s, next) or s.pc[reader] != ADVANCE:
            return None
        value = s.ringbuffer.slots[index]
        return s.replace(
            pc=put(s.pc, reader, ACCESS),
            ringbuffer=update(s.ringbuffer, "readers", index, lambda rs: rs | {reader}),
            consumed=update(s.consumed, reader, lambda c: c + (value,)),
        )

    @action(reader="Readers")
    def EndRead(self, s, reader):
        next = s.read[reader] + 1
        index = self.IndexOf(next)
        if s.pc[reader] != ACCESS:
            return None
        return s.replace(
            pc=put(s.pc, reader, ADVANCE),
            ringbuffer=update(s.ringbuffer, "readers", index, lambda rs: rs - {reader}),
            read=put(s.read, reader, next),
        )

    @constraint(admit=False)
    def StateConstraint(self, s):
        return s.next_sequence <= self.MaxPublished

    @invariant
    def NoDataRaces(self, s):
        rb = s.ringbuffer
        return all(
            (not rb.readers[i] or not rb.writers[i]) and len(rb.writers[i]) <= 1
            for i in range(self.Size)
        )

    @invariant
    def TypeOk(self, s):
        rb = s.ringbuffer
        writers, readers, slots = set(self.Writers), set(self.Readers), range(self.Size)
        return (
            all(rb.slots[i] is None or isinstance(rb.slots[i], int) for i in slots)
            and all(rb.readers[i] <= readers and rb.writers[i] <= writers for i in slots)
            and s.next_sequence >= 0
            and set(s.claimed_sequence) == writers
            and len(s.published) == self.Size
            and set(s.read) == readers
            and all(v >= 0 for c in s.consumed.values() for v in c)
            and all(s.pc[a] in (ACCESS, ADVANCE) for a in writers | readers)
        )
