"""Whether the engine's hot path runs in C (`checker._hot`, built when mc is installed) or in
pure Python. Both give the same states, encodings, counts and traces; `MC_PURE_PYTHON=1` in
the environment selects the pure-Python code (the test suite runs under both)."""

from __future__ import annotations

import os
from types import ModuleType

hot: ModuleType | None = None
if os.environ.get("MC_PURE_PYTHON", "") in ("", "0"):
    try:
        from checker import _hot as hot
    except ImportError:  # not built (no compiler when mc was installed)
        hot = None

__all__ = ["hot"]
