"""The local engine: the breadth-first search of checker.search on this machine. `bfs` cuts
levels into parts and admits their new states; `workers` runs the search's expanders in this
process or in forked ones; `visited` holds the fingerprints and parent links; `frontier` the
states of a level."""
