"""Checkpoints (`mc check --checkpoint DIR`) and resuming (`mc check --resume DIR`): a run killed
at any point and resumed ends exactly as an uninterrupted run (counts, coverage, trace), with any
number of workers; a changed spec, other constants and corrupt files are refused."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest

from checker import checkpoint, resuming
from checker.checkpoint import Array, Checkpoints, Settings
from checker.loader import load_model
from checker.local.bfs import check
from checker.search.options import Options
from tests.checker.outcomes import copy_each_checkpoint, outcome
from tests.conftest import ROOT, SPECS, default_sigint, finish

# Three counters up to `top`, a bad state planted at depth 10. The tests stop a run inside an
# action: at the state MC_TEST_PAUSE_AT ("a,b,c"), it creates MC_TEST_DIR/reached and waits
# there (a minute at most) to be killed or interrupted.
WALK = """\
import os
import time
from pathlib import Path

from checker import Record, Spec, action, constant, invariant


def pause_here(s):
    at = os.environ.get("MC_TEST_PAUSE_AT")
    if at is None or (s.a, s.b, s.c) != tuple(int(v) for v in at.split(",")):
        return
    (Path(os.environ["MC_TEST_DIR"]) / "reached").touch()
    time.sleep(60)


class Walk(Spec):
    top = constant(4, "the largest value of a counter")

    def init(self):
        return Record(a=0, b=0, c=0)

    @action(k=("a", "b", "c"))
    def inc(self, s, k):
        pause_here(s)
        if getattr(s, k) >= self.top:
            return None
        return s.replace(**{k: getattr(s, k) + 1})

    @invariant
    def not_planted(self, s):
        return (s.a, s.b, s.c) != (4, 3, 2)
"""


def report(out: str) -> str:
    """The text report without its timing line."""
    return "\n".join(line for line in out.splitlines() if not line.startswith("Finished in"))


@pytest.fixture
def walk(tmp_path: Path) -> Path:
    path = tmp_path / "walk.py"
    path.write_text(WALK)
    return path


@pytest.fixture
def uninterrupted(mc, walk) -> str:
    run = mc("check", walk, "--progress", "0")
    assert run.code == 12
    assert "Error: invariant not_planted is violated." in run.out
    assert "The shortest behavior, 10 states:" in run.out
    return report(run.out)


def start_paused(spec: Path, folder: Path, at: str, workers: int) -> subprocess.Popen[str]:
    """`mc check SPEC --checkpoint folder/ck` in its own process group, paused at state `at`."""
    flags = ["--checkpoint", folder / "ck", "--checkpoint-every", "0", "--progress", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "checker", "check", spec, *flags, "--workers", str(workers)],
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "MC_TEST_PAUSE_AT": at,
            "MC_TEST_DIR": str(folder),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
        start_new_session=True,
    )
    for _ in range(600):
        if (folder / "reached").exists():
            return proc
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError("the run never reached the pause")


def saved_level(folder: Path) -> int:
    return checkpoint.read(folder).counts["level"]


@pytest.mark.fault("checkpoints")
@pytest.mark.parametrize(
    ("at", "level", "workers", "resume_workers"),
    [
        ("3,0,0", 4, 1, 2),  # the first state of level 4: its checkpoint was just written
        ("0,1,4", 6, 2, 1),  # the last of level 6's 18 states: the first 16 were expanded
    ],
)
def test_kill_9_then_resume_ends_as_an_uninterrupted_run(
    mc, tmp_path, walk, uninterrupted, at, level, workers, resume_workers
):
    proc = start_paused(walk, tmp_path, at, workers)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert saved_level(tmp_path / "ck") == level
    # A kill while writing a checkpoint leaves a temporary file: ignored, then removed.
    (tmp_path / "ck" / ".checkpoint-x1.tmp").write_bytes(b"half a checkpoint")
    resumed = mc("check", "--resume", tmp_path / "ck", "--workers", resume_workers)
    assert resumed.code == 12
    assert report(resumed.out) == uninterrupted
    assert f"mc: resuming Walk ({walk}) at level {level} (" in resumed.err
    assert "any number gives the same result" in resumed.err
    assert os.listdir(tmp_path / "ck") == []  # the search ended: nothing left to resume


@pytest.mark.fault("checkpoints")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_leaves_the_checkpoint_of_the_levels_start(mc, tmp_path, walk, uninterrupted, sig):
    proc = start_paused(walk, tmp_path, "0,1,4", 1)  # level 6's last state, after 16 others
    proc.send_signal(sig)
    out, err = finish(proc)
    assert proc.returncode == 152, err
    assert "Search incomplete: interrupted." in out
    folder = tmp_path / "ck"
    # Level 6 holds the 18 states a + b + c = 5; with levels 1 to 5, 53 states in all.
    assert f"mc: checkpoint at level 6 (53 distinct states) in {folder}:" in err
    assert f"go on with `mc check --resume {folder}`" in err
    assert "Traceback" not in err
    resumed = mc("check", walk, "--resume", folder)
    assert resumed.code == 12
    assert report(resumed.out) == uninterrupted


# -- resuming from every level, in-process ----------------------------------------------------


def settings(model, options: Options) -> Settings:
    return resuming.settings_of(model, options, "local", every=0)


@pytest.mark.parametrize(
    ("spec", "constants", "options"),
    [
        (SPECS / "light" / "kip903.py", {"fixed": "false"}, Options()),
        (SPECS / "examples" / "two_phase.py", {}, Options(workers=2)),
        (SPECS / "examples" / "die_hard.py", {}, Options(max_states=10)),
        (SPECS / "examples" / "replicated_log.py", {}, Options(max_depth=5, deadlock=True)),
        # reachability properties reached before and after the checkpoint, and a witness
        (
            SPECS / "light" / "kip903.py",
            {"max_unclean_shutdowns": "0"},
            Options(witness="leader_changed"),
        ),
    ],
)
def test_resuming_from_any_level_gives_the_same_result(
    tmp_path, monkeypatch, spec, constants, options
):
    model = load_model(spec, constants)
    reference = outcome(check(model, options))
    first = Checkpoints(tmp_path / "run", settings(model, options))
    with monkeypatch.context() as patch:
        copies = copy_each_checkpoint(patch, tmp_path)
        assert outcome(check(model, options, checkpoints=first)) == reference
    assert not first.path.exists()  # removed: the search ended by itself
    levels = [int(folder.name.removeprefix("level-")) for folder in copies]
    assert levels == list(range(1, len(levels) + 1)) and len(levels) >= 4
    for folder in copies:
        saved = checkpoint.read(folder)
        workers = 3 - options.workers  # another number of workers
        again = dataclasses.replace(options, workers=workers)
        resumed = Checkpoints(folder, settings(model, again), saved)
        assert outcome(check(model, again, checkpoints=resumed)) == reference, folder.name


# -- refused resumes ----------------------------------------------------------------------------


@pytest.fixture
def saved(mc, walk, tmp_path, monkeypatch) -> Path:
    """A checkpoint left by --timeout while the run is paused in the middle of level 6."""
    with monkeypatch.context() as patch:
        patch.setenv("MC_TEST_PAUSE_AT", "0,1,4")
        patch.setenv("MC_TEST_DIR", str(tmp_path))
        flags = ["--checkpoint-every", "0", "--timeout", "0.3", "--progress", "0"]
        run = mc("check", walk, "--checkpoint", tmp_path / "ck", *flags)
    assert run.code == 152 and "Search incomplete: --timeout 0.3 s reached." in run.out
    assert f"mc: checkpoint at level 6 (53 distinct states) in {tmp_path / 'ck'}" in run.err
    return tmp_path / "ck"


def refused(mc, *args) -> str:
    run = mc("check", *args)
    assert run.code == 151, run.out + run.err
    assert run.out == "" and "Traceback" not in run.err
    return run.err


@pytest.mark.fault("checkpoints")
def test_a_changed_spec_file_is_refused(mc, walk, saved):
    walk.write_text(WALK.replace("(4, 3, 2)", "(4, 4, 4)"))
    err = refused(mc, "--resume", saved)
    where = f"mc: error: checkpoint {saved / 'checkpoint.mc'}:"
    assert f"{where} the spec file changed since the checkpoint (sha256 " in err
    assert " in the checkpoint)" in err


@pytest.mark.fault("checkpoints")
def test_other_constants_options_or_invariants_are_refused(mc, walk, saved):
    where = f"mc: error: checkpoint {saved / 'checkpoint.mc'}:"
    err = refused(mc, "--resume", saved, "-D", "top=5")
    assert f"{where} constants differ: top=5 vs 4 in the checkpoint" in err
    err = refused(mc, "--resume", saved, "--max-depth", "3", "--no-deadlock")
    assert f"{where} options differ: --no-deadlock true vs false, --max-depth 3 vs none" in err
    err = refused(mc, "--resume", saved, "--invariant", "not_planted", "--invariant", "x")
    assert f"{where} invariants differ: not_planted, x vs not_planted in the checkpoint" in err
    # Given and equal is fine:
    run = mc("check", walk, "--resume", saved, "-D", "top=4", "--invariant", "not_planted")
    assert run.code == 12


@pytest.mark.fault("checkpoints")
def test_a_checkpoint_of_another_spec_is_refused(mc, walk, saved, tmp_path):
    other = tmp_path / "other.py"
    other.write_text(WALK.replace("class Walk", "class Other"))
    err = refused(mc, other, "--resume", saved)
    where = f"checkpoint {saved / 'checkpoint.mc'}:"
    assert f"{where} a checkpoint of Walk ({walk}), not of {other}" in err
    err = refused(mc, other, "--checkpoint", saved)
    assert (
        f"--checkpoint {saved}: it holds a checkpoint of Walk ({walk}) at level 6 (53 distinct"
        f" states): go on with `mc check --resume {saved}`, or delete {saved / 'checkpoint.mc'}"
        " to start over" in err
    )


def test_a_moved_spec_resumes(mc, walk, saved, tmp_path, uninterrupted):
    moved = tmp_path / "moved" / "walk.py"
    moved.parent.mkdir()
    walk.rename(moved)
    run = mc("check", moved, "--resume", saved)
    assert run.code == 12
    assert report(run.out) == uninterrupted.replace(str(walk), str(moved))


@pytest.mark.fault("checkpoints")
def test_a_changed_module_of_the_spec_is_refused(mc, tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bad.py").write_text("PLANTED = (4, 3, 2)\n")
    (package / "unused.py").write_text("X = 1\n")
    spec = package / "walk.py"
    spec.write_text("from pkg.bad import PLANTED\n" + WALK.replace("(4, 3, 2)", "PLANTED"))
    with monkeypatch.context() as patch:
        patch.setenv("MC_TEST_PAUSE_AT", "1,0,0")
        patch.setenv("MC_TEST_DIR", str(tmp_path))
        run = mc("check", spec, "--checkpoint", tmp_path / "ck", "--timeout", "0.3")
    assert run.code == 152
    saved = checkpoint.read(tmp_path / "ck")
    assert list(saved.settings.sources) == ["pkg/walk.py", "pkg/__init__.py", "pkg/bad.py"]
    (package / "unused.py").write_text("X = 2\n")  # not used by the spec: no matter
    (package / "bad.py").write_text("PLANTED = (4, 4, 4)\n")
    err = refused(mc, "--resume", tmp_path / "ck")
    assert "pkg/bad.py (imported by the spec) changed since the checkpoint (sha256 " in err


@pytest.mark.fault("checkpoints")
def test_bad_combinations_of_options(mc, walk, tmp_path):
    err = refused(mc, walk, "--checkpoint-every", "1")
    assert "--checkpoint-every needs --checkpoint DIR or --resume DIR" in err
    err = refused(mc, walk, "--checkpoint", tmp_path / "a", "--resume", tmp_path / "b")
    assert "--resume DIR saves its checkpoints in DIR: leave out --checkpoint" in err
    err = refused(mc, tmp_path, "--checkpoint", tmp_path / "a")
    assert "--checkpoint is for a run of one spec file" in err
    err = refused(mc, "--resume", tmp_path / "nothing")
    assert f"--resume {tmp_path / 'nothing'}: no checkpoint there" in err
    assert not (tmp_path / "nothing").exists()
    run = mc("check")
    assert run.code == 151 and "Missing argument 'SPEC...'" in run.err


# -- corrupt files ------------------------------------------------------------------------------


@pytest.mark.fault("checkpoints")
def test_truncated_or_modified_files_are_corrupt(mc, saved):
    file = saved / "checkpoint.mc"
    whole = file.read_bytes()
    where = f"mc: error: checkpoint {file}: corrupt"
    cases = [
        (whole[: len(whole) // 2], f"(truncated: {len(whole) // 2 - 56:,} of {len(whole) - 56:,}"),
        (whole[:-1] + bytes([whole[-1] ^ 1]), "(checksum mismatch: the file was modified)"),
        (whole + b"\0", "(1 bytes after the end)"),
        (b"", "(not an mc checkpoint)"),
        (b"PK\3\4" + whole[4:], "(not an mc checkpoint)"),
    ]
    for content, message in cases:
        file.write_bytes(content)
        assert f"{where} {message}" in refused(mc, "--resume", saved)


def forge(folder: Path, saved, counts=None, **changes) -> None:
    """Rewrite the checkpoint in `folder` with a valid frame and checksum (as someone who
    knows the format could), with some counts or arrays changed."""
    arrays = {**saved.arrays, **changes}
    written = Checkpoints(folder, saved.settings)
    written.write(
        {**saved.counts, **(counts or {})},
        {name: Array.of(a, a.dtype.name) for name, a in arrays.items() if a is not None},
    )


@pytest.mark.fault("checkpoints")
def test_well_framed_but_inconsistent_files_are_corrupt(mc, saved):
    original = checkpoint.read(saved)
    fps = original.arrays["fingerprints"]
    parents = original.arrays["parents"]
    data = original.arrays["frontier.data"]
    cases = [
        ({"fingerprints": fps[::-1].copy()}, None, "the fingerprints are not sorted"),
        ({"parents": parents[::-1].copy()}, None, "a parent link does not point to an earlier"),
        ({"positions": None}, None, "no uint32 array 'positions'"),
        ({"frontier.data": np.full_like(data, 0xC1)}, None, "state 0 of the level does not decode"),
        ({}, {"fired": [1, 2]}, "counts 'fired' are not 1 numbers"),
        ({}, {"level": "5"}, "count 'level' is '5'"),
        ({}, {"states": 54}, "the numbers of states, fingerprints and links differ"),
    ]
    for arrays, counts, message in cases:
        forge(saved, original, counts, **arrays)
        err = refused(mc, "--resume", saved)
        assert f"checkpoint {saved / 'checkpoint.mc'}: corrupt ({message}" in err


@pytest.mark.fault("checkpoints")
def test_decoding_never_runs_code(mc, saved, tmp_path):
    """A pickle where the body should be is refused without being run."""

    class Touch:
        def __reduce__(self):
            return (Path.touch, (tmp_path / "ran",))

    body = pickle.dumps(Touch())
    file = saved / "checkpoint.mc"
    file.write_bytes(
        checkpoint.FRAME.pack(checkpoint.MAGIC, len(body), hashlib.sha256(body).digest()) + body
    )
    err = refused(mc, "--resume", saved)
    assert f"checkpoint {file}: corrupt (" in err
    assert not (tmp_path / "ran").exists()
    header = msgpack.packb({"format": 1})
    file.write_bytes(
        checkpoint.FRAME.pack(checkpoint.MAGIC, len(header), hashlib.sha256(header).digest())
        + header
    )
    assert "corrupt (format 1, this mc reads format 3)" in refused(mc, "--resume", saved)
