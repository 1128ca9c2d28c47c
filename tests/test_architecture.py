"""docs/architecture.md stays true: the modules it names exist, and its layers are those of the
import-linter contract that `make test` checks the imports against (`lint-imports`,
`[tool.importlinter]` in pyproject.toml): the same parts, in the same order, each with the same
modules. The imports themselves are the contract's to check, not this file's."""

from __future__ import annotations

import ast
import re
import tomllib

from tests.conftest import ROOT

PAGE = (ROOT / "docs" / "architecture.md").read_text()


def _contract(contract_id: str) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == contract_id]
    return contract


def _layer_modules(layer: str) -> set[str]:
    """The module names of a layer of the contract: `a : b` or `a | b`."""
    return {name.strip() for name in re.split(r"[:|]", layer)}


def _section(title: str) -> str:
    start = PAGE.index(f"## {title}\n")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end != -1 else None]


def test_the_modules_the_page_names_exist():
    named = set(re.findall(r"`((?:checker|specs|tests)/[\w/]+(?:\.py|\.c|/))`", PAGE))
    assert len(named) > 30
    for path in named:
        assert (ROOT / path).exists(), path


def test_the_page_draws_the_layers_of_the_contract():
    """The picture has one row a layer of the contract, top to bottom, with its modules, and
    one paragraph a layer that names them (`checker/name.py` or `checker/name/`) in brackets
    after its title."""
    layers = [_layer_modules(layer) for layer in _contract("layers")["layers"]]
    section = _section("The layers")
    picture = section.split("```")[1].strip("\n").splitlines()
    rows = [line for line in picture if line.strip() and line.strip() != "↓"]
    drawn = []
    for row in rows:
        names, _, _ = row.strip().partition("   ")  # the names, then a caption
        drawn.append(set(re.findall(r"[\w_]+", names)))
    assert drawn == layers
    separated = [("|" in row.partition("   ")[0]) for row in rows]
    assert separated == ["|" in layer for layer in _contract("layers")["layers"]]
    paragraphs = re.findall(r"^\*\*[^*]+\*\* \(([^)]*)\)", section, re.MULTILINE)
    named = [set(re.findall(r"`checker/(\w+)(?:\.py|/)`", p)) for p in paragraphs]
    assert named == layers


def test_the_page_orders_the_search_core_as_the_contract_does():
    layers = [_layer_modules(layer) for layer in _contract("search-core")["layers"]]
    rank = {module: i for i, layer in enumerate(layers) for module in layer}
    core = _section("The layers")
    core = core[core.index("**The search core**") :]
    core = core[: core.index("\n\n")]
    named = list(dict.fromkeys(m for m in re.findall(r"`(\w+)\.py`", core) if m in rank))
    assert set(named) == set(rank)
    assert [rank[m] for m in named] == sorted(rank[m] for m in named)


def test_every_module_of_checker_has_a_layer():
    """The contract is exhaustive (import-linter fails on a module it does not list): this says
    so before `lint-imports` runs, naming the module."""
    listed = set().union(*(_layer_modules(layer) for layer in _contract("layers")["layers"]))
    children = {
        p.stem if p.suffix == ".py" else p.name
        for p in (ROOT / "checker").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert children == listed


def test_only_the_fast_module_loads_the_c_extension():
    """import-linter does not see C extensions, so this one import is checked here: no module
    but checker/values/fast.py names `checker._hot` in an import."""
    pattern = re.compile(r"(import|from)\s+checker(\._hot|\s+import\s+_hot)\b|[\"']checker\._hot")
    loaders = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "checker").rglob("*.py")
        if pattern.search(p.read_text())
    }
    assert loaders == {"checker/values/fast.py"}


def test_no_file_of_checker_is_over_700_lines_and_no_class_over_300():
    """Small modules with one job (issue 47's targets): no Python module or C file under
    checker/ is over 700 lines, no class over 300."""
    files = [*(ROOT / "checker").rglob("*.py"), *(ROOT / "checker").rglob("*.c")]
    lines = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in files}
    classes = {
        f"{p.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}": (
            node.end_lineno - node.lineno + 1
        )
        for p in files
        if p.suffix == ".py"
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef)
    }
    assert len(lines) > 100 and len(classes) > 100
    assert {name: n for name, n in lines.items() if n > 700} == {}
    assert {name: n for name, n in classes.items() if n > 300} == {}
