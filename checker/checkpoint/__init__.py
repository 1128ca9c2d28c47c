"""Checkpoints of a long `mc check` run (`--checkpoint DIR`): the search core's side.

An engine hands over its search as it stands at the start of a level (every fingerprint, the
parent links, the level's states, the counts: what it needs to go on from there) as arrays and
plain values; `Checkpoints` (checker/checkpoint/writer.py) writes them with the run's settings
to DIR/checkpoint.mc, in the format of checker/checkpoint/file.py, which also reads one back
(`read`, a `Saved`). Which run a checkpoint is, and whether a run may resume it, is the run's
policy: checker/resuming.py.
"""

from checker.checkpoint.file import (
    FILE_NAME,
    FINGERPRINT,
    FORMAT,
    FRAME,
    MAGIC,
    PIECE,
    Array,
    CheckpointError,
    Count,
    Counts,
    Saved,
    Settings,
    read,
)
from checker.checkpoint.writer import DEFAULT_EVERY, Checkpoints, Written, prepare

__all__ = [
    "DEFAULT_EVERY",
    "FILE_NAME",
    "FINGERPRINT",
    "FORMAT",
    "FRAME",
    "MAGIC",
    "PIECE",
    "Array",
    "CheckpointError",
    "Checkpoints",
    "Count",
    "Counts",
    "Saved",
    "Settings",
    "Written",
    "prepare",
    "read",
]
