"""Shared state and helpers used by the store's focused modules (writes, recall, portability)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .backend import Backend
from .embedders import Embedder, check_vectors
from .error_signatures import (
    ENVIRONMENT_CATEGORIES,
    RECURSION,
    ErrorSignature,
    TemplateMiner,
    categorize,
    categorize_learned,
    extract,
    mask_params,
    tokenize,
)
from .errors import EmbedderError, EmbedderMismatchError, InvalidInputError, MemoryNotFoundError
from .failure_excerpt import Baseline, Excerpt
from .memory_types import TypeRegistry
from .models import MEMORY_COLUMNS, Memory, row_to_memory
from .redact import redact
from .settings import Settings
from .vector_index import VectorIndex

if TYPE_CHECKING:  # pragma: no cover
    from .access_writer import AccessWriter


def content_hash(content: str) -> str:
    """Hash of the content with whitespace runs collapsed (the exact-duplicate key)."""
    return hashlib.sha256(" ".join(content.split()).encode("utf-8")).hexdigest()


@dataclass
class Core:
    backend: Backend
    settings: Settings
    embedder: Embedder
    types: TypeRegistry
    clock: Callable[[], float] = time.time
    index: VectorIndex | None = None
    vectors_enabled: bool = True  # False while the stored vectors belong to another embedder
    # (name, dimensions) the database recorded when this store bound its embedder: another
    # process's reembed() changes the record, and this process must not mix vector spaces
    embedder_record: tuple[str, int] | None = None

    # recall's access bookkeeping, written by a thread of the store (access_writer.AccessWriter)
    access: AccessWriter | None = None

    _miner: TemplateMiner | None = None
    _signed: dict = field(default_factory=dict)

    def now(self) -> float:
        return float(self.clock())

    @property
    def miner(self) -> TemplateMiner:
        if self._miner is None:
            self._miner = TemplateMiner(self.backend, self.clock)
        return self._miner

    def sign(self, text: str, baseline: str | None = None) -> ErrorSignature:
        """Signature of raw error text (excerpt, mask, online template mining).

        The same text signed again (``on_task_error`` passes one log to several verbs) is a
        cache hit keyed by the text's length and hash (``str`` caches its hash), so a whole
        log is read once."""
        key = _text_key(text, baseline)
        miner = self.miner
        miner._refresh()
        got = self._signed.get(key)
        if got is not None and got[0] == miner._rev:  # templates unchanged since: the same answer
            return got[1]
        signed = self._sign(text, baseline)
        self._signed[key] = (miner._rev, signed)
        if len(self._signed) > 16:
            self._signed.pop(next(iter(self._signed)))
        return signed

    def prime(self, text: str, signed: ErrorSignature) -> None:
        """Make ``signed`` the answer for ``text`` (one call signs a log once, with its baseline)."""
        self._signed[_text_key(text, None)] = (self.miner._rev, signed)

    def _sign(self, text: str, baseline: str | None = None) -> ErrorSignature:
        ex = extract(text, None if baseline is None else Baseline(baseline, _line_key))
        if self.settings.redact_secrets:  # the excerpt is stored (templates, memories, attempts): no secrets
            same = ex.block == ex.message
            ex.message = redact(ex.message)[0]
            ex.block = ex.message if same else redact(ex.block)[0]
        rules = categorize(ex)
        category = categorize_learned(ex, rules)
        # a category the learned fallback guessed names the error but does not regroup it: whether the key frame
        # is dropped (an error about the environment) is the rules' decision alone
        sig, tpl, params = self.sign_message(ex.message, ex.frame, category, ex.exception, ex.joins, keyed_as=rules)
        return ErrorSignature(
            id=sig,
            template=" ".join(tpl),
            category=category,
            params=params,
            exception=ex.exception,
            frame=ex.frame,
            excerpt=ex.block or ex.message[:2000],
            excerpt_lines=ex.lines,
            message=ex.message[:2000],
            origin=_origin(ex),
        )

    def sign_message(
        self,
        message: str,
        frame: str | None,
        category: str,
        exception: str | None,
        joins: Sequence[str] = (),
        keyed_as: str | None = None,
    ) -> tuple[str, list[str], list[str]]:
        """``(signature id, template tokens, params)`` of a decisive message already cut out;
        ``joins``: where else the same failure is signed (``Excerpt.joins``, a test method); ``keyed_as``: the
        category that decides whether the key frame is kept (``category`` when not given)."""
        masked, params = mask_params(message[:2000])
        # an error about the environment (a missing module, a refused connection, a timeout) is
        # the same error wherever the code met it: its key frame does not split the signature
        keyed = category if keyed_as is None else keyed_as
        key_frame = None if keyed in ENVIRONMENT_CATEGORIES and not RECURSION.search(message[:2000]) else frame
        sig, tpl = self.miner.sign(tokenize(masked), key_frame, category, exception, joins if key_frame else ())
        return sig, tpl, params

    # -- embedding -----------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray | None:
        """Unit vectors for ``texts``, or None when the embedder fails and the policy is
        'pending' (the caller stores keyword-only and flags the rows for backfill)."""
        if not self.vectors_enabled:
            return None
        self.check_embedder()
        try:
            return check_vectors(self.embedder, texts, self.embedder.embed_batch(list(texts)))
        except EmbedderError:
            if self.settings.embed_failure == "raise":
                raise
            return None
        except Exception as exc:  # an embedder is user code: any failure becomes an EmbedderError
            if self.settings.embed_failure == "raise":
                raise EmbedderError(f"embedder {self.embedder.name!r} failed: {exc}") from exc
            return None

    def check_embedder(self) -> None:
        """Before vectors are made for a write or a query: has another process re-embedded the
        store with another embedder since this one bound it? (one read by primary key)"""
        if self.embedder_record is None:
            return
        row = self.backend.execute("SELECT name, dimensions FROM embedder_info WHERE id = 1").fetchone()
        if row is not None and (row[0], int(row[1])) != self.embedder_record:
            raise EmbedderMismatchError(
                f"the database was re-embedded with {row[0]!r} ({row[1]} dimensions) since this store opened it "
                f"with {self.embedder_record[0]!r} ({self.embedder_record[1]}): reopen the MemoryStore (with the "
                "new embedder configured, or none to use the recorded one)"
            )

    def put_vector(self, m: Memory | tuple, vector: np.ndarray) -> None:
        if isinstance(m, Memory):
            args = (m.id, m.namespace, m.agent_id, m.scope, m.type, m.archived)
        else:
            args = m
        self.backend.put_vector(*args, vector)

    # -- reads ---------------------------------------------------------------------------
    def fetch(self, ids: Sequence[int], where: str = "TRUE", params: Sequence[Any] = ()) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        ids = list(ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            q = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}"
            for r in self.backend.execute(q, (*chunk, *params)):
                out[r[0]] = row_to_memory(r)
        return out

    def get(self, memory_id: int, agent_id: str | None = None) -> Memory:
        m = self.fetch([memory_id]).get(memory_id)
        if m is None or (agent_id is not None and m.scope != "global" and m.agent_id != agent_id):
            raise MemoryNotFoundError(
                f"no memory with id {memory_id}" + (f" visible to agent {agent_id!r}" if agent_id else "")
            )
        return m

    def visibility(self, agent_id: str | None, include_global: bool) -> tuple[str, list[Any]]:
        """SQL (on alias m) for what an agent may see: its own memories and global ones."""
        if agent_id is None:
            return "m.scope = 'global'", []
        if include_global:
            return "(m.agent_id = ? OR m.scope = 'global')", [agent_id]
        return "m.agent_id = ?", [agent_id]

    # -- deletes -------------------------------------------------------------------------
    def delete(self, ids: Sequence[int], *, bulk: bool = False) -> int:
        """Delete memories with their FTS rows, vectors, tags, history and log rows (caller holds a write tx).
        ``bulk``: a batch of a bulk delete; where the backend can (SQLite), the vector rows are
        left for the compact job to purge (``remove_vectors_later``), gone for every reader now."""
        ids = list(ids)
        if not ids:
            return 0
        self.backend.unindex_text(ids)
        later = getattr(self.backend, "remove_vectors_later", None) if bulk else None
        (later or self.backend.remove_vectors)(ids)
        c = self.backend.conn
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            c.execute(f"DELETE FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        return len(ids)

    def log(
        self,
        memory_ids: Sequence[int],
        access_type: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        task_id: str | None = None,
        was_helpful: bool | None = None,
        outcome: str | None = None,
        scores: Sequence[float] | None = None,
        error_signature: str | None = None,
        duration_ms: float | None = None,
        task_signature: str | None = None,
        error_origin: str | None = None,
        error_line: str | None = None,
        error_instance: str | None = None,
        at: float | None = None,
    ) -> None:
        """Access-log rows, one per memory; ``duration_ms`` (a recall's wall time) goes on the first row only;
        ``task_signature`` and ``error_origin``: the task and the error's origin an advice was given for (a
        later credit lands on links of that task and origin); ``error_line`` and ``error_instance``: the decisive line and the
        failure block of that error (``fixes.instance_line``, ``fixes.instance_text``: which instance of a shared
        signature a credit was given for); ``at``: the
        rows' time (default: now)."""
        self.insert_log(
            log_rows(
                memory_ids,
                access_type,
                self.now() if at is None else at,
                agent_id=agent_id,
                session_id=session_id,
                task_id=task_id,
                was_helpful=was_helpful,
                outcome=outcome,
                scores=scores,
                error_signature=error_signature,
                duration_ms=duration_ms,
                task_signature=task_signature,
                error_origin=error_origin,
                error_line=error_line,
                error_instance=error_instance,
            )
        )

    def insert_log(self, rows: list[tuple]) -> None:
        """Insert :func:`log_rows` (of one call or several) in one statement."""
        self.backend.conn.executemany(
            "INSERT INTO memory_access_log(memory_id, agent_id, session_id, task_id, access_type, was_helpful, "
            "outcome, score, timestamp, error_signature, duration_ms, task_signature, error_origin, error_line, "
            "error_instance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def log_rows(
    memory_ids: Sequence[int],
    access_type: str,
    at: float,
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    task_id: str | None = None,
    was_helpful: bool | None = None,
    outcome: str | None = None,
    scores: Sequence[float] | None = None,
    error_signature: str | None = None,
    duration_ms: float | None = None,
    task_signature: str | None = None,
    error_origin: str | None = None,
    error_line: str | None = None,
    error_instance: str | None = None,
) -> list[tuple]:
    """The access-log rows :meth:`Core.log` writes, one per memory, at time ``at``."""
    return [
        (
            mid,
            agent_id,
            session_id,
            task_id,
            access_type,
            None if was_helpful is None else int(was_helpful),
            outcome,
            None if scores is None else scores[k],
            at,
            error_signature,
            duration_ms if k == 0 else None,
            task_signature,
            error_origin,
            error_line,
            error_instance,
        )
        for k, mid in enumerate(memory_ids)
    ]


def _origin(ex: Excerpt) -> str | None:
    """Where the failing run started: the outermost application frame of the decisive stack trace
    (Python lists it first, as ``file:function``: its file; Java last, as ``pkg.Class.method``: its
    class). A failure that recurs in one script or test class after each edit keeps its origin
    while its message changes."""
    if not ex.frames:
        return None
    if ex.kind == "python":
        where = ex.frames[0].rsplit(":", 1)[0]
    elif ex.kind == "java":
        where = ex.frames[-1].rsplit(".", 1)[0]  # (a name without a dot is kept whole)
    else:
        return None
    return where[:300] or None


def _text_key(text: str, baseline: str | None) -> tuple:
    """The sign cache's key: length, hash (cached by ``str``) and both ends of the text."""
    return (len(text), hash(text), text[:64], text[-64:], None if baseline is None else (len(baseline), hash(baseline)))


def _line_key(line: str) -> str:
    """A log line as the baseline compares it: masked and tokenised like a signature."""
    return " ".join(tokenize(mask_params(line.strip()[:2000])[0]))


def signature_basis(signed: ErrorSignature) -> str:
    """What a signature was made from, as stored JSON: enough to re-sign it with a later method."""
    return dumps(
        {
            "message": signed.message,
            "frame": signed.frame,
            "exception": signed.exception,
            "category": signed.category,
            "excerpt": signed.excerpt[:2000],
        }
    )


def error_text(value: Any, field: str = "error") -> str:
    """Validate raw error text: any size (a whole CI log is ordinary: the signer reads a bounded
    window of it, see docs/signatures.md); NUL characters, which real logs carry, are dropped."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        value = value.replace("\x00", "")
    if not value or value.isspace():  # as ``not value.strip()``, without copying a whole log
        raise InvalidInputError(f"{field} must not be empty")
    if value.isascii():  # known to the string object: no scan, and no surrogate is possible
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")  # lone surrogates from a bad decode
    return value


# the encoder json.dumps would build on every call with these options, made once (~5 us of a write's)
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True)


def dumps(obj: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False, allow_nan=False, sort_keys=True)``: the same text and the same
    errors; an empty mapping or list written directly (most rows' tags and metadata)."""
    if type(obj) is dict and not obj:
        return "{}"
    if type(obj) is list and not obj:
        return "[]"
    return _JSON.encode(obj)
