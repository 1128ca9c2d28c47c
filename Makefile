# `make check` and `make test` set everything up on a fresh machine (see README).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test-tools check test lint bench clean

$(STAMP): pyproject.toml scripts/ensure-java.sh
	bash scripts/ensure-java.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Graphviz (--svg/--png) and Chromium (the HTML report's browser test); `make check` needs neither.
test-tools:
	bash scripts/ensure-test-tools.sh

check: install
	$(BIN)/mc check specs/kip903.py

test: install test-tools
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .

# Both tables: the bundled specs, then local vs Spark (local[2]). BENCH_ARGS=--large adds a
# ~1.7M-state run; --no-spark skips the second table.
bench: install
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache
