"""Symmetry reduction: counts with and without it on specs small enough to count by hand,
concrete traces, the bundled specs that declare it, and the checks of a declaration."""

from __future__ import annotations

import itertools
import json
from array import array

import pytest

from checker import Record, Spec, action, constant, invariant, put
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.search.options import Options
from checker.symmetry import Permutation, Symmetry, renamed, renamed_encodings
from checker.testing import assert_symmetric
from checker.values import fast
from checker.values.encoding import decode_all, encode, fingerprint
from tests.bundled import BUNDLED
from tests.conftest import ROOT


class Processes(Spec):
    """n processes, interchangeable: their ids 0..n-1 are declared symmetric."""

    n = constant(3, "processes")
    symmetry = ("ids",)

    @property
    def ids(self) -> range:
        return range(self.n)


class Toggles(Processes):
    """n identical processes, each flipping its own bit."""

    def init(self):
        return Record(bits=(0,) * self.n)

    @action(i="ids")
    def toggle(self, s, i):
        return s.replace(bits=put(s.bits, i, 1 - s.bits[i]))

    def permute(self, s, p):
        return s.replace(bits=p.indexed(s.bits))


def counts(result):
    return result.verdict, result.distinct_states, result.states_generated, result.depth


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_n_toggles_have_n_plus_1_states_up_to_symmetry_and_2_to_the_n_without(n):
    # Up to renaming, a state is its number of bits set: 0..n. Each state has n successors.
    reduced = check(Model(Toggles(n=n)))
    assert counts(reduced) == ("ok", n + 1, 1 + (n + 1) * n, n + 1)
    full = check(Model(Toggles(n=n), symmetry=False))
    assert counts(full) == ("ok", 2**n, 1 + 2**n * n, n + 1)


class AllSet(Toggles):
    @invariant
    def not_all_set(self, s):
        return 0 in s.bits


def test_traces_are_the_concrete_states_first_reached():
    # (1, 0, 0) is the state kept for the class {(1,0,0), (0,1,0), (0,0,1)}, though its
    # smallest encoding is (0, 0, 1): the trace shows what the engine explored.
    result = check(Model(AllSet()))
    assert result.verdict == "violation"
    assert [(s.action, s.params, s.state.bits) for s in result.trace] == [
        (None, {}, (0, 0, 0)),
        ("toggle", {"i": 0}, (1, 0, 0)),
        ("toggle", {"i": 1}, (1, 1, 0)),
        ("toggle", {"i": 2}, (1, 1, 1)),
    ]
    assert result.trace == check(Model(AllSet(), symmetry=False)).trace


class FlipAny(AllSet):
    """One action whose successors are all renamings of each other: replay must take the
    first, as the engine did, or the next step would not be found."""

    toggle = None

    @action
    def flip_any(self, s):
        return [s.replace(bits=put(s.bits, i, 1)) for i in self.ids if s.bits[i] == 0]


def test_replay_takes_the_first_successor_with_the_fingerprint():
    result = check(Model(FlipAny(n=4)), Options(workers=2))
    assert counts(result)[:2] == ("violation", 5)
    assert [s.state.bits for s in result.trace] == [
        (0, 0, 0, 0),
        (1, 0, 0, 0),
        (1, 1, 0, 0),
        (1, 1, 1, 0),
        (1, 1, 1, 1),
    ]


# A token moves between processes; each counts how often it held it. A process id is a value
# (`holder`), a set element (`waiting`) and a tuple index (`held`).
TOKENS_SOURCE = """
from checker import Record, Spec, action, put


class Tokens(Spec):
    symmetry = ("ids",)
    ids = range(3)

    def init(self):
        return Record(holder=0, waiting=frozenset({1, 2}), held=(1, 0, 0))

    @action(to="ids")
    def pass_token(self, s, to):
        if to not in s.waiting or s.held[to] >= 2:
            return None
        waiting = (s.waiting - {to}) | {s.holder}
        return s.replace(holder=to, waiting=waiting, held=put(s.held, to, s.held[to] + 1))

    def permute(self, s, p):
        return s.replace(holder=p(s.holder), waiting=p.set(s.waiting), held=p.indexed(s.held))
"""


def tokens(tmp_path, source=TOKENS_SOURCE):
    path = tmp_path / "tokens.py"
    path.write_text(source)
    return path


def reachable(model: Model) -> list[Record]:
    """Every reachable state, by a breadth-first search of our own."""
    states = {init.fp: init for init in model.initial()}
    queue = list(states.values())
    while queue:
        current = queue.pop()
        for succ in model.expand(current.data):
            if succ.fp not in states:
                states[succ.fp] = succ
                queue.append(succ)
    return [succ.state for succ in states.values()]


def test_the_reduced_count_is_the_number_of_classes_of_reachable_states(tmp_path):
    """Checked against renamings computed here, not by the engine."""

    def renamed(s, p):  # p: a tuple, p[i] is the new name of process i
        held = [0] * len(p)
        for i, count in enumerate(s.held):
            held[p[i]] = count
        return (p[s.holder], tuple(sorted(p[i] for i in s.waiting)), tuple(held))

    path = tokens(tmp_path)
    full = reachable(load_model(path, symmetry=False))
    classes = {min(renamed(s, p) for p in itertools.permutations(range(3))) for s in full}
    result = check(load_model(path), Options(deadlock=False))  # tokens stop at 2 holds
    assert result.verdict == "ok"
    assert result.distinct_states == len(classes) < len(full)
    unreduced = check(load_model(path, symmetry=False), Options(deadlock=False))
    assert len(full) == unreduced.distinct_states


def test_declaring_symmetry_on_a_bundled_spec():
    """Where the spec declares it, `mc check` reduces by default; the verdict and the depth
    of the search do not change."""
    checked = 0
    for path, constants, verdict, _ in BUNDLED:
        model = load_model(ROOT / path, constants)
        if model.symmetry is None:
            continue
        checked += 1
        reduced = check(model)
        full = check(load_model(ROOT / path, constants, symmetry=False))
        assert (reduced.verdict, reduced.invariant) == (full.verdict, full.invariant)
        assert reduced.verdict == verdict
        assert len(reduced.trace) == len(full.trace)
        if verdict == "ok":
            assert reduced.depth == full.depth
            assert reduced.distinct_states < full.distinct_states
    assert checked == 4  # kip996 and kip996_read, two cases each


@pytest.mark.parametrize(
    ("spec", "constants"),
    [
        ("specs/light/kip996.py", {"fixed": False, "max_epoch": 2, "max_records": 0}),
        ("specs/light/kip996.py", {"voters": 2, "max_epoch": 2, "max_records": 1}),
        ("specs/light/kip996_read.py", {"max_isolations": 0}),
    ],
)
def test_the_quorum_specs_are_symmetric_in_voters(spec, constants):
    assert assert_symmetric(ROOT / spec, **constants) > 50


def test_the_quorum_counts_with_and_without_symmetry():
    constants = {"max_epoch": "2", "max_records": "0"}
    reduced = check(load_model(ROOT / "specs/light/kip996.py", constants))
    full = check(load_model(ROOT / "specs/light/kip996.py", constants, symmetry=False))
    assert (reduced.distinct_states, full.distinct_states) == (1_068, 2_071)
    assert reduced.depth == full.depth == 21


# -- assert_symmetric catches the two ways a declaration goes wrong ------------------------


def test_assert_symmetric_passes_a_right_permute(tmp_path):
    path = tokens(tmp_path)
    full = check(load_model(path, symmetry=False), Options(deadlock=False))
    assert assert_symmetric(path) == full.distinct_states


def test_assert_symmetric_fails_a_permute_that_misses_a_field(tmp_path):
    forgets_held = TOKENS_SOURCE.replace(", held=p.indexed(s.held))", ")")
    with pytest.raises(AssertionError, match="the renamed state's successors differ"):
        assert_symmetric(tokens(tmp_path, forgets_held))


def test_assert_symmetric_fails_an_action_that_prefers_an_id(tmp_path):
    smallest_first = TOKENS_SOURCE.replace(
        "if to not in s.waiting", "if to != min(s.waiting) or to not in s.waiting"
    )
    with pytest.raises(AssertionError, match="successors differ"):
        assert_symmetric(tokens(tmp_path, smallest_first))


# -- the command line ----------------------------------------------------------------------

TOGGLES_SOURCE = """
from checker import Record, Spec, action, constant, put


class Toggles(Spec):
    \"\"\"n identical processes, each flipping its own bit.\"\"\"

    n = constant(3)
    symmetry = SYMMETRY

    @property
    def ids(self):
        return range(self.n)

    @property
    def more(self):
        return range(2, 4)

    def init(self):
        return Record(bits=(0,) * self.n)

    @action(i="ids")
    def toggle(self, s, i):
        return s.replace(bits=put(s.bits, i, 1 - s.bits[i]))

    def permute(self, s, p):
        PERMUTE
"""


def toggles(write_spec, symmetry='("ids",)', permute="return s.replace(bits=p.indexed(s.bits))"):
    source = TOGGLES_SOURCE.replace("SYMMETRY", symmetry).replace("PERMUTE", permute)
    return write_spec(source)


def test_mc_check_reduces_by_default_and_says_so(mc, write_spec, tmp_path):
    path = toggles(write_spec)
    out = tmp_path / "out.json"
    reduced = mc("check", path, "--json", out)
    assert reduced.code == 0
    assert "  symmetry: ids (6 permutations)\n" in reduced.out
    assert "explored 4 distinct states" in reduced.out
    assert json.loads(out.read_text())["symmetry"] == "ids (6 permutations)"
    full = mc("check", path, "--no-symmetry", "--json", out)
    assert full.code == 0 and "symmetry" not in full.out
    assert "explored 8 distinct states" in full.out
    assert json.loads(out.read_text())["symmetry"] is None
    listed = mc("list", path).out
    assert "\nSymmetry: ids (6 permutations)\n  ids = (0, 1, 2)\n" in listed


def test_a_model_says_whether_symmetry_is_in_use(write_spec):
    """For checks that cannot work on representatives (liveness): one attribute to test."""
    path = toggles(write_spec)
    assert load_model(path).symmetry is not None
    assert load_model(path, symmetry=False).symmetry is None
    assert load_model(path, {"n": "1"}).symmetry.describe() == "ids (1 permutation)"


@pytest.mark.parametrize(
    ("symmetry", "permute", "message"),
    [
        ('("ids",)', "pass", None),  # permute = None below
        ('("nope",)', "return s", "Toggles.symmetry names 'nope', which is not a spec attribute"),
        ('("n",)', "return s", "Toggles.symmetry names 'n': it must be a collection of values"),
        ('("ids", "more")', "return s", "Toggles.symmetry: 2 is in both ids and more; the"),
        ("3", "return s", "Toggles.symmetry must be a tuple of attribute names, not 3"),
    ],
)
def test_a_declaration_that_cannot_be_used_is_a_spec_error(
    mc, write_spec, symmetry, permute, message
):
    path = toggles(write_spec, symmetry, permute)
    if message is None:
        source = path.read_text().replace("    def permute(self, s, p):\n        pass\n", "")
        path.write_text(source)
        message = "Toggles.symmetry = ('ids',) needs a method permute(self, s, p)"
    run = mc("check", path)
    assert run.code == 150 and message in run.err


def test_too_many_permutations_is_a_config_error_and_no_symmetry_the_way_out(mc, write_spec):
    path = toggles(write_spec)
    run = mc("check", path, "-D", "n=8")
    assert run.code == 151
    assert "Toggles.symmetry over ids has 40,320 permutations, more than 5,040" in run.err
    assert "--no-symmetry" in run.err
    full = mc("check", path, "-D", "n=8", "--no-symmetry")
    assert full.code == 0 and "explored 256 distinct states" in full.out


@pytest.mark.parametrize(
    ("permute", "message"),
    [
        ("return s.replace(bits=s.bits[5])", "Error: permute raised IndexError"),
        (
            "return Record(x=1)",
            "Error: permute returned a state with the variable x added and without the variable"
            " bits; it must return the state",
        ),
        (
            "return s.replace(bits=p.indexed(s.bits[:2]))",
            "Error: permute raised StateError: p.indexed: position 1 is renamed 2, outside a"
            " tuple of 2",
        ),
        (  # (on a successor: the step that built it is named)
            "return s.bits[9] if sum(s.bits) == 2 else s.replace(bits=p.indexed(s.bits))",
            "Error: permute raised IndexError: tuple index out of range (renaming"
            " Permutation({2: 0, 0: 1, 1: 2})), on the successor that toggle built\n"
            "  in state {bits: (1, 0, 0)}",
        ),
    ],
)
def test_a_permute_that_fails_is_an_evaluation_error(mc, write_spec, permute, message):
    run = mc("check", toggles(write_spec, permute=permute))
    assert run.code == 75
    assert message in run.out


class Ring(Processes):
    """Processes passing tokens: each holds a count and points to another process (an id
    inside the state, which a renaming must rename too), so signatures tie and break."""

    n = constant(4, "processes")

    def init(self):
        return Record(tokens=(1,) + (0,) * (self.n - 1), next=tuple(range(self.n)))

    @action(i="ids", j="ids")
    def pass_token(self, s, i, j):
        if s.tokens[i] == 0 or i == j or s.tokens[j] >= 2:
            return None
        tokens = put(put(s.tokens, i, s.tokens[i] - 1), j, s.tokens[j] + 1)
        return s.replace(tokens=tokens, next=put(s.next, i, j))

    def permute(self, s, p):
        return s.replace(tokens=p.indexed(s.tokens), next=p.indexed(s.next, p))


def test_representatives_are_found_from_signatures_without_trying_every_renaming():
    # `tokens` is renamed by p.indexed alone: a process's count is its signature; `next`
    # holds ids, so it is not part of it. The reduction is the same as with every renaming.
    model = Model(Ring())
    state = model.initial_states()[0]
    assert model.symmetry.renamings_to_try(state) and model.symmetry._fields == ("tokens",)
    assert len(model.symmetry.renamings_to_try(state)) == 6  # three processes tie at 0 tokens
    everything = Model(Ring())
    everything.symmetry._fields = ()  # no signature: all 24 renamings of every state
    assert counts(check(model)) == counts(check(everything))
    assert counts(check(model))[1] < check(Model(Ring(), symmetry=False)).distinct_states


def test_every_state_of_an_orbit_has_the_same_representative():
    model = Model(Ring())
    for state in _some_states(model, 40):
        images = {
            model.fingerprint_of(model.symmetry.permute(state, p))
            for p in model.symmetry.permutations
        }
        assert len(images) == 1


def test_the_identity_is_not_asked_of_permute():
    """A state whose signatures are already in order is one of its own candidate images:
    its image by the identity is the state, so permute is asked only for the others."""
    asked = []

    class Counted(Toggles):
        def permute(self, s, p):
            asked.append(p)
            return super().permute(s, p)

    model = Model(Counted())
    state = Record(bits=(0, 0, 1))  # values 0 and 1 tie: the identity and swapping them
    assert len(model.symmetry.renamings_to_try(state)) == 2
    del asked[:]  # (learning the signature asked permute of the identity, to record it)
    fp = model.fingerprint_of(state)
    assert len(asked) == 1 and asked[0] is not model.symmetry.identity
    smallest = min(encode(Toggles().permute(state, p)) for p in model.symmetry.permutations)
    assert fp == fingerprint(smallest)


def _some_states(model, count):
    """The first `count` states a breadth-first walk meets (concrete, unreduced)."""
    states, queue = [], [model.initial_states()[0]]
    while queue and len(states) < count:
        state = queue.pop(0)
        if state not in states:
            states.append(state)
            queue += [t.state for t in model.expand(encode(state))]
    return states


def test_signatures_reduce_a_bundled_spec_as_every_renaming_does():
    model = load_model(str(ROOT / "specs/light/kip996.py"), {})
    assert model.symmetry._fields is None or model.symmetry._fields
    everything = load_model(str(ROOT / "specs/light/kip996.py"), {})
    everything.symmetry._fields = ()
    assert counts(check(model)) == counts(check(everything))
    assert model.symmetry._fields == ("epoch", "heard", "isolated_epoch", "log", "role")


def test_model_values_take_the_fast_path_of_ids():
    """TLA+'s model values (strings) as symmetric values: the same states as with ids, and the
    renamings tried per state are the signature's few, not all n!."""
    path = ROOT / "specs" / "examples" / "two_phase_symmetric.py"
    counts = {}
    for names in ("false", "true"):
        model = load_model(path, {"rm": "5", "names": names})
        result = check(model, Options())
        counts[names] = (result.verdict, result.distinct_states, result.states_generated)
        if names == "true":  # model values: the engine renames them, sorted by signatures
            assert model.symmetry.names and model.symmetry.permute is renamed
        else:
            assert model.symmetry._fields == ("rmState",) and model.symmetry._members == (
                "tmPrepared",
            )
        state = model.initial_states()[0]
        prepared = model.fire(3, ("r1",) if names == "true" else (0,), state)[0]
        assert len(model.symmetry.renamings_to_try(prepared)) == 24  # 4!, not 5!
    # As many as with every renaming tried per state (checked: 314 and 2,048 then too).
    assert counts["true"] == counts["false"] == ("ok", 314, 2_048)


def test_renaming_the_keys_of_a_record_keeps_its_shape():
    p = Permutation({"a1": "a2", "a2": "a3", "a3": "a1"})
    record = Record(a1=1, a2=2, a3=3)
    renamed = p.keys(record)
    assert renamed == Record(a2=1, a3=2, a1=3) and type(renamed) is type(record)
    assert p.keys(record, lambda v: v * 10) == Record(a2=10, a3=20, a1=30)
    # A record whose keys the renaming moves elsewhere: built anew.
    assert Permutation({"a1": "b1"}).keys(Record(a1=1, a2=2)) == Record(b1=1, a2=2)


def test_the_signature_is_learnt_alike_whatever_objects_a_state_shares():
    """A part decoded as a whole shares equal values, between variables too (decode_all). The
    signature's variables were found by the identity of the values `permute` reorders, so an
    expander that first met such a state learnt fewer of them than one that met the initial
    state, and picked other representatives: kip996_read with 2 workers found 55,251 and
    55,347 states where 1 worker finds 52,617. Learnt from a copy that shares nothing, and
    by the search from its initial state, the signature is the same everywhere."""
    model = load_model(str(ROOT / "specs/light/kip996_read.py"), {})
    state = model.initial_states()[0]
    data = encode(state)
    shared = decode_all(data, array("Q", [0, len(data)]).tobytes())[0]
    if fast.C:
        assert shared.applied is shared.voted_for  # equal tuples: one object
    learnt = []
    for first in (state, shared):
        symmetry = Symmetry(model.symmetry.sets, model.symmetry.permute)
        symmetry.learn(first)
        learnt.append((symmetry._fields, symmetry._members))
    assert learnt[0] == learnt[1]
    assert learnt[0][0] == ("applied", "epoch", "heard", "isolated_epoch", "log", "reads", "role")
    model.symmetry._fields = None
    assert model.fingerprint_of(shared) == model.fingerprint_of(state)
    assert model.symmetry._fields == learnt[0][0]  # learnt from the initial state


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4])
def test_a_renaming_acts_as_its_definition_says(size):
    """`indexed`, `set` and the call, whose fast paths (itemgetter, no call per element, an
    empty set kept) must agree with their definitions on every renaming: a tuple indexed by
    the values is reordered so that position v moves to p(v); True and False are not ids."""
    values = tuple(range(size))
    row = tuple(f"x{i}" for i in values)
    ids = (*reversed(values), None, True, False, 7)
    for image in itertools.permutations(values):
        p = Permutation(dict(zip(values, image)))
        moved = [None] * size
        for v in values:
            moved[image[v]] = row[v]
        assert p.indexed(row) == tuple(moved)
        renamed = tuple(image[v] if type(v) is int and 0 <= v < size else v for v in ids)
        assert [p(v) for v in ids] == list(renamed)
        assert p.indexed(ids[:size], p) == tuple(renamed[v] for v in p.indexed(values))
        assert p.indexed(ids[:size], str) == tuple(map(str, p.indexed(ids[:size])))
        assert p.set(frozenset(ids)) == frozenset(renamed)
        assert p.set(frozenset()) == frozenset() and p.set(set()) == frozenset()
        assert type(p.set(set(values))) is frozenset


# -- symmetry over model values (names): the engine renames them itself ---------------------


class Named(Spec):
    """n processes named p1.., each flipping its bit in a map keyed by name, and a set of
    the names that ever flipped; no `permute`: names need none."""

    n = constant(3, "processes")
    symmetry = ("names",)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"p{i}" for i in range(1, self.n + 1))

    def init(self):
        return Record(bits={p: 0 for p in self.names}, flipped=frozenset(), last=None)

    @action(p="names")
    def flip(self, s, p):
        return s.replace(
            bits=put(s.bits, p, 1 - s.bits[p]), flipped=s.flipped | {p}, last=(p, s.bits[p])
        )


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_model_values_need_no_permute_and_give_the_classes_of_states(n):
    """Up to renaming, a state is (bits set, names flipped, whether the last flip set a bit),
    counted here by hand: the reduction is exact, and without symmetry every state counts."""
    full = reachable(Model(Named(n=n), symmetry=False))
    classes = set()
    for s in full:
        ones = sum(s.bits.values())
        last = None if s.last is None else (s.bits[s.last[0]], s.last[1])
        classes.add((ones, len(s.flipped), last))
    reduced = check(Model(Named(n=n)))
    assert reduced.verdict == "ok"
    assert reduced.distinct_states == len(classes)
    unreduced = check(Model(Named(n=n), symmetry=False))
    assert unreduced.distinct_states == len(full)
    if n > 1:
        assert len(classes) < len(full)
    assert Model(Named(n=n)).symmetry.permute is renamed


def test_the_signatures_try_fewer_renamings_and_reduce_exactly_as_every_renaming_does():
    """SimplifiedFastPaxos (two sets of model values, 2 x 6 renamings): the same counts as
    TLC's (tests/specs/test_corpus.py) whether the search tries every renaming per state or
    only those that sort the values by signature, which are fewer."""
    path = ROOT / "specs/examples/corpus/fast_paxos.py"
    constants = {"replicas": "3", "values": "2", "max_ballot": "3", "quorum": "2"}
    model = load_model(path, constants)
    everything = load_model(path, constants)
    everything.symmetry._named_renamings = lambda state: everything.symmetry.permutations
    assert counts(check(model)) == counts(check(everything)) == ("ok", 136, 868, 14)
    states = reachable(load_model(path, constants, symmetry=False))
    tried = [len(model.symmetry.renamings_to_try(s)) for s in states]
    assert max(tried) <= 12 and sum(tried) < 12 * len(states) / 4
    # The initial state: the replicas tie (3! orders), the values do not occur (not reordered).
    assert len(model.symmetry.renamings_to_try(model.initial_states()[0])) == 6


def test_the_engine_renames_model_values_as_the_translations_permute_does():
    """The corpus translation's own `permute` (which the engine no longer calls) and the
    engine's renaming agree on every reachable state and renaming, as do the encodings the
    C path computes for all renamings at once."""
    path = ROOT / "specs/examples/corpus/fast_paxos.py"
    constants = {"replicas": "3", "values": "2", "max_ballot": "2", "fast_ballots": "1"}
    constants["quorum"] = "2"
    model = load_model(path, constants)
    spec_permute = type(model.spec).permute
    symmetry = model.symmetry
    states = reachable(load_model(path, constants, symmetry=False))
    assert len(states) > 100
    for state in states:
        images = [renamed(state, p) for p in symmetry.permutations]
        assert images == [spec_permute(model.spec, state, p) for p in symmetry.permutations]
        assert renamed_encodings(state, symmetry.images) == [encode(i) for i in images]


class NamedAllSet(Named):
    @invariant
    def not_all_set(self, s):
        return 0 in s.bits.values()


def test_a_violation_with_model_values_has_the_trace_found_without_symmetry():
    result = check(Model(NamedAllSet()))
    assert result.verdict == "violation"
    assert [(s.action, s.params) for s in result.trace] == [
        (None, {}),
        ("flip", {"p": "p1"}),
        ("flip", {"p": "p2"}),
        ("flip", {"p": "p3"}),
    ]
    assert result.trace == check(Model(NamedAllSet(), symmetry=False)).trace


class Marked(Spec):
    """Two named processes that set their bit, and `a`, outside the view: the last one
    marked. `a` sorts first, so it decides the values' order by signature."""

    symmetry = ("names",)
    names = ("p1", "p2")

    def init(self):
        return Record(bits={p: 0 for p in self.names}, a=None)

    @action(p="names")
    def set_bit(self, s, p):
        return s.replace(bits=put(s.bits, p, 1))

    @action(p="names")
    def mark(self, s, p):
        return s.replace(a=p)

    def view(self, s):
        return s.bits


def test_model_values_with_a_view_try_every_renaming():
    """Up to renaming, a view is how many bits are set (0, 1, 2). The states with one bit
    set and either process marked have the same view; ordered by their signatures, which
    see `a`, they would be renamed differently, and count as two."""
    assert check(Model(Marked()), Options(deadlock=False)).distinct_states == 3
    assert check(Model(Marked(), symmetry=False), Options(deadlock=False)).distinct_states == 4


class NamedView(Named):
    def view(self, s):
        return Record(bits=s.bits, flipped=s.flipped)


@pytest.mark.parametrize("n", [2, 3])
def test_model_values_with_a_view_merge_the_classes_of_views(n):
    """With a view, a state is its bits and flipped names up to renaming: (bits set, names
    flipped), counted by hand; `last`, outside the view, does not split them."""
    full = reachable(Model(NamedView(n=n), symmetry=False))
    classes = {(sum(s.bits.values()), len(s.flipped)) for s in full}
    assert check(Model(NamedView(n=n))).distinct_states == len(classes)


def test_the_engines_renaming_of_model_values_passes_assert_symmetric():
    """SimplifiedFastPaxos's behaviour maps to itself under the engine's renaming of its
    model values, on every reachable state (explored without symmetry) and renaming."""
    checked = assert_symmetric(
        ROOT / "specs/examples/corpus/fast_paxos.py",
        replicas=3,
        values=2,
        max_ballot=2,
        fast_ballots="1",
        quorum=2,
    )
    assert checked > 100


def test_assert_symmetric_finds_an_action_that_prefers_a_model_value(tmp_path):
    path = tmp_path / "prefers.py"
    path.write_text(
        "from checker import Record, Spec, action, put\n\n\n"
        "class Prefers(Spec):\n"
        '    symmetry = ("names",)\n'
        '    names = ("p1", "p2")\n\n'
        "    def init(self):\n"
        "        return Record(bits={p: 0 for p in self.names})\n\n"
        '    @action(p="names")\n'
        "    def flip(self, s, p):\n"
        '        if p == "p2" and s.bits["p1"] == 0:  # p1 first\n'
        "            return None\n"
        "        return s.replace(bits=put(s.bits, p, 1))\n"
    )
    with pytest.raises(AssertionError, match="the renamed state's successors differ"):
        assert_symmetric(path)
