"""`mc explore` in a real browser: Playwright drives Debian's chromium (its executable, nothing
downloaded) against `mc explore` run as a command. We click through the KAFKA-14139
counterexample, jump to a --json counterexample and back, find a reachability property, walk
to KIP-966's last-replica-standing data loss and reopen its URL, and show a result as a
notebook does. Screenshots go to build/ (explore-*.png)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

from checker.loader import load_model
from checker.local import bfs
from checker.reports import json_report
from checker.result import CheckResult, Step
from checker.testing import check
from checker.values import show
from tests.conftest import ROOT, SPECS, finish

sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra brings Playwright")
CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (`make test` installs Debian's chromium through"
    " scripts/ensure-test-tools.sh)",
)
BUILD = ROOT / "build"
FLAGS = [  # as tests/reports/test_browser.py runs it: no request leaves the machine
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
KIP903 = str(SPECS / "kip903.py")
KIP966 = str(SPECS / "kip966.py")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless chromium (Playwright gives each launch a fresh profile folder)."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    yield opened
    context.close()


class Explorer:
    """`mc explore` running as a command, and the URL it printed."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "checker", "explore", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if " at http://127.0.0.1:" not in line:
            self.close()
            raise AssertionError(f"mc explore did not start: {line}{self.proc.stderr.read()}")
        self.url = line.split(" at ")[1].strip()  # with this run's token
        self.base = self.url.split("?")[0]

    def close(self) -> None:
        self.proc.terminate()  # SIGTERM: mc stops as on Ctrl-C
        finish(self.proc, 20)


def counterexample(spec: str, **constants: str) -> CheckResult:
    result = bfs.check(load_model(spec, constants))
    assert result.verdict == "violation"
    return result


@pytest.fixture(scope="module")
def kip903(tmp_path_factory) -> Iterator[tuple[Explorer, CheckResult]]:
    """KAFKA-14139 (`mc check specs/kip903.py -D fixed=false`), and the explorer of that spec
    with its --json report as --trace."""
    result = counterexample(KIP903, fixed="false")
    report = tmp_path_factory.mktemp("explore") / "kip903.json"
    json_report.write(result, str(report))
    explorer = Explorer(KIP903, "-D", "fixed=false", "--trace", str(report))
    yield explorer, result
    explorer.close()


def wait_for_depth(page, depth: int) -> None:
    page.wait_for_selector(f'body[data-busy="false"][data-depth="{depth}"]')


def click_step(page, step: Step, depth: int) -> None:
    """Click the choice of `step` (its action and parameters) and wait for the next state."""
    params = ", ".join(f"{k}={show(v)}" for k, v in step.params.items())
    selector = f'li.choice[data-action="{step.action}"][data-params="{params}"] button'
    assert page.locator(selector).count() == 1, f"{step.action}({params}) is not enabled here"
    page.click(selector)
    wait_for_depth(page, depth + 1)


def check_value(page, kind: str, name: str) -> str:
    return page.get_attribute(f'li.check[data-kind="{kind}"][data-name="{name}"]', "data-value")


def shoot(page, name: str) -> None:
    BUILD.mkdir(exist_ok=True)
    page.screenshot(path=str(BUILD / f"explore-{name}.png"))


def test_clicking_through_kafka_14139_breaks_the_invariant_at_the_last_step(kip903, page):
    explorer, result = kip903
    page.goto(explorer.url)
    wait_for_depth(page, 1)
    assert page.url == explorer.base  # the token went to a cookie, not the address bar
    trace = result.trace
    for depth, step in enumerate(trace[1:], start=1):
        assert check_value(page, "invariant", result.invariant) == "true", depth
        click_step(page, step, depth)
    assert check_value(page, "invariant", result.invariant) == "false"
    violated = page.locator('li.check[data-kind="invariant"][data-value="false"]')
    assert violated.all_inner_texts() == [f"✗{result.invariant}"]
    assert page.inner_text("#verdict") == f"invariant {result.invariant} violated"
    # The chart grew a row per step and ends on the violation, as the HTML report's does.
    assert page.locator("#msc g.msc-row").count() == len(trace)
    assert page.locator("#msc g.msc-row.violated").get_attribute("data-step") == str(len(trace))
    assert page.locator("#state tr.changed").count() >= 1
    shoot(page, "kip903-violation")
    page.locator("#chart").scroll_into_view_if_needed()
    shoot(page, "kip903-chart")


def test_jump_to_the_json_counterexample_and_back(kip903, page):
    explorer, result = kip903
    page.goto(explorer.url)
    wait_for_depth(page, 1)
    click_step(page, result.trace[1], 1)
    before = page.get_attribute("body", "data-path")
    assert page.inner_text("#jump") == (
        f"Jump to the counterexample: invariant {result.invariant} is violated (kip903.json,"
        f" {len(result.trace)} states)"
    )
    page.click("#jump")
    wait_for_depth(page, len(result.trace))
    assert check_value(page, "invariant", result.invariant) == "false"
    steps = page.locator("#steps li").all_inner_texts()
    assert len(steps) == len(result.trace) and steps[-1].endswith(
        f"{result.trace[-1].action}(b={result.trace[-1].params['b']})"
    )
    page.click("#back")
    wait_for_depth(page, 2)
    assert page.get_attribute("body", "data-path") == before
    assert page.url.endswith(f"?path={before}")
    page.click("#forward")
    wait_for_depth(page, len(result.trace))
    full = page.get_attribute("body", "data-path")
    page.click('#msc g.msc-row[data-step="3"]')  # a row of the chart: back to that state
    wait_for_depth(page, 3)
    assert page.get_attribute("body", "data-path") == ",".join(full.split(",")[:3])


def test_find_a_reachability_property(kip903, page):
    explorer, _ = kip903
    model = load_model(KIP903, {"fixed": "false"}, invariants=[], symmetry=False)
    name = "replica_back_with_an_empty_log"
    witness = bfs.check(model, bfs.Options(witness=name, deadlock=False))
    page.goto(explorer.url)
    wait_for_depth(page, 1)
    assert check_value(page, "reachable", name) == "false"
    page.fill("#find-expr", f"self.{name}(s)")
    page.click("#find-go")
    page.wait_for_selector('#find-status[data-state="found"]')
    wait_for_depth(page, len(witness.trace))
    assert check_value(page, "reachable", name) == "true"
    assert page.inner_text("#find-status").startswith(
        f"found: self.{name}(s) holds in state {len(witness.trace)}"
    )
    shown = page.locator("#steps li").all_inner_texts()
    assert [re.sub(r"^\d+\s*", "", s) for s in shown[1:]] == [
        f"{s.action}({', '.join(f'{k}={show(v)}' for k, v in s.params.items())})"
        for s in witness.trace[1:]
    ]
    shoot(page, "kip903-find")
    page.fill("#find-expr", "s.nope ==")
    page.click("#find-go")
    page.wait_for_selector('#find-status[data-state="refused"]')
    assert page.inner_text("#find-status").startswith("find: invalid syntax")


def test_kip966_last_replica_standing_data_loss_by_clicking_and_by_its_url(browser, page):
    """The issue's "done when": walk to the data loss, then open the state's link afresh."""
    constants = {"fixed": "false", "data_loss_shutdown_limit": "1"}
    result = counterexample(KIP966, **constants)
    assert [s.action for s in result.trace][-4:] == [
        "data_loss_shutdown",
        "broker_start",
        "receive_broker_reg_request",
        "receive_broker_reg_response",
    ]
    explorer = Explorer(KIP966, *(a for k, v in constants.items() for a in ("-D", f"{k}={v}")))
    try:
        page.goto(explorer.url)
        wait_for_depth(page, 1)
        for depth, step in enumerate(result.trace[1:], start=1):
            click_step(page, step, depth)
        assert check_value(page, "invariant", result.invariant) == "false"
        link = page.input_value("#link")
        assert link.startswith(f"{explorer.base}?path=0,") and link == page.url
        shoot(page, "kip966-data-loss")
        again = page.context.new_page()  # the shared link, in a new tab
        again.goto(link)
        wait_for_depth(again, len(result.trace))
        assert again.get_attribute("body", "data-path") == page.get_attribute("body", "data-path")
        assert check_value(again, "invariant", result.invariant) == "false"
        again.goto(f"{explorer.base}?path=0,write_record_to_leader.7")  # not a path of this spec
        again.wait_for_selector("#error:not([hidden])")
        assert again.inner_text("#error").startswith(
            "path 0,write_record_to_leader.7: step 2: write_record_to_leader has 2 bindings"
            " here, not 8"
        )
    finally:
        explorer.close()


def test_a_result_and_its_trace_show_as_the_html_report_in_a_notebook(page):
    result = check(str(SPECS / "light" / "kip903.py"), fixed=False, no_liveness=True)
    n = len(result.trace)
    for shown in (result, result.trace):
        page.set_content(shown._repr_html_())
        report = page.frame_locator("iframe")
        # The report's own script ran inside the sandboxed frame: the last step is selected.
        report.locator(f'body[data-selected="{n}"]').wait_for()
        assert report.locator("ol#steps li").count() == n
        assert report.locator("svg.msc g.msc-row").count() == n
    shoot(page, "notebook")
