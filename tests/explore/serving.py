"""`mc explore`'s server on a thread of the test process, for the tests that talk to it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from checker.explore.navigate import Navigator
from checker.explore.server import App, Meta, start


@contextmanager
def serving(navigator: Navigator, meta: Meta) -> Iterator[App]:
    """The app serving `navigator` on 127.0.0.1 while the block runs, then stopped."""
    app, httpd = start(navigator, meta)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield app
    finally:
        app.close()
        httpd.shutdown()
        httpd.server_close()
