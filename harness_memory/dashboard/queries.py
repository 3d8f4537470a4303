"""Every read the dashboard makes, in one place: bounded, read-only, portable SQL.

Each method runs one or a few statements against the tables and the metrics views
(migrations 0005 and 0008) inside one read snapshot (``backend.read()``): a WAL reader
never blocks a writer. Nothing here writes. Every list is bounded (a ``LIMIT``, or a time
window over an indexed column, or a GROUP BY into a handful of buckets), so a page costs
the same on a store of 100 or 100,000 memories.

The SQL is portable (CASE, CAST, COALESCE, standard aggregates, ``?`` parameters); the
only dialect-specific spelling is :func:`week_sql` (and :meth:`Queries.storage_bytes`,
which asks the file system). A PostgreSQL backend routes ``execute``/``read`` through its
own connection and gets the same answers.

The windowed weekly figures are the same definitions as the views ``v_failures_by_week``,
``v_retries_by_week``, ``v_techniques_by_week``, ``v_helpfulness_by_week``,
``v_memories_by_week`` and ``v_recall_latency_by_week`` (which cover all history); tests check
that they agree.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..models import MEMORY_COLUMNS, Memory, row_to_memory

__all__ = ["WEEK", "WEEK_OFFSET", "MemoryFilter", "Queries", "latency_row", "nearest_rank", "week_sql"]

PAST_TTL = 600.0  # seconds the weeks before the current one are kept
TTL = 60.0  # seconds the whole-table summaries (frequent errors, relevance histogram) are kept
WEEK = 604_800
WEEK_OFFSET = 345_600  # the epoch was a Thursday: weeks start on Monday 00:00 UTC


def week_sql(col: str, dialect: str = "sqlite") -> str:
    """SQL for the start (UNIX seconds) of the week holding ``col``."""
    if dialect == "postgresql":  # CAST rounds there; FLOOR is what truncation means for t >= 0
        return f"(FLOOR(({col} - {WEEK_OFFSET}) / {WEEK}) * {WEEK} + {WEEK_OFFSET})"
    return f"(CAST(({col} - {WEEK_OFFSET}) / {WEEK} AS INTEGER) * {WEEK} + {WEEK_OFFSET})"


def _window(col: str, until: float | None) -> str:
    return f"{col} >= ?" + ("" if until is None else f" AND {col} < ?")


def _params(since: float, until: float | None) -> tuple[float, ...]:
    return (since,) if until is None else (since, until)


def week_start(ts: float) -> float:
    return ((ts - WEEK_OFFSET) // WEEK) * WEEK + WEEK_OFFSET


@dataclass(frozen=True)
class MemoryFilter:
    agent_id: str | None = None
    memory_type: str | None = None
    scope: str | None = None
    namespace: str | None = None
    tags: tuple[str, ...] = ()  # every one of them
    archived: bool | None = None  # None: both
    pinned: bool | None = None


class Queries:
    """The dashboard's read-only queries on one store's backend."""

    def __init__(self, store: Any, *, past_ttl: float = PAST_TTL, ttl: float = TTL, own_connection: bool = False):
        self._store = store
        self._b = store._core.backend
        self._dialect = getattr(self._b, "dialect", "sqlite")
        self._own = None
        if own_connection and self._dialect == "sqlite":
            # a connection of its own: a page's read snapshot never holds the store's connection, so the
            # process's writes do not wait for a page (and in WAL mode no reader blocks a writer)
            from ..sqlite_backend import SQLiteBackend

            self._own = self._b = SQLiteBackend(
                store._core.backend.path, busy_timeout_ms=store._core.backend.busy_timeout_ms
            )
        self.past_ttl, self.ttl = past_ttl, ttl
        self._cache: dict[Any, tuple[float, Any]] = {}
        self._cache_lock = threading.Lock()

    # -- the cache: past weeks and slow summaries, never a memory's own page ---------------------
    def _cached(self, key: Any, ttl: float, fn: Callable[[], Any]) -> Any:
        now = time.monotonic()
        with self._cache_lock:
            hit = self._cache.get(key)
        if hit is not None and now - hit[0] < ttl:
            return hit[1]
        value = fn()
        with self._cache_lock:
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = (now, value)
        return value

    def weekly(self, fn: Callable[..., Any], since: float, *args: Any) -> Any:
        """``fn(*args, since, until)`` with the weeks before the current one read once per ``past_ttl``
        (their rows change only when memories are deleted) and the current week read live."""
        cur = week_start(self.now())
        live = fn(*args, max(since, cur), None)
        if since >= cur:
            return live
        past = self._cached((fn.__name__, args, since, cur), self.past_ttl, lambda: fn(*args, since, cur))
        if isinstance(past, dict):
            return {k: {**v, **live.get(k, {})} for k, v in past.items()}
        return past + live

    def summary(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` read at most once per ``ttl`` seconds (the slow summaries over whole tables)."""
        return self._cached((fn.__name__, args), self.ttl, lambda: fn(*args))

    def forget_cache(self) -> None:
        """After a write through the dashboard: every page reads afresh."""
        with self._cache_lock:
            self._cache.clear()

    # -- plumbing ---------------------------------------------------------------------------
    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self._b.execute(sql, tuple(params)).fetchall()

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:  # a row, or None (an aggregate always has one)
        return self._b.execute(sql, tuple(params)).fetchone()

    def snapshot(self):
        """One consistent read snapshot for a page's queries."""
        return self._b.read()

    def _week(self, col: str) -> str:
        return week_sql(col, self._dialect)

    def now(self) -> float:
        return self._store._core.now()

    def close(self) -> None:
        """Close the connection of its own (if any)."""
        if self._own is not None:
            self._own.close()
            self._own = None

    # -- overview: the success metrics per week -----------------------------------------------
    def weekly_failures(self, since: float, until: float | None = None) -> list[tuple[float, int, int]]:
        """``(week_start, failures, repeated)``: a failure is a task meeting an error signature (its first
        attempt at it); repeated when another task met the signature before (v_failures_by_week)."""
        w = self._week("f.first_at")
        return [
            (float(r[0]), int(r[1]), int(r[2] or 0))
            for r in self._rows(
                f"SELECT {w} AS wk, COUNT(*), SUM(CASE WHEN EXISTS (SELECT 1 FROM task_attempts p "
                "WHERE p.error_signature = f.error_signature AND p.attempted_at < f.first_at AND p.task_id <> f.task_id) "
                "THEN 1 ELSE 0 END) FROM (SELECT task_id, error_signature, MIN(attempted_at) AS first_at FROM task_attempts "
                f"WHERE error_signature IS NOT NULL AND {_window('attempted_at', until)} GROUP BY task_id, error_signature) f "
                "GROUP BY wk ORDER BY wk",
                _params(since, until),
            )
        ]

    def weekly_retries(self, since: float, until: float | None = None) -> list[tuple[float, int, int, int, int]]:
        """``(week_start, tasks, interventions, fixed, escalated)`` by the week of each task's first attempt."""
        w = self._week("t.first_at")
        return [
            (float(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0))
            for r in self._rows(
                f"SELECT {w} AS wk, COUNT(*), SUM(t.attempts), SUM(t.fixed), SUM(t.escalated) FROM (SELECT task_id, "
                "MIN(attempted_at) AS first_at, SUM(CASE WHEN result <> 'escalated' THEN 1 ELSE 0 END) AS attempts, "
                "MAX(CASE WHEN result IN ('fixed', 'decomposed') THEN 1 ELSE 0 END) AS fixed, "
                "MAX(CASE WHEN result = 'escalated' THEN 1 ELSE 0 END) AS escalated FROM task_attempts "
                f"WHERE {_window('attempted_at', until)} GROUP BY task_id) t GROUP BY wk ORDER BY wk",
                _params(since, until),
            )
        ]

    def weekly_techniques(self, since: float, until: float | None = None) -> list[tuple[float, int, int, int]]:
        """``(week_start, attempts, successes, escalations)`` over every attempt (v_techniques_by_week)."""
        w = self._week("attempted_at")
        return [
            (float(r[0]), int(r[1] or 0), int(r[2] or 0), int(r[3] or 0))
            for r in self._rows(
                f"SELECT {w} AS wk, SUM(CASE WHEN result <> 'escalated' THEN 1 ELSE 0 END), "
                "SUM(CASE WHEN result IN ('fixed', 'decomposed') THEN 1 ELSE 0 END), "
                f"SUM(CASE WHEN result = 'escalated' THEN 1 ELSE 0 END) FROM task_attempts WHERE "
                f"{_window('attempted_at', until)} GROUP BY wk ORDER BY wk",
                _params(since, until),
            )
        ]

    def weekly_helpfulness(self, since: float, until: float | None = None) -> list[tuple[float, int, int]]:
        """``(week_start, applied, helpful)`` from the access log (v_helpfulness_by_week)."""
        w = self._week("timestamp")
        return [
            (float(r[0]), int(r[1]), int(r[2] or 0))
            for r in self._rows(
                f"SELECT {w} AS wk, COUNT(*), SUM(CASE WHEN was_helpful = 1 THEN 1 ELSE 0 END) FROM memory_access_log "
                f"WHERE {_window('timestamp', until)} AND access_type = 'applied' GROUP BY wk ORDER BY wk",
                _params(since, until),
            )
        ]

    def latency_samples(self, since: float, until: float | None = None) -> list[tuple[float, list[float]]]:
        """``(week_start, sorted recall durations in ms)`` per week: the access log's timed rows (one per
        recorded recall, v_recall_latency), read from their partial index alone and sorted here (a
        window function over the same rows costs several times more on SQLite)."""
        weeks: dict[float, list[float]] = {}
        for ts, ms in self._rows(
            "SELECT timestamp, duration_ms FROM memory_access_log WHERE duration_ms IS NOT NULL "
            f"AND {_window('timestamp', until)}",
            _params(since, until),
        ):
            weeks.setdefault(week_start(ts), []).append(ms)
        return [(float(w), sorted(xs)) for w, xs in sorted(weeks.items())]

    def weekly_latency(self, since: float, until: float | None = None) -> list[tuple[float, int, float, float, float]]:
        """``(week_start, recalls, p50_ms, p95_ms, max_ms)`` per week: v_recall_latency_by_week's figures."""
        return [latency_row(w, xs) for w, xs in self.latency_samples(since, until)]

    def weekly_created(self, since: float, until: float | None = None) -> list[tuple[float, str, str, int]]:
        """``(week_start, type, agent, created)`` (v_memories_by_week; read from an index alone)."""
        w = self._week("created_at")
        return [
            (float(r[0]), r[1], r[2], int(r[3]))
            for r in self._rows(
                f"SELECT {w} AS wk, memory_type, agent_id, COUNT(*) FROM memories WHERE {_window('created_at', until)} "
                "GROUP BY wk, memory_type, agent_id ORDER BY wk, memory_type, agent_id LIMIT 100000",
                _params(since, until),
            )
        ]

    def memories_before(self, ts: float) -> int:
        return int(self._one("SELECT COUNT(*) FROM memories WHERE created_at < ?", (ts,))[0])

    def groups(self, limit: int = 5000) -> list[tuple[str, str, str, int]]:
        """``(namespace, agent, type, memories)``: what v_memories_by_agent_type counts, from an index alone."""
        return [
            (r[0], r[1], r[2], int(r[3]))
            for r in self._rows(
                "SELECT namespace, agent_id, memory_type, COUNT(*) FROM memories "
                "GROUP BY namespace, scope, agent_id, memory_type LIMIT ?",
                (limit,),
            )
        ]  # the order of ix_memories_visible

    def totals(self) -> dict[str, int]:
        groups = self.summary(self.groups)  # counts per agent and type: read at most once per ttl
        return {
            "memories": int(self._one("SELECT COUNT(*) FROM memories")[0]),
            "archived": int(self._one("SELECT COUNT(*) FROM memories WHERE archived = 1")[0]),
            "pinned": int(self._one("SELECT COUNT(*) FROM memories WHERE pinned = 1")[0]),
            "namespaces": len({g[0] for g in groups}),
            "agents": len({g[1] for g in groups}),
            "attempts": int(self._one("SELECT COUNT(*) FROM task_attempts")[0]),
        }

    # -- techniques -------------------------------------------------------------------------------
    def ledger(self, level: str, *, keys: Sequence[str] | None = None, limit: int = 500) -> list[dict[str, Any]]:
        """Rows of technique_effectiveness at one level (most attempts first)."""
        cond, params = "level = ?", [level]
        if keys is not None:
            if not keys:
                return []
            cond += f" AND error_key IN ({', '.join('?' * len(keys))})"
            params += list(keys)
        rows = self._rows(
            "SELECT technique, error_key, error_category, successes, failures, attempts, last_used, "
            "last_success FROM technique_effectiveness WHERE " + cond + " ORDER BY attempts DESC, technique LIMIT ?",
            (*params, limit),
        )
        return [
            {
                "technique": r[0],
                "error_key": r[1],
                "error_category": r[2],
                "successes": int(r[3]),
                "failures": int(r[4]),
                "attempts": int(r[5]),
                "last_used": r[6],
                "last_success": r[7],
            }
            for r in rows
        ]

    def pooled(self) -> tuple[int, int]:
        """``(successes, attempts)`` of every technique overall: the selector's root."""
        r = self._one(
            "SELECT COALESCE(SUM(successes), 0), COALESCE(SUM(attempts), 0) FROM technique_effectiveness "
            "WHERE level = 'global'"
        )
        return int(r[0]), int(r[1])

    def categories(self, limit: int = 30) -> list[tuple[str, int]]:
        """Error categories with the most recorded attempts."""
        return [
            (r[0], int(r[1]))
            for r in self._rows(
                "SELECT error_key, SUM(attempts) AS n FROM technique_effectiveness WHERE level = 'category' "
                "GROUP BY error_key ORDER BY n DESC, error_key LIMIT ?",
                (limit,),
            )
        ]

    def weekly_selections(self, since: float, until: float | None = None) -> list[tuple[float, str, int]]:
        """``(week_start, technique, times selected)``: the attempts recorded per technique and week."""
        w = self._week("attempted_at")
        return [
            (float(r[0]), r[1], int(r[2]))
            for r in self._rows(
                f"SELECT {w} AS wk, technique, COUNT(*) FROM task_attempts WHERE {_window('attempted_at', until)} "
                "GROUP BY wk, technique ORDER BY wk, technique LIMIT 100000",
                _params(since, until),
            )
        ]

    # -- errors -----------------------------------------------------------------------------------
    def top_signatures(self, limit: int = 30) -> list[dict[str, Any]]:
        """The error signatures met most often: by the tasks that met them (task_attempts) plus the
        memories that carry them, with first and last seen, category and the miner's template."""
        got: dict[str, dict[str, Any]] = {}

        def entry(sig: str) -> dict[str, Any]:
            return got.setdefault(
                sig,
                {
                    "sig": sig,
                    "tasks": 0,
                    "retries": 0,
                    "memories": 0,
                    "first_seen": None,
                    "last_seen": None,
                    "category": None,
                },
            )

        def seen(d: dict[str, Any], first: float | None, last: float | None) -> None:
            if first is not None:
                d["first_seen"] = first if d["first_seen"] is None else min(d["first_seen"], first)
            if last is not None:
                d["last_seen"] = last if d["last_seen"] is None else max(d["last_seen"], last)

        attempts_sql = (
            "SELECT error_signature, COUNT(DISTINCT task_id), COUNT(*), MIN(attempted_at), "
            "MAX(attempted_at), MAX(error_category) FROM task_attempts WHERE error_signature {cond} "
            "GROUP BY error_signature"
        )
        memories_sql = (
            "SELECT error_signature, COUNT(*), MIN(created_at), MAX(updated_at) FROM memories "
            "WHERE error_signature {cond} GROUP BY error_signature"
        )
        for r in self._rows(
            attempts_sql.format(cond="IS NOT NULL") + " ORDER BY COUNT(DISTINCT task_id) DESC LIMIT ?", (limit,)
        ):
            d = entry(r[0])
            d.update(tasks=int(r[1]), retries=int(r[2]), category=r[5])
            seen(d, r[3], r[4])
        for r in self._rows(memories_sql.format(cond="IS NOT NULL") + " ORDER BY COUNT(*) DESC LIMIT ?", (limit,)):
            d = entry(r[0])
            d["memories"] = int(r[1])
            seen(d, r[2], r[3])
        sigs = list(got)
        if sigs:
            marks = ", ".join("?" * len(sigs))
            for r in self._rows(attempts_sql.format(cond=f"IN ({marks})"), sigs):
                d = got[r[0]]
                d.update(tasks=int(r[1]), retries=int(r[2]), category=d["category"] or r[5])
                seen(d, r[3], r[4])
            for r in self._rows(memories_sql.format(cond=f"IN ({marks})"), sigs):
                d = got[r[0]]
                d["memories"] = int(r[1])
                seen(d, r[2], r[3])
            for r in self._rows(
                f"SELECT sig, category, exception, tokens FROM error_templates WHERE sig IN ({marks})", sigs
            ):
                got[r[0]].update(category=got[r[0]]["category"] or r[1], exception=r[2], template=_template(r[3]))
        out = sorted(got.values(), key=lambda d: (-(d["tasks"] + d["memories"]), d["sig"]))[:limit]
        for d in out:
            d.setdefault("template", None)
            d.setdefault("exception", None)
        return out

    def signature_weeks(
        self, sigs: Sequence[str], since: float, until: float | None = None
    ) -> dict[str, dict[float, int]]:
        """Per signature: attempts per week since ``since``."""
        if not sigs:
            return {}
        w = self._week("attempted_at")
        out: dict[str, dict[float, int]] = {s: {} for s in sigs}
        for sig, wk, n in self._rows(
            f"SELECT error_signature, {w} AS wk, COUNT(*) FROM task_attempts WHERE error_signature IN "
            f"({', '.join('?' * len(sigs))}) AND {_window('attempted_at', until)} GROUP BY error_signature, wk",
            (*sigs, *_params(since, until)),
        ):
            out[sig][float(wk)] = int(n)
        return out

    def fixes_for(self, sigs: Sequence[str], per_sig: int = 3) -> dict[str, list[dict[str, Any]]]:
        """Per signature: the fixes linked to it (fix_links), most worked first."""
        if not sigs:
            return {}
        out: dict[str, list[dict[str, Any]]] = {s: [] for s in sigs}
        for r in self._rows(
            "SELECT l.error_signature, l.memory_id, l.worked, l.failed, l.helpful, l.unhelpful, m.content "
            "FROM fix_links l JOIN memories m ON m.id = l.memory_id WHERE l.error_signature IN "
            f"({', '.join('?' * len(sigs))}) ORDER BY l.worked DESC, l.helpful DESC, l.id LIMIT ?",
            (*sigs, 50 * len(sigs)),
        ):
            if len(out[r[0]]) < per_sig:
                out[r[0]].append(
                    {
                        "memory_id": r[1],
                        "worked": r[2],
                        "failed": r[3],
                        "helpful": r[4],
                        "unhelpful": r[5],
                        "content": r[6],
                    }
                )
        return out

    def signature(self, sig: str) -> dict[str, Any] | None:
        """One signature: the miner's template, and first/last seen over attempts and memories (None: unknown)."""
        t = self._one("SELECT category, exception, tokens FROM error_templates WHERE sig = ?", (sig,))
        a = self._one(
            "SELECT MIN(attempted_at), MAX(attempted_at), MAX(error_category), COUNT(*) FROM task_attempts "
            "WHERE error_signature = ?",
            (sig,),
        )
        m = self._one(
            "SELECT MIN(created_at), MAX(updated_at), COUNT(*) FROM memories WHERE error_signature = ?", (sig,)
        )
        if t is None and not a[3] and not m[2]:
            return None
        firsts = [x for x in (a[0], m[0]) if x is not None]
        lasts = [x for x in (a[1], m[1]) if x is not None]
        return {
            "sig": sig,
            "category": (t[0] if t else None) or a[2],
            "exception": t[1] if t else None,
            "template": _template(t[2]) if t else None,
            "first_seen": min(firsts) if firsts else None,
            "last_seen": max(lasts) if lasts else None,
            "retries": int(a[3]),
            "memories": int(m[2]),
        }

    def signature_memories(self, sig: str, limit: int = 50) -> list[Memory]:
        return [
            row_to_memory(r)
            for r in self._rows(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE error_signature = ? ORDER BY id DESC LIMIT ?",
                (sig, limit),
            )
        ]

    def signature_attempts(self, sig: str, limit: int = 100) -> list[dict[str, Any]]:
        return [
            {"task_id": r[0], "technique": r[1], "result": r[2], "agent_id": r[3], "notes": r[4], "attempted_at": r[5]}
            for r in self._rows(
                "SELECT task_id, technique, result, agent_id, notes, attempted_at FROM task_attempts "
                "WHERE error_signature = ? ORDER BY id DESC LIMIT ?",
                (sig, limit),
            )
        ]

    # -- memories ---------------------------------------------------------------------------------
    def facets(self) -> dict[str, list[tuple[str, int]]]:
        """Namespaces, agents and types with their counts, most first (for the filter menus; 200 each)."""
        out: dict[str, dict[str, int]] = {"namespace": {}, "agent": {}, "type": {}}
        for ns, agent, mtype, n in self.summary(self.groups):
            for key, val in (("namespace", ns), ("agent", agent), ("type", mtype)):
                out[key][val] = out[key].get(val, 0) + n
        return {k: sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:200] for k, d in out.items()}

    def browse(self, f: MemoryFilter, *, before: int | None = None, limit: int = 50) -> list[Memory]:
        """Memories matching the filter, newest first, ``limit`` at a time (keyset: ``id < before``)."""
        conds: list[str] = []
        params: list[Any] = []
        for col, val in (
            ("m.agent_id", f.agent_id),
            ("m.memory_type", f.memory_type),
            ("m.scope", f.scope),
            ("m.namespace", f.namespace),
        ):
            if val is not None:
                conds.append(f"{col} = ?")
                params.append(val)
        if f.archived is not None:
            conds.append("m.archived = ?")
            params.append(int(f.archived))
        if f.pinned is not None:
            conds.append("m.pinned = ?")
            params.append(int(f.pinned))
        for tag in f.tags[:8]:
            conds.append("EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = ?)")
            params.append(tag)
        if before is not None:
            conds.append("m.id < ?")
            params.append(before)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return [
            row_to_memory(r)
            for r in self._rows(
                f"SELECT {MEMORY_COLUMNS} FROM memories m {where} ORDER BY m.id DESC LIMIT ?", (*params, limit)
            )
        ]

    def history(self, memory_id: int, limit: int = 50) -> list[dict[str, Any]]:
        return [
            {"version": r[0], "content": r[1], "valid_from": r[2], "valid_until": r[3]}
            for r in self._rows(
                "SELECT version, content, valid_from, valid_until FROM memory_history WHERE memory_id = ? "
                "ORDER BY version DESC LIMIT ?",
                (memory_id, limit),
            )
        ]

    def merges(self, memory_id: int, limit: int = 50) -> list[dict[str, Any]]:
        return [
            {"kind": r[0], "similarity": r[1], "content": r[2], "agent_id": r[3], "merged_at": r[4]}
            for r in self._rows(
                "SELECT kind, similarity, merged_content, agent_id, merged_at FROM memory_merges "
                "WHERE memory_id = ? ORDER BY id DESC LIMIT ?",
                (memory_id, limit),
            )
        ]

    def access(self, memory_id: int, limit: int = 50) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The latest access-log rows of a memory, and its counts per access type."""
        rows = [
            {
                "access_type": r[0],
                "agent_id": r[1],
                "task_id": r[2],
                "was_helpful": r[3],
                "outcome": r[4],
                "score": r[5],
                "timestamp": r[6],
            }
            for r in self._rows(
                "SELECT access_type, agent_id, task_id, was_helpful, outcome, score, timestamp FROM memory_access_log "
                "WHERE memory_id = ? ORDER BY id DESC LIMIT ?",
                (memory_id, limit),
            )
        ]
        counts = {
            r[0]: int(r[1])
            for r in self._rows(
                "SELECT access_type, COUNT(*) FROM memory_access_log WHERE memory_id = ? GROUP BY access_type",
                (memory_id,),
            )
        }
        return rows, counts

    def pattern_links(
        self, memory_id: int, limit: int = 100
    ) -> tuple[list[tuple[int, float, str]], list[tuple[int, float, str]]]:
        """``(members, patterns)``: the members of this pattern memory, and the patterns it belongs to."""
        members = [
            (int(r[0]), float(r[1]), r[2])
            for r in self._rows(
                "SELECT p.member_id, p.similarity, m.content FROM pattern_members p JOIN memories m ON m.id = p.member_id "
                "WHERE p.pattern_id = ? ORDER BY p.similarity DESC LIMIT ?",
                (memory_id, limit),
            )
        ]
        patterns = [
            (int(r[0]), float(r[1]), r[2])
            for r in self._rows(
                "SELECT p.pattern_id, p.similarity, m.content FROM pattern_members p JOIN memories m ON m.id = p.pattern_id "
                "WHERE p.member_id = ? ORDER BY p.pattern_id LIMIT ?",
                (memory_id, limit),
            )
        ]
        return members, patterns

    def fix_links(self, memory_id: int, limit: int = 50) -> list[dict[str, Any]]:
        return [
            {
                "error_signature": r[0],
                "error_category": r[1],
                "error_message": r[2],
                "worked": r[3],
                "failed": r[4],
                "helpful": r[5],
                "unhelpful": r[6],
            }
            for r in self._rows(
                "SELECT error_signature, error_category, error_message, worked, failed, helpful, unhelpful FROM fix_links "
                "WHERE memory_id = ? ORDER BY worked DESC, id LIMIT ?",
                (memory_id, limit),
            )
        ]

    # -- maintenance ------------------------------------------------------------------------------
    def job_runs(self, limit: int = 60) -> list[dict[str, Any]]:
        """The latest job runs (from the job_runs table behind v_job_runs, with numeric times)."""
        return [
            {
                "job": r[0],
                "status": r[1],
                "started_at": r[2],
                "finished_at": r[3],
                "counts": r[4],
                "error": r[5],
                "holder": r[6],
            }
            for r in self._rows(
                "SELECT job, status, started_at, finished_at, counts, error, holder FROM job_runs ORDER BY id DESC LIMIT ?",
                (limit,),
            )
        ]

    def relevance_histogram(self, bins: int = 10) -> list[tuple[float, float, int, int]]:
        """``(lo, hi, live, archived)`` counts of relevance_score in ``bins`` equal bins of [0, 1]."""
        got: dict[int, tuple[int, int]] = {}
        for b, live, archived in self._rows(
            f"SELECT CASE WHEN relevance_score >= 1 THEN {bins - 1} ELSE CAST(relevance_score * {bins} AS INTEGER) "
            "END AS b, SUM(CASE WHEN archived = 0 THEN 1 ELSE 0 END), SUM(archived) FROM memories GROUP BY b"
        ):
            got[int(b)] = (int(live or 0), int(archived or 0))
        return [(i / bins, (i + 1) / bins, *got.get(i, (0, 0))) for i in range(bins)]

    def storage_bytes(self) -> dict[str, Any] | None:
        """Sizes of the SQLite database file and its WAL; on PostgreSQL, of the store's schema (its tables
        with their indexes and TOAST, ``pg_total_relation_size``); None for another engine."""
        if self._dialect == "postgresql":
            r = self._one(
                "SELECT current_schema(), COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                "AND c.relkind IN ('r', 'm', 'p')"
            )
            return {"schema": r[0], "bytes": int(r[1])}
        if self._dialect != "sqlite":
            return None
        path = str(self._b.path)
        out = {}
        for name, p in (("database", path), ("wal", path + "-wal")):
            try:
                out[name] = os.stat(p).st_size
            except FileNotFoundError:
                out[name] = 0
        return out


def nearest_rank(sorted_values: Sequence[float], p: float) -> float:
    """The ``p`` quantile by nearest rank (the smallest value with at least ``p`` of them at or below it)."""
    import math

    return sorted_values[max(1, math.ceil(p * len(sorted_values))) - 1]  # the views: the first rank >= p * n


def latency_row(week: float, sorted_ms: Sequence[float]) -> tuple[float, int, float, float, float]:
    return (week, len(sorted_ms), nearest_rank(sorted_ms, 0.5), nearest_rank(sorted_ms, 0.95), sorted_ms[-1])


def _template(tokens_json: str | None) -> str | None:
    import json

    if tokens_json is None:
        return None
    try:
        toks = json.loads(tokens_json)
    except ValueError:
        return None
    return " ".join(str(t) for t in toks) if isinstance(toks, list) else None
