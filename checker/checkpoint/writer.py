"""When and where a run writes its checkpoints: every `every` seconds, at the start of a level,
to DIR/checkpoint.mc, written under a temporary name in DIR and renamed over the old one, so
that a crash at any moment leaves the old checkpoint or the new one, whole."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from checker.checkpoint import file as checkpoint_file
from checker.checkpoint.file import FILE_NAME, Array, Counts, Saved, Settings
from checker.errors import ConfigError

DEFAULT_EVERY = 600.0  # seconds between checkpoints
_TEMP_PREFIX = ".checkpoint-"


@dataclass(frozen=True)
class Written:
    """The last checkpoint this run wrote."""

    path: Path
    level: int
    states: int


class Checkpoints:
    """Where and how often a run writes its checkpoints, and the one it resumes, if any."""

    def __init__(
        self, directory: str | os.PathLike[str], settings: Settings, resumed: Saved | None = None
    ) -> None:
        self.directory = Path(directory)
        self.path = self.directory / FILE_NAME
        self.every = settings.every
        self.settings = settings
        self.resumed = resumed
        self.written: Written | None = None
        self._last = time.monotonic()

    def due(self) -> bool:
        return time.monotonic() - self._last >= self.every

    def write(self, counts: Counts, arrays: Mapping[str, Array]) -> Written | None:
        """Write a checkpoint (`counts` holds `level` and `states`, the number of distinct
        states); a failure is reported on stderr and the run goes on with the previous one."""
        try:
            self._write(counts, arrays)
        except OSError as exc:
            sys.stderr.write(f"mc: warning: checkpoint {self.path} not written: {exc}\n")
            return None
        finally:
            self._last = time.monotonic()
        self.written = Written(self.path, int(counts["level"]), int(counts["states"]))  # type: ignore[arg-type]
        return self.written

    def _write(self, counts: Counts, arrays: Mapping[str, Array]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        descriptor, temp = tempfile.mkstemp(dir=self.directory, prefix=_TEMP_PREFIX, suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as file:
                checkpoint_file.write(file, self.settings, counts, arrays)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def remove(self) -> None:
        """The search ended by itself: its checkpoint is of no more use."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.written = None


def prepare(directory: str | os.PathLike[str], option: str) -> Path:
    """Check before the run that checkpoints can be written to `directory`; remove the
    temporary files of a run killed while writing one."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=_TEMP_PREFIX):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {directory}: cannot write: {exc.strerror or exc}") from None
    for stale in folder.glob(f"{_TEMP_PREFIX}*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()
    return folder
