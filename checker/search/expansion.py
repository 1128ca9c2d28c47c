"""Expanding a batch of states: the work every engine hands out, and what comes back.

An engine hands an Expander a batch (a part of a BFS level): states the expander itself keeps as
live objects (it found them at the previous level), or their encodings. The expander runs
`Model.expand_batch` on them: every successor is computed, and those equal (by `==`, on
Python's own hash; with a view, by their views: `Model.by_view`) to a state the expander has
met at this level, a parent or a successor it already sent, are dropped at once. Only the
others, the candidates, are encoded, fingerprinted and checked against the invariants; the
reply (`Expanded`) has their fingerprints, encodings and verdicts, with the action of every
successor and the number per parent.

The engine decides which candidates are new (in batch order, so that the search is that of one
state at a time: checker.search.admission) and tells the expander (`Admit`), which keeps them,
still live, for the next level, unless the engine's memory budget for live states says
otherwise. The engine may ask for the candidates' sizes only, not their encodings
(`Expand.encodings` False): it then keeps whichever are new live in this expander, and only
this expander expands them. A successor dropped as already met is never new: the expander met
it as a parent (visited), or sent it in a batch that comes earlier in the level, whose
candidates the engine decides about first. So a batch that comes earlier in the level than
one the expander has expanded (`Expand.behind`) drops only the successors equal to its own
states and to each other: the states met in later batches do not count for it.

The messages are dataclasses of ints, bytes and lists; between processes they travel as
msgpack (`pack`, `unpack`), never pickle.
"""

from __future__ import annotations

import dataclasses
from array import array
from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np

from checker.behaviour import Recording, predicate_value
from checker.errors import OUTSIDE, EvaluationError, Interrupted
from checker.model import Batch, Model, ReadSet
from checker.values import fast
from checker.values.encoding import decode_all, encode_state
from checker.values.record import Record

LIVE_FACTOR = 3  # where memory is not measured: a live state's bytes per byte of its encoding
BACK_EDGES = 0.02  # remember states across levels when this share of candidates was older


# -- the messages ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Expand:
    """Expand batch `chunk` (a number unique in the search) of `level`: the states kept live
    here from `start` on (`count` of them), or, given `blob`, the states encoded there (at
    uint64 `offsets`). `bindings`: also each candidate's binding index (Spark's links);
    `checks` False: no invariant or reachability property is evaluated (Spark checks the new
    states only, once they are known); `encodings` False: the reply carries the candidates'
    offsets but not their encodings (the engine will have the new ones kept here); `behind`:
    the batch comes earlier in the level than one this expander has expanded."""

    chunk: int
    level: int
    start: int = 0
    count: int = 0
    blob: bytes | None = None
    offsets: bytes = b""
    bindings: bool = False
    checks: bool = True
    encodings: bool = True
    behind: bool = False


@dataclass(frozen=True)
class Admit:
    """The candidates of batch `chunk` at `indices` (uint32, ascending) are new states: keep
    them live for the next level if `keep`."""

    chunk: int
    indices: bytes
    keep: bool


@dataclass(frozen=True)
class Initial:
    """Encode, fingerprint and check the initial states `start` to `start + count - 1` (in
    the order `init` lists them: every process has them, `Model.initial_part`), as batch
    `chunk`. The reply is an Expanded whose one parent, the search's root, has them as its
    successors (the initial states this expander met before are not candidates); the engine
    admits them as it admits a part's, and says which to keep live as level 1's (Admit).
    `encodings`: as Expand's. `candidates`: the spec's init is an `every`, and `start`,
    `count` are a range of its candidates (Model.initial_candidates): the initial states are
    those among them, and the reply has their numbers."""

    chunk: int
    start: int
    count: int
    encodings: bool = True
    candidates: bool = False


@dataclass(frozen=True)
class Initials:
    """The numbers of the initial states among the candidates of the spec's `every` (int64
    bytes), found by parts (Initial): every expander can build them all (Model.learn_initial)."""

    numbers: bytes


@dataclass(frozen=True)
class StartLevel:
    """The engine starts expanding `level`: forget the states met before it unless `forget` is
    False; `wanted`: the reachability properties (indexes) that no state has satisfied yet."""

    level: int
    forget: bool
    wanted: list[int]


@dataclass(frozen=True)
class Forget:
    """Forget the states met so far (the engine keeps this memory within its budget)."""


@dataclass(frozen=True)
class Known:
    """The fingerprints (uint64) of states the engine admitted from another expander's part
    of the level: a candidate with one of them is not new, so it is dropped as a met state
    is, before its invariants are evaluated (see _drop_known)."""

    fps: bytes


class Pieces:
    """Encoded states not yet joined: a reply's blob as its encodings. The engine joins only
    those it admits (checker.local.bfs); between processes they are sent one after the other
    (checker.local.channel), never joined."""

    __slots__ = ("pieces", "size")

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.size = sum(map(len, pieces))

    def __len__(self) -> int:
        return self.size

    def joined(self) -> bytes:
        return b"".join(self.pieces)


@dataclass(frozen=True)
class Expanded:
    """The reply to Expand. Per successor, its action (uint16); per state, its number of
    successors (uint32) and whether it is deadlocked (uint8: no action enabled; a state the
    constraints keep from being expanded is not). The candidates: their positions among the
    successors (uint32), fingerprints (uint64), encodings (`blob`: Pieces as made, the bytes
    received in another process; and uint64 offsets), [candidate, invariant] for each that
    violates one, those on which an invariant or a wanted reachability property raised, and
    [candidate, property] for the first one satisfying each wanted reachability property
    (`blob` empty when the request asked for no encodings: the offsets are there, and
    `raised_encodings` has those of the candidates in `raised`, which the engine evaluates
    again to report).
    `error`: the first state whose expansion raised (none are expanded after it); `stops`:
    [state, its encoding] for that state and the first deadlocked one (where the engine may
    stop, and expand the state again to report it). `bindings`:
    the candidates' binding indexes, if asked. A recorded search (checker.behaviour) also gets
    every successor's fingerprint (`targets`), the candidates' predicate values (uint8 rows)
    and the keyed steps' binding keys (`keys`)."""

    actions: bytes
    counts: bytes
    stuck: bytes
    positions: bytes
    fps: bytes
    blob: Pieces | bytes | bytearray
    offsets: bytes
    broken: list[list[Any]] = field(default_factory=list)
    raised: list[int] = field(default_factory=list)
    reached: list[list[int]] = field(default_factory=list)
    error: int | None = None
    bindings: bytes | None = None
    targets: bytes | None = None
    values: bytes | None = None
    keys: bytes | None = None
    stops: list[list[Any]] = field(default_factory=list)
    raised_encodings: list[bytes] = field(default_factory=list)
    # (Initial of candidates) the initial states' numbers (int64), and the candidate on which
    # the init's `where` raised (the states before it only)
    numbers: bytes = b""
    init_raised: int | None = None


@dataclass(frozen=True)
class Crashed:
    """An expander in another process raised: its traceback; `error`, the name of the
    exception's class when the engine has its own words for it (MemoryError, an mc error such
    as NondeterminismError, raised again by the engine with `message`); else it is mc's fault."""

    traceback: str
    error: str = ""
    message: str = ""


Request = Expand | Initial | Admit | StartLevel | Forget | Initials | Known
Reply = Expanded | Crashed
_KINDS: tuple[type, ...] = (
    Expand, Admit, StartLevel, Forget, Expanded, Crashed, Initial, Initials, Known
)  # fmt: skip
_FIELDS = {kind: [f.name for f in dataclasses.fields(kind)] for kind in _KINDS}


# The field of a message that holds encoded states: it travels as the frame's payload, after
# the msgpack header, so that it is copied neither into msgpack's buffer nor out of it.
_PAYLOAD = {kind: _FIELDS[kind].index("blob") for kind in (Expand, Expanded)}


def pack(message: Request | Reply) -> tuple[bytes, list[bytes]]:
    """A message as a msgpack header (its kind, then its fields in order) and a payload: its
    encoded states, as the buffers to send one after the other."""
    kind = type(message)
    values = [getattr(message, name) for name in _FIELDS[kind]]
    payload: list[bytes] = []
    where = _PAYLOAD.get(kind)
    if where is not None and values[where] is not None:
        blob = values[where]
        payload = blob.pieces if isinstance(blob, Pieces) else [blob]
        values[where] = True  # (in the payload)
    return msgpack.packb([_KINDS.index(kind), *values], use_bin_type=True), payload


def unpack(header: bytes, payload: bytes | bytearray = b"") -> Request | Reply:
    kind, *values = msgpack.unpackb(header, raw=False)
    where = _PAYLOAD.get(_KINDS[kind])
    if where is not None and values[where] is True:
        values[where] = payload
    return _KINDS[kind](*values)  # type: ignore[no-any-return]


# -- the expander ----------------------------------------------------------------------------


def _initial_part(model: Model, request: Initial) -> tuple[list[Record], bytes, int | None]:
    """An initial part's states; for the spec's `every` (Model.every), also their numbers in
    its product and the first candidate whose `where` raised, if one did (then no state: the
    engine reports it, and none is admitted)."""
    stop = request.start + request.count
    if not request.candidates:
        return model.initial_part(request.start, stop), b"", None
    every = model.every()
    assert every is not None
    states, numbers, failed, raised_here = every.part(request.start, stop)
    if isinstance(raised_here, OUTSIDE):  # (mc's own interruption, not the spec's)
        raise raised_here
    return ([] if failed is not None else states), numbers, failed


class Expander:
    """Does the work. Keeps, per level, the live states the engine gave it to keep (in the
    order it kept them), the states it met at the current level, and the candidates of the
    batches the engine has not yet decided about.

    When the search records its behaviour (checker.behaviour), the states it met are a dict
    (state -> fingerprint), and its replies have what a recording needs (see Expanded)."""

    def __init__(
        self, model: Model, recording: Recording | None = None, incremental: bool = True
    ) -> None:
        self.model = model
        self.recording = recording
        self.levels: dict[int, list[Record]] = {}  # level -> its live states kept here
        # ... and their read sets (docs/architecture.md), with the C hot path only: without
        # it the reads of spec code are not noted.
        self.incremental = incremental and fast.C
        self.read_sets: dict[int, list[ReadSet | None]] = {}
        self.seen: set[Record] | dict[Record, int] = {} if recording else set()
        self.fps: dict[int, list[int]] = {}  # level -> its kept states' fingerprints (recording)
        # chunk -> (level, candidates, their fingerprints, their read sets or None)
        self.pending: dict[int, tuple[int, list[Record], array[int], list[ReadSet] | None]] = {}
        # Whether `seen` holds, besides the level's states and those received encoded
        # (`received`, as met), only candidates the engine decided about and this expander
        # kept if admitted: then the next level's are those minus the level's (start_level).
        self.tidy = False
        self.received: list[Any] = []
        # The reachability properties (indexes) not reached when the level started: checked
        # on the level's candidates.
        self.wanted: list[int] = list(range(len(model.reachables)))
        self.initials = False  # whether it was sent initial states (Initial)
        # Fingerprints of the states admitted at this level from other expanders' parts
        # (Known), and how many candidates were dropped for being among them.
        self.known: set[int] = set()
        self.dropped = 0

    def handle(self, request: Request) -> Expanded | None:
        """Answer an Expand; the other requests have no answer."""
        if isinstance(request, Expand):
            return self.expand(request)
        if isinstance(request, Initial):
            return self.initial(request)
        if isinstance(request, Admit):
            self.admit(request)
        elif isinstance(request, StartLevel):
            self.start_level(request)
        elif isinstance(request, Forget):
            self.forget()
        elif isinstance(request, Initials):
            self.model.learn_initial(request.numbers)
        elif isinstance(request, Known):
            self.note_known(request)
        else:
            raise TypeError(f"unknown request {request!r}")
        return None

    def release(self) -> None:
        """Drop every state held here (after running out of memory: room to say so)."""
        self.levels.clear()
        self.fps.clear()
        self.read_sets.clear()
        self.pending.clear()
        self.forget()

    def note_known(self, request: Known) -> None:
        """Remember fingerprints the engine admitted (from another thread of a worker
        process too: one C call, atomic under the GIL)."""
        self.known.update(np.frombuffer(request.fps, np.uint64).tolist())

    def forget(self) -> None:
        self.seen = {} if self.recording else set()
        self.tidy = False
        self.received = []

    def start_level(self, request: StartLevel) -> None:
        """Earlier levels and undecided candidates (of a depth-bound probe) are dropped; the
        states met are those kept for this level, or (`forget` False) all those met so far.
        When all this expander found at the level was decided and, if admitted, kept here
        (`tidy`), its set of met states already holds the next level's: the level expanded
        and the states received encoded are removed from it, else it is built again."""
        level = request.level
        self.wanted = request.wanted
        self.known = set()  # (the earlier level's: no successor is among them but back edges)
        tidy = self.tidy and not self.pending and request.forget and not self.recording
        if tidy:  # removing the level expanded costs less than adding the next one's
            seen: set[Any] = self.seen  # type: ignore[assignment]
            seen.difference_update(self.model.met(self.levels.get(level - 1, ())))
            seen.difference_update(self.received)
        self.received = []
        for old in [n for n in self.levels if n < level]:
            del self.levels[old]
            self.fps.pop(old, None)
            self.read_sets.pop(old, None)
        self.pending.clear()
        if request.forget and self.recording:
            self.seen = dict(zip(self.levels.get(level, ()), self.fps.get(level, ())))
        elif request.forget and not tidy:
            self.seen = set(self.model.met(self.levels.get(level, ())))
        self.tidy = request.forget and not self.recording
        if level == 1 and self.initials:
            # Every initial state is a state of the search now (the engine admitted them all
            # before level 1 starts), and every process has them: the successors equal to
            # one are dropped at once, whichever expander holds it.
            everything = list(self.model.met(self.model.initial_part()))
            self.seen.update(everything)  # type: ignore[arg-type]
            if self.tidy:
                self.received += everything

    def admit(self, request: Admit) -> None:
        level, candidates, fps, read_sets = self.pending.pop(request.chunk)
        self.tidy = self.tidy and (request.keep or not request.indices)
        if request.keep:
            indices = np.frombuffer(request.indices, np.uint32).tolist()
            self.levels.setdefault(level + 1, []).extend([candidates[i] for i in indices])
            if self.recording:
                self.fps.setdefault(level + 1, []).extend([fps[i] for i in indices])
            if self.incremental:  # aligned with the level's states (None: no read set)
                self.read_sets.setdefault(level + 1, []).extend(
                    [None] * len(indices) if read_sets is None else [read_sets[i] for i in indices]
                )

    def initial(self, request: Initial) -> Expanded:
        """The initial states of the request (see Initial), encoded and fingerprinted at once;
        those this expander had not met are the candidates, checked as a batch's are. If spec
        code raises on one while it is encoded or fingerprinted (`Model.initial_encoded`),
        `error` is its index in the part, and the states after it are not considered."""
        model = self.model
        self.initials = True
        states, numbers, failed = _initial_part(model, request)
        encodings, fps, error = model.initial_encoded(states)
        if error is not None:
            states = states[:error]
        considered = len(states)
        seen = self.seen
        positions: list[int] = []
        for k, met in enumerate(model.met(states)):  # (an initial state may be listed twice)
            if met not in seen:
                seen.add(met)  # type: ignore[union-attr]
                positions.append(k)
        if len(positions) < considered:
            states = [states[k] for k in positions]
            encodings = [encodings[k] for k in positions]
            fps = fps[positions]
        broken: list[list[Any]] = []
        raised: list[int] = []
        reached: list[list[int]] = []
        if states:  # (every invariant evaluated: no parent's read set to start from)
            no_parent = [ReadSet(b"", 0, None)] * len(states)
            broken, raised, reached = self._verdicts(states, no_parent)
        self.pending[request.chunk] = (0, states, fps, None)  # type: ignore[assignment]
        sizes = np.fromiter(map(len, encodings), np.uint64, len(encodings))
        return Expanded(
            actions=b"",
            counts=np.array([considered], np.uint32).tobytes(),
            stuck=b"\0",
            positions=np.array(positions, np.uint32).tobytes(),
            fps=fps.tobytes(),
            blob=Pieces(encodings if request.encodings else []),
            raised_encodings=[] if request.encodings else [encodings[k] for k in raised],
            offsets=np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)]).tobytes(),
            broken=broken,
            raised=raised,
            reached=reached,
            error=error,
            numbers=numbers,
            init_raised=failed,
        )

    def expand(self, request: Expand) -> Expanded:
        """The successors of the batch's states (see Expanded)."""
        model = self.model
        recording = self.recording
        read_sets: list[ReadSet | None] | None = None
        met: list[Any] | None = None  # what the seen set holds of `states`, if computed
        if request.blob is not None:
            states = decode_all(request.blob, request.offsets)
            if recording:
                fingerprint_of = model.fingerprint_of
                self.seen.update((s, fingerprint_of(s)) for s in states)  # type: ignore[union-attr]
            else:
                met = list(model.met(states))
                self.seen.update(met)  # type: ignore[union-attr]
                if self.tidy:
                    self.received += met
            if self.incremental:  # states that come encoded come without their read sets
                read_sets = [None] * len(states)
        else:
            first = request.start
            states = self.levels[request.level][first : first + request.count]
            if self.incremental:
                kept = self.read_sets.get(request.level)
                read_sets = kept[first : first + request.count] if kept else [None] * len(states)
        incremental = read_sets is not None and request.checks
        seen = self.seen
        if request.behind:  # what it met in later batches does not count: see the docstring
            if isinstance(seen, dict):
                seen = {s: model.fingerprint_of(s) for s in states}
            else:
                seen = set(model.met(states) if met is None else met)
        batch = model.expand_batch(
            states,
            seen,
            indexes=request.bindings and not recording,
            keyed=None if recording is None else recording.keyed,
            read_sets=read_sets if incremental else None,
        )
        if seen is not self.seen:  # (later batches come later in the level)
            self.seen.update(seen)  # type: ignore[arg-type]
        if self.known and recording is None:
            self.dropped += _drop_known(batch, self.known)
        candidates = batch.candidates
        broken: list[list[Any]] = []
        raised: list[int] = []
        reached: list[list[int]] = []
        if request.checks:
            broken, raised, reached = self._verdicts(candidates, batch.read_sets)
        self.pending[request.chunk] = (request.level, candidates, batch.fps, batch.read_sets)
        sizes = np.fromiter(map(len, batch.encodings), np.uint64, len(batch.encodings))
        values = None
        if recording is not None:
            row = bytearray()
            for state in candidates:
                for _, predicate in recording.predicates:
                    row.append(predicate_value(predicate, state))
            values = bytes(row)
        return Expanded(
            actions=_uint16(batch.actions),
            counts=batch.counts.tobytes(),
            stuck=bytes(batch.stuck),
            positions=array("I", batch.positions).tobytes(),
            fps=batch.fps.tobytes(),
            blob=Pieces(batch.encodings if request.encodings else []),
            raised_encodings=[] if request.encodings else [batch.encodings[k] for k in raised],
            offsets=np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)]).tobytes(),
            broken=broken,
            raised=raised,
            reached=reached,
            error=batch.error,
            bindings=None if batch.indexes is None else batch.indexes.tobytes(),
            targets=None if batch.targets is None else batch.targets.tobytes(),
            values=values,
            keys=None if batch.keys is None else batch.keys.tobytes(),
            stops=_stops(states, batch.error, batch.stuck.find(1)),
        )

    def _verdicts(
        self, candidates: list[Record], read_sets: list[ReadSet] | None = None
    ) -> tuple[list[list[Any]], list[int], list[list[int]]]:
        """[candidate, invariant] for each candidate that violates one; the candidates on
        which an invariant or a reachability property raised (the engine raises it again if
        that candidate is new); and [candidate, property] for the first candidate that
        satisfies each wanted reachability property (the first new one is the first
        candidate: a candidate met before was checked when it was new). With `read_sets`
        (incremental evaluation), the invariants that cannot have changed are not evaluated,
        and each read set gets the candidate's own invariant masks."""
        broken: list[list[Any]] = []
        raised: list[int] = []
        reached: list[list[int]] = []
        model = self.model
        wanted = self.wanted
        if read_sets is not None and not wanted:  # all at once (the common case)
            try:
                failing, made = model.verdicts(candidates, read_sets)
            except Interrupted:
                raise
            except KeyboardInterrupt:  # the spec's own: one by one below, which says where
                pass
            else:
                read_sets[:] = made
                for k, first in failing:
                    try:
                        broken.append([k, model.violated_at(candidates[k], first).name])
                    except EvaluationError:
                        raised.append(k)
                return broken, raised, reached
        violated = model.violated
        incrementally = model.violated_incrementally
        size = 8 * len(model.invariants)
        hit: set[int] = set()
        new = tuple.__new__  # (a NamedTuple's own __new__ and _replace are Python code)
        for k, state in enumerate(candidates):
            try:
                if read_sets is None:
                    invariant = violated(state)
                else:
                    masks = bytearray(size)
                    read_set = read_sets[k]
                    invariant = incrementally(state, read_set, masks)
                    read_sets[k] = new(ReadSet, (read_set.guards, read_set.changed, bytes(masks)))
                got = model.reached(state, wanted) if wanted else ()
            except EvaluationError:
                raised.append(k)
                continue
            if invariant is not None:
                broken.append([k, invariant.name])
            for i in got:
                if i not in hit:
                    hit.add(i)
                    reached.append([k, i])
        return broken, raised, reached


def _drop_known(batch: Batch, known: set[int]) -> int:
    """Drop the batch's candidates that the engine admitted already from another expander's
    part (Known); how many. They are not new, whatever this batch's place in the level (the
    engine admitted that part before this one's turn: parts are admitted in order), so
    nothing the engine decides changes; only the work on them is saved (their invariants,
    sending them). With two workers, many successors are reached from states of both
    (interleavings): each expander met only its own."""
    fps = batch.fps.tolist()
    keep = [k for k, fp in enumerate(fps) if fp not in known]
    if len(keep) == len(fps):
        return 0
    batch.candidates = [batch.candidates[k] for k in keep]
    batch.positions = [batch.positions[k] for k in keep]
    batch.encodings = [batch.encodings[k] for k in keep]
    batch.fps = array("Q", [fps[k] for k in keep])
    if batch.read_sets is not None:
        batch.read_sets = [batch.read_sets[k] for k in keep]
    if batch.indexes is not None:
        batch.indexes = array("I", [batch.indexes[k] for k in keep])
    return len(fps) - len(keep)


def _stops(states: list[Record], error: int | None, stuck: int) -> list[list[Any]]:
    """[state, encoding] for the state whose expansion raised and the first deadlocked one."""
    at = {i for i in (error, stuck) if i is not None and i >= 0}
    return [[i, encode_state(states[i])] for i in sorted(at)]


def _uint16(values: list[int]) -> bytes:
    """`values` (each below 65,536) as uint16s: through `bytes` when each fits in a byte (a
    spec's action numbers, nearly always), about 4x faster than array's parse of each item."""
    try:
        return np.frombuffer(bytes(values), np.uint8).astype(np.uint16).tobytes()
    except ValueError:
        return array("H", values).tobytes()


# -- the engine's side -----------------------------------------------------------------------


class Expansion:
    """An expander's reply for one batch, as the engine reads it: cut at the first state where
    a one-state-at-a-time search would stop (a deadlock when `deadlock` is on, or an action that
    raised)."""

    def __init__(self, reply: Expanded, deadlock: bool) -> None:
        self.actions = np.frombuffer(reply.actions, dtype=np.uint16)
        counts = np.frombuffer(reply.counts, dtype=np.uint32).astype(np.int64)
        self.stop: int | None = reply.error
        self.deadlocked = False
        self.stuck = np.frombuffer(reply.stuck, dtype=np.uint8)  # per state expanded
        if deadlock:
            empty = np.flatnonzero(self.stuck)
            if len(empty) and (self.stop is None or empty[0] < self.stop):
                self.stop, self.deadlocked = int(empty[0]), True
        self.ends = np.cumsum(counts)
        self.starts = self.ends - counts
        parents = len(counts) if self.stop is None else self.stop
        self.limit = int(self.ends[parents - 1]) if parents else 0  # successors to consider
        self.parent_of = np.repeat(np.arange(len(counts)), counts)
        # The candidates: successors the expander had not met, in order.
        self.positions = np.frombuffer(reply.positions, dtype=np.uint32).astype(np.int64)
        self.fps = np.frombuffer(reply.fps, dtype=np.uint64)
        self.candidates = int(np.searchsorted(self.positions, self.limit))
        self.blob = reply.blob  # Pieces from this process, else the bytes received
        self._offsets = np.frombuffer(reply.offsets, dtype=np.uint64)
        self.stops: dict[int, bytes] = {i: data for i, data in reply.stops}
        self._raised = dict(zip(reply.raised, reply.raised_encodings, strict=False))
        self.broken: dict[int, str] = {k: name for k, name in reply.broken}
        self.raised = np.zeros(len(self.positions), dtype=bool)
        self.raised[reply.raised] = True
        self.flagged = self.raised.copy()
        self.flagged[list(self.broken)] = True
        self.reached: list[list[int]] = reply.reached  # [candidate, reachable property]
        # The candidates' binding indexes, if asked for.
        self.bindings = None if reply.bindings is None else np.frombuffer(reply.bindings, np.uint32)
        # What a recorded search also gets (checker.behaviour), cut as the rest.
        if reply.targets is not None:
            self.counts = counts[:parents]
            self.targets = np.frombuffer(reply.targets, dtype=np.uint64)[: self.limit]
            keys = reply.keys
            self.keys = None if keys is None else np.frombuffer(keys, np.uint64)[: self.limit]
            values = np.frombuffer(reply.values or b"", dtype=np.uint8)
            rows = len(self.positions)
            self.values = values.reshape(rows, len(values) // rows if rows else 0)

    @property
    def encoded_bytes(self) -> int:
        """The size of the candidates' encodings (sent or not)."""
        return int(self._offsets[-1]) if len(self._offsets) else 0

    def encoded_size(self, kept: np.ndarray) -> int:
        """The size of the encodings of the candidates `kept` (sent or not)."""
        return int((self._offsets[kept + 1] - self._offsets[kept]).sum())

    def encoding(self, candidate: int) -> bytes:
        """A candidate's encoding: any of them when they were sent, else one that raised."""
        if candidate in self._raised:
            return self._raised[candidate]
        if isinstance(self.blob, Pieces):
            return self.blob.pieces[candidate]
        offsets = self._offsets
        return bytes(memoryview(self.blob)[int(offsets[candidate]) : int(offsets[candidate + 1])])

    def encodings(self, kept: np.ndarray) -> tuple[bytes, np.ndarray]:
        """The encodings of the candidates `kept` (ascending), back to back, with offsets."""
        blob, offsets = self.blob, self._offsets
        if not len(kept):
            return b"", np.zeros(1, np.uint64)
        if int(kept[-1]) == len(kept) - 1:  # the first ones (most often all)
            end = len(kept)
            if isinstance(blob, Pieces):
                return b"".join(blob.pieces[:end]), offsets[: end + 1].copy()
            return bytes(memoryview(blob)[: int(offsets[end])]), offsets[: end + 1].copy()
        sizes = offsets[kept + 1] - offsets[kept]
        joined = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)])
        if isinstance(blob, Pieces):
            return b"".join([blob.pieces[k] for k in kept.tolist()]), joined
        # Received bytes: one slice per run of consecutive candidates kept.
        breaks = np.flatnonzero(np.diff(kept) != 1) + 1
        starts = offsets[kept[np.concatenate([[0], breaks])]].tolist()
        ends = offsets[kept[np.concatenate([breaks - 1, [len(kept) - 1]])] + 1].tolist()
        view = memoryview(blob)
        return b"".join([view[a:b] for a, b in zip(starts, ends, strict=True)]), joined
