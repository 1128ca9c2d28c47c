"""What the engine tests compare between two runs that must agree (engines, worker counts, a
run and its resumption), and the checkpoints a run writes, kept level by level."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from checker.checkpoint import Checkpoints
from checker.result import CheckResult


def outcome(result: CheckResult) -> dict[str, object]:
    """Everything a report shows, but the time."""
    error = result.error
    return {
        "verdict": result.verdict,
        "invariant": result.invariant,
        "bound": result.bound,
        "error": error and (error.kind, error.name, error.params, error.message, error.traceback),
        "distinct": result.distinct_states,
        "generated": result.states_generated,
        "depth": result.depth,
        "queue": result.queue,
        "coverage": [(c.name, c.fired, c.new) for c in result.coverage],
        "trace": [(s.action, s.params, s.state, s.event) for s in result.trace],
        "reached": result.reached,
        "unreached": result.unreached,
        "witness": result.witness,
        "step": (result.step_property, result.step_violation, result.outside_constraints),
    }


def copy_each_checkpoint(patch: pytest.MonkeyPatch, into: Path) -> list[Path]:
    """While `patch` lasts, each checkpoint written is also copied to into/level-N; returns
    the list of those folders, which grows as they are written."""
    copies: list[Path] = []
    write = Checkpoints.write

    def write_and_copy(self: Checkpoints, counts: dict, arrays: dict) -> object:
        written = write(self, counts, arrays)
        copies.append(into / f"level-{counts['level']}")
        copies[-1].mkdir()
        shutil.copy(self.path, copies[-1])
        return written

    patch.setattr(Checkpoints, "write", write_and_copy)
    return copies
