"""`mc explore`'s server over HTTP: who it answers (Host, Origin, the run's token in a header),
what its API returns, the find's life, spec code that never returns (in child processes, under
limits: the server keeps answering), and how it starts and stops as a command."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from checker.explore.navigate import Navigator
from checker.explore.server import App, Meta
from checker.loader import load_model
from tests.conftest import ROOT, SPECS, default_sigint, finish
from tests.explore.serving import serving


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self):
        return json.loads(self.body)


@pytest.fixture(scope="module")
def server() -> Iterator[App]:
    navigator = Navigator(load_model(str(SPECS / "examples" / "die_hard.py"), {}))
    with serving(navigator, Meta("mc explore die_hard.py")) as app:
        yield app


def ask(app: App, method: str, target: str, body: bytes | None = None, **headers: str) -> Reply:
    """A request with this run's token and Host unless `headers` say otherwise."""
    given = {k.replace("_", "-"): v for k, v in headers.items()}
    sent = {"Host": f"127.0.0.1:{app.port}", "X-MC-Token": app.token, **given}
    sent = {k: v for k, v in sent.items() if v is not None}
    connection = http.client.HTTPConnection("127.0.0.1", app.port, timeout=30)
    connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
    for name, value in sent.items():
        connection.putheader(name, value)
    connection.putheader("Content-Length", str(len(body or b"")))
    connection.endheaders(body)
    response = connection.getresponse()
    reply = Reply(response.status, response.headers, response.read())
    connection.close()
    return reply


def test_the_token_is_in_the_url_fragment_and_the_page_carries_no_data(server):
    """The printed URL holds the token in its fragment, which no browser sends; the page (its
    HTML, script, style) is served without it and holds nothing of the spec; no cookie is
    set (a cookie of 127.0.0.1 would go to every port); a token in the query is no key."""
    assert server.url == f"http://127.0.0.1:{server.port}/#token={server.token}"
    for target in ("/", "/?path=0,fill_big.0", "/static/explore.js", "/static/explore.css"):
        reply = ask(server, "GET", target, X_MC_Token=None)
        assert reply.status == 200, target
        assert "Set-Cookie" not in reply.headers
        assert b"DieHard" not in reply.body and server.token.encode() not in reply.body
    page = ask(server, "GET", "/", X_MC_Token=None)
    assert b'<script src="/static/explore.js"' in page.body
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    refused = ask(server, "GET", f"/api/spec?token={server.token}", X_MC_Token=None)
    assert refused.status == 403


@pytest.mark.parametrize(
    "headers, refusal",
    [
        ({"X-MC-Token": None}, "open the URL that `mc explore` printed"),
        ({"X-MC-Token": "nope"}, "open the URL that `mc explore` printed"),
        ({"X-MC-Token": None, "Cookie": "mc_explore=x"}, "open the URL that `mc explore` printed"),
        ({"Host": "attacker.example:{port}"}, "Host 'attacker.example:{port}' is not this server"),
        ({"Host": None}, "Host '' is not this server"),
        ({"Origin": "http://attacker.example"}, "a request from 'http://attacker.example'"),
        ({"Origin": "http://127.0.0.1:1"}, "a request from 'http://127.0.0.1:1'"),
        ({"Sec-Fetch-Site": "cross-site"}, "a request from another site"),
    ],
)
def test_requests_from_elsewhere_are_refused(server, headers, refusal):
    headers = {k.replace("-", "_"): v and v.format(port=server.port) for k, v in headers.items()}
    for method, target in (("GET", "/api/view?path=0"), ("POST", "/api/find")):
        reply = ask(server, method, target, b'{"expression": "True"}', **headers)
        assert reply.status == 403
        assert refusal.format(port=server.port) in reply.body.decode()
    assert server.find is None  # no expression was evaluated


def test_the_page_itself_asks_from_its_own_origin(server):
    reply = ask(server, "GET", "/api/spec", Origin=f"http://localhost:{server.port}")
    assert reply.status == 200 and reply.json()["name"] == "DieHard"
    assert reply.headers["Cache-Control"] == "no-store"
    reply = ask(server, "GET", "/api/spec", Host=f"localhost:{server.port}")
    assert reply.status == 200


def test_a_view_holds_the_state_its_choices_and_checks(server):
    view = ask(server, "GET", "/api/view?path=0,fill_big.0,big_to_small.0").json()
    assert view["path"] == "0,fill_big.0,big_to_small.0" and view["depth"] == 3
    assert '<tr class="changed"><th>small</th><td>3<div class="was">was 0</div>' in view["state"]
    assert view["chart"].startswith('<svg xmlns="http://www.w3.org/2000/svg" class="msc"')
    assert view["violated"] == [] and not view["deadlock"]
    assert 'data-action="empty_small" data-params="" data-enabled="true"' in view["choices"]
    assert 'data-go="0,fill_big.0,big_to_small.0,empty_small.0"' in view["choices"]
    assert 'data-name="big_is_not_4" data-value="true"' in view["checks"]
    assert "State 3: big_to_small()\n    big   = 2\n    small = 3" in view["text"]


def test_a_bad_path_is_a_message(server):
    reply = ask(server, "GET", "/api/view?path=0,fill_big.3")
    assert reply.status == 400
    assert reply.json()["error"] == (
        "path 0,fill_big.3: step 2: fill_big has 1 bindings here, not 4"
    )
    assert ask(server, "GET", "/nope").status == 404
    assert ask(server, "DELETE", "/api/view").status == 405


def test_find_runs_reports_and_finishes(server):
    refused = ask(server, "POST", "/api/find", b'{"expression": "s.big =="}')
    assert refused.status == 415  # not JSON: no form can post it from another page
    json_type = {"Content-Type": "application/json"}
    bad = ask(server, "POST", "/api/find", b'{"expression": "s.big =="}', **json_type)
    assert bad.status == 400 and bad.json()["error"].startswith("find: invalid syntax")
    started = ask(server, "POST", "/api/find", b'{"expression": "s.big == 4"}', **json_type)
    assert started.status == 202 and started.json()["expression"] == "s.big == 4"
    deadline = time.monotonic() + 30
    status = started.json()
    while status["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        status = ask(server, "GET", "/api/find").json()
    assert status["state"] == "found", status
    # The die-hard puzzle's solution: 7 states, as mc check's counterexample to big_is_not_4.
    view = ask(server, "GET", f"/api/view?path={status['path']}").json()
    assert view["depth"] == 7 and view["violated"] == ["big_is_not_4"]
    assert status["message"] == "found: s.big == 4 holds in state 7 (14 distinct states searched)"


def explore(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "checker", "explore", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
        env={**os.environ, **env},
    )


def get(port: int, target: str, token: str = "") -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", target, headers={"X-MC-Token": token} if token else {})
    response = connection.getresponse()
    response.body = response.read()  # type: ignore[attr-defined]
    connection.close()
    return response


def test_the_command_serves_its_options_opens_the_browser_and_stops_on_ctrl_c():
    """--open runs $BROWSER (here `echo`, which prints its command line with mc's output) with
    a 0600 page of this user's that sends the browser on to the URL: the token is on no
    command line; the page is deleted once the explorer has been asked for something."""
    proc = explore(
        str(SPECS / "examples" / "die_hard.py"), "--open", "--max-depth", "3", BROWSER="echo"
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("mc explore: DieHard at http://127.0.0.1:"), first
        url = first.split(" at ")[1].strip()
        port = int(url.split("127.0.0.1:")[1].split("/")[0])
        token = url.split("#token=")[1]
        lines = sorted(proc.stdout.readline().strip() for _ in range(2))
        assert lines[0].startswith("file:///") and lines[0].endswith(".html")
        assert lines[1] == "mc explore: Ctrl-C stops the server"
        assert token not in lines[0]  # the browser's command line
        opener = lines[0].removeprefix("file://")
        assert os.stat(opener).st_mode & 0o777 == 0o600
        with open(opener) as page:
            assert f'content="0;url={url}"' in page.read()
        assert get(port, "/api/spec").status == 403  # no token
        spec = get(port, "/api/spec", token)
        assert spec.status == 200 and json.loads(spec.body)["max_depth"] == 3
        assert not os.path.exists(opener)
        proc.send_signal(signal.SIGINT)
        out, err = finish(proc, 20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == "mc explore: stopped"
    assert "Traceback" not in err
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=5).request("GET", "/")


WITHOUT_WERKZEUG = """
import sys

class NoWerkzeug:  # as if mc were installed without its explore extra
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "werkzeug":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoWerkzeug())
from checker.cli import main
main(sys.argv[1:])
"""


def test_without_the_explore_extra_mc_says_how_to_install_it(tmp_path):
    die_hard = str(SPECS / "examples" / "die_hard.py")
    command = [sys.executable, "-c", WITHOUT_WERKZEUG, "explore", die_hard]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 153
    assert proc.stderr.startswith(
        "mc: error: mc explore needs Werkzeug: install mc with its explore extra, pip install"
        " 'mc[explore]' (in a checkout: pip install -e '.[explore]') (No module named"
    )
    assert "Traceback" not in proc.stderr and proc.stdout == ""
