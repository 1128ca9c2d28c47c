"""The C part of the engine's hot path (checker/_hot.c). It is optional: without a compiler
the package installs and runs on its pure-Python code (the same results, slower)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("checker._hot", ["checker/_hot.c"], optional=True)])
