"""The C part of the engine's hot path: the files of checker/hot/ (one job each, one shared
header), built as the one extension `checker._hot`. It is optional: without a compiler the
package installs and runs on its pure-Python code (the same results, slower)."""

from glob import glob

from setuptools import Extension, setup

# Every C file of checker/hot/ (scripts/sanitize.sh builds the same files, and the Makefile's
# install rule depends on them).
SOURCES = sorted(glob("checker/hot/*.c"))

setup(
    ext_modules=[Extension("checker._hot", SOURCES, depends=["checker/hot/hot.h"], optional=True)]
)
