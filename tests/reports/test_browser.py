"""The HTML report in a real browser: headless Chromium loads the KIP-903 counterexample page
from file://, runs its script, and we read back the DOM it rendered and a screenshot."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from checker.reports.graph import describe_action
from tests.conftest import CHROMIUM, MC, ROOT, SPECS, needs_chromium
from tests.reports.test_writers import Page

pytestmark = needs_chromium
BUILD = ROOT / "build"


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-quic",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report as `mc check` writes it, kept in build/ next to its screenshot."""
    BUILD.mkdir(exist_ok=True)
    path = BUILD / "kip903-counterexample.html"
    command = [*MC, "check", str(SPECS / "light" / "kip903.py"), "-D", "fixed=false"]
    flags = ["--progress", "0", "--html", str(path)]
    proc = subprocess.run([*command, *flags], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 12, proc.stderr
    return path


def test_selecting_a_step_shows_its_state(page, kip903_result, tmp_path):
    trace = kip903_result.trace
    step = 5 if len(trace) >= 5 else len(trace)
    dom = chromium(tmp_path / "profile", "--dump-dom", page.as_uri() + f"#step={step}").stdout
    rendered = Page(dom)
    # The page's script ran: it read #step= and moved the selection there.
    (body,) = [a for tag, a in rendered.elements if tag == "body"]
    assert body["data-selected"] == str(step)
    shown = [a["id"] for a in rendered.with_attr("class", "state") if "hidden" not in a]
    assert shown == [f"state-{step}"]
    selected = [
        a["id"]
        for tag, a in rendered.elements
        if tag == "li" and "selected" in (a.get("class") or "")
    ]
    assert selected == [f"step-{step}"]
    rows = [
        a
        for tag, a in rendered.elements
        if tag == "g" and "msc-row" in (a.get("class") or "").split()
    ]
    assert [a["data-step"] for a in rows if "selected" in (a["class"] or "")] == [str(step)]
    # Every step is listed, and the shown panel holds that step's state.
    for number, s in enumerate(trace, start=1):
        assert describe_action(s.action, s.params) in rendered.text[f"step-{number}"]
    changed_row = dom.split(f'id="state-{step}"')[1].split("</table>")[0]
    before, after = trace[step - 2].state, trace[step - 1].state
    for name in after:
        marked = f'<tr class="changed"><th>{name}</th>' in changed_row
        assert marked == (before[name] != after[name]), name


def test_screenshot_of_the_counterexample(page, tmp_path):
    shot = BUILD / "kip903-counterexample.png"
    shot.unlink(missing_ok=True)
    chromium(
        tmp_path / "profile",
        "--hide-scrollbars",
        "--window-size=1400,1000",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1400, 1000)
    assert len(data) > 30_000  # a rendered page, not a blank one


def test_the_ablation_page_links_each_counterexample_to_its_report(tmp_path):
    """`mc ablate --html`: Chromium renders the table, and the cell of the broken invariant
    links to that counterexample's report, which renders its steps."""
    BUILD.mkdir(exist_ok=True)
    page = BUILD / "kip996-read-ablation.html"
    command = [*MC, "ablate", str(SPECS / "light" / "kip996_read.py"), "-D", "max_isolations=0"]
    flags = ["--progress", "0", "--workers", "1", "--html", str(page)]
    proc = subprocess.run([*command, *flags], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    dom = chromium(tmp_path / "profile", "--dump-dom", page.as_uri()).stdout
    link = '<a href="kip996-read-ablation.cells/read_offset_first--reads_are_linearizable.html">5'
    assert link in dom
    assert dom.count('class="cell holds"') == 2 * 5 - 1  # two rows, five columns, one broken
    cell = BUILD / "kip996-read-ablation.cells" / "read_offset_first--reads_are_linearizable.html"
    steps = chromium(tmp_path / "profile", "--dump-dom", cell.as_uri()).stdout
    assert steps.count('<li id="step-') == 5 and 'data-selected="5"' in steps
    shot = BUILD / "kip996-read-ablation.png"
    shot.unlink(missing_ok=True)
    chromium(
        tmp_path / "profile",
        "--hide-scrollbars",
        "--window-size=1200,700",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
