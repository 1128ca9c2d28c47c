"""`python -m checker` is `mc`."""

from checker.cli import main

main()
