"""The constants a run gives a spec, read once here: `-D NAME=VALUE` text from the command line,
or Python values (the testing helpers, a checkpoint). A value must be a constant the spec
declares, of its type (text is read as the type of its default: checker.spec.Constant.parse),
within its range and choices; the spec is then built with the values that come out
(`Spec.__init__` guards direct construction with the same Constant checks)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from checker.errors import ConfigError
from checker.spec import Spec, constants_of


def pairs(items: Sequence[str], option: str, form: str = "NAME=VALUE") -> dict[str, str]:
    """`NAME=VALUE` items (of `option`, for the error) as a dict."""
    values: dict[str, str] = {}
    for item in items:
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:  # bytes of another encoding, kept as lone surrogates
            shown = item.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise ConfigError(f"{option} {shown}: not UTF-8 text") from None
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"{option} {item}: expected {form}")
        values[name.strip()] = value
    return values


def defines(items: Sequence[str]) -> dict[str, str]:
    """The `-D NAME=VALUE` items of a command line."""
    return pairs(items, "-D")


def typed(
    cls: type[Spec], given: Mapping[str, object], *, command_line: bool = True
) -> dict[str, object]:
    """The constants `given` for spec class `cls`, typed and checked: ConfigError for a name it
    does not declare, text that is not of the constant's type, or a value out of its range or
    choices. `command_line`: the values are `-D` text, and the errors say so."""
    declared = constants_of(cls)
    values: dict[str, object] = {}
    for name, value in given.items():
        const = declared.get(name)
        if const is None:
            known = ", ".join(declared) or "none"
            if not command_line:
                raise ConfigError(f"{cls.__name__} has no constant {name!r} (constants: {known})")
            close = difflib.get_close_matches(name, list(declared), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise ConfigError(
                f"-D {name}: {cls.__name__} has no constant {name!r} (constants: {known}){hint}"
            )
        if isinstance(value, str) and (command_line or const.type is not str):
            try:
                value = const.parse(value)
            except ValueError as exc:
                where = "-D " if command_line else ""
                raise ConfigError(f"{where}{name}={given[name]}: {exc}") from None
        if type(value) is not const.type:
            kind = const.type.__name__
            raise ConfigError(f"constant {name} is a {kind}, not {type(value).__name__}")
        refused = const.refuse(value)  # type: ignore[arg-type]
        if refused is not None:
            raise ConfigError(f"-D {refused}" if command_line else f"constant {refused}")
        values[name] = value
    return values
