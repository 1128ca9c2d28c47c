"""What runs in the executors: mapInArrow functions around the search's expander
(checker.search.expansion, the same as every engine's: the C successors loop, successors equal
to a state met before in the batch dropped before they are encoded) and the model's
invariants."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.errors import EvaluationError
from checker.model import Model
from checker.search.expansion import Expand, Expander, Expansion, StartLevel
from checker.spark.rows import (
    CANDIDATE_SCHEMA,
    DEADLOCK,
    GENERATED,
    RAISED,
    SUCCESSOR,
    component,
    signed,
)
from checker.values.encoding import decode

if TYPE_CHECKING:
    import pyarrow as pa


# -- the executors' side -----------------------------------------------------------------------


def _arrow() -> Any:
    import pyarrow as pa

    return pa


_CHUNK = 65_536  # rows per Arrow batch sent back to the JVM


def expansions(model: Model, data: list[bytes]) -> Iterator[tuple[int, Expansion]]:
    """The expansion of the states encoded in `data`, in order, by one expander, with the
    index of the first state of each: a state whose expansion raised ends one (its `stop`),
    and the next starts after it."""
    expander = Expander(model)
    expander.start_level(StartLevel(0, True, []))
    first = 0
    while first < len(data):
        sizes = np.fromiter(map(len, data[first:]), np.uint64, len(data) - first)
        offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)]).tobytes()
        request = Expand(
            first, 0, blob=b"".join(data[first:]), offsets=offsets, bindings=True, checks=False
        )
        exp = Expansion(expander.expand(request), deadlock=False)
        yield first, exp
        first = len(data) if exp.stop is None else first + exp.stop + 1


def expand_batches(
    model: Model, deadlock: bool, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow: (fp, key, state) -> a row per candidate successor (the first of its kind in
    the Arrow batch), keyed by the parent's key + its position among the parent's successors
    (Model.expand's order); a RAISED or DEADLOCK row (with the parent's key) for a state whose
    expansion raised or, with `deadlock`, that is deadlocked (no action enabled); and a
    GENERATED row per action, its successors counted in `binding`. A batch's states are
    expanded in key order, so a successor dropped as equal to one met before has a larger key
    than it: the smallest key of each fingerprint, the parent every engine records, stays."""
    pa = _arrow()
    names = CANDIDATE_SCHEMA.replace(",", "").split()[::2]
    types = [pa.int32(), pa.int64(), pa.binary(), pa.binary(), pa.int64(), pa.int32(), pa.int32()]
    schema = pa.schema(list(zip(names, types)))
    cols: list[list[Any]] = [[] for _ in names]
    generated = np.zeros(len(model.actions), dtype=np.int64)

    def flush() -> pa.RecordBatch:
        batch = pa.RecordBatch.from_arrays(
            [pa.array(c, type=t) for c, t in zip(cols, types)], schema=schema
        )
        for c in cols:
            c.clear()
        return batch

    def add(*row: Any) -> None:
        for c, value in zip(cols, row):
            c.append(value)

    for batch in batches:
        rows = sorted(
            zip(
                batch.column(1).to_pylist(),  # key
                batch.column(0).to_pylist(),  # fp
                batch.column(2).to_pylist(),  # state
            )
        )
        for first, exp in expansions(model, [row[2] for row in rows]):
            generated += np.bincount(exp.actions, minlength=len(generated))
            starts = exp.starts.tolist()
            bindings = exp.bindings
            assert bindings is not None
            for k in range(exp.candidates):
                position = int(exp.positions[k])
                parent = int(exp.parent_of[position])
                key, fp, _ = rows[first + parent]
                index = position - starts[parent]
                add(
                    SUCCESSOR,
                    signed(int(exp.fps[k])),
                    key + component(index),
                    exp.encoding(k),
                    fp,
                    int(exp.actions[position]),
                    int(bindings[k]),
                )
            if deadlock:
                for j in np.flatnonzero(exp.stuck).tolist():
                    key, fp, _ = rows[first + j]
                    add(DEADLOCK, fp, key, None, None, None, None)
            if exp.stop is not None:
                key, fp, _ = rows[first + exp.stop]
                add(RAISED, fp, key, None, None, None, None)
            if len(cols[0]) >= _CHUNK:
                yield flush()
    for action, count in enumerate(generated.tolist()):
        if count:
            add(GENERATED, None, None, None, None, action, count)
    if cols[0]:
        yield flush()


def check_batches(
    model: Model,
    n_actions: int,
    wanted: list[int],
    send_fps: bool,
    batches: Iterable[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """mapInArrow over new states (key, state, action, fp): one row per partition with their
    count, the count per action, the smallest key of a state that violates an invariant or
    makes one (or a `wanted` reachability property) raise (the driver re-checks that one to
    report it), and for each wanted reachability property the smallest key (and the
    fingerprint) of a state that satisfies it; with `send_fps`, their fingerprints."""
    pa = _arrow()
    count, new, bad = 0, [0] * n_actions, None
    fps: list[int] = []
    first: list[tuple[bytes, int] | None] = [None] * len(wanted)
    for batch in batches:
        rows = zip(
            batch.column(0).to_pylist(),
            batch.column(1).to_pylist(),
            batch.column(2).to_pylist(),
            batch.column(3).to_pylist(),
        )
        for key, data, action, fp in rows:
            count += 1
            new[action] += 1
            if send_fps:
                fps.append(fp)
            if bad is not None and key > bad:
                continue  # a smaller one is reported anyway: the local engine stops there
            try:
                state = decode(data)
                broken = model.violated(state) is not None
                got = model.reached(state, wanted) if wanted and not broken else ()
            except EvaluationError:
                broken, got = True, ()
            if broken:
                bad = key
            for i in got:
                j = wanted.index(i)
                if first[j] is None or key < first[j][0]:  # type: ignore[index]
                    first[j] = (key, fp)
    yield pa.RecordBatch.from_pydict(
        {
            "n": [count],
            "new": [new],
            "bad": [bad],
            "reached_key": [[f[0] if f else None for f in first]],
            "reached_fp": [[f[1] if f else None for f in first]],
            "fps": [fps],
        },
        schema=pa.schema(
            [
                ("n", pa.int64()),
                ("new", pa.list_(pa.int64())),
                ("bad", pa.binary()),
                ("reached_key", pa.list_(pa.binary())),
                ("reached_fp", pa.list_(pa.int64())),
                ("fps", pa.list_(pa.int64())),
            ]
        ),
    )


def count_batches(
    model: Model, n_actions: int, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow over states (state): their successors per action (the fired counts)."""
    pa = _arrow()
    fired = np.zeros(n_actions, dtype=np.int64)
    for batch in batches:
        for _, exp in expansions(model, batch.column(0).to_pylist()):
            fired += np.bincount(exp.actions, minlength=n_actions)
    yield pa.RecordBatch.from_pydict(
        {"fired": [fired.tolist()]}, schema=pa.schema([("fired", pa.list_(pa.int64()))])
    )
