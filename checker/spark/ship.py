"""mc's code to the executors, and what went wrong there in words a user can act on.

The executors need only the third-party packages mc depends on: `checker`, `invariants` and the
spec's own package travel in a zip (addPyFile on classic Spark, addArtifacts on Spark
Connect), and the spec's classes are also pickled by value with the tasks."""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from checker.model import Model
from checker.spark.session import is_connect

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


PACKAGES = "msgpack, xxhash, numpy and pyarrow"  # what the executors need besides mc's code
_FIX = (
    "mc ships its own code to the executors; their Python needs the packages mc depends on"
    f" ({PACKAGES}): ship a packed virtual environment (venv-pack or conda-pack) with"
    " --spark-conf spark.archives=env.tar.gz#env --spark-conf"
    " spark.pyspark.python=./env/bin/python, or point --spark-conf spark.pyspark.python at"
    " a Python that has them on every node"
)


def explain(exc: BaseException) -> str:
    """What went wrong in Spark, in one paragraph: for an error in a Python worker, the
    exception's last line (PySpark puts the worker's whole traceback in the message) and,
    for a module the executors lack or a Python they cannot run, how to fix it."""
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if "Cannot run program" in text:
        line = next(line for line in lines if "Cannot run program" in line)
        program = line.split("Cannot run program", 1)[1].split(":", 1)[0].strip(' "')
        return (
            f"the executors cannot run the Python {program!r} ({line.split(':', 2)[-1].strip()})."
            f" Set --spark-conf spark.pyspark.python to a Python that exists on every node;"
            f" {_FIX}"
        )
    if "Python worker" not in lines[0] and "PythonException" not in text:
        return lines[0]
    # The last line of the worker's traceback: "ModuleNotFoundError: No module named 'x'".
    errors = [line for line in lines if _exception_line(line)]
    last = errors[-1] if errors else lines[-1]
    if last.startswith(("ModuleNotFoundError", "ImportError")):
        module = last.split("named", 1)[1].strip(" '\"") if "named" in last else None
        what = f"the module {module!r}" if module else "a module"
        return f"a Python worker lacks {what} ({last}). {_FIX}"
    if "PYTHON_VERSION_MISMATCH" in text or "different version" in last:
        return f"{last}. Run the executors on the driver's Python version: {_FIX}"
    return f"a Python worker raised {last}"


def _exception_line(line: str) -> bool:
    """Whether a traceback line is an exception's "Name: message" line."""
    head = line.split(":", 1)[0].rsplit(".", 1)[-1]
    return (
        ":" in line
        and head.isidentifier()
        and head[0].isupper()
        and (head.endswith(("Error", "Exception", "Interrupt", "Exit")) or head == "Warning")
    )


def ship_by_value(model: Model) -> None:
    """Make the spec's classes travel inside the pickled tasks, exactly as loaded here: a spec
    is loaded from a file path (or defined in a test). Its whole top-level package goes by
    value (a spec may import sibling specs)."""
    from pyspark import cloudpickle

    top = _spec_package(model)
    module = sys.modules.get(top) if top else None
    if module is not None:
        cloudpickle.register_pickle_by_value(module)


def _spec_package(model: Model) -> str | None:
    """The top-level package (or module) of the spec's code, unless it is installed."""
    name = type(model.spec).__module__
    top = name.partition(".")[0]
    if name == "__main__" or top in SHIPPED or top in _installed():
        return None
    return top


@functools.cache
def _installed() -> frozenset[str]:
    """The top-level names of the installed distributions: read once per process, as listing
    them reads every distribution's file list (pyspark's alone is thousands of files), which
    took most of the driver's time on small specs when done for each check."""
    return frozenset(metadata.packages_distributions())


SHIPPED = ("checker", "invariants")  # mc's own packages, always shipped


def code_zip(model: Model) -> Path:
    """A zip of mc's code for the executors: `checker` and `invariants` (their .py files, and
    the compiled hot path, which checker.values.fast loads from the zip if it can, else the
    executors run its Python twins), and the spec's top-level package. Its name is the
    hash of its contents, so the same code is the same file.

    Each .py file has its bytecode for this Python beside it (`_bytecode`): zipimport compiles
    no source for a pyc it can use, and every new Python worker of an executor imports mc's
    code afresh. An executor on another Python finds the magic number wrong and compiles the
    source, which stays for it and for the tracebacks."""
    import hashlib
    import zipfile

    top = _spec_package(model)
    if top in _zips:  # the code this process runs: read once
        return _zips[top]
    files: list[tuple[str, Path]] = []

    def add(module: ModuleType) -> None:
        path = Path(module.__file__ or "")
        if not hasattr(module, "__path__"):  # a lone module
            files.append((path.name, path))
            return
        root = path.parent
        for file in sorted(root.rglob("*")):
            if "__pycache__" in file.parts or not file.is_file():
                continue
            compiled = any(file.name.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)
            if file.suffix == ".py" or compiled:
                files.append((file.relative_to(root.parent).as_posix(), file))

    for name in SHIPPED:
        add(importlib.import_module(name))
    if top and top in sys.modules and getattr(sys.modules[top], "__file__", None):
        add(sys.modules[top])
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER)  # the bytecode's Python
    contents = []
    for arcname, file in files:
        data = file.read_bytes()
        digest.update(arcname.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
        contents.append((arcname, data))
    target = Path(tempfile.gettempdir()) / f"mc-code-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for arcname, data in contents:
                archive.writestr(zipfile.ZipInfo(arcname, (1980, 1, 1, 0, 0, 0)), data)
                if arcname.endswith(".py"):
                    pyc = zipfile.ZipInfo(arcname + "c", (1980, 1, 1, 0, 0, 0))
                    archive.writestr(pyc, _bytecode(data, f"{target}/{arcname}"))
        os.replace(partial, target)
    _zips[top] = target
    return target


_zips: dict[str | None, Path] = {}  # the spec's package -> its zip


def _bytecode(source: bytes, filename: str) -> bytes:
    """`source` compiled by this Python, as a .pyc that zipimport loads without reading the
    source again (PEP 552: hash-based, unchecked; the source beside it in the zip is the one
    it was compiled from: the zip is named by the hash of the sources and of this magic number)."""
    code = compile(source, filename, "exec", dont_inherit=True)
    unchecked = (1).to_bytes(4, "little")  # flags: hash-based, source not checked
    hashed = importlib.util.source_hash(source)
    return importlib.util.MAGIC_NUMBER + unchecked + hashed + marshal.dumps(code)


_shipped: dict[int, set[str]] = {}  # id(session) -> the zips it was given


def ship_code(spark: SparkSession, model: Model) -> None:
    """Send mc's code and the spec's to the executors, which then need only the third-party
    packages (msgpack, xxhash, numpy, pyarrow): a zip added to the Python path of their
    Python workers, with addPyFile on classic Spark and addArtifacts on Spark Connect."""
    ship_by_value(model)
    path = str(code_zip(model))
    done = _shipped.setdefault(id(spark), set())
    if path in done:
        return
    if is_connect(spark):
        try:
            spark.addArtifacts(path, pyfile=True)
        except Exception as exc:  # the same zip, added by an earlier run in this session
            if "already exists" not in str(exc).lower():
                raise
    else:
        spark.sparkContext.addPyFile(path)
    done.add(path)
