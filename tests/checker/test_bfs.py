"""The local engine (checker.local.bfs) on tiny specs whose state spaces can be counted by hand."""

from __future__ import annotations

import gc

import pytest

from checker import Record, Spec, action, constant, invariant, terminal
from checker.errors import ExitCode, NondeterminismError
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options
from tests.checker.toys import FromZero
from tests.conftest import SPECS


class Counter(Spec):
    """x counts up to `top` by 1 or 2, then stops (a deadlock)."""

    top = constant(4)
    bad = constant(-1, "a value the invariant forbids")

    def init(self):
        return Record(x=0)

    @action(step=(1, 2))
    def add(self, s, step):
        if s.x + step > self.top:
            return None
        return s.replace(x=s.x + step)

    @invariant
    def not_bad(self, s):
        return s.x != self.bad


def run(spec: Spec, **options) -> object:
    """Checked without deadlock detection (these specs stop), unless asked."""
    options.setdefault("deadlock", False)
    return check(Model(spec), Options(**options))


def actions(result) -> list:
    return [step.action for step in result.trace[1:]]


def test_counts_of_a_hand_countable_space():
    # States 0..4; edges: +1 from 0..3 (4) and +2 from 0..2 (3); 1 initial state.
    result = run(Counter())
    assert result.verdict == "ok" and result.exit_code == ExitCode.OK
    assert result.distinct_states == 5
    assert result.states_generated == 1 + 4 + 3
    assert result.depth == 3  # 0 -> 2 -> 4: three levels
    assert [(c.name, c.fired, c.new) for c in result.coverage] == [("add", 7, 4)]


def test_violation_trace_is_shortest_and_first_in_action_order():
    # x = 3 is reachable as 1+2 and 2+1 (both length 2): the first expanded parent wins (x=1,
    # found by step 1 first), then step 2.
    result = run(Counter(bad=3))
    assert result.verdict == "violation" and result.invariant == "not_bad"
    assert result.exit_code == ExitCode.VIOLATION
    assert [s.state.x for s in result.trace] == [0, 1, 3]
    assert [s.params for s in result.trace[1:]] == [{"step": 1}, {"step": 2}]
    assert result.depth == 3


def test_violation_in_an_initial_state():
    result = run(Counter(bad=0))
    assert result.verdict == "violation"
    assert len(result.trace) == 1 and result.trace[0].action is None
    assert result.depth == 1 and result.distinct_states == 1


def test_deadlock_is_reported_by_default_as_in_tlc():
    result = check(Model(Counter()))
    assert result.verdict == "deadlock" and result.exit_code == ExitCode.DEADLOCK
    assert [s.state.x for s in result.trace] == [0, 2, 4]  # first dead state found: x=4
    assert run(Counter(), deadlock=False).verdict == "ok"  # --no-deadlock


class Stopping(Counter):
    """Counter whose end, x == top, is an intended final state."""

    @terminal
    def at_top(self, s):
        return s.x == self.top


def test_an_intended_final_state_is_no_deadlock_and_others_still_are():
    result = check(Model(Stopping()))
    assert result.verdict == "ok" and result.distinct_states == 5
    # With top = 4 and a step of 2 only from even x, an odd x stops early: still a deadlock.
    odd = check(Model(OddStop()))
    assert odd.verdict == "deadlock" and [s.state.x for s in odd.trace] == [0, 1]


class OddStop(Stopping):
    """An odd x cannot move: x = 1 stops short of top, a deadlock."""

    @action(step=(1, 2))
    def add(self, s, step):
        if s.x % 2 == 1 or s.x + step > self.top:
            return None
        return s.replace(x=s.x + step)


def test_max_states_bound_is_not_a_pass():
    result = run(Counter(), max_states=3)
    assert result.verdict == "incomplete" and result.exit_code == ExitCode.INCOMPLETE
    assert result.distinct_states == 3
    assert "--max-states 3" in result.bound


def test_max_depth_bound_is_not_a_pass_unless_nothing_was_cut():
    cut = run(Counter(), max_depth=2)
    assert cut.verdict == "incomplete" and "--max-depth 2" in cut.bound
    assert cut.distinct_states == 3  # levels 1 and 2: x in {0, 1, 2}
    whole = run(Counter(), max_depth=3)
    assert whole.verdict == "ok" and whole.distinct_states == 5


class Branching(Spec):
    """One action with two successors per state: a binary tree of depth 3."""

    def init(self):
        return [Record(path=()), Record(path=())]  # a duplicate initial state counts once

    @action
    def choose(self, s):
        if len(s.path) == 3:
            return None
        return [s.replace(path=s.path + (bit,)) for bit in (0, 1)]

    @invariant
    def not_110(self, s):
        return s.path != (1, 1, 0)


def test_nondeterministic_actions_and_duplicate_initial_states():
    result = run(Branching(), deadlock=False)
    assert result.verdict == "violation"
    assert [s.state.path for s in result.trace] == [(), (1,), (1, 1), (1, 1, 0)]
    ok = check(Model(Branching(), invariants=[]), Options(deadlock=False))
    assert ok.distinct_states == 1 + 2 + 4 + 8
    assert ok.states_generated == 2 + 2 + 4 + 8


class Messages(Spec):
    """A domain that is a function of the state: deliver any message in flight."""

    def init(self):
        return Record(inflight=frozenset({"c", "a", "b"}), delivered=())

    @action(m=lambda s: s.inflight)
    def deliver(self, s, m):
        return s.replace(inflight=s.inflight - {m}, delivered=s.delivered + (m,))

    @invariant
    def not_reversed(self, s):
        return s.delivered != ("c", "b", "a")


def test_state_dependent_domains_are_enumerated_in_canonical_order():
    result = run(Messages())
    assert result.verdict == "violation"
    assert [s.params["m"] for s in result.trace[1:]] == ["c", "b", "a"]
    # all orders of 3 messages: 1 + 3 + 6 + 6 states
    assert check(Model(Messages(), invariants=[]), Options(deadlock=False)).distinct_states == 16


def test_the_same_trace_on_every_run():
    first = load_model(SPECS / "examples" / "die_hard.py")
    traces = {tuple((s.action, s.state) for s in check(first).trace) for _ in range(3)}
    assert len(traces) == 1


def test_die_hard_matches_tlc():
    model = load_model(SPECS / "examples" / "die_hard.py", invariants=["type_ok"])
    result = check(model)
    assert (result.distinct_states, result.states_generated, result.depth) == (16, 97, 8)
    solved = check(load_model(SPECS / "examples" / "die_hard.py"))
    assert solved.invariant == "big_is_not_4"
    assert actions(solved) == [
        "fill_big",
        "big_to_small",
        "empty_small",
        "big_to_small",
        "fill_big",
        "big_to_small",
    ]


class Raising(FromZero):
    @action(d=(1, 0))
    def divide(self, s, d):
        if s.x >= 2:
            return Record(x=10 // d) if d == 0 else None
        return s.replace(x=s.x + d)


def test_an_action_that_raises_is_an_error_with_its_parameters_and_trace():
    result = run(Raising())
    assert result.verdict == "error" and result.exit_code == ExitCode.EVALUATION_ERROR
    err = result.error
    assert (err.kind, err.name, err.params) == ("action", "divide", {"d": 0})
    assert "ZeroDivisionError" in err.message
    assert "10 // d" in err.traceback and "checker/model/" not in err.traceback
    assert [s.state.x for s in result.trace] == [0, 1, 2]  # ends where it raised


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return 5", "returned 5"),
        ("return Record(y=1)", "a state with the variable y added and without the variable x"),
        ("return s.replace(x=0.5)", "floats"),
        ("return [s, 3]", "returned [Record(x=0), 3]"),
    ],
)
def test_actions_returning_non_states_are_errors(body, message):
    namespace = {"Record": Record}
    exec(f"def bad(self, s):\n    {body}", namespace)

    class Bad(FromZero):
        broken = action(namespace["bad"])

    result = run(Bad())
    assert result.verdict == "error" and result.error.name == "broken"
    assert message in result.error.message


class BadInvariants(Spec):
    mode = constant("raise")

    def init(self):
        return Record(x=0)

    @action
    def step(self, s):
        return s.replace(x=1) if s.x == 0 else None

    @invariant
    def check_x(self, s):
        if s.x == 1:
            if self.mode == "raise":
                raise ValueError("boom")
            return None
        return True


def test_an_invariant_that_raises_or_returns_a_non_bool_is_an_error():
    raised = run(BadInvariants())
    assert raised.verdict == "error" and raised.error.kind == "invariant"
    assert "ValueError: boom" in raised.error.message
    assert [s.state.x for s in raised.trace] == [0, 1]
    none = run(BadInvariants(mode="none"))
    assert none.verdict == "error" and "returned None" in none.error.message


def test_counts_of_a_depth_bound_that_cuts_nothing_equal_a_full_run():
    full = run(Counter())
    bounded = run(Counter(), max_depth=full.depth)
    assert bounded.verdict == "ok" and bounded.queue == 0 and full.queue == 0
    assert bounded.states_generated == full.states_generated
    assert bounded.coverage == full.coverage


def test_a_max_states_stop_reports_what_is_left_on_the_queue():
    result = run(Counter(), max_states=2)
    assert result.verdict == "incomplete" and result.queue >= 1


class HugeInit(Spec):
    def init(self):
        return Record(x=2**64)

    @action
    def step(self, s):
        return None


def test_an_initial_state_that_cannot_be_encoded_is_an_init_error():
    result = run(HugeInit())
    assert result.verdict == "error" and result.error.kind == "init"
    assert "64 bits" in result.error.message


def test_collision_probability_is_reported_as_tlc_calculates_it():
    result = check(load_model(str(SPECS / "examples" / "two_phase.py"), {}))
    assert (result.distinct_states, result.states_generated) == (288, 1_146)
    assert result.collision_probability == 288 * (1_146 - 288) / 2**64
    gap = result.closest_fingerprints
    assert gap is not None and 0 < gap < 2**64 // 287  # 288 numbers in 2^64: some gap is smaller
    assert result.collision_probability_observed == 1 / gap


class ThreeStarts(Spec):
    def init(self):
        return [Record(x=0), Record(x=0), Record(x=1), Record(x=2)]

    @action
    def stay(self, s):
        return None


def test_max_states_can_stop_among_the_initial_states():
    result = run(ThreeStarts(), max_states=1)
    assert (result.verdict, result.distinct_states, result.states_generated) == ("incomplete", 1, 3)
    assert result.bound == "--max-states 1 reached"


class Fickle(Spec):
    """An invariant and an action that raise once, the first time they meet x == 2: a spec
    that is not deterministic (it keeps state outside its states)."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where
        self.raised = False

    def init(self):
        return Record(x=0)

    @action
    def inc(self, s):
        if self.where == "action" and s.x == 2 and not self.raised:
            self.raised = True
            raise ValueError("once")
        return s.replace(x=s.x + 1) if s.x < 3 else None

    @invariant
    def fine(self, s):
        if self.where == "invariant" and s.x == 2 and not self.raised:
            self.raised = True
            raise ValueError("once")
        return True


@pytest.mark.fault("nondeterminism")
@pytest.mark.parametrize("where", ["action", "invariant"])
def test_a_spec_that_answers_otherwise_when_asked_again_is_a_nondeterminism_error(where):
    """The engine evaluates a state again before it reports what it did there: a spec that
    does not do it again is reported as such, with the state (exit 75), on every engine."""
    with pytest.raises(NondeterminismError, match=r"not deterministic.*\{x: 2\}") as raised:
        check(Model(Fickle(where)), Options(deadlock=False))
    assert raised.value.exit_code == ExitCode.EVALUATION_ERROR


class Counted(Spec):
    """Counts how often its actions run in each state (spec code that keeps state outside
    its states: for this test only). 13 is an intended final state, found after 1 in the
    same level; 3 has a successor with a list inside a tuple (frozen by expand_batch's
    loop)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[int, int] = {}

    def init(self):
        return Record(x=0, log=())

    @action
    def inc(self, s):
        self.calls[s.x] = self.calls.get(s.x, 0) + 1
        if s.x in (5, 13):
            return None
        return s.replace(x=s.x + 1, log=([s.x],) if s.x == 3 else ())

    @action
    def jump(self, s):
        return s.replace(x=13) if s.x == 0 else None

    @terminal
    def done(self, s):
        return s.x in (5, 13)


def test_a_state_the_common_case_cannot_take_is_expanded_once_more_not_twice():
    """expand_batch's run (expand_run, in C or its twin) hands a state it cannot take (a
    final state, a successor to freeze) to the loop: the actions run there again, once. The
    first state is also expanded twice, as every 64th is, to check determinism."""
    spec = Counted()
    result = check(Model(spec), Options())
    assert (result.verdict, result.distinct_states) == ("ok", 7)
    assert spec.calls == {0: 2, 1: 1, 2: 1, 3: 2, 4: 1, 5: 2, 13: 2}


@pytest.mark.parametrize("workers", [1, 2])
def test_one_expander_takes_a_level_in_one_part_of_up_to_4096_states_two_share_it_out(
    monkeypatch, workers
):
    """The parts of each level of a search whose levels have 1, 32, 384, 2,048 and 4,096
    states: one expander has nothing to share, so a level of up to 4,096 states is one part;
    two get 16 parts or more of each level of 384 states or more (eight each at least)."""
    from checker.local.frontier import SpilledFrontier

    planned: list[int] = []
    plan = SpilledFrontier.plan

    def counted(self, size):
        made = plan(self, size)
        planned.append(len(made))
        return made

    monkeypatch.setattr(SpilledFrontier, "plan", counted)

    class Grid(Spec):
        """Four digits of base 9, each set once: level k has C(4, k) 8^k states."""

        def init(self):
            return Record(d=(0, 0, 0, 0))

        @action(i=(0, 1, 2, 3), v=tuple(range(1, 9)))
        def set_digit(self, s, i, v):
            return s.replace(d=s.d[:i] + (v,) + s.d[i + 1 :]) if s.d[i] == 0 else None

    result = check(Model(Grid()), Options(workers=workers))
    assert (result.distinct_states, result.depth) == (6561, 5)
    if workers == 1:
        assert planned == [1, 1, 1, 1, 1]
    else:
        assert planned[0] == 1 and all(n >= 16 for n in planned[2:])


def test_a_check_leaves_nothing_of_its_states_behind():
    """Once check() returns, what it made is freed: the states and the caches by identity
    (their parts' encodings, their tuples' hashes), so the cyclic collector, back on, does not
    walk them (the caches held 5,610 objects of TwoPhase RM=5's 8,832 states before)."""
    model = load_model(SPECS / "examples" / "two_phase.py", {"rm": 5})
    check(model, Options(max_states=10))  # (whatever a first check makes once)
    before = len(gc.get_objects())
    assert check(model, Options()).distinct_states == 8832
    assert len(gc.get_objects()) - before < 100


def test_a_check_leaves_no_cycle_for_the_collector():
    """What check() made is freed by reference counting when it returns, not left in a cycle
    for the cyclic collector: its run would walk every state (2.2 s after Slush's 274,678,
    and as long before a Ctrl-C's report, when an engine part held the engine back). Slush
    (a set of message records) keeps states in its expander's memory of those it met."""
    model = load_model(SPECS / "examples" / "corpus" / "slush.py", {"nodes": 2})
    check(model, Options(max_states=10))
    gc.collect()
    gc.disable()
    try:
        result = check(model, Options())
        assert (result.distinct_states, result.states_generated) == (392, 1245)
        assert gc.collect() < 100
    finally:
        gc.enable()
