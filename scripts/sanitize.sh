#!/usr/bin/env bash
# The C hot path (checker/hot/*.c, the files setup.py builds) under AddressSanitizer and
# UndefinedBehaviorSanitizer: build it with both into build/sanitize/, then run the tests that
# drive it hardest (records, encodings, kinds, the search with one and two workers, symmetry,
# random transition systems, every bundled spec) with that build loaded (MC_HOT_LIBRARY, see
# checker/values/fast.py). Any invalid memory access or undefined behaviour stops the run with
# the sanitizer's report.
# The test files run side by side (pytest-xdist), whose processes inherit the preloads.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
out=build/sanitize
mkdir -p "$out"
suffix=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
library="$out/_hot$suffix"
${CC:-gcc} -shared -fPIC -O1 -g -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  -I"$include" checker/hot/*.c -o "$library"
# Python itself is not built with the sanitizers: their runtimes are preloaded. Python's own
# allocations outlive the run by design, so leaks are not reported.
preload="$(${CC:-gcc} -print-file-name=libasan.so):$(${CC:-gcc} -print-file-name=libubsan.so)"
LD_PRELOAD="$preload" \
ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
MC_HOT_LIBRARY="$library" \
  "$PYTHON" -m pytest -q -p no:cacheprovider -n auto --dist loadfile \
    tests/checker/test_record.py tests/checker/test_encoding.py tests/checker/test_kinds.py \
    tests/checker/test_bfs.py tests/checker/test_workers.py tests/checker/test_symmetry.py \
    tests/checker/test_random_graphs.py tests/checker/test_guard.py tests/specs/test_bundled.py \
    tests/checker/test_incremental.py tests/checker/test_fast.py \
    "$@"
