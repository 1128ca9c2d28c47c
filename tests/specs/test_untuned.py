"""Models translated after the fast path was built (specs/examples/untuned/, docs/corpus.md):
nobody profiled them before they were measured, so they judge whether the fast path covers
the language or only the corpus. Each gives TLC's exact counts at a reduced constant.

Every count below is TLC's, from a run made for this test (never mc's own):

    java -jar tla2tools.jar -workers 1 -config X.cfg X.tla

with TLC2 Version 2.20 (rev: 5b8488d), in a copy of the model's folder of
github.com/tlaplus/Examples (SimpleRegular also needs a TLAPS.tla that defines the proof
names, as TLC ignores proofs). Each cfg is the model's own with the constant shown changed.
"""

from __future__ import annotations

import pytest

from checker.testing import check
from tests.conftest import SPECS
from tests.specs.translations import (
    assert_counts_equal_tlc,
    assert_every_translation_pinned,
    assert_pinned,
)

UNTUNED = SPECS / "examples" / "untuned"

# (file, mc constants, the cfg of the TLC run, TLC's distinct states, states generated, depth)
REDUCED = [
    pytest.param(
        "simple_regular.py", {"N": 4}, "SimpleRegular.cfg with N = 4", 526, 1396, 13,
        id="SimpleRegular-4",
    ),
    pytest.param(
        "simple_regular.py", {"N": 5}, "SimpleRegular.cfg with N = 5", 2524, 8297, 16,
        id="SimpleRegular-5",
    ),
    pytest.param(
        "coffee_can.py", {"MaxBeanCount": 100}, "CoffeeCan100Beans.cfg (as shipped)",
        5150, 20002, 1,
        id="CoffeeCan-100",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "constants", "cfg", "distinct", "generated", "depth"), REDUCED)
def test_reduced_counts_equal_tlc(spec, constants, cfg, distinct, generated, depth):
    assert_counts_equal_tlc(UNTUNED / spec, cfg, (distinct, generated, depth), **constants)


def test_the_coffee_cans_properties_are_checked():
    """The cfg's four PROPERTIES: two step properties, <>(ENABLED Termination), and the
    hypothesis as one leads-to per parity of the white beans."""
    result = check(UNTUNED / "coffee_can.py", MaxBeanCount=4)
    assert result.verdict == "ok"
    assert list(result.step_properties) == ["MonotonicDecrease", "LoopInvariant"]
    assert sorted(result.properties) == [
        "EventuallyTerminates",
        "TerminationHypothesisEven",
        "TerminationHypothesisOdd",
    ]


def test_a_wrong_hypothesis_fails(tmp_path):
    """The hypothesis is not vacuous: claiming that an even count of white beans ends in a
    white bean fails on the can that starts with one black bean and stays so."""
    spec = tmp_path / "swapped.py"
    spec.write_text(
        "from checker import leads_to\n"
        "from specs.examples.untuned.coffee_can import CoffeeCan\n\n\n"
        "class Swapped(CoffeeCan):\n"
        "    TerminationHypothesisEven = leads_to(CoffeeCan.even_white, CoffeeCan.one_white)\n"
    )
    result = check(spec, MaxBeanCount=4)
    assert (result.verdict, result.property) == ("violation", "TerminationHypothesisEven")
    assert [(step.state.can.black, step.state.can.white) for step in result.trace] == [(1, 0)]


# sha256 of each translation as first measured: like the corpus's, a translation changes only
# when an API idiom is applied to all of them (docs/corpus.md), and these hashes with it.
HASHES = {
    "__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "coffee_can.py": "1afc9c5369a9f21989d0ada6f1294b612d9decf89be825ffcb8acad905dfe7b7",
    "simple_regular.py": "2b1b5067e0b70bf6eafae963c7f50718fa4cc295b427c48a4a591ed25d74ebe2",
}


@pytest.mark.parametrize("name", sorted(HASHES))
def test_translations_are_pinned(name):
    assert_pinned(UNTUNED, HASHES, name)


def test_every_translation_is_pinned():
    assert_every_translation_pinned(UNTUNED, HASHES)
