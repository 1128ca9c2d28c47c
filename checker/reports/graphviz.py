"""`--svg PATH` and `--png PATH`: the DOT text rendered by Graphviz's `dot` program."""

from __future__ import annotations

import shutil
import subprocess

from checker.errors import ConfigError

INSTALL_HINT = "install Graphviz (Debian: apt-get install graphviz)"


def require_dot(option: str) -> str:
    """The path of `dot`, or a ConfigError (exit 151) naming the option that needs it."""
    found = shutil.which("dot")
    if found is None:
        raise ConfigError(f"{option} needs Graphviz's `dot` program on PATH: {INSTALL_HINT}")
    return found


def render(dot_text: str, fmt: str, path: str) -> None:
    """Run `dot -T<fmt>` on `dot_text` (fmt: "svg" or "png") and write what it prints to
    `path`: mc writes the file, so that a full disk is said as such (dot says "gvwrite_no_z
    problem 13")."""
    dot = require_dot(f"--{fmt}")
    proc = subprocess.run(
        [dot, f"-T{fmt}"],
        input=dot_text.encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise ConfigError(f"--{fmt} {path}: Graphviz's dot failed: {message}")
    with open(path, "wb") as out:
        out.write(proc.stdout)
