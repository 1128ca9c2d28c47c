"""The override rules every kind of declaration follows (invariants, constraints, ...)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from checker import Spec
from checker.errors import SpecError
from checker.model import Model


def assert_override_rules(
    base: type[Spec], name: str, kind: str, declared: Callable[[Model], tuple]
) -> None:
    """A subclass of `base` that overrides its `kind` `name` without the decorator is
    refused; one that sets `name = None` removes it (`declared` of its model is then empty)."""
    undecorated = type("Undecorated", (base,), {name: lambda self, s: True})
    with pytest.raises(SpecError, match=rf"Undecorated\.{name} overrides an? {kind}"):
        Model(undecorated())
    removed = type("Removed", (base,), {name: None})
    assert declared(Model(removed())) == ()
