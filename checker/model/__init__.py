"""The compiled spec at work: the `Model` the engines run (checker.model.core), made of parts it
holds, one job each:

- evaluation (`evaluation.py`): the spec's predicates on a state (constraints, invariants,
  reachability, final states), incrementally by read sets (`readsets.py`, `ReadSet`);
- identity (`identity.py`): what the search meets a state by, and its fingerprint (view,
  symmetry);
- expansion: one state's successors (`transitions.py`, the hot loop), and a batch of states
  expanded, deduplicated, encoded and fingerprinted (`expansion.py`: its `Batch`), with the
  `Context` the C hot path reads (`context.py`).

The parts hold the model as a `Bound` (`bound.py`: what they read of it), and `checked.py`
has what they share: spec code's results checked."""

from checker.model.context import Context
from checker.model.core import Model
from checker.model.expansion import ROOT, Batch, Successor, Successors
from checker.model.readsets import ReadSet

__all__ = ["ROOT", "Batch", "Context", "Model", "ReadSet", "Successor", "Successors"]
