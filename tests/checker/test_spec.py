"""The spec-writing API: constants, domains, overriding actions, shared invariants."""

from __future__ import annotations

import pytest

from checker import Record, Spec, action, constant, invariant
from checker.errors import SpecError
from checker.local.bfs import check
from checker.model import Model
from checker.spec import Constant
from tests.checker.overrides import assert_override_rules
from tests.checker.toys import FromZero


class Base(Spec):
    n = constant(3, "values")

    @property
    def values(self):
        return range(self.n)

    def init(self):
        return Record(x=0, log=())

    @action(v="values")
    def write(self, s, v):
        if len(s.log) >= 2:
            return None
        return s.replace(log=s.log + (v,))

    @action
    def bump(self, s):
        return s.replace(x=1) if s.x == 0 else None


def log_is_short(s):
    return len(s.log) <= 2


class Layer(Base):
    @action(v=("a",))
    def write(self, s, v):  # overrides the base action, keeps its position
        return None if s.log else s.replace(log=(v,))

    bump = None  # removes the base action

    @action
    def reset(self, s):
        return s.replace(log=()) if s.log else None

    short = invariant(log_is_short)


def test_constants_are_per_instance_and_typed():
    assert Base().n == 3 and Base(n=2).n == 2 and Base.n.default == 3
    assert isinstance(Base.n, Constant)
    assert Base(n=5).constants == {"n": 5}
    with pytest.raises(TypeError, match="constant n is a int"):
        Base(n="5")
    with pytest.raises(KeyError):
        Base(m=1)


@pytest.mark.parametrize(
    ("default", "text", "value"),
    [
        (1, "7", 7),
        (1, "0x10", 16),
        (True, "false", False),
        (False, "YES", True),
        ("a", "b c", "b c"),
    ],
)
def test_constant_parsing(default, text, value):
    assert Constant(default).parse(text) == value


@pytest.mark.parametrize(("default", "text"), [(1, "x"), (1, "1.5"), (True, "maybe")])
def test_constant_parsing_refuses_bad_values(default, text):
    with pytest.raises(ValueError):
        Constant(default).parse(text)


def test_constant_defaults_must_be_int_bool_or_str():
    with pytest.raises(TypeError):
        constant(1.5)


def test_string_domains_name_spec_attributes():
    model = Model(Base(n=2))
    assert [a.name for a in model.actions] == ["write", "bump"]
    assert model.actions[0].static_bindings == ((0,), (1,))
    assert model.actions[0].domains == ((0, 1),)
    # logs of length <= 2 over {0, 1}: 7, times x in {0, 1}
    assert check(model).distinct_states == 14


def test_overrides_keep_position_and_none_removes():
    model = Model(Layer())
    assert [a.name for a in model.actions] == ["write", "reset"]
    assert [i.name for i in model.invariants] == ["short"]
    assert check(model).distinct_states == 2


def test_undecorated_override_of_an_action_is_an_error():
    class Forgot(Base):
        def write(self, s, v):
            return None

    with pytest.raises(SpecError, match=r"Forgot\.write overrides an action"):
        Model(Forgot())


def test_domain_mistakes_are_spec_errors():
    class Missing(FromZero):
        @action
        def step(self, s, b):
            return None

    with pytest.raises(SpecError, match="parameter 'b' has no domain"):
        Model(Missing())

    class Extra(Missing):
        @action(b=(1,), c=(2,))
        def step(self, s, b):
            return None

    with pytest.raises(SpecError, match="domain for 'c', not a parameter"):
        Model(Extra())

    class NoAttr(Missing):
        @action(b="brokers")
        def step(self, s, b):
            return None

    with pytest.raises(SpecError, match="'brokers' of 'b' is not a spec attribute"):
        Model(NoAttr())

    class NotIterable(Missing):
        count = constant(3)

        @action(b="count")
        def step(self, s, b):
            return None

    with pytest.raises(SpecError, match="must be an iterable"):
        Model(NotIterable())


def test_a_spec_without_actions_or_init_is_refused():
    class Empty(Spec):
        def init(self):
            return Record(x=0)

    with pytest.raises(SpecError, match="declares no actions"):
        Model(Empty())

    class NoInit(Spec):
        @action
        def step(self, s):
            return None

    with pytest.raises(SpecError, match="no initial state"):
        Model(NoInit()).initial_states()


def test_undecorated_override_of_an_invariant_is_an_error():
    assert_override_rules(Layer, "short", "invariant", lambda model: model.invariants)


def test_on_templates_may_only_name_parameters_and_the_state():
    from checker import on

    class Typo(Base):
        @action(v="values")
        @on("broker {w}")
        def write(self, s, v):
            return None

    with pytest.raises(SpecError, match=r"names 'w'; it may use s, v"):
        Model(Typo())


def test_decimal_constants_may_have_leading_zeros():
    assert Constant(1).parse("010") == 10 and Constant(1).parse("1_000") == 1000
