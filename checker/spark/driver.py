"""Small levels in the driver. A Spark job costs about a second whatever its size, so a level
with fewer states than SparkSettings.driver_states is expanded here with the search's expander
(checker.search.expansion: successors equal to a state met at the level are dropped before they
are encoded) and admitted as every engine admits them (checker.search.admission); the search
moves to Spark when a level grows past it, and back when the levels shrink. The links of the
levels explored here stay here (and go to the cluster in one batch when a Spark level needs the
visited set)."""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.search.admission import Cut
from checker.search.expansion import (
    BACK_EDGES,
    LIVE_FACTOR,
    Admit,
    Expand,
    Expander,
    Expansion,
    StartLevel,
)
from checker.search.options import LIVE_BYTES
from checker.spark.rows import (
    LEVEL_SCHEMA,
    STATE,
    VISITED,
    InCluster,
    Row,
    component,
    home_keys,
    link_of,
    unsigned,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FRONTIER_COLUMNS = ("fp", "key", "state", "parent", "action", "binding")  # of a Row


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """States are acyclic: the cyclic collector would only walk them (as in the local engine)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class DriverVisited:
    """The Spark search's visited set as the driver asks it, a `Visited`
    (checker.search.admission): the fingerprints (signed) of the levels held in the driver;
    those of the levels explored on Spark, sorted, while there are at most `limit`; else one
    job over the level tables whose states are visited in the cluster."""

    def __init__(self, spark: SparkSession, limit: int) -> None:
        self.spark = spark
        self.limit = limit
        self.driver_fps: set[int] = set()  # the fingerprints of the levels held in the driver
        # Those of the levels explored on Spark, sorted, while there are few enough (None:
        # too many, and the cluster is asked); the levels' own sorted runs not merged into it
        # yet (`unmerged`): merged when a driver level asks, not after each Spark level.
        self.spark_fps: np.ndarray | None = np.zeros(0, np.int64)
        self.unmerged: list[np.ndarray] = []
        # The level tables whose states' fingerprints are visited in the cluster.
        self.spark_links: list[DataFrame] = []

    def keep_spark_level(self, parts: list[Any] | None) -> None:
        """The fingerprints a Spark level sent back (None: it sent none; from then on the
        cluster is asked)."""
        if parts is None or self.spark_fps is None:
            self.spark_fps, self.unmerged = None, []
            return
        new = [np.frombuffer(part["fps"], np.int64) for part in parts]
        self.unmerged.append(np.sort(np.concatenate([self.spark_fps[:0], *new])))
        if len(self.spark_fps) + sum(map(len, self.unmerged)) > self.limit:
            self.spark_fps, self.unmerged = None, []

    def _spark_sorted(self) -> np.ndarray | None:
        """spark_fps with the levels' runs merged in. A level's states are new: its
        fingerprints are not among those held. Sorted runs merge in linear time per run with
        a stable sort (timsort); union1d sorted them all afresh, 0.9 s a level on average
        over the 18 Spark levels of TwoPhase RM=8, and a merge after every level copied the
        whole array each time."""
        if self.spark_fps is not None and self.unmerged:
            merged = np.concatenate([self.spark_fps, *self.unmerged])
            merged.sort(kind="stable")
            self.spark_fps, self.unmerged = merged, []
        return self.spark_fps

    def signed_known(self, fps: Iterable[int]) -> set[int]:
        """Which of the fingerprints (signed) belong to visited states: those of levels held
        here, and one job (the candidates broadcast, the visited set scanned in place) for
        those of the levels in the cluster."""
        asked = set(fps)
        known = asked & self.driver_fps
        rest = asked - known
        spark_fps = self._spark_sorted() if rest and self.spark_links else None
        if rest and self.spark_links and spark_fps is not None:
            ask = np.fromiter(rest, np.int64, len(rest))
            known.update(ask[np.isin(ask, spark_fps, assume_unique=True)].tolist())
        elif rest and self.spark_links:
            from pyspark.sql import functions as F

            candidates = self.spark.createDataFrame([(fp,) for fp in rest], "fp long")
            visited = functools.reduce(
                lambda a, b: a.union(b),
                [df.filter(F.col("kind") == STATE).select("fp") for df in self.spark_links],
            )
            found = visited.join(F.broadcast(candidates), "fp", "left_semi").distinct()
            known.update(row["fp"] for row in found.collect())
        return known

    def known(self, fps: np.ndarray) -> np.ndarray:
        """Which of `fps` (uint64) are known, as checker.search.admission asks."""
        signed = fps.view(np.int64).tolist()
        known = self.signed_known(signed)
        return np.fromiter((fp in known for fp in signed), bool, len(signed))


class DriverLevels:
    """_Search's part that expands small levels in the driver."""

    def __init__(self, search: Any) -> None:
        """`search`: the Spark search (checker.spark.search) whose levels, visited set and
        counts these levels read and update."""
        self.search = search
        self.unshipped: list[int] = []  # levels held in the driver and not yet in the cluster
        # The local engine's expander for the driver levels, and the level whose states it
        # holds live (the one the last driver level found), if any.
        self.expander: Expander | None = None
        self.live_level: int | None = None
        self.met_bytes = 0  # the encoded bytes of the states the expander remembers
        self.remember = False  # whether it remembers them across levels

    # -- small levels in the driver ----------------------------------------------------------

    def here(self, frontier: InCluster | list[Row], level: int) -> list[Row]:
        """The level's states in the driver, in the local engine's order: a level in the cluster
        is collected (its table still holds the cluster's visited set), and its links are
        kept here from then on."""
        s = self.search
        if isinstance(frontier, list):
            return frontier
        columns = ("fp", "code", "state", "parent", "action", "binding")
        rows = sorted(frontier.states().select(*columns).collect(), key=lambda r: r["code"])
        here = [
            (r["fp"], component(i), bytes(r["state"]), r["parent"], r["action"], r["binding"])
            for i, r in enumerate(rows)
        ]
        visited = s.visited
        visited.spark_links = [df for df in visited.spark_links if df is not frontier.df]
        s.cluster_visited = frontier.df
        s.levels[level - 1] = [(r[0], r[3], r[4], r[5]) for r in here]
        visited.driver_fps.update(r[0] for r in here)
        return here

    def to_cluster(self, frontier: InCluster | list[Row], level: int) -> InCluster:
        """The level's states as a table in the cluster, with the fingerprints of the levels
        explored in the driver since the last Spark level, which join the visited set there."""
        s = self.search
        if isinstance(frontier, list):
            self.expander = None  # the live states it kept for this level are not needed
            fps = [row[0] for i in self.unshipped for row in s.levels[i]]  # type: ignore[union-attr]
            self.unshipped.clear()
            return self.table_of(frontier, fps)
        return frontier

    def table_of(self, states: list[Row], visited: list[int]) -> InCluster:
        """A level's table made from its states in the driver (in order) and visited
        fingerprints (signed) to add to the cluster's."""
        import pyarrow as pa

        from checker.spark.arrow import level_batch

        s = self.search
        size = len(states)
        homes = s.tasks_for(size)
        keys = np.array(home_keys(homes), np.int64)
        ranks = np.arange(size, dtype=np.int64)
        columns = {c: [row[i] for row in states] for i, c in enumerate(FRONTIER_COLUMNS)}
        rows = level_batch(
            size,
            kind=np.full(size, STATE, np.int32),
            fp=columns["fp"],
            code=ranks,
            state=columns["state"],
            parent=columns["parent"],
            action=columns["action"],
            binding=columns["binding"],
            home=keys[ranks * homes // max(size, 1)],
        )
        fps = level_batch(
            len(visited),
            kind=np.full(len(visited), VISITED, np.int32),
            fp=visited,
            home=keys[np.arange(len(visited)) % homes],
        )
        table = pa.Table.from_batches([rows, fps])
        df = s.spark.createDataFrame(table, LEVEL_SCHEMA)
        if s.cluster_visited is not None:
            from pyspark.sql import functions as F

            df = df.unionByName(s.cluster_visited.filter(F.col("kind") == VISITED))
        prefix = tuple(-(-j * size // homes) for j in range(homes)) + (size,)
        return InCluster(df, homes, prefix)

    def add(self, rows: list[Row]) -> None:
        """A level found in the driver: its links stay here until a Spark level needs them."""
        s = self.search
        s.levels.append([(r[0], r[3], r[4], r[5]) for r in rows])
        s.sizes.append(len(rows))
        s.visited.driver_fps.update(r[0] for r in rows)
        self.unshipped.append(len(s.levels) - 1)

    def _expand_here(self, frontier: list[Row], level: int) -> Expansion:
        """The successors of the level's states, with the search's expander: it drops those
        equal to a state met at this level before encoding them, and checks the invariants on
        the others (the candidates). The states come live from the expander when it kept them
        at the previous level, else encoded."""
        s = self.search
        if self.expander is None:
            self.expander = Expander(s.model)
            self.met_bytes, self.remember = 0, False
        wanted = s.level_wanted = s.wanted()
        # As the local engine: once many candidates were states of earlier levels, the
        # expander remembers the states it met across levels, while they fit the budget.
        forget = not self.remember or LIVE_FACTOR * self.met_bytes > LIVE_BYTES
        if forget:
            self.met_bytes = 0
        self.expander.start_level(StartLevel(level, forget, wanted))
        if self.live_level == level:
            request = Expand(level, level, start=0, count=len(frontier), bindings=True)
        else:
            sizes = np.fromiter((len(row[2]) for row in frontier), np.uint64, len(frontier))
            offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes)])
            blob = b"".join(row[2] for row in frontier)
            request = Expand(level, level, blob=blob, offsets=offsets.tobytes(), bindings=True)
        self.live_level = None
        reply = self.expander.expand(request)
        self.met_bytes += sum(len(row[2]) for row in frontier) + len(reply.blob)
        return Expansion(reply, s.options.deadlock)

    def expand(self, frontier: list[Row], level: int) -> list[Row]:
        """Expand a small level in the driver as the local engine does (the same expander and
        admission): the same new states, parents, keys, counts and stops as a Spark level
        would find, without a Spark job (whose fixed cost is about a second)."""
        with _no_gc():
            return self._expand_and_admit(frontier, level)

    def _expand_and_admit(self, frontier: list[Row], level: int) -> list[Row]:
        s = self.search
        started = time.perf_counter()
        exp = self._expand_here(frontier, level)
        decision = s.decide(exp, s.visited)
        if np.count_nonzero(decision.known) >= BACK_EDGES * len(decision.used):
            self.remember = True
        kept = decision.kept
        found = self._admit(frontier, exp, kept, level)
        s.note_reached(exp, kept, lambda j: unsigned(found[j][0]), level + 1)
        size = len(frontier)
        cut = s.cut(exp, decision, 0, size, 0, len(found))
        if cut is Cut.BAD:
            row = found[-1]
            fp = unsigned(row[0])
            s.links[fp] = link_of((row[0], row[3], row[4], row[5]))
            s.walk_back(unsigned(row[3]), level)  # type: ignore[arg-type]
            s.bad(fp, exp, decision)
        elif cut is Cut.FULL:
            raise s.full()
        elif cut is Cut.PARENT:
            self._settle_parent_here(frontier, exp, level)
        indices = kept.astype(np.uint32).tobytes()
        self.expander.admit(Admit(level, indices, True))  # type: ignore[union-attr]
        self.live_level = level + 1
        s.queue = len(found)
        self.add(found)
        s.report(level + 1, size, len(found), time.perf_counter() - started, "driver")
        return found

    def _settle_parent_here(self, frontier: list[Row], exp: Expansion, level: int) -> None:
        s = self.search
        assert exp.stop is not None
        row = frontier[exp.stop]
        fp = unsigned(row[0])
        s.walk_back(fp, level)
        s.settle_parent(fp, row[2])

    def _admit(
        self, frontier: list[Row], exp: Expansion, kept: np.ndarray, level: int
    ) -> list[Row]:
        """The candidates `kept` (in order) as the next level's rows: key = the parent's key and
        the successor's position among the parent's; counted as new states."""
        s = self.search
        positions = exp.positions[kept]
        parents = exp.parent_of[positions]
        indexes = (positions - exp.starts[parents]).tolist()
        actions = exp.actions[positions]
        bindings = exp.bindings
        assert bindings is not None
        rows = zip(
            kept.tolist(),
            exp.fps[kept].view(np.int64).tolist(),
            parents.tolist(),
            indexes,
            actions.tolist(),
            bindings[kept].tolist(),
        )
        found: list[Row] = []
        for k, fp, parent, index, action, binding in rows:
            row = frontier[parent]
            found.append((fp, row[1] + component(index), exp.encoding(k), row[0], action, binding))
        s.distinct += len(found)
        if found:
            s.depth = level + 1
        s.new += np.bincount(actions, minlength=s.n_actions)
        return found

    def at_bound(self, frontier: list[Row], level: int) -> None:
        """expand_at_bound for a level held in the driver."""
        s = self.search
        exp = self._expand_here(frontier, level)
        s.count(exp, exp.limit, exp.limit)
        if exp.stop is not None:
            self._settle_parent_here(frontier, exp, level)
        fps = exp.fps[: exp.candidates].view(np.int64).tolist()
        if len(s.visited.signed_known(fps)) < len(set(fps)):
            s.queue = len(frontier)
            raise s.depth_bound()
        s.queue = 0
