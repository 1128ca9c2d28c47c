"""The bundled specs with small constants, for tests that run every spec (e.g. engine
equivalence). Each entry: (path relative to the repo, constants as -D text, expected verdict,
expected distinct states when the verdict is "ok", else None)."""

from __future__ import annotations

BUNDLED: list[tuple[str, dict[str, str], str, int | None]] = [
    ("specs/examples/die_hard.py", {}, "violation", None),
    ("specs/kip903.py", {"max_broker_epoch": "2"}, "ok", 3_404),
    ("specs/kip903.py", {"max_broker_epoch": "2", "fixed": "false"}, "violation", None),
]
