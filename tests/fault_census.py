"""A pytest plugin (`-p tests.fault_census`) that counts the collected tests of each family of
faults and bad inputs (`@pytest.mark.fault("family")`) and notes the files that hold them; it
writes them, as JSON, to the file named by MC_FAULT_CENSUS: docs/faults.md's table is checked
against it (tests/test_docs.py)."""

from __future__ import annotations

import json
import os
from collections import defaultdict

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    tests: dict[str, int] = defaultdict(int)
    files: dict[str, set[str]] = defaultdict(set)
    for item in session.items:
        for mark in item.iter_markers("fault"):
            tests[mark.args[0]] += 1
            files[mark.args[0]].add(item.path.name)
    census = {f: {"tests": tests[f], "files": sorted(files[f])} for f in sorted(tests)}
    with open(os.environ["MC_FAULT_CENSUS"], "w") as out:
        json.dump(census, out)
