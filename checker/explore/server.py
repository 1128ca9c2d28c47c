"""`mc explore`'s web server: Werkzeug's threaded WSGI server on 127.0.0.1, serving the page
(package data: explore.html, .js, .css; no asset from the network) and a small JSON API.

Werkzeug rather than an async stack: the work is synchronous Python (the spec's own code),
one package brings routing, requests and a threaded server, and it is Flask's maintained core.

Who may talk to it: the server listens on 127.0.0.1 only; a request whose Host is not this
server's address (DNS rebinding) or whose Origin is another site is refused; and every request
carries this run's secret token, from the URL `mc explore` prints (it sets a cookie for this
port, so that later links without the token, such as a shared path, open in the same browser).
The find expression is the author's own Python, evaluated in this process only.

    GET  /                      the page; ?path=... opens a state (the URL holds the path)
    GET  /static/NAME           explore.js, explore.css, report.css (the HTML report's style)
    GET  /api/spec              the spec, its constants, the --trace path if any
    GET  /api/view?path=...     the state at the end of the path (checker.explore.page)
    POST /api/find              {"expression": "..."}: start a find (one at a time)
    GET  /api/find              where it is; POST /api/find/stop stops it
"""

from __future__ import annotations

import errno
import hmac
import json
import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from checker.errors import ConfigError, EngineError, McError
from checker.explore import page
from checker.explore.find import Find, FindError, Status
from checker.explore.navigate import Navigator, Path, PathError
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
        self.cookie = f"mc_explore_{port}"
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}"}
        self.lock = threading.Lock()  # spec code runs one request at a time
        self.find: Find | None = None
        self._page = _resource("explore.html")

    @property
    def url(self) -> str:
        """The URL to open: the start page, with this run's token."""
        return f"http://{HOST}:{self.port}/?{urlencode({'token': self.token})}"

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
        given = request.args.get("token")
        if given is not None and _same(given, self.token):
            # Keep the token out of the address bar (and out of links copied from it).
            args = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
            target = request.path + (f"?{urlencode(args, safe=',')}" if args else "")
            response = _redirect(target)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
            return response
        if not _same(request.cookies.get(self.cookie, ""), self.token):
            return _text(
                403,
                "mc explore: open the URL that `mc explore` printed (it carries this run's"
                " token); then links to states of this server open here",
            )
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
        try:
            with self.lock:
                walk = self.navigator.walk(Path.parse(text))
                return _json(200, page.view(self.navigator, walk))
        except PathError as exc:
            return _json(400, page.error_view(text, str(exc)))
        except McError as exc:  # spec code failed on the way: say it, keep serving
            return _json(400, page.error_view(text, f"{text}: {exc}"))

    def _start_find(self, request: Any) -> Any:
        if not request.is_json:
            return _json(415, {"error": "find: send the expression as JSON"})
        body = request.get_json(silent=True)
        expression = body.get("expression") if isinstance(body, dict) else None
        if not isinstance(expression, str):
            return _json(400, {"error": 'find: expected {"expression": "..."}'})
        if self.find is not None:
            self.find.stop()  # one search at a time: the new one replaces it
        try:
            self.find = Find(self.navigator, expression).start()
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

    def close(self) -> None:
        if self.find is not None:
            self.find.stop()


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
    if open_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(app.url,), daemon=True).start()
    try:
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


def _redirect(target: str) -> Any:
    response = _response(303, b"", "text/plain; charset=utf-8")
    response.headers["Location"] = target
    return response
