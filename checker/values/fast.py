"""The one seam between mc's Python and its C hot path (checker/hot/, built as the extension
`checker._hot` when mc is installed): the only module that imports it.

Every function with a C version is written once in Python too, as its twin, in the module it
belongs to; that module binds the function's name with `pick(twin)`: the C function of the same
name when the extension is loaded, else the twin. Both give the same values, bytes, states and
errors (tests/checker/test_fast.py compares each pair); `MC_PURE_PYTHON=1` in the environment
selects the twins (the test suite runs under both), and `MC_HOT_LIBRARY=FILE` loads the
extension from FILE (`make sanitize`'s build):

    put           checker.values.record.put_python        a container with one key set
    update        checker.values.record.update_python     a value at a path replaced by fn(it)
    freeze        checker.values.record.freeze_python     a value as an immutable state value
    take          checker.values.record.take_python       a record's fields at positions
    without       checker.values.record.without_python    a record without some keys
    candidates    checker.values.every.candidates_python  records of a product, filtered
    encode        checker.values.encoding.encode_python   a value's canonical msgpack bytes
    encode_state  checker.values.encoding.encode_state_python
    decode        checker.values.encoding.decode_python
    decode_all    checker.values.encoding.decode_all_python  a part's states, sharing values
    forget_encodings  checker.values.encoding.forget_encodings_python  empties its caches
    conforms      checker.values.kinds.conforms_python    whether a value is of its kind
    successors    checker.model.transitions.successors_python  a state's successors, in order
    dedupe        checker.model.dedupe.dedupe_python          the successors not met before
    holds         checker.model.readsets.holds_python         the first predicate that fails
    changed       checker.model.readsets.changed_python       the variables a step changed
    read_sets_of  checker.model.readsets.read_sets_of_python  a parent's candidates' read sets
    verdicts      checker.model.readsets.verdicts_python      the invariants on a part's candidates
    encoded       checker.values.encoding.encoded_python  candidates' encodings, fingerprints
    expand_run    checker.model.expansion.expand_run_python   expand_batch's common case, a run
    rename        checker.symmetry.rename_python          values renamed by a Permutation
    renamed_encodings  checker.symmetry.renamed_encodings_python  a state's renamed encodings
    signatures    checker.symmetry.signatures_python      its model values' signatures

Records are built on the extension's types when it is loaded (`RecordBase`, `RecordType`, and
what `configure_records` hands it); checker.values.record has their Python twins.

On Spark executors mc's code comes in a zip (checker.spark.ship): Python cannot import a
compiled module from a zip, so the one the zip carries is copied out and loaded if it loads on
that machine (same platform and Python); else the executors run the twins."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_SUFFIX = "_python"


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


def _load() -> ModuleType | None:
    if os.environ.get("MC_PURE_PYTHON", "") not in ("", "0"):
        return None
    if os.environ.get("MC_HOT_LIBRARY"):
        return _from_file(os.environ["MC_HOT_LIBRARY"])
    try:
        # By name: `from checker import _hot` reads, to an import graph that does not see C
        # extensions, as an import of the package `checker` and all it re-exports.
        return importlib.import_module("checker._hot")
    except ImportError:  # not built (no compiler when mc was installed), or in a zip
        return _from_zip()


_hot = _load()
C = _hot is not None  # whether the C hot path is loaded

# name -> (the C function or None, its Python twin), for the tests
TWINS: dict[str, tuple[Callable[..., Any] | None, Callable[..., Any]]] = {}


def pick(twin: F) -> F:
    """The C function named like `twin` without its `_python` suffix when the extension is
    loaded, else `twin` itself."""
    name = twin.__name__.removesuffix(_SUFFIX)
    assert twin.__name__.endswith(_SUFFIX), twin.__name__
    native = getattr(_hot, name) if _hot is not None else None
    TWINS[name] = (native, twin)
    return native if native is not None else twin  # type: ignore[no-any-return]


# -- records in C (checker.values.record) ------------------------------------------------------

# The base class and metaclass of Record in C (a tuple with `replace`, the mapping API and a
# cached hash; the metaclass builds a record from keywords), or None without the extension.
RecordBase: type | None = getattr(_hot, "RecordBase", None)
RecordType: type | None = getattr(_hot, "RecordType", None)
# OncePerState(fn): a state predicate evaluated once per state (checker.compiled), or None.
OncePerState: type | None = getattr(_hot, "OncePerState", None)
# new(shape, *values) and maker(order, shape, where): a record of a known shape built in C.
new: Callable[..., Any] | None = getattr(_hot, "new", None)
maker: Callable[..., Any] | None = getattr(_hot, "maker", None)
# field(index, doc): a shape's field descriptor that notes which variables of a watched state
# spec code reads (docs/architecture.md); None without the extension, whose shapes use
# collections' _tuplegetter and whose search evaluates every guard and invariant.
field: Callable[..., Any] | None = getattr(_hot, "field", None)


def configure_records(
    frozen: set[type],
    atoms: set[type],
    freeze: Callable[[Any], Any],
    raise_unknown: Callable[..., Any],
    put_slow: Callable[..., Any],
    state_error: type[Exception],
    map_type: type,
    no_field: Callable[..., Any],
    record: type,
    factory: Callable[..., Any],
    shapes: dict[tuple[str, ...], type],
    from_pairs: Callable[..., Any],
    without_slow: Callable[..., Any],
    drop_plan: Callable[..., Any],
) -> None:
    """Hand the C records, `put`, `without` and `decode` what they call back into Python for
    (nothing to do without the extension)."""
    if _hot is None:
        return
    _hot.configure(
        frozen,
        atoms,
        freeze,
        raise_unknown,
        put_slow,
        state_error,
        map_type,
        no_field,
        without_slow,
        drop_plan,
    )
    _hot.factory(record, factory)
    _hot.decoding(shapes, from_pairs)


__all__ = ["TWINS", "C", "RecordBase", "RecordType", "configure_records", "pick"]
