"""checker/batch.py on its own: which files a folder stands for, how exit codes rank, and the
closing summary of a multi-spec run."""

from __future__ import annotations

from checker.batch import SpecFile, severity, spec_files, summary, worst
from checker.result import CheckResult, NotChecked


def test_a_folder_stands_for_its_spec_files_in_path_order(tmp_path):
    for name in ("b.py", "a.py", "sub/c.py", "__init__.py", "conftest.py", "_helper.py",
                 ".hidden/d.py", "_private/e.py", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    found = spec_files([str(tmp_path)])
    assert [f.path for f in found] == [str(tmp_path / n) for n in ("a.py", "b.py", "sub/c.py")]
    assert not any(f.explicit for f in found)


def test_files_named_are_explicit_and_each_file_comes_once(tmp_path):
    (tmp_path / "a.py").write_text("")
    named = str(tmp_path / "a.py")
    assert spec_files([named, str(tmp_path), named]) == [SpecFile(named, True)]


def test_exit_codes_rank_failing_to_check_worst_then_violations():
    assert worst([0, 152, 12, 11]) == 12
    assert worst([12, 75]) == 75  # spec code raised: worse than a violation
    assert worst([75, 150, 151]) == 150
    assert worst([150, 153]) == 153
    assert worst([15, 13]) == 13
    assert worst([]) == 0
    assert severity(99) == len([0, 152, 15, 11, 13, 12, 75, 151, 150, 153])  # unknown: worst
    assert worst([153, 99]) == 99


def test_the_summary_counts_verdicts_and_names_the_worst_exit_code():
    ok = CheckResult("specs/a.py", "A", {}, [])
    broken = CheckResult("specs/bb.py", "B", {}, ["safe"], verdict="violation", invariant="safe")
    missing = NotChecked("specs/c.py", "no Spec class in specs/c.py\nmore")
    assert summary([ok, broken, missing]) == (
        "Checked 3 specs: 1 ok, 1 violation, 1 not checked. Exit code 150 (the worst).\n"
        "  ok             0  specs/a.py   A\n"
        "  violation     12  specs/bb.py  invariant safe\n"
        "  not checked  150  specs/c.py   no Spec class in specs/c.py\n"
    )
