"""Re-sign stored error signatures, and re-kind stored fixes, when the method changes.

Every row that carries an error signature keeps what was signed (``error_basis``: the
decisive message, key frame, exception and category; rows from before migration 0006 are
re-signed from their template and the frame recorded in the template's partition). The job
computes each stored signature's id under the current method and, where it differs, moves
everything to the new id: memories, task attempts, error→fix links (counts merged when a
memory ends up linked twice), and the technique ledger's signature rows (successes,
failures, examples and dates merged when two old signatures become one). The old id stays
resolvable: it is linked to the new one in ``error_signature_links``.

The same run recomputes the kind of every stored fix (``memories.fix_kind``) from its
content, so that fixes stored before a change of ``fixes.fix_kind`` aggregate with new ones.

Idempotent and resumable: it works in batches of signatures, one short transaction each,
and records the method in ``signature_state`` only when every signature is done; a run with
the method already recorded does nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from harness_memory.error_signatures import SIGNATURE_METHOD
from harness_memory.fixes import fix_kind

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore

__all__ = ["resign"]

_SOURCES = [("memories", "error_basis"), ("task_attempts", "error_basis")]


def _basis_of(b, sig: str) -> dict[str, Any] | None:
    for table, col in _SOURCES:
        r = b.execute(
            f"SELECT {col} FROM {table} WHERE error_signature = ? AND {col} IS NOT NULL LIMIT 1", (sig,)
        ).fetchone()
        if r is not None:
            return json.loads(r[0])
    r = b.execute("SELECT tokens, partition, category, exception FROM error_templates WHERE sig = ?", (sig,)).fetchone()
    if r is None:
        return None
    frame = r[1].split("|", 2)[2] if r[1].count("|") >= 2 else ""
    return {"message": " ".join(json.loads(r[0])), "frame": frame or None, "category": r[2], "exception": r[3]}


def _stored_signatures(b) -> list[str]:
    rows = b.execute(
        "SELECT error_signature FROM memories WHERE error_signature IS NOT NULL UNION "
        "SELECT error_signature FROM task_attempts WHERE error_signature IS NOT NULL UNION "
        "SELECT error_signature FROM fix_links UNION "
        "SELECT error_key FROM technique_effectiveness WHERE level = 'signature' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def _merge_ledger(c, old: str, new: str) -> None:
    cols = (
        "successes, failures, attempts, agent_types, task_categories, example_successes, example_failures, "
        "first_used, last_used, last_success, last_failure, error_category"
    )
    for row in c.execute(
        f"SELECT technique, {cols} FROM technique_effectiveness WHERE level = 'signature' AND error_key = ?", (old,)
    ).fetchall():
        technique, s, f, a, ats, tcs, exs, exf, first, last, lsucc, lfail, cat = row
        other = c.execute(
            f"SELECT {cols} FROM technique_effectiveness WHERE level = 'signature' AND error_key = ? AND technique = ?",
            (new, technique),
        ).fetchone()
        if other is None:
            c.execute(
                "UPDATE technique_effectiveness SET error_key = ? WHERE level = 'signature' AND error_key = ? "
                "AND technique = ?",
                (new, old, technique),
            )
            continue

        def union(x: str, y: str, cap: int | None = None) -> str:
            out = list(dict.fromkeys(json.loads(y) + json.loads(x)))
            return json.dumps(out[-cap:] if cap else out)

        def latest(x, y):
            return y if x is None else x if y is None else max(x, y)

        s2, f2, a2 = other[0] + s, other[1] + f, other[2] + a
        c.execute(
            "UPDATE technique_effectiveness SET successes = ?, failures = ?, attempts = ?, success_rate = ?, "
            "agent_types = ?, task_categories = ?, example_successes = ?, example_failures = ?, first_used = ?, "
            "last_used = ?, last_success = ?, last_failure = ? WHERE level = 'signature' AND error_key = ? "
            "AND technique = ?",
            (
                s2,
                f2,
                a2,
                s2 / a2 if a2 else None,
                union(ats, other[3]),
                union(tcs, other[4]),
                union(exs, other[5], 10),
                union(exf, other[6], 10),
                min(first, other[7]),
                latest(last, other[8]),
                latest(lsucc, other[9]),
                latest(lfail, other[10]),
                new,
                technique,
            ),
        )
        c.execute(
            "DELETE FROM technique_effectiveness WHERE level = 'signature' AND error_key = ? AND technique = ?",
            (old, technique),
        )


def _move_links(c, old: str, new: str) -> None:
    for mid, worked, failed, helpful, unhelpful, first, last, task, origin, instance in c.execute(
        "SELECT memory_id, worked, failed, helpful, unhelpful, first_at, last_at, task_signature, error_origin, "
        "error_instance FROM fix_links WHERE error_signature = ?",
        (old,),
    ).fetchall():
        # merged: the counts add up, and the task, origin and failure block the kept link lacks come from the old one
        hit = c.execute(
            "UPDATE fix_links SET worked = worked + ?, failed = failed + ?, helpful = helpful + ?, "
            "unhelpful = unhelpful + ?, first_at = CASE WHEN first_at <= ? THEN first_at ELSE ? END, "
            "last_at = CASE WHEN last_at >= ? THEN last_at ELSE ? END, "
            "task_signature = COALESCE(task_signature, ?), error_origin = COALESCE(error_origin, ?), "
            "error_instance = COALESCE(error_instance, ?) WHERE memory_id = ? AND error_signature = ?",
            (worked, failed, helpful, unhelpful, first, first, last, last, task, origin, instance, mid, new),
        ).rowcount
        if hit:
            c.execute("DELETE FROM fix_links WHERE memory_id = ? AND error_signature = ?", (mid, old))
        else:
            c.execute(
                "UPDATE fix_links SET error_signature = ? WHERE memory_id = ? AND error_signature = ?", (new, mid, old)
            )


def _fix_of(content: str, metadata: str | None) -> str:
    """The fix within a stored fix's content: all of it, or its end from ``fix_starts_at`` when the
    content also carries the error (``learn_error``)."""
    start = json.loads(metadata).get("fix_starts_at") if metadata else None
    if isinstance(start, int) and not isinstance(start, bool) and 0 < start < len(content):
        return content[start:]
    return content


def _rekind(b, batch_size: int, dry_run: bool) -> int:
    """Recompute ``fix_kind`` of every stored fix from its content, in batches by id; the number changed."""
    changed, last = 0, 0
    while True:
        rows = b.execute(
            "SELECT id, content, fix_kind, metadata, content_hash FROM memories WHERE fix_kind IS NOT NULL "
            "AND id > ? ORDER BY id LIMIT ?",
            (last, batch_size),
        ).fetchall()
        if not rows:
            return changed
        last = rows[-1][0]
        moves = [
            (kind, mid, old, digest)
            for mid, content, old, meta, digest in rows
            if (kind := fix_kind(_fix_of(content, meta))) != old
        ]
        if moves and not dry_run:
            with b.write() as c:
                for kind, mid, old, digest in moves:
                    # computed outside the transaction: a row rewritten meanwhile (a keyed update) keeps the
                    # kind its own write gave it
                    cur = c.execute(
                        "UPDATE memories SET fix_kind = ? WHERE id = ? AND fix_kind = ? AND content_hash = ?",
                        (kind, mid, old, digest),
                    )
                    changed += cur.rowcount
        else:
            changed += len(moves)


def resign(
    store: MemoryStore, *, dry_run: bool = False, batch_size: int = 100, force: bool = False, **_: object
) -> dict[str, int]:
    """Move stored signatures to the current signing method (see the module docstring)."""
    core = store._core
    b = core.backend
    state = b.execute("SELECT method FROM signature_state WHERE id = 1").fetchone()
    # no row: the database had no templates when migration 0006 ran, so everything was signed by
    # method 2 (the method that shipped with it)
    method = state[0] if state is not None else 2
    if method >= SIGNATURE_METHOD and not force:
        return {"signatures": 0, "changed": 0, "up_to_date": 1, "fix_kinds": 0}
    sigs = _stored_signatures(b)
    plan: dict[str, str] = {}
    for sig in sigs:
        basis = _basis_of(b, sig)
        if basis is None or not (basis.get("message") or "").strip():
            continue
        message = basis["message"]
        if dry_run:
            continue
        new = core.sign_message(
            message, basis.get("frame"), basis.get("category") or "unknown", basis.get("exception")
        )[0]
        if new != sig:
            plan[sig] = new
    if dry_run:
        return {"signatures": len(sigs), "changed": 0, "up_to_date": 0, "fix_kinds": _rekind(b, batch_size, True)}
    items = sorted(plan.items())
    for i in range(0, len(items), batch_size):
        with b.write() as c:
            for old, new in items[i : i + batch_size]:
                c.execute("UPDATE memories SET error_signature = ? WHERE error_signature = ?", (new, old))
                c.execute("UPDATE task_attempts SET error_signature = ? WHERE error_signature = ?", (new, old))
                _move_links(c, old, new)
                _merge_ledger(c, old, new)
                # the old id is retired: its template goes (new errors sign to the new id) and it is
                # linked to the new one, so anything holding it still resolves
                canonical = core.miner.canonical(new)
                if core.miner.canonical(old) == old:  # (a template joined to the new group keeps signing into it)
                    c.execute("DELETE FROM error_templates WHERE sig = ?", (old,))
                c.execute("UPDATE error_signature_links SET canonical = ? WHERE canonical = ?", (canonical, old))
                c.execute(
                    "INSERT INTO error_signature_links(sig, canonical, linked_at) VALUES (?, ?, ?) "
                    "ON CONFLICT(sig) DO UPDATE SET canonical = excluded.canonical, linked_at = excluded.linked_at",
                    (old, canonical, core.now()),
                )
            c.execute(
                "UPDATE error_templates SET rev = (SELECT COALESCE(MAX(rev), 0) + 1 FROM error_templates) "
                "WHERE id = (SELECT MAX(id) FROM error_templates)"
            )
    kinds = _rekind(b, batch_size, False)
    with b.write() as c:
        c.execute(
            "INSERT INTO signature_state(id, method, updated_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE "
            "SET method = excluded.method, updated_at = excluded.updated_at",
            (SIGNATURE_METHOD, core.now()),
        )
    core._signed.clear()
    return {"signatures": len(sigs), "changed": len(plan), "up_to_date": 0, "fix_kinds": kinds}
