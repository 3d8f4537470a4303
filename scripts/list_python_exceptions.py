"""List the exception classes Python's standard library defines, with their ancestors: the data
scripts/gen_failure_lexicon.py reads (scripts/data/python_stdlib_exceptions.json).

    python scripts/list_python_exceptions.py > scripts/data/python_stdlib_exceptions.json

Every module of ``sys.stdlib_module_names`` is imported (modules with a user interface or a side effect on import
are skipped, ``SKIP``), then ``BaseException``'s subclasses are walked once. A class is listed when its module is
part of the standard library, its name is public and not nested, and it is not a warning; its value is its method
resolution order without ``object``, ``BaseException`` and ``Exception`` (a built-in ancestor by its bare name,
another by ``module.name``). The committed file was written by Python 3.11.7, so the generated table does not change
with the interpreter that regenerates it.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import sys
import warnings

# modules that open a window or a browser, print on import, or exist only on another platform or for CPython's tests
SKIP = frozenset(
    "antigravity this idlelib tkinter turtle turtledemo test lib2to3 ensurepip pydoc_data msilib winreg winsound "
    "msvcrt nt".split()
)
# submodules that define the classes their package re-exports
SUBMODULES = (
    "http.client",
    "urllib.error",
    "concurrent.futures.process",
    "multiprocessing.context",
    "asyncio.exceptions",
    "importlib.metadata",
    "json.decoder",
    "xml.etree.ElementTree",
    "xml.parsers.expat",
    "xmlrpc.client",
    "http.cookiejar",
    "email.errors",
)


def _import_all() -> None:
    warnings.simplefilter("ignore")
    names = sorted(n for n in sys.stdlib_module_names if not n.startswith("_") and n not in SKIP)
    for name in (*names, *SUBMODULES):
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                importlib.import_module(name)
        except (ImportError, OSError, RuntimeError, SyntaxError, ValueError, AttributeError):
            continue  # a module this platform or build does not have


def _name(cls: type) -> str:
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def listing() -> dict[str, list[str]]:
    _import_all()
    out: dict[str, list[str]] = {}
    seen: set[type] = set()
    stop = (object, BaseException, Exception)

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen.add(cls)
        top = cls.__module__.split(".")[0]
        if (
            cls.__module__ != "builtins"
            and top in sys.stdlib_module_names
            and not cls.__name__.startswith("_")
            and "." not in cls.__qualname__
            and not issubclass(cls, Warning)
        ):
            out[_name(cls)] = [_name(b) for b in cls.__mro__[1:] if b not in stop]
        for sub in cls.__subclasses__():
            walk(sub)

    walk(BaseException)
    return dict(sorted(out.items()))


if __name__ == "__main__":
    json.dump(listing(), sys.stdout, indent=0, sort_keys=True)
    sys.stdout.write("\n")
