"""Checkpoints (`--checkpoint DIR`): the local engine's kind of file (checker.checkpoint). At
the start of a level, the links of the earlier levels and the level's states (with their keys)
are collected to the driver and written there, so a checkpoint is bounded by the driver's
memory; resuming turns them back into level tables (checker.spark.rows)."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

from checker.checkpoint import Array, Count, Saved
from checker.search.levels import LevelStart
from checker.spark.arrow import level_batch
from checker.spark.driver import FRONTIER_COLUMNS
from checker.spark.rows import (
    LINK_COLUMNS,
    LINK_TYPES,
    STATE,
    InCluster,
    numbers,
    signed,
    unsigned,
)
from checker.spark.signals import from_spark
from checker.values.encoding import decode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class Checkpointing:
    """_Search's part that writes checkpoints and resumes from one (checker.search.levels)."""

    def __init__(self, search: Any) -> None:
        """`search`: the Spark search (checker.spark.search) it saves and restores."""
        self.search = search

    def arrays(self, start: LevelStart, after_interrupt: bool) -> dict[str, Array] | None:
        """The links of the earlier levels and the level's states, collected to the driver
        (None: Spark failed after an interrupt, and no checkpoint is written)."""
        try:
            return self._collect(start)
        except Exception as exc:
            if not after_interrupt or not from_spark(exc):
                raise
            sys.stderr.write(f"mc: warning: no checkpoint written: Spark failed: {exc}\n")
            return None

    def counts(self, start: LevelStart) -> dict[str, Count]:
        s = self.search
        return {"sizes": s.sizes[: start.level]}

    def reference(self, ref: int) -> int:
        return signed(ref)

    def _collect(self, start: LevelStart) -> dict[str, Array]:
        import numpy as np
        import pyarrow as pa
        from pyspark.sql import functions as F

        s = self.search
        arrays: dict[str, Array] = {}
        earlier = list(enumerate(s.levels[: start.level - 1], start=1))
        in_spark = [
            links.filter(F.col("kind") == STATE)
            .select(*LINK_COLUMNS)
            .withColumn("level", F.lit(depth))
            for depth, links in earlier
            if not isinstance(links, list)
        ]
        tables = []  # in order of level: level 1's links (the roots) first
        if in_spark:  # one job for the levels in the cluster
            tables.append(functools.reduce(lambda a, b: a.union(b), in_spark).toArrow())
        for depth, links in earlier:
            if isinstance(links, list):
                columns = {c: [row[i] for row in links] for i, c in enumerate(LINK_COLUMNS)}
                schema = pa.schema(
                    [
                        (c, pa.int64() if t == "int64" else pa.int32())
                        for c, t in zip(LINK_COLUMNS, LINK_TYPES)
                    ]
                    + [("level", pa.int32())]
                )
                columns["level"] = [depth] * len(links)
                tables.append(pa.table(columns, schema=schema))
        if tables:
            table = pa.concat_tables(tables, promote_options="permissive")
            table = table.take(np.argsort(table.column("level").to_numpy(), kind="stable"))
        for column, dtype in zip(LINK_COLUMNS, LINK_TYPES):
            values = numbers(table, column) if tables else np.zeros(0, dtype)
            arrays[f"links.{column}"] = Array.of(values, dtype)
        if isinstance(start.frontier, list):
            rows = start.frontier
        else:  # in the level's order; its keys: the ranks, as bytes that compare like them
            columns = ("fp", "code", "state", "parent", "action", "binding")
            found = start.frontier.states().select(*columns).collect()
            found.sort(key=lambda r: r["code"])
            rows = [
                (r["fp"], i.to_bytes(8, "big"), r["state"], r["parent"], r["action"], r["binding"])
                for i, r in enumerate(found)
            ]
        states = pa.table(
            {c: [row[i] for row in rows] for i, c in enumerate(FRONTIER_COLUMNS)},
            schema=pa.schema(
                [
                    ("fp", pa.int64()),
                    ("key", pa.binary()),
                    ("state", pa.binary()),
                    ("parent", pa.int64()),
                    ("action", pa.int32()),
                    ("binding", pa.int32()),
                ]
            ),
        )
        for column, dtype in zip(LINK_COLUMNS, LINK_TYPES):
            arrays[f"frontier.{column}"] = Array.of(numbers(states, column), dtype)
        for column in ("key", "state"):
            values = states.column(column).to_pylist()
            sizes = np.array([len(v) for v in values], dtype=np.uint64)
            arrays[f"frontier.{column}.sizes"] = Array.of(sizes, "uint64")
            data = np.frombuffer(b"".join(values), dtype=np.uint8)
            arrays[f"frontier.{column}.data"] = Array.of(data, "uint8")
        return arrays

    def restore(self, saved: Saved) -> tuple[InCluster, int]:
        """The search as a checkpoint holds it: the earlier levels' links and the level's
        states back in the cluster (the visited fingerprints with them), and the counts."""
        import numpy as np
        import pyarrow as pa

        s = self.search
        level = saved.number("level", 1)
        sizes = saved.numbers("sizes", level)
        links = [saved.array(f"links.{c}", t) for c, t in zip(LINK_COLUMNS, LINK_TYPES)]
        states = [saved.array(f"frontier.{c}", t) for c, t in zip(LINK_COLUMNS, LINK_TYPES)]
        if len({len(a) for a in links}) != 1 or len(links[0]) != sum(sizes[:-1]):
            raise saved.corrupt("the links do not match the levels' sizes")
        if len({len(a) for a in states}) != 1 or len(states[0]) != sizes[-1]:
            raise saved.corrupt("the level's states do not match its size")
        blobs = {}
        for column in ("key", "state"):
            lengths = saved.array(f"frontier.{column}.sizes", "uint64")
            data = saved.array(f"frontier.{column}.data", "uint8")
            if len(lengths) != sizes[-1] or int(lengths.sum()) != len(data):
                raise saved.corrupt(f"the level's {column}s do not match their sizes")
            ends = np.cumsum(lengths).tolist()
            raw = data.tobytes()
            blobs[column] = [raw[e - k : e] for e, k in zip(ends, lengths.tolist())]
        for i, data in enumerate(blobs["state"]):
            try:
                decode(data)
            except Exception as exc:
                raise saved.corrupt(f"state {i} of the level does not decode: {exc}") from None
        s.distinct = saved.number("states", 1)
        if s.distinct != sum(sizes):
            raise saved.corrupt("the number of states does not match the levels' sizes")
        reached = s.restore_counts(saved, level, s.distinct, by_number=False)
        s.reached = {name: (unsigned(fp), depth) for name, (fp, depth) in reached.items()}
        everything = np.concatenate([links[0], states[0]]).astype(np.int64)
        fits = len(everything) <= s.settings.driver_fingerprints
        s.visited.spark_fps = np.unique(everything) if fits else None
        s.queue = sizes[-1]
        first = sizes[0] if level > 1 else 0  # links of level 1 have no parent
        parent = pa.array(links[1], mask=np.arange(len(links[1])) < first)
        earlier = pa.table(
            {"fp": links[0], "parent": parent, "action": links[2], "binding": links[3]}
        )
        start = 0
        for size in sizes[:-1]:
            part = earlier.slice(start, size)
            start += size
            rows = level_batch(
                size,
                kind=np.full(size, STATE, np.int32),
                **{c: part.column(c).combine_chunks() for c in LINK_COLUMNS},
            )
            self._add_restored(s.spark.createDataFrame(pa.Table.from_batches([rows])), size)
        order = sorted(range(sizes[-1]), key=blobs["key"].__getitem__)  # the level's order
        roots = level == 1
        rows = [
            (
                int(states[0][i]),
                blobs["key"][i],
                blobs["state"][i],
                None if roots else int(states[1][i]),
                int(states[2][i]),
                int(states[3][i]),
            )
            for i in order
        ]
        frontier = s.driver_levels.table_of(rows, everything.tolist())
        s.add_level(frontier, sizes[-1])
        return frontier, level

    def _add_restored(self, links: DataFrame, size: int) -> None:
        s = self.search
        links = s.session.cut(links)
        s.levels.append(links)
        s.visited.spark_links.append(links)
        s.sizes.append(size)
