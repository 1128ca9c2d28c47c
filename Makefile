# `make check` and `make test` set everything up on a fresh machine (see README).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test-tools check test lint bench compare-tlc clean

$(STAMP): pyproject.toml setup.py checker/_hot.c scripts/ensure-java.sh
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
	$(BIN)/mc check specs/kip903.py --strict

# The suite runs on the C hot path (checker._hot), then again on the pure-Python fallback
# (without the Spark tests, whose engine shares the same code).
test: install test-tools
	$(BIN)/ruff check .
	$(BIN)/pytest
	MC_PURE_PYTHON=1 $(BIN)/pytest -q --ignore=tests/checker/test_spark_engine.py

lint: install
	$(BIN)/ruff check .

# Both tables: the bundled specs, then local vs Spark (local[2]). BENCH_ARGS=--large adds a
# ~1.7M-state run; --no-spark skips the second table.
bench: install
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

# TLC (java, tla2tools.jar) on Vanlightly's TLA+ models against mc on specs/kraft.py's family:
# writes docs/tlc-comparison.md (a few minutes; the tests do not need TLC).
compare-tlc: install
	$(BIN)/python scripts/compare_tlc.py

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache
