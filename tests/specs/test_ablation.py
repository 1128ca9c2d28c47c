"""Why each rule of each bundled KIP spec is there: the cells of its `mc ablate` table (which
property breaks without which rule, and the length of the counterexample), so that a change
that makes a rule look unnecessary fails here; and the tables in docs/specs.md are what the
tool writes today (regenerate them with scripts/ablation_docs.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex

import pytest

from checker.ablate.plan import plan
from checker.ablate.row import run_row
from checker.ablation import ALL_ON, Cell, Settings
from checker.cli import main
from checker.reports.ablation import cell_text
from scripts.ablation_docs import BLOCK
from tests.conftest import ROOT

# Each table's command line (as docs/specs.md has it) -> each row's cells that do not hold
# (a number: the states of the shortest counterexample; "↺": a lasso) and its states.
TABLES = {
    "mc ablate specs/kip841.py": {
        ALL_ON: ({}, 14_613),
        "fenced_ineligible": ({"fenced_broker_not_in_isr": "7"}, 10_745),
    },
    "mc ablate specs/kip903.py": {
        ALL_ON: ({}, 14_304),
        "stale_epoch_ineligible": ({"leader_candidate_completeness": "14"}, 14_852),
    },
    "mc ablate specs/kip966.py": {
        ALL_ON: ({}, 11_964),
        "hwm_needs_min_isr": ({"leader_candidate_completeness": "4"}, 11_957),
        "isr_may_become_empty": ({}, 11_964),
        "elr": ({"elr_in_use": "off"}, 11_964),  # switched off with it: no ELR to be in
        "elect_from_elr": ({}, 11_964),
        "epoch_on_file": ({}, 11_964),
    },
    "mc ablate specs/light/kip996_read.py -D max_isolations=0": {
        ALL_ON: ({}, 31),
        "read_offset_first": ({"reads_are_linearizable": "5"}, 22),
    },
    "mc ablate specs/kip1023.py -D max_records=2": {
        ALL_ON: ({}, 7_652),
        "handles_unknown_epuo": (
            {"follower_log_has_no_gap": "8", "isr_follower_can_serve_committed_offsets": "9"},
            7_960,
        ),
        "handles_epuo_below_log_start": ({}, 7_692),
    },
}
# Tables too large to re-run whole in the tests (the row with every rule on is the long one,
# or the rows of rules that break nothing): the rows of these rules alone, each also checked
# against its line in docs/specs.md.
ROWS = {
    "mc ablate specs/kip966.py -D min_isr=1 -D init_isr_size=1": {
        "isr_may_become_empty": (
            {"fenced_broker_not_in_isr": "2", "elr_in_use": "unreached"},
            86_929,
        ),
        "elr": (
            {
                "min_isr_recovery_quorum": "2",
                "elr_in_use": "off",
                "eventually_acknowledged_value_fully_replicated": "10 ↺",
            },
            41_102,
        ),
        "elect_from_elr": ({"eventually_acknowledged_value_fully_replicated": "10 ↺"}, 41_102),
    },
    "mc ablate specs/kip966.py -D fence_broker_limit=0 -D data_loss_shutdown_limit=1": {
        "epoch_on_file": ({"leader_candidate_completeness": "11"}, 13_547),
    },
    # 60,972 states with every rule on
    "mc ablate specs/kip996.py": {"pre_vote": ({"a_voter_is_prospective": "unreached"}, 7_800)},
}
# The rules whose removal breaks nothing there (the tables flag them).
FLAGGED = {
    "mc ablate specs/kip966.py": ["isr_may_become_empty", "elr", "elect_from_elr", "epoch_on_file"],
    "mc ablate specs/kip1023.py -D max_records=2": ["handles_epuo_below_log_start"],
}


def docs_blocks() -> dict[str, str]:
    text = (ROOT / "docs" / "specs.md").read_text()
    return {m.group(2): m.group(3) for m in BLOCK.finditer(text)}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, dict]]:
    """Each small table as `mc ablate ... --markdown --json` writes it, run from the repo."""
    folder = tmp_path_factory.mktemp("ablation")
    found = {}
    here = os.getcwd()
    os.chdir(ROOT)  # the docs name the specs relative to the repository
    try:
        for n, command in enumerate(TABLES):
            md, js = folder / f"{n}.md", folder / f"{n}.json"
            args = [*shlex.split(command)[2:], "--markdown", md, "--json", js]
            with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit) as done:
                main(["ablate", *map(str, args), "--progress", "0", "--workers", "2"])
            found[command] = (int(done.value.code or 0), md.read_text(), json.loads(js.read_text()))
    finally:
        os.chdir(here)
    return found


def _columns(block: str) -> list[str]:
    """The header of a docs table, split as its rows are (" | ")."""
    return next(line for line in block.splitlines() if line.startswith("| rule off")).split(" | ")


def not_holding(row: dict) -> dict[str, str]:
    return {
        name: cell_text(_cell(cell))
        for name, cell in row["cells"].items()
        if cell["status"] != "holds"
    }


def _cell(cell: dict):
    return Cell(**cell)


@pytest.mark.parametrize("command", list(TABLES))
def test_each_kip_table_says_which_property_breaks_without_which_rule(tables, command):
    code, _, doc = tables[command]
    assert code == 0  # with every rule on, every check holds
    got = {row["name"]: (not_holding(row), row["distinct_states"]) for row in doc["rows"]}
    assert got == TABLES[command]
    flagged = [row["name"] for row in doc["rows"] if row["flag"]]
    assert flagged == FLAGGED.get(command, [])


@pytest.mark.parametrize("command", list(TABLES))
def test_the_docs_table_is_what_mc_ablate_writes(tables, command):
    assert docs_blocks()[command] == tables[command][1]


def test_every_docs_table_is_checked_here():
    assert set(docs_blocks()) == set(TABLES) | set(ROWS)


@pytest.mark.parametrize(
    ("command", "rule"), [(command, rule) for command, rows in ROWS.items() for rule in rows]
)
def test_the_rows_of_a_large_table(command, rule):
    """A rule's row alone, as the table in docs/specs.md has it."""
    args = shlex.split(command)[2:]
    defines = dict(a.split("=", 1) for a in args[2::2])  # -D NAME=VALUE ...
    _, tasks = plan(str(ROOT / args[0]), defines, [rule], False, Settings())
    row = run_row(tasks[1])
    assert (not_holding(row), row["distinct_states"]) == ROWS[command][rule]
    line = next(line for line in docs_blocks()[command].splitlines() if f"`{rule}`" in line)
    assert line.endswith(f" | {row['distinct_states']:,} |")
    for name, text in not_holding(row).items():
        column = _columns(docs_blocks()[command]).index(f"`{name}`")
        assert line.split(" | ")[column] == text
