"""`mc explore` and spec code that never returns, eats memory or says too much: views, guards
and finds run in child processes under time and memory limits (checker.explore.sandbox), the
server answers a page request within a second whatever they do, a stopped or runaway find is
killed, and request bodies and messages are size-capped."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from checker.explore.navigate import Navigator
from checker.explore.server import MAX_BODY, App, Meta
from checker.loader import load_model
from tests.checker.test_ablate_signals import in_group
from tests.conftest import ROOT, SPECS, finish
from tests.explore.serving import serving

DIE_HARD = SPECS / "examples" / "die_hard.py"

SPIN = """
from checker import Record, Spec, action, invariant


class Spin(Spec):
    def init(self):
        return Record(x=0)

    @action
    def inc(self, s):
        return s.replace(x=s.x + 1) if s.x < 3 else None

    @action
    def spin(self, s):
        while s.x == 2:  # a guard that never returns in one state
            pass
        return None

    @invariant
    def small(self, s):
        return s.x < 10
"""


@pytest.fixture
def server(tmp_path) -> Iterator[App]:
    spec = tmp_path / "spin.py"
    spec.write_text(SPIN)
    with serving(Navigator(load_model(str(spec), {})), Meta("mc explore spin.py")) as app:
        app.views.seconds = 1.0
        yield app


def ask(app: App, method: str, target: str, body: bytes = b"") -> tuple[int, bytes, float]:
    """Status, body and seconds of a request with this run's token."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", app.port, timeout=30)
    headers = {"X-MC-Token": app.token, "Content-Type": "application/json"}
    connection.request(method, target, body=body or None, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data, time.monotonic() - started


def in_background(app: App, target: str) -> list[tuple[int, bytes, float]]:
    answers: list[tuple[int, bytes, float]] = []
    threading.Thread(target=lambda: answers.append(ask(app, "GET", target)), daemon=True).start()
    return answers


def find(app: App, expression: str) -> dict:
    status, body, _ = ask(app, "POST", "/api/find", json.dumps({"expression": expression}).encode())
    assert status == 202, body
    return json.loads(body)


def until_done(app: App, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        doc = json.loads(ask(app, "GET", "/api/find")[1])
        if doc["state"] != "running":
            return doc
        time.sleep(0.05)
    raise AssertionError("the find did not end")


def test_a_guard_that_never_returns_is_said_on_its_state_and_the_server_answers(server):
    answers = in_background(server, "/api/view?path=0,inc.0,inc.0")  # x == 2: spin loops
    time.sleep(0.3)
    status, page, seconds = ask(server, "GET", "/")
    assert status == 200 and b"explore.js" in page and seconds < 1.0
    deadline = time.monotonic() + 10
    while not answers and time.monotonic() < deadline:
        time.sleep(0.05)
    status, body, seconds = answers[0]
    assert status == 503 and seconds < 5
    error = json.loads(body)["error"]
    assert error.startswith("path 0,inc.0,inc.0: drawing 0,inc.0,inc.0 did not finish within 1 s")
    status, body, _ = ask(server, "GET", "/api/view?path=0,inc.0")  # a fresh child draws it
    assert status == 200 and json.loads(body)["depth"] == 2


def test_a_find_that_never_returns_is_stopped_and_the_server_answers(server):
    """`10**10**8 == 0`: one C call of minutes; the page is answered at once, "stop" ends it."""
    assert find(server, "10**10**8 == 0")["state"] == "running"
    time.sleep(0.5)
    status, _, seconds = ask(server, "GET", "/")
    assert status == 200 and seconds < 1.0
    status, body, seconds = ask(server, "POST", "/api/find/stop")
    assert status == 200 and seconds < 2.0
    assert json.loads(body)["state"] == "stopped"
    assert server.find is not None and not server.find.child.alive()


def test_a_find_past_its_time_is_killed_and_said(server):
    server.find_seconds = 1.0  # (60 s by default)
    expression = "all(True for _ in iter(int, 1))"  # a generator that never ends
    find(server, expression)
    doc = until_done(server)
    assert doc["state"] == "error"
    assert doc["message"].startswith(f"find {expression} did not finish within 1 s: stopped")
    assert not server.find.child.alive()


def test_a_huge_error_text_is_cut(server):
    find(server, "(_ for _ in ()).throw(ValueError('x' * 10**8))")
    doc = until_done(server)
    assert doc["state"] == "error" and "more characters cut)" in doc["message"]
    assert len(doc["message"]) < 5000


def test_request_bodies_are_size_capped(server):
    big = json.dumps({"expression": "True or " + "1" * MAX_BODY}).encode()
    status, body, _ = ask(server, "POST", "/api/find", big)
    assert status == 413 and b"at most 65,536 bytes" in body
    assert server.find is None


def test_a_find_over_its_memory_is_killed_and_said(server):
    server.find_memory = 200 << 20  # (1 GiB by default)
    find(server, "len(b'x' * (600 << 20)) == 0")
    doc = until_done(server)
    assert doc["state"] == "error"
    assert doc["message"].startswith("find len(b'x' * (600 << 20)) == 0 used more than 200 MiB")


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"constants": 5}', "not an mc --json report (no spec_name and trace)"),
        (
            '{"spec_name": "DieHard", "trace": [], "constants": 5}',
            "not an mc --json report (its constants are 5)",
        ),
        ("[" * 100_000 + "]" * 100_000, "not an mc --json report (nested too deep)"),
        (
            '{"spec_name": "DieHard", "trace": [5], "constants": {}}',
            "not an mc --json report (a trace step is 5)",
        ),
    ],
    ids=["constants-a-number", "constants-not-a-map", "deep", "step-a-number"],
)
def test_a_trace_of_another_shape_is_refused_before_serving(tmp_path, content, said):
    report = tmp_path / "r.json"
    report.write_text(content)
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "explore", str(DIE_HARD), "--trace", str(report)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 151, proc.stderr
    assert proc.stderr == f"mc: error: --trace {report}: {said}\n"
    assert proc.stdout == ""


@pytest.mark.parametrize("how", ["full-disk", "reader-gone"])
def test_explore_with_standard_output_that_cannot_be_written_ends_151(how):
    command = [sys.executable, "-m", "checker", "explore", str(DIE_HARD)]
    if how == "full-disk":
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                command, cwd=ROOT, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60
            )
        err, code = proc.stderr, proc.returncode
    else:
        running = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        running.stdout.close()
        err = running.stderr.read()
        code = running.wait(60)
        running.stderr.close()
    assert code == 151, err
    assert err.startswith("mc: error: standard output could not be written: ")
    assert "Traceback" not in err


def test_sigterm_during_a_find_that_never_returns_ends_the_command_and_its_children():
    proc = subprocess.Popen(
        [sys.executable, "-m", "checker", "explore", str(DIE_HARD)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("#token=")[1]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        body = json.dumps({"expression": "10**10**8 == 0"})
        headers = {"X-MC-Token": token, "Content-Type": "application/json"}
        connection.request("POST", "/api/find", body=body, headers=headers)
        assert connection.getresponse().status == 202
        connection.close()
        time.sleep(0.5)
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        out, err = finish(proc, 20)
        assert time.monotonic() - sent < 2.0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == "mc explore: stopped" and "Traceback" not in err
    time.sleep(1)
    assert in_group(proc.pid) == []
