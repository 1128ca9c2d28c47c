# `make check` and `make test` set everything up on a fresh machine (see README).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev
# Apache Kafka's jars (kafka-lib, below): `make test` needs them.
KAFKA_LIB := scripts/kafka/lib/.stamp

.PHONY: install install-dev test-tools check test lint sanitize bench bench-cluster compare-tlc clean \
	kafka-lib validate-kafka validate-kafka-all

# mc alone: the local engine needs neither pyspark nor Java.
$(STAMP): pyproject.toml setup.py $(wildcard checker/hot/*.c checker/hot/*.h)
	@$(PYTHON) -c 'import sys; v = sys.version.split()[0]; sys.exit(sys.version_info < (3, 11)\
	 and f"mc needs Python 3.11+ ($(PYTHON) is {v}): make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

# With the test tools and the Spark extra (pyspark, which needs Java 17+).
$(DEV): $(STAMP) scripts/ensure-java.sh
	bash scripts/ensure-java.sh
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(DEV)

install: $(STAMP)

install-dev: $(DEV)

# Graphviz (--svg/--png) and Chromium (the browser tests: the HTML report, mc explore); `make check`
# needs neither.
test-tools:
	bash scripts/ensure-test-tools.sh

check: install
	$(BIN)/mc check specs/kip903.py --strict

# The suite runs on the C hot path (checker._hot), then again on the pure-Python fallback the
# tests that drive its Python twins (checker/values/fast.py): the engine's tests and every
# bundled spec. The rule: the twins' coverage (lines and branches of the modules that hold
# them, checker/values/{record,encoding,kinds}.py and checker/model.py, measured with
# coverage.py under MC_PURE_PYTHON=1) is that of all of tests/checker, tests/invariants and
# tests/specs/test_bundled.py. So not the Spark tests (the same code), the specs' and reports'
# own tests (the same on either path), nor those of the CLI, its reports, checkpoints,
# ablation, the testing helpers and the vacuity review, which reach no line or branch of the
# twins that the others do not (the fault fuzzer does: a domain that raises; and
# tests/checker/test_encoding.py has the large and deeply nested sets of the vacuity test's
# large specs).
NOT_PURE := spark_engine.py spark_cluster.py cli.py cli_reports.py checkpoint.py ablate.py \
	testing.py vacuity.py
# Test files run side by side, a process per CPU (pytest-xdist), each file in one process (its
# fixtures made once), but the long files of SPREAD in tests/conftest.py, whose tests are shared
# out one at a time (a Spark session in each process that runs a Spark engine test).
test: install-dev test-tools $(KAFKA_LIB)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache  # docs/architecture.md's layers: [tool.importlinter]
	$(BIN)/pytest -n auto --dist loadfile --durations=20
	MC_PURE_PYTHON=1 $(BIN)/pytest -q -n auto --dist loadfile tests/checker tests/invariants \
		tests/specs/test_bundled.py $(addprefix --ignore=tests/checker/test_,$(NOT_PURE))
	bash scripts/sanitize.sh

# The C hot path built with AddressSanitizer and UndefinedBehaviorSanitizer, under the tests that
# drive it hardest (scripts/sanitize.sh); `make test` ends with it.
sanitize: install-dev
	bash scripts/sanitize.sh

lint: install-dev
	$(BIN)/ruff check .

# Both tables: the bundled specs, then local vs Spark (local[2]). BENCH_ARGS=--large adds a
# ~1.7M-state run; --no-spark skips the second table. The corpus table (docs/corpus.md) runs
# too: against TLC with BENCH_ARGS="--tlc JAR"; --corpus-only runs it alone.
bench: install-dev
	$(BIN)/python scripts/bench.py --corpus $(BENCH_ARGS)

# The Spark engine's scaling on a cluster simulated here (as root): k one-core workers of QUOTA
# CPUs and a driver of DRIVER_QUOTA, each in its own cgroup and network namespace, against the
# local engine in a cgroup of k x QUOTA; writes bench/results/cluster.json (docs/scaling.md).
SPEC         ?= specs/examples/two_phase.py
CONSTANTS    ?= -D rm=7
WORKERS      ?= 1 2 4
QUOTA        ?= 0.35
DRIVER_QUOTA ?= 0.4
bench-cluster: install-dev
	$(BIN)/python scripts/bench_cluster.py $(SPEC) $(CONSTANTS) --workers $(WORKERS) \
		--quota $(QUOTA) --driver-quota $(DRIVER_QUOTA) $(BENCH_ARGS)

# TLC (java, tla2tools.jar) on Vanlightly's TLA+ models against mc on specs/kraft.py's family:
# writes docs/tlc-comparison.md (a few minutes; the tests do not need TLC).
compare-tlc: install-dev
	$(BIN)/python scripts/compare_tlc.py

# Apache Kafka 4.x from Maven Central (scripts/kafka/pom.xml) into scripts/kafka/lib/, git-ignored
# and kept between runs: fetched again only when the pom changes.
$(KAFKA_LIB): scripts/kafka/pom.xml scripts/kafka/fetch.sh
	bash scripts/kafka/fetch.sh

kafka-lib: $(KAFKA_LIB)

# A fault scenario of scripts/kafka/scenarios.py on a real three-controller, three-broker cluster:
# writes the active controller's metadata log to $(KAFKA_OUT)/$(SCENARIO).log (and .json beside).
# KAFKA_OUT=tests/fixtures/kafka rewrites the committed fixtures. MC_VALIDATE checks the log (it is
# given the log's path) and prints the verdict; its exit code is the target's (16: diverged).
SCENARIO ?= leader-kill
KAFKA_SEED ?= 1
KAFKA_DURATION ?= 120
KAFKA_OUT ?= build/kafka
MC_VALIDATE ?= $(BIN)/mc validate specs/kip966.py
KAFKA_SCENARIOS := leader-kill follower-kill controller-failover broker-fenced \
	controlled-shutdown rolling-restart elr-leader-last elr-member-elected last-isr-disk-wiped \
	delayed-alter-partition

validate-kafka: install-dev $(KAFKA_LIB)
	$(BIN)/python scripts/kafka/scenarios.py $(SCENARIO) --seed $(KAFKA_SEED) \
		--duration $(KAFKA_DURATION) --out $(KAFKA_OUT)/$(SCENARIO).log
	$(MC_VALIDATE) $(KAFKA_OUT)/$(SCENARIO).log

validate-kafka-all: install-dev $(KAFKA_LIB)
	status=0; for s in $(KAFKA_SCENARIOS); do $(MAKE) --no-print-directory validate-kafka \
		SCENARIO=$$s || status=$$?; done; exit $$status

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache
