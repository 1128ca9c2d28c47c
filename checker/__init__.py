"""mc: an explicit-state model checker for protocol specs written in Python.

The spec-writing API is re-exported here: `from checker import Spec, Record, action, ...`.
"""

from checker.spec import (
    Spec,
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
from checker.values.encoding import canonical_order
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
