"""Where a search ends early inside a level on Spark: at the first event in the search's order,
with its counts, reported as every engine reports it (checker.search.admission).

Events compare by their order code (checker.spark.rows): an expansion that raised or a
deadlock at its parent's code (before the parent's successors), a new state that breaks an
invariant or is refused by --max-states at its own."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.errors import EngineError
from checker.spark.executor import ExpandJob, count_part
from checker.spark.rows import (
    COUNTED_SCHEMA,
    SUMMARY,
    InCluster,
    LevelJob,
    parent_code,
    parent_rank,
    successor_index,
    unsigned,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class StopsInLevel:
    """_Search's part that stops inside a Spark level like the local engine would."""

    def __init__(self, search: Any) -> None:
        """`search`: the Spark search (checker.spark.search) whose counts it settles."""
        self.search = search

    # -- stopping inside a level -----------------------------------------------------------

    def in_level(self, frontier: InCluster, job: LevelJob, level: int) -> None:
        """Stop like the local engine would, at the first event of the level in its order: an
        expansion that raised or a deadlock, the --max-states bound, or a new state that
        violates an invariant (or makes one raise)."""
        s = self.search
        events: list[tuple[int, int, str]] = []
        event = job.first("event")
        if event is not None:
            events.append((event[0], 0, "parent"))
        limit = s.options.max_states
        if limit is not None and s.distinct + job.count > limit:
            from pyspark.sql import functions as F

            nth = limit - s.distinct  # states admitted before the one that hits the bound
            new = job.table.states().select("code").orderBy(F.col("code"))
            events.append((new.offset(nth).limit(1).collect()[0]["code"], 1, "limit"))
        bad = job.first("bad")
        if bad is not None:
            events.append((bad[0], 2, "bad"))
        if not events:
            return
        code, _, kind = min(events)
        if kind == "parent":
            assert event is not None
            self._stop_at_parent(frontier, job.table, level, event)
        else:
            self._stop_at_new_state(frontier, job.table, level, code, kind)

    def _new_before(self, new: InCluster, code: int, *, by_action: bool = False) -> Any:
        """The new states of the level before `code`, per action if `by_action`."""
        from pyspark.sql import functions as F

        s = self.search
        before = new.states().filter(F.col("code") < F.lit(code))
        if not by_action:
            return before.count()
        counts = [0] * s.n_actions
        for row in before.groupBy("action").count().collect():
            counts[row["action"]] = row["count"]
        return counts

    def _fired_before(self, frontier: InCluster, rank: int) -> list[int]:
        """Successors per action of the frontier's states before rank `rank`."""
        from pyspark.sql import functions as F

        s = self.search
        live = s.settings.task_live_bytes
        job = ExpandJob(s.shipped, frontier.prefix, False, False, (), live)
        source = frontier.df.filter(F.col("kind") != SUMMARY).repartition(frontier.homes, "home")
        run = functools.partial(count_part, job, rank)
        rows = source.mapInArrow(run, COUNTED_SCHEMA).collect()
        return [sum(row["fired"][a] for row in rows) for a in range(s.n_actions)]

    def _settle(
        self,
        frontier: InCluster,
        new: InCluster,
        level: int,
        rank: int,
        fired: list[int],
        new_counts: list[int],
    ) -> None:
        """Counts as the local engine has them when it stops while expanding the parent of rank
        `rank`, whose successors up to the event are in `fired` and `new_counts`."""
        s = self.search
        before = self._fired_before(frontier, rank)
        s.generated += sum(before)
        for a in range(s.n_actions):
            s.fired[a] += before[a] + fired[a]
            s.new[a] += new_counts[a]
        admitted = sum(new_counts)
        s.distinct += admitted
        if admitted:
            s.depth = level + 1
        # The queue before a state is expanded: size - done + new so far.
        found = self._new_before(new, parent_code(rank))
        s.queue = s.sizes[level - 1] - rank + found

    def _stop_at_parent(
        self, frontier: InCluster, new: InCluster, level: int, event: tuple[int, int]
    ) -> None:
        s = self.search
        code, fp = event
        row = one_row(frontier.states(), "fp", fp)
        new_counts = self._new_before(new, code, by_action=True)
        self._settle(frontier, new, level, parent_rank(code), [0] * s.n_actions, new_counts)
        s.walk_back(unsigned(fp), level)
        s.settle_parent(unsigned(fp), row["state"])

    def _stop_at_new_state(
        self, frontier: InCluster, new: InCluster, level: int, code: int, kind: str
    ) -> None:
        s = self.search
        state_row = one_row(new.states(), "code", code)
        parent_row = one_row(frontier.states(), "fp", state_row["parent"])
        successors = s.model.expand(parent_row["state"])
        index = successor_index(code)
        s.generated += len(successors)
        fired = [0] * s.n_actions
        for succ in successors[: index + 1]:
            fired[succ.action] += 1
        new_counts = self._new_before(new, code, by_action=True)
        fp = unsigned(state_row["fp"])
        if kind == "bad":
            new_counts[state_row["action"]] += 1  # admitted, then checked
        self._settle(frontier, new, level, parent_rank(code), fired, new_counts)
        parent_fp = unsigned(state_row["parent"])
        s.links[fp] = (parent_fp, state_row["action"], state_row["binding"])
        s.walk_back(parent_fp, level)
        if kind == "limit":
            raise s.full()
        s.recheck(fp, state_row["state"])

    def at_depth_bound(self, frontier: InCluster, level: int) -> None:
        """As every engine: the states at the bound are expanded and their successors counted;
        the search is complete only if none is new. The first state (in order) that raises
        or deadlocks stops it there."""
        s = self.search
        job = s.level_job(frontier, level, checks=False)
        event = job.first("event")
        if event is not None:
            code, fp = event
            before = self._fired_before(frontier, parent_rank(code))
            s.generated += sum(before)
            s.fired += np.array(before, dtype=np.int64)
            parent = one_row(frontier.states(), "fp", fp)
            s.walk_back(unsigned(fp), level)
            s.settle_parent(unsigned(fp), parent["state"])
        for part in job.expanded:
            generated = np.asarray(part["generated"], np.int64)
            s.generated += int(generated.sum())
            s.fired += generated
        if job.count:
            s.queue = s.sizes[level - 1]
            raise s.depth_bound()
        s.queue = 0


def one_row(df: DataFrame, column: str, value: Any) -> Any:
    """The one row of `df` whose `column` is `value` (EngineError if not exactly one)."""
    from pyspark.sql import functions as F

    rows = df.filter(F.col(column) == F.lit(value)).collect()
    if len(rows) != 1:
        raise EngineError(f"{len(rows)} rows with {column} = {value!r}, expected one")
    return rows[0]
