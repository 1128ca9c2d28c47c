"""The docs stay true: the guide's example is the bundled file, and README links resolve."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_the_guides_complete_example_is_the_bundled_spec():
    guide = (ROOT / "docs" / "writing-specs.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.DOTALL)
    assert len(blocks) == 1, "the guide has exactly one ```python block: the example"
    assert blocks[0] == (ROOT / "specs" / "examples" / "replicated_log.py").read_text()


def test_readme_starts_with_the_two_commands_and_its_links_resolve():
    readme = (ROOT / "README.md").read_text()
    head = "\n".join(readme.splitlines()[:8])
    assert "make check" in head and "make test" in head
    for target in re.findall(r"\]\(((?:docs|specs)/[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_explore_md_walks_kip966_as_the_engine_does_and_documents_every_option():
    from checker.cli import explore
    from checker.loader import load_model
    from checker.local import bfs
    from checker.reports.graph import describe_action

    doc = (ROOT / "docs" / "explore.md").read_text()
    walk = doc.split("<!-- kip966-steps")[1].split("\n\n")[0]
    steps = re.findall(r"^\d+\. `([^`]+)`", walk, flags=re.MULTILINE)
    constants = {"fixed": "false", "data_loss_shutdown_limit": "1"}
    model = load_model(ROOT / "specs" / "kip966.py", constants)
    result = bfs.check(model)
    assert result.invariant == "leader_completeness"
    assert steps == [describe_action(s.action, s.params) for s in result.trace[1:]]
    options = {opt for param in explore.params for opt in param.opts if opt.startswith("-")}
    assert options == {"-D", "--trace", "--port", "--open", "--max-depth"}
    usage = doc.split("```")[0]
    for option in options:
        assert f"[{option}" in usage, option


def test_explore_md_notebook_cell_shows_the_report(monkeypatch):
    monkeypatch.chdir(ROOT)  # the cell names the spec from the checkout's top
    doc = (ROOT / "docs" / "explore.md").read_text()
    (cell,) = re.findall(r"```python\n(.*?)```", doc, flags=re.DOTALL)
    *body, last = cell.strip().splitlines()
    names: dict = {}
    exec("\n".join(body), names)
    shown = eval(last, names)
    assert shown._repr_html_().startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;')
    assert shown.verdict == "violation"


def _anchors(path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    out = set()
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def test_the_links_between_the_docs_resolve():
    """Every relative link in README.md and docs/ names a file that exists and, with an
    anchor, a heading of it (the pages were split: the light models have their own)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            assert path.exists(), f"{page.name}: {target}"
            if anchor and path.suffix == ".md":
                assert anchor in _anchors(path), f"{page.name}: {target}"


def test_tla_translated_md_counts_are_mcs(mc, tmp_path):
    """Every mc command of docs/tla-translated.md's table gives the mc counts it lists, and
    the TLA+ modules it names are in docs/tla/."""
    import json

    doc = (ROOT / "docs" / "tla-translated.md").read_text()
    rows = re.findall(r"^\| (\S+\.cfg)[^|]* \| `mc check ([^`]+)` \|(.*)\|$", doc, re.MULTILINE)
    assert len(rows) == 7
    for cfg, command, cells in rows:
        assert (ROOT / "docs" / "tla" / cfg).exists(), cfg
        values = [c.strip() for c in cells.split("|")]
        generated, distinct, depth = int(values[1]), int(values[3]), int(values[5])
        verdict = values[7]
        report = tmp_path / "result.json"
        args = [str(ROOT / a) if a.startswith("specs/") else a for a in command.split()]
        run = mc("check", *args, "--json", report)
        result = json.loads(report.read_text())
        counts = (result["states_generated"], result["distinct_states"], result["depth"])
        assert counts == (generated, distinct, depth), command
        assert (run.code == 0) == (verdict == "ok"), command


def test_faults_md_counts_the_tests_of_each_family(tmp_path):
    """docs/faults.md's table has a row per family of `@pytest.mark.fault(...)`, each with the
    number of tests pytest collects for it and the files that hold them, and the fuzz test's
    numbers."""
    import json
    import os
    import subprocess
    import sys

    from tests.checker import test_fuzz_faults as fuzz

    doc = (ROOT / "docs" / "faults.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)` \| (\d+) \|(.*)\|$", doc, flags=re.MULTILINE)
    tagged = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if "mark.fault(" in path.read_text()
    )
    census = tmp_path / "census.json"
    collect = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-p", "tests.fault_census", *tagged],
        cwd=ROOT,
        env={**os.environ, "MC_FAULT_CENSUS": str(census)},
        capture_output=True,
        text=True,
    )
    assert collect.returncode == 0, collect.stdout + collect.stderr
    census = json.loads(census.read_text())
    assert {family: int(n) for family, n, _ in rows} == {f: c["tests"] for f, c in census.items()}
    for family, _, cells in rows:  # the last column names the files that hold its tests
        named = re.findall(r"`(test_\w+\.py)`", cells.split("|")[-1])
        assert sorted(named) == census[family]["files"], family
    (fuzz_cells,) = [cells for family, _, cells in rows if family == "fuzz"]
    said = {
        "random specs a run": fuzz.EXAMPLES,
        "faults": len(fuzz.FAULTS),
        "statements": len(fuzz.STATEMENTS),
        "places": len(fuzz.SITES),
        "bad returns": len(fuzz.RETURNS),
        "invariant answers": len(fuzz.VERDICTS),
        "kinds of nondeterminism": len(fuzz.NONDETERMINISM),
    }
    for words, number in said.items():
        assert f"{number} {words}" in fuzz_cells, words
