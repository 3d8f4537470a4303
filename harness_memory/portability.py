"""Export and import: versioned JSONL (lossless, idempotent) and a human-editable MEMORY.md per agent."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias

from . import documents as _documents, portable_state as _state, tool_calls as _tool_calls, validation as v, writes
from .core import Core, content_hash, dumps
from .errors import FileAccessError, ImportFormatError, InvalidInputError
from .models import MEMORY_COLUMNS, Memory, row_to_memory

__all__ = ["ImportReport", "export_jsonl", "import_jsonl", "export_markdown", "import_markdown", "FORMAT", "VERSION"]

log = logging.getLogger("harness_memory.portability")

FORMAT = "harness-memory"
VERSION = 5  # 2: tool-call and document records ({"record": "tool_call" | "document", ...}) after the memories;
# 3: history, access-log, ledger and template-miner records (portable_state.py); 4: access-log records may carry the
# task and the error's origin of an advice or a credit (task_signature, error_origin); 5: those records may carry the
# error's decisive line and failure block (error_line, error_instance), and the error->fix links the failure block


@dataclass
class ImportReport:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped_file: bool = False
    ids: list[int] = field(default_factory=list)
    tool_calls: int = 0  # tool calls inserted (a tool call already present is left alone)
    documents: int = 0  # document records inserted or updated (their chunk memories are counted above)
    state: _state.StateReport = field(default_factory=_state.StateReport)  # history, access log, ledger, templates


# -- JSONL ---------------------------------------------------------------------------------------
_EXPORT_FIELDS = (
    "uid",
    "namespace",
    "agent_id",
    "scope",
    "type",
    "content",
    "key",
    "task_signature",
    "error_signature",
    "error_template",
    "tags",
    "importance",
    "relevance_score",
    "access_count",
    "last_accessed",
    "times_applied",
    "times_successful",
    "success_rate",
    "session_id",
    "task_id",
    "metadata",
    "created_at",
    "updated_at",
    "expires_at",
    "archived",
    "pinned",
    "version",
)
_TIME_FIELDS = ("last_accessed", "created_at", "updated_at", "expires_at")
# optional since migration 0006 (older exports lack them): what was signed, the fix kind, error→fix links
_EXTRA_FIELDS = ("error_basis", "fix_kind", "fix_links")
# optional since migration 0012: the thread of an episode, when it was reflected, and (for a reflected
# memory) the uids of the episodes it came from
_THREAD_FIELDS = ("thread_id", "reflected_at", "sources")
_LINK_FIELDS = (
    "error_signature",
    "error_category",
    "error_message",
    "worked",
    "failed",
    "helpful",
    "unhelpful",
    "first_at",
    "last_at",
    "bound_params",
    "task_signature",  # since migration 0022: the task the fix was taught for (optional)
    "error_origin",  # since migration 0023: where the error's run started (optional)
    "error_instance",  # since migration 0026: the failure block of the error it was first taught for (optional)
)


def _record(m: Memory) -> dict[str, Any]:
    d = m.model_dump(include=set(_EXPORT_FIELDS))
    for f in _TIME_FIELDS:
        d[f] = None if d[f] is None else d[f].timestamp()
    return {k: d[k] for k in _EXPORT_FIELDS}


def _with_links(core: Core, memory_id: int, rec: dict[str, Any]) -> dict[str, Any]:
    basis, kind = core.backend.execute(
        "SELECT error_basis, fix_kind FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    links = [
        dict(zip(_LINK_FIELDS, r))
        for r in core.backend.execute(
            f"SELECT {', '.join(_LINK_FIELDS)} FROM fix_links WHERE memory_id = ? ORDER BY id", (memory_id,)
        )
    ]
    if basis is not None:
        rec["error_basis"] = json.loads(basis)
    if kind is not None:
        rec["fix_kind"] = kind
    if links:
        rec["fix_links"] = links
    thread, reflected = core.backend.execute(
        "SELECT thread_id, reflected_at FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    sources = [
        r[0]
        for r in core.backend.execute(
            "SELECT m.uid FROM memory_sources s JOIN memories m ON m.id = s.source_id WHERE s.memory_id = ? "
            "ORDER BY m.id",
            (memory_id,),
        )
    ]
    if thread is not None:
        rec["thread_id"] = thread
    if reflected is not None:
        rec["reflected_at"] = reflected
    if sources:
        rec["sources"] = sources
    return rec


def _check_links(core: Core, rec: dict[str, Any]) -> tuple[str | None, str | None, list[tuple]]:
    """The optional 0006 fields of a record, validated (raises InvalidInputError); their error texts redacted
    (``Settings.redact_secrets``), as everything else an import stores."""
    text = functools.partial(_state._redacted, core)

    basis = rec.get("error_basis")
    if basis is not None:
        if (
            not isinstance(basis, dict)
            or not isinstance(basis.get("message"), str)
            or set(basis) - {"message", "frame", "exception", "category", "excerpt"}
        ):
            raise InvalidInputError("error_basis must be an object with message, frame, exception, category, excerpt")
        for f in ("message", "frame", "exception", "category", "excerpt"):
            if basis.get(f) is not None:
                v.text(basis[f], f"error_basis.{f}", max_bytes=8192, allow_empty=True)
        basis = dumps({f: text(x) if f in ("message", "excerpt") else x for f, x in basis.items()})
    kind = rec.get("fix_kind")
    if kind is not None and (not isinstance(kind, str) or not re.fullmatch(r"fix_[0-9a-f]{16}", kind)):
        raise InvalidInputError("fix_kind must look like fix_<16 hex digits>")
    links = rec.get("fix_links") or []
    if not isinstance(links, list) or len(links) > 10_000:
        raise InvalidInputError("fix_links must be a list (at most 10,000)")
    out = []
    for k, ln in enumerate(links):
        if not isinstance(ln, dict) or set(ln) - set(_LINK_FIELDS) or "error_signature" not in ln:
            raise InvalidInputError(f"fix_links[{k}] must be an object of {', '.join(_LINK_FIELDS)}")
        sig = v.text(ln["error_signature"], f"fix_links[{k}].error_signature", max_bytes=200)
        cat = (
            None if ln.get("error_category") is None else v.text(ln["error_category"], "error_category", max_bytes=200)
        )
        msg = (
            None
            if ln.get("error_message") is None
            else v.text(ln["error_message"], "error_message", max_bytes=8192, allow_empty=True)
        )
        counts = [v.count(ln.get(f, 0), f"fix_links[{k}].{f}") for f in ("worked", "failed", "helpful", "unhelpful")]
        times = [v.timestamp(ln.get(f), f"fix_links[{k}].{f}") for f in ("first_at", "last_at")]
        if None in times:
            raise InvalidInputError(f"fix_links[{k}] needs first_at and last_at")
        bound = ln.get("bound_params")
        if bound is not None:
            bound = json.loads(bound) if isinstance(bound, str) else bound
            if (
                not isinstance(bound, list)
                or len(bound) > 8
                or not all(isinstance(x, str) and 0 < len(x) <= 200 for x in bound)
            ):
                raise InvalidInputError(f"fix_links[{k}].bound_params must be a list of up to 8 strings")
            bound = dumps(bound)
        task = ln.get("task_signature")
        if task is not None:
            task = v.text(task, f"fix_links[{k}].task_signature", max_bytes=1000)
        origin = ln.get("error_origin")
        if origin is not None:
            origin = v.text(origin, f"fix_links[{k}].error_origin", max_bytes=1000)
        instance = ln.get("error_instance")
        if instance is not None:
            instance = v.text(instance, f"fix_links[{k}].error_instance", max_bytes=4000, allow_empty=True)
        out.append((sig, cat, text(msg), *counts, *times, bound, task, origin, text(instance)))
    return basis, kind, out


def _apply_links(c, mid: int, r: dict[str, Any]) -> None:
    c.execute(
        "UPDATE memories SET error_basis = COALESCE(?, error_basis), fix_kind = COALESCE(?, fix_kind) WHERE id = ?",
        (r["error_basis"], r["fix_kind"], mid),
    )
    for sig, cat, msg, worked, failed, helpful, unhelpful, first, last, bound, task, origin, instance in r["fix_links"]:
        # the exported link is the state of that memory's link: set, not add (idempotent)
        c.execute(
            "INSERT INTO fix_links(memory_id, error_signature, error_category, error_message, worked, failed, "
            "helpful, unhelpful, first_at, last_at, bound_params, task_signature, error_origin, error_instance) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(memory_id, error_signature) DO UPDATE SET worked = excluded.worked, "
            "failed = excluded.failed, helpful = excluded.helpful, unhelpful = excluded.unhelpful, "
            "first_at = excluded.first_at, last_at = excluded.last_at, bound_params = excluded.bound_params, "
            "task_signature = COALESCE(excluded.task_signature, fix_links.task_signature), "
            "error_origin = COALESCE(excluded.error_origin, fix_links.error_origin), "
            "error_instance = COALESCE(fix_links.error_instance, excluded.error_instance)",
            (mid, sig, cat, msg, worked, failed, helpful, unhelpful, first, last, bound, task, origin, instance),
        )


def _apply_threads(core: Core, c, records: list[dict[str, Any]]) -> None:
    """Thread ids, reflection times and source links of imported records (sources by uid, after every
    record is in: a source may come later in the file; one not in the database is skipped)."""
    now = core.now()
    for r in records:
        if r["thread_id"] is None and r["reflected_at"] is None and not r["sources"]:
            continue
        mid = c.execute("SELECT id FROM memories WHERE uid = ?", (r["uid"],)).fetchone()[0]
        c.execute(
            "UPDATE memories SET thread_id = ?, reflected_at = ? WHERE id = ?", (r["thread_id"], r["reflected_at"], mid)
        )
        for uid in r["sources"]:
            src = c.execute("SELECT id FROM memories WHERE uid = ?", (uid,)).fetchone()
            if src is not None:
                c.execute(
                    "INSERT INTO memory_sources(memory_id, source_id, kind, added_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (memory_id, source_id) DO NOTHING",
                    (mid, src[0], "reflection", now),
                )


def _file_error(action: str, path: Path, exc: OSError) -> FileAccessError:
    return FileAccessError(f"cannot {action} {path}: {exc.strerror or exc}")


def _discard(tmp: Path) -> None:
    """Remove a half-written temporary file after a failed export, if there is one."""
    try:
        tmp.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:  # the name is too long, the folder is gone...: nothing was left there
        log.debug("could not remove %s: %s", tmp, exc)


def export_jsonl(core: Core, path: Path, *, namespace: str | None, agent_id: str | None) -> int:
    conds, params = [], []
    if namespace is not None:
        conds.append("namespace = ?")
        params.append(v.ident(namespace, "namespace"))
    if agent_id is not None:
        conds.append("agent_id = ?")
        params.append(v.ident(agent_id, "agent_id"))
    where = " AND ".join(conds) or "1 = 1"
    emb = core.backend.execute("SELECT name, dimensions FROM embedder_info").fetchone()
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    try:
        with core.backend.read():
            rows = core.backend.execute(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where} ORDER BY id", params)
            calls = _tool_calls.export_records(core, namespace=namespace, agent_id=agent_id)
            calls += _documents.export_records(core, namespace=namespace, agent_id=agent_id)
            whole = namespace is None and agent_id is None  # the ledger and the miner's state: whole stores only
            state = _state.has_records(core, where, params, whole)
            with tmp.open("w", encoding="utf-8") as fh:
                # the lowest version that reads it: a file without the newer records imports into older versions
                fh.write(
                    dumps(
                        {
                            "format": FORMAT,
                            "version": VERSION if state else 2 if calls else 1,
                            "embedder": emb[0] if emb else None,
                            "exported_at": core.now(),
                        }
                    )
                    + "\n"
                )
                for r in rows.fetchall():
                    fh.write(dumps(_with_links(core, r[0], _record(row_to_memory(r)))) + "\n")
                    n += 1
                for rec in calls:
                    fh.write(dumps(rec) + "\n")
                if state:
                    for rec in _state.export_records(core, where, params, whole):
                        fh.write(dumps(rec) + "\n")
        tmp.replace(path)
    except OSError as exc:
        _discard(tmp)
        raise _file_error("write", path, exc) from exc
    return n


def _read_text(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", newline="") as fh:  # no newline translation: a CR in content stays
            return fh.read()
    except FileNotFoundError as exc:
        raise ImportFormatError(f"cannot read {path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"cannot read {path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise ImportFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _loads(line: str, where: str) -> Any:
    """Parse one JSON line; a nesting deeper than MAX_NESTING is refused before parsing."""
    depth = best = 0
    in_str = esc = False
    if line.count("[") + line.count("{") <= v.MAX_NESTING:
        line_to_scan = ""  # cannot be nested too deep: skip the scan
    else:
        line_to_scan = line
    for ch in line_to_scan:  # a linear scan: brackets outside strings
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > v.MAX_NESTING + 1:
                    raise ImportFormatError(f"{where}: nested more than {v.MAX_NESTING} levels deep")
        elif ch in "]}":
            depth -= 1
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})") from exc
    except (RecursionError, ValueError) as exc:  # ValueError: integers with too many digits
        raise ImportFormatError(f"{where}: unreadable JSON ({type(exc).__name__})") from exc


# what a file holds besides memories: tool calls, document records (dicts) and state records
_Extra: TypeAlias = "_tool_calls.ToolCallInput | dict[str, Any] | _state.StateRecord"


def _header(line: str, path: Path) -> dict[str, Any]:
    """An export's header line, checked: its format and a version this one reads."""
    if not line.strip():
        raise ImportFormatError(f"{path}:1: empty file or no header line")
    header = _loads(line, f"{path}:1")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ImportFormatError(f"{path}:1: not a {FORMAT} export (no header)")
    ver = header.get("version")
    if isinstance(ver, bool) or not isinstance(ver, int) or not 1 <= ver <= VERSION:
        raise ImportFormatError(f"{path}:1: format version {ver!r}; this version reads 1 to {VERSION}")
    return header


def check_jsonl_header(path: str | Path) -> None:
    """What :func:`import_jsonl` checks first, without a store: the file can be read and its header line is an export
    of a version this one reads (a command that would create a database for the import checks this before)."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            first = f.readline(1 << 20)
    except OSError as exc:
        raise _file_error("read", p, exc) from None
    _header(first.decode("utf-8", errors="replace"), p)


def _read_jsonl(core: Core, path: Path) -> tuple[list[dict[str, Any]], list[_Extra]]:
    lines = _read_text(path).split("\n")
    _header(lines[0] if lines else "", path)
    records = []
    calls: list[_Extra] = []
    seen: dict[str, int] = {}
    for no, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        rec = _loads(line, where)
        if not isinstance(rec, dict):
            raise ImportFormatError(f"{where}: a record must be a JSON object")
        if "record" in rec:
            if rec["record"] in _state.KINDS:
                try:
                    calls.append(_state.check_record(core, rec))
                except InvalidInputError as exc:
                    raise ImportFormatError(f"{where}: {exc}") from exc
                continue
            if rec["record"] not in (_tool_calls.RECORD_KIND, _documents.RECORD_KIND):
                raise ImportFormatError(f"{where}: unknown record kind {v.show(rec['record'])}")
            try:
                if rec["record"] == _documents.RECORD_KIND:
                    calls.append(_documents.check_record(rec))
                else:
                    calls.append(_tool_calls.check_record(core, rec))
            except InvalidInputError as exc:
                raise ImportFormatError(f"{where}: {exc}") from exc
            continue
        checked = _check_record(core, rec, where)
        if checked["uid"] in seen:
            raise ImportFormatError(f"{where}: uid {checked['uid']} already appears on line {seen[checked['uid']]}")
        seen[checked["uid"]] = no
        checked["line"] = no
        records.append(checked)
    return records, calls


def _check_record(core: Core, rec: dict[str, Any], where: str) -> dict[str, Any]:
    missing = [
        f
        for f in ("uid", "namespace", "agent_id", "scope", "type", "content", "created_at", "updated_at")
        if f not in rec
    ]
    if missing:
        raise ImportFormatError(f"{where}: missing fields {missing}")
    unknown = sorted(set(rec) - set(_EXPORT_FIELDS) - set(_EXTRA_FIELDS) - set(_THREAD_FIELDS))
    if unknown:
        raise ImportFormatError(f"{where}: unknown fields {unknown[:10]}")
    try:
        if not isinstance(rec["uid"], str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", rec["uid"]):
            raise InvalidInputError("uid must be 1-64 characters of [A-Za-z0-9_-]")
        item = writes.prepare(
            core,
            rec["content"],
            type=rec["type"],
            agent_id=rec["agent_id"],
            scope=rec["scope"],
            namespace=rec["namespace"],
            key=rec.get("key"),
            task_signature=rec.get("task_signature"),
            tags=rec.get("tags") or [],
            importance=rec.get("importance", 0.5),
            metadata=rec.get("metadata"),
            session_id=rec.get("session_id"),
            task_id=rec.get("task_id"),
        )
        for f in ("relevance_score", "success_rate"):
            if rec.get(f) is not None:
                v.unit_float(rec[f], f)
        for f in ("error_signature", "error_template"):
            if rec.get(f) is not None:
                v.text(rec[f], f, max_bytes=4096)
        counts = {
            f: 0 if rec.get(f) is None else v.count(rec[f], f)
            for f in ("access_count", "times_applied", "times_successful", "version")
        }
        if counts["times_successful"] > counts["times_applied"]:
            raise InvalidInputError("times_successful exceeds times_applied")
        times = {f: v.timestamp(rec.get(f), f) for f in _TIME_FIELDS}
        for f in ("created_at", "updated_at"):
            if times[f] is None:
                raise InvalidInputError(f"{f} must be a UNIX timestamp")
        flags = {}
        for f in ("archived", "pinned"):
            x = rec.get(f, False)
            if x not in (True, False, 0, 1) or isinstance(x, float):
                raise InvalidInputError(f"{f} must be true or false")
            flags[f] = bool(x)
        basis, kind, links = _check_links(core, rec)
        thread = v.ident(rec.get("thread_id"), "thread_id", optional=True)
        reflected = v.timestamp(rec.get("reflected_at"), "reflected_at")
        sources = rec.get("sources") or []
        if (
            not isinstance(sources, list)
            or len(sources) > 10_000
            or not all(isinstance(u, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", u) for u in sources)
        ):
            raise InvalidInputError("sources must be a list of uids")
    except InvalidInputError as exc:
        raise ImportFormatError(f"{where}: {exc}") from exc
    template = _state._redacted(core, rec.get("error_template"))  # stored as text: redacted like everything else
    return {
        "item": item,
        "uid": rec["uid"],
        "error_signature": rec.get("error_signature"),
        "error_template": template,
        "relevance_score": 1.0 if rec.get("relevance_score") is None else float(rec["relevance_score"]),
        "success_rate": None if rec.get("success_rate") is None else float(rec["success_rate"]),
        "error_basis": basis,
        "fix_kind": kind,
        "fix_links": links,
        "thread_id": thread,
        "reflected_at": reflected,
        "sources": sources,
        **flags,
        **counts,
        **times,
    }


def import_jsonl(core: Core, path: Path) -> ImportReport:
    """Insert new records, update changed ones (matched by uid), leave equal ones: idempotent.

    Every record is validated before the single write transaction: a bad file writes nothing."""
    records, calls = _read_jsonl(core, path)
    in_file = {r["uid"] for r in records}
    for x in calls:  # history and access rows belong to a memory of the same file
        if isinstance(x, _state.StateRecord) and "memory" in x.values and x.values["memory"] not in in_file:
            raise ImportFormatError(
                f"{path}: a {x.kind} record names memory {x.values['memory']}, which is not in the file"
            )
    vectors = core.embed([r["item"].content for r in records]) if records else None
    report = ImportReport()
    try:
        with core.backend.write() as c:
            for k, r in enumerate(records):
                it = r["item"]
                row = c.execute(
                    "SELECT id, updated_at, content_hash FROM memories WHERE uid = ?", (r["uid"],)
                ).fetchone()
                if row is not None and row[1] == r["updated_at"] and row[2] == it.content_hash:
                    report.unchanged += 1
                    report.ids.append(row[0])
                    _apply_links(c, row[0], r)
                    continue
                if it.key is not None:
                    clash = c.execute(
                        "SELECT uid FROM memories WHERE namespace = ? AND agent_id = ? AND memory_type = ? AND key = ?",
                        (it.namespace, it.agent_id, it.type, it.key),
                    ).fetchone()
                    if clash is not None and clash[0] != r["uid"]:
                        raise ImportFormatError(
                            f"{path}:{r['line']}: record {r['uid']} has key {it.key!r}, already used by {clash[0]}"
                        )
                values = (
                    it.namespace,
                    it.agent_id,
                    it.scope,
                    it.type,
                    it.content,
                    it.key,
                    it.task_signature,
                    r["error_signature"],
                    r["error_template"],
                    dumps(it.tags),
                    it.importance,
                    r["relevance_score"],
                    r["access_count"],
                    r["last_accessed"],
                    r["times_applied"],
                    r["times_successful"],
                    r["success_rate"],
                    it.session_id,
                    it.task_id,
                    dumps(it.metadata),
                    it.content_hash,
                    r["created_at"],
                    r["updated_at"],
                    r["expires_at"],
                    int(r["archived"]),
                    int(r["pinned"]),
                    max(1, r["version"]),
                    int(vectors is None),
                )
                cols = (
                    "namespace, agent_id, scope, memory_type, content, key, task_signature, error_signature, "
                    "error_template, context_tags, importance, relevance_score, access_count, last_accessed, "
                    "times_applied, times_successful, success_rate, session_id, task_id, metadata, content_hash, "
                    "created_at, updated_at, expires_at, archived, pinned, version, embedding_pending"
                )
                if row is None:
                    mid = int(
                        c.execute(
                            f"INSERT INTO memories(uid, {cols}) VALUES (?{', ?' * 28}) RETURNING id",
                            (r["uid"], *values),
                        ).fetchone()[0]
                    )
                    report.inserted += 1
                else:
                    mid = row[0]
                    sets = ", ".join(f"{col.strip()} = ?" for col in cols.split(","))
                    c.execute(f"UPDATE memories SET {sets} WHERE id = ?", (*values, mid))
                    report.updated += 1
                    if vectors is None:
                        core.backend.remove_vectors([mid])
                report.ids.append(mid)
                writes._index(core, mid, it, None if vectors is None else vectors[k], archived=r["archived"])
                _apply_links(c, mid, r)
            _apply_threads(core, c, records)
            docs = [x for x in calls if isinstance(x, dict)]  # document records (after every memory: chunks by uid)
            state = [x for x in calls if isinstance(x, _state.StateRecord)]
            report.tool_calls = _tool_calls.import_records(
                c, [x for x in calls if not isinstance(x, (dict, _state.StateRecord))]
            )[0]
            try:
                report.documents = _documents.import_records(c, docs)
            except InvalidInputError as exc:
                raise ImportFormatError(f"{path}: {exc}") from exc
            if state:
                uids = {r["uid"]: mid for r, mid in zip(records, report.ids)}
                report.state = _state.import_records(core, c, state, uids)
    except BaseException:
        if core.index is not None:
            core.index.seq = None
        raise
    return report


# -- MEMORY.md -------------------------------------------------------------------------------------
# - [2026-11-22] (failure): content  <!-- hm:UID -->
# Continuation lines of multi-line content are indented by two spaces; the hm: marker ends
# the entry's last line. Years are always four digits (0999-12-31).
_BULLET = re.compile(r"^- \[(\d{4})-(\d{2})-(\d{2})\] \(([a-z][a-z0-9_]*)\): (.*)$")
_MARKER = re.compile(r"\s*<!-- hm:([A-Za-z0-9_-]{1,64}) -->\s*$")


def _date(d: datetime) -> str:
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _markdown_for(memories: list[Memory], agent_id: str, namespace: str) -> str:
    out = [
        f"# MEMORY.md: agent {agent_id}, namespace {namespace}",
        "",
        "<!-- Edit freely: change a bullet's text to edit it, delete a bullet to forget it, add",
        "     `- [YYYY-MM-DD] (type): text` bullets to remember. Keep the hm: markers. -->",
        "",
    ]
    for m in memories:
        text = m.content.replace("\n", "\n  ")
        out.append(f"- [{_date(m.created_at)}] ({m.type}): {text}  <!-- hm:{m.uid} -->")
    return "\n".join(out) + "\n"


def _agent_memories(core: Core, agent_id: str, namespace: str) -> list[Memory]:
    rows = core.backend.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE namespace = ? AND agent_id = ? AND memory_type != 'context' "
        "ORDER BY created_at, id",
        (namespace, agent_id),
    ).fetchall()
    return [row_to_memory(r) for r in rows]


def export_markdown(core: Core, agent_id: str, path: Path, *, namespace: str | None) -> int:
    ns = namespace or core.settings.namespace
    with core.backend.write() as c:
        mems = _agent_memories(core, agent_id, ns)
        text = _markdown_for(mems, agent_id, ns)
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8", newline="")
            tmp.replace(path)
        except OSError as exc:
            _discard(tmp)
            raise _file_error("write", path, exc) from exc
        _record_sync(c, core, ns, agent_id, text, [m.uid for m in mems])
    return len(mems)


def _record_sync(c, core: Core, ns: str, agent_id: str, text: str, uids: list[str]) -> None:
    c.execute(
        "INSERT INTO markdown_sync(namespace, agent_id, file_hash, uids, synced_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(namespace, agent_id) DO UPDATE SET file_hash = excluded.file_hash, uids = excluded.uids, "
        "synced_at = excluded.synced_at",
        (ns, agent_id, hashlib.sha256(text.encode()).hexdigest(), dumps(uids), core.now()),
    )


def _parse_markdown(text: str, where: Path) -> list[tuple[int, float, str, str, str | None]]:
    """``(line, created_at, type, content, uid)`` per bullet; a malformed line raises, naming it."""
    entries: list[list[Any]] = []
    in_comment = False
    raw = text.split("\n")
    crlf = len(raw) > 1 and all(x.endswith("\r") for x in raw[:-1])  # edited on Windows: every line ends in CR
    for no, line in enumerate(raw, start=1):
        line = line[:-1] if crlf and line.endswith("\r") else line
        if in_comment:
            in_comment = "-->" not in line
            continue
        if line.startswith("- "):
            m = _BULLET.match(line)
            if not m:
                raise ImportFormatError(f"{where}:{no}: bullets must read `- [YYYY-MM-DD] (type): text`")
            try:
                day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
            except ValueError as exc:
                raise ImportFormatError(
                    f"{where}:{no}: bad date {m.group(1)}-{m.group(2)}-{m.group(3)}: {exc}"
                ) from exc
            entries.append([no, day.timestamp(), m.group(4), [m.group(5)]])
        elif line.startswith("  ") and entries:
            entries[-1][3].append(line[2:])
        elif line.startswith("<!--") and "-->" not in line:
            in_comment = True
        # anything else (headings, blank lines, free text) is not a memory and is left alone
    out = []
    for no, created, mtype, lines in entries:
        tail = _MARKER.search(lines[-1])
        uid = None
        if tail:
            uid = tail.group(1)
            lines[-1] = lines[-1][: tail.start()]
        out.append((no, created, mtype, "\n".join(lines).strip(), uid))
    return out


def import_markdown(core: Core, agent_id: str, path: Path, *, namespace: str | None) -> ImportReport:
    """Apply an edited MEMORY.md: new bullets are remembered, changed ones updated (old version
    kept in history), bullets removed since the last sync forgotten. An unchanged file is skipped."""
    ns = namespace or core.settings.namespace
    text = _read_text(path)
    digest = hashlib.sha256(text.encode()).hexdigest()
    last = core.backend.execute(
        "SELECT file_hash, uids FROM markdown_sync WHERE namespace = ? AND agent_id = ?", (ns, agent_id)
    ).fetchone()
    if last is not None and last[0] == digest:
        return ImportReport(skipped_file=True)
    entries = _parse_markdown(text, path)
    prepared = []
    lines_of: dict[str, int] = {}
    for no, created, mtype, content, uid in entries:
        try:
            item = writes.prepare(core, content, type=mtype, agent_id=agent_id, namespace=ns)
        except InvalidInputError as exc:
            raise ImportFormatError(f"{path}:{no}: {exc}") from exc
        if uid is not None:
            if uid in lines_of:
                raise ImportFormatError(f"{path}:{no}: the marker hm:{uid} already appears on line {lines_of[uid]}")
            lines_of[uid] = no
        prepared.append((item, uid, created))
    seen_uids = [u for _, u, _ in prepared if u]
    vectors = core.embed([it.content for it, _, _ in prepared]) if prepared else None
    report = ImportReport()
    try:
        with core.backend.write() as c:
            existing = {m.uid: m for m in _agent_memories(core, agent_id, ns)}
            now = core.now()
            for k, (it, uid, created) in enumerate(prepared):
                vec = None if vectors is None else vectors[k]
                m = existing.get(uid) if uid else None
                if m is None and uid and c.execute("SELECT 1 FROM memories WHERE uid = ?", (uid,)).fetchone():
                    uid = None  # a marker copied from another agent's file: a new memory
                if m is None:
                    mid = writes._insert(core, it, vec, now, None)
                    # the bullet's date is the creation date, unless it is today's (keep the exact time)
                    if datetime.fromtimestamp(now, tz=UTC).date() != datetime.fromtimestamp(created, tz=UTC).date():
                        c.execute("UPDATE memories SET created_at = ? WHERE id = ?", (created, mid))
                    if uid:
                        c.execute("UPDATE memories SET uid = ? WHERE id = ?", (uid, mid))
                    report.inserted += 1
                elif m.content_hash == content_hash(it.content) and m.type == it.type:
                    report.unchanged += 1
                    mid = m.id
                else:
                    it.scope, it.key = m.scope, m.key
                    it.task_signature, it.tags, it.importance = m.task_signature, m.tags, m.importance
                    it.metadata, it.session_id, it.task_id = m.metadata, m.session_id, m.task_id
                    c.execute("UPDATE memories SET memory_type = ? WHERE id = ?", (it.type, m.id))
                    writes._update_in_place(
                        core, m.id, it, vec, now, None if m.expires_at is None else m.expires_at.timestamp()
                    )
                    report.updated += 1
                    mid = m.id
                report.ids.append(mid)
            previously = set(json.loads(last[1])) if last is not None else set()
            gone = [existing[u].id for u in previously - set(seen_uids) if u in existing]
            report.deleted = core.delete(gone)
            uids = (
                [
                    r[0]
                    for r in c.execute(
                        f"SELECT uid FROM memories WHERE id IN ({','.join('?' * len(report.ids))})", report.ids
                    )
                ]
                if report.ids
                else []
            )
            _record_sync(c, core, ns, agent_id, text, uids)
    except BaseException:
        if core.index is not None:
            core.index.seq = None
        raise
    return report
