"""Regenerate the ablation tables in docs/specs.md: each block between

    <!-- mc ablate SPEC [ARGS...] -->
    ...
    <!-- /mc ablate -->

is replaced by what `mc ablate SPEC ARGS --markdown` writes. tests/specs/test_ablation.py
re-runs the small ones and fails when a block is out of date.

    .venv/bin/python scripts/ablation_docs.py [--only SUBSTRING] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "specs.md"
BLOCK = re.compile(r"(<!-- (mc ablate [^\n]*?) -->\n)(.*?)(<!-- /mc ablate -->)", re.DOTALL)


def blocks(text: str) -> list[str]:
    """The command lines of the blocks, in order."""
    return [m.group(2) for m in BLOCK.finditer(text)]


def generate(command: str, workers: int) -> str:
    """What `mc ablate ... --markdown` writes for the block's command line."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "table.md")
        args = shlex.split(command)[2:] + ["--markdown", out, "--progress", "0"]
        args += ["--workers", str(workers)]
        subprocess.run(
            [sys.executable, "-m", "checker", "ablate", *args],
            cwd=ROOT,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        return Path(out).read_text()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only the blocks whose command has this")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    options = parser.parse_args()
    text = DOCS.read_text()

    def replace(match: re.Match[str]) -> str:
        command = match.group(2)
        if options.only not in command:
            return match.group(0)
        print(command, file=sys.stderr)
        return match.group(1) + generate(command, options.workers) + match.group(4)

    DOCS.write_text(BLOCK.sub(replace, text))


if __name__ == "__main__":
    main()
