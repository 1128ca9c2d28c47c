"""The report files `mc check` can write besides its text report, and how a run writes them.

Two kinds:
- run reports (--json, --junit, --sarif) cover every spec of a run; a multi-spec run writes
  one combined file (JSON: a list; JUnit: one testsuite per spec; SARIF: one run).
- trace outputs (--html, --dot, --svg, --png, --mermaid, --msc, --itf) show one result. In a
  multi-spec run, PATH is a pattern: `out/trace.html` gives `out/trace.kip903.html` per spec.
  The HTML report is written for every checked spec (it states the verdict); the others only
  when there is a trace to show, with a note on stderr otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields

from checker.errors import ConfigError
from checker.reports import dot, graphviz, html, itf, json_report, junit, mermaid, msc, sarif
from checker.reports.chart import result_chart
from checker.reports.graph import result_graph
from checker.reports.sarif import Checked
from checker.result import CheckResult

# (option, help) for each trace output, in --help order (the CLI declares them: checker.cli)
TRACE_OPTIONS = [
    ("html", "Write a self-contained HTML report: sequence chart, steps, states, graph."),
    ("dot", "Write the trace as a Graphviz DOT graph."),
    ("svg", "Write the trace graph as SVG (needs Graphviz's `dot`)."),
    ("png", "Write the trace graph as PNG (needs Graphviz's `dot`)."),
    ("mermaid", "Write the trace graph as a Mermaid flowchart (.md: in a ```mermaid block)."),
    ("msc", "Write the message-sequence chart: SVG, or Mermaid if PATH ends in .mmd or .md."),
    ("itf", "Write the trace in the Informal Trace Format (ITF JSON, Apalache/Quint)."),
]
RUN_OPTIONS = [
    ("junit", "Write JUnit XML: a test case per (spec, invariant), failures with the trace."),
    ("sarif", "Write SARIF 2.1.0: a result per violated invariant, at its definition."),
]


@dataclass
class Outputs:
    json_path: str | None = None
    junit_path: str | None = None
    sarif_path: str | None = None
    html_path: str | None = None
    dot_path: str | None = None
    svg_path: str | None = None
    png_path: str | None = None
    mermaid_path: str | None = None
    msc_path: str | None = None
    itf_path: str | None = None

    def requested(self) -> dict[str, str]:
        """Option name -> PATH for the options given."""
        return {
            f.name.removesuffix("_path"): getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name)
        }

    def validate(self, inputs: Sequence[str] = ()) -> None:
        """Fail before a long run, not after it: an empty path, unwritable places, Graphviz
        missing, two reports to one file, a report that would overwrite one of `inputs` (the
        spec files and folders, the checkpoint folder)."""
        for f in fields(self):
            if getattr(self, f.name) == "":
                name = f.name.removesuffix("_path")
                raise ConfigError(f"--{name} '': an empty path; give the file to write")
        requested = self.requested()
        for name, path in requested.items():
            check_writable(path, f"--{name}")
            refuse_input(path, f"--{name}", inputs)
        options = list(requested.items())
        for i, (name, path) in enumerate(options):
            for other, other_path in options[:i]:
                if same_file(path, other_path):
                    raise ConfigError(
                        f"--{other} {other_path} and --{name} {path}: the same file; each"
                        " report needs its own"
                    )
        for name in ("svg", "png"):
            if getattr(self, f"{name}_path"):
                graphviz.require_dot(f"--{name}")

    def refuse_modules(self) -> None:
        """After the specs are loaded and before the run: no report may overwrite a module
        they imported (the spec itself, a shared model, mc's own code)."""
        for name, path in self.requested().items():
            refuse_module(path, f"--{name}")

    def write(self, runs: Sequence[Checked], *, multi: bool) -> None:
        results = [c.result for c in runs]
        if self.json_path:
            with writing("--json", self.json_path) as target:
                if multi:
                    json_report.write_many(results, target)
                else:
                    assert isinstance(results[0], CheckResult)
                    json_report.write(results[0], target)
        if self.junit_path:
            with writing("--junit", self.junit_path) as target:
                junit.write(results, target)
        if self.sarif_path:
            with writing("--sarif", self.sarif_path) as target:
                sarif.write(runs, target)
        taken: set[str] = set()
        for result in results:
            if not isinstance(result, CheckResult):
                continue
            for name, _ in TRACE_OPTIONS:
                path = getattr(self, f"{name}_path")
                if not path:
                    continue
                target = per_spec_path(path, result.spec, taken) if multi else path
                if name != "html" and not result.trace:
                    sys.stderr.write(
                        f"mc: --{name}: {result.spec}: no trace ({result.verdict}), not written\n"
                    )
                    continue
                with writing(f"--{name}", target) as written:
                    write_trace_output(name, result, written)


@contextmanager
def writing(option: str, path: str) -> Iterator[str]:
    """`with writing("--json", PATH) as target`: write the report to `target`. A regular file
    is written under a temporary name in its folder and renamed over PATH once whole, so a
    full disk or an interrupt leaves the old file (or none), never a truncated one. A device
    (/dev/null, /dev/stdout) or a pipe (`--json >(jq .)`) is written in place; a named pipe
    that no program reads is refused rather than waited on. validate() cannot foresee every
    failure (a full disk, a folder removed during the run, a module the spec imported only
    while it ran): such a write is a clean error too (151), and a module is never overwritten."""
    refuse_module(path, option)
    pipe: int | None = None
    temp: str | None = None
    try:
        if _in_place(path):
            pipe = _open_pipe(path, option)
            yield path if pipe is None else f"/dev/fd/{pipe}"
            return
        folder, name = os.path.split(os.path.abspath(path))
        temp = os.path.join(folder, f".mc-{os.getpid()}-{name}")  # (its extension is PATH's)
        yield temp
        os.replace(temp, path)
        temp = None
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot write: {exc.strerror or exc}") from exc
    finally:
        if pipe is not None:
            os.close(pipe)
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _in_place(path: str) -> bool:
    """Whether PATH is written as it is: it exists and is no regular file (a device, a pipe)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _open_pipe(path: str, option: str) -> int | None:
    """A named pipe (or a pipe, as /dev/fd/N) opened for writing, if a program reads it
    (opening one that none reads would wait forever); None if PATH is no pipe."""
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise ConfigError(
                f"{option} {path}: a named pipe that no program reads: start its reader first"
            ) from None
        raise
    os.set_blocking(fd, True)
    return fd


def check_writable(path: str, option: str) -> None:
    """Like the CLI's check for --json, but without creating the file: a trace output that
    turns out to have nothing to show must not leave an empty file behind."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path}: is a folder")
    if not os.path.isdir(folder):
        raise ConfigError(f"{option} {path}: cannot write: no such folder {folder}")
    target = path if os.path.exists(path) else folder
    if not os.access(target, os.W_OK):
        raise ConfigError(f"{option} {path}: cannot write: permission denied")


def same_file(a: str, b: str) -> bool:
    """Whether paths `a` and `b` name one file (through links too), existing or not."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_input(path: str, option: str, inputs: Sequence[str]) -> None:
    """A report path must not be an input of the run: a spec file, a checkpoint file, or a
    `.py` file in a folder of specs (the next run would read the report as a spec)."""
    target = os.path.realpath(path)
    for given in inputs:
        if same_file(path, given):
            raise ConfigError(f"{option} {path}: it is an input of this run; it would be lost")
        folder = os.path.realpath(given)
        if target.endswith(".py") and os.path.isdir(folder) and target.startswith(folder + os.sep):
            raise ConfigError(
                f"{option} {path}: a .py file in {given}, a folder of specs this run checks;"
                " write the report elsewhere"
            )


def refuse_module(path: str, option: str) -> None:
    """A report path must not be the file of a loaded module (the spec, what it imports)."""
    if not os.path.exists(path):
        return
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and same_file(path, file):
            raise ConfigError(
                f"{option} {path}: it is the source of the module {module.__name__}, which"
                " this run loaded; it would be lost"
            )


def per_spec_path(path: str, spec: str, taken: set[str]) -> str:
    """`out/trace.html` for spec `specs/kip903.py` -> `out/trace.kip903.html` (unique)."""
    base, ext = os.path.splitext(path)
    stem = os.path.splitext(os.path.basename(spec))[0]
    candidate, k = f"{base}.{stem}{ext}", 2
    while candidate in taken:
        candidate, k = f"{base}.{stem}-{k}{ext}", k + 1
    taken.add(candidate)
    return candidate


def write_trace_output(name: str, result: CheckResult, path: str) -> None:
    if name == "html":
        html.write(result, path)
    elif name == "itf":
        itf.write(result, path)
    elif name == "msc":
        chart = result_chart(result)
        if path.endswith((".mmd", ".md")):
            mermaid.write(mermaid.sequence_diagram(chart), path)
        else:
            msc.write(chart, path)
    else:
        g = result_graph(result)
        if name == "dot":
            dot.write(g, path, result.spec_name)
        elif name == "mermaid":
            mermaid.write(mermaid.flowchart(g), path)
        else:
            graphviz.render(dot.to_dot(g, result.spec_name), name, path)
