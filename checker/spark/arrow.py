"""Arrow batches as the executors read and write them: a level's table (checker.spark.rows) in
numpy arrays and binary buffers, without a Python object per row. The states' encodings go
between Arrow's binary columns and the expander's blobs (checker.search.expansion: encodings
back to back, with uint64 offsets) as whole buffers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.spark.rows import LEVEL_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa


def _pa() -> Any:
    import pyarrow

    return pyarrow


def level_schema() -> pa.Schema:
    """checker.spark.rows.LEVEL_SCHEMA in Arrow's types."""
    pa = _pa()
    types = [
        pa.int32(),
        pa.int64(),
        pa.int64(),
        pa.binary(),
        pa.int64(),
        pa.int32(),
        pa.int32(),
        pa.int64(),
    ]
    return pa.schema(list(zip(LEVEL_COLUMNS, types)))


def table_of(batches: Iterable[pa.RecordBatch]) -> pa.Table:
    """A task's batches as one table (empty, with the level's columns, if there are none)."""
    pa = _pa()
    batches = list(batches)
    if not batches:
        return level_schema().empty_table()
    return pa.Table.from_batches(batches)


def ints(table: pa.Table, column: str, dtype: Any = np.int64) -> np.ndarray:
    """A numeric column as numpy (nulls as 0)."""
    import pyarrow.compute as pc

    array = table.column(column)
    if array.null_count:
        array = pc.fill_null(array, 0)
    return np.asarray(array.to_numpy(), dtype=dtype)


def blob_of(column: Any) -> tuple[bytes, np.ndarray]:
    """A binary column's values back to back, and their uint64 offsets (from 0)."""
    pa = _pa()
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    n = len(array)
    if n == 0:
        return b"", np.zeros(1, np.uint64)
    _, offsets_buffer, data = array.buffers()
    wide = pa.types.is_large_binary(array.type)
    offsets = np.frombuffer(offsets_buffer, np.int64 if wide else np.int32)
    offsets = offsets[array.offset : array.offset + n + 1].astype(np.uint64)
    start, end = int(offsets[0]), int(offsets[-1])
    blob = data[start:end].to_pybytes() if data is not None else b""
    return blob, offsets - np.uint64(start)


def binary_array(blob: bytes, offsets: np.ndarray) -> pa.Array:
    """The values of `blob` at uint64 `offsets` (from 0) as an Arrow binary array, without
    copying the blob."""
    pa = _pa()
    n = len(offsets) - 1
    data = pa.py_buffer(blob)
    if int(offsets[-1]) < 1 << 31:
        return pa.Array.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)), data]
        )
    return pa.Array.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(offsets.astype(np.int64)), data]
    ).cast(pa.binary())


def level_batch(rows: int, **columns: Any) -> pa.RecordBatch:
    """A batch of the level's table with `rows` rows: each column given (an Arrow array, a
    numpy array, or a list), the others null."""
    pa = _pa()
    schema = level_schema()
    arrays = []
    for field in schema:
        value = columns.get(field.name)
        if value is None:
            arrays.append(pa.nulls(rows, field.type))
        elif isinstance(value, pa.Array):
            arrays.append(value if value.type == field.type else value.cast(field.type))
        else:
            arrays.append(pa.array(value, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
