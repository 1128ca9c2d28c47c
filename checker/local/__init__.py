"""The local engine: a breadth-first search on this machine, levels expanded by worker
processes. `bfs` runs the search; `workers` expands states (the function every engine
shares); `visited` holds the fingerprints and parent links; `frontier` the states of a level."""
