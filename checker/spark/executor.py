"""What runs in the executors: mapInArrow functions around Model.expand (the one expand
function of every engine) and the model's invariants."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from checker.encoding import decode
from checker.errors import EvaluationError
from checker.model import Model
from checker.spark.rows import CANDIDATE_SCHEMA, DEADLOCK, RAISED, SUCCESSOR, component, signed

if TYPE_CHECKING:
    import pyarrow as pa


# -- the executors' side -----------------------------------------------------------------------


def _arrow() -> Any:
    import pyarrow as pa

    return pa


_CHUNK = 65_536  # rows per Arrow batch sent back to the JVM


def expand_batches(
    model: Model, deadlock: bool, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow: (fp, key, state) -> one row per successor, in Model.expand order, keyed by
    parent key + position; plus a RAISED or DEADLOCK row (with the parent's key) for a state
    whose expansion raised or, with `deadlock`, that is deadlocked (no action enabled)."""
    pa = _arrow()
    names = CANDIDATE_SCHEMA.replace(",", "").split()[::2]
    types = [pa.int32(), pa.int64(), pa.binary(), pa.binary(), pa.int64(), pa.int32(), pa.int32()]
    schema = pa.schema(list(zip(names, types)))
    cols: list[list[Any]] = [[] for _ in names]
    kinds, fps, keys, states, parents, actions, bindings = cols

    def flush() -> pa.RecordBatch:
        batch = pa.RecordBatch.from_arrays(
            [pa.array(c, type=t) for c, t in zip(cols, types)], schema=schema
        )
        for c in cols:
            c.clear()
        return batch

    for batch in batches:
        rows = zip(
            batch.column(0).to_pylist(), batch.column(1).to_pylist(), batch.column(2).to_pylist()
        )
        for fp, key, data in rows:
            try:
                successors = model.expand(data)
            except EvaluationError:
                event = RAISED  # the driver re-runs it to report the error itself
            else:
                if successors:
                    for index, succ in enumerate(successors):
                        kinds.append(SUCCESSOR)
                        fps.append(signed(succ.fp))
                        keys.append(key + component(index))
                        states.append(succ.data)
                        parents.append(fp)
                        actions.append(succ.action)
                        bindings.append(succ.binding)
                    if len(kinds) >= _CHUNK:
                        yield flush()
                    continue
                if not (deadlock and successors.deadlocked):
                    continue
                event = DEADLOCK
            for c, value in zip(cols, (event, fp, key, None, None, None, None)):
                c.append(value)
    if kinds:
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
    fired = [0] * n_actions
    for batch in batches:
        for data in batch.column(0).to_pylist():
            for succ in model.expand(data):
                fired[succ.action] += 1
    yield pa.RecordBatch.from_pydict(
        {"fired": [fired]}, schema=pa.schema([("fired", pa.list_(pa.int64()))])
    )
