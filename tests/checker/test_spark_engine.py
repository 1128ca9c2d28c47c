"""The Spark engine against the local one: same verdict, counts, coverage and trace.

One `local[2,4]` session serves the module (starting Spark costs ~10 s): two threads, and a
failed task is tried up to 4 times, as on a cluster. Skipped where Java or pyspark is missing,
with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from itertools import product
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from checker import Record, Spec, action, checkpoint, constant, invariant, resuming
from checker import spark as se
from checker.errors import ExitCode, NondeterminismError
from checker.loader import load_model
from checker.local.bfs import check
from checker.model import Model
from checker.result import CheckResult
from checker.search.options import Options
from tests.bundled import BUNDLED
from tests.checker.outcomes import copy_each_checkpoint, outcome
from tests.checker.test_random_graphs import matches_networkx, systems
from tests.conftest import ROOT

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")
pytest.importorskip("pyspark", reason="the Spark engine needs pyspark")
pytest.importorskip("pyarrow", reason="the Spark engine needs pyarrow")
JAVA = se.java_problem()


@pytest.fixture(scope="session")
def spark():
    if JAVA:
        pytest.skip(JAVA)
    session = se.session(
        master="local[2,4]",
        conf={
            "spark.sql.shuffle.partitions": "4",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            # A short-lived JVM on busy cores: C2's compiling costs more CPU than it saves
            # here (C1 only and one GC thread: about 30 % less of the JVM's CPU).
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        },
    )
    yield session
    session.stop()


ON_SPARK = se.SparkSettings(driver_states=0)  # every level a Spark job
IN_DRIVER = se.SparkSettings(driver_states=10**9)  # every level expanded in the driver


def both(spark, model: Model, **options: object) -> tuple[CheckResult, CheckResult]:
    """Check `model` with both engines and assert they agree on everything: the Spark engine
    with every level on Spark, and with every level in the driver."""
    opts = Options(**options)
    local = check(model, opts)
    distributed = se.check(model, opts, spark=spark, settings=ON_SPARK)
    assert outcome(distributed) == outcome(local)
    in_driver = se.check(model, opts, spark=spark, settings=IN_DRIVER)
    assert outcome(in_driver) == outcome(local)
    return local, distributed


# -- the bundled specs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "constants", "verdict", "distinct"),
    BUNDLED,
    ids=[f"{p.rsplit('/', 1)[-1]}-{'-'.join(c.values()) or 'defaults'}" for p, c, _, _ in BUNDLED],
)
def test_bundled_specs_agree_with_the_local_engine(spark, path, constants, verdict, distinct):
    local, distributed = both(spark, load_model(ROOT / path, constants))
    assert distributed.verdict == verdict
    if distinct is not None:
        assert distributed.distinct_states == distinct
    if verdict == "violation":
        assert distributed.trace and distributed.trace[-1].state == local.trace[-1].state


# -- stopping inside a level, in the local engine's order ------------------------------------


class Race(Spec):
    """Two branches, a and b, of three steps. Depth 3 holds (a, 2) then (b, 2): each can be
    made to deadlock, raise, or step to a state that breaks the invariant, to see which of two
    events in one level is reported first: the local engine checks a's successors before it
    expands b."""

    a = constant("ok", "what (a, 2) does: ok, dead, raise, exit or bad")
    b = constant("ok", "the same for (b, 2)")

    def init(self):
        return Record(branch="", n=0)

    @action(step=("a", "b"))
    def go(self, s, step):
        if s.n == 0:
            return s.replace(branch=step, n=1)
        if s.branch != step or s.n == 3:
            return None
        if s.n == 2 and getattr(self, step) == "raise":
            raise ValueError(f"{step} raised")
        if s.n == 2 and getattr(self, step) == "exit":
            sys.exit(0)  # on an executor too, the spec's error: never a pass
        if s.n == 2 and getattr(self, step) == "dead":
            return None
        return s.replace(n=s.n + 1)

    @invariant
    def fine(self, s):
        return not (s.n == 3 and getattr(self, s.branch) == "bad")


@pytest.mark.parametrize(
    ("a", "b", "verdict"),
    [
        ("bad", "dead", "violation"),
        ("dead", "bad", "deadlock"),
        ("bad", "raise", "violation"),
        ("raise", "bad", "error"),
        ("raise", "dead", "error"),
        ("dead", "raise", "deadlock"),
        ("ok", "ok", "deadlock"),  # at (a, 3), one level down
    ],
)
def test_the_first_event_of_a_level_wins(spark, a, b, verdict):
    _, result = both(spark, Model(Race(a=a, b=b)), deadlock=True)
    assert result.verdict == verdict


def test_errors_and_deadlocks_report_the_failing_state(spark):
    _, raised = both(spark, Model(Race(a="ok", b="raise")))
    assert raised.verdict == "error" and raised.exit_code == ExitCode.EVALUATION_ERROR
    assert (raised.error.name, raised.error.params) == ("go", {"step": "b"})
    assert "ValueError: b raised" in raised.error.message
    assert [s.state.n for s in raised.trace] == [0, 1, 2]
    _, exited = both(spark, Model(Race(a="ok", b="exit")))
    assert exited.verdict == "error" and (exited.error.name, exited.error.params) == (
        "go",
        {"step": "b"},
    )
    assert exited.error.message.startswith("raised SystemExit: 0 (spec code cannot end")
    _, dead = both(spark, Model(Race(a="dead", b="dead")), deadlock=True)
    assert dead.verdict == "deadlock" and dead.trace[-1].state == Record(branch="a", n=2)


class Wide(Spec):
    """Over 247 successors per state (keys with multi-byte components) and many paths to the
    same states: the parent kept must be the first one in the local engine's order."""

    width = constant(300)
    bad = constant(-1)

    def init(self):
        return [Record(x=0, y=0), Record(x=0, y=0), Record(x=1, y=0)]

    @action
    def spread(self, s):
        if s.y:
            return None
        return [s.replace(x=i, y=1) for i in range(self.width - 1, -1, -1)]

    @action(d=(3, 7))
    def fold(self, s, d):
        return s.replace(x=s.x % d, y=s.y + 1) if 0 < s.y < 3 else None

    @invariant
    def not_bad(self, s):
        return s.x != self.bad or s.y < 2


def test_parents_are_chosen_in_the_local_engines_order(spark):
    _, ok = both(spark, Model(Wide()), deadlock=False)  # Wide stops at y = 3
    assert ok.distinct_states == 2 + 300 + 7 + 7
    _, bad = both(spark, Model(Wide(bad=5)))
    assert bad.verdict == "violation" and len(bad.trace) == 3
    assert bad.trace[1].state.x == 299  # the widest index reached first: (299 % 7 == 5)


def test_max_states_and_max_depth_bounds(spark):
    model = Model(Wide())
    for limit in (1, 2, 3, 250, 302, 305, 316, 317):
        _, result = both(spark, model, max_states=limit, deadlock=False)
        assert result.distinct_states == min(limit, 316)
    # 302 states in two levels; then (2, 2) is the 303rd and the violating (5, 2) the 304th.
    _, cut = both(spark, Model(Wide(bad=5)), max_states=303)
    assert cut.verdict == "incomplete" and cut.distinct_states == 303
    _, bad = both(spark, Model(Wide(bad=5)), max_states=304)
    assert bad.verdict == "violation" and bad.distinct_states == 304
    for depth in (1, 2, 3, 4):
        _, result = both(spark, model, max_depth=depth, deadlock=False)
        assert result.verdict == ("ok" if depth == 4 else "incomplete")
    _, dead = both(spark, Model(Race(a="ok", b="dead")), max_depth=3, deadlock=True)
    assert dead.verdict == "deadlock"  # found while expanding the states at the bound
    _, raised = both(spark, Model(Race(a="raise")), max_depth=3)
    assert raised.verdict == "error"


class BadInvariant(Spec):
    def init(self):
        return [Record(x=0), Record(x=1)]

    @action(d=(1, 2))
    def step(self, s, d):
        return s.replace(x=s.x + d) if s.x < 4 else None

    @invariant
    def checked(self, s):
        if s.x == 3:
            raise KeyError("three")
        return True


@pytest.mark.parametrize("threshold", [2, 40])
def test_levels_move_between_the_driver_and_spark_with_the_same_result(spark, threshold):
    """Levels below the threshold run in the driver, the others on Spark, back and forth: the
    result is the local engine's, stops inside a level included."""
    mixed = se.SparkSettings(driver_states=threshold)
    kip903 = load_model(ROOT / "specs" / "light" / "kip903.py", {"max_unclean_shutdowns": "0"})
    cases = [
        (Model(Wide(bad=5)), Options()),
        (Model(Wide(bad=5)), Options(max_states=304)),
        (Model(Wide()), Options(max_depth=3, deadlock=False)),
        (Model(Race(a="ok", b="dead")), Options(deadlock=True)),
        (kip903, Options(witness="replica_back_with_an_empty_disk")),
    ]
    for model, options in cases:
        local = check(model, options)
        assert outcome(se.check(model, options, spark=spark, settings=mixed)) == outcome(local)


def test_an_invariant_that_raises_is_reported_like_the_local_engine(spark):
    _, result = both(spark, Model(BadInvariant()))
    assert result.verdict == "error" and result.error.kind == "invariant"
    assert [s.state.x for s in result.trace] == [1, 3]


@pytest.mark.fault("nondeterminism")
@pytest.mark.parametrize("where", ["action", "invariant"])
def test_a_nondeterministic_spec_is_the_same_error_as_on_the_local_engine(spark, where):
    """A level in the driver evaluates a state again as the local engine does, and says the
    same when the spec answers otherwise (checker.errors.NondeterminismError)."""
    from tests.checker.test_bfs import Fickle

    with pytest.raises(NondeterminismError, match=r"not deterministic.*\{x: 2\}"):
        se.check(Model(Fickle(where)), Options(deadlock=False), spark=spark, settings=IN_DRIVER)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(system=systems())
def test_random_transition_systems_match_networkx(spark, system):
    mixed = se.SparkSettings(driver_states=3)  # levels go back and forth
    matches_networkx(
        system, lambda model: se.check(model, Options(deadlock=False), spark=spark, settings=mixed)
    )


def test_constraints_view_and_symmetry_agree_with_the_local_engine(spark):
    from tests.checker.test_constraints import Grid, Logged, StateBounded, StepBounded
    from tests.checker.test_symmetry import AllSet, FlipAny, Toggles

    # Not expanded, and no deadlock: a state outside the state constraint, or one whose
    # only successor an action constraint discards.
    for spec in (StateBounded(), StepBounded()):
        _, bounded = both(spark, Model(spec), deadlock=True)
        assert (bounded.verdict, bounded.distinct_states, bounded.states_generated) == ("ok", 3, 3)
    _, dead = both(spark, Model(Grid()), deadlock=True)
    assert dead.verdict == "deadlock" and dead.trace[-1].state == Record(x=2, y=2)
    _, viewed = both(spark, Model(Logged()))
    assert (viewed.distinct_states, viewed.states_generated) == (4, 6)
    _, reduced = both(spark, Model(Toggles(n=4)))
    assert reduced.distinct_states == 5
    _, found = both(spark, Model(AllSet()))
    assert [s.state.bits for s in found.trace] == [(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)]
    _, first = both(spark, Model(FlipAny(n=4)))
    assert first.trace[-2].state.bits == (1, 1, 1, 0)


def test_step_properties_refinements_and_tlcs_constraint_agree_with_the_local_engine(spark):
    from tests.checker.test_steps import HourMinuteClock, LikeTlc, NeverDown

    _, down = both(spark, Model(NeverDown(top=5)))
    assert down.step_property == "never_down" and down.trace[-1].action == "reset"
    _, clock = both(spark, Model(HourMinuteClock(skip=3)))
    assert clock.step_property == "hour_clock" and len(clock.trace) == 4
    _, holds = both(spark, Model(HourMinuteClock()))
    assert (holds.verdict, holds.distinct_states) == ("ok", 36)
    _, tlc = both(spark, Model(LikeTlc()), deadlock=False)
    assert (tlc.states_generated, tlc.distinct_states) == (11, 5)
    _, six = both(spark, Model(LikeTlc(six=True)), deadlock=False)
    assert six.outside_constraints and [s.state.x for s in six.trace] == [0, 2, 4, 6]


def test_kinds_final_states_and_reachability_agree_with_the_local_engine(spark):
    from tests.checker.test_bfs import Stopping
    from tests.checker.test_kinds import Faults

    _, kinds = both(spark, Model(Faults()))
    assert kinds.verdict == "error" and "faults.crash: int in the initial states" in (
        kinds.error.message
    )
    _, final = both(spark, Model(Stopping()))
    assert final.verdict == "ok" and final.distinct_states == 5
    model = load_model(ROOT / "specs" / "light" / "kip903.py", {"max_unclean_shutdowns": "0"})
    _, witness = both(spark, model, witness="replica_back_with_an_empty_disk")
    assert [s.action for s in witness.trace] == [None, "replace_disk", "register_broker"]
    die_hard = ROOT / "specs" / "examples" / "die_hard.py"
    _, unreached = both(spark, load_model(die_hard, {"goal": "9"}))
    assert (unreached.verdict, unreached.unreached) == ("violation", ["solved"])


@pytest.mark.fault("spark")
def test_errors_from_the_executors_are_explained():
    worker = (
        "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
        '  File "/x/pyspark/serializers.py", line 483, in loads\n'
        "    return cloudpickle.loads(obj, encoding=encoding)\n"
    )
    missing = se.explain(Exception(worker + "ModuleNotFoundError: No module named 'xxhash'"))
    assert missing.startswith("a Python worker lacks the module 'xxhash' (ModuleNotFoundError")
    assert "spark.archives=env.tar.gz#env" in missing and "spark.pyspark.python" in missing
    raised = se.explain(Exception(worker + "ValueError: bad state\n"))
    assert raised == "a Python worker raised ValueError: bad state"
    java = (
        "An error occurred while calling o42.collectToPython.\n: org.apache.spark.SparkException:"
        ' Job aborted\njava.io.IOException: Cannot run program "/no/python": error=2,'
        " No such file or directory\n\tat java.base/java.lang.ProcessBuilder.start"
    )
    assert se.explain(Exception(java)).startswith(
        "the executors cannot run the Python '/no/python' (error=2, No such file or directory)."
    )
    assert se.explain(Exception("Job aborted\nmore")) == "Job aborted"


def test_a_level_is_reported_to_on_level_and_as_a_line_without_a_bar():
    """LevelReports (no Spark job): each level's LevelStats to `on_level`, and a line a level
    to the progress stream when there is no bar."""
    import io

    from checker.progress import Progress
    from checker.spark.reporting import LevelReports

    stream, seen = io.StringIO(), []
    reports = LevelReports(Progress(stream, bar=False), seen.append)
    stats = se.LevelStats(3, 40, 1_234, 2_000, 9_876, 0.5, "driver")
    reports.level(stats)
    assert seen == [stats]
    line = stream.getvalue()
    assert line.startswith(
        "Level 3: 1,234 new states from 40 (0.50 s, in the driver); 2,000 distinct, 9,876"
        " generated in "
    )
    assert line.endswith(" s.\n") and line.count("\n") == 1


def test_key_components_compare_like_tuples():
    values = [0, 1, 246, 247, 248, 255, 256, 65_535, 65_536, 2**40]
    for a, b, c, d in product(values[::3], values, values[1::4], values):
        assert (se.component(a) + se.component(b) < se.component(c) + se.component(d)) == (
            (a, b) < (c, d)
        )
    assert se.last_component(b"\x05" + se.component(300), b"\x05") == 300
    assert se.unsigned(se.signed(2**64 - 1)) == 2**64 - 1 and se.signed(2**64 - 1) == -1


# -- checkpoints, and surviving a killed worker --------------------------------------------------

# Three counters up to 2, a bad state planted at depth 6. In a Spark worker (never in the process
# that loaded the spec), the state `kill_at` kills its Python worker and `pause_at` pauses for a
# minute, each once: markers in `folder` remember it.
WALK = """\
import os
import time
from pathlib import Path

from checker import Record, Spec, action, constant, invariant

DRIVER = os.getpid()


def once(folder, name):
    marker = Path(folder) / name
    if os.getpid() == DRIVER or marker.exists():
        return False
    marker.touch()
    return True


class Walk(Spec):
    folder = constant("", "where a test's markers go")
    kill_at = constant("", "a state a,b,c whose expansion kills its Python worker, once")
    pause_at = constant("", "a state a,b,c whose expansion pauses a minute, once")

    def init(self):
        return Record(a=0, b=0, c=0)

    @action(k=("a", "b", "c"))
    def inc(self, s, k):
        here = f"{s.a},{s.b},{s.c}"
        if here == self.kill_at and once(self.folder, "killed"):
            os.kill(os.getpid(), 9)
        if here == self.pause_at and once(self.folder, "reached"):
            time.sleep(60)
        if getattr(s, k) >= 2:
            return None
        return s.replace(**{k: getattr(s, k) + 1})

    @invariant
    def not_planted(self, s):
        return (s.a, s.b, s.c) != (2, 2, 1)
"""


def walk(tmp_path: Path, **constants: str) -> Model:
    spec = tmp_path / "spark_walk.py"
    spec.write_text(WALK)
    return load_model(spec, {"folder": str(tmp_path), **constants})


def saving(model: Model, folder: Path, resumed=None) -> checkpoint.Checkpoints:
    settings = resuming.settings_of(model, Options(deadlock=False), "spark", every=0)
    return checkpoint.Checkpoints(folder, settings, resumed)


@pytest.mark.fault("spark")
def test_a_killed_python_worker_is_retried_with_identical_results(spark, tmp_path):
    model = walk(tmp_path, kill_at="1,1,0")  # in the middle of level 3
    distributed = se.check(model, Options(), spark=spark, settings=ON_SPARK)
    assert (tmp_path / "killed").exists()
    assert outcome(distributed) == outcome(check(model, Options()))
    assert distributed.verdict == "violation" and len(distributed.trace) == 6


def test_resuming_a_checkpoint_of_any_level_gives_the_same_result(spark, tmp_path, monkeypatch):
    model = load_model(ROOT / "specs" / "examples" / "die_hard.py")
    local = outcome(check(model, Options()))
    # Written with every level on Spark, resumed in the driver, and the other way round.
    for writer, reader in ((ON_SPARK, IN_DRIVER), (IN_DRIVER, ON_SPARK)):
        with monkeypatch.context() as patch:
            copies = copy_each_checkpoint(patch, tmp_path)
            folder = tmp_path / f"ck-{writer.driver_states}"
            first = se.check(
                model, Options(), spark=spark, checkpoints=saving(model, folder), settings=writer
            )
        assert outcome(first) == local
        assert [c.name for c in copies] == [f"level-{n}" for n in range(1, 7)]
        for copy in (copies[1], copies[-1]):
            resumed = saving(model, copy, checkpoint.read(copy))
            again = se.check(model, Options(), spark=spark, checkpoints=resumed, settings=reader)
            assert outcome(again) == local
        for copy in copies:
            shutil.rmtree(copy)


@pytest.mark.fault("spark")
def test_ctrl_c_leaves_a_checkpoint_to_resume(spark, tmp_path, mc):
    model = walk(tmp_path, pause_at="1,1,1")  # level 4

    def interrupt() -> None:
        for _ in range(1200):
            if (tmp_path / "reached").exists():
                os.kill(os.getpid(), signal.SIGINT)  # to the driver, inside a Spark job
                return
            time.sleep(0.05)

    threading.Thread(target=interrupt, daemon=True).start()
    stopped = se.check(
        model, Options(), spark=spark, checkpoints=saving(model, tmp_path / "ck"), settings=ON_SPARK
    )
    assert (stopped.verdict, stopped.bound) == ("incomplete", "interrupted")
    saved = checkpoint.read(tmp_path / "ck")
    assert (saved.counts["level"], saved.counts["states"]) == (4, 1 + 3 + 6 + 7)
    refused = mc("check", "--resume", tmp_path / "ck", "--engine", "local")
    assert refused.code == 151 and "options differ: --engine local vs spark" in refused.err
    resumed = mc("check", "--resume", tmp_path / "ck", "--progress", "0")  # the engine is spark
    constants = [f"{name}={value}" for name, value in model.constants.items()]
    local = mc("check", model.path, *[f for c in constants for f in ("-D", c)], "--progress", "0")
    assert resumed.code == local.code == ExitCode.VIOLATION
    finished = [line for line in resumed.out.splitlines() if "Finished in" not in line]
    assert finished == [line for line in local.out.splitlines() if "Finished in" not in line]


# -- the command line ------------------------------------------------------------------------


def test_mc_check_engine_spark_prints_the_local_report(spark, mc):
    spec = ROOT / "specs" / "examples" / "die_hard.py"

    def report(*args: str):
        run = mc("check", spec, "--progress", "0", *args)
        return run.code, [line for line in run.out.splitlines() if "Finished in" not in line]

    assert report("--engine", "spark") == report()
    assert report("--engine", "spark")[0] == ExitCode.VIOLATION


def test_mc_ablate_engine_spark_gives_the_local_table(spark, mc, tmp_path):
    """The rows one after another on the session: the same cells and counts as local rows."""
    spec = ROOT / "specs" / "light" / "kip996_read.py"

    def table(*args: str):
        out = tmp_path / "table.json"
        run = mc("ablate", spec, "-D", "max_isolations=0", "--json", out, "--progress", "0", *args)
        doc = json.loads(out.read_text())
        rows = [(r["name"], r["cells"], r["distinct_states"], r["checks"]) for r in doc["rows"]]
        return run.code, doc["engine"], rows

    code, engine, rows = table("--engine", "spark")
    assert (code, engine) == (0, "spark")
    assert (code, "local", rows) == table("--workers", "2")
    assert rows[1][1]["reads_are_linearizable"]["length"] == 5
    assert mc("ablate", spec, "--engine", "spark", "--workers", "2").code == 151


def test_spark_options_need_the_spark_engine(mc):
    spec = ROOT / "specs" / "examples" / "die_hard.py"
    run = mc("check", spec, "--master", "local[2]")
    assert run.code == ExitCode.CONFIG_ERROR and "--master is for --engine spark" in run.err
    run = mc("check", spec, "--engine", "spark", "--master", "local[2]", "--remote", "local")
    assert run.code == ExitCode.CONFIG_ERROR and "exclude each other" in run.err


@pytest.mark.fault("spark")
def test_missing_java_is_a_clear_error(mc, monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    run = mc("check", ROOT / "specs" / "examples" / "die_hard.py", "--engine", "spark")
    assert run.code == ExitCode.ENGINE_ERROR == 153
    assert "needs Java 17" in run.err and "Traceback" not in run.err


@pytest.mark.fault("spark")
def test_missing_pyspark_is_a_clear_error(mc, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    run = mc("check", ROOT / "specs" / "examples" / "die_hard.py", "--engine", "spark")
    assert run.code == ExitCode.ENGINE_ERROR
    assert "needs pyspark" in run.err and "Traceback" not in run.err


# -- Spark Connect ---------------------------------------------------------------------------

CONNECT = textwrap.dedent(
    """
    import json, sys
    from checker import spark as se
    from checker.local.bfs import check
    from checker.loader import load_model
    try:
        spark = se.session(remote="local", conf={"spark.sql.shuffle.partitions": "2"})
    except Exception as exc:
        print(json.dumps({"skip": f"Spark Connect did not start: {exc}"}))
        sys.exit(0)
    model = load_model(sys.argv[1], {"max_records": "1", "fixed": "false"})
    mine = se.check(model, spark=spark)
    theirs = check(model)
    spark.stop()
    same = lambda r: [r.verdict, r.invariant, r.distinct_states, r.states_generated, r.depth,
                      r.queue, [(s.action, s.params, dict(s.state)) for s in r.trace]]
    print(json.dumps({"connect": se.is_connect(spark), "verdict": mine.verdict,
                      "same": same(mine) == same(theirs)}, default=str))
    """
)


def test_spark_connect_local(tmp_path: Path):
    """A classic and a Connect session do not mix in one process: this one runs apart."""
    if JAVA:
        pytest.skip(JAVA)
    spec = ROOT / "specs" / "light" / "kip966.py"  # imports three light specs: all shipped
    run = subprocess.run(
        [sys.executable, "-c", CONNECT, str(spec)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    if "skip" in answer:
        pytest.skip(answer["skip"])
    assert answer == {"connect": True, "verdict": "violation", "same": True}


def test_the_warm_up_rehearses_a_level_on_every_core_and_stops_when_the_search_ends(spark):
    from checker.spark.executor import Shipped
    from checker.spark.tables import SessionTables
    from checker.spark.warmup import Rehearsal, WarmUp, warmed

    model = load_model(str(ROOT / "specs" / "examples" / "two_phase.py"), {"rm": "3"})
    first = model.initial_one(0)
    seed = (se.signed(first.fp), first.data, first.binding)
    shipped = Shipped.of(model)
    tables = SessionTables(spark, se.SparkSettings())
    tables.configure()
    se.ship_code(spark, model)
    warm = WarmUp(spark, Rehearsal(shipped, seed, len(model.actions), 2, 2), tables.cut).start()
    warm.thread.join(timeout=300)
    assert warm.ran == [0, 1]  # each expansion task loaded the model and expanded its state
    assert warmed(spark, shipped)
    warm.stop()  # ended already: returns at once
    again = WarmUp(spark, Rehearsal(shipped, seed, len(model.actions), 2, 2), tables.cut).start()
    assert again.thread.ident is None  # rehearsed already in this session: none started
    again.stop()
    # Stopped while it runs (a search that ended first): its job is cancelled, its thread
    # ends, and the session serves the next search.
    other = Shipped(shipped.digest + "-other", shipped.data)
    running = WarmUp(spark, Rehearsal(other, seed, len(model.actions), 64, 2), tables.cut).start()
    running.stop()
    tables.close()
    assert not running.thread.is_alive() and running.ran in ([], list(range(64)))
    result = se.check(model, spark=spark, settings=se.SparkSettings(driver_states=0))
    assert result.distinct_states == check(model).distinct_states


def test_a_search_after_warm_up_gives_the_local_engines_counts_and_trace(spark):
    defines = {"fixed": "false", "max_unclean_shutdowns": "0"}
    model = load_model(str(ROOT / "specs" / "light" / "kip903.py"), defines)
    se.warm_up(spark, model)
    result = se.check(model, spark=spark, settings=se.SparkSettings(driver_states=0))
    local = check(model)
    assert (result.verdict, result.distinct_states, result.states_generated) == (
        local.verdict,
        local.distinct_states,
        local.states_generated,
    )
    assert local.trace and [s.action for s in result.trace] == [s.action for s in local.trace]
