"""The corpus of tlaplus/Examples models (specs/examples/corpus/, docs/corpus.md): each model
at a reduced constant gives TLC's exact counts, and the translations stay as reviewed.

Every count below is TLC's, from a run made for this test (never mc's own):

    java -cp tla2tools.jar:CommunityModules.jar tlc2.TLC -workers 1 -config X.cfg X.tla

with TLC2 Version 2.20 (rev: 5b8488d), /work/shared/peers/tla2tools.jar, in a copy of the
model's folder (Bakery also needs a TLAPS.tla that defines the proof names, as TLC ignores
proofs). Each case's cfg is the model's own cfg with the constants shown changed; every other
line (SPECIFICATION, INVARIANTS, PROPERTY, CONSTRAINT, SYMMETRY, CHECK_DEADLOCK) as shipped.
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

CORPUS = SPECS / "examples" / "corpus"

# (file, mc constants, TLC's deadlock check, the cfg the TLC run used,
#  TLC's distinct states, states generated, depth)
REDUCED = [
    pytest.param(
        "readers_writers.py",
        {"NumActors": 2},
        True,
        "ReadersWriters.tla, MC.cfg with NumActors = 2 (PROPERTY Liveness checked)",
        390,
        935,
        9,
        id="ReadersWriters",
    ),
    pytest.param(
        "fast_paxos.py",
        {
            "replicas": 3,
            "values": 2,
            "max_ballot": 3,
            "fast_ballots": "1,3",
            "quorum": 2,
            "fast_quorum": 3,
        },
        True,
        "FastPaxos.tla, FastPaxos.cfg with Replicas = {r1, r2, r3}, Values = {v1, v2},"
        " Ballots = {0, 1, 2, 3}, FastBallots = {1, 3}, Quorums = {{r1, r2}, {r1, r3}, {r2, r3}},"
        " FastQuorums = {{r1, r2, r3}} (SYMMETRY and PROPERTY PaxosConsistency kept)",
        136,
        868,
        14,
        id="SimplifiedFastPaxos",
    ),
    pytest.param(
        "fast_paxos.py",
        {
            "replicas": 3,
            "values": 2,
            "max_ballot": 2,
            "fast_ballots": "1",
            "quorum": 2,
            "fast_quorum": 3,
        },
        True,
        "FastPaxos.tla, FastPaxos.cfg as above with Ballots = {0, 1, 2}, FastBallots = {1}",
        17,
        86,
        10,
        id="SimplifiedFastPaxos-1fast",
    ),
    pytest.param(
        "token_ring.py",
        {"N": 4, "M": 4},
        False,
        "TokenRing.tla, TokenRing.cfg with N = 4, M = 4",
        256,
        896,
        1,
        id="ewd426",
    ),
    pytest.param(
        "disruptor.py",
        {"MaxPublished": 4, "readers": 2, "Size": 2},
        False,
        "Disruptor_MPMC.tla, Disruptor_MPMC.cfg with MaxPublished = 4, Readers = {r1, r2},"
        " Size = 2",
        645,
        1_525,
        25,
        id="Disruptor",
    ),
    pytest.param(
        "slush.py",
        {"nodes": 2, "SlushIterationCount": 2, "SampleSetSize": 1, "PickFlipThreshold": 1},
        True,
        "Slush.tla, SlushSmall.cfg with Node = {n1, n2}, SlushLoopProcess = {l1, l2},"
        " SlushQueryProcess = {q1, q2}, HostMapping = {{n1, l1, q1}, {n2, l2, q2}},"
        " SlushIterationCount = 2, SampleSetSize = 1, PickFlipThreshold = 1",
        5_960,
        22_945,
        38,
        id="SlushProtocol",
    ),
    pytest.param(
        "ewd998_pcal.py",
        {"N": 2},
        True,
        "EWD998PCal.tla, EWD998PCal.cfg with N = 2 (PROPERTIES EWD998Spec checked)",
        2_360,
        13_840,
        24,
        id="ewd998",
    ),
    pytest.param(
        "btree.py",
        {"vals": "x"},
        True,
        "btree.tla, btree.cfg with Vals = {x}",
        4_455,
        22_243,
        38,
        id="btree",
    ),
    pytest.param(
        "btree.py",
        {"vals": "x,y", "MaxNode": 6, "MaxKey": 3},
        True,
        "btree.tla, btree.cfg with Vals = {x, y}, MaxNode = 6, MaxKey = 3",
        5_655,
        28_812,
        24,
        id="btree-2vals",
    ),
    pytest.param(
        "bakery.py",
        {"N": 1, "MaxNat": 3},
        False,
        "MCBakery.tla, MCBakery.cfg with N = 1, MaxNat = 3 (N = 2 needs MaxNat >= 2: the"
        " full cfg)",
        376,
        1_264,
        1,
        id="Bakery-Boulangerie",
    ),
]


@pytest.mark.parametrize(
    ("spec", "constants", "deadlock", "cfg", "distinct", "generated", "depth"), REDUCED
)
def test_reduced_counts_equal_tlc(spec, constants, deadlock, cfg, distinct, generated, depth):
    tlc = (distinct, generated, depth)
    assert_counts_equal_tlc(CORPUS / spec, cfg, tlc, deadlock=deadlock, **constants)


def test_the_properties_of_the_cfgs_are_checked():
    """PROPERTY Liveness (ReadersWriters), PaxosConsistency and EWD998Spec are checked: TLC
    checked them on the runs above, and they hold there."""
    rw = check(CORPUS / "readers_writers.py", NumActors=2)
    assert sorted(rw.properties) == [
        "Liveness_reads(actor=1)",
        "Liveness_reads(actor=2)",
        "Liveness_stops_reading(actor=1)",
        "Liveness_stops_reading(actor=2)",
        "Liveness_stops_writing(actor=1)",
        "Liveness_stops_writing(actor=2)",
        "Liveness_writes(actor=1)",
        "Liveness_writes(actor=2)",
    ]
    ewd = check(CORPUS / "ewd998_pcal.py", N=2)
    assert list(ewd.step_properties) == ["EWD998Spec"]
    paxos = check(CORPUS / "fast_paxos.py", replicas=3, values=2, max_ballot=2, fast_ballots="1")
    assert list(paxos.step_properties) == ["PaxosConsistency"]


def test_the_refinement_is_not_vacuous(tmp_path):
    """EWD998PCal's refinement fails under a wrong mapping: with no message ever pending, a
    node's send raises its counter and no step of EWD998 does that alone."""
    spec = tmp_path / "broken_mapping.py"
    spec.write_text(
        "from checker import Record\n"
        "from specs.examples.corpus.ewd998_pcal import EWD998PCal\n\n\n"
        "class NothingPending(EWD998PCal):\n"
        "    def ewd998(self, s):\n"
        "        a = super().ewd998(s)\n"
        "        return a.replace(pending=(0,) * self.N)\n"
    )
    result = check(spec, N=2)
    assert (result.verdict, result.step_property) == ("violation", "EWD998Spec")
    assert [step.action for step in result.trace[1:]] == ["send"]


# sha256 of each translation as reviewed against its TLA+ (docs/corpus.md): a translation
# changes only when an API idiom is applied to all of them, and these hashes with it.
HASHES = {
    "__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "bakery.py": "d148281a64f0fa82f77bdfde3115796bef292b696f887672c0a8bf281a3abecc",
    "btree.py": "30da5863b79e7fa9f0f3671ee5bb8f0510d332c923dc88c2dc3169b38cd3f6af",
    "disruptor.py": "3b45e38ee7f80a481aa860bd2cf9dcd67812be07b3b6195aec7092fffe78e2da",
    "ewd998.py": "a583c42f589f620177676babe9c72714658d7aa3315026ef8369de4a27d9cab3",
    "ewd998_pcal.py": "bd0b4fd71cee19de108aac4650d7409407ccdf191b4252649fcca7a7874cb49e",
    "fast_paxos.py": "ee645b628542e1c629e6b147de627941b4754c0213e3f3c8e61c56f551b104bc",
    "readers_writers.py": "61622a7a95863a91cd06e26e79f5177faf1f8ef78a03f67dd1b36aae78d6cc87",
    "slush.py": "5d624792a8c18592d3f834a9ce589dcddd097b7f5c58724863e120e2f46ffc42",
    "token_ring.py": "44a1c3305491f61835144fe38bffa58858a9025985354956cdb1371ad0eca195",
}


@pytest.mark.parametrize("name", sorted(HASHES))
def test_translations_are_pinned(name):
    assert_pinned(CORPUS, HASHES, name)


def test_every_translation_is_pinned():
    assert_every_translation_pinned(CORPUS, HASHES)
