"""MemoryStore: the one facade. Its verbs validate input and call into focused modules."""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import recall as _recall, validation as v, writes
from .access_writer import AccessWriter
from .backend import open_backend, parse_target
from .core import Core, error_text, signature_basis
from .embedders import Embedder, embedder_from_name
from .error_signatures import ErrorSignature
from .errors import (
    ConfigurationError,
    DatabaseLockedError,
    DatabaseOpenError,
    DatabaseReadOnlyError,
    EmbedderError,
    EmbedderMismatchError,
    InvalidInputError,
    MemoryNotFoundError,
    StorageError,
)
from .memory_types import TypeRegistry
from .migrate import migrate
from .models import MEMORY_COLUMNS, Memory, RecallHit, row_to_memory
from .redact import redact
from .settings import Settings, from_environment
from .sqlite_backend import DatabaseError
from .tasks import task_signature as _task_signature
from .vector_index import VectorIndex

if TYPE_CHECKING:
    from . import portability, tool_calls as _tool_calls
    from .fixes import FixEvidence
    from .ledger import Attempt, TechniqueDecision

__all__ = ["MemoryStore"]


def _storage_error(exc: BaseException, path: Path | str) -> StorageError:
    """The typed error for a driver or OS error met while opening ``path``."""
    msg = str(exc)
    low = msg.lower()
    if isinstance(exc, OSError):
        return DatabaseOpenError(f"cannot open {path}: {exc.strerror or msg}")
    if "locked" in low or "busy" in low:
        return DatabaseLockedError(f"{path} is locked by another process (waited busy_timeout_ms): {msg}")
    if "readonly" in low or "read-only" in low or "read only" in low:
        return DatabaseReadOnlyError(f"{path} is read-only (the file or its folder, where SQLite keeps the WAL): {msg}")
    if "not a database" in low or "malformed" in low or "unable to open" in low or "disk i/o" in low:
        return DatabaseOpenError(f"cannot open {path} as a harness-memory database: {msg}")
    return StorageError(f"{path}: {type(exc).__name__}: {msg}")


# the arguments each job takes besides dry_run, holder and min_interval
_JOB_ARGS: dict[str, set[str]] = {
    "decay": {"progress"},
    "consolidate": {"namespace", "summariser", "progress"},
    "compact": {"force", "vacuum"},
    "expire": set(),
    "backfill": set(),
    "consolidate_growth": set(),
    "resign": {"batch_size", "force"},
    "reflect": {"namespace", "summariser"},
}


def _task_model(task: Any) -> dict[str, Any]:
    """A task as ``on_task_error`` reads it (the lifecycle ``Task``), so a fix taught with a task
    and an advice asked for it agree on its signature."""
    from .lifecycle import Task

    if isinstance(task, Task):
        return task.model_dump()
    if isinstance(task, Mapping):
        return v.model(Task, {"id": "task", **task}, "task").model_dump()
    raise InvalidInputError("task must be a title string, a mapping or a Task")


def _batch_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
        raise InvalidInputError("batch_size must be an int from 1 to 100,000")
    return value


class MemoryStore:
    """A harness's memory in one SQLite file.

    ``MemoryStore(path)`` opens or creates the database (schema migrated on open). Use it
    as a context manager or call :meth:`close`. ``embedder`` defaults to the one named in
    the settings (the offline hashing embedder). ``clock`` returns UNIX seconds (for tests).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        clock: Callable[[], float] | None = None,
        allow_embedder_change: bool = False,
    ):
        self._closed = True  # until fully open: close() is then a no-op
        self._scheduler: Any = None  # an APScheduler BackgroundScheduler once started
        self._watchers: list = []
        if settings is None:
            settings = from_environment()
        elif not isinstance(settings, Settings):
            raise InvalidInputError(f"settings must be a Settings, got {type(settings).__name__}")
        self.settings = settings
        self._target = parse_target(path, "path") if path is not None else parse_target(self.settings.db, "settings.db")
        # the file, or for a server the URL without its password (what messages may show)
        self.path: Path | str = self._target.path if self._target.path is not None else self._target.display()
        if clock is not None and not callable(clock):
            raise InvalidInputError("clock must be a callable returning UNIX seconds")
        v.boolean(allow_embedder_change, "allow_embedder_change")
        # no embedder given or configured: the database's recorded one is used (see _check_embedder)
        self._embedder_configured = embedder is not None or "embedder" in self.settings.model_fields_set
        if embedder is None:
            embedder = embedder_from_name(
                self.settings.embedder, base_url=self.settings.embedder_base_url, api_key=self.settings.embedder_api_key
            )
        if not isinstance(embedder, Embedder):
            raise InvalidInputError("embedder must have name, dimensions and embed_batch()")
        if isinstance(self.path, Path) and self.path.is_dir():
            raise DatabaseOpenError(f"{self.path} is a directory, not a database file")
        if self._target.kind != "postgresql" and self._target.path is not None and not self._target.path.exists():
            from .sqlite_fresh import create

            create(self._target.path)  # a copy of the migrated schema when this process made a new store before
        try:
            backend = open_backend(
                self._target,
                busy_timeout_ms=self.settings.busy_timeout_ms,
                connect_timeout=self.settings.connect_timeout,
                pool_size=self.settings.pool_size,
            )
        except (DatabaseError, OSError) as exc:
            raise _storage_error(exc, self.path) from exc
        try:
            migrate(backend)
            self._core = Core(
                backend=backend,
                settings=self.settings,
                embedder=embedder,
                types=TypeRegistry(self.settings.extra_types),
                clock=clock or time.time,
            )
            self._bind_embedder(allow_embedder_change)
            self._core.access = AccessWriter(self._core, _recall.write_access)
            # a store left open at the interpreter's exit still writes its recalls' bookkeeping
            self._at_exit = weakref.finalize(self, self._core.access.close)
            backend.check_writable()  # a read-only database opens fine and fails at the first write: tell now
        except (backend.DatabaseError, OSError) as exc:
            backend.close()
            raise _storage_error(exc, self.path) from exc
        except BaseException:
            backend.close()
            raise
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------
    def _bind_embedder(self, allow_change: bool) -> None:
        b = self._core.backend
        row = b.execute("SELECT name, dimensions FROM embedder_info WHERE id = 1").fetchone()
        if row is None or not b.table_exists(b.VEC_TABLE):  # a new database: the only write of an open
            self._record_embedder()
            row = b.execute("SELECT name, dimensions FROM embedder_info WHERE id = 1").fetchone()
        self._check_embedder(row, allow_change)

    def _record_embedder(self) -> None:
        core, b, e = self._core, self._core.backend, self._core.embedder
        with b.write() as c:
            row = c.execute("SELECT name, dimensions FROM embedder_info WHERE id = 1").fetchone()
            if row is None:
                c.execute(
                    "INSERT INTO embedder_info(id, name, dimensions, recorded_at) VALUES (1, ?, ?, ?)",
                    (e.name, e.dimensions, core.now()),
                )
                b.create_vector_table(e.dimensions)
                row = (e.name, e.dimensions)
            elif not b.table_exists(b.VEC_TABLE):
                b.create_vector_table(row[1])

    def _recorded_embedder(self, row) -> Embedder | None:
        """The embedder the database records, when its name can be built here (None otherwise)."""
        try:
            e = embedder_from_name(
                row[0], base_url=self.settings.embedder_base_url, api_key=self.settings.embedder_api_key
            )
        except (ConfigurationError, EmbedderError, OSError, ValueError):  # e.g. a model not installed here
            return None
        return e if (e.name, e.dimensions) == (row[0], row[1]) else None

    def _check_embedder(self, row, allow_change: bool) -> None:
        core, e = self._core, self._core.embedder
        if (row[0], row[1]) != (e.name, e.dimensions) and not allow_change and not self._embedder_configured:
            recorded = self._recorded_embedder(row)
            if recorded is not None:
                core.embedder = e = recorded
        if (row[0], row[1]) != (e.name, e.dimensions):
            if not allow_change:
                raise EmbedderMismatchError(
                    f"{self.path} holds vectors made by {row[0]!r} ({row[1]} dimensions), but the configured embedder "
                    f"is {e.name!r} ({e.dimensions}); run `harness-memory reembed --db {self.path}` to re-embed "
                    f"everything with the new one, or configure the old embedder (HARNESS_MEMORY_EMBEDDER={row[0]})"
                )
            core.vectors_enabled = False  # until reembed(): writes are keyword-only + pending
        else:
            core.embedder_record = (row[0], int(row[1]))
        if self.settings.vector_search == "memory" and core.vectors_enabled and core.backend.local_vector_index:
            core.index = VectorIndex(e.dimensions)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                if self._core.access is not None:
                    self._at_exit.detach()
                    self._core.access.close()  # the recalls' bookkeeping not written yet
            finally:
                self._close_rest()

    def _settle(self) -> None:
        """Write this process's pending recall bookkeeping first (``AccessWriter.settle``: never waiting
        for another writer), so a verb after a recall sees it as the recall left it."""
        if self._core.access is not None:
            self._core.access.settle()

    def _close_rest(self) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=True)
            self._scheduler = None
        for w in self._watchers:
            w.stop()
        self._watchers.clear()
        self._core.backend.close()

    # -- maintenance ------------------------------------------------------------------------------
    def run_job(self, name: str, **kwargs: Any):
        """Run one maintenance job now (decay, expire, consolidate, compact, backfill), under a
        lease, recorded in ``job_runs``; returns the run with its counts."""
        self._settle()
        from .jobs import JOBS, run_job

        if not isinstance(name, str) or name not in JOBS:
            raise InvalidInputError(
                f"unknown job {name!r}; jobs: {', '.join(sorted(JOBS))}"
                if isinstance(name, str)
                else "job name must be a string"
            )
        allowed = {"dry_run", "holder", "min_interval"} | _JOB_ARGS.get(name, set())
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            raise InvalidInputError(f"job {name} takes no argument(s) {unknown}; it takes {sorted(allowed)}")
        if "dry_run" in kwargs:
            v.boolean(kwargs["dry_run"], "dry_run")
        for flag in ("force", "vacuum"):
            if flag in kwargs:
                v.boolean(kwargs[flag], flag)
        if "batch_size" in kwargs:
            _batch_size(kwargs["batch_size"])
        if kwargs.get("holder") is not None:
            v.ident(kwargs["holder"], "holder")
        if kwargs.get("min_interval") is not None:
            v.number(kwargs["min_interval"], "min_interval", lo=0, hi=100 * 365 * 86400)
        if kwargs.get("namespace") is not None:
            v.ident(kwargs["namespace"], "namespace")
        for f in ("progress", "summariser"):
            if kwargs.get(f) is not None and not callable(kwargs[f]) and not hasattr(kwargs[f], "summarise"):
                raise InvalidInputError(f"{f} must be callable" + (" or have summarise()" if f == "summariser" else ""))
        return run_job(self, name, **kwargs)

    def job_status(self) -> dict[str, Any]:
        self._settle()
        from .jobs import job_status

        return job_status(self)

    def start_scheduler(self, *, only: list[str] | None = None):
        """Run the maintenance jobs on their schedules in a background thread until :meth:`close`."""
        self._settle()
        from .jobs.scheduler import build_scheduler

        if self._scheduler is None:
            self._scheduler = build_scheduler(str(self._target), self.settings, only=only)
            self._scheduler.start()
        return self._scheduler

    def archive(self, memory_id: int, *, agent_id: str | None = None) -> Memory:
        """Archive a memory by hand (decay archives faint, unused ones on its own): recall leaves it
        out unless ``include_archived=True``, decay pauses on it; its content, counters and history
        stay, and :meth:`restore` brings it back. A pinned memory is refused (unpin it first); an
        archived one is returned unchanged. With ``agent_id``, only that agent's own memory.
        Recorded in the access log (``updated``, outcome ``archived``)."""
        self._settle()
        memory_id = v.memory_id(memory_id)
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        c = self._core
        from .jobs.decay import current_relevance

        cur, cur_params = current_relevance(self.settings, c.backend)
        with c.backend.write() as conn:  # decay up to now, then pause (archived memories do not decay)
            m = self._own(memory_id, agent_id, "archive")
            if m.archived:
                return m
            if m.pinned:
                raise InvalidInputError(f"memory {memory_id} is pinned: unpin it before archiving it")
            now = c.now()
            conn.execute(
                f"UPDATE memories SET relevance_score = {cur}, decayed_at = ?, archived = 1 WHERE id = ?",
                (*cur_params, now, now, memory_id),
            )
            c.backend.set_vectors_archived([memory_id], True)
            c.log([memory_id], "updated", agent_id=agent_id, outcome="archived")
        return c.get(memory_id)

    def restore(self, memory_id: int, *, agent_id: str | None = None) -> Memory:
        """Bring an archived memory back (relevance at least 0.5, visible to recall again, decay
        resumes from now); a memory that is not archived is returned unchanged. With ``agent_id``,
        only that agent's own memory. Recorded in the access log (``updated``, outcome ``restored``)."""
        self._settle()
        memory_id = v.memory_id(memory_id)
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        c = self._core
        with c.backend.write() as conn:
            m = self._own(memory_id, agent_id, "restore")
            if not m.archived:
                return m
            conn.execute(
                "UPDATE memories SET archived = 0, "
                f"relevance_score = {c.backend.greatest('relevance_score', '0.5')}, "
                "decayed_at = ? WHERE id = ?",
                (c.now(), memory_id),
            )
            c.backend.set_vectors_archived([memory_id], False)
            c.log([memory_id], "updated", agent_id=agent_id, outcome="restored")
        return c.get(memory_id)

    def _own(self, memory_id: int, agent_id: str | None, verb: str) -> Memory:
        """The memory, when ``agent_id`` (if given) owns it (inside the caller's transaction)."""
        m = self._core.get(memory_id, agent_id)
        if agent_id is not None and m.agent_id != agent_id:
            raise MemoryNotFoundError(f"agent {agent_id!r} may not {verb} memory {memory_id} of {m.agent_id!r}")
        return m

    def pin(self, memory_id: int, pinned: bool = True) -> Memory:
        """Pinned memories are exempt from decay and archiving: pinning pauses decay, unpinning
        resumes it from that moment."""
        self._settle()
        memory_id = v.memory_id(memory_id)
        c = self._core
        pinned_flag = int(v.boolean(pinned, "pinned"))
        from .jobs.decay import current_relevance

        cur, cur_params = current_relevance(self.settings, c.backend)
        with c.backend.write() as conn:  # decay up to now, then pause (pin) or resume from now (unpin)
            c.get(memory_id)
            now = c.now()
            conn.execute(
                f"UPDATE memories SET relevance_score = {cur}, decayed_at = ?, pinned = ? WHERE id = ?",
                (*cur_params, now, now, pinned_flag, memory_id),
            )
        return c.get(memory_id)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder:
        return self._core.embedder

    @property
    def memory_types(self) -> tuple[str, ...]:
        return self._core.types.names

    # -- remember ----------------------------------------------------------------------------
    def remember(
        self,
        content: str,
        *,
        type: str,
        agent_id: str,
        scope: str = "agent",
        namespace: str | None = None,
        key: str | None = None,
        task_signature: str | None = None,
        error: str | None = None,
        tags: Iterable[str] = (),
        importance: float = 0.5,
        ttl: float | timedelta | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        task_id: str | None = None,
        thread_id: str | None = None,
    ) -> Memory:
        """Store a memory (or reinforce its duplicate, or update it in place through ``key``).

        ``thread_id`` makes it an event of a thread (an ``episode``, typically: docs/episodes.md),
        kept as said: never merged into another memory as a duplicate."""
        self._settle()
        item = writes.prepare(
            self._core,
            content,
            type=type,
            agent_id=agent_id,
            scope=scope,
            namespace=namespace,
            key=key,
            task_signature=task_signature,
            error=error,
            tags=tags,
            importance=importance,
            ttl=ttl,
            metadata=metadata,
            session_id=session_id,
            task_id=task_id,
            thread_id=thread_id,
        )
        return writes.write_many(self._core, [item])[0]

    def remember_many(self, items: Sequence[Mapping[str, Any]]) -> list[Memory]:
        """Store many memories in one transaction with one embedding batch.

        Each item is a mapping of :meth:`remember`'s arguments. All are validated first: one
        bad item raises and nothing is written."""
        self._settle()
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise InvalidInputError("items must be a sequence of mappings")
        prepared = []
        for k, it in enumerate(items):
            if not isinstance(it, Mapping) or "content" not in it:
                raise InvalidInputError(f"item {k} must be a mapping with at least content, type and agent_id")
            args = dict(it)
            try:
                prepared.append(writes.prepare(self._core, args.pop("content"), **args))
            except TypeError as exc:
                raise InvalidInputError(f"item {k}: {exc}") from exc
        return writes.write_many(self._core, prepared)

    # -- recall ------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        agent_id: str | None = None,
        namespace: str | None = None,
        types: Sequence[str] | None = None,
        tags: Iterable[str] | None = None,
        task_signature: str | None = None,
        error: str | None = None,
        include_global: bool = True,
        min_relevance: float | None = None,
        since: datetime | float | None = None,
        until: datetime | float | None = None,
        limit: int = 10,
        include_archived: bool = False,
        channels: Iterable[str] | None = None,
        session_id: str | None = None,
        task_id: str | None = None,
        record: bool = True,
        thread_id: str | None = None,
        min_confidence: float | None = None,
    ) -> list[RecallHit]:
        """Hybrid search over what ``agent_id`` may see (its own memories and global ones).

        ``channels`` restricts the fusion (e.g. ``{"keyword"}``) for evaluation; ``record=False``
        skips the access bookkeeping (for dry runs). ``min_confidence`` keeps only the hits
        (of the top ``limit``) whose calibrated confidence reaches it (``hit.confidence``;
        ``settings.confidence.inject_min`` is the injection gate)."""
        s = self.settings
        c = self._core
        query = v.text(query, "query", max_bytes=s.max_content_bytes, allow_empty=True)
        q = _recall.RecallQuery(
            text=query,
            namespace=v.ident(namespace, "namespace", optional=True) or s.namespace,
            agent_id=v.ident(agent_id, "agent_id", optional=True),
            types=v.types_list(types, c.types.check),
            tags=v.tags(tags, max_tags=s.max_tags, max_len=s.max_tag_length),
            task_signature=v.text(task_signature, "task_signature", max_bytes=1000).strip()
            if task_signature is not None
            else None,
            error=error_text(error) if error is not None else None,
            include_global=v.boolean(include_global, "include_global"),
            include_archived=v.boolean(include_archived, "include_archived"),
            min_relevance=None if min_relevance is None else v.unit_float(min_relevance, "min_relevance"),
            since=v.timestamp(since, "since"),
            until=v.timestamp(until, "until"),
            limit=v.limit(limit, max_limit=s.max_limit),
            channels=_recall.validate_channels(channels),
            thread_id=v.ident(thread_id, "thread_id", optional=True),
        )
        started = time.perf_counter()  # the recall's wall time, logged with its access rows (v_recall_latency)
        session_id = v.ident(session_id, "session_id", optional=True)
        task_id = v.ident(task_id, "task_id", optional=True)
        v.boolean(record, "record")
        if min_confidence is not None:
            min_confidence = v.unit_float(min_confidence, "min_confidence")
        if not query.strip() and not q.tags and q.task_signature is None and q.error is None:
            raise InvalidInputError("recall needs a query text, tags, a task_signature or an error")
        qv = None
        if query.strip() and "vector" in q.channels:
            embedded = c.embed([query])
            qv = None if embedded is None else embedded[0]
        with c.backend.lock:
            hits = _recall.recall(c, q, qv)
        if min_confidence is not None:
            hits = [h for h in hits if h.confidence is not None and h.confidence >= min_confidence]
        if record:
            # outside the connection's lock: past its limit the access writer takes its own lock and
            # then the connection's (AccessWriter.settle), the one order every caller keeps
            hits = _recall.record_access(
                c,
                hits,
                agent_id=q.agent_id,
                session_id=session_id,
                task_id=task_id,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        return hits

    # -- outcomes ----------------------------------------------------------------------------
    def apply(
        self,
        memory_id: int,
        *,
        helpful: bool,
        outcome: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        task_id: str | None = None,
        error: str | None = None,
    ) -> Memory:
        """Record that a memory was applied to a task, and whether it helped.

        The credit counts in the memory's usefulness, which ranks recall and fixes; with
        ``error`` (the error it was applied to), or with the ``task_id`` of an ``on_task_error``
        that showed it, it is also counted on that error's link: a fix that did not help an
        error stops being offered for it, and one whose credits in a task net negative is not
        offered to that task again (docs/fixes.md, "What did not help this task")."""
        self._settle()
        from . import fixes

        memory_id = v.memory_id(memory_id)
        helpful = v.boolean(helpful, "helpful")
        if error is not None:
            error = error_text(error)
        if outcome is not None:
            outcome = v.text(outcome, "outcome", max_bytes=self.settings.max_content_bytes, allow_empty=True)
            if self.settings.redact_secrets:
                outcome = redact(outcome)[0]  # stored in the access log: no secrets
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        session_id = v.ident(session_id, "session_id", optional=True)
        task_id = v.ident(task_id, "task_id", optional=True)
        c = self._core
        c.get(memory_id, agent_id)
        signed = c.sign(error) if error is not None else None  # may learn a template: after validation
        advised = advised_task = advised_origin = advised_line = advised_instance = None
        if task_id is not None:  # the advice that showed this memory for the task: its error (signature, origin, block)
            row = c.backend.execute(
                "SELECT error_signature, task_signature, error_origin, error_line, error_instance FROM memory_access_log "
                "WHERE task_id = ? AND memory_id = ? AND access_type = 'query' AND error_signature IS NOT NULL "
                "ORDER BY id DESC LIMIT 1",
                (task_id, memory_id),
            ).fetchone()
            advised, advised_task, advised_origin, advised_line, advised_instance = row if row else (None,) * 5
            if advised_task is None:  # applied without being advised: the task of any advice given for it
                row = c.backend.execute(
                    "SELECT task_signature FROM memory_access_log WHERE task_id = ? AND task_signature IS NOT NULL "
                    "ORDER BY id DESC LIMIT 1",
                    (task_id,),
                ).fetchone()
                advised_task = row[0] if row else None
        sig = signed.id if signed is not None else advised
        origin = signed.origin if signed is not None else advised_origin
        line = fixes.instance_line(signed) if signed is not None else advised_line
        instance = fixes.instance_text(signed) if signed is not None else advised_instance
        with c.backend.write() as conn:
            c.get(memory_id, agent_id)
            conn.execute(
                "UPDATE memories SET times_applied = times_applied + 1, "
                "times_successful = times_successful + ?, "
                "success_rate = (times_successful + ?) * 1.0 / (times_applied + 1), updated_at = updated_at "
                "WHERE id = ?",
                (int(helpful), int(helpful), memory_id),
            )
            c.log(
                [memory_id],
                "applied",
                agent_id=agent_id,
                session_id=session_id,
                task_id=task_id,
                was_helpful=helpful,
                outcome=outcome,
                task_signature=advised_task,  # a credit in a task counts against offering the fix to it again
                error_signature=sig,  # and the error it was given for, with where its run started: a credit
                error_origin=origin,  # given elsewhere does not override a fix's evidence in its own origin
                error_line=line,  # and which instance of the signature it was: refuted for errors like it
                error_instance=instance,
            )
            if sig is not None:
                fixes.credit(
                    c,
                    memory_id,
                    sig,
                    c.miner.group(sig),
                    signed.category if signed is not None else None,
                    helpful,
                    c.now(),
                    advised_task,
                    origin,
                )
        return c.get(memory_id)

    # -- reads -------------------------------------------------------------------------------
    def get(self, memory_id: int, *, agent_id: str | None = None) -> Memory:
        """The memory with that id; with ``agent_id``, only if that agent may see it."""
        self._settle()
        return self._core.get(v.memory_id(memory_id), v.ident(agent_id, "agent_id", optional=True))

    def get_by_type(
        self,
        type: str,
        *,
        agent_id: str | None = None,
        namespace: str | None = None,
        include_global: bool = True,
        limit: int = 100,
        thread_id: str | None = None,
    ) -> list[Memory]:
        """Memories of one type visible to ``agent_id``, newest first (expired and archived excluded);
        with ``thread_id``, only that thread's."""
        self._settle()
        c = self._core
        mtype = c.types.check(type)
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        ns = v.ident(namespace, "namespace", optional=True) or self.settings.namespace
        limit = v.limit(limit, max_limit=self.settings.max_limit)
        vis, params = c.visibility(agent_id, v.boolean(include_global, "include_global"))
        thread_id = v.ident(thread_id, "thread_id", optional=True)
        if thread_id is not None:
            vis, params = f"{vis} AND m.thread_id = ?", [*params, thread_id]
        rows = c.backend.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.namespace = ? AND m.memory_type = ? AND {vis} "
            "AND m.archived = 0 AND (m.expires_at IS NULL OR m.expires_at > ?) ORDER BY m.updated_at DESC, m.id DESC "
            "LIMIT ?",
            (ns, mtype, *params, c.now(), limit),
        ).fetchall()
        return [row_to_memory(r) for r in rows]

    def _latest(self, type: str, **kw: Any) -> Memory | None:
        got = self.get_by_type(type, limit=1, **kw)
        return got[0] if got else None

    # Getters for harnesses that register these types (an unregistered one raises UnknownMemoryTypeError).
    def get_discoveries(self, **kw: Any) -> list[Memory]:
        self._settle()
        return self.get_by_type("discovery", **kw)

    def get_insights(self, **kw: Any) -> list[Memory]:
        self._settle()
        return self.get_by_type("insight", **kw)

    def get_deadends(self, **kw: Any) -> list[Memory]:
        self._settle()
        return self.get_by_type("deadend", **kw)

    def get_warnings(self, **kw: Any) -> list[Memory]:
        self._settle()
        return self.get_by_type("warning", **kw)

    def get_error_fixes(self, **kw: Any) -> list[Memory]:
        self._settle()
        return self.get_by_type("error_fix", **kw)

    def get_plan(self, **kw: Any) -> Memory | None:
        """The most recent ``plan`` memory."""
        self._settle()
        return self._latest("plan", **kw)

    def get_feedback(self, **kw: Any) -> Memory | None:
        """The most recent ``feedback`` memory (keep one per supervisor with ``key=``)."""
        self._settle()
        return self._latest("feedback", **kw)

    # -- forgetting --------------------------------------------------------------------------
    def forget(self, memory_id: int, *, agent_id: str | None = None) -> None:
        """Delete one memory (its index rows, vector, history and log rows go with it)."""
        self._settle()
        memory_id = v.memory_id(memory_id)
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        c = self._core
        with c.backend.write():
            m = c.get(memory_id, agent_id)
            if agent_id is not None and m.agent_id != agent_id:
                raise MemoryNotFoundError(f"agent {agent_id!r} may not delete memory {memory_id} of {m.agent_id!r}")
            c.delete([memory_id])

    def forget_all(self, agent_id: str, type: str | None = None, *, namespace: str | None = None) -> int:
        """Delete every memory of an agent (optionally one type, one namespace); return the count."""
        self._settle()
        agent_id = v.ident(agent_id, "agent_id")
        conds, params = ["agent_id = ?"], [agent_id]
        if type is not None:
            conds.append("memory_type = ?")
            params.append(self._core.types.check(type))
        if namespace is not None:
            conds.append("namespace = ?")
            params.append(v.ident(namespace, "namespace"))
        return self._delete_where(" AND ".join(conds), params)

    def clear(self, namespace: str) -> int:
        """Delete everything in a namespace (a harness run): its tool calls and documents, then its
        memories (document chunks included); return the count of memories."""
        self._settle()
        from .jobs.batches import delete_rows

        namespace = v.ident(namespace, "namespace")
        delete_rows(self, "tool_calls", "namespace = ?", [namespace], "tool_calls_deleted")
        delete_rows(self, "documents", "namespace = ?", [namespace], "documents_deleted")
        return self._delete_where("namespace = ?", [namespace])

    def cleanup_expired(self) -> int:
        """Delete TTL-expired memories with their index rows and vectors; return the count."""
        self._settle()
        return self._delete_where("expires_at IS NOT NULL AND expires_at <= ?", [self._core.now()])

    def _delete_where(self, where: str, params: list[Any]) -> int:
        """Bulk delete in bounded batches (``maintenance.job_batch_seconds`` of lock each)."""
        from .jobs.batches import delete_where

        return delete_where(self, where, params)

    # -- harness conveniences ------------------------------------------------------------------
    def set_task_context(
        self,
        agent_id: str,
        task_id: str,
        context: str,
        *,
        ttl: float | timedelta = timedelta(hours=24),
        namespace: str | None = None,
    ) -> Memory:
        """Short-term context for one task (type ``context``, one per agent and task, 24 h TTL)."""
        self._settle()
        task_id = v.ident(task_id, "task_id")
        return self.remember(
            context,
            type="context",
            agent_id=agent_id,
            key=f"task:{task_id}",
            task_id=task_id,
            ttl=ttl,
            namespace=namespace,
            importance=0.5,
        )

    def get_task_context(self, agent_id: str, task_id: str, *, namespace: str | None = None) -> Memory | None:
        self._settle()
        agent_id = v.ident(agent_id, "agent_id")
        task_id = v.ident(task_id, "task_id")
        ns = v.ident(namespace, "namespace", optional=True) or self.settings.namespace
        r = self._core.backend.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE namespace = ? AND agent_id = ? AND memory_type = 'context' "
            "AND key = ? AND (expires_at IS NULL OR expires_at > ?)",
            (ns, agent_id, f"task:{task_id}", self._core.now()),
        ).fetchone()
        return None if r is None else row_to_memory(r)

    def learn_success(self, agent_id: str, pattern: str, details: str | None = None, **kw: Any) -> Memory:
        """Record what worked (a ``success`` memory, importance 0.7 unless given)."""
        self._settle()
        pattern = v.text(pattern, "pattern", max_bytes=self.settings.max_content_bytes)
        if details is not None:
            details = v.text(details, "details", max_bytes=self.settings.max_content_bytes, allow_empty=True)
        content = pattern if not details else f"{pattern}: {details}"
        kw.setdefault("importance", 0.7)
        return self.remember(content, type="success", agent_id=agent_id, **kw)

    def learn_error(self, agent_id: str, pattern: str, details: str | None = None, **kw: Any) -> Memory:
        """Record a known error (a ``failure`` memory with the error's signature, importance 0.8).

        ``pattern`` is the error (its text or a representative message); ``details``, when
        given, is what resolves it: the memory is then linked to the error as a fix that worked
        and ``on_task_error`` offers it among the fixes. Without ``details`` it is a record of
        the error only. To say what fixed an error, or what did not, prefer :meth:`learn_fix`."""
        self._settle()
        pattern = v.text(pattern, "pattern", max_bytes=self.settings.max_content_bytes)
        if details is not None:
            details = v.text(details, "details", max_bytes=self.settings.max_content_bytes, allow_empty=True)
        content = pattern if not details else f"{pattern}: {details}"
        kw.setdefault("importance", 0.8)
        kw.setdefault("error", pattern)
        if details:
            kw["fix_text"] = details
        return self._remember_fix(content, type="failure", agent_id=agent_id, worked=True if details else None, **kw)

    def learn_fix(
        self, error: str, fix: str, *, agent_id: str, worked: bool = True, task: Any = None, **kw: Any
    ) -> Memory:
        """Teach what fixed an error (``worked=True``) or what did not (``worked=False``).

        The fix is stored as a memory (``success``, or ``failure`` when it did not work) linked
        to the error's signature with the outcome counted on the link; teaching the same fix
        (or one of its kind) again adds to its evidence instead of adding rows. ``task``: the
        task that failed (a title such as the command that was run, or a task mapping, as given to
        ``on_task_error``): the link keeps its signature, so the fix also comes back for the same
        task failing with another error (docs/fixes.md). ``kw`` takes :meth:`remember`'s other
        arguments (namespace, scope, tags, task_id, ...)."""
        self._settle()
        worked = v.boolean(worked, "worked")
        if error is None:
            raise InvalidInputError("error must be the error text the fix was for")
        if task is not None:
            if "task_signature" in kw:
                raise InvalidInputError("give task or task_signature, not both")
            kw["task_signature"] = self.task_signature(task if isinstance(task, str) else _task_model(task))
        kw.setdefault("importance", 0.7 if worked else 0.6)
        return self._remember_fix(
            fix, type="success" if worked else "failure", agent_id=agent_id, error=error, worked=worked, **kw
        )

    def _remember_fix(self, content: str, *, type: str, agent_id: str, worked: bool | None, **kw: Any) -> Memory:
        try:
            item = writes.prepare(self._core, content, type=type, agent_id=agent_id, fix_worked=worked, **kw)
        except TypeError as exc:
            raise InvalidInputError(str(exc)) from exc
        return writes.write_many(self._core, [item])[0]

    def fixes_for(
        self,
        error: str,
        *,
        agent_id: str | None = None,
        namespace: str | None = None,
        limit: int = 5,
        task: Any = None,
    ) -> list[FixEvidence]:
        """The fixes linked to this error (its signature or one linked to it), then, with ``task``,
        those that fixed the same task for other errors, then those that fixed other errors whose runs
        started in the same place (``ErrorSignature.origin``); best evidence first, each with
        ``explain()``; an error and a task never seen get none."""
        self._settle()
        from . import fixes

        tsig = None if task is None else self.task_signature(task if isinstance(task, str) else _task_model(task))
        signed = self._core.sign(error_text(error))
        ns = v.ident(namespace, "namespace", optional=True) or self.settings.namespace
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        return fixes.rank(
            self._core,
            signed,
            agent_id=agent_id,
            namespace=ns,
            limit=v.limit(limit, max_limit=self.settings.max_limit),
            task_signature=tsig,
        )[0]

    def has_seen_error(
        self, agent_id: str, error: str, *, namespace: str | None = None, min_similarity: float = 0.9
    ) -> bool:
        """Whether a visible memory carries this error: same signature first (linked
        signatures included), then text similarity of the failure excerpt."""
        self._settle()
        agent_id = v.ident(agent_id, "agent_id")
        error = error_text(error)
        ns = v.ident(namespace, "namespace", optional=True) or self.settings.namespace
        min_similarity = v.unit_float(min_similarity, "min_similarity")
        c = self._core
        signed = c.sign(error)
        sigs = c.miner.aliases(signed.id)
        vis, params = c.visibility(agent_id, True)
        if c.backend.execute(
            f"SELECT 1 FROM memories m WHERE m.namespace = ? AND m.error_signature IN "
            f"({','.join('?' * len(sigs))}) AND {vis} AND (m.expires_at IS NULL OR m.expires_at > ?) "
            "LIMIT 1",
            (ns, *sigs, *params, c.now()),
        ).fetchone():
            return True
        hits = self.recall(
            signed.excerpt or error,
            agent_id=agent_id,
            namespace=ns,
            types=["failure"],
            limit=1,
            channels={"vector"},
            record=False,
        )
        return bool(hits) and (hits[0].breakdown.vector or 0.0) >= min_similarity

    def error_signature(self, text: str, *, baseline: str | None = None) -> ErrorSignature:
        """Sign raw error text (a message, a traceback or a whole log of any size): ``.id``,
        ``.template``, ``.category``, ``.params``, ``.excerpt`` and ``.excerpt_lines``. Templates
        are learned online and shared through the database. ``baseline``: the log of the last
        passing run of the same job; lines it also printed are not taken for the failure."""
        text = error_text(text)
        return self._core.sign(text, None if baseline is None else error_text(baseline, "baseline"))

    # -- harness lifecycle ------------------------------------------------------------------------
    def on_task_start(self, task: Any, **kw: Any):
        """Recall what matters for a task and render it as a prompt section (quoted as data,
        within ``prompt_budget_chars``); the returned context remembers what it injected.
        ``documents=N`` also preloads the top N document chunks."""
        self._settle()
        from .lifecycle import on_task_start

        return on_task_start(self, task, **kw)

    def on_task_error(self, task: Any, error: str, **kw: Any):
        """Signature, seen before?, what fixed it, matching failures and the next technique."""
        self._settle()
        from .lifecycle import on_task_error

        if kw.get("baseline") is not None:
            kw["baseline"] = error_text(kw["baseline"], "baseline")
        return on_task_error(self, task, error_text(error), **kw)

    def on_task_complete(self, task: Any, result: Any, *, context: Any = None) -> dict[str, Any]:
        """Credit every injected memory with the outcome, record it in the ledger, store what happened."""
        self._settle()
        from .lifecycle import on_task_complete

        return on_task_complete(self, task, result, context=context)

    # -- tasks, attempts and the technique ledger -----------------------------------------------
    def task_signature(self, task: Any) -> str:
        """``category:agent_type:effort:key-terms`` of a task (mapping, object or title string)."""
        return _task_signature(task)

    def select_technique(
        self,
        task_id: str,
        error: str | None = None,
        *,
        agent_type: str | None = None,
        task_category: str | None = None,
        techniques: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> TechniqueDecision:
        """The next technique to try on a failing task (never one it already tried), or ``escalate``."""
        self._settle()
        from . import ledger

        task_id = v.ident(task_id, "task_id")
        v.ident(agent_type, "agent_type", optional=True)
        v.ident(task_category, "task_category", optional=True)
        if techniques is None:
            techniques = list(self.settings.techniques)
        elif isinstance(techniques, str) or not isinstance(techniques, Sequence) or not techniques:
            raise InvalidInputError("techniques must be a non-empty list of names")
        techniques = [v.ident(t, "technique") for t in techniques]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidInputError("seed must be an int")
        signed = self.error_signature(error) if error is not None else None
        return ledger.select(
            self._core,
            task_id=task_id,
            signature=signed.id if signed else None,
            category=signed.category if signed else None,
            techniques=techniques,
            seed=seed,
        )

    def record_outcome(
        self,
        task_id: str,
        technique: str,
        success: bool,
        *,
        error: str | None = None,
        agent_id: str | None = None,
        notes: str | None = None,
        result: str | None = None,
        agent_type: str | None = None,
        task_category: str | None = None,
        task_signature: str | None = None,
        namespace: str | None = None,
        scope: str = "global",
    ) -> Attempt:
        """Record one attempt: the task's history, the ledger (per signature, category and overall)
        and a success or failure memory carrying the task and error signatures — one transaction.

        The ledger is shared by every agent, and so is the outcome memory by default
        (``scope="global"``), which then carries only the technique, the error's category and
        masked template, never the notes; ``scope="agent"`` keeps it private to ``agent_id``
        with the notes."""
        self._settle()
        from . import ledger

        task_id = v.ident(task_id, "task_id")
        technique = v.ident(technique, "technique")
        success = v.boolean(success, "success")
        if result is None:
            result = "fixed" if success else "failed"
        if result not in ("fixed", "failed", "decomposed", "escalated"):
            raise InvalidInputError("result must be fixed, failed, decomposed or escalated")
        if success != (result in ledger.SUCCESS_RESULTS):
            raise InvalidInputError(f"result {result!r} contradicts success={success}")
        agent_id = v.ident(agent_id, "agent_id", optional=True) or "harness"
        agent_type = v.ident(agent_type, "agent_type", optional=True)
        task_category = v.ident(task_category, "task_category", optional=True)
        scope = v.scope(scope)
        namespace = v.ident(namespace, "namespace", optional=True)
        if task_signature is not None:
            task_signature = v.text(task_signature, "task_signature", max_bytes=1000).strip()
        if notes is not None:
            notes = v.text(notes, "notes", max_bytes=self.settings.max_content_bytes // 2)
        if error is not None and not isinstance(error, str):
            raise InvalidInputError(f"error must be a string, got {type(error).__name__}")
        error = error_text(error) if error is not None and error.strip() else None
        signed = self._core.sign(error) if error is not None else None
        what = f"{signed.category} error `{signed.template}`" if signed else f"task {task_id}"
        verb = {
            "fixed": "fixed",
            "decomposed": "resolved by decomposing",
            "failed": "did not fix",
            "escalated": "escalated",
        }[result]
        content = f"Technique {technique} {verb} {what}" + (f": {notes}" if notes and scope == "agent" else "")
        item = writes.prepare(
            self._core,
            content,
            type="success" if success else "failure",
            agent_id=agent_id,
            scope=scope,
            namespace=namespace,
            error=error,
            task_signature=task_signature,
            tags=[technique] + ([signed.category] if signed else []),
            task_id=task_id,
            importance=0.7 if success else 0.6,
            metadata={"technique": technique, "result": result},
        )
        if notes is not None and self.settings.redact_secrets:
            notes = redact(notes)[0]
        vectors = self._core.embed([item.content])  # before the transaction: never embed holding the lock
        writes.catch_up(self._core, vectors)  # and never load the vector index holding it
        with self._core.backend.write():
            attempt = ledger.record_attempt(
                self._core,
                task_id=task_id,
                technique=technique,
                result=result,
                signature=signed.id if signed else None,
                category=signed.category if signed else None,
                agent_id=agent_id,
                agent_type=agent_type,
                task_category=task_category,
                notes=notes,
                basis=signature_basis(signed) if signed else None,
            )
            writes.write_many(self._core, [item], vectors if vectors is not None else writes.NO_VECTORS)
        return attempt

    def task_attempts(self, task_id: str) -> list[Attempt]:
        """Every attempt recorded for a task, oldest first."""
        self._settle()
        from . import ledger

        return ledger.attempts_of(self._core, v.ident(task_id, "task_id"))

    def technique_stats(self, *, level: str = "global", error_key: str | None = None) -> list[dict[str, Any]]:
        """Rows of the technique-effectiveness ledger at one level (global, category or signature)."""
        self._settle()
        if level not in ("global", "category", "signature"):
            raise InvalidInputError("level must be global, category or signature")
        cols = (
            "technique, level, error_key, error_category, successes, failures, attempts, success_rate, "
            "agent_types, task_categories, example_successes, example_failures, first_used, last_used, "
            "last_success, last_failure"
        )
        sql = f"SELECT {cols} FROM technique_effectiveness WHERE level = ?"
        params: list[Any] = [level]
        if error_key is not None:
            sql += " AND error_key = ?"
            params.append(v.text(error_key, "error_key", max_bytes=1000))
        names = [c.strip() for c in cols.split(",")]
        out = []
        for r in self._core.backend.execute(sql + " ORDER BY success_rate DESC, attempts DESC", params):
            d = dict(zip(names, r))
            for k in ("agent_types", "task_categories", "example_successes", "example_failures"):
                d[k] = json.loads(d[k])
            out.append(d)
        return out

    # -- episodes, threads and reflection (docs/episodes.md) ------------------------------------------
    def thread(
        self,
        thread_id: str,
        *,
        agent_id: str | None = None,
        namespace: str | None = None,
        include_global: bool = True,
        limit: int = 1000,
    ) -> list[Memory]:
        """Every memory of a thread (its episodes) visible to ``agent_id``, oldest first."""
        self._settle()
        from . import episodes

        return episodes.thread_memories(
            self._core,
            v.ident(thread_id, "thread_id"),
            namespace=v.ident(namespace, "namespace", optional=True) or self.settings.namespace,
            agent_id=v.ident(agent_id, "agent_id", optional=True),
            include_global=v.boolean(include_global, "include_global"),
            limit=v.limit(limit, max_limit=self.settings.max_limit),
        )

    def reflect(
        self,
        *,
        thread_id: str | None = None,
        namespace: str | None = None,
        agent_id: str | None = None,
        summariser: Any = None,
    ) -> list[Memory]:
        """Turn a thread's unreflected episodes (every thread's, without ``thread_id``) into durable
        ``fact`` / ``pattern`` memories linked to their sources, and mark the episodes reflected —
        one transaction; running it again adds nothing. Extractive and offline without a
        ``summariser``; with one (:class:`~harness_memory.summarisers.Summariser`) it asks it and
        falls back to the extractive path with a warning when it fails."""
        self._settle()
        from . import episodes

        return episodes.reflect(
            self,
            thread_id=v.ident(thread_id, "thread_id", optional=True),
            namespace=v.ident(namespace, "namespace", optional=True),
            agent_id=v.ident(agent_id, "agent_id", optional=True),
            summariser=episodes.check_summariser(summariser),
        )

    def remember_normalised(
        self, text: str, *, agent_id: str, normaliser: Any, fallback_type: str = "context", **kw: Any
    ) -> Memory:
        """Store raw text (a note, a chat message) as the ``normaliser`` rewrites it: normalised
        content, a memory type and tags (:class:`~harness_memory.summarisers.Normaliser`). When the
        normaliser fails, the raw text is stored as ``fallback_type`` with a warning. ``kw`` takes
        :meth:`remember`'s other arguments."""
        self._settle()
        import logging

        from .summarisers import Normaliser

        if not isinstance(normaliser, Normaliser):
            raise InvalidInputError("normaliser must have normalise(text, *, types) -> Normalised")
        text = v.text(text, "text", max_bytes=self.settings.max_content_bytes)
        self._core.types.check(fallback_type)
        if {"content", "type"} & set(kw):
            raise InvalidInputError("the normaliser chooses content and type")
        try:
            got = normaliser.normalise(text, types=self.memory_types)
            content, mtype, tags = got.content, self._core.types.check(got.type), list(got.tags)
        except Exception as exc:  # noqa: BLE001 - a normaliser is user code (or an endpoint): store the raw text
            logging.getLogger("harness_memory.summarisers").warning(
                "remember_normalised: the normaliser failed (%s); stored the raw text as %s",
                type(exc).__name__,
                fallback_type,
            )
            content, mtype, tags = text, fallback_type, []
        tags = list(dict.fromkeys([*tags, *kw.pop("tags", ())]))
        return self.remember(content, type=mtype, agent_id=agent_id, tags=tags, **kw)

    def reflection_sources(self, memory_id: int, *, agent_id: str | None = None) -> list[Memory]:
        """The episodes a reflected memory came from, oldest first."""
        self._settle()
        from . import episodes

        memory_id = v.memory_id(memory_id)
        self._core.get(memory_id, v.ident(agent_id, "agent_id", optional=True))
        return episodes.sources_of(self._core, memory_id)

    # -- MEMORY.md, live (docs/watch.md) ---------------------------------------------------------------
    def watch(
        self,
        directory: str | Path,
        *,
        namespace: str | None = None,
        debounce: float | None = None,
        poll: bool | None = None,
        write_back: bool | None = None,
        on_event: Callable[..., None] | None = None,
    ):
        """Watch ``directory/<agent_id>/MEMORY.md`` files in a background thread and re-import each on
        change (debounced, unchanged files skipped by hash); with ``write_back``, memories changed
        through the API are written back to the files. Returns the started
        :class:`~harness_memory.watch.MarkdownWatcher`; :meth:`close` stops it."""
        self._settle()
        from .watch import MarkdownWatcher

        w = MarkdownWatcher(
            self, directory, namespace=namespace, debounce=debounce, poll=poll, write_back=write_back, on_event=on_event
        ).start()
        self._watchers.append(w)
        return w

    # -- documents (docs/documents.md) --------------------------------------------------------------
    def add_document(
        self,
        text_or_path: str | Path,
        *,
        title: str | None = None,
        source: str | None = None,
        namespace: str | None = None,
        agent_id: str | None = None,
        scope: str = "global",
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ):
        """Index a document (text, or a :class:`~pathlib.Path` / path string of a UTF-8 file): split
        on its structure (markdown headings and paragraphs, code definitions, text paragraphs) into
        bounded chunks stored as ``document`` memories linked to it. The same ``source`` added again
        re-indexes only the chunks that changed. Returns a :class:`~harness_memory.documents.DocumentReport`."""
        self._settle()
        from . import documents

        return documents.add_document(
            self,
            text_or_path,
            title=title,
            source=source,
            namespace=namespace,
            agent_id=agent_id,
            scope=scope,
            tags=tags,
            metadata=metadata,
        )

    def documents(self, *, namespace: str | None = None, agent_id: str | None = None, limit: int = 100):
        """Stored documents (newest first); with ``agent_id``, its own and global ones."""
        self._settle()
        from . import documents

        return documents.list_documents(
            self._core,
            namespace=v.ident(namespace, "namespace", optional=True),
            agent_id=v.ident(agent_id, "agent_id", optional=True),
            limit=v.limit(limit, max_limit=self.settings.max_limit),
        )

    def forget_document(self, document_id: int, *, agent_id: str | None = None) -> int:
        """Delete a document and its chunks; return the number of chunks deleted."""
        self._settle()
        from . import documents

        return documents.forget_document(
            self._core, v.memory_id(document_id), agent_id=v.ident(agent_id, "agent_id", optional=True)
        )

    # -- the tool-call log (docs/tool_calls.md) ---------------------------------------------------
    def log_tool_call(
        self,
        tool_name: str,
        *,
        agent_id: str,
        success: bool,
        tool_type: str = "builtin",
        parameters: Mapping[str, Any] | Sequence[Any] | None = None,
        result: Any = None,
        duration_ms: float | None = None,
        error: str | None = None,
        namespace: str | None = None,
        session_id: str | None = None,
        task_id: str | None = None,
    ) -> _tool_calls.ToolCall:
        """Log one tool call. Parameters and result are redacted and bounded (the result kept as a
        head-and-tail summary of ``tool_result_max_bytes``, its full size recorded); a failed call's
        ``error`` is signed, so the advice for that error names this tool."""
        self._settle()
        from . import tool_calls as _tool_calls

        item = _tool_calls.prepare(
            self._core,
            tool_name,
            agent_id=agent_id,
            success=success,
            tool_type=tool_type,
            parameters=parameters,
            result=result,
            duration_ms=duration_ms,
            error=error,
            namespace=namespace,
            session_id=session_id,
            task_id=task_id,
        )
        return _tool_calls.insert(self._core, item)

    def tool_calls(
        self,
        *,
        agent_id: str | None = None,
        tool_name: str | None = None,
        task_id: str | None = None,
        success: bool | None = None,
        since: datetime | float | None = None,
        namespace: str | None = None,
        limit: int = 100,
    ) -> list[_tool_calls.ToolCall]:
        """Logged tool calls matching every given filter, newest first (every namespace unless one is given)."""
        self._settle()
        from . import tool_calls as _tool_calls

        return _tool_calls.query(
            self._core,
            namespace=v.ident(namespace, "namespace", optional=True),
            agent_id=v.ident(agent_id, "agent_id", optional=True),
            tool_name=v.ident(tool_name, "tool_name", optional=True),
            task_id=v.ident(task_id, "task_id", optional=True),
            success=None if success is None else v.boolean(success, "success"),
            since=v.timestamp(since, "since"),
            limit=v.limit(limit, max_limit=self.settings.max_limit),
        )

    def failing_tools(
        self, error: str, *, namespace: str | None = None, limit: int = 5
    ) -> list[_tool_calls.ToolFailure]:
        """Tools whose logged calls failed with this error's signature (or one linked to it), most failures first."""
        self._settle()
        from . import tool_calls as _tool_calls

        ns = v.ident(namespace, "namespace", optional=True) or self.settings.namespace
        limit = v.limit(limit, max_limit=self.settings.max_limit)
        signed = self._core.sign(error_text(error))  # may learn a template: after every check
        return _tool_calls.failing_tools(self._core, self._core.miner.group(signed.id), namespace=ns, limit=limit)

    def tool_metrics(
        self, *, namespace: str | None = None, agent_id: str | None = None
    ) -> list[_tool_calls.ToolMetrics]:
        """Per tool: calls, success rate, p50/p95 duration and the last failure (``v_tool_metrics``'s figures)."""
        self._settle()
        from . import tool_calls as _tool_calls

        return _tool_calls.metrics(
            self._core,
            namespace=v.ident(namespace, "namespace", optional=True),
            agent_id=v.ident(agent_id, "agent_id", optional=True),
        )

    # -- embeddings ------------------------------------------------------------------------------
    def backfill_embeddings(self, *, batch_size: int = 256) -> int:
        """Embed memories stored keyword-only (the embedder was down, or they changed during a
        reembed), and finish a reembed's fill that was interrupted; return how many were embedded."""
        self._settle()
        batch_size = _batch_size(batch_size)
        c = self._core
        if not c.vectors_enabled:
            raise EmbedderMismatchError("the stored vectors belong to another embedder: run reembed() first")
        from . import reembed as _reembed

        done = _reembed.fill(self)  # a reembed's fill that did not finish (a crash) resumes here
        while True:
            rows = c.backend.execute(
                "SELECT id, content FROM memories WHERE embedding_pending = 1 ORDER BY id LIMIT ?", (batch_size,)
            ).fetchall()
            if not rows:
                return done
            vecs = c.embed([r[1] for r in rows])
            if vecs is None:
                return done
            with c.backend.write() as conn:
                for (mid, content), vec in zip(rows, vecs):
                    m = c.fetch([mid]).get(mid)
                    if m is None or m.content != content or not m.embedding_pending:
                        continue  # changed meanwhile; the next round sees it again
                    c.put_vector(m, vec)
                    conn.execute("UPDATE memories SET embedding_pending = 0 WHERE id = ?", (mid,))
                    done += 1

    def reembed(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed every memory with this store's embedder and record it as the database's embedder;
        return how many memories the store held.

        Vectors are computed in batches outside any transaction; one short transaction swaps the
        vector table and the record; the new vectors then go in in bounded batches (docs/architecture.md,
        :mod:`harness_memory.reembed`), during which a memory not yet reached is found by keyword but
        not by vector. A crash before the swap leaves the old vectors and record intact; after it,
        :meth:`backfill_embeddings` (the ``backfill`` job) finishes the fill. Other processes that
        have the store open get :class:`EmbedderMismatchError` (reopen) at their next embedding,
        never a vector from the old space."""
        self._settle()
        from . import reembed as _reembed

        batch_size = _batch_size(batch_size)
        if progress is not None and not callable(progress):
            raise InvalidInputError("progress must be a callable(done, total) or None")
        held = _reembed.reembed(self, batch_size, progress)
        self.backfill_embeddings()  # what the fill flagged (changed meanwhile, or the embedder was down)
        return held

    # -- export / import ---------------------------------------------------------------------------
    def export_jsonl(self, path: str | Path, *, namespace: str | None = None, agent_id: str | None = None) -> int:
        """Write every memory (or one namespace's, one agent's) to a versioned JSONL file; return the count."""
        self._settle()
        from . import portability

        return portability.export_jsonl(
            self._core,
            v.path(path),
            namespace=v.ident(namespace, "namespace", optional=True),
            agent_id=v.ident(agent_id, "agent_id", optional=True),
        )

    def import_jsonl(self, path: str | Path) -> portability.ImportReport:
        """Import a JSONL export (matched by uid: idempotent). Every record is checked first: a bad
        record raises :class:`ImportFormatError` naming its line, and nothing is imported."""
        self._settle()
        from . import portability

        return portability.import_jsonl(self._core, v.path(path))

    def export_markdown(self, agent_id: str, path: str | Path, *, namespace: str | None = None) -> int:
        self._settle()
        from . import portability

        return portability.export_markdown(
            self._core,
            v.ident(agent_id, "agent_id"),
            v.path(path),
            namespace=v.ident(namespace, "namespace", optional=True),
        )

    def import_markdown(
        self, agent_id: str, path: str | Path, *, namespace: str | None = None
    ) -> portability.ImportReport:
        self._settle()
        from . import portability

        return portability.import_markdown(
            self._core,
            v.ident(agent_id, "agent_id"),
            v.path(path),
            namespace=v.ident(namespace, "namespace", optional=True),
        )

    def sql_engine(self):
        """A SQLAlchemy/SQLModel engine on this database (same connection factory)."""
        self._settle()
        return self._core.backend.sqlalchemy_engine()

    # -- statistics ----------------------------------------------------------------------------------
    def stats(self, *, namespace: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Counts by type and agent, plus index health (pending vectors, embedder).

        With ``agent_id``, only what that agent may see: its own memories (under its id) and
        global ones (other agents' global memories counted under ``agent_id: None``, so no
        other agent's id is revealed), and its own access-log rows."""
        self._settle()
        from . import tool_calls as _tool_calls

        c = self._core
        agent_id = v.ident(agent_id, "agent_id", optional=True)
        conds, params = [], []
        if namespace is not None:
            conds.append("m.namespace = ?")
            params.append(v.ident(namespace, "namespace"))
        who = "m.agent_id"
        who_params: list[Any] = []
        if agent_id is not None:
            vis, vparams = c.visibility(agent_id, True)
            conds.append(vis)
            params += vparams
            who = "CASE WHEN m.agent_id = ? THEN m.agent_id END"
            who_params = [agent_id]
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        q = c.backend.execute
        with c.backend.read():
            by = q(
                f"SELECT {who} AS who, m.memory_type, COUNT(*), AVG(m.relevance_score), AVG(m.success_rate) "
                f"FROM memories m {where} GROUP BY who, m.memory_type ORDER BY who, m.memory_type",
                who_params + params,
            ).fetchall()
            tot = q(
                f"SELECT COUNT(*), COALESCE(SUM(m.embedding_pending), 0), COALESCE(SUM(m.archived), 0), "
                f"COUNT(DISTINCT m.namespace) FROM memories m {where}",
                params,
            ).fetchone()
            emb = q("SELECT name, dimensions FROM embedder_info WHERE id = 1").fetchone()
            if agent_id is None:
                log = q("SELECT access_type, COUNT(*) FROM memory_access_log GROUP BY access_type").fetchall()
            else:
                log = q(
                    "SELECT access_type, COUNT(*) FROM memory_access_log WHERE agent_id = ? GROUP BY access_type",
                    (agent_id,),
                ).fetchall()
        return {
            "memories": tot[0],
            "pending_embeddings": tot[1],
            "archived": tot[2],
            "namespaces": tot[3],
            "embedder": {"name": emb[0], "dimensions": emb[1]} if emb else None,
            "by_agent_type": [
                {"agent_id": r[0], "type": r[1], "count": r[2], "avg_relevance": r[3], "avg_success_rate": r[4]}
                for r in by
            ],
            "access_log": log,
            "tools": [
                t.model_dump(mode="json") for t in _tool_calls.metrics(c, namespace=namespace, agent_id=agent_id)
            ],
        }
