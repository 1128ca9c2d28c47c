"""The reports of `mc ablate` (the data of checker.ablation): the table as text (stdout),
Markdown (for a KIP discussion thread or docs/specs.md), JSON, JUnit XML (a test case per
cell, and one per rule that fails when its removal breaks nothing) and one offline HTML page
whose cells link to each counterexample's `mc check --html` report, written beside it.

Text and Markdown show the columns where some row breaks, and name the ones that hold in
every row below the table; JSON and HTML show every column.
"""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from html import escape

from checker.ablation import (
    ALL_ON,
    BROKEN,
    ERROR,
    HOLDS,
    KILLED,
    OFF,
    UNKNOWN,
    UNREACHED,
    VIOLATED,
    Ablation,
    Cell,
    Column,
    Row,
)
from checker.reports.html import CSP, PAGE_STYLE
from checker.reports.junit import _clean
from checker.values import count

KINDS = {
    "deadlock": "deadlock",
    "invariant": "invariant",
    "reachable": "reachability",
    "step": "step property",
    "property": "temporal property",
}
GROUPS = {
    "deadlock": "deadlock",
    "invariant": "invariants",
    "reachable": "reachability",
    "step": "step properties",
    "property": "temporal properties",
}
SHOWN = {UNREACHED: "unreached", OFF: "off", ERROR: "error", UNKNOWN: "?"}
LEGEND = (
    'A cell: "holds", or the states of the shortest counterexample (a temporal property:'
    ' of a lasso, marked ↺); "unreached": a reachability property no state satisfies; "off":'
    ' switched off by the constants; "?": a bound stopped the search; "error": spec code'
    ' raised; "killed": the row\'s process was killed (a signal, or out of memory).'
)


def cell_text(cell: Cell) -> str:
    if cell.status == HOLDS:
        return "holds"
    if cell.status == VIOLATED:
        return f"{cell.length}{' ↺' if cell.loop_start is not None else ''}"
    if cell.status == KILLED:  # "killed (signal 9)", "out of memory"
        return cell.detail.split(" (", 1)[0] if cell.detail.startswith("out of") else cell.detail
    return SHOWN[cell.status]


def broken_columns(ablation: Ablation) -> list[Column]:
    """The columns where some row does not hold (or is switched off)."""
    return [
        c for c in ablation.columns if any(r.cells[c.name].status != HOLDS for r in ablation.rows)
    ]


def _held(ablation: Ablation, shown: Sequence[Column]) -> list[str]:
    names = {c.name for c in shown}
    return [c.name for c in ablation.columns if c.name not in names]


def _timing(ablation: Ablation) -> str:
    checks = sum(r.checks for r in ablation.rows)
    how = (
        "one after another on the Spark session"
        if ablation.engine == "spark"
        else f"side by side in {count(ablation.workers, 'process', 'processes')}"
        if ablation.workers > 1
        else "one after another"
    )
    alone = (  # each row's time measured in its process, so contention included
        f" (the rows' checks took {ablation.checks_seconds:.2f} s in all)"
        if how.startswith("side")
        else ""
    )
    return (
        f"{count(checks, 'check')} in {count(len(ablation.rows), 'row')}, {how}:"
        f" {ablation.seconds:.2f} s{alone}."
    )


def _row_label(row: Row) -> str:
    return row.name if row.off else ALL_ON


# -- text ----------------------------------------------------------------------------------------


def text(ablation: Ablation) -> str:
    shown = broken_columns(ablation)
    letters = [_letter(i) for i in range(len(shown))]
    header = ["rule off", *letters, "states", "checks", "seconds"]
    body = [
        [
            _row_label(r),
            *(cell_text(r.cells[c.name]) for c in shown),
            _states(r),
            str(r.checks),
            f"{r.seconds:.2f}",
        ]
        for r in ablation.rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join([first, *rest]).rstrip()

    out = [
        f"Ablation of {ablation.spec_name}: {ablation.command}",
        *textwrap.wrap(LEGEND, 100),
        "",
        line(header),
        *(line(b) for b in body),
        "",
    ]
    out += [f"{letter}: {c.name} ({KINDS[c.kind]})" for letter, c in zip(letters, shown)]
    held = _held(ablation, shown)
    if held:
        out += textwrap.wrap(f"Hold in every row: {', '.join(held)}.", 100, subsequent_indent="  ")
    if not shown:
        out.append("Nothing breaks in any row.")
    out += ["", "Rules:"]
    for name, doc in ablation.rules.items():
        out += textwrap.wrap(f"{name}: {doc}", 100, initial_indent="  ", subsequent_indent="    ")
    for why, names in _flags(ablation):
        out += textwrap.wrap(f"Flagged: {names} {why}.", 100, subsequent_indent="  ")
    for row, why in _unfinished(ablation):
        out += textwrap.wrap(f"{row}: {why}.", 100, subsequent_indent="  ")
    out.append(_timing(ablation))
    out.append(_verdict(ablation))
    return "\n".join(out) + "\n"


def _unfinished(ablation: Ablation) -> list[tuple[str, str]]:
    """The rows without verdicts, or cut by a bound, and why (spec code raised, killed, out of
    memory, --timeout)."""
    said = []
    for row in ablation.rows:
        if row.lost is not None:
            said.append((_row_label(row), row.lost))
        elif row.stopped is not None:
            said.append((_row_label(row), f"stopped: {row.stopped}"))
    return said


def _verdict(ablation: Ablation) -> str:
    code = ablation.exit_code
    if ablation.interrupted is not None:
        return (
            f"Partial: stopped by {ablation.interrupted} with {len(ablation.rows)} of"
            f" {count(ablation.planned, 'row')} finished (exit {code})."
        )
    if any(c.status == KILLED for r in ablation.rows for c in r.cells.values()):
        return f"A row's process was killed: the table is not whole (exit {code})."
    if code == 0:
        return "Every check with every rule on held."
    return f"With every rule on, not every check held (exit {code})."


def _flags(ablation: Ablation, quote: str = "") -> list[tuple[str, str]]:
    """The rows whose removal breaks nothing, grouped by why: (why, their names)."""
    groups: dict[str, list[str]] = {}
    for row in ablation.flagged:
        groups.setdefault(row.flag or "", []).append(f"{quote}{row.name}{quote}")
    return [
        (f"{'each ' if len(names) > 1 else ''}{why}", ", ".join(names))
        for why, names in groups.items()
    ]


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"A{i - 25}"


def _states(row: Row) -> str:
    return f"{row.distinct_states:,}" if row.complete else f"{row.distinct_states:,}?"


# -- Markdown ------------------------------------------------------------------------------------


def markdown(ablation: Ablation) -> str:
    """The table in Markdown, under its command line (no seconds: docs/specs.md keeps these
    tables, and a test compares them with fresh runs)."""
    shown = broken_columns(ablation)
    header = ["rule off", *(f"`{c.name}`" for c in shown), "states"]
    out = [
        f"`{ablation.command}`",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    for r in ablation.rows:
        label = f"`{r.name}`" if r.off else ALL_ON
        cells = [cell_text(r.cells[c.name]) for c in shown]
        out.append("| " + " | ".join([label, *cells, _states(r)]) + " |")
    out.append("")
    held = _held(ablation, shown)
    if held:
        out.append(f"Hold in every row: {', '.join(f'`{n}`' for n in held)}.")
    out += [f"Flagged: {names} {why}." for why, names in _flags(ablation, "`")]
    if ablation.partial or ablation.exit_code == 153:
        out.append(_verdict(ablation))
    return "\n".join(out) + "\n"


# -- JSON ---------------------------------------------------------------------------------------


def json_text(ablation: Ablation) -> str:
    return json.dumps(ablation.as_dict(), indent=2, ensure_ascii=False) + "\n"


# -- JUnit -------------------------------------------------------------------------------------


def junit(ablation: Ablation) -> str:
    """A <testsuite> per row, a <testcase> per cell. With every rule on, a cell fails unless it
    holds. With a rule off, a broken cell passes (it shows why the rule is there) and one
    that holds is skipped; the row's "(rule needed)" case fails when nothing breaks, so that
    CI can gate on every rule still being needed."""
    module = ablation.spec.removesuffix(".py").strip("./").replace("/", ".")
    root = ET.Element("testsuites", name=_clean(f"mc ablate {ablation.spec}"))
    for row in ablation.rows:
        classname = f"{module}.{ablation.spec_name}.{'all_on' if not row.off else row.name}"
        suite = ET.SubElement(root, "testsuite", name=_clean(f"{_row_label(row)}"))
        props = ET.SubElement(suite, "properties")
        for key, value in row.constants.items():
            ET.SubElement(props, "property", name=f"constant.{key}", value=_clean(value))
        ET.SubElement(props, "property", name="distinct_states", value=str(row.distinct_states))
        for column in ablation.columns:
            cell = row.cells[column.name]
            case = ET.SubElement(suite, "testcase", classname=classname, name=column.name)
            said = _said(column, cell)
            if cell.status in (ERROR, UNKNOWN, KILLED):
                tag = "skipped" if cell.status == UNKNOWN else "error"
                ET.SubElement(case, tag, message=_clean(said))
            elif not row.off and cell.status in BROKEN:
                failure = ET.SubElement(case, "failure", message=_clean(said), type="Violation")
                failure.text = _clean("\n".join(cell.actions))
            elif row.off and cell.status in (HOLDS, OFF):
                ET.SubElement(case, "skipped", message=_clean(f"{said} without {row.name}"))
            elif cell.actions:
                ET.SubElement(case, "system-out").text = _clean("\n".join(cell.actions))
        if row.off:
            case = ET.SubElement(suite, "testcase", classname=classname, name="(rule needed)")
            if row.flag:
                ET.SubElement(case, "failure", message=_clean(f"{row.name} {row.flag}"))
            elif row.broken:
                ET.SubElement(case, "system-out").text = _clean(
                    f"without {row.name}: {', '.join(row.broken)} break"
                )
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _said(column: Column, cell: Cell) -> str:
    what = f"{KINDS[column.kind]} {column.name}"
    if cell.status == HOLDS:
        return f"{what} holds"
    if cell.status == VIOLATED:
        lasso = " (a lasso)" if cell.loop_start is not None else ""
        binding = f" {cell.detail}" if cell.detail else ""
        return f"{what}{binding} violated: a counterexample of {cell.length} states{lasso}"
    if cell.status == UNREACHED:
        return f"{what} is never reached"
    if cell.status == OFF:
        return f"{what} is switched off ({cell.detail})"
    return f"{what} undecided: {cell.status} {cell.detail}".rstrip()


# -- HTML ----------------------------------------------------------------------------------------

STYLE = (
    PAGE_STYLE
    + """\
main { padding: 14px 20px; }
section { background: #fff; border-radius: 6px; padding: 10px 14px; margin-bottom: 14px;
          box-shadow: 0 1px 2px rgba(0,0,0,.15); overflow: auto; }
section h2 { font-size: 15px; margin: 0 0 8px; }
table.ablation { border-collapse: collapse; font-size: 13px; }
table.ablation th, table.ablation td { border: 1px solid #cfd8dc; padding: 3px 8px; }
table.ablation thead th { vertical-align: bottom; background: #eceff1; font-weight: normal; }
table.ablation thead th.group { font-size: 12px; color: #37474f; vertical-align: middle; }
table.ablation thead th.column { vertical-align: bottom; padding: 6px 2px; }
table.ablation thead th.column span { writing-mode: vertical-rl; transform: rotate(180deg);
       white-space: nowrap; font-family: 'DejaVu Sans Mono', monospace; font-size: 12px; }
table.ablation tbody th { text-align: left; font-family: 'DejaVu Sans Mono', monospace;
       font-size: 12px; white-space: nowrap; }
table.ablation tbody th .doc { display: block; font-family: system-ui, sans-serif;
       font-weight: normal; color: #546e7a; white-space: normal; max-width: 360px; }
td.cell { text-align: center; font-weight: bold; white-space: nowrap; }
td.holds { background: #e8f5e9; color: #2e7d32; font-weight: normal; }
td.violated, td.unreached { background: #ffebee; color: #c62828; }
td.violated a { color: #c62828; }
td.off { background: #fafafa; color: #90a4ae; font-weight: normal; }
td.error, td.unknown, td.killed { background: #fff3e0; color: #ef6c00; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.flagged th { background: #fff8e1; }
.flag { color: #ef6c00; }
.hint { color: #607d8b; font-size: 12px; margin: 6px 0; }
ul.flags li { margin: 4px 0; }
"""
)


def html(ablation: Ablation) -> str:
    title = f"mc ablate: {ablation.spec_name}"
    verdict = _verdict(ablation)
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{escape(ablation.spec_name)}: what breaks without each rule</h1>",
        f"<p>{escape(ablation.title)}</p>",
        f"<p><code>{escape(ablation.command)}</code> · {escape(verdict)}</p>",
        f"<p>{escape(_timing(ablation))}</p></header><main>",
    ]
    columns = ablation.columns
    groups: list[tuple[str, int]] = []  # (kind, columns) over runs of columns of one kind
    for c in columns:
        if groups and groups[-1][0] == c.kind:
            groups[-1] = (c.kind, groups[-1][1] + 1)
        else:
            groups.append((c.kind, 1))
    kinds = "".join(
        f'<th class="group" colspan="{n}">{escape(GROUPS[kind])}</th>' for kind, n in groups
    )
    heads = "".join(
        f'<th class="column" title="{escape(c.doc)}"><span>{escape(c.name)}</span></th>'
        for c in columns
    )
    rows = []
    for row in ablation.rows:
        doc = ablation.rules.get(row.name, "") if len(row.off) == 1 else ""
        label = escape(_row_label(row))
        if doc:
            label += f'<span class="doc">{escape(doc)}</span>'
        cls = ' class="flagged"' if row.flag else ""
        cells = "".join(_html_cell(column, row.cells[column.name]) for column in columns)
        rows.append(
            f"<tr{cls}><th>{label}</th>{cells}"
            f'<td class="num">{escape(_states(row))}</td><td class="num">{row.checks}</td>'
            f'<td class="num">{row.seconds:.2f}</td></tr>'
        )
    table = [
        '<section id="table"><h2>A row per configuration, a column per property</h2>',
        f'<p class="hint">{escape(LEGEND)} A number links to the counterexample\'s report.</p>',
        '<table class="ablation"><thead><tr><th rowspan="2">rule off</th>',
        kinds,
        '<th rowspan="2">states</th><th rowspan="2">checks</th><th rowspan="2">seconds</th>',
        "</tr><tr>",
        heads,
        "</tr></thead><tbody>",
        *rows,
        "</tbody></table></section>",
    ]
    flags = []
    if ablation.flagged:
        flags = ['<section id="flags"><h2>Rules whose removal breaks nothing</h2>']
        flags.append('<ul class="flags">')
        flags += [
            f'<li><b>{escape(r.name)}</b> <span class="flag">{escape(r.flag or "")}</span></li>'
            for r in ablation.flagged
        ]
        flags.append("</ul></section>")
    rules = ['<section id="rules"><h2>Rules</h2><ul>']
    rules += [
        f"<li><code>{escape(name)}</code>: {escape(doc)}</li>"
        for name, doc in ablation.rules.items()
    ]
    rules.append("</ul></section>")
    return "\n".join(head + table + flags + rules) + "\n</main></body></html>\n"


def _html_cell(column: Column, cell: Cell) -> str:
    said = escape(_said(column, cell))
    shown = escape(cell_text(cell))
    if cell.report:
        shown = f'<a href="{escape(cell.report)}">{shown}</a>'
    return f'<td class="cell {cell.status}" title="{said}">{shown}</td>'


# -- writing -----------------------------------------------------------------------------------

WRITERS = {"json": json_text, "junit": junit, "html": html, "markdown": markdown}
