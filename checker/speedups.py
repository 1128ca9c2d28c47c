"""Whether the engine's hot path runs in C (`checker._hot`, built when mc is installed) or in
pure Python. Both give the same states, encodings, counts and traces; `MC_PURE_PYTHON=1` in
the environment selects the pure-Python code (the test suite runs under both).

On Spark executors mc's code comes in a zip (checker.spark.ship): Python cannot import a
compiled module from a zip, so the one the zip carries is copied out and loaded if it loads on
that machine (same platform and Python); else the executors run the pure-Python code."""

from __future__ import annotations

import os
from types import ModuleType

hot: ModuleType | None = None


def _from_zip() -> ModuleType | None:
    """checker._hot from the zip checker itself was imported from, or None."""
    import hashlib
    import importlib.machinery
    import importlib.util
    import sys
    import tempfile
    import zipimport

    package = sys.modules.get("checker")
    loader = getattr(package, "__loader__", None)
    if not isinstance(loader, zipimport.zipimporter):
        return None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        try:
            data = loader.get_data(os.path.join(loader.archive, "checker", f"_hot{suffix}"))
        except OSError:
            continue
        digest = hashlib.sha256(data).hexdigest()[:16]
        target = os.path.join(tempfile.gettempdir(), f"mc-hot-{digest}{suffix}")
        try:
            if not os.path.exists(target):
                partial = f"{target}.{os.getpid()}.part"
                with open(partial, "wb") as out:
                    out.write(data)
                os.replace(partial, target)
            spec = importlib.util.spec_from_file_location("checker._hot", target)
            if spec is None or spec.loader is None:
                return None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except (ImportError, OSError):  # built for another platform or Python
            return None
        sys.modules["checker._hot"] = module
        return module
    return None


def _from_file(path: str) -> ModuleType:
    """checker._hot from the file `path`: `MC_HOT_LIBRARY`, which `make sanitize` sets to its
    build with AddressSanitizer and UndefinedBehaviorSanitizer."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("checker._hot", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"MC_HOT_LIBRARY={path}: not a loadable extension module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["checker._hot"] = module
    return module


if os.environ.get("MC_PURE_PYTHON", "") in ("", "0"):
    if os.environ.get("MC_HOT_LIBRARY"):
        hot = _from_file(os.environ["MC_HOT_LIBRARY"])
    else:
        try:
            from checker import _hot as hot
        except ImportError:  # not built (no compiler when mc was installed), or in a zip
            hot = _from_zip()

__all__ = ["hot"]
