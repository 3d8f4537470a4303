"""New SQLite database files as copies of the migrated empty schema, for processes that create many.

Migrating a new file runs every step of ``migrations/``: about 45 ms of CPU on an idle machine (the
``ALTER TABLE`` steps make SQLite re-read the whole schema each time), 90 ms and more on a busy one.
A process that creates many stores (a test suite, a host with a database per project or agent)
pays that each time. So the *second* time a process opens a ``MemoryStore`` on a new file (the first is
migrated as usual: a process that creates one store pays nothing extra), it migrates one empty
file in a temporary folder, keeps its bytes (about 400 kB) and deletes the folder; from then on each
new database is published as a copy of those bytes: written and synced under a temporary name
beside the target, then hard-linked to the target name, which fails if another process created
the file meanwhile (that file is then opened as usual, and its migrations, if any are pending,
run as usual). The copy is what the migrations produce in this process, so opening it finds no
step pending. Where a hard link cannot be made (a file system without them, a folder this process
may not write), the file is created and migrated as usual, which reports any real problem.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
from pathlib import Path

__all__ = ["create"]

_lock = threading.Lock()
_state = {"new_files": 0}
_image: list[bytes] = []  # the migrated empty database, once built


def create(path: Path) -> bool:
    """Create ``path`` (which did not exist) as a migrated empty database when this process has
    created a new one before; True when it was created here, False when the caller must create it
    (the first new file of the process, another process was first, or no hard link here)."""
    if str(path) == ":memory:":
        return False
    with _lock:
        _state["new_files"] += 1
        if _state["new_files"] < 2:
            return False
        if not _image:
            _image.append(_build())
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        f = open(tmp, "xb")
    except OSError:  # no such folder, a file where the folder should be, not writable...
        return False  # ...the caller opens or creates the file the usual way, which says what is wrong
    try:
        with f:
            f.write(_image[0])
            f.flush()
            os.fsync(f.fileno())  # the bytes are on disk before the name is
        os.link(tmp, path)
        return True
    except OSError:  # FileExistsError (another process was first), no hard links here, a full disk
        return False
    finally:
        os.unlink(tmp)  # this process made it: the link (if any) keeps the data under the target name


def _build() -> bytes:
    from .migrate import migrate
    from .sqlite_backend import SQLiteBackend

    with tempfile.TemporaryDirectory(prefix="harness-memory-schema-") as d:
        b = SQLiteBackend(Path(d) / "schema.db")  # a raw backend: migrated step by step, never a copy
        try:
            migrate(b)
            b.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
        finally:
            b.close()
        return (Path(d) / "schema.db").read_bytes()
