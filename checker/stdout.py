"""Standard output that cannot take mc's report: a reader gone (`| head`, `| true`), a full disk
(`> /dev/full`), a descriptor closed (`>&-`). The command line ends such a run with 151 and says
why on standard error, never with a traceback or a blame on the spec (docs/errors.md)."""

from __future__ import annotations

import errno
import os
import sys

from checker.errors import ExitCode

# Errors of writing standard output: its reader went away (`| head`), a full disk, ...
_ERRORS = {
    errno.EPIPE: "its reader closed it (a pipe such as `| head` or `| true`)",
    errno.ENOSPC: "No space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
}


def failure(exc: BaseException | None) -> str | None:
    """What went wrong writing standard output, if `exc` (or what it was raised from) is that.
    click ends a command whose output pipe broke with SystemExit(1), its streams wrapped."""
    if isinstance(exc, SystemExit) and type(sys.stdout).__name__ == "_PacifyFlushWrapper":
        sys.stderr = sys.__stderr__
        return _ERRORS[errno.EPIPE]
    for error in (exc, getattr(exc, "__context__", None)):
        if isinstance(error, OSError) and error.errno in _ERRORS:
            return _ERRORS[error.errno]
    return None


def lost() -> bool:
    """Whether standard output cannot take the report: closed before mc started (None), closed
    by spec code, or a pipe whose reader went away. Later writes must not fail again when
    Python flushes it at exit."""
    out = sys.stdout
    if out is not None and not out.closed:
        try:
            out.flush()
            return False
        except OSError:  # the reader went away (EPIPE), or the descriptor was closed
            pass
    _drop()
    return True


def _drop() -> None:
    """For the writes still to come, and the flush at exit: nothing more to write."""
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (open as long as the process)


def failed(failure: str | None) -> int | None:
    """A write to standard output that failed (`failure`: why), said on stderr: 151."""
    if failure is None:
        return None
    _drop()
    _say(
        f"mc: error: standard output could not be written: {failure}; the report is cut short"
        " and the exit code is not the verdict's"
    )
    return int(ExitCode.CONFIG_ERROR)


def closed() -> int:
    _say(
        "mc: error: standard output is closed (by the shell with >&-, by its reader, or by spec"
        " code): the report cannot be written; the exit code is not the verdict's"
    )
    return int(ExitCode.CONFIG_ERROR)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
