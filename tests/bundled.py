"""The bundled specs with small constants, for tests that run every spec (e.g. engine
equivalence). Each entry: (path relative to the repo, constants as -D text, expected verdict,
expected distinct states when the verdict is "ok", else None). The quorum specs declare their
voters symmetric: their counts are with symmetry reduction, as `mc check` runs them."""

from __future__ import annotations

BUNDLED: list[tuple[str, dict[str, str], str, int | None]] = [
    ("specs/examples/die_hard.py", {}, "violation", None),
    ("specs/examples/replicated_log.py", {}, "ok", 78),
    ("specs/light/kip841.py", {"max_unclean_shutdowns": "0"}, "ok", 621),
    ("specs/light/kip841.py", {"max_records": "1", "fixed": "false"}, "violation", None),
    ("specs/light/kip903.py", {"max_unclean_shutdowns": "0"}, "ok", 781),
    ("specs/light/kip903.py", {"max_unclean_shutdowns": "0", "fixed": "false"}, "violation", None),
    ("specs/light/kip966.py", {"max_controlled_shutdowns": "0"}, "ok", 990),
    ("specs/light/kip966.py", {"max_records": "1", "fixed": "false"}, "violation", None),
    ("specs/kraft.py", {}, "ok", 1_368),
    ("specs/kip841.py", {}, "ok", 1_260),
    ("specs/kip841.py", {"fixed": "false"}, "violation", None),
    ("specs/kip903.py", {}, "ok", 945),
    ("specs/kip903.py", {"fixed": "false"}, "violation", None),
    ("specs/kip966.py", {}, "ok", 1_215),
    ("specs/kip966.py", {"fixed": "false", "data_loss_shutdown_limit": "1"}, "violation", None),
    ("specs/kip996.py", {"max_disruptive_election_triggers": "0", "values": "1"}, "ok", 26),
    (
        "specs/kip996.py",
        {
            "fixed": "false",
            "init_cluster_size": "3",
            "min_cluster_size": "3",
            "max_cluster_size": "3",
            "max_spawned_servers": "3",
            "hosts": "3",
        },
        "violation",
        None,
    ),
    ("specs/light/kip996.py", {"max_epoch": "2", "max_records": "0"}, "ok", 1_068),  # 2,071 without
    ("specs/light/kip996.py", {"fixed": "false"}, "violation", None),
    ("specs/light/kip996_read.py", {"max_isolations": "0"}, "ok", 31),  # 54 without
    ("specs/light/kip996_read.py", {"max_isolations": "0", "fixed": "false"}, "violation", None),
    ("specs/kip1023.py", {"max_records": "1"}, "ok", 886),
    ("specs/kip1023.py", {"max_records": "1", "fixed": "false"}, "violation", None),
]
