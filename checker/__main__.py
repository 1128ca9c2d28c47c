"""`python -m checker` is `mc`."""

from checker.cli import entry

entry()
