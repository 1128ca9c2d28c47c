"""The `@on` templates of sequence charts: "{s.leader}" and "voter {v}" filled from an
action's parameters and the state it fires in, and checked when the spec is compiled."""

from __future__ import annotations

import re
import string
from typing import Any

from checker.errors import SpecError
from checker.result import Event
from checker.spec import On


class _TemplateFormatter(string.Formatter):
    """str.format, except that an index may name a parameter: "voter {s.leader_id[f]}"."""

    _ACCESSOR = re.compile(r"\.(\w+)|\[(\w+)\]")

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        root = re.match(r"\w*", field_name).group(0)  # type: ignore[union-attr]
        value = kwargs[root]
        for attr, key in self._ACCESSOR.findall(field_name[len(root) :]):
            if attr:
                value = getattr(value, attr)
            else:
                value = value[kwargs[key] if key in kwargs else int(key) if key.isdigit() else key]
        return value, root


_TEMPLATES = _TemplateFormatter()


def check(where: str, on: On, params: tuple[str, ...]) -> None:
    """Raise SpecError unless every {name} in an @on template is a parameter or `s`."""
    known = {*params, "s"}
    for template in (on.process, on.sends, on.receives, on.calls):
        if template is None:
            continue
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
        except ValueError as exc:
            raise SpecError(f"{where}: @on template {template!r}: {exc}") from None
        for field in fields:
            root = re.split(r"[.\[]", field, maxsplit=1)[0]
            if root not in known:
                raise SpecError(
                    f"{where}: @on template {template!r} names {root!r}; it may use"
                    f" {', '.join(sorted(known))}"
                )


def event(on: On, names: dict[str, Any]) -> Event:
    """The event of an action annotated with `on`, its parameters and the state (`s`) as
    `names`; a template that does not apply raises what str.format raises."""
    process = _TEMPLATES.format(on.process, **names)
    for kind, peer in (("send", on.sends), ("receive", on.receives), ("call", on.calls)):
        if peer is not None:
            return Event(process, kind, _TEMPLATES.format(peer, **names), on.message)
    return Event(process, "local")
