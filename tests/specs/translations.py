"""What the corpus and the untuned models (docs/corpus.md) assert alike: a model's counts at a
reduced constant equal TLC's, and each translation stays as it was reviewed (its sha256)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from checker.testing import check


def assert_counts_equal_tlc(
    spec: Path, cfg: str, tlc: tuple[int, int, int], deadlock: bool = True, **constants: Any
) -> None:
    """`spec` passes with TLC's (distinct states, states generated, depth); `cfg` names the
    TLC run's cfg in the failure."""
    result = check(spec, deadlock=deadlock, **constants)
    assert result.verdict == "ok", (cfg, result.verdict, result.error)
    assert (result.distinct_states, result.states_generated, result.depth) == tlc, cfg


def assert_pinned(folder: Path, hashes: dict[str, str], name: str) -> None:
    digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    assert digest == hashes[name], f"{name} changed: see docs/corpus.md before updating its hash"


def assert_every_translation_pinned(folder: Path, hashes: dict[str, str]) -> None:
    assert sorted(p.name for p in folder.glob("*.py")) == sorted(hashes)
