"""The kinds of state variables (checker.values.kinds): inferred from the initial states, declared
where that is not enough, and checked on every successor at the action that built it, in C
and in pure Python alike."""

from __future__ import annotations

from typing import TypedDict

import pytest

from checker import Record, Spec, action, invariant, put
from checker.errors import SpecError
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options
from checker.values import kinds as K
from checker.values.record import freeze
from tests.checker.toys import FromZero


class Replica(TypedDict):
    fetch_offset: int
    broker_epoch: int


def kind_of(value) -> str:
    return K.describe(K.infer(freeze(value)))


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (1, "int"),
        (True, "bool"),
        ("a", "str"),
        (b"a", "bytes"),
        (None, "None"),
        ((1, 2), "tuple of int"),
        ((), "tuple"),
        (((1,), ()), "tuple of tuple of int"),
        ((None, 1), "tuple of (int or None)"),
        ((1, "a"), "tuple (int, str)"),
        (frozenset({1, 2}), "frozenset of int"),
        (frozenset(), "frozenset"),
        ({0: 1, 1: 2}, "map int -> int"),
        (Record(), "record"),
        (Record(a=1, b=frozenset({"x"})), "record {a: int, b: frozenset of str}"),
    ],
)
def test_kinds_are_inferred_from_values(value, kind):
    assert kind_of(value) == kind


def test_bool_and_int_do_not_mix_even_though_they_compare_equal():
    with pytest.raises(K.Clash) as clash:
        K.infer((1, True))
    assert clash.value.mixed


@pytest.mark.parametrize(
    ("hint", "kind"),
    [
        (int | None, "int or None"),
        (tuple[int | None, ...], "tuple of (int or None)"),
        (tuple[int, str], "tuple (int, str)"),
        (frozenset[str], "frozenset of str"),
        (dict[int, int], "map int -> int"),
        (Replica, "record {broker_epoch: int, fetch_offset: int}"),
        (Record, "record"),
        (object, "anything"),
    ],
)
def test_declared_types(hint, kind):
    declared = K.declared(hint)
    assert K.describe(declared) == kind
    if declared.tag != K.RECORD:  # a record's fields are not written back
        assert K.declared(eval(K.python_type(declared), {"Record": Record})) == declared


def test_a_type_mc_does_not_know_is_refused():
    with pytest.raises(K.TypeDeclarationError, match=r"the only union mc knows is X \| None"):
        K.declared(int | str)
    with pytest.raises(K.TypeDeclarationError, match="no type mc knows"):
        K.declared(list[int])


# -- the run -------------------------------------------------------------------------------


class Faults(Spec):
    """The issue's mistake: a fault counter set to True, which compares equal to 1."""

    def init(self):
        return Record(faults=Record(crash=0, loss=0), leader=0)

    @action(f=("crash", "loss"))
    def fault(self, s, f):
        if s.faults[f] >= 1:
            return None
        return s.replace(faults=put(s.faults, f, True))

    @invariant
    def bounded(self, s):
        return all(v <= 1 for v in s.faults.values())


def test_a_bool_where_an_int_was_is_reported_at_the_action():
    result = check(Model(Faults()))
    assert result.verdict == "error" and result.exit_code == 75
    assert (result.error.kind, result.error.name, result.error.params) == (
        "action",
        "fault",
        {"f": "crash"},
    )
    assert result.error.message == (
        "changed the kind of faults.crash: int in the initial states, bool in the state it"
        " built (faults.crash = True)"
    )
    assert [s.action for s in result.trace] == [None]  # the parent: no invariant saw it


class FaultsListed(Faults):
    """The same mistake in the second state of a list an action returns."""

    @action(f=("crash", "loss"))
    def fault(self, s, f):
        if s.faults[f] >= 1:
            return []
        return [s.replace(leader=1), s.replace(faults=put(s.faults, f, True))]


def test_a_bool_in_a_listed_successor_is_reported_at_the_action():
    result = check(Model(FaultsListed()))
    assert result.verdict == "error" and result.exit_code == 75
    assert (result.error.name, result.error.params) == ("fault", {"f": "crash"})
    assert "faults.crash: int in the initial states, bool in the state it built" in (
        result.error.message
    )


class Listed(Spec):
    """Actions returning lists: empty (not enabled), several states, and a wrong item."""

    broken = False

    def init(self):
        return Record(x=0, y=0)

    @action(d=(1, 2))
    def step(self, s, d):
        if s.x >= 2:
            return []
        return [s.replace(x=s.x + 1)] + ([s.replace(y=s.y + d)] if s.y + d <= 3 else [])

    @action
    def odd(self, s):
        return [s.replace(y=-1), "oops"] if self.broken and s.x == 1 else []


class ListedBroken(Listed):
    broken = True


def test_listed_successors_are_all_taken_and_an_empty_list_is_not_enabled():
    result = check(Model(Listed()), Options(deadlock=False))
    assert result.verdict == "ok" and result.distinct_states == 12  # x in 0..2, y in 0..3
    result = check(Model(Listed()))  # at x = 2, both actions return []: a deadlock
    assert result.verdict == "deadlock"
    assert [s.action for s in result.trace] == [None, "step", "step"]
    result = check(Model(ListedBroken()))
    assert result.verdict == "error" and result.error.name == "odd"
    assert "returned [" in result.error.message


class Shadowed(FromZero):
    """x = 1 and x = True are equal: an expander drops the second as a state it met. The
    kind check is on every successor, so the mistake is found whatever the expanders met."""

    @action
    def one(self, s):
        return s.replace(x=1) if s.x == 0 else None

    @action
    def true(self, s):
        return s.replace(x=True) if s.x == 0 else None


@pytest.mark.parametrize("options", [{}, {"workers": 2}, {"live_bytes": 0}])
def test_a_bool_equal_to_a_state_met_is_still_caught(options):
    result = check(Model(Shadowed()), Options(**options))
    assert result.verdict == "error" and result.error.name == "true"
    assert "x: int in the initial states, bool in the state it built" in result.error.message


class Sorted(Spec):
    def init(self):
        return Record(isr=frozenset({0}))

    @action(b=(0, 1))
    def join(self, s, b):
        return None if b in s.isr else s.replace(isr=sorted(s.isr | {b}))


def test_a_list_frozen_to_a_tuple_where_a_frozenset_was():
    result = check(Model(Sorted()))
    assert result.error.message == (
        "changed the kind of isr: frozenset of int in the initial states, tuple of int in the"
        " state it built (isr = (0, 1))"
    )


class Leaderless(Spec):
    def init(self):
        return Record(leader=0, epochs=(1, 1))

    @action
    def lose(self, s):
        return s.replace(leader=None) if s.leader is not None else None

    @action(b=(0, 1))
    def crash(self, s, b):
        return s.replace(epochs=put(s.epochs, b, None)) if s.epochs[b] is not None else None


def test_none_where_the_initial_states_had_a_value_names_the_declaration_to_write():
    result = check(Model(Leaderless()), Options(deadlock=False))
    assert result.error.message == (
        "changed the kind of leader: int in the initial states, None in the state it built"
        " (leader = None); if leader may hold None there, declare it in the spec class:"
        " leader: int | None"
    )

    class Declared(Leaderless):
        leader: int | None

    nested = check(Model(Declared()), Options(deadlock=False))
    assert nested.error.message == (
        "changed the kind of epochs[0]: int in the initial states, None in the state it built"
        " (epochs[0] = None); if epochs may hold None there, declare it in the spec class:"
        " epochs: tuple[int | None, ...]"
    )

    class Both(Declared):
        epochs: tuple[int | None, ...]

    assert check(Model(Both()), Options(deadlock=False)).verdict == "ok"


def test_declared_types_must_fit_the_initial_states_and_name_variables():
    class Wrong(Leaderless):
        leader: str

    result = check(Model(Wrong()))
    assert result.verdict == "error" and result.error.kind == "init"
    assert result.error.message == (
        "returned states that mc cannot type: an initial state has leader = 0 (int), not str"
        " as declared"
    )

    class Misspelt(Leaderless):
        leadr: int | None

    with pytest.raises(
        SpecError,
        match=r"Misspelt declares the type of 'leadr', which is not a"
        r" variable of its states \(variables: epochs, leader\); did you mean"
        r" 'leader'\?",
    ):
        check(Model(Misspelt()))

    class Unknown(Leaderless):
        leader: list[int]

    with pytest.raises(SpecError, match=r"Unknown.leader: list\[int\] is no type mc knows"):
        Model(Unknown())


def test_initial_states_that_mix_bool_and_int_are_refused():
    class Mixed(Leaderless):
        def init(self):
            return [Record(leader=0, epochs=(1, 1)), Record(leader=True, epochs=(1, 1))]

    result = check(Model(Mixed()))
    assert result.verdict == "error" and result.error.kind == "init"
    assert "leader mixes bool and int values (0, True): True == 1 in Python" in (
        result.error.message
    )


class Appending(Spec):
    """A list inside a built tuple is frozen by the engine (as put() would): no kind error."""

    def init(self):
        return Record(log=((0,),))

    @action
    def append(self, s):
        return s.replace(log=(s.log[0], [1])) if len(s.log) == 1 else None


def test_a_list_inside_a_tuple_is_frozen_before_its_kind_is_judged():
    result = check(Model(Appending()), Options(deadlock=False))
    assert result.verdict == "ok" and result.distinct_states == 2


class Acceptors(Spec):
    """TLA+'s `[a \\in Acceptor |-> 0]` over model values: a map keyed by names."""

    x: dict[str, int]

    def init(self):
        return Record(x={"a1": 0, "a2": 0})

    @action(a=("a1", "a2"))
    def bump(self, s, a):
        return s.replace(x=put(s.x, a, s.x[a] + 1)) if s.x[a] < 2 else None

    @action
    def add_a3(self, s):
        return s.replace(x=put(s.x, "a-3", 0)) if "a-3" not in s.x else None


def test_a_map_keyed_by_names_is_a_map_as_declared():
    result = check(Model(Acceptors()), Options(deadlock=False))
    assert (result.verdict, result.distinct_states) == ("ok", 18)
    names = Record(a1=0, a2=1)
    str_to_int = K.Kind(K.MAP, K.K_STR, K.K_INT)
    for conforms in (K.conforms, K.conforms_python):
        assert conforms(names, K.MISSING, str_to_int)
        assert not conforms(Record(a1=0, a2="b"), K.MISSING, str_to_int)
        assert not conforms(names, K.MISSING, K.Kind(K.MAP, K.K_INT, K.K_INT))


def test_a_record_where_a_map_of_int_keys_is_declared_is_shown_as_a_record():
    class IntKeys(Acceptors):
        x: dict[int, int]

    result = check(Model(IntKeys()))
    assert result.error.message == (
        "returned states that mc cannot type: an initial state has x = {a1: 0, a2: 0} (record"
        " {a1: int, a2: int}), not map int -> int as declared"
    )
