"""`mc explore` and spec code that never returns, eats memory or says too much: views, guards
and finds run in child processes under time and memory limits (checker.explore.sandbox), the
server answers a page request within a second whatever they do, a stopped or runaway find is
killed, and request bodies and messages are size-capped."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator

import pytest

from checker.explore.navigate import Navigator
from checker.explore.server import MAX_BODY, App, Meta, start
from checker.loader import load_model

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
    app, httpd = start(Navigator(load_model(str(spec), {})), Meta("mc explore spin.py"))
    app.views.seconds = 1.0
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield app
    app.close()
    httpd.shutdown()
    httpd.server_close()


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
