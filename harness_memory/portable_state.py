"""The rest of a store in a JSONL export (format version 3): what a move between backends must keep
besides the memories themselves (issue 10).

Record kinds, one JSON object per line after the memory records (``{"record": KIND, ...}``):

- ``history``: a previous version of a keyed memory (``memory`` is its uid);
- ``access``: an access-log row of an exported memory (``memory`` is its uid);
- ``attempt``: a row of the technique ledger's attempts (``task_attempts``);
- ``technique``: a row of the ledger's estimates (``technique_effectiveness``);
- ``error_template`` and ``error_link``: the template miner's state (``error_templates``,
  ``error_signature_links``), so the same error gets the same signature id after the move.

History and access rows go with the memories an export selects; the ledger and the miner's state
belong to the whole store and are exported by an unfiltered export only. Every record is validated
before the import's one write transaction. Importing is idempotent: history versions are matched
by (memory, version); access-log rows and attempts (which have no identity of their own) by
their fields, as a multiset, so the rows a file holds are present once however often it is
imported; a technique row is kept from whichever side has more attempts; a template or link whose
id the store already has is left alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from . import validation as v
from .core import Core, content_hash, dumps
from .errors import InvalidInputError
from .redact import redact_text

__all__ = ["KINDS", "StateReport", "StateRecord", "check_record", "export_records", "has_records", "import_records"]

KINDS = ("history", "access", "attempt", "technique", "error_template", "error_link")
_MAX_TEXT = 1_000_000

_HISTORY = ("version", "content", "tags", "importance", "metadata", "valid_from", "valid_until")
_ACCESS = (
    "agent_id",
    "session_id",
    "task_id",
    "access_type",
    "was_helpful",
    "outcome",
    "score",
    "timestamp",
    "error_signature",
    "duration_ms",
    "task_signature",  # since migration 0022: the task of an advice, or of the advice a credit followed
    "error_origin",  # since migration 0023: where the advised (or credited) error's run started
    "error_line",  # since migration 0026: that error's decisive line and failure block (which instance of its
    "error_instance",  # signature it was)
)
# the fields an access record has had since format 3; task_signature and error_origin came with format 4, error_line
# and error_instance with format 5 (an export writes them only where they hold a value, and a record without them is
# matched on the fields it has: a file of an older format imported again adds nothing)
_ACCESS_V3 = _ACCESS[:-4]
_ACCESS_V4 = _ACCESS[:-2]
_ACCESS_TYPES = ("query", "applied", "updated", "invalidated")
_ATTEMPT = (
    "task_id",
    "technique",
    "result",
    "error_signature",
    "error_category",
    "agent_id",
    "agent_type",
    "task_category",
    "notes",
    "attempted_at",
    "error_basis",
)
_RESULTS = ("fixed", "failed", "decomposed", "escalated")
_TECHNIQUE = (
    "technique",
    "level",
    "error_key",
    "error_category",
    "successes",
    "failures",
    "success_rate",
    "agent_types",
    "task_categories",
    "example_successes",
    "example_failures",
    "first_used",
    "last_used",
    "last_success",
    "last_failure",
)
_LEVELS = ("signature", "category", "global")
_TEMPLATE = ("sig", "partition", "tokens", "category", "exception", "seen", "created_at", "updated_at")
_LINK = ("sig", "canonical", "linked_at")
_FIELDS = {
    "history": ("memory", *_HISTORY),
    "access": ("memory", *_ACCESS),
    "attempt": _ATTEMPT,
    "technique": _TECHNIQUE,
    "error_template": _TEMPLATE,
    "error_link": _LINK,
}
_REQUIRED = {
    "history": ("memory", "version", "content", "valid_from", "valid_until"),
    "access": ("memory", "access_type", "timestamp"),
    "attempt": ("task_id", "technique", "result", "attempted_at"),
    "technique": ("technique", "level", "error_key", "successes", "failures", "first_used", "last_used"),
    "error_template": ("sig", "partition", "tokens", "category", "created_at", "updated_at"),
    "error_link": ("sig", "canonical", "linked_at"),
}


@dataclass
class StateRecord:
    """One validated record: its kind and the values to write (in the order of its kind's fields)."""

    kind: str
    values: dict[str, Any]


@dataclass
class StateReport:
    history: int = 0
    access: int = 0
    attempts: int = 0
    techniques: int = 0
    templates: int = 0


# -- export ------------------------------------------------------------------------------------------
def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def has_records(core: Core, memory_where: str, params: Sequence[Any], whole: bool) -> bool:
    """Whether an export with this memory filter holds any record of these kinds."""
    b = core.backend
    sub = f"SELECT id FROM memories m WHERE {memory_where}"
    for sql, p in (
        (f"SELECT 1 FROM memory_history WHERE memory_id IN ({sub}) LIMIT 1", params),
        (f"SELECT 1 FROM memory_access_log WHERE memory_id IN ({sub}) LIMIT 1", params),
    ):
        if b.execute(sql, tuple(p)).fetchone():
            return True
    if whole:
        for t in ("task_attempts", "technique_effectiveness", "error_templates", "error_signature_links"):
            if b.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone():
                return True
    return False


def export_records(core: Core, memory_where: str, params: Sequence[Any], whole: bool) -> Iterator[dict[str, Any]]:
    """The records of an export, streamed (call inside the export's read snapshot). ``memory_where``
    selects the exported memories (alias ``m``); ``whole``: the export is unfiltered, so the ledger and
    the miner's state go with it."""
    b = core.backend
    sub = f"SELECT id, uid FROM memories m WHERE {memory_where}"
    for r in b.execute(
        f"SELECT x.uid, h.version, h.content, h.context_tags, h.importance, h.metadata, h.valid_from, "
        f"h.valid_until FROM memory_history h JOIN ({sub}) x ON x.id = h.memory_id "
        "ORDER BY h.memory_id, h.version",
        tuple(params),
    ):
        yield {
            "record": "history",
            "memory": r[0],
            "version": r[1],
            "content": r[2],
            "tags": _json(r[3]),
            "importance": r[4],
            "metadata": _json(r[5]),
            "valid_from": r[6],
            "valid_until": r[7],
        }
    for r in b.execute(
        f"SELECT x.uid, {', '.join('a.' + c for c in _ACCESS)} FROM memory_access_log a "
        f"JOIN ({sub}) x ON x.id = a.memory_id ORDER BY a.memory_id, a.id",
        tuple(params),
    ):
        rec = {"record": "access", "memory": r[0], **dict(zip(_ACCESS, r[1:]))}
        if rec["was_helpful"] is not None:
            rec["was_helpful"] = bool(rec["was_helpful"])
        for f in _ACCESS[len(_ACCESS_V3) :]:
            if rec[f] is None:
                del rec[f]
        yield rec
    if not whole:
        return
    for r in b.execute(f"SELECT {', '.join(_ATTEMPT)} FROM task_attempts ORDER BY task_id, id"):
        rec = {"record": "attempt", **dict(zip(_ATTEMPT, r))}
        rec["error_basis"] = _json(rec["error_basis"])
        yield rec
    for r in b.execute(f"SELECT {', '.join(_TECHNIQUE)} FROM technique_effectiveness ORDER BY id"):
        rec = {"record": "technique", **dict(zip(_TECHNIQUE, r))}
        for f in ("agent_types", "task_categories", "example_successes", "example_failures"):
            rec[f] = _json(rec[f])
        yield rec
    for r in b.execute(f"SELECT {', '.join(_TEMPLATE)} FROM error_templates ORDER BY id"):
        rec = {"record": "error_template", **dict(zip(_TEMPLATE, r))}
        rec["tokens"] = _json(rec["tokens"])
        yield rec
    for r in b.execute(f"SELECT {', '.join(_LINK)} FROM error_signature_links ORDER BY sig"):
        yield {"record": "error_link", **dict(zip(_LINK, r))}


# -- checks ------------------------------------------------------------------------------------------
def _uid(value: Any, field: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value):
        raise InvalidInputError(f"{field} must be a uid (1-64 characters of [A-Za-z0-9_-])")
    return value


def _opt_text(rec: dict[str, Any], f: str, max_bytes: int = 4096) -> str | None:
    return None if rec.get(f) is None else v.text(rec[f], f, max_bytes=max_bytes, allow_empty=True)


def _opt_ident(rec: dict[str, Any], f: str) -> str | None:
    return v.ident(rec.get(f), f, optional=True)


def _time(rec: dict[str, Any], f: str, required: bool = True) -> float | None:
    t = v.timestamp(rec.get(f), f)
    if t is None and required:
        raise InvalidInputError(f"{f} must be a UNIX timestamp")
    return t


def _json_list(value: Any, field: str, *, limit: int = 1000) -> str:
    if value is None:
        value = []
    if not isinstance(value, list) or len(value) > limit:
        raise InvalidInputError(f"{field} must be a list (at most {limit:,} items)")
    v.metadata({"x": value})  # nesting and size bounds of stored JSON
    return dumps(value)


def _basis(value: Any) -> str | None:
    if value is None:
        return None
    keys = {"message", "frame", "exception", "category", "excerpt"}
    if not isinstance(value, dict) or not isinstance(value.get("message"), str) or set(value) - keys:
        raise InvalidInputError("error_basis must be an object with message, frame, exception, category, excerpt")
    for f in keys:
        if value.get(f) is not None:
            v.text(value[f], f"error_basis.{f}", max_bytes=8192, allow_empty=True)
    return dumps(value)


@overload
def _redacted(core: Core, text: str) -> str: ...
@overload
def _redacted(core: Core, text: str | None) -> str | None: ...
def _redacted(core: Core, text: str | None) -> str | None:
    return text if text is None or not core.settings.redact_secrets else redact_text(text)


def check_record(core: Core, rec: dict[str, Any]) -> StateRecord:
    """One record of these kinds, validated (raises InvalidInputError naming the field)."""
    kind = rec["record"]
    unknown = sorted(set(rec) - set(_FIELDS[kind]) - {"record"})
    if unknown:
        raise InvalidInputError(f"unknown fields {unknown[:10]}")
    missing = [f for f in _REQUIRED[kind] if rec.get(f) is None]
    if missing:
        raise InvalidInputError(f"missing fields {missing}")
    s = core.settings
    out: dict[str, Any]
    if kind == "history":
        version = v.count(rec["version"], "version")
        if version < 1:
            raise InvalidInputError("version must be at least 1")
        content = _redacted(core, v.text(rec["content"], "content", max_bytes=s.max_content_bytes))
        tags = v.tags(rec.get("tags") or [], max_tags=s.max_tags, max_len=s.max_tag_length)
        out = {
            "memory": _uid(rec["memory"], "memory"),
            "version": version,
            "content": content,
            "content_hash": content_hash(content),
            "context_tags": dumps(tags),
            "importance": v.unit_float(rec.get("importance", 0.5), "importance"),
            "metadata": dumps(v.metadata(rec.get("metadata"))),
            "valid_from": _time(rec, "valid_from"),
            "valid_until": _time(rec, "valid_until"),
        }
    elif kind == "access":
        if rec["access_type"] not in _ACCESS_TYPES:
            raise InvalidInputError(f"access_type must be one of {', '.join(_ACCESS_TYPES)}")
        helpful = rec.get("was_helpful")
        if helpful is not None and helpful not in (True, False, 0, 1) or isinstance(helpful, float):
            raise InvalidInputError("was_helpful must be true, false or null")
        score = rec.get("score")
        if score is not None:
            score = v.number(score, "score", lo=-1e9, hi=1e9)
        duration = rec.get("duration_ms")
        if duration is not None:
            duration = v.number(duration, "duration_ms", lo=0, hi=1e11)
        out = {
            "memory": _uid(rec["memory"], "memory"),
            "agent_id": _opt_ident(rec, "agent_id"),
            "session_id": _opt_ident(rec, "session_id"),
            "task_id": _opt_ident(rec, "task_id"),
            "access_type": rec["access_type"],
            "was_helpful": None if helpful is None else int(helpful),
            "outcome": _redacted(core, _opt_text(rec, "outcome", 8192)),
            "score": score,
            "timestamp": _time(rec, "timestamp"),
            "error_signature": _opt_text(rec, "error_signature", 200),
            "duration_ms": duration,
            "task_signature": _opt_text(rec, "task_signature", 1000),
            "error_origin": _opt_text(rec, "error_origin", 1000),
            "error_line": _redacted(core, _opt_text(rec, "error_line", 4000)),
            "error_instance": _redacted(core, _opt_text(rec, "error_instance", 4000)),
            # matched on the fields of the format it was written in: 3, 4 (no line) or 5
            "match": len(_ACCESS_V3)
            if not {"task_signature", "error_origin", "error_line", "error_instance"} & set(rec)
            else len(_ACCESS_V4)
            if not {"error_line", "error_instance"} & set(rec)
            else len(_ACCESS),
        }
    elif kind == "attempt":
        if rec["result"] not in _RESULTS:
            raise InvalidInputError(f"result must be one of {', '.join(_RESULTS)}")
        out = {
            "task_id": v.text(rec["task_id"], "task_id", max_bytes=1000),
            "technique": v.text(rec["technique"], "technique", max_bytes=1000),
            "result": rec["result"],
            "error_signature": _opt_text(rec, "error_signature", 200),
            "error_category": _opt_text(rec, "error_category", 200),
            "agent_id": _opt_ident(rec, "agent_id"),
            "agent_type": _opt_text(rec, "agent_type", 200),
            "task_category": _opt_text(rec, "task_category", 200),
            "notes": _redacted(core, _opt_text(rec, "notes", 64 * 1024)),
            "attempted_at": _time(rec, "attempted_at"),
            "error_basis": _basis(rec.get("error_basis")),
        }
    elif kind == "technique":
        if rec["level"] not in _LEVELS:
            raise InvalidInputError(f"level must be one of {', '.join(_LEVELS)}")
        succ, fail = v.count(rec["successes"], "successes"), v.count(rec["failures"], "failures")
        rate = rec.get("success_rate")
        out = {
            "technique": v.text(rec["technique"], "technique", max_bytes=1000),
            "level": rec["level"],
            "error_key": v.text(rec["error_key"], "error_key", max_bytes=200),
            "error_category": _opt_text(rec, "error_category", 200),
            "successes": succ,
            "failures": fail,
            "attempts": succ + fail,
            "success_rate": None if rate is None else v.unit_float(rate, "success_rate"),
            **{
                f: _json_list(rec.get(f), f)
                for f in ("agent_types", "task_categories", "example_successes", "example_failures")
            },
            "first_used": _time(rec, "first_used"),
            "last_used": _time(rec, "last_used"),
            "last_success": _time(rec, "last_success", False),
            "last_failure": _time(rec, "last_failure", False),
        }
    elif kind == "error_template":
        tokens = rec["tokens"]
        if (
            not isinstance(tokens, list)
            or len(tokens) > 10_000
            or not all(isinstance(t, str) and len(t) <= 1000 for t in tokens)
        ):
            raise InvalidInputError("tokens must be a list of strings")
        seen = rec.get("seen", 1)
        out = {
            "sig": v.text(rec["sig"], "sig", max_bytes=200),
            "partition": v.text(rec["partition"], "partition", max_bytes=_MAX_TEXT),
            "tokens": dumps(tokens),
            "category": v.text(rec["category"], "category", max_bytes=200),
            "exception": _opt_text(rec, "exception", 1000),
            "seen": v.count(seen, "seen"),
            "created_at": _time(rec, "created_at"),
            "updated_at": _time(rec, "updated_at"),
        }
    else:  # error_link
        out = {
            "sig": v.text(rec["sig"], "sig", max_bytes=200),
            "canonical": v.text(rec["canonical"], "canonical", max_bytes=200),
            "linked_at": _time(rec, "linked_at"),
        }
    return StateRecord(kind, out)


# -- import ------------------------------------------------------------------------------------------
def import_records(core: Core, c, items: Sequence[StateRecord], memory_ids: dict[str, int]) -> StateReport:
    """Write the records in the caller's transaction (after the memories: ``memory_ids`` maps the
    uids of the file's memories to their ids here)."""
    rep = StateReport()
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for it in items:
        by[it.kind].append(it.values)
    for r in by["history"]:
        mid = memory_ids[r["memory"]]
        if c.execute(
            "SELECT 1 FROM memory_history WHERE memory_id = ? AND version = ?", (mid, r["version"])
        ).fetchone():
            continue
        c.execute(
            "INSERT INTO memory_history(memory_id, version, content, content_hash, context_tags, importance, "
            "metadata, valid_from, valid_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                mid,
                r["version"],
                r["content"],
                r["content_hash"],
                r["context_tags"],
                r["importance"],
                r["metadata"],
                r["valid_from"],
                r["valid_until"],
            ),
        )
        rep.history += 1
    access: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in by["access"]:
        access[memory_ids[r["memory"]]].append(r)
    for mid, rows in access.items():
        stored = [
            tuple(x)
            for x in c.execute(
                f"SELECT {', '.join(_ACCESS)} FROM memory_access_log WHERE memory_id = ?", (mid,)
            ).fetchall()
        ]
        present = {n: Counter(x[:n] for x in stored) for n in (len(_ACCESS_V3), len(_ACCESS_V4), len(_ACCESS))}
        new = []
        for r in rows:
            key = tuple(r[f] for f in _ACCESS)
            n = r["match"]  # an older format's record: its row is there, with or without the newer fields
            if present[n][key[:n]] > 0:
                present[n][key[:n]] -= 1
            else:
                new.append((mid, *key))
        if new:
            c.executemany(
                f"INSERT INTO memory_access_log(memory_id, {', '.join(_ACCESS)}) VALUES (?{', ?' * len(_ACCESS)})", new
            )
            rep.access += len(new)
    attempts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in by["attempt"]:
        attempts[r["task_id"]].append(r)
    keyed = _ATTEMPT[:-1]  # every field but error_basis (JSON text: its spelling may differ)
    for task, rows in attempts.items():
        have = Counter(
            tuple(x)
            for x in c.execute(f"SELECT {', '.join(keyed)} FROM task_attempts WHERE task_id = ?", (task,)).fetchall()
        )
        new = []
        for r in rows:
            key = tuple(r[f] for f in keyed)
            if have[key] > 0:
                have[key] -= 1
            else:
                new.append((*key, r["error_basis"]))
        if new:
            c.executemany(
                f"INSERT INTO task_attempts({', '.join(_ATTEMPT)}) VALUES (?{', ?' * (len(_ATTEMPT) - 1)})", new
            )
            rep.attempts += len(new)
    cols = (*_TECHNIQUE, "attempts")  # attempts: derived when the record was read (successes + failures)
    for r in by["technique"]:
        # the side with more evidence wins (idempotent; a store's own, larger ledger is never overwritten)
        done = c.execute(
            f"INSERT INTO technique_effectiveness({', '.join(cols)}) VALUES (?{', ?' * (len(cols) - 1)}) "
            "ON CONFLICT(technique, level, error_key) DO UPDATE SET "
            + ", ".join(f"{f} = excluded.{f}" for f in cols[3:])
            + " WHERE excluded.attempts > technique_effectiveness.attempts RETURNING id",
            tuple(r[f] for f in cols),
        ).fetchone()
        rep.techniques += done is not None
    if by["error_template"] or by["error_link"]:
        rev = int(c.execute("SELECT COALESCE(MAX(rev), 0) FROM error_templates").fetchone()[0]) + 1
        for r in by["error_template"]:  # a new revision: every process's miner re-reads its templates
            if c.execute(
                "SELECT 1 FROM error_templates WHERE sig = ? UNION ALL SELECT 1 FROM error_signature_links "
                "WHERE sig = ?",
                (r["sig"], r["sig"]),
            ).fetchone():
                continue
            c.execute(
                "INSERT INTO error_templates(sig, partition, tokens, category, exception, seen, rev, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    r["sig"],
                    r["partition"],
                    r["tokens"],
                    r["category"],
                    r["exception"],
                    max(1, r["seen"]),
                    rev,
                    r["created_at"],
                    r["updated_at"],
                ),
            )
            rep.templates += 1
        for r in by["error_link"]:
            if c.execute(
                "SELECT 1 FROM error_signature_links WHERE sig = ? UNION ALL SELECT 1 FROM error_templates "
                "WHERE sig = ?",
                (r["sig"], r["sig"]),
            ).fetchone():
                continue
            c.execute(
                "INSERT INTO error_signature_links(sig, canonical, linked_at) VALUES (?, ?, ?)",
                (r["sig"], r["canonical"], r["linked_at"]),
            )
    return rep
