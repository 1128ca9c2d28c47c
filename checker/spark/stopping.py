"""Where a search ends early inside a level on Spark: at the first event in the search's order,
with its counts, reported as every engine reports it (checker.search.admission)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.errors import EngineError
from checker.spark.executor import count_batches
from checker.spark.rows import COUNTED_SCHEMA, SUCCESSOR, last_component, unsigned

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class StopsInLevel:
    """_Search's part that stops inside a Spark level like the local engine would."""

    # -- stopping inside a level -----------------------------------------------------------

    def _stop_in_level(
        self,
        frontier: DataFrame,
        new: DataFrame,
        level: int,
        count: int,
        metrics: Mapping[str, Any],
        bad: bytes | None,
    ) -> None:
        """Stop like the local engine would, at the first event of the level in its order: an
        expansion that raised or a deadlock (at the parent's key, before its successors), the
        --max-states bound, or a new state that violates an invariant (or makes one raise)."""
        events: list[tuple[bytes, int, str]] = []
        if metrics["event"] is not None:
            events.append((bytes(metrics["event"]), 0, "parent"))
        limit = self.options.max_states
        if limit is not None and self.distinct + count > limit:
            from pyspark.sql import functions as F

            nth = limit - self.distinct  # states admitted before the one that hits the bound
            row = new.select("key").orderBy(F.col("key")).offset(nth).limit(1).collect()[0]
            events.append((bytes(row["key"]), 1, "limit"))
        if bad is not None:
            events.append((bytes(bad), 2, "bad"))
        if not events:
            return
        key, _, kind = min(events)
        if kind == "parent":
            self._stop_at_parent(frontier, new, level, key)
        else:
            self._stop_at_new_state(frontier, new, level, key, kind)

    def _row(self, df: DataFrame, column: str, value: Any) -> Any:
        from pyspark.sql import functions as F

        rows = df.filter(F.col(column) == F.lit(value)).collect()
        if len(rows) != 1:
            raise EngineError(f"{len(rows)} rows with {column} = {value!r}, expected one")
        return rows[0]

    def _count_before(self, df: DataFrame, key: bytes, *, by_action: bool = False) -> Any:
        from pyspark.sql import functions as F

        before = df.filter(F.col("key") < F.lit(key))
        if not by_action:
            return before.count()
        counts = [0] * self.n_actions
        for row in before.groupBy("action").count().collect():
            counts[row["action"]] = row["count"]
        return counts

    def _fired_before(self, frontier: DataFrame, key: bytes) -> list[int]:
        """Successors per action of the frontier states before `key` (a parent key)."""
        from pyspark.sql import functions as F

        run = functools.partial(count_batches, self.model, self.n_actions)
        part = frontier.filter(F.col("key") < F.lit(key)).select("state")
        tasks = self._tasks(self._count_before(frontier, key))
        if tasks < self.partitions:
            part = part.coalesce(tasks)
        rows = part.mapInArrow(run, COUNTED_SCHEMA).collect()
        return [sum(row["fired"][a] for row in rows) for a in range(self.n_actions)]

    def _settle(
        self,
        frontier: DataFrame,
        new: DataFrame,
        level: int,
        parent_key: bytes,
        fired: list[int],
        new_counts: list[int],
    ) -> None:
        """Counts as the local engine has them when it stops while expanding the parent at
        `parent_key`, whose successors up to the event are in `fired` and `new_counts`."""
        before = self._fired_before(frontier, parent_key)
        self.generated += sum(before)
        for a in range(self.n_actions):
            self.fired[a] += before[a] + fired[a]
            self.new[a] += new_counts[a]
        admitted = sum(new_counts)
        self.distinct += admitted
        if admitted:
            self.depth = level + 1
        # The queue before a state is expanded: size - done + new so far.
        index = self._count_before(frontier, parent_key)
        found = self._count_before(new, parent_key)
        self.queue = self.sizes[level - 1] - index + found

    def _stop_at_parent(self, frontier: DataFrame, new: DataFrame, level: int, key: bytes) -> None:
        row = self._row(frontier, "key", key)
        fp = unsigned(row["fp"])
        new_counts = self._count_before(new, key, by_action=True)
        self._settle(frontier, new, level, key, [0] * self.n_actions, new_counts)
        self._walk_back(fp, level)
        self.settle_parent(fp, row["state"])

    def _stop_at_new_state(
        self, frontier: DataFrame, new: DataFrame, level: int, key: bytes, kind: str
    ) -> None:
        state_row = self._row(new, "key", key)
        parent_row = self._row(frontier, "fp", state_row["parent"])
        parent_key = bytes(parent_row["key"])
        successors = self.model.expand(parent_row["state"])
        index = last_component(key, parent_key)
        self.generated += len(successors)
        fired = [0] * self.n_actions
        for succ in successors[: index + 1]:
            fired[succ.action] += 1
        new_counts = self._count_before(new, key, by_action=True)
        fp = unsigned(state_row["fp"])
        if kind == "bad":
            new_counts[state_row["action"]] += 1  # admitted, then checked
        self._settle(frontier, new, level, parent_key, fired, new_counts)
        parent_fp = unsigned(state_row["parent"])
        self.links[fp] = (parent_fp, state_row["action"], state_row["binding"])
        self._walk_back(parent_fp, level)
        if kind == "limit":
            raise self.full()
        self.recheck(fp, state_row["state"])

    def _stop_at_depth_bound(self, frontier: DataFrame, level: int) -> None:
        """As every engine: the states at the bound are expanded and their successors counted;
        the search is complete only if none is new. The first state (in order) that raises
        or deadlocks stops it there."""
        from pyspark.sql import functions as F

        candidates, observation = self._expand(frontier, self._tasks(self.sizes[level - 1]))
        row = (
            candidates.filter(F.col("kind") == SUCCESSOR)
            .join(self._visited(), "fp", "left_anti")
            .agg(F.count(F.lit(1)).alias("n"))
            .collect()[0]
        )
        metrics = observation.get
        if metrics["event"] is not None:
            key = bytes(metrics["event"])
            before = self._fired_before(frontier, key)
            self.generated += sum(before)
            self.fired += np.array(before, dtype=np.int64)
            parent = self._row(frontier, "key", key)
            fp = unsigned(parent["fp"])
            self._walk_back(fp, level)
            self.settle_parent(fp, parent["state"])
        self.generated += int(metrics["generated"] or 0)
        self.fired += np.array(
            [int(metrics[f"a{a}"] or 0) for a in range(self.n_actions)], dtype=np.int64
        )
        if row["n"]:
            self.queue = self.sizes[level - 1]
            raise self.depth_bound()
        self.queue = 0
