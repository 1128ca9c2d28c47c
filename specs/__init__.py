"""One module per KIP; `examples/` holds classic benchmarks."""
