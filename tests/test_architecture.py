"""docs/architecture.md stays true: the modules it names exist, its import rules hold (read from
every module's imports), and no import cycle runs through mc's modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

CHECKER = ROOT / "checker"


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in CHECKER.rglob("*.py")}


def imports(name: str) -> set[str]:
    """The mc modules `name` imports (anywhere in it, not only at the top; a name imported
    from a package counts as its submodule when it is one, else as the package)."""
    tree = ast.parse(MODULES[name].read_text())
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES or full == "checker._hot" else base)
    return {m for m in found if m.startswith("checker")} - {name}


def test_the_modules_the_page_names_exist():
    page = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:checker|specs|tests)/[\w/]+(?:\.py|\.c|/))`", page))
    assert len(named) > 30
    for path in named:
        assert (ROOT / path).exists(), path


def test_nothing_under_search_imports_an_engine():
    for name in MODULES:
        if name.startswith("checker.search"):
            engines = {m for m in imports(name) if m.startswith(("checker.local", "checker.spark"))}
            assert not engines, (name, engines)


def test_liveness_reports_and_testing_do_not_import_the_local_engine():
    for name in MODULES:
        if name in ("checker.liveness", "checker.testing") or name.startswith("checker.reports"):
            local = {m for m in imports(name) if m.startswith("checker.local")}
            assert not local, (name, local)


def test_only_the_fast_module_imports_the_c_hot_path():
    importers = {name for name in MODULES if "checker._hot" in imports(name)}
    assert importers == {"checker.values.fast"}


def test_only_the_cli_knows_click():
    for name, path in MODULES.items():
        uses = re.search(r"^\s*(import click|from click)", path.read_text(), re.MULTILINE)
        assert (uses is not None) == (name == "checker.cli"), name


def test_no_import_cycle():
    graph = {name: {m for m in imports(name) if m in MODULES} for name in MODULES}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError(" -> ".join([*path[path.index(name) :], name]))
        if name in done:
            return
        for other in sorted(graph[name]):
            # A package's __init__ runs before its modules; importing a module from it is no cycle.
            if not other.startswith(name + "."):
                visit(other, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
