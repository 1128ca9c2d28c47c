"""`mc explore`'s web server: Werkzeug's threaded WSGI server on 127.0.0.1, serving the page
(package data: explore.html, .js, .css; no asset from the network) and a small JSON API.

Werkzeug rather than an async stack: the work is synchronous Python (the spec's own code),
one package brings routing, requests and a threaded server, and it is Flask's maintained core.

Who may talk to it: the server listens on 127.0.0.1 only; a request whose Host is not this
server's address (DNS rebinding) or whose Origin is another site is refused; and every API
request carries this run's secret token in an `X-MC-Token` header. The token reaches the page
in the fragment of the URL `mc explore` prints (`#token=...`, which a browser never sends to a
server); the page's script keeps it in sessionStorage (this tab, this origin: this port only)
and takes it out of the address bar. No cookie: a browser sends a cookie of 127.0.0.1 to every
port of 127.0.0.1, so any other local server the user visits would receive it. The page
itself (its HTML, script and style) carries no data and is served without the token. Why this
is safe: docs/explore.md. Spec code (views, guards, the find expression: the author's own
Python) runs in child processes under time and memory limits (checker.explore.sandbox).

    GET  /                      the page; ?path=... opens a state (the URL holds the path)
    GET  /static/NAME           explore.js, explore.css, report.css (the HTML report's style)
    GET  /api/spec              the spec, its constants, the --trace path if any
    GET  /api/view?path=...     the state at the end of the path (checker.explore.page)
    POST /api/find              {"expression": "..."}: start a find (one at a time)
    GET  /api/find              where it is; POST /api/find/stop stops it
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import json
import os
import secrets
import socket
import tempfile
import threading
import webbrowser
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from importlib import resources
from typing import Any

from checker.errors import ConfigError, EngineError, McError
from checker.explore import page
from checker.explore.find import Find, FindError, Status
from checker.explore.navigate import Navigator, Path, PathError
from checker.explore.sandbox import FIND_MEMORY, FIND_SECONDS, Views
from checker.reports.html import STYLE

HOST = "127.0.0.1"
INSTALL = (
    "mc explore needs Werkzeug: install mc with its explore extra, pip install 'mc[explore]'"
    " (in a checkout: pip install -e '.[explore]')"
)
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'"
    " data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
TOKEN_HEADER = "X-MC-Token"
MAX_BODY = 64 << 10  # bytes of a request body (a find expression)
_STATIC = {
    "explore.js": "text/javascript; charset=utf-8",
    "explore.css": "text/css; charset=utf-8",
}


def require() -> None:
    """Raise EngineError (exit 153) unless the web library is installed."""
    try:
        import werkzeug  # noqa: F401
    except ImportError as exc:
        raise EngineError(f"{INSTALL} ({exc})") from None


@dataclass
class Meta:
    """What the page says about the run besides states."""

    command: str  # the command line that reopens this spec: `mc explore specs/x.py -D ...`
    trace: Path | None = None  # the --trace counterexample's path
    trace_label: str = ""  # what it is: "invariant x is violated (RESULT.json)"


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` (0: a free port); ConfigError if it cannot."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart reuses the port
    try:
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        why = "in use by another program" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise ConfigError(f"--port {port}: cannot listen on {HOST}:{port}: {why}") from None
    return sock


class App:
    """The WSGI application: the guard, then the routes."""

    def __init__(self, navigator: Navigator, port: int, meta: Meta, token: str | None = None):
        self.navigator = navigator
        self.port = port
        self.meta = meta
        self.token = token or secrets.token_urlsafe(24)
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}"}
        self.find: Find | None = None
        self.views = Views(self._draw)
        self.find_seconds = FIND_SECONDS  # a find's limits: time, resident memory (bytes)
        self.find_memory = FIND_MEMORY
        self.opener: str | None = None  # --open's page, deleted once the page has loaded
        self._page = _resource("explore.html")

    @property
    def url(self) -> str:
        """The URL to open: the start page, this run's token in its fragment (never sent)."""
        return f"http://{HOST}:{self.port}/#token={self.token}"

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        from werkzeug.wrappers import Request

        request = Request(environ)
        response = self._guard(request) or self._route(request)
        return response(environ, start_response)

    # -- who may ask -----------------------------------------------------------------------

    def _guard(self, request: Any) -> Any:
        """A refusal, or None for a request of this run's page."""
        host = request.headers.get("Host", "")
        if host not in self.hosts:
            return _text(
                403, f"mc explore: refused: Host {host!r} is not this server ({HOST}:{self.port})"
            )
        origin = request.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in self.hosts}:
            return _text(403, f"mc explore: refused: a request from {origin!r}, not from this page")
        if request.headers.get("Sec-Fetch-Site") == "cross-site":
            return _text(403, "mc explore: refused: a request from another site")
        if not request.path.startswith("/api/"):
            return None  # the page, its script and style: no data
        if not _same(request.headers.get(TOKEN_HEADER, ""), self.token):
            return _text(
                403,
                "mc explore: open the URL that `mc explore` printed (it carries this run's"
                " token); then links to states of this server open in that tab",
            )
        if request.method == "POST":
            length = request.content_length
            if length is None and request.headers.get("Transfer-Encoding"):
                return _text(411, "mc explore: a request body needs its Content-Length")
            if (length or 0) > MAX_BODY:
                return _text(413, f"mc explore: a request body of at most {MAX_BODY:,} bytes")
        self._forget_opener()
        return None

    # -- routes ----------------------------------------------------------------------------

    def _route(self, request: Any) -> Any:
        path, method = request.path, request.method
        if method == "GET" and path == "/":
            return _response(200, self._page, "text/html; charset=utf-8")
        if path == "/favicon.ico":
            return _response(204, b"", "image/x-icon")  # none: the browser asks anyway
        if method == "GET" and path.startswith("/static/"):
            return self._static(path.removeprefix("/static/"))
        if method == "GET" and path == "/api/spec":
            return _json(200, self._spec())
        if method == "GET" and path == "/api/view":
            return self._view(request.args.get("path", "0"))
        if path == "/api/find":
            if method == "POST":
                return self._start_find(request)
            if method == "GET":
                return _json(200, self._find_status())
        if method == "POST" and path == "/api/find/stop":
            if self.find is not None:
                self.find.stop()
                self.find.join(5)
            return _json(200, self._find_status())
        if path in {"/", "/api/spec", "/api/view", "/api/find", "/api/find/stop"}:
            return _text(405, f"mc explore: {method} {path}: not allowed")
        return _text(404, f"mc explore: {path}: no such page")

    def _static(self, name: str) -> Any:
        if name == "report.css":
            return _response(200, STYLE.encode(), "text/css; charset=utf-8")
        if name not in _STATIC:
            return _text(404, f"mc explore: /static/{name}: no such file")
        return _response(200, _resource(name), _STATIC[name])

    def _spec(self) -> dict[str, Any]:
        model = self.navigator.model
        return {
            "name": model.name,
            "title": model.compiled.title,
            "spec": model.path,
            "constants": {k: str(v) for k, v in model.constants.items()},
            "command": self.meta.command,
            "trace": None if self.meta.trace is None else str(self.meta.trace),
            "trace_label": self.meta.trace_label,
            "max_depth": self.navigator.max_depth,
        }

    def _view(self, text: str) -> Any:
        status, doc = self.views.view(text)
        return _json(status, doc)

    def _draw(self, text: str) -> tuple[int, Any]:
        """The view of the path `text` and its HTTP status: run in the views' child process."""
        try:
            walk = self.navigator.walk(Path.parse(text))
            return 200, page.view(self.navigator, walk)
        except PathError as exc:
            return 400, page.error_view(text, str(exc))
        except McError as exc:  # spec code failed on the way: say it, keep serving
            return 400, page.error_view(text, f"{text}: {exc}")

    def _start_find(self, request: Any) -> Any:
        if not request.is_json:
            return _json(415, {"error": "find: send the expression as JSON"})
        body = request.get_json(silent=True)
        expression = body.get("expression") if isinstance(body, dict) else None
        if not isinstance(expression, str):
            return _json(400, {"error": 'find: expected {"expression": "..."}'})
        if self.find is not None:
            self.find.stop()  # one search at a time: the new one replaces it
            self.find.join(5)
        try:
            self.find = Find(
                self.navigator, expression, self.find_seconds, self.find_memory
            ).start()
        except FindError as exc:
            self.find = None
            return _json(400, {"error": str(exc)})
        return _json(202, self._find_status())

    def _find_status(self) -> dict[str, Any]:
        if self.find is None:
            return {"state": "idle"}
        status: Status = self.find.status()
        return {
            "expression": self.find.expression,
            "state": status.state,
            "message": status.message,
            "distinct": status.distinct,
            "generated": status.generated,
            "depth": status.depth,
            "seconds": round(status.seconds, 3),
            "path": None if status.path is None else str(status.path),
        }

    def open_browser(self) -> None:
        """--open: the browser is given a 0600 page of this user's that sends it on to the URL,
        so that the token is on no command line (`ps` shows a browser's); the page is deleted
        once the explorer has loaded, or when the server stops."""
        descriptor, self.opener = tempfile.mkstemp(prefix="mc-explore-", suffix=".html")
        target = escape(self.url, quote=True)
        with os.fdopen(descriptor, "w") as out:
            out.write(
                '<!DOCTYPE html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
                f'<meta http-equiv="refresh" content="0;url={target}"><title>mc explore</title>\n'
            )
        opener = f"file://{self.opener}"
        threading.Thread(target=webbrowser.open, args=(opener,), daemon=True).start()

    def _forget_opener(self) -> None:
        if self.opener is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.opener)
            self.opener = None

    def close(self) -> None:
        if self.find is not None:
            self.find.stop()
        self.views.close()
        self._forget_opener()


def start(navigator: Navigator, meta: Meta, port: int = 0) -> tuple[App, Any]:
    """The application and its server, listening (not yet serving) on 127.0.0.1:`port`."""
    require()
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass  # one line per request would bury the URL

    sock = listen(port)
    app = App(navigator, sock.getsockname()[1], meta)
    try:
        server = make_server(
            HOST, app.port, app, threaded=True, request_handler=Quiet, fd=sock.fileno()
        )
    finally:
        sock.close()  # the server holds its own duplicate
    return app, server


def serve(
    navigator: Navigator,
    meta: Meta,
    port: int = 0,
    open_browser: bool = False,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve the explorer until Ctrl-C (or SIGTERM, which mc turns into the same)."""
    app, server = start(navigator, meta, port)
    echo(f"mc explore: {navigator.model.name} at {app.url}")
    echo("mc explore: Ctrl-C stops the server")
    try:
        if open_browser:
            app.open_browser()
        server.serve_forever()  # returns on KeyboardInterrupt, the socket closed
    finally:
        app.close()
        server.server_close()
    echo("mc explore: stopped")


def _resource(name: str) -> bytes:
    return (resources.files("checker.explore") / "static" / name).read_bytes()


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _headers(content_type: str) -> dict[str, str]:
    return {
        "Content-Type": content_type,
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def _response(status: int, body: bytes, content_type: str) -> Any:
    from werkzeug.wrappers import Response

    return Response(body, status=status, headers=_headers(content_type))


def _text(status: int, message: str) -> Any:
    return _response(status, (message + "\n").encode(), "text/plain; charset=utf-8")


def _json(status: int, doc: Any) -> Any:
    return _response(status, json.dumps(doc).encode(), "application/json")
