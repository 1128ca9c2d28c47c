"""The light model of KRaft replication, retired as what specs/kip841.py, kip903.py and
kip966.py check (see docs/light-specs.md); kept for its faults and as the engine tests' fixture."""
