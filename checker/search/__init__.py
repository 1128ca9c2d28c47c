"""The search every engine shares: a breadth-first search level by level, whatever computes
the levels and wherever the states live (checker.local, checker.spark).

- `options`: what a search is asked (deadlocks, bounds, workers, a witness);
- `expansion`: the successors of a batch of states, deduplicated, encoded and checked (the
  Expander), and the engine's view of its reply (Expansion);
- `admission`: which candidates are new, against a visited set, and where a one-state-at-a-time
  search would stop;
- `levels`: the level loop, its level starts, the depth bound and the checkpoint counts;
- `observers`: what watches the search as it goes (recording the behaviour graph);
- `outcome`: how a search ends (Stop, Failed) and the result it makes.

Nothing here imports an engine.
"""
