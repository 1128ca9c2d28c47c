"""The Spark engine for `mc check`: one session for every spec of the run."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from checker.checkpoint import Checkpoints
from checker.model import Model
from checker.progress import Progress
from checker.result import CheckResult
from checker.search.options import Options
from checker.spark.search import check
from checker.spark.session import active_session, require_runtime, session
from checker.spark.settings import SparkSettings, mc_settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SparkEngine:
    """The Spark engine for `mc check`: checks models one after another in one session,
    started on first use (a spec that fails to load costs no JVM) and stopped by close() if
    this process started it."""

    def __init__(
        self,
        master: str | None = None,
        remote: str | None = None,
        conf: Mapping[str, str] | None = None,
        settings: SparkSettings | None = None,
    ) -> None:
        require_runtime(remote)  # fail before loading specs, not after
        self.master = master
        self.remote = remote
        self.conf = dict(conf or {})
        given = mc_settings(self.conf)  # the mc.* keys, taken out of Spark's settings
        self.settings = settings or given
        self.spark: SparkSession | None = None
        self.owned = False
        self.interrupted = False  # Ctrl-C, SIGTERM or --timeout while the session started

    def check(
        self,
        model: Model,
        options: Options | None = None,
        progress: Progress | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> CheckResult:
        if self.interrupted:
            return not_started(model, "an earlier spec's Spark session did not start")
        if self.spark is None:
            self.owned = self.remote is not None or active_session() is None
            try:
                self.spark = session(self.master, self.remote, self.conf)
            except KeyboardInterrupt:  # the processes it started are gone (session())
                self.interrupted = True
                return not_started(model, "interrupted while the Spark session started")
        return check(
            model,
            options,
            progress,
            spark=self.spark,
            settings=self.settings,
            checkpoints=checkpoints,
        )

    def close(self) -> None:
        if self.spark is not None and self.owned:
            with contextlib.suppress(Exception):
                self.spark.stop()
        self.spark = None


def not_started(model: Model, why: str) -> CheckResult:
    """The result of a check that never started: nothing explored (exit 152)."""
    result = model.new_result()
    result.verdict = "incomplete"
    result.bound = f"{why}: nothing was explored"
    return result
