"""`mc ablate` under real signals, on real processes (checker.supervisor): Ctrl-C and SIGTERM
end the whole command within two seconds with the rows finished so far (exit 152, the JSON
marked partial), a row killed with SIGKILL is reported as such while the others finish (153),
rows over --memory end "out of memory" (153), the rows die with their command, and no process
of the command is left once it has ended."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, default_sigint, finish

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

TRACEBACK = "Traceback (most recent call last)"

# Four rows of about 90,000 states each (a few seconds a row): long enough to be interrupted.
SLOW = """
from checker import Record, Spec, action, constant, invariant, rule


class Slow(Spec):
    a_rule = rule("a stops at the top")
    b_rule = rule("b stops at the top")
    c_rule = rule("c changes nothing")
    top = constant(300, "the top")

    def init(self):
        return Record(a=0, b=0)

    @action
    def inc_a(self, s):
        if s.a >= self.top + (0 if self.a_rule else 1):
            return None
        return s.replace(a=s.a + 1)

    @action
    def inc_b(self, s):
        if s.b >= self.top + (0 if self.b_rule else 1):
            return None
        return s.replace(b=s.b + 1)

    @invariant
    def a_small(self, s):
        return s.a <= self.top
"""


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(") ", 1)[1].split()  # state, ppid, pgrp, ...


def in_group(pgrp: int) -> list[int]:
    """The live processes (not zombies) of process group `pgrp`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None and fields[2] == str(pgrp) and fields[0] != "Z":
                found.append(int(name))
    return found


def children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None and fields[1] == str(pid) and fields[0] != "Z":
                found.append(int(name))
    return found


@pytest.fixture
def slow(tmp_path: Path) -> Path:
    path = tmp_path / "slow.py"
    path.write_text(SLOW)
    return path


def start(spec: Path, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """`mc ablate SPEC --json OUT ARGS` in a session of its own (its rows in its group)."""
    command = [sys.executable, "-m", "checker", "ablate", str(spec), "--progress", "0.2"]
    command += ["--json", str(tmp_path / "out.json"), *args]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )


def wait_for_rows(proc: subprocess.Popen[str], count: int, timeout: float = 60) -> None:
    """Until `count` rows run in processes of their own, each in its search."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(children(proc.pid)) >= count:
            time.sleep(1.0)  # in its search, past loading
            return
        time.sleep(0.05)
    raise AssertionError("the rows did not start")


def ended(proc: subprocess.Popen[str]) -> tuple[str, str, float]:
    """Its output, and the seconds it took to end from now."""
    sent = time.monotonic()
    out, err = finish(proc)
    seconds = time.monotonic() - sent
    time.sleep(1)
    assert in_group(proc.pid) == [], "a process of the command outlived it"
    assert TRACEBACK not in out + err, err
    return out, err, seconds


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize(("how", "signum"), [("group", signal.SIGINT), ("alone", signal.SIGTERM)])
def test_the_first_signal_ends_the_whole_command_with_the_rows_finished(
    slow, tmp_path, workers, how, signum
):
    """Ctrl-C (SIGINT to the whole group, as a terminal sends it) or SIGTERM to the command:
    every row ends at once, the table of those that had finished is printed and written, and
    the exit code is 152."""
    proc = start(slow, tmp_path, "--workers", workers)
    wait_for_rows(proc, int(workers))
    if how == "group":
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    out, err, seconds = ended(proc)
    assert proc.returncode == 152, err
    assert seconds < 2.5, seconds
    name = signal.Signals(signum).name
    assert f"Partial: stopped by {name} with" in out
    assert f"mc: ablate: stopped by {name}: the table has the" in err
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["partial"] is True and doc["interrupted"] == name and doc["exit_code"] == 152
    assert doc["planned"] == 4 and len(doc["rows"]) < 4


def test_a_signal_while_the_spec_loads_ends_it_too(tmp_path):
    """SIGTERM while the spec is imported (before any row): 152, said, no traceback."""
    spec = tmp_path / "loading.py"
    spec.write_text("import time\ntime.sleep(30)\n" + SLOW)
    proc = start(spec, tmp_path)
    time.sleep(2.0)
    os.kill(proc.pid, signal.SIGTERM)
    out, err, seconds = ended(proc)
    assert proc.returncode == 152, err
    assert seconds < 2.5
    assert out == "" and "stopped by SIGTERM while loading the spec" in err


def test_a_killed_row_is_reported_and_the_others_finish(slow, tmp_path):
    proc = start(slow, tmp_path, "--workers", "2", "-D", "top=450")  # rows of a few seconds
    wait_for_rows(proc, 2)
    victim = min(children(proc.pid))  # the first row started: every rule on
    os.kill(victim, signal.SIGKILL)
    out, err, _ = ended(proc)
    assert proc.returncode == 153, err
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["partial"] is False and len(doc["rows"]) == 4
    killed = [r for r in doc["rows"] if r["cells"]["a_small"]["status"] == "killed"]
    assert [r["name"] for r in killed] == ["(every rule on)"]
    assert killed[0]["cells"]["deadlock"]["detail"] == "killed (signal 9)"
    finished = [r for r in doc["rows"] if r not in killed]
    assert all(r["cells"]["deadlock"]["status"] == "violated" for r in finished)
    assert [r["distinct_states"] for r in finished] == [452 * 451, 452 * 451, 451 * 451]
    assert "(every rule on)  killed (signal 9)" in out
    progress = r"mc: ablate: \d of 4 rows done; .*: check \d, level \d+, [\d,]+ states \([\d,]+/s\)"
    assert re.search(progress, err), err
    assert "A row's process was killed: the table is not whole (exit 153)." in out


def test_the_rows_die_with_the_command(slow, tmp_path):
    proc = start(slow, tmp_path, "--workers", "2")
    wait_for_rows(proc, 2)
    rows = children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    finish(proc)
    time.sleep(1)
    assert [pid for pid in rows if (_stat(pid) or ["Z"])[0] != "Z"] == []


def test_rows_over_the_memory_cap_end_out_of_memory(slow, tmp_path):
    """--memory 1: every row is over it as soon as it is measured."""
    proc = start(slow, tmp_path, "--workers", "2", "--memory", "1")
    out, err, _ = ended(proc)
    assert proc.returncode == 153, err
    doc = json.loads((tmp_path / "out.json").read_text())
    assert len(doc["rows"]) == 4
    details = {r["cells"]["a_small"]["detail"] for r in doc["rows"]}
    assert all(d.startswith("out of memory (") for d in details), details
    assert "out of memory" in out


def test_every_row_of_the_signals_table_of_docs_errors_md_names_a_test_that_exists():
    doc = (ROOT / "docs" / "errors.md").read_text()
    section = doc.split("## Signals, the machine")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([a-z-]+)` \|.*\| `(test_\w+\.py)::(test_\w+)` \|$", section, re.M)
    assert len(rows) >= 10
    for case, file, test in rows:
        folder = "explore" if case.startswith("explore-") else "checker"
        assert f"def {test}(" in (ROOT / "tests" / folder / file).read_text(), case


def test_sigterm_between_rows_keeps_the_rows_finished(slow, tmp_path):
    """With --workers 1, SIGTERM as soon as the first row has ended (the next one starting):
    152 within two seconds, the first row in the table."""
    proc = start(slow, tmp_path, "--workers", "1")
    for line in proc.stderr:
        if line.startswith("mc: ablate: (every rule on): "):  # the first row ended
            break
    os.kill(proc.pid, signal.SIGTERM)
    out, err, seconds = ended(proc)
    assert proc.returncode == 152, err
    assert seconds < 2.5
    doc = json.loads((tmp_path / "out.json").read_text())
    assert [r["name"] for r in doc["rows"]][:1] == ["(every rule on)"] and doc["partial"]
    assert "Partial: stopped by SIGTERM with" in out
