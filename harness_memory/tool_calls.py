"""The tool-call log: which tool an agent called, with what, how it went and how long it took.

Parameters and results are redacted like everything else that is stored, and bounded: a
result (or an error) longer than ``tool_result_max_bytes`` is kept as a head-and-tail
summary with its full size recorded; parameters whose JSON exceeds
``tool_parameters_max_bytes`` are kept as a bounded preview. A failed call with an error is
signed like any error (:mod:`harness_memory.error_signatures`), so the advice for an error can
name the tools that failed with it. ``v_tool_metrics`` (migration 0011) summarises each tool;
:func:`metrics` computes the same figures for one namespace or agent.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, overload

from pydantic import BaseModel, Field

from . import validation as v
from .core import Core, dumps, error_text
from .errors import InvalidInputError
from .redact import redact_mapping, redact_text

if TYPE_CHECKING:  # pragma: no cover
    from .backend import Connection

__all__ = [
    "RECORD_KIND",
    "ToolCall",
    "ToolFailure",
    "ToolMetrics",
    "check_record",
    "export_records",
    "failing_tools",
    "import_records",
    "insert",
    "metrics",
    "prepare",
    "prune",
    "query",
]

RECORD_KIND = "tool_call"  # the "record" field of a tool call's line in a JSONL export
MAX_DURATION_MS = 1e11  # about three years: anything longer is a unit mistake
_COLUMNS = (
    "id, uid, namespace, agent_id, session_id, task_id, tool_type, tool_name, parameters, parameters_bytes, "
    "result, result_bytes, success, duration_ms, error, error_signature, error_category, created_at"
)


class ToolCall(BaseModel):
    """One logged tool call (parameters and result as stored: redacted and bounded)."""

    id: int
    uid: str
    namespace: str
    agent_id: str
    session_id: str | None = None
    task_id: str | None = None
    tool_type: str
    tool_name: str
    parameters: Any = Field(
        None,
        description="the parameters (JSON), or {'truncated': True, 'bytes': N, "
        "'preview': text} when they were over the bound",
    )
    parameters_bytes: int | None = Field(None, description="size of the parameters' JSON as given (UTF-8 bytes)")
    result: str | None = Field(None, description="the result, or a head-and-tail summary of it")
    result_bytes: int | None = Field(None, description="the full result's size in UTF-8 bytes")
    success: bool
    duration_ms: float | None = None
    error: str | None = None
    error_signature: str | None = None
    error_category: str | None = None
    created_at: datetime

    @property
    def result_truncated(self) -> bool:
        return (
            self.result is not None
            and self.result_bytes is not None
            and len(self.result.encode("utf-8")) < self.result_bytes
        )


class ToolMetrics(BaseModel):
    """Per tool: calls, successes, success rate, p50/p95 duration (nearest rank) and the last failure."""

    tool_type: str
    tool_name: str
    calls: int
    successes: int
    failures: int
    success_rate: float
    p50_ms: float | None = None
    p95_ms: float | None = None
    last_failure_at: datetime | None = None
    last_error_signature: str | None = None


class ToolFailure(BaseModel):
    """A tool that failed with an error's signature (or one linked to it)."""

    tool_type: str
    tool_name: str
    failures: int
    last_failed_at: datetime
    last_error: str | None = Field(None, description="the most recent such error, redacted and bounded")


@overload
def _dt(ts: float) -> datetime: ...
@overload
def _dt(ts: float | None) -> datetime | None: ...
def _dt(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _cut(text: str, max_bytes: int, *, tail: bool = False) -> str:
    """At most ``max_bytes`` UTF-8 bytes of ``text`` from its start (or its end), never mid-character."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    part = data[-max_bytes:] if tail else data[:max_bytes]
    return part.decode("utf-8", "ignore")


def summarise(text: str, max_bytes: int, *, redact: bool) -> tuple[str, int]:
    """``(stored text, full size in bytes)``: the text redacted, and when it is over ``max_bytes``
    its head (two thirds) and tail (one third) around a marker naming the bytes left out. Only the
    kept ends (with a margin, so a secret crossing the cut is still seen whole) are redacted: a
    huge result costs the bound, not its size."""
    size = _utf8_len(text)
    if size <= max_bytes:
        return (redact_text(text) if redact else text), size
    margin = 1024
    marker = 40
    head_b = (max_bytes - marker) * 2 // 3
    tail_b = max_bytes - marker - head_b
    head = _cut(text, head_b + margin)
    end = _cut(text, tail_b + margin, tail=True)
    if redact:
        head, end = redact_text(head), redact_text(end)
    head, end = _cut(head, head_b), _cut(end, tail_b, tail=True)
    omitted = max(0, size - _utf8_len(head) - _utf8_len(end))
    return f"{head}\n… [{omitted} bytes omitted] …\n{end}", size


def _json_value(value: Any, field: str) -> str:
    v.nesting_depth(value, field)
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"{field} must be JSON-serialisable without NaN/inf ({type(exc).__name__})") from None
    try:
        encoded.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{field} is not valid Unicode text (lone surrogates)") from exc
    return encoded


@dataclass
class ToolCallInput:
    """A validated, redacted, bounded tool call ready to be written."""

    uid: str
    namespace: str
    agent_id: str
    session_id: str | None
    task_id: str | None
    tool_type: str
    tool_name: str
    parameters: str | None
    parameters_bytes: int | None
    result: str | None
    result_bytes: int | None
    success: bool
    duration_ms: float | None
    error: str | None
    error_signature: str | None
    error_category: str | None
    created_at: float

    def row(self) -> tuple[Any, ...]:
        return (
            self.uid,
            self.namespace,
            self.agent_id,
            self.session_id,
            self.task_id,
            self.tool_type,
            self.tool_name,
            self.parameters,
            self.parameters_bytes,
            self.result,
            self.result_bytes,
            int(self.success),
            self.duration_ms,
            self.error,
            self.error_signature,
            self.error_category,
            self.created_at,
        )


def _bounded_parameters(core: Core, parameters: Any, field: str = "parameters") -> tuple[str | None, int | None]:
    if parameters is None:
        return None, None
    if not isinstance(parameters, (Mapping, list, tuple)):
        raise InvalidInputError(f"{field} must be a mapping or a list (JSON), got {type(parameters).__name__}")
    encoded = _json_value(dict(parameters) if isinstance(parameters, Mapping) else list(parameters), field)
    size = _utf8_len(encoded)
    s = core.settings
    if size <= s.tool_parameters_max_bytes:
        value = json.loads(encoded)
        if s.redact_secrets:
            value = redact_mapping(value)
        return dumps(value), size
    preview, _ = summarise(encoded, s.tool_parameters_max_bytes - 80, redact=s.redact_secrets)
    return dumps({"truncated": True, "bytes": size, "preview": preview}), size


def _duration(value: Any) -> float | None:
    if value is None:
        return None
    d = v.number(value, "duration_ms", lo=0, hi=MAX_DURATION_MS)
    if not math.isfinite(d):
        raise InvalidInputError("duration_ms must be finite")
    return d


def prepare(
    core: Core,
    tool_name: Any,
    *,
    agent_id: Any,
    success: Any,
    tool_type: Any = "builtin",
    parameters: Any = None,
    result: Any = None,
    duration_ms: Any = None,
    error: Any = None,
    namespace: Any = None,
    session_id: Any = None,
    task_id: Any = None,
) -> ToolCallInput:
    """Validate, redact, bound and (for a failed call with an error) sign one tool call. Everything
    is checked before the error is signed (signing may learn a template)."""
    s = core.settings
    tool_name = v.ident(tool_name, "tool_name")
    tool_type = v.ident(tool_type, "tool_type")
    agent = v.ident(agent_id, "agent_id")
    success = v.boolean(success, "success")
    ns = v.ident(namespace, "namespace", optional=True) or s.namespace
    session_id = v.ident(session_id, "session_id", optional=True)
    task_id = v.ident(task_id, "task_id", optional=True)
    duration = _duration(duration_ms)
    params, params_bytes = _bounded_parameters(core, parameters)
    res = res_bytes = None
    if result is not None:
        if not isinstance(result, str):
            result = _json_value(result, "result")
        elif "\x00" in result:
            result = result.replace("\x00", "")
        try:
            result.encode("utf-8")
        except UnicodeEncodeError:
            result = result.encode("utf-8", "replace").decode("utf-8")
        res, res_bytes = summarise(result, s.tool_result_max_bytes, redact=s.redact_secrets)
    err = sig = category = None
    if error is not None:
        if success:
            raise InvalidInputError("error is for failed calls: pass success=False with it")
        error = error_text(error)
        err, _ = summarise(error, s.tool_result_max_bytes, redact=s.redact_secrets)
        signed = core.sign(error)
        sig, category = signed.id, signed.category
    return ToolCallInput(
        uid=uuid.uuid4().hex,
        namespace=ns,
        agent_id=agent,
        session_id=session_id,
        task_id=task_id,
        tool_type=tool_type,
        tool_name=tool_name,
        parameters=params,
        parameters_bytes=params_bytes,
        result=res,
        result_bytes=res_bytes,
        success=success,
        duration_ms=duration,
        error=err,
        error_signature=sig,
        error_category=category,
        created_at=core.now(),
    )


def _insert_sql() -> str:
    cols = _COLUMNS.replace("id, uid", "uid", 1)
    return f"INSERT INTO tool_calls({cols}) VALUES ({', '.join('?' * 17)})"


def insert(core: Core, item: ToolCallInput) -> ToolCall:
    """Write one tool call (its own transaction, or the caller's)."""
    with core.backend.write() as c:
        new_id = int(c.execute(_insert_sql() + " RETURNING id", item.row()).fetchone()[0])
    return _row_to_call((new_id, *item.row()))


def _row_to_call(r: Sequence[Any]) -> ToolCall:
    return ToolCall(
        id=r[0],
        uid=r[1],
        namespace=r[2],
        agent_id=r[3],
        session_id=r[4],
        task_id=r[5],
        tool_type=r[6],
        tool_name=r[7],
        parameters=None if r[8] is None else json.loads(r[8]),
        parameters_bytes=r[9],
        result=r[10],
        result_bytes=r[11],
        success=bool(r[12]),
        duration_ms=r[13],
        error=r[14],
        error_signature=r[15],
        error_category=r[16],
        created_at=_dt(r[17]),
    )


def _where(
    namespace: str | None,
    agent_id: str | None,
    tool_name: str | None = None,
    task_id: str | None = None,
    success: bool | None = None,
    since: float | None = None,
) -> tuple[str, list[Any]]:
    conds: list[str] = []
    params: list[Any] = []
    for col, val in (("namespace", namespace), ("agent_id", agent_id), ("tool_name", tool_name), ("task_id", task_id)):
        if val is not None:
            conds.append(f"{col} = ?")
            params.append(val)
    if success is not None:
        conds.append("success = ?")
        params.append(int(success))
    if since is not None:
        conds.append("created_at >= ?")
        params.append(since)
    return (" AND ".join(conds) or "1 = 1"), params


def query(
    core: Core,
    *,
    namespace: str | None,
    agent_id: str | None,
    tool_name: str | None,
    task_id: str | None,
    success: bool | None,
    since: float | None,
    limit: int,
) -> list[ToolCall]:
    """Tool calls matching every given filter, newest first."""
    where, params = _where(namespace, agent_id, tool_name, task_id, success, since)
    rows = core.backend.execute(
        f"SELECT {_COLUMNS} FROM tool_calls WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit)
    ).fetchall()
    return [_row_to_call(r) for r in rows]


def _nearest_rank(sorted_values: list[float], p: float) -> float | None:
    """The smallest value whose rank is at least ``p * n`` (the view's definition)."""
    n = len(sorted_values)
    for rank, x in enumerate(sorted_values, start=1):
        if rank >= p * n:
            return x
    return None


def metrics(core: Core, *, namespace: str | None = None, agent_id: str | None = None) -> list[ToolMetrics]:
    """``v_tool_metrics``'s figures over the calls of one namespace and/or agent (all when None)."""
    where, params = _where(namespace, agent_id)
    rows = core.backend.execute(
        f"SELECT tool_type, tool_name, success, duration_ms, created_at, error_signature, id FROM tool_calls "
        f"WHERE {where} ORDER BY tool_type, tool_name",
        params,
    ).fetchall()
    groups: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for r in rows:
        groups.setdefault((r[0], r[1]), []).append(r)
    out = []
    for (ttype, name), rs in groups.items():
        calls = len(rs)
        ok = sum(int(r[2]) for r in rs)
        durations = sorted(float(r[3]) for r in rs if r[3] is not None)
        failed = [r for r in rs if not r[2]]
        last = max(failed, key=lambda r: (r[4], r[6])) if failed else None
        out.append(
            ToolMetrics(
                tool_type=ttype,
                tool_name=name,
                calls=calls,
                successes=ok,
                failures=calls - ok,
                success_rate=round(ok / calls, 4),
                p50_ms=_nearest_rank(durations, 0.5),
                p95_ms=_nearest_rank(durations, 0.95),
                last_failure_at=_dt(last[4]) if last else None,
                last_error_signature=last[5] if last else None,
            )
        )
    out.sort(key=lambda m: (-m.calls, m.tool_name, m.tool_type))
    return out


def failing_tools(core: Core, signatures: Iterable[str], *, namespace: str, limit: int = 5) -> list[ToolFailure]:
    """Tools whose failed calls in ``namespace`` carry one of ``signatures``, most failures first.
    Aggregated over every agent (tool names and counts only, as the technique ledger is shared)."""
    sigs = sorted(set(signatures))
    if not sigs:
        return []
    marks = ",".join("?" * len(sigs))
    rows = core.backend.execute(
        f"SELECT tool_type, tool_name, COUNT(*), MAX(created_at) FROM tool_calls WHERE namespace = ? AND success = 0 "
        f"AND error_signature IN ({marks}) GROUP BY tool_type, tool_name ORDER BY COUNT(*) DESC, MAX(created_at) DESC "
        "LIMIT ?",
        (namespace, *sigs, limit),
    ).fetchall()
    out = []
    for ttype, name, n, last in rows:
        err = core.backend.execute(
            f"SELECT error FROM tool_calls WHERE namespace = ? AND tool_type = ? AND tool_name = ? AND success = 0 "
            f"AND error_signature IN ({marks}) ORDER BY created_at DESC, id DESC LIMIT 1",
            (namespace, ttype, name, *sigs),
        ).fetchone()
        out.append(
            ToolFailure(
                tool_type=ttype,
                tool_name=name,
                failures=int(n),
                last_failed_at=_dt(last),
                last_error=err[0] if err else None,
            )
        )
    return out


def prune(core: Core, cutoff: float, *, dry_run: bool = False) -> int:
    """Delete (or with ``dry_run`` count) the tool calls logged before ``cutoff``."""
    if dry_run:
        return int(
            core.backend.execute("SELECT COUNT(*) FROM tool_calls WHERE created_at < ?", (cutoff,)).fetchone()[0]
        )
    with core.backend.write() as c:
        return int(c.execute("DELETE FROM tool_calls WHERE created_at < ?", (cutoff,)).rowcount)


# -- export / import ---------------------------------------------------------------------------------
_FIELDS = (
    "uid",
    "namespace",
    "agent_id",
    "session_id",
    "task_id",
    "tool_type",
    "tool_name",
    "parameters",
    "parameters_bytes",
    "result",
    "result_bytes",
    "success",
    "duration_ms",
    "error",
    "error_signature",
    "error_category",
    "created_at",
)


def export_records(core: Core, *, namespace: str | None, agent_id: str | None) -> list[dict[str, Any]]:
    """Every tool call of the namespace / agent as export records (``record: "tool_call"``), oldest first."""
    where, params = _where(namespace, agent_id)
    rows = core.backend.execute(f"SELECT {_COLUMNS} FROM tool_calls WHERE {where} ORDER BY id", params).fetchall()
    out = []
    for r in rows:
        rec = dict(zip(_FIELDS, r[1:]))
        rec["parameters"] = None if rec["parameters"] is None else json.loads(rec["parameters"])
        rec["success"] = bool(rec["success"])
        out.append({"record": RECORD_KIND, **rec})
    return out


def check_record(core: Core, rec: dict[str, Any]) -> ToolCallInput:
    """A tool call record of an export, validated and redacted again (raises InvalidInputError)."""
    unknown = sorted(set(rec) - set(_FIELDS) - {"record"})
    if unknown:
        raise InvalidInputError(f"unknown fields {unknown[:10]}")
    missing = [
        f
        for f in ("uid", "namespace", "agent_id", "tool_type", "tool_name", "success", "created_at")
        if rec.get(f) is None
    ]
    if missing:
        raise InvalidInputError(f"missing fields {missing}")
    if not isinstance(rec["uid"], str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", rec["uid"]):
        raise InvalidInputError("uid must be 1-64 characters of [A-Za-z0-9_-]")
    s = core.settings
    created = v.timestamp(rec["created_at"], "created_at")
    params = params_bytes = None
    if rec.get("parameters") is not None:
        params, _ = _bounded_parameters(core, rec["parameters"])
        params_bytes = (
            v.count(rec["parameters_bytes"], "parameters_bytes") if rec.get("parameters_bytes") is not None else None
        )
    res = res_bytes = None
    if rec.get("result") is not None:
        res, size = summarise(
            v.text(rec["result"], "result", max_bytes=1 << 24, allow_empty=True),
            s.tool_result_max_bytes,
            redact=s.redact_secrets,
        )
        res_bytes = (
            max(size, v.count(rec["result_bytes"], "result_bytes")) if rec.get("result_bytes") is not None else size
        )
    err = None
    if rec.get("error") is not None:
        err, _ = summarise(
            v.text(rec["error"], "error", max_bytes=1 << 24), s.tool_result_max_bytes, redact=s.redact_secrets
        )
    success = rec["success"]
    if success not in (True, False, 0, 1) or isinstance(success, float):
        raise InvalidInputError("success must be true or false")
    sig = (
        None if rec.get("error_signature") is None else v.text(rec["error_signature"], "error_signature", max_bytes=200)
    )
    cat = None if rec.get("error_category") is None else v.ident(rec["error_category"], "error_category")
    return ToolCallInput(
        uid=rec["uid"],
        namespace=v.ident(rec["namespace"], "namespace"),
        agent_id=v.ident(rec["agent_id"], "agent_id"),
        session_id=v.ident(rec.get("session_id"), "session_id", optional=True),
        task_id=v.ident(rec.get("task_id"), "task_id", optional=True),
        tool_type=v.ident(rec["tool_type"], "tool_type"),
        tool_name=v.ident(rec["tool_name"], "tool_name"),
        parameters=params,
        parameters_bytes=params_bytes,
        result=res,
        result_bytes=res_bytes,
        success=bool(success),
        duration_ms=_duration(rec.get("duration_ms")),
        error=err,
        error_signature=sig,
        error_category=cat,
        created_at=created or 0.0,
    )


def import_records(conn: Connection, items: Sequence[ToolCallInput]) -> tuple[int, int]:
    """Insert the tool calls not yet present (matched by uid; a log record never changes):
    ``(inserted, unchanged)``. Runs in the caller's transaction."""
    inserted = 0
    for it in items:
        if conn.execute("SELECT 1 FROM tool_calls WHERE uid = ?", (it.uid,)).fetchone():
            continue
        conn.execute(_insert_sql(), it.row())
        inserted += 1
    return inserted, len(items) - inserted
