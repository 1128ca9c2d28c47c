"""`mc` end to end: exit codes (TLC's), bad inputs, JSON, progress, `mc list`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from tests.conftest import MC, ROOT, SPECS, default_sigint, finish

COUNTER = """
    from checker import Record, Spec, action, constant, invariant, terminal

    class Counter(Spec):
        '''Counts to top.'''

        top = constant(3, "the largest value")
        fast = constant(False, "also step by 2")
        label = constant("c", "a name")

        def init(self):
            return Record(x=0)

        @action(step=(1, 2))
        def add(self, s, step):
            if (step == 2 and not self.fast) or s.x + step > self.top:
                return None
            return s.replace(x=s.x + step)

        @invariant
        def below_three(self, s):
            return s.x < 3

        @terminal
        def at_top(self, s):
            return s.x == self.top
"""


def test_ok_and_violation_exit_codes(mc, write_spec):
    spec = write_spec(COUNTER)
    ok = mc("check", spec, "-D", "top=2")
    assert ok.code == 0 and "All invariants hold over 3 distinct states." in ok.out
    bad = mc("check", spec)
    assert bad.code == 12
    assert "Error: invariant below_three is violated." in bad.out
    assert "State 4: add(step=1)" in bad.out and "    x = 3" in bad.out


def test_deadlock_exit_code(mc, write_spec):
    spec = write_spec(COUNTER.replace("        @terminal\n", ""))
    result = mc("check", spec, "-D", "top=2")
    assert result.code == 11 and "deadlock reached" in result.out
    assert "State 3: add(step=1)" in result.out
    assert mc("check", spec, "-D", "top=2", "--no-deadlock").code == 0


def test_incomplete_exit_code(mc, write_spec):
    spec = write_spec(COUNTER)
    result = mc("check", spec, "-D", "top=2", "--max-states", "2")
    assert result.code == 152 and "Search incomplete: --max-states 2 reached" in result.out


def test_action_raising_exit_code_names_action_params_and_state(mc, write_spec):
    spec = write_spec(
        COUNTER.replace("x=s.x + step", "x=s.x + step if s.x < 1 else 1 // (s.x - 1)")
    )
    result = mc("check", spec)
    assert result.code == 75
    assert "Error: action add(step=1) raised ZeroDivisionError" in result.out
    assert f'File "{spec}"' in result.out
    assert "The behavior up to the state where it failed, 2 states:" in result.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-D", "nope=1"], "has no constant 'nope' (constants: top, fast, label)"),
        (["-D", "top=three"], "-D top=three: expected an integer"),
        (["-D", "fast=maybe"], "expected true or false"),
        (["-D", "top"], "expected NAME=VALUE"),
        (["--invariant", "nope"], "--invariant nope: Counter has no such invariant"),
        (["--max-depth", "zero"], "'zero' is not a valid integer"),
        (["--json", "/nonexistent-dir/out.json"], "cannot write"),
    ],
)
def test_bad_options_and_constants_exit_151(mc, write_spec, args, message):
    result = mc("check", write_spec(COUNTER), *args)
    assert result.code == 151
    assert message in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("source", "name", "message"),
    [
        (None, "missing.py", "no such file"),
        ("x = 1", "spec.txt", "a spec is a Python file"),
        ("def broken(:\n    pass\n", "spec.py", "spec.py:1: syntax error"),
        ("import no_such_module_here\n", "spec.py", "ModuleNotFoundError"),
        ("x = 1\n", "spec.py", "defines no Spec subclass"),
        (
            "from checker import Spec, Record\nclass S(Spec):\n    def init(self):\n"
            "        return Record(x=0)\n",
            "spec.py",
            "declares no actions",
        ),
        (
            "from checker import Spec, Record, action\nclass S(Spec):\n    @action\n"
            "    def a(self, s):\n        return None\n",
            "spec.py",
            "has no initial state",
        ),
    ],
)
def test_specs_that_cannot_be_loaded_exit_150(mc, tmp_path, source, name, message):
    path = tmp_path / name
    if source is not None:
        path.write_text(source)
    result = mc("check", path)
    assert result.code == 150
    assert message in result.err
    assert "Traceback" not in result.err


def test_an_undecorated_action_override_exits_150(mc, write_spec):
    spec = write_spec(
        COUNTER
        + """
    class Faster(Counter):
        def add(self, s, step):
            return None

    spec = Faster
"""
    )
    result = mc("check", spec)
    assert result.code == 150 and "Faster.add overrides an action" in result.err


def test_a_failed_run_leaves_no_empty_json_file(mc, tmp_path):
    out = tmp_path / "result.json"
    result = mc("check", tmp_path / "missing.py", "--json", out)
    assert result.code == 150 and not out.exists()


def test_a_broken_on_template_does_not_hide_the_violation(mc, write_spec):
    spec = write_spec(
        COUNTER.replace("from checker import", "from checker import on,").replace(
            "        @action(step=(1, 2))\n",
            "        @action(step=(1, 2))\n        @on('p{s.nope}')\n",
        )
    )
    result = mc("check", spec)
    assert result.code == 12 and "invariant below_three is violated" in result.out


def test_debug_shows_the_traceback(mc, tmp_path):
    path = tmp_path / "spec.py"
    path.write_text("import no_such_module_here\n")
    result = mc("--debug", "check", path)
    assert result.code == 150 and "Traceback" in result.err


def test_json_report(mc, write_spec, tmp_path):
    out = tmp_path / "result.json"
    result = mc("check", write_spec(COUNTER), "-D", "fast=true", "--json", out)
    assert result.code == 12
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "violation" and doc["invariant"] == "below_three"
    assert doc["constants"] == {"top": 3, "fast": True, "label": "c"}
    assert doc["exit_code"] == 12
    assert [(s["action"], s["params"], s["state"]) for s in doc["trace"]] == [
        (None, {}, {"x": 0}),
        ("add", {"step": 1}, {"x": 1}),
        ("add", {"step": 2}, {"x": 3}),
    ]
    for key in ("spec", "distinct_states", "states_generated", "depth", "seconds", "coverage"):
        assert key in doc


def test_progress_lines_on_stderr(mc, write_spec):
    result = mc("check", write_spec(COUNTER), "-D", "top=2", "--progress", "0.000001")
    assert result.code == 0
    assert "Progress(1) at 00:00:00:" in result.err
    assert "states left on queue." in result.err


def test_list_shows_constants_actions_and_invariants(mc, write_spec):
    result = mc("list", write_spec(COUNTER), "-D", "top=5")
    assert result.code == 0
    assert "top = 5 (default 3)  [int]  the largest value" in result.out
    assert "add(step in (1, 2))" in result.out
    assert "below_three" in result.out


def test_console_script_exit_code_from_a_real_process():
    mc_path = shutil.which("mc", path=os.path.dirname(sys.executable))
    assert mc_path, "the mc console script is not installed next to this Python"
    proc = subprocess.run(
        [mc_path, "check", str(SPECS / "examples" / "die_hard.py"), "--progress", "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 12
    assert "invariant big_is_not_4 is violated" in proc.stdout


SET_SPEC = """
    from checker import Record, Spec, action, invariant

    class Gossip(Spec):
        '''Deliver named messages in any order; sets of strings hash differently per process.'''

        def init(self):
            return Record(inflight=frozenset({"fetch", "alter", "vote", "heartbeat"}), seen=())

        @action(m=lambda s: s.inflight)
        def deliver(self, s, m):
            return s.replace(inflight=s.inflight - {m}, seen=s.seen + (m,))

        @invariant
        def not_all_seen(self, s):
            return len(s.seen) < 4
"""


def test_same_counts_and_trace_whatever_the_hash_seed(write_spec, tmp_path):
    spec = write_spec(SET_SPEC)
    docs = []
    for seed in ("0", "1", "12345"):
        out = tmp_path / f"run-{seed}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "checker", "check", str(spec), "--json", str(out)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 12, proc.stderr
        doc = json.loads(out.read_text())
        docs.append((doc["distinct_states"], doc["states_generated"], doc["trace"]))
    assert docs[0] == docs[1] == docs[2]
    assert [s["params"]["m"] for s in docs[0][2][1:]] == ["alter", "fetch", "heartbeat", "vote"]


@pytest.mark.parametrize(
    ("sig", "workers"), [(signal.SIGINT, "1"), (signal.SIGTERM, "1"), (signal.SIGINT, "2")]
)
def test_a_signal_stops_the_run_with_partial_counts(sig, workers):
    proc = subprocess.Popen(
        [*MC, "check", str(SPECS / "examples" / "two_phase.py"), "-D", "rm=12"]
        + ["--progress", "0.5", "--workers", workers],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=default_sigint,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # exploring (a full run would take hours), not still importing
        if line.startswith("Progress"):
            break
    proc.send_signal(sig)
    out, err = finish(proc)
    assert proc.returncode == 152, err
    assert "Search incomplete: interrupted" in out
    assert "distinct states found" in out and "Traceback" not in err


def test_workers_and_memory_give_the_same_report(mc):
    outputs = []
    for flags in (("--workers", "1"), ("--workers", "2"), ("--workers", "2", "--memory", "0")):
        run = mc("check", SPECS / "light" / "kip903.py", "-D", "fixed=false", *flags)
        assert run.code == 12
        outputs.append([line for line in run.out.splitlines() if "Finished in" not in line])
    assert outputs[0] == outputs[1] == outputs[2]
    assert (
        mc("check", SPECS / "light" / "kip903.py", "--workers", "2", "--engine", "spark").code
        == 151
    )


WITHOUT_PYSPARK = """
import sys

class NoSpark:  # as if mc were installed without its Spark extra
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pyspark", "pyarrow", "py4j"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoSpark())
from checker.cli import main
main(sys.argv[1:])
"""


def test_the_local_engine_needs_no_pyspark_and_the_spark_engine_says_how_to_get_it(tmp_path):
    die_hard = str(SPECS / "examples" / "die_hard.py")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", WITHOUT_PYSPARK, "check", die_hard, *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    local = run("--invariant", "type_ok")
    assert local.returncode == 0 and "16 distinct states" in local.stdout, local.stderr
    spark = run("--engine", "spark")
    assert spark.returncode == 153
    assert "pip install 'mc[spark]'" in spark.stderr and "Traceback" not in spark.stderr


# Every command that writes standard output, on a small spec (its rules for mc ablate)
OUTPUT_COMMANDS = {
    "check": ["check", "specs/examples/die_hard.py"],
    "simulate": ["simulate", "specs/examples/die_hard.py", "--traces", "3", "--seed", "1"],
    "graph": ["graph", "specs/examples/die_hard.py"],
    "list": ["list", "specs/examples/die_hard.py"],
    "ablate": ["ablate", "{ruled}", "--workers", "1", "--progress", "0"],
}
RULED = """
from checker import Record, Spec, action, invariant, rule

class Ruled(Spec):
    cap = rule("x stops at 2")

    def init(self):
        return Record(x=0)

    @action
    def inc(self, s):
        return s.replace(x=s.x + 1) if s.x < (2 if self.cap else 4) else None

    @invariant
    def small(self, s):
        return s.x <= 3
"""


@pytest.mark.parametrize("how", ["full-disk", "reader-gone"])
@pytest.mark.parametrize("command", list(OUTPUT_COMMANDS))
def test_standard_output_that_cannot_be_written_is_a_clean_151(command, how, tmp_path):
    """`mc ... > /dev/full` (no space left) and `mc ... | true` (the reader closed the pipe):
    said on stderr, exit 151, never a traceback nor "spec code ended the run"."""
    ruled = tmp_path / "ruled.py"
    ruled.write_text(RULED)
    given = [a.format(ruled=ruled) for a in OUTPUT_COMMANDS[command]]
    args = [sys.executable, "-m", "checker", *given]
    if how == "full-disk":
        with open("/dev/full", "w") as full:
            proc = subprocess.run(args, cwd=ROOT, stdout=full, stderr=subprocess.PIPE, text=True)
        why = "No space left on device"
    else:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # the reader goes away before a byte is read
        err = proc.stderr.read().decode()
        proc.wait(60)
        proc.stderr.close()
        proc = subprocess.CompletedProcess(args, proc.returncode, "", err)
        why = "its reader closed it"
    assert proc.returncode == 151, proc.stderr
    assert f"mc: error: standard output could not be written: {why}" in proc.stderr
    assert "Traceback" not in proc.stderr and "spec code" not in proc.stderr


EXITING = """
import atexit, threading, time
from pathlib import Path
from checker import Record, Spec, action, invariant

OUT = Path({out!r})
atexit.register(lambda: OUT.with_suffix(".atexit").write_text("ran"))
def later():
    time.sleep(0.3)
    OUT.with_suffix(".thread").write_text("ran")
threading.Thread(target=later).start()  # (not a daemon: the exit waits for it)

class Up(Spec):
    def init(self):
        return Record(x=0)

    @action
    def inc(self, s):
        return s.replace(x=s.x + 1) if s.x < 5 else None

    @invariant
    def small(self, s):
        return s.x < 4
"""


@pytest.mark.parametrize("command", [[os.path.join(os.path.dirname(sys.executable), "mc")], MC])
def test_mc_exits_without_the_teardown_but_with_what_it_must_do(command, tmp_path):
    """The console script and `python -m checker` exit with the verdict's code (12, an
    invariant violated) and the whole report, without the interpreter's teardown (checker.cli
    .entry) but after what the teardown does that a user can see: another thread joined, the
    atexit functions run, the streams flushed."""
    spec = tmp_path / "spec.py"
    spec.write_text(EXITING.format(out=str(tmp_path / "out")))
    proc = subprocess.run(
        [*command, "check", str(spec), "--json", str(tmp_path / "r.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 12, proc.stderr
    assert "small" in proc.stdout and proc.stdout.rstrip().splitlines()[-1].startswith("  inc")
    assert json.loads((tmp_path / "r.json").read_text())["invariant"] == "small"
    assert (tmp_path / "out.atexit").read_text() == "ran"
    assert (tmp_path / "out.thread").read_text() == "ran"
