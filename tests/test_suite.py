"""How `make test` shares the tests out stays true to the test files (tests/conftest.py, SPREAD):
each long file it spreads exists, and each group holds every test of the fixture it is named
after, so that fixture is still made once."""

from __future__ import annotations

import ast

from tests.conftest import ROOT, SPREAD, work_unit


def arguments_of_tests(path: str) -> dict[str, set[str]]:
    """The test functions of a file, each with the names of its arguments."""
    tree = ast.parse((ROOT / path).read_text())
    return {
        node.name: {a.arg for a in node.args.args}
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def test_each_group_of_a_spread_file_holds_every_test_of_its_fixture():
    for path, groups in SPREAD.items():
        tests = arguments_of_tests(path)
        assert tests, path
        for group in set(groups.values()):
            named = {test for test, g in groups.items() if g == group}
            assert named == {test for test, args in tests.items() if group in args}, path


def test_a_test_goes_with_its_file_its_group_or_alone():
    assert work_unit("tests/checker/test_bfs.py::test_x[1]") == "tests/checker/test_bfs.py"
    engine = "tests/checker/test_spark_engine.py::test_bundled_specs_agree_with_the_local_engine[a]"
    assert work_unit(engine) == engine
    ablation = "tests/specs/test_ablation.py::test_the_docs_table_is_what_mc_ablate_writes[mc x]"
    assert work_unit(ablation) == "tests/specs/test_ablation.py::tables"
    row = "tests/specs/test_ablation.py::test_the_rows_of_a_large_table[mc x-rule]"
    assert work_unit(row) == row
