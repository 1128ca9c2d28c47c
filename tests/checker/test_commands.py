"""checker/commands.py on its own (all but `mc ablate`'s rows): what `mc check`, `mc simulate`,
`mc graph` and `mc list` do once their options are read, called as the command line calls
them."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from checker import commands, run, simulation
from checker.batch import spec_files
from checker.errors import ConfigError, ExitCode, SpecError
from checker.reports.outputs import Outputs
from checker.search.options import Options
from tests.checker.toys import toy


@pytest.fixture
def counter():
    return toy("Counter")


def test_one_spec_is_checked_and_reported_with_its_exit_code(counter, capsys):
    code = commands.check_files([counter], {}, run.Config(), Outputs())
    assert code == ExitCode.OK
    assert "4 distinct states" in capsys.readouterr().out
    code = commands.check_files([counter], {"bad": "2"}, run.Config(), Outputs())
    assert code == ExitCode.VIOLATION
    assert "Error: invariant allowed is violated." in capsys.readouterr().out


def test_a_batch_reports_each_spec_then_the_summary_and_writes_the_reports(
    write_spec, tmp_path, capsys
):
    write_spec("from tests.checker.toys import Counter\n\nclass Batched(Counter):\n    pass\n")
    write_spec("x = 1\n", "helper.py")  # a module of the folder that defines no spec
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    wanted = Outputs(json_path=str(report))
    code = commands.check_files([str(tmp_path)], {"bad": "2"}, run.Config(), wanted)
    out, err = capsys.readouterr()
    assert code == ExitCode.VIOLATION
    assert "Checked 1 spec: 1 violation. Exit code 12 (the worst)." in out
    assert "helper.py defines no spec: skipped" in err
    (written,) = json.loads(report.read_text())
    assert (written["spec_name"], written["verdict"]) == ("Batched", "violation")


def test_a_constant_no_spec_declares_is_refused_before_any_check(counter):
    with pytest.raises(ConfigError, match="-D nope: no spec of this run declares it"):
        commands.check_many(spec_files([counter]), {"nope": "1"}, run.Config())


def test_no_spec_and_no_checkpoint_is_an_error(tmp_path):
    with pytest.raises(commands.NoSpecGiven):
        commands.check_files([], {}, run.Config(), Outputs())
    with pytest.raises(SpecError, match="no spec to check"):
        commands.check_files([str(tmp_path)], {}, run.Config(), Outputs())


def test_checkpoint_options_must_go_together(counter, tmp_path):
    config = run.Config(checkpoint_every=5)
    with pytest.raises(ConfigError, match="--checkpoint-every needs --checkpoint DIR"):
        commands.check_files([counter], {}, config, Outputs())
    config = run.Config(checkpoint=str(tmp_path / "a"), resume=str(tmp_path / "b"))
    with pytest.raises(ConfigError, match="--resume DIR saves its checkpoints in DIR"):
        commands.check_files([counter], {}, config, Outputs())
    config = run.Config(checkpoint=str(tmp_path / "a"))
    with pytest.raises(ConfigError, match="--checkpoint is for a run of one spec file"):
        commands.check_files([counter, counter], {}, config, Outputs())


def test_workers_are_capped_at_the_cpus_this_process_may_use(capsys):
    cpus = len(os.sched_getaffinity(0))
    many = run.Config(options=Options(workers=1000))
    assert commands.usable_workers(many).options.workers == max(2, cpus)
    assert "--workers 1000: this machine lets mc use" in capsys.readouterr().err
    few = dataclasses.replace(many, options=Options(workers=2))
    assert commands.usable_workers(few) is few


def test_simulate_repeats_a_run_from_its_seed(counter, capsys):
    def walks(seed: int) -> simulation.Options:
        return simulation.Options(seed=seed, traces=5, max_depth=6)

    reports = []
    for _ in range(2):
        code = commands.simulate(
            counter, {"bad": "3"}, 42, walks, invariants=None, progress=0, wanted=Outputs()
        )
        out, err = capsys.readouterr()
        assert code == ExitCode.VIOLATION and "mc: seed 42" in err
        reports.append([line for line in out.splitlines() if not line.startswith("Finished")])
    assert reports[0] == reports[1]
    assert "Error: invariant allowed is violated." in reports[0]


def test_draw_writes_the_state_space_as_dot(counter, capsys, tmp_path):
    assert commands.draw(counter, {"limit": "2"}, 100, {}) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "Counter"') and dot.count("->") == 4  # inc 0-1-2, 2 resets
    target = tmp_path / "g.dot"
    assert commands.draw(counter, {"limit": "2"}, 100, {"dot": str(target)}) == 0
    assert "Counter: 3 states, 4 transitions." in capsys.readouterr().err
    assert target.read_text().startswith("digraph")
    with pytest.raises(ConfigError, match="--svg '': an empty path"):
        commands.draw(counter, {}, 100, {"svg": ""})


def test_describe_lists_what_the_spec_declares(counter):
    listing = commands.describe(counter, {"limit": "5"})
    assert "limit" in listing and "5" in listing
    assert "inc" in listing and "reset" in listing and "allowed" in listing
