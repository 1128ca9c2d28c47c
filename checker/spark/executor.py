"""What runs in the executors: the mapInArrow functions of a level (checker.spark.rows has the
table they read and write).

- `expand_part`, in a partition of the level's states (a range of their ranks): the states in
  the level's order, expanded by one expander for the whole task (checker.search.expansion,
  the local engine's: the C successors loop where it loads; a successor equal to a state met
  before in the task is dropped before it is encoded), the candidates encoded once and checked
  against the invariants and the wanted reachability properties where they are made. Out: a
  STATE row per candidate (its order code, encoding and link), and a SUMMARY of the task (the
  successors generated per action, its first event, its first bad candidate, its first
  candidate satisfying each wanted property).
- `admit_part`, in a fingerprint partition: per fingerprint the candidate of smallest code (the
  parent the local engine records), those not visited before (the partition's visited
  fingerprints arrive with the candidates, one sorted array), sent to the partition of the next
  level's ranks that they belong to. Out: the new states, the partition's visited fingerprints
  and a SUMMARY (new states per action and per partition of the next level, their
  fingerprints if the driver keeps them), the expansions' SUMMARY rows passed on.

No Python object per row: whole columns as numpy arrays and binary buffers
(checker.spark.arrow)."""

from __future__ import annotations

import functools
import gc
import hashlib
import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgpack
import numpy as np

from checker.errors import EngineError
from checker.model import Model
from checker.search.expansion import LIVE_FACTOR, Expand, Expander, Expansion, Forget, StartLevel
from checker.spark.arrow import binary_array, blob_of, ints, level_batch, level_schema, table_of
from checker.spark.rows import (
    INDEX_BITS,
    LEVEL_SCHEMA,
    MAX_SUCCESSORS,
    STATE,
    SUMMARY,
    VISITED,
    home_keys,
)
from checker.values.encoding import forget_encodings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, Observation


# -- the model, once per Python worker ------------------------------------------------------------

_MODELS: dict[str, Model] = {}  # digest -> the model, in this Python worker


@dataclass(frozen=True)
class Shipped:
    """A model as the tasks carry it: pickled once by the driver (PySpark pickles each job's
    functions, and a spec's classes go by value), unpickled once per Python worker."""

    digest: str
    data: bytes

    @classmethod
    def of(cls, model: Model) -> Shipped:
        from pyspark import cloudpickle

        data = cloudpickle.dumps(model)
        return cls(hashlib.sha256(data).hexdigest(), data)

    def model(self) -> Model:
        model = _MODELS.get(self.digest)
        if model is None:
            if len(_MODELS) >= 4:  # a worker serves search after search
                _MODELS.clear()
            model = _MODELS[self.digest] = pickle.loads(self.data)
            _freeze()
        return model


def _freeze() -> None:
    """Keep what a Python worker holds from task to task (its imports: pyspark, pandas,
    pyarrow, numpy, mc; and its models) out of the garbage collector's way. PySpark's daemon
    runs a full collection after every task, which traversed all of it each time, and the
    encodings the hot path had cached: most of a worker's CPU on a search of small levels
    (80 % on a 945-state spec, measured)."""
    gc.unfreeze()  # the models dropped since the last time may be collected now
    gc.collect()
    gc.freeze()


def _partition() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def _summary(**fields: Any) -> pa.RecordBatch:
    return level_batch(1, kind=[SUMMARY], fp=[0], state=[msgpack.packb(fields)])


def read_summary(data: bytes) -> dict[str, Any]:
    """A SUMMARY row's content, as the driver reads it."""
    return msgpack.unpackb(bytes(data), strict_map_key=False)  # type: ignore[no-any-return]


def _passed_on(table: pa.Table) -> Iterator[pa.RecordBatch]:
    """Rows passed on unchanged, in the level's Arrow types."""
    if table.num_rows:
        yield from table.cast(level_schema()).combine_chunks().to_batches()


# -- a partition of the level's states, expanded --------------------------------------------------


@dataclass(frozen=True)
class ExpandJob:
    """What a level's expansion tasks share. `prefix[j]`: the rank of the first state of
    partition j (its states have ranks prefix[j], prefix[j] + 1, ... in code order)."""

    shipped: Shipped
    prefix: tuple[int, ...]
    deadlock: bool  # a state with no successor is an event
    checks: bool  # evaluate the invariants and `wanted` on the candidates
    wanted: tuple[int, ...]  # the reachability properties not reached yet (indexes)
    live_bytes: int  # the expander's memory for the states it met, as encoded bytes


_CHUNK_STATES = 4096  # states per request to the expander
_CHUNK_BYTES = 8 << 20  # and at most this many encoded bytes


@dataclass
class _Ranked:
    """A task's states in the level's order: their ranks, fingerprints and encodings."""

    ranks: np.ndarray
    fps: np.ndarray
    blob: bytes
    offsets: np.ndarray  # uint64, from 0


def _ranked(job: ExpandJob, table: pa.Table, kind: np.ndarray) -> _Ranked:
    part = _partition()
    rows = np.flatnonzero(kind == STATE)
    homes = len(job.prefix) - 1
    if len(rows) and (part >= homes or np.any(ints(table, "home")[rows] != home_keys(homes)[part])):
        raise EngineError(
            f"Spark sent states to partition {part} of {homes} that belong elsewhere: mc's"
            " Spark engine needs spark.sql.adaptive.enabled=false during a search"
        )
    order = rows[np.argsort(ints(table, "code")[rows], kind="stable")]
    blob, offsets = blob_of(table.column("state").take(order))
    ranks = job.prefix[part] + np.arange(len(order), dtype=np.int64)
    return _Ranked(ranks, ints(table, "fp")[order], blob, offsets)


def _expansions(job: ExpandJob, states: _Ranked) -> Iterator[tuple[int, Expansion, Any]]:
    """The expansion of the task's states, in order, by one expander, in chunks: (the index of
    the chunk's first state, the expansion, the reply). A state whose expansion raised ends a
    chunk (its `stop`), and the next starts after it."""
    expander = Expander(job.shipped.model())
    expander.start_level(StartLevel(0, True, list(job.wanted)))
    offsets = states.offsets
    met, first, n = 0, 0, len(states.ranks)
    while first < n:
        last = min(n, first + _CHUNK_STATES)
        limit = offsets[first] + np.uint64(_CHUNK_BYTES)
        last = max(first + 1, min(last, int(np.searchsorted(offsets, limit, "right")) - 1))
        if LIVE_FACTOR * met > job.live_bytes:  # the states met take too much memory
            expander.handle(Forget())
            met = 0
        start, end = int(offsets[first]), int(offsets[last])
        request = Expand(
            0,
            0,
            blob=states.blob[start:end],
            offsets=(offsets[first : last + 1] - offsets[first]).tobytes(),
            bindings=True,
            checks=job.checks,
        )
        reply = expander.expand(request)
        met += end - start + len(reply.blob)
        exp = Expansion(reply, deadlock=False)
        yield first, exp, reply
        first = last if exp.stop is None else first + exp.stop + 1
    # What stays after the task, out of the collector's way (see _freeze): the spec's own
    # caches, but not the hot path's encodings of these states (the next task decodes its
    # states afresh: none of them would be used again).
    del expander
    forget_encodings()
    gc.freeze()


def expand_part(job: ExpandJob, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow over a partition of the level's table: see the module's docstring. The
    VISITED rows are passed on (to their fingerprint partition)."""
    table = table_of(batches)
    kind = ints(table, "kind", np.int32)
    yield from _passed_on(table.filter(kind == VISITED))
    states = _ranked(job, table, kind)
    del table
    actions = len(job.shipped.model().actions)
    generated = np.zeros(actions, np.int64)
    event: list[int] | None = None  # [code, fp] of the first parent that raised or deadlocked
    bad: list[int] | None = None  # [code, fp] of the first candidate breaking an invariant
    reached: dict[int, list[int]] = {}  # property -> [code, fp] of its first candidate
    for first, exp, reply in _expansions(job, states):
        generated += np.bincount(exp.actions, minlength=actions)
        parents = [first + exp.stop] if exp.stop is not None else []
        if job.deadlock:
            parents += (first + np.flatnonzero(exp.stuck)).tolist()[:1]
        for i in parents:
            here = [int(states.ranks[i]) << INDEX_BITS, int(states.fps[i])]
            event = here if event is None or here < event else event
        k = exp.candidates
        if not k:
            continue
        positions = exp.positions[:k]
        parent = exp.parent_of[positions]
        index = positions - exp.starts[parent]
        if int(index.max()) >= MAX_SUCCESSORS:
            raise EngineError(f"a state has over {MAX_SUCCESSORS:,} successors")
        codes = (states.ranks[first + parent] << INDEX_BITS) | (index + 1)
        fps = exp.fps[:k].view(np.int64)
        flagged = sorted({c for c, _ in reply.broken if c < k} | {c for c in reply.raised if c < k})
        if flagged:
            here = [int(codes[flagged[0]]), int(fps[flagged[0]])]
            bad = here if bad is None or here < bad else bad
        for c, i in reply.reached:
            if c < k and (i not in reached or int(codes[c]) < reached[i][0]):
                reached[i] = [int(codes[c]), int(fps[c])]
        offsets = np.frombuffer(reply.offsets, np.uint64)[: k + 1]
        assert exp.bindings is not None
        yield level_batch(
            k,
            kind=np.full(k, STATE, np.int32),
            fp=fps,
            code=codes,
            state=binary_array(reply.blob.joined(), offsets),
            parent=states.fps[first + parent],
            action=exp.actions[positions].astype(np.int32),
            binding=exp.bindings[:k].astype(np.int32),
        )
    yield _summary(
        stage="expand",
        part=_partition(),
        generated=generated.tolist(),
        event=event,
        bad=bad,
        reached=[[i, *where] for i, where in sorted(reached.items())],
    )


def count_part(
    job: ExpandJob, below: int, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow over a partition of the level's states: the successors per action of those
    of rank below `below` (checker.spark.stopping recounts a level cut short)."""
    import pyarrow as pa

    table = table_of(batches)
    states = _ranked(job, table, ints(table, "kind", np.int32))
    keep = int(np.searchsorted(states.ranks, below))
    states = _Ranked(
        states.ranks[:keep], states.fps[:keep], states.blob, states.offsets[: keep + 1]
    )
    actions = len(job.shipped.model().actions)
    fired = np.zeros(actions, np.int64)
    for _, exp, _ in _expansions(job, states):
        fired += np.bincount(exp.actions, minlength=actions)
    yield pa.RecordBatch.from_pydict(
        {"fired": [fired.tolist()]}, schema=pa.schema([("fired", pa.list_(pa.int64()))])
    )


# -- a fingerprint partition of the level's candidates, admitted -----------------------------------


@dataclass(frozen=True)
class AdmitJob:
    """What a level's admission tasks share."""

    size: int  # the states expanded (the parents' ranks are below this)
    homes: int  # the partitions of the next level's states (ranges of their parents' ranks)
    actions: int
    send_fps: bool  # the new states' fingerprints go to the driver


def _visited(table: pa.Table, kind: np.ndarray, part: int) -> np.ndarray:
    """The partition's visited fingerprints, sorted: the arrays of VISITED rows (the previous
    level's, tagged with their partition) and the single fingerprints the driver sent."""
    rows = np.flatnonzero(kind == VISITED)
    if not len(rows):
        return np.zeros(0, np.int64)
    visited = table.take(rows)
    arrays = visited.column("state").is_valid().to_numpy(zero_copy_only=False)
    tags = ints(visited, "action")[arrays]
    if np.any(tags != part):
        raise EngineError(
            f"partition {part} received the visited fingerprints of partition {tags[0]}: the"
            " number of partitions changed during the search"
        )
    blob, _ = blob_of(visited.column("state").filter(arrays))
    singles = ints(visited, "fp")[~arrays]
    return np.sort(np.concatenate([np.frombuffer(blob, np.int64), singles]))


def admit_part(job: AdmitJob, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow over a fingerprint partition of the level's candidates: see the module's
    docstring."""
    part = _partition()
    table = table_of(batches)
    kind = ints(table, "kind", np.int32)
    yield from _passed_on(table.filter(kind == SUMMARY))
    visited = _visited(table, kind, part)
    candidates = table.filter(kind == STATE)
    del table
    fps = ints(candidates, "fp")
    codes = ints(candidates, "code")
    order = np.lexsort((codes, fps))  # by fingerprint, then code
    first = np.ones(len(order), bool)
    first[1:] = fps[order][1:] != fps[order][:-1]
    won = order[first]  # per fingerprint, its candidate of smallest code
    if len(visited) and len(won):
        at = np.minimum(np.searchsorted(visited, fps[won]), len(visited) - 1)
        won = won[visited[at] != fps[won]]
    won = won[np.argsort(codes[won])]
    new = candidates.take(won)
    homes = (codes[won] >> INDEX_BITS) * job.homes // max(job.size, 1)
    keys = np.array(home_keys(job.homes), np.int64)
    if len(won):
        yield level_batch(
            len(won),
            kind=np.full(len(won), STATE, np.int32),
            fp=new.column("fp").combine_chunks(),
            code=new.column("code").combine_chunks(),
            state=new.column("state").combine_chunks(),
            parent=new.column("parent").combine_chunks(),
            action=new.column("action").combine_chunks(),
            binding=new.column("binding").combine_chunks(),
            home=keys[homes],
        )
    everything = np.sort(np.concatenate([visited, fps[won]]))
    if len(everything):
        yield level_batch(
            1,
            kind=[VISITED],
            fp=everything[:1],
            state=[everything.tobytes()],
            action=[part],
            home=keys[part % job.homes : part % job.homes + 1],
        )
    actions = ints(new, "action") if len(won) else np.zeros(0, np.int64)
    yield _summary(
        stage="admit",
        part=part,
        new=np.bincount(actions, minlength=job.actions).tolist(),
        homes=np.bincount(homes, minlength=job.homes).tolist(),
        fps=fps[won].tobytes() if job.send_fps else None,
    )


# -- the two functions as one job ------------------------------------------------------------------


def level_plan(
    source: DataFrame, homes: int, partitions: int, expand: ExpandJob, admit: AdmitJob
) -> tuple[DataFrame, Observation]:
    """A level's job as a plan: `source`'s states (and visited fingerprints) to their `homes`
    ranges of ranks, expanded there, the candidates to their fingerprint partitions and
    admitted; the tasks' summaries observed. The plan runs when its table is computed (cut).

    Built with few calls to the JVM (each a py4j round trip, and the driver plans every
    level at 0.4 CPU in the simulated cluster): the schema is a Python StructType (a DDL
    string is parsed in the JVM at each use), the summaries' aggregate one SQL expression,
    and the previous level's SUMMARY rows are not filtered out (expand_part ignores them)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    schema = level_struct()
    states = source.repartition(homes, "home")
    candidates = states.mapInArrow(functools.partial(expand_part, expand), schema)
    admitted = candidates.repartition(partitions, "fp").mapInArrow(
        functools.partial(admit_part, admit), schema
    )
    observation = Observation()
    summaries = F.expr(f"collect_list(CASE WHEN kind = {SUMMARY} THEN state END)")
    return admitted.observe(observation, summaries.alias("summaries")), observation


@functools.cache
def level_struct() -> Any:
    """LEVEL_SCHEMA as a pyspark StructType, made in Python."""
    from pyspark.sql import types as T

    kinds = {"int": T.IntegerType(), "long": T.LongType(), "binary": T.BinaryType()}
    fields = [column.split() for column in LEVEL_SCHEMA.split(",")]
    return T.StructType([T.StructField(name, kinds[kind]) for name, kind in fields])


def task_summaries(observation: Observation) -> dict[tuple[str, int], dict[str, Any]]:
    """What each task of a computed level plan reported, by (stage, partition): a task that
    Spark ran again reports once."""
    parts = {}
    for data in observation.get["summaries"]:
        part = read_summary(data)
        parts[(part["stage"], part["part"])] = part
    return parts
