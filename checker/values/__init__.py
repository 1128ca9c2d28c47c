"""State values: what a state is made of (`record`), its canonical bytes and fingerprint
(`encoding`), the kinds of its variables (`kinds`), how values are shown (`display`), and
the seam to the C hot path that runs the hot parts of all of them (`fast`).

Spec authors import Record, put and the rest from `checker`; how values are shown is here:
`from checker.values import show`.
"""

from checker.values.display import count, show, to_json

__all__ = ["count", "show", "to_json"]
