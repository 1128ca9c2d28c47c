"""Small helpers over logs shared by the Kafka models (a log is a tuple of record epochs)."""

from __future__ import annotations


def common_prefix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """The length of the longest common prefix: where a follower's log diverges."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
