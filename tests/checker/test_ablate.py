"""`mc ablate` on a toy protocol with rules: the rules as constants (`rule`, `all_rules`), the
table's cells (each row's checks until nothing more breaks), flags, exit codes, reports, and
that a row is what its own `mc check` says, whatever the number of processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from checker import action, all_rules, commands, constant, rule
from checker.ablate.rows import ablate
from checker.ablation import ALL_ON, Settings
from checker.reports import ablation as reports
from checker.spec import all_rules_of, rules_of
from tests.checker.toys import FromZero
from tests.conftest import ROOT

TOY = '''
from checker import Record, Spec, action, all_rules, constant, invariant, leads_to, reachable
from checker import rule, terminal


class Toy(Spec):
    """A toy protocol change with five rules."""

    fixed = all_rules("the toy protocol change")
    cap = rule("x stops at the limit")
    settle = rule("y comes back to 0")
    touch = rule("z may move once")
    noop = rule("a guard no state reaches")
    early = rule("y may move before x does")
    limit = constant(2, "the limit", min=1)
    most = constant(9, "what x_small allows")

    def init(self):
        return Record(x=0, y=0, z=0)

    @action(fair="weak")
    def inc_x(self, s):
        if self.noop and s.x > 100:
            return None
        if s.x >= self.limit + (0 if self.cap else 2):
            return None
        return s.replace(x=s.x + 1)

    @action(fair="weak")
    def move_y(self, s):
        if s.y == 0 and (s.x > 0 or self.early):
            return s.replace(y=1)
        if s.y == 1 and self.settle:
            return s.replace(y=0)
        return None

    @action(switch="touch")
    def move_z(self, s):
        return s.replace(z=1) if self.touch and s.z == 0 else None

    @invariant
    def x_within(self, s):
        """x is at most the limit."""
        return s.x <= self.limit

    @invariant
    def x_near(self, s):
        return s.x <= self.limit + 1

    @invariant
    def x_small(self, s):
        return s.x <= self.most

    @reachable
    def y_moved(self, s):
        return s.y == 1

    @reachable(switch="touch")
    def z_moved(self, s):
        return s.z == 1

    @reachable
    def z_set(self, s):
        return s.z == 1

    @terminal
    def done(self, s):
        return s.x >= self.limit and s.y == 0

    y_returns = leads_to(lambda s: s.y == 1, lambda s: s.y == 0, "y comes back")
'''


@pytest.fixture
def toy(write_spec):
    return str(write_spec(TOY, "toy.py"))


def not_holding(row):
    return {n: reports.cell_text(c) for n, c in row.cells.items() if c.status != "holds"}


def cells(ablation):
    return {
        row.name: {name: reports.cell_text(cell) for name, cell in row.cells.items()}
        for row in ablation.rows
    }


# -- rules as constants ------------------------------------------------------------------------


class Layer(FromZero):
    fixed = all_rules("the KIP")
    first = rule("the first rule")
    second = rule("the second rule")
    n = constant(1, "a bound")

    @action
    def step(self, s):
        return None


class Later(Layer):
    first = True  # a later KIP keeps the first rule on: no rule of Later


def test_a_rule_is_a_bool_constant_on_by_default_and_all_rules_switches_the_others():
    assert list(rules_of(Layer)) == ["first", "second"] and all_rules_of(Layer) == "fixed"
    assert Layer().rules == {"first": True, "second": True}
    assert Layer(second=False).rules == {"first": True, "second": False}
    assert Layer(fixed=False).rules == {"first": False, "second": False}
    # A rule given explicitly keeps its value: the KIP's other rules off, this one on.
    assert Layer(fixed=False, first=True).rules == {"first": True, "second": False}
    assert Layer(fixed=False).constants == {"n": 1, "fixed": False, "first": False, "second": False}
    assert list(rules_of(Later)) == ["second"] and Later(fixed=False).first is True


def test_a_rule_needs_its_one_line_and_a_spec_one_all_rules():
    with pytest.raises(TypeError, match="one line from the KIP"):
        rule("")
    with pytest.raises(TypeError, match="one line from the KIP"):
        rule("two\nlines")
    with pytest.raises(TypeError, match="declares 2 all_rules constants"):

        class Twice(Layer):  # the class statement raises
            again = all_rules("another switch")


# -- the table ---------------------------------------------------------------------------------


def test_the_table_says_what_breaks_without_each_rule(toy):
    ablation = ablate(toy, {})
    assert [c.name for c in ablation.columns] == [
        "deadlock",
        "x_within",
        "x_near",
        "x_small",
        "y_moved",
        "z_moved",
        "z_set",
        "y_returns",
    ]
    # Each row's cells other than "holds".
    assert {r.name: not_holding(r) for r in ablation.rows} == {
        ALL_ON: {},
        # Two invariants broken, each with its own shortest counterexample (x = 3, then 4).
        "cap": {"x_within": "4", "x_near": "5"},
        # A deadlock (x at the limit, y stuck at 1, z moved), then y_returns: y stays 1 forever.
        "settle": {"deadlock": "5", "y_returns": "4 ↺"},
        # Its reachability property is switched off with it; the other one is not reached,
        # and the temporal property is checked all the same (a second check, without them).
        "touch": {"z_moved": "off", "z_set": "unreached"},
        "noop": {},
        "early": {},
    }
    rows = {row.name: row for row in ablation.rows}
    assert [r.checks for r in ablation.rows] == [1, 3, 3, 2, 1, 1]
    assert (rows[ALL_ON].distinct_states, rows["cap"].distinct_states) == (12, 20)
    assert rows["cap"].cells["x_within"].actions == ["inc_x()", "inc_x()", "inc_x()"]
    lasso = rows["settle"].cells["y_returns"]
    assert (lasso.loop_start, lasso.actions) == (3, ["inc_x()", "inc_x()", "move_y()"])
    assert (rows["early"].flag or "").startswith("changes the behaviour (10 states, 12 with")
    assert (rows["noop"].flag or "").startswith(
        "changes nothing here (the same 12 states as with every rule on): the model is too"
        " small to exercise it; raise a bound (limit=2, most=9)"
    )
    assert [r.name for r in ablation.flagged] == ["noop", "early"]
    assert ablation.exit_code == 0


def test_each_row_is_its_own_mc_check(toy, mc, tmp_path):
    """A row's first check is `mc check -D RULE=false`; its last explores the whole space."""
    ablation = ablate(toy, {})
    row = next(r for r in ablation.rows if r.name == "cap")
    out = tmp_path / "check.json"
    assert mc("check", toy, "-D", "cap=false", "--json", out, "--progress", "0").code == 12
    alone = json.loads(out.read_text())
    assert alone["invariant"] == "x_within"
    assert len(alone["trace"]) == row.cells["x_within"].length
    actions = [f"{s['action']}()" for s in alone["trace"][1:]]
    assert actions == row.cells["x_within"].actions
    args = ("check", toy, "-D", "cap=false", "--no-invariants", "--json", out, "--progress", "0")
    assert mc(*args).code == 0
    assert json.loads(out.read_text())["distinct_states"] == row.distinct_states


def test_the_same_table_for_any_number_of_processes_and_with_pairs(toy):
    one = ablate(toy, {"limit": "1"}, rules=["cap", "settle", "touch"], pairs=True, workers=1)
    three = ablate(toy, {"limit": "1"}, rules=["cap", "settle", "touch"], pairs=True, workers=3)
    assert [r.name for r in one.rows] == [
        ALL_ON,
        "cap",
        "settle",
        "touch",
        "cap + settle",
        "cap + touch",
        "settle + touch",
    ]

    def table(a):
        return [(r.name, cells(a)[r.name], r.distinct_states, r.checks, r.flag) for r in a.rows]

    assert table(one) == table(three)
    assert cells(three)["cap + settle"]["x_near"] == "4"


def test_exit_code_is_that_of_the_checks_with_every_rule_on(toy, mc):
    run = mc("ablate", toy, "-D", "most=1", "--rule", "cap", "--progress", "0")
    assert run.code == 12
    assert "With every rule on, not every check held (exit 12)." in run.out
    assert mc("ablate", toy, "--rule", "noop", "--progress", "0", "--workers", "1").code == 0


def test_the_text_table_shows_the_columns_that_break(toy, mc):
    run = mc("ablate", toy, "--workers", "2")
    lines = run.out.splitlines()
    assert lines[0] == f"Ablation of Toy: mc ablate {toy}"
    head = lines.index(
        "rule off             A      B      C      D          E      F  states  checks  seconds"
    )
    assert [line.rsplit(None, 1)[0] for line in lines[head + 1 : head + 7]] == [
        "(every rule on)  holds  holds  holds  holds      holds  holds      12       1",
        "cap              holds      4      5  holds      holds  holds      20       3",
        "settle               5  holds  holds  holds      holds    4 ↺      12       3",
        "touch            holds  holds  holds    off  unreached  holds       6       2",
        "noop             holds  holds  holds  holds      holds  holds      12       1",
        "early            holds  holds  holds  holds      holds  holds      10       1",
    ]
    assert "A: deadlock (deadlock)" in lines and "F: y_returns (temporal property)" in lines
    assert "Hold in every row: x_small, y_moved." in lines
    assert "Flagged: noop changes nothing here" in run.out
    assert "mc: ablate: cap: x_within, x_near (3 checks," in run.err


def test_reports_json_junit_markdown_and_html_with_a_page_per_counterexample(toy, mc, tmp_path):
    paths = {name: tmp_path / f"toy.{name}" for name in ("json", "junit", "markdown", "html")}
    args = [a for name, path in paths.items() for a in (f"--{name}", str(path))]
    assert mc("ablate", toy, *args, "--progress", "0").code == 0
    doc = json.loads(paths["json"].read_text())
    assert doc["exit_code"] == 0 and doc["rules"]["cap"] == "x stops at the limit"
    cap = doc["rows"][1]
    assert cap["cells"]["x_near"]["length"] == 5 and cap["cells"]["x_near"]["status"] == "violated"
    suites = ET.parse(paths["junit"]).getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == [ALL_ON, "cap", "settle", "touch", "noop", "early"]
    needed = {s.get("name"): s.find("testcase[@name='(rule needed)']") for s in suites[1:]}
    assert needed["cap"].find("failure") is None
    assert needed["noop"].find("failure").get("message").startswith("noop changes nothing")
    x_within = suites[1].find("testcase[@name='x_within']")
    assert x_within.find("failure") is None and "inc_x()" in x_within.find("system-out").text
    assert suites[1].find("testcase[@name='x_small']/skipped") is not None
    md = paths["markdown"].read_text()
    assert "| `cap` | holds | 4 | 5 | holds | holds | holds | 20 |" in md
    page = paths["html"].read_text()
    assert '<a href="toy.cells/cap--x_within.html">4</a>' in page
    report = (tmp_path / "toy.cells" / "cap--x_within.html").read_text()
    assert "Error: invariant x_within is violated." in report and 'id="step-4"' in report
    assert '<td class="cell holds"' in page


def test_bad_input_is_refused_before_any_check(toy, mc, write_spec):
    plain = write_spec(
        "from checker import Record, Spec, action\n\nclass Plain(Spec):\n"
        "    def init(self):\n        return Record(x=0)\n\n    @action\n"
        "    def step(self, s):\n        return None\n",
        "plain.py",
    )
    run = mc("ablate", plain)
    assert run.code == 151 and "Plain declares no rules to ablate" in run.err
    run = mc("ablate", toy, "--rule", "nope")
    assert run.code == 151
    assert "--rule nope: Toy has no such rule (rules: cap, settle, touch, noop, early)" in run.err
    run = mc("ablate", toy, "-D", "fixed=false")
    assert run.code == 151 and "-D fixed: mc ablate switches the rules itself" in run.err
    assert mc("ablate", toy, "-D", "cap=false").code == 151
    assert mc("ablate", toy, "-D", "limt=1").code == 151
    run = mc("ablate", toy, "--json", toy)
    assert run.code == 151 and "it is an input of this run; it would be lost" in run.err
    run = mc("ablate", toy, "--json", "same.out", "--markdown", "same.out")
    assert run.code == 151 and "the same file; each report needs its own" in run.err


def test_settings_reach_every_check(toy):
    ablation = ablate(toy, {}, rules=["settle"], settings=Settings(deadlock=False, liveness=False))
    names = ["x_within", "x_near", "x_small", "y_moved", "z_moved", "z_set"]
    assert [c.name for c in ablation.columns] == names
    assert all(cell.status == "holds" for cell in ablation.rows[1].cells.values())
    stopped = ablate(toy, {}, rules=["cap"], settings=Settings(max_states=3))
    assert {reports.cell_text(c) for c in stopped.rows[0].cells.values()} == {"?"}


STEPPED = """\
from checker import Record, Spec, action, invariant, rule, step_property

class Counter(Spec):
    by_one = rule("x goes up by one at a time")

    def init(self):
        return Record(x=0)

    @action(d=(1, 2))
    def inc(self, s, d):
        if d == 2 and self.by_one:
            return None
        return s.replace(x=s.x + d) if s.x + d <= 3 else None

    @action
    def reset(self, s):
        return s.replace(x=0) if s.x == 3 else None

    @step_property
    def small_steps(self, s, t):
        return t.x in (s.x + 1, 0)

    @invariant
    def small(self, s):
        return s.x <= 3
"""


def test_a_step_property_is_a_column_of_its_own(mc, write_spec):
    run = mc("ablate", write_spec(STEPPED))
    assert run.code == 0
    assert "by_one               2       4       2" in run.out
    assert "A: small_steps (step property)" in run.out
    assert "Hold in every row: deadlock, small." in run.out


# -- bounds, errors and report paths --------------------------------------------------------------

INIT_NEEDS_THE_RULE = """
from checker import Record, Spec, action, invariant, rule

class R(Spec):
    needed = rule("init needs it")

    def init(self):
        if not self.needed:
            raise KeyError("x")
        return Record(x=0)

    @action
    def inc(self, s):
        return s.replace(x=s.x + 1) if s.x < 2 else None

    @invariant
    def small(self, s):
        return s.x <= 3
"""


def test_a_row_whose_init_raises_says_why_in_the_text_table(mc, write_spec):
    spec = write_spec(INIT_NEEDS_THE_RULE, "needs.py")
    run = mc("ablate", spec, "--no-deadlock", "--progress", "0")
    assert run.code == 0, run.err
    assert "needed: init: raised KeyError: 'x'." in run.out
    row = [line for line in run.out.splitlines() if line.startswith("needed ")]
    assert row[0].split()[1] == "error"


def test_rows_cut_by_the_timeout_say_so(toy, mc):
    """A --timeout so small that the timer fires before the search (1e-300 s): each row says
    it was stopped, no traceback, exit 152 (the every-rule-on row is undecided)."""
    run = mc("ablate", toy, "--timeout", "1e-300", "--rule", "cap", "--no-liveness")
    assert run.code == 152, run.err
    assert "mc: ablate: cap: stopped: --timeout 1e-300 s reached (1 check," in run.err
    assert "nothing breaks" not in run.err and "Traceback" not in run.err
    assert "cap: stopped: --timeout 1e-300 s reached." in run.out


def test_the_html_folder_of_counterexamples_never_lands_outside_the_paths_named(toy, mc, tmp_path):
    (tmp_path / "t.cells").write_text("mine")
    run = mc("ablate", toy, "--html", str(tmp_path / "t.html"), "--rule", "cap")
    assert run.code == 151
    assert "t.cells, which exists and is not a folder" in run.err
    assert (tmp_path / "t.cells").read_text() == "mine" and not (tmp_path / "t.html").exists()
    run = mc("ablate", toy, "--html", "/dev/full", "--rule", "cap", "--no-liveness")
    assert run.code == 151 and "--html /dev/full: cannot write: No space left on device" in run.err
    assert not os.path.exists("/dev/full.cells")


def test_standard_output_closed_is_said_not_a_pass(toy):
    """`mc ablate ... >&-`: the table cannot be printed: 151, not 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "ablate", toy, "--rule", "cap", "--no-liveness"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 151, proc.stderr
    assert "mc: error: standard output is closed" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- how many rows side by side ----------------------------------------------------------------


def test_the_cgroup_cpu_quota_is_read_in_v2_and_v1(tmp_path):
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("150000 100000\n")
    assert commands.cgroup_cpu_quota(v2) == 1.5
    (v2 / "cpu.max").write_text("max 100000\n")
    assert commands.cgroup_cpu_quota(v2) is None
    v1 = tmp_path / "v1" / "cpu"
    v1.mkdir(parents=True)
    (v1 / "cpu.cfs_quota_us").write_text("200000\n")
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    assert commands.cgroup_cpu_quota(tmp_path / "v1") == 2.0
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    assert commands.cgroup_cpu_quota(tmp_path / "v1") is None
    assert commands.cgroup_cpu_quota(tmp_path / "none") is None


def test_the_default_rows_side_by_side_are_the_usable_cpus(toy, mc, tmp_path):
    out = tmp_path / "t.json"
    assert mc("ablate", toy, "--rule", "cap", "--json", out, "--progress", "0").code == 0
    cpus = min(len(os.sched_getaffinity(0)), int(commands.cgroup_cpu_quota() or 10**6))
    assert json.loads(out.read_text())["workers"] == max(1, cpus) == commands.usable_cpus()
