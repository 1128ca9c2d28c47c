"""What depends on the constants alone is computed once (TLC computes a constant definition
once): a spec's property (checker.spec._ConstantLevel) and a domain function that never reads
its state (checker.compiled._reads_state and _kept); and a refinement maps each state once
while it remembers it (checker.steps.Refines.kept_mapped). The counts stay those of computing
them in every state, with 1 and 2 workers. TLC's CONSTRAINT, asked of each candidate by the
C loop (checker.model.expansion._outside_by), says what it answered or raised."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Record, Spec, action, constant, constraint, invariant, refines
from checker.compiled import _reads_state
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options
from checker.values import fast
from checker.values.encoding import canonical_order

CALLS: dict[str, int] = {}


def called(name: str) -> None:
    CALLS[name] = CALLS.get(name, 0) + 1


class Tokens(Spec):
    """`n` processes pass a token to any other process (`others`, TLA+'s Proc \\ {p}),
    counting hops up to `hops`."""

    n = constant(4, "processes")
    hops = constant(6, "hops at most")

    @property
    def Proc(self) -> tuple[int, ...]:
        called("Proc")
        return tuple(range(self.n))

    @property
    def log(self) -> list[int]:  # mutable: computed again each time
        called("log")
        return []

    def others(self, s, p):
        called("others")
        return [q for q in self.Proc if q != p]

    def reachable_from(self, s, p):  # reads the state: called in every state
        called("reachable_from")
        return [q for q in self.Proc if q != p and s.hop < self.hops]

    def init(self):
        return Record(holder=0, hop=0)

    @action(p="Proc", q="others")
    def pass_token(self, s, p, q):
        if s.holder != p or s.hop >= self.hops or self.log:
            return None
        return s.replace(holder=q, hop=s.hop + 1)

    @invariant
    def holder_is_a_process(self, s):
        return s.holder in self.Proc


class TokensReading(Tokens):
    """Tokens with a domain that reads the state: the same states."""

    @action(p="Proc", q="reachable_from")
    def pass_token(self, s, p, q):
        return super().pass_token(s, p, q)


def counts(spec: Spec, workers: int) -> tuple[int, int, int]:
    result = check(Model(spec), Options(workers=workers, deadlock=False))
    assert result.verdict == "ok"
    return result.distinct_states, result.states_generated, result.depth


@pytest.mark.parametrize("workers", [1, 2])
def test_a_domain_that_never_reads_the_state_gives_the_same_states(workers):
    assert counts(Tokens(), workers) == counts(TokensReading(), workers)


def test_constant_level_definitions_are_computed_once_per_value():
    CALLS.clear()
    result = check(Model(Tokens()), Options(workers=1, deadlock=False))
    assert (result.distinct_states, result.states_generated) == (24, 61)  # 1 + 3 + 5 * 4 states
    # `Proc` once (its value is a tuple: kept); `others` once per p (4), not per state
    assert CALLS["Proc"] == 1
    assert CALLS["others"] == 4
    # a list is not kept: computed in each call of pass_token past its guard (3 per state
    # before the last hop)
    assert CALLS["log"] >= 60
    CALLS.clear()
    check(Model(TokensReading()), Options(workers=1, deadlock=False))
    assert CALLS["reachable_from"] >= 24 * 4  # per state and p


def test_setting_a_constant_computes_a_property_again():
    spec = Tokens()
    assert spec.Proc == (0, 1, 2, 3)
    spec.n = 2
    assert spec.Proc == (0, 1)
    assert isinstance(Tokens.Proc, property)  # (on the class: the property itself)


def test_an_override_calling_super_keeps_its_own_value():
    class More(Tokens):
        @property
        def Proc(self):
            return super().Proc + (9,)

    spec = More()
    assert spec.Proc == (0, 1, 2, 3, 9)
    assert spec.Proc == (0, 1, 2, 3, 9)  # again: the base's value was not kept as its own


def test_which_domains_read_their_state():
    spec = Tokens()
    assert not _reads_state(spec.others, spec)
    assert _reads_state(spec.reachable_from, spec)
    assert not _reads_state(lambda s, p: range(p), spec)
    assert _reads_state(lambda s, p: [s.x, p], spec)
    assert _reads_state(lambda s, p: [q for q in s.xs if q != p], spec)  # in a comprehension
    assert _reads_state(lambda s, p: [q for q in range(p) if q != s.x], spec)  # (its scope's)
    assert _reads_state(lambda s, p: locals()["s"], spec)
    assert _reads_state(lambda *args: args, spec)
    assert _reads_state(Tokens().others, spec)  # another spec object's method
    k = 3
    assert _reads_state(lambda s, p: range(k), spec)  # a free variable: may change


class Sum(Spec):
    """n counts up to 6."""

    def init(self):
        return Record(n=0)

    @action
    def inc(self, s):
        return s.replace(n=s.n + 1) if s.n < 6 else None


class Grid(Spec):
    """x and y each go up to 3: 16 states, most reached by two steps; it refines Sum (the
    mapping x + y), each step an abstract `inc`."""

    def init(self):
        return Record(x=0, y=0)

    @action(field=("x", "y"))
    def inc(self, s, field):
        return None if s[field] == 3 else s.replace(**{field: s[field] + 1})

    def total(self, s):
        called("total")
        return Record(n=s.x + s.y)

    sums = refines(Sum, "total")


def test_a_refinement_maps_each_state_once_while_it_is_remembered():
    CALLS.clear()
    model = Model(Grid())
    result = check(model, Options(workers=1, deadlock=False))
    assert (result.verdict, result.distinct_states, result.states_generated) == ("ok", 16, 25)
    # each state once (16), the initial state once more (checked as an initial state); not
    # once per step into it and once more when it is expanded (24 + 16 + 1)
    assert CALLS["total"] == 17
    # forgotten once the search is over (the cyclic collector would walk them)
    (refinement,) = model.steps.checks
    assert (refinement._mapped, refinement._successors) == ({}, {})


class Bounded(Spec):
    """x counts up to 5; TLC's CONSTRAINT x <= 3 (`small`), which answers `answer` at x = 2."""

    answer = constant("", "what small answers at x = 2: '' as it should, 'zero', 'raise'")

    def init(self):
        return Record(x=0)

    @action
    def up(self, s):
        return s.replace(x=s.x + 1) if s.x < 5 else None

    @constraint(admit=False)
    def small(self, s):
        if s.x == 2 and self.answer == "zero":
            return 0
        if s.x == 2 and self.answer == "raise":
            raise ValueError("two")
        return s.x <= 3


@pytest.mark.parametrize(
    "answer, verdict, message",
    [
        ("", "ok", None),
        ("zero", "error", "returned 0; a constraint returns True or False"),
        ("raise", "error", "raised ValueError: two"),
    ],
)
def test_tlcs_constraint_asked_of_each_candidate_says_what_it_answered(answer, verdict, message):
    result = check(Model(Bounded(answer=answer)), Options(workers=1, deadlock=False))
    assert result.verdict == verdict
    if message is None:
        assert (result.distinct_states, result.states_generated) == (4, 5)  # 0..3 (4 dropped)
    else:
        assert (result.error.kind, result.error.name) == ("constraint", "small")
        assert message in result.error.message


# -- a set domain ordered in C (checker/hot/domains.c: sorted_encoded) and in Python --------

VALUES = st.one_of(
    st.integers(-3, 3),
    st.text("ab", max_size=2),
    st.booleans(),
    st.none(),
    st.tuples(st.integers(0, 2), st.text("ab", max_size=1)),
    st.frozensets(st.integers(0, 3), max_size=3),
    st.builds(lambda t, c: Record(type=t, color=c), st.sampled_from("qr"), st.integers(0, 2)),
)


class Picks(Spec):
    """One action picks any value of a set the state holds: a new set object each time
    (never the order cached by the set's identity), or the state's frozenset itself."""

    def init(self):
        return Record(pool=frozenset(), last=None)

    @action(v=lambda s: {x for x in s.pool})
    def pick(self, s, v):
        return s.replace(last=v)

    @action(v=lambda s: s.pool, w=lambda s, v: {v, s.last} - {None})
    def pair(self, s, v, w):
        return s.replace(last=(v, w))


@pytest.mark.skipif(not fast.C, reason="checker._hot is not built (or MC_PURE_PYTHON=1)")
@settings(max_examples=300, deadline=None)
@given(st.frozensets(VALUES, max_size=8), VALUES)
def test_a_set_domain_is_in_the_same_order_in_c_and_in_python(items, last):
    model = Model(Picks())
    model.initial_states()
    state = Record(pool=items, last=last)
    answers = []
    for function in fast.TWINS["successors"]:
        states: list = []
        actions: list = []
        bindings: list = []
        function(model.context(), state, states, actions, bindings)
        answers.append((states, actions, bindings))
    assert answers[0] == answers[1]
    picked = [b[0] for a, b in zip(answers[0][1], answers[0][2]) if a == 0]
    assert picked == canonical_order(items)


class Steps(Spec):
    """x goes up by 1 or 2 to 6, `y` counts the steps (hidden by the view); TLC's CONSTRAINT
    x <= 4."""

    def init(self):
        return Record(x=0, y=0)

    @action(d=(1, 2))
    def up(self, s, d):
        return s.replace(x=s.x + d, y=s.y + 1) if s.x + d <= 6 else None

    def view(self, s):
        return s.x

    @constraint(admit=False)
    def low(self, s):
        return s.x <= 4


@pytest.mark.parametrize("workers", [1, 2])
def test_a_view_and_tlcs_constraint_on_the_general_path_and_in_c(workers):
    """Model.by_view is off with TLC's constraints: General.exclude, which drops candidates
    but has no views to drop, is never asked with them (states met by views would misalign).
    Every state on the general path (expanded twice) gives the counts of the C loop."""
    found = []
    for recheck in (0, 1):
        model = Model(Steps())
        assert not model.by_view
        model.recheck_every = recheck
        result = check(model, Options(workers=workers, deadlock=False))
        found.append((result.verdict, result.distinct_states, result.states_generated))
    # x in 0..4 met (5 and 6 outside: generated, not states of the search); 1 + 5 x 2 steps
    assert found[0] == found[1] == ("ok", 5, 11)
