"""Schema migrations: an ordered list of named SQL steps (installed as ``harness_memory.migrations``).

Each ``NNNN_name.sql`` file in this folder is one step, applied in name order, each in
its own transaction, and recorded in ``schema_migrations``. Never edit a released step:
add a new one.
"""

from __future__ import annotations

from importlib import resources


def steps(dialect: str = "sqlite") -> list[tuple[str, str]]:
    """``(name, sql)`` for every step, in order. PostgreSQL's steps live in ``postgres/`` under
    the same names (one ``schema_migrations`` history whatever the engine)."""
    folder = resources.files(__name__)
    files = sorted(
        (f for f in folder.iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    out = [(f.name[:-4], f.read_text(encoding="utf-8")) for f in files]
    if dialect == "postgresql":
        pg = folder / "postgres"
        for k, (name, _) in enumerate(out):
            f = pg / f"{name}.sql"
            if not f.is_file():
                from harness_memory.errors import SchemaError

                raise SchemaError(f"migration {name} has no PostgreSQL version: add migrations/postgres/{name}.sql "
                                  "(the same step in PostgreSQL's spelling)")
            out[k] = (name, f.read_text(encoding="utf-8"))
    return out
