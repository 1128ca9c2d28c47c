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
