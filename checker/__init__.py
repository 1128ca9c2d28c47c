"""mc: an explicit-state model checker for protocol specs written in Python.

The spec-writing API is re-exported here: `from checker import Spec, Record, action, ...`.
"""

import os

# numpy's OpenBLAS starts a thread per core that spins for a while: about 0.1 CPU s of every
# `mc` run (measured on `mc check` of a trivial spec), taken from the other cores' work. mc
# does no linear algebra. Set before any module of mc imports numpy; a value given stays.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from checker.declarations import (
    action,
    action_constraint,
    all_rules,
    always_eventually,
    always_eventually_leads_to,
    assume,
    constant,
    constraint,
    eventually,
    invariant,
    leads_to,
    on,
    reachable,
    refines,
    rule,
    step_property,
    terminal,
)
from checker.spec import Spec
from checker.values.encoding import canonical_order
from checker.values.every import every
from checker.values.record import Record, State, choose, put, update, without

__version__ = "0.1.0"

__all__ = [
    "Record",
    "Spec",
    "State",
    "action",
    "action_constraint",
    "all_rules",
    "always_eventually",
    "always_eventually_leads_to",
    "assume",
    "canonical_order",
    "choose",
    "constant",
    "constraint",
    "eventually",
    "every",
    "invariant",
    "leads_to",
    "on",
    "put",
    "reachable",
    "refines",
    "rule",
    "step_property",
    "terminal",
    "update",
    "without",
]
