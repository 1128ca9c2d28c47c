"""Load a spec file into a Model, with its constants (checker.constants)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

from checker.constants import typed
from checker.errors import OUTSIDE, ConfigError, McError, SpecError, described
from checker.model import Model
from checker.spec import Spec, actions_of, assumptions_of, constants_of


def _module_name(path: Path) -> tuple[str, Path]:
    """The dotted name of `path` and the directory to import it from.

    Like pytest's rootdir logic: walk up while the folder is a package, so that a spec in
    `specs/` can import its siblings as `specs.something` (or relatively).
    """
    parts = [path.stem]
    root = path.parent
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    return ".".join(parts), root


def import_root(path: str | os.PathLike[str]) -> Path:
    """The folder a spec file is imported from (its top package's parent, else its folder)."""
    return _module_name(Path(path).resolve())[1]


def import_spec_module(path: str | os.PathLike[str]) -> ModuleType:
    file = Path(path)
    if not file.exists():
        raise SpecError(f"{path}: no such file")
    if file.is_dir():
        raise SpecError(f"{path}: is a folder, not a spec file")
    if file.suffix != ".py":
        raise SpecError(f"{path}: a spec is a Python file (.py)")
    file = file.resolve()
    name, root = _module_name(file)
    cached = sys.modules.get(name)
    if cached is not None and getattr(cached, "__file__", None) != str(file):
        del sys.modules[name]  # another file with the same module name (e.g. a temp spec)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        return importlib.import_module(name)
    except SyntaxError as exc:
        raise SpecError(
            f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}\n    {(exc.text or '').strip()}"
        ) from exc
    except McError:
        raise  # already says where (e.g. an action defined twice)
    except OUTSIDE:
        raise
    except BaseException as exc:
        raise SpecError(
            f"{path}{_line_in(file, exc)}: importing the spec raised {described(exc)}"
        ) from exc


def _line_in(file: Path, exc: BaseException) -> str:
    """ ":N", the spec's line that the exception came through (the last one), or ""."""
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(file)]
    return f":{lines[-1]}" if lines else ""


class NoSpecError(SpecError):
    """The module defines no spec (a folder run skips such helper modules)."""


def split_target(target: str | os.PathLike[str]) -> tuple[str, str | None]:
    """`specs/kip903.py::Kip841` -> ("specs/kip903.py", "Kip841"): a spec file, and the
    class of it to check if one is named."""
    text = os.fspath(target)
    path, sep, name = text.rpartition("::")
    if not sep:
        return text, None
    if not name.isidentifier():
        raise SpecError(f"{text}: after :: comes the name of a Spec class")
    return path, name


def load_spec_class(target: str | os.PathLike[str]) -> tuple[type[Spec], str]:
    """The spec class `target` names (FILE, or FILE::Class) and its file's path."""
    path, name = split_target(target)
    return spec_class(import_spec_module(path), name), path


def spec_class(module: ModuleType, name: str | None = None) -> type[Spec]:
    """The Spec subclass that `module` defines (not one it imports), or the one called `name`
    (`mc check FILE::Class`: any spec class the module defines or imports)."""
    path = module.__file__
    if name is not None:
        chosen = getattr(module, name, None)
        if isinstance(chosen, type) and issubclass(chosen, Spec) and chosen is not Spec:
            try:
                if actions_of(chosen):
                    return chosen
            except TypeError as exc:  # an action overridden without @action
                raise SpecError(f"{path}: {exc}") from None
        specs = sorted(
            n
            for n, obj in vars(module).items()
            if isinstance(obj, type) and issubclass(obj, Spec) and obj is not Spec
        )
        raise NoSpecError(
            f"{path}: no spec class {name} with actions here (spec classes: "
            f"{', '.join(specs) or 'none'})"
        )
    candidates = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Spec)
        and obj is not Spec
        and obj.__module__ == module.__name__
    ]
    try:
        concrete = [c for c in candidates if actions_of(c) or "init" in vars(c)]
    except TypeError as exc:  # an action overridden without @action
        raise SpecError(f"{path}: {exc}") from None
    if not concrete:
        raise NoSpecError(f"{path}: defines no Spec subclass with actions")
    if len(concrete) > 1:
        chosen = getattr(module, "spec", None)
        if isinstance(chosen, type) and chosen in concrete:
            return chosen
        names = ", ".join(c.__name__ for c in concrete)
        raise SpecError(f"{path}: defines several specs ({names}); name one with `spec = <Class>`")
    return concrete[0]


def check_assumptions(spec: Spec, path: str | os.PathLike[str]) -> None:
    """Every @assume of the spec holds for its constants (TLA+'s ASSUME), else ConfigError."""
    declared = constants_of(type(spec))
    for name, fn in assumptions_of(type(spec)).items():
        try:
            holds = getattr(spec, name)()
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise SpecError(
                f"{path}: assumption {name} raised {type(exc).__name__}: {exc}"
            ) from exc
        if holds is not True and holds is not False:
            raise SpecError(f"{path}: assumption {name} returned {holds!r}, not True or False")
        if not holds:
            used = _constants_read(fn, declared)
            shown = ", ".join(f"{n}={getattr(spec, n)!r}" for n in used)
            doc = (inspect.getdoc(fn) or "").strip()
            raise ConfigError(
                f"assumption {name} does not hold"
                + (f" with {shown}" if shown else "")
                + (f": {doc}" if doc else "")
            )


def _constants_read(fn: object, declared: Mapping[str, object]) -> list[str]:
    """The constants an assumption's code names (`self.brokers`), in declaration order."""
    code = getattr(fn, "__code__", None)
    names = set(code.co_names) if code is not None else set()
    return [n for n in declared if n in names] or list(declared)


def load_model(
    path: str | os.PathLike[str],
    constants: Mapping[str, str] | None = None,
    invariants: Sequence[str] | None = None,
    symmetry: bool = True,
    view: bool = True,
) -> Model:
    """Import the spec at `path` (FILE, or FILE::Class), apply `-D` constants (as text) and
    compile it (`symmetry`, `view`: use the symmetry and the view the spec declares, if
    any)."""
    cls, file = load_spec_class(path)
    return build_model(cls, file, typed(cls, constants or {}), invariants, symmetry, view)


def build_spec(cls: type[Spec], path: str | os.PathLike[str], values: Mapping[str, object]) -> Spec:
    """An instance of spec class `cls` (from the file at `path`) with constant values already
    checked (checker.constants), its @assume assumptions holding."""
    try:
        spec = cls(**values)
    except OUTSIDE:
        raise
    except BaseException as exc:
        raise SpecError(
            f"{path}: creating {cls.__name__} raised {type(exc).__name__}: {exc}"
        ) from exc
    check_assumptions(spec, path)
    return spec


def build_model(
    cls: type[Spec],
    path: str | os.PathLike[str],
    values: Mapping[str, object],
    invariants: Sequence[str] | None = None,
    symmetry: bool = True,
    view: bool = True,
) -> Model:
    """A Model of spec class `cls` (from the file at `path`) with constant values already
    checked (checker.constants)."""
    spec = build_spec(cls, path, values)
    return Model(spec, path=str(path), invariants=invariants, symmetry=symmetry, view=view)
