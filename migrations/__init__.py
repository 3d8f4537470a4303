"""Schema migrations: an ordered list of named SQL steps (installed as ``harness_memory.migrations``).

Each ``NNNN_name.sql`` file in this folder is one step, applied in name order, each in
its own transaction, and recorded in ``schema_migrations``. Never edit a released step:
add a new one.
"""

from __future__ import annotations

from importlib import resources


def steps() -> list[tuple[str, str]]:
    """``(name, sql)`` for every step, in order."""
    files = sorted(
        (f for f in resources.files(__name__).iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    return [(f.name[:-4], f.read_text(encoding="utf-8")) for f in files]
