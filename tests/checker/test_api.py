"""The API gaps met translating a TLA+ Kafka spec: domains that depend on earlier
parameters, a spec's own order of actions, checking with no invariant, picking the class of a
file that holds several (FILE::Class), and the canonical order of set elements."""

from __future__ import annotations

import pytest

from checker import Record, Spec, action, canonical_order, invariant
from checker.errors import SpecError
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options
from tests.checker.toys import FromZero
from tests.conftest import SPECS


class Isr(Spec):
    """TLA+: \\E leader \\in R : \\E replica \\in isr(leader) \\ {leader} :
    Shrink(leader, replica)."""

    def init(self):
        return Record(isr=Record({0: frozenset({0, 1, 2}), 1: frozenset({1})}), shrunk=())

    @action(leader=(0, 1), replica=lambda s, leader: s.isr[leader] - {leader})
    def shrink(self, s, leader, replica):
        isr = s.isr[leader] - {replica}
        return s.replace(isr=Record({**s.isr, leader: isr}), shrunk=s.shrunk + (replica,))

    @invariant
    def leaders_stay(self, s):
        return all(leader in members for leader, members in s.isr.items())


def test_a_domain_may_depend_on_earlier_parameters_and_every_parameter_is_in_the_trace():
    model = Model(Isr())
    (shrink,) = model.actions
    state = model.initial_states()[0]
    assert shrink.bindings(state) == ((0, 1), (0, 2))  # leader 1's ISR is itself alone
    result = check(model, Options(deadlock=False))
    assert result.verdict == "ok" and result.distinct_states == 1 + 2 + 2
    bad = check(Model(type("Bad", (Isr,), {"leaders_stay": invariant(lambda s: not s.shrunk)})()))
    assert [(s.action, s.params) for s in bad.trace] == [
        (None, {}),
        ("shrink", {"leader": 0, "replica": 1}),
    ]


def test_a_domain_that_names_no_earlier_parameter_is_refused():
    class Later(Isr):
        @action(replica=lambda s, leader: (), leader=(0, 1))
        def shrink(self, s, replica, leader):
            return None

    with pytest.raises(
        SpecError,
        match=r"action shrink: the domain of 'replica' takes 'leader',"
        r" which is no earlier parameter .*none before it",
    ):
        Model(Later())


class Ordered(FromZero):
    """Actions a, b; a subclass adds c and puts it first."""

    @action
    def a(self, s):
        return s.replace(x=1) if s.x == 0 else None

    @action
    def b(self, s):
        return s.replace(x=1) if s.x == 0 else None


class CFirst(Ordered):
    action_order = ("c", "a", "b")

    @action
    def c(self, s):
        return s.replace(x=1) if s.x == 0 else None


def test_a_subclass_keeps_its_own_order_of_actions():
    assert [a.name for a in Model(Ordered()).actions] == ["a", "b"]
    model = Model(CFirst())
    assert [a.name for a in model.actions] == ["c", "a", "b"]
    result = check(model, Options(deadlock=False))
    assert [s.action for s in result.trace] == [] and result.coverage[0].name == "c"
    assert result.coverage[0].new == 1  # x = 1 is reached by c first


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (("c", "a"), r"leaves out b: name every action once"),
        (("c", "a", "b", "a"), r"names 'a' twice"),
        (("c", "a", "bb"), r"names 'bb', which is no action; did you mean 'b'\?"),
    ],
)
def test_an_order_must_name_every_action_once(order, message):
    spec = type("Bad", (CFirst,), {"action_order": order})
    with pytest.raises(SpecError, match=message):
        Model(spec())


def test_checking_with_no_invariant_from_the_command_line(mc):
    die_hard = SPECS / "examples" / "die_hard.py"
    run = mc("check", die_hard, "--no-invariants", "--progress", "0")
    assert run.code == 0
    assert "  invariants: none" in run.out.splitlines()
    assert "No invariant to check; explored 16 distinct states." in run.out
    both = mc("check", die_hard, "--no-invariants", "--invariant", "type_ok")
    assert both.code == 151 and "--invariant and --no-invariants exclude each other" in both.err


def test_file_colon_colon_class_picks_a_class_of_a_spec_family(mc):
    kip903 = SPECS / "light" / "kip903.py"
    run = mc("check", f"{kip903}::Kip841", "--progress", "0", "--no-liveness")
    assert run.code == 0 and run.out.startswith(f"Checking Kip841 ({kip903})")
    assert "All invariants hold over 8,957 distinct states." in run.out
    missing = mc("check", f"{kip903}::Nope")
    assert missing.code == 150
    assert f"{kip903}: no spec class Nope with actions here (spec classes: Kip841, Kip903)" in (
        missing.err
    )
    listed = mc("list", f"{SPECS / 'kip966.py'}::Kip903")
    assert listed.code == 0 and listed.out.startswith("Kip903: ")


def test_canonical_order_is_exported_and_independent_of_the_hash_seed():
    records = {Record(a=2), Record(a=1), Record(a=3, b=1)}
    assert canonical_order(records) == canonical_order(list(reversed(list(records))))
    assert canonical_order({3, 1, 2}) == [1, 2, 3]
