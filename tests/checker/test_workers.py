"""The local engine gives the same result whatever the number of worker processes, the
chunking and the spilling of levels to disk: the verdict, every count and the trace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Record, Spec, action, guard, invariant
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.search.expansion import Expanded, Expansion, Pieces
from checker.search.options import Options
from tests.bundled import BUNDLED
from tests.checker.outcomes import outcome
from tests.checker.test_hostile_input import SPIN
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("path", "constants", "options"),
    [
        ("specs/examples/two_phase.py", {"rm": "3"}, {}),
        ("specs/examples/die_hard.py", {}, {}),
        ("specs/light/kip903.py", {"max_unclean_shutdowns": "0", "fixed": "false"}, {}),
        ("specs/light/kip903.py", {"max_unclean_shutdowns": "0"}, {"max_states": 300}),
        ("specs/light/kip903.py", {"max_unclean_shutdowns": "0"}, {"max_depth": 9}),
        ("specs/light/kip996.py", {"max_epoch": "2", "max_records": "0"}, {"deadlock": True}),
    ],
)
def test_two_workers_and_spilling_change_nothing(path, constants, options):
    model = load_model(str(ROOT / path), constants)
    one = outcome(check(model, Options(**options)))
    assert outcome(check(model, Options(workers=2, **options))) == one
    assert outcome(check(model, Options(spill_bytes=1, **options))) == one
    # No state kept live: every part is expanded from its encodings, by any worker.
    assert outcome(check(model, Options(live_bytes=0, **options))) == one
    assert outcome(check(model, Options(workers=2, live_bytes=0, **options))) == one


class Walk(Spec):
    """x goes up by 1 or 2; the action raises at x = 5, the invariant at x = 6."""

    def init(self):
        return Record(x=0)

    @action(step=(1, 2))
    def move(self, s, step):
        if s.x == 5:
            raise ValueError("five")
        return s.replace(x=s.x + step) if s.x < 8 else None

    @invariant
    def small(self, s):
        if s.x == 6:
            raise ValueError("six")
        return True


def test_errors_raised_in_worker_processes_are_reported_as_in_one_process():
    one = check(Model(Walk()))
    two = check(Model(Walk()), Options(workers=2))
    assert one.verdict == "error" and one.error.name == "small"  # x = 6 is found before 5 expands
    assert [s.state.x for s in one.trace] == [0, 2, 4, 6]
    assert outcome(two) == outcome(one)


def test_every_bundled_spec_with_two_workers():
    for path, constants, verdict, distinct in BUNDLED:
        model = load_model(str(ROOT / path), constants)
        result = check(model, Options(workers=2))
        assert result.verdict == verdict, path
        if distinct is not None:
            assert result.distinct_states == distinct, path


def test_sixteen_bytes_per_state_for_the_visited_set_and_links():
    result = check(load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "4"}))
    assert result.distinct_states == 1_568
    assert result.visited_bytes == 8 * 1_568
    assert result.link_bytes == 8 * 1_568


class Loops(Spec):
    """Goes round a cycle of 6 states and back to the start: successors of later levels are
    states of earlier ones, which the expanders must recognise whatever they remember."""

    def init(self):
        return Record(x=0, log=())

    @action(step=(1, 2))
    def move(self, s, step):
        return s.replace(x=(s.x + step) % 6, log=[x for x in s.log[-1:]])

    @invariant
    def in_range(self, s):
        return 0 <= s.x < 6


def test_states_met_again_at_later_levels_are_not_new():
    for options in (Options(), Options(workers=2), Options(live_bytes=0)):
        result = check(Model(Loops()), options)
        assert (result.verdict, result.distinct_states, result.depth) == ("ok", 6, 4)
        assert result.states_generated == 1 + 2 * 6


class Unhashable(Spec):
    """An action builds a tuple holding a list: the engine freezes it as `put` would."""

    def init(self):
        return Record(log=())

    @action
    def append(self, s):
        return s.replace(log=(len(s.log), [1])) if len(s.log) < 2 else None


def test_a_list_inside_a_built_tuple_is_frozen():
    result = check(Model(Unhashable()), Options(deadlock=False))
    assert (result.verdict, result.distinct_states) == ("ok", 2)
    assert result.trace == [] and result.coverage[0].new == 1


class UnhashableViewed(Unhashable):
    """The same, met by its view (Model.by_view): the view of the unfrozen successor."""

    def view(self, s):
        return s.replace(log=s.log[:1])


def test_a_list_inside_a_built_tuple_is_frozen_when_states_are_met_by_views():
    model = Model(UnhashableViewed())
    assert model.by_view
    result = check(model, Options(deadlock=False))
    assert (result.verdict, result.distinct_states) == ("ok", 2)
    assert result.trace == [] and result.coverage[0].new == 1


class Floaty(Spec):
    def init(self):
        return Record(log=())

    @action
    def append(self, s):
        return s.replace(log=(0.5,)) if not s.log else None


def test_a_float_inside_a_built_tuple_is_an_error_of_its_action():
    for workers in (1, 2):
        result = check(Model(Floaty()), Options(workers=workers))
        assert result.verdict == "error" and result.error.name == "append"
        assert "floats cannot be part of a state" in result.error.message
        assert [s.action for s in result.trace] == [None]


PAD = tuple(range(100_000, 103_000))  # 15 KB encoded: a part is far larger than a pipe's buffer


class Wide(Spec):
    """Four counters up to 5, each state carrying a large constant tuple."""

    def init(self):
        return Record(c=(0, 0, 0, 0), pad=PAD)

    @action(i=range(4))
    def bump(self, s, i):
        if s.c[i] < 5:
            return s.replace(c=(*s.c[:i], s.c[i] + 1, *s.c[i + 1 :]))


@pytest.mark.timeout(120)
def test_large_parts_and_replies_do_not_block_the_pipes():
    """Parts sent encoded (no live states) and replies both larger than a pipe's buffer: the
    engine once waited to send while a worker waited to reply (it hung on kip966's shipped
    constants)."""
    model = Model(Wide())
    result = check(model, Options(workers=2, live_bytes=0, deadlock=False))
    assert (result.distinct_states, result.depth) == (6**4, 21)
    assert outcome(result) == outcome(check(model, Options(deadlock=False)))


def _children(pid: int) -> set[int]:
    try:
        return set(map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split()))
    except FileNotFoundError:
        return set()


@pytest.mark.fault("resources")
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_workers_die_with_a_killed_engine_process(tmp_path):
    """A killed mc used to leave its workers blocked on their pipes forever."""
    spec = tmp_path / "spin.py"
    spec.write_text(SPIN)  # a guard that never returns: the workers are busy when mc dies
    proc = subprocess.Popen(
        [sys.executable, "-m", "checker", "check", str(spec), "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(proc.pid)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [w for w in workers if _alive(w)]
    assert not alive, f"workers {alive} outlived their engine process"


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead and not yet reaped by its new parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


@pytest.mark.fault("resources")
def test_a_worker_stopped_while_it_starts_dies_of_the_signal():
    """A forked worker inherits the engine's SIGTERM handler until it sets its own; the engine
    stopping it then (after init failed, say) raised Interrupted inside multiprocessing, which
    printed a traceback. It dies of the signal instead."""
    with guard.guarded():
        pid = os.fork()
        if pid == 0:  # the child: nothing of pytest's may run here
            try:
                signal.signal(signal.SIGTERM, guard.interrupt)  # as inherited, before its own
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(10)
            finally:
                guard.real_exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM


def test_resident_memory_is_measured_where_the_system_tells():
    if not Path("/proc/self/statm").exists():
        pytest.skip("no /proc: the budget is estimated")
    from checker.local.workers import resident

    before = resident()
    block = bytearray(64 << 20)
    block[:: 1 << 12] = b"\1" * (16 << 10)  # a byte in every page: resident
    assert resident() - before >= 48 << 20
    del block
    assert resident(os.getpid()) > 0
    assert resident(2**22 + 12345) is None  # no such process


@pytest.mark.parametrize("grown", [0, 1 << 40, None])
def test_the_live_state_budget_follows_the_measured_memory(monkeypatch, grown):
    """An expander whose measured memory is within its share keeps the states it finds live
    (the next level's parts go to it as positions); one over its share sends them encoded;
    where memory is not measured (None) the estimate decides. The result is the same."""
    from checker.local import expanders, workers

    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "3"})
    one = outcome(check(model, Options(live_bytes=0)))
    calls = {"n": 0}

    def resident(self):  # the first call is the base
        calls["n"] += 1
        if grown is None:
            return None
        return (100 << 20) + (grown if calls["n"] > 1 else 0)

    live: list[bool] = []
    request = expanders.Expanders._request

    def spy(self, item, level, frontier, is_live):
        live.append(is_live)
        return request(self, item, level, frontier, is_live)

    monkeypatch.setattr(workers._InProcess, "resident", resident)
    monkeypatch.setattr(expanders.Expanders, "_request", spy)
    assert outcome(check(model, Options(live_bytes=1 << 30))) == one
    assert calls["n"] > (grown is not None)
    if grown:
        assert not any(live)
    else:
        assert live.count(True) > len(live) // 2


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=5), max_size=12), st.data())
def test_a_reply_gives_the_encodings_of_the_candidates_kept(pieces, data):
    """The engine joins the kept candidates' encodings from a reply made in this process
    (Pieces) or received as bytes: the same bytes and offsets, for any candidates kept."""
    kept = np.array(
        data.draw(
            st.lists(st.sampled_from(range(len(pieces))), unique=True) if pieces else st.just([])
        ),
        dtype=np.int64,
    )
    kept.sort()
    sizes = np.array([len(p) for p in pieces], dtype=np.uint64)
    offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(sizes, dtype=np.uint64)])
    for blob in (Pieces(pieces), b"".join(pieces)):
        reply = Expanded(b"", b"", b"", b"", b"", blob, offsets.tobytes())
        exp = Expansion(reply, deadlock=False)
        joined, bounds = exp.encodings(kept)
        assert joined == b"".join(pieces[k] for k in kept.tolist())
        assert bounds.tolist() == [0, *np.cumsum([len(pieces[k]) for k in kept.tolist()]).tolist()]
        assert [exp.encoding(k) for k in range(len(pieces))] == pieces


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.integers(0, 60), unique=True, max_size=8), max_size=4), max_size=4
    ),
    st.lists(st.integers(0, 70), max_size=20),
    st.sampled_from([0, 2**64 - 71]),  # fingerprints are uint64s: the top half too
)
def test_the_visited_set_knows_what_was_added_and_how_much_at_finished_levels(levels, asked, base):
    """`known` (fingerprints looked up in ascending order, the mask given back in the order
    asked) and `in` agree with a Python set; `older` counts those of finished levels."""
    from checker.local.visited import FingerprintArray

    levels = [[[base + fp for fp in fps] for fps in level] for level in levels]
    asked = [base + fp for fp in asked]
    visited, finished, current = FingerprintArray(), set(), set()
    for level in levels:
        for fps in level:
            fresh = [fp for fp in fps if fp not in finished | current]
            visited.add(np.array(fresh, dtype=np.uint64))
            current.update(fresh)
            fps_asked = np.array(asked, dtype=np.uint64)
            assert visited.known(fps_asked).tolist() == [fp in finished | current for fp in asked]
            assert visited.older == sum(fp in finished for fp in asked)
            assert [fp in visited for fp in asked] == [fp in finished | current for fp in asked]
        visited.end_level()
        finished |= current
        current = set()
    assert len(visited) == len(finished)


@pytest.mark.parametrize(
    ("options", "distinct", "tidy"),
    [
        (Options(), 288, True),
        (Options(live_bytes=0), 288, False),  # (nothing kept live: rebuilt each time)
        (Options(max_depth=5), 117, True),
        (Options(max_states=100), 100, True),
    ],
    ids=["kept", "none-kept", "depth-bound", "cut"],
)
def test_an_expander_remembers_only_states_already_admitted(monkeypatch, options, distinct, tidy):
    """Whether the expander made its memory of met states by removing the level it
    expanded (all it found was admitted and kept) or by rebuilding it: after StartLevel it
    holds the states kept for the level and never a candidate the engine did not admit."""
    from checker.search import expansion

    admitted: set[Record] = set()
    removed = []
    admit, start_level = expansion.Expander.admit, expansion.Expander.start_level

    def spy_admit(self, message):
        candidates = self.pending[message.chunk][1]
        admitted.update(candidates[i] for i in np.frombuffer(message.indices, np.uint32))
        admit(self, message)

    def spy_start_level(self, message):
        removed.append(self.tidy and not self.pending and message.forget)
        start_level(self, message)
        if message.forget:
            kept = set(self.levels.get(message.level, ()))
            assert kept <= self.seen
            assert self.seen <= admitted | kept  # (kept: also the initial states)

    monkeypatch.setattr(expansion.Expander, "admit", spy_admit)
    monkeypatch.setattr(expansion.Expander, "start_level", spy_start_level)
    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "3"})
    assert check(model, options).distinct_states == distinct
    assert any(removed) == tidy


@pytest.mark.parametrize(
    "then", ["admit-kept", "admit-not-kept", "admit-none", "undecided", "received"]
)
def test_an_expander_forgets_candidates_not_kept_or_not_decided(then):
    """After StartLevel an expander remembers the states kept for the level, and a candidate
    the engine found old may stay: never one it did not keep (memory) or did not decide
    about (it may be new), nor a state of the level expanded. Removing that level (and the
    states received encoded) from its memory (`tidy`) is right unless a candidate admitted
    was not kept or one was not decided about; then the memory is rebuilt."""
    from checker.search.expansion import Admit, Expand, Expander, StartLevel
    from checker.values.encoding import encode_state

    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "2"})
    expander = Expander(model)
    init = model.initial_states()[0]
    if then == "received":  # the level's states come encoded, not kept here
        expander.start_level(StartLevel(0, True, []))
        data = encode_state(init)
        offsets = np.array([0, len(data)], np.uint64).tobytes()
        expander.handle(Expand(0, 0, blob=data, offsets=offsets))
    else:
        expander.levels[0] = [init]
        expander.start_level(StartLevel(0, True, []))
        assert expander.seen == {init}
        expander.handle(Expand(0, 0, start=0, count=1))
    candidates = expander.pending[0][1]
    assert len(candidates) == 5  # TMAbort, then RMPrepare and RMChooseToAbort of each RM
    admitted = [0, 2, 3, 4]  # (candidate 1 found old by the engine)
    if then == "admit-none":
        admitted = []
    if then != "undecided":
        new = np.array(admitted, np.uint32).tobytes()
        expander.handle(Admit(0, new, keep=then not in ("admit-not-kept", "admit-none")))
    assert expander.tidy == (then != "admit-not-kept")  # (undecided: still pending)
    expander.start_level(StartLevel(1, True, []))
    kept = set(expander.levels.get(1, ()))
    live = then in ("admit-kept", "received")  # (admitted and kept here)
    assert kept == ({candidates[k] for k in admitted} if live else set())
    if then in ("admit-kept", "admit-none", "received"):
        assert expander.seen == set(candidates)  # (the level removed; one found old may stay)
    else:
        assert expander.seen == kept


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 65535), max_size=40), st.booleans())
def test_a_reply_gives_every_successors_action_as_uint16(values, small):
    """An Expanded's actions: uint16s, whether each fits in a byte (the fast way) or not."""
    from checker.search.expansion import _uint16

    values = [v % 256 for v in values] if small else values
    assert np.frombuffer(_uint16(values), np.uint16).tolist() == values


def test_an_expander_asked_for_no_encodings_sends_only_what_a_report_needs():
    """With `encodings` False a reply has the same candidates, fingerprints, offsets and
    verdicts but not their encodings, except those of the candidates on which an invariant
    raised (the engine evaluates them again to report). Either way it has the encodings of
    the state whose expansion raised and of the first deadlocked one (the engine expands
    them again to report)."""
    from checker.search.expansion import Expand, Expander, StartLevel
    from checker.values.encoding import encode_state

    model = Model(Walk())  # moves by 1 or 2, raises at x = 5, its invariant at x = 6
    states = [Record(x=x) for x in (4, 8, 5, 2)]  # 8 is stuck, 5 raises
    replies = []
    for encodings in (True, False):
        expander = Expander(model)
        expander.levels[0] = list(states)
        expander.start_level(StartLevel(0, True, []))
        replies.append(expander.handle(Expand(0, 0, 0, len(states), encodings=encodings)))
    sent, unsent = replies
    for field in ("actions", "counts", "stuck", "positions", "fps", "offsets", "broken"):
        assert getattr(unsent, field) == getattr(sent, field), field
    assert (sent.error, sent.raised, sent.stuck) == (2, [0], bytes([0, 1]))
    assert len(sent.blob) > 0 and len(unsent.blob) == 0
    six = encode_state(Record(x=6))  # the one candidate (x = 5 is a state of the level)
    assert unsent.raised_encodings == [six] and sent.raised_encodings == []
    stops = [[1, encode_state(states[1])], [2, encode_state(states[2])]]
    assert sent.stops == unsent.stops == stops
    for reply in replies:
        exp = Expansion(reply, deadlock=True)
        assert exp.encoding(0) == six
        assert exp.stop == 1 and exp.stops[exp.stop] == stops[0][1]
        assert exp.encoded_bytes == len(sent.blob)


def test_a_level_plans_held_states_apart_and_never_reads_them():
    """States whose encodings the engine has not got (`hold`) are parts of their own, for
    their owner only; reading them is a bug, not a silent empty read."""
    from checker.local.frontier import Part, SpilledFrontier

    frontier = SpilledFrontier()
    frontier.append(b"abc", np.array([0, 1, 2, 3], np.uint64), owner=0, start=0)
    frontier.hold(2, owner=0, start=3)
    frontier.append(b"de", np.array([0, 1, 2], np.uint64), owner=1, start=0)
    frontier.hold(4, owner=1, start=2)
    assert (len(frontier), frontier.memory_bytes) == (11, 5)
    assert frontier.plan(100) == [
        Part(0, 3, 0, 0, True),
        Part(3, 2, 0, 3, False),
        Part(5, 2, 1, 0, True),
        Part(7, 4, 1, 2, False),
    ]
    assert frontier.plan(2)[-2:] == [Part(7, 2, 1, 2, False), Part(9, 2, 1, 4, False)]
    assert frontier.read(0, 3).blob == b"abc" and frontier.read(5, 2).blob == b"de"
    with pytest.raises(RuntimeError, match="held only by the expander"):
        frontier.read(2, 2)


def _two_in_process(monkeypatch, model) -> tuple[tuple, list[tuple]]:
    """Check `model` with two expanders, both in this process so that the order is fixed:
    its summary, and the events: ("send", level, part index, expander, with encodings,
    behind), ("take", level, part index) when the engine admits a part's candidates."""
    from checker.local import bfs, expanders, workers
    from checker.search.expansion import Expand

    def two(model, count, recording=None, incremental=True):
        expanders = [workers._InProcess(model, recording, incremental) for _ in range(2)]
        expanders[1].number = 1
        return expanders

    index: dict[int, tuple[int, int]] = {}  # chunk -> (level, its part's index in the plan)
    events: list[tuple] = []
    request, send, take = expanders.Expanders._request, workers._InProcess.send, bfs._Search._take

    def spy_request(self, item, level, frontier, live):
        index[item.chunk] = (level, item.index)
        return request(self, item, level, frontier, live)

    def spy_send(self, message):
        if isinstance(message, Expand):
            sent = (self.number, message.encodings, message.behind)
            events.append(("send", *index[message.chunk], *sent))
        send(self, message)

    def spy_take(self, worker, item, *args):
        events.append(("take", *index[item.chunk]))
        take(self, worker, item, *args)

    with monkeypatch.context() as patched:
        patched.setattr(bfs, "start", two)
        patched.setattr(expanders.Expanders, "_request", spy_request)
        patched.setattr(bfs._Search, "_take", spy_take)
        patched.setattr(workers._InProcess, "send", spy_send)
        return outcome(check(model, Options(workers=2))), events


def _ahead(events: list[tuple]) -> list[int]:
    """For each part handed out, how far past the part awaited (the first not admitted)."""
    taken: dict[int, int] = {}
    ahead = []
    for kind, level, index, *_ in events:
        if kind == "take":
            taken[level] = index + 1
        else:
            ahead.append(index - taken.get(level, 0))
    return ahead


@pytest.mark.parametrize("rm", ["4", "5", "6"])
def test_parts_go_ahead_of_one_that_waits_and_behind_is_said(monkeypatch, rm):
    """A part whose expander has IN_FLIGHT parts in hand waits, and later parts go to the
    other one meanwhile; a part sent to an expander after a later one is marked `behind`
    (and only then). The engine asks for the encodings of the states beyond an expander's
    share only (it never reads the others), and the result is one expander's."""
    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": rm})
    one = outcome(check(model, Options()))
    two, events = _two_in_process(monkeypatch, model)
    assert two == one
    sends = [e for e in events if e[0] == "send"]
    out_of_order = False
    for level in {e[1] for e in sends}:
        sent = [(i, w, behind) for _, lv, i, w, _, behind in sends if lv == level]
        for number in (0, 1):
            last = -1
            for i, w, behind in sent:
                if w == number:
                    assert behind == (i < last), (level, number, i)
                    last = max(last, i)
        out_of_order = out_of_order or [i for i, *_ in sent] != sorted(i for i, *_ in sent)
    assert out_of_order
    asked = [e[4] for e in sends]
    assert asked.count(False) > len(asked) // 2 and True in asked
    assert any(e[5] for e in sends)


def test_parts_go_ahead_less_far_while_the_replies_waiting_hold_many_encodings(monkeypatch):
    """Replies that arrive before the one awaited wait in the engine's memory: past
    AHEAD_BYTES of encodings, parts are handed out only IN_FLIGHT per expander ahead."""
    from checker.local import expanders

    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "5"})
    near = expanders.IN_FLIGHT * 2
    _, events = _two_in_process(monkeypatch, model)
    assert max(_ahead(events)) >= near
    monkeypatch.setattr(expanders, "AHEAD_BYTES", 0)
    _, events = _two_in_process(monkeypatch, model)
    assert max(_ahead(events)) < near


@pytest.mark.parametrize("behind", [False, True])
def test_a_batch_behind_drops_only_what_it_met_itself(behind):
    """A batch that comes earlier in the level than one the expander expanded drops only
    the successors equal to its own states or to each other (the engine decides about its
    candidates first, so one met in the later batch may be new here); what it met is
    remembered for the batches after."""
    from checker.search.expansion import Expand, Expander, StartLevel

    expander = Expander(Model(Walk()))  # x moves up by 1 or 2
    expander.levels[0] = [Record(x=0), Record(x=1)]
    expander.start_level(StartLevel(0, True, []))
    later = expander.handle(Expand(0, 0, start=1, count=1))  # x = 1: 2 and 3
    earlier = expander.handle(Expand(1, 0, start=0, count=1, behind=behind))  # x = 0: 1, 2
    assert [s.x for s in expander.pending[0][1]] == [2, 3]
    assert [s.x for s in expander.pending[1][1]] == ([1, 2] if behind else [])
    assert len(np.frombuffer(later.fps, np.uint64)) == 2
    assert len(np.frombuffer(earlier.fps, np.uint64)) == (2 if behind else 0)
    assert {s.x for s in expander.seen} == {0, 1, 2, 3}


def test_a_recorded_search_with_parts_behind_records_one_expanders_graph(monkeypatch):
    """A recorded search (its met states a dict of fingerprints) with parts sent behind
    records the same graph, states and counts as one expander."""
    from checker.behaviour import Recording
    from checker.local import bfs, workers
    from checker.run import record
    from checker.search.expansion import Expand

    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "5"})
    wanted = Recording(states=True)
    one, graph = record(model, wanted, Options(deadlock=False))

    def two(model, count, recording=None, incremental=True):
        expanders = [workers._InProcess(model, recording, incremental) for _ in range(2)]
        expanders[1].number = 1
        return expanders

    behind: list[bool] = []
    send = workers._InProcess.send

    def spy(self, message):
        if isinstance(message, Expand):
            behind.append(message.behind)
        send(self, message)

    monkeypatch.setattr(bfs, "start", two)
    monkeypatch.setattr(workers._InProcess, "send", spy)
    result, again = record(model, wanted, Options(deadlock=False, workers=2))
    assert any(behind)
    assert outcome(result) == outcome(one)
    for name in ("fps", "starts", "targets", "actions"):
        assert np.array_equal(getattr(again, name), getattr(graph, name)), name
    assert again.encodings == graph.encodings


def test_an_expander_drops_the_candidates_admitted_from_another_expanders_part():
    """Told the fingerprints the engine admitted from another expander's part (Known), an
    expander drops its candidates among them before checking them: the reply lists the
    others, at their positions among the successors, as if it had met the dropped ones."""
    from checker.search.expansion import Expand, Expander, Known, StartLevel

    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "2"})
    init = model.initial_states()[0]
    alone = Expander(model)
    alone.levels[0] = [init]
    alone.start_level(StartLevel(0, True, []))
    full = Expansion(alone.handle(Expand(0, 0, start=0, count=1)), False)
    assert len(full.positions) == 5  # TMAbort, then RMPrepare and RMChooseToAbort of each RM
    told = Expander(model)
    told.levels[0] = [init]
    told.start_level(StartLevel(0, True, []))
    told.handle(Known(full.fps[[1, 3]].tobytes()))
    cut = Expansion(told.handle(Expand(0, 0, start=0, count=1)), False)
    assert cut.positions.tolist() == full.positions[[0, 2, 4]].tolist()
    assert cut.fps.tolist() == full.fps[[0, 2, 4]].tolist()
    assert cut.actions.tolist() == full.actions.tolist()  # every successor still counted
    assert told.dropped == 2
    told.start_level(StartLevel(1, True, []))  # a new level: what it was told is forgotten
    assert told.known == set()


def test_two_workers_tell_each_other_what_was_admitted(monkeypatch):
    """With two workers, the engine tells each the fingerprints it admitted from the other's
    parts (Expanders.share), and the result is that of one worker."""
    from checker.local import expanders

    shared: list[int] = []
    share = expanders.Expanders.share

    def spy(self, worker, fps):
        share(self, worker, fps)
        shared.append(self.shared)

    monkeypatch.setattr(expanders.Expanders, "share", spy)
    model = load_model(str(ROOT / "specs/examples/two_phase.py"), {"rm": "3"})
    alone = check(model, Options())
    assert not any(shared)  # one expander: nobody to tell
    shared.clear()
    assert outcome(check(model, Options(workers=2))) == outcome(alone)
    # Every state found past the initial level, told once to the other worker.
    assert shared[-1] == alone.distinct_states - len(model.initial_states())
