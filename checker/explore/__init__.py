"""`mc explore`: walk a spec's states in the browser. `navigate` walks paths and lists what can
happen next, `find` searches for a state with the local engine, `page` draws a state with the
HTML report's renderers, `server` serves the page (Werkzeug, the `mc[explore]` extra),
`sandbox` runs the spec's code for it in child processes under time and memory limits, and
`notebook` renders results and traces in Jupyter. `run` is what the command line calls."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from checker.errors import ConfigError
from checker.explore import server
from checker.explore.navigate import Navigator, Path
from checker.loader import load_model
from checker.values import to_json


def run(
    spec: str,
    constants: Mapping[str, str],
    *,
    trace: str | None = None,
    port: int = 0,
    open_browser: bool = False,
    max_depth: int | None = None,
    command: str = "",
    echo: Callable[[str], None] = print,
) -> int:
    """Load the spec, read --trace, and serve the explorer until Ctrl-C; the exit code."""
    server.require()  # before the spec loads: a missing library is said at once
    model = load_model(spec, constants)
    model.initial_states()  # an init that raises is said now (exit 75), not on the page
    navigator = Navigator(model, max_depth)
    meta = server.Meta(command)
    if trace is not None:
        meta.trace, meta.trace_label = read_trace(navigator, trace)
    server.serve(navigator, meta, port, open_browser, echo)
    return 0


def read_trace(navigator: Navigator, file: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path of the trace in an `mc check --json` report, and what the trace shows;
    ConfigError (exit 151) if the file is no such report of this spec and its constants."""
    where = f"--trace {os.fspath(file)}"
    try:
        with open(file, encoding="utf-8") as handle:
            doc = json.load(handle)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: not a JSON file ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{where}: not an mc --json report (nested too deep)") from None
    try:
        return _trace_of(navigator, doc, where, os.path.basename(file))
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
        # a JSON file of another shape: {"constants": 5}, a step that is a number, ...
        raise ConfigError(
            f"{where}: not an mc --json report ({type(exc).__name__}: {exc})"
        ) from None


def _trace_of(navigator: Navigator, doc: Any, where: str, name: str) -> tuple[Path, str]:
    model = navigator.model
    if isinstance(doc, list):  # a multi-spec run: the result of this spec
        mine = [d for d in doc if isinstance(d, dict) and d.get("spec_name") == model.name]
        if not mine:
            names = ", ".join(str(d.get("spec_name")) for d in doc if isinstance(d, dict))
            raise ConfigError(f"{where}: no result of {model.name} in it (results: {names})")
        doc = mine[0]
    if not isinstance(doc, dict) or "spec_name" not in doc or "trace" not in doc:
        raise ConfigError(f"{where}: not an mc --json report (no spec_name and trace)")
    if doc["spec_name"] != model.name:
        raise ConfigError(f"{where}: a result of {doc['spec_name']}, not of {model.name}")
    ours = json.loads(json.dumps(to_json(dict(model.constants))))
    theirs = doc.get("constants") or {}
    if not isinstance(theirs, dict):
        raise ConfigError(f"{where}: not an mc --json report (its constants are {theirs!r})")
    differ = [
        f"{name}={_value(theirs.get(name))} there, {_value(value)} here"
        for name, value in ours.items()
        if name in theirs and theirs[name] != value
    ]
    if differ:
        raise ConfigError(
            f"{where}: a result with other constants ({'; '.join(differ)}): pass the same -D"
        )
    return navigator.path_of_json(doc, where), _label(doc, name)


def _label(doc: dict[str, Any], name: str) -> str:
    verdict = doc.get("verdict")
    if verdict == "violation" and doc.get("invariant"):
        what = f"invariant {doc['invariant']} is violated"
    elif verdict == "violation" and doc.get("property"):
        what = f"temporal property {doc['property']} is violated"
    elif doc.get("witness"):
        what = f"{doc['witness']} is reached"
    else:
        what = str(verdict)
    return f"{what} ({name}, {len(doc['trace'])} states)"


def _value(value: Any) -> str:
    return "absent" if value is None else json.dumps(value)
