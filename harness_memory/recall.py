"""recall(): candidates from the keyword, vector, tag and signature channels, fused and ranked."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from . import confidence, ranking, validation as v
from .core import Core
from .models import Memory, RecallHit
from .sqlite_backend import query_terms

if TYPE_CHECKING:
    from .sqlite_backend import SQLiteBackend

__all__ = ["RecallQuery", "recall", "record_access", "write_access"]


@dataclass
class RecallQuery:
    text: str
    namespace: str
    agent_id: str | None
    types: list[str] | None
    tags: list[str]
    task_signature: str | None
    error: str | None
    include_global: bool
    include_archived: bool
    min_relevance: float | None
    since: float | None
    until: float | None
    limit: int
    channels: frozenset[str] = frozenset({"vector", "keyword", "tags", "signature"})
    thread_id: str | None = None


def _where(core: Core, q: RecallQuery, now: float) -> tuple[str, list[Any]]:
    """The visibility filter as a condition on alias ``m``.

    Columns go through ``backend.unindexed()``: on SQLite that keeps the planner from driving
    the query through a secondary index on them (it would scan a whole namespace);
    candidates are always found first (FTS rowids, ids, tags, signatures) and checked by
    primary key."""
    u = core.backend.unindexed
    vis, params = core.visibility(q.agent_id, q.include_global)
    for col in ("m.agent_id", "m.scope"):
        vis = vis.replace(col, u(col))
    conds = [f"{u('m.namespace')} = ?", vis, f"({u('m.expires_at')} IS NULL OR {u('m.expires_at')} > ?)"]
    params = [q.namespace, *params, now]
    if not q.include_archived:
        conds.append(f"{u('m.archived')} = 0")
    if q.types is not None:
        conds.append(f"{u('m.memory_type')} IN ({','.join('?' * len(q.types))})")
        params += q.types
    if q.min_relevance is not None:
        conds.append(f"{u('m.relevance_score')} >= ?")
        params.append(q.min_relevance)
    if q.since is not None:
        conds.append(f"{u('m.created_at')} >= ?")
        params.append(q.since)
    if q.until is not None:
        conds.append(f"{u('m.created_at')} <= ?")
        params.append(q.until)
    if q.thread_id is not None:
        conds.append(f"{u('m.thread_id')} = ?")
        params.append(q.thread_id)
    return " AND ".join(conds), params


def recall(core: Core, q: RecallQuery, query_vector: Sequence[float] | None) -> list[RecallHit]:
    now = core.now()
    where, params = _where(core, q, now)
    n_cand = max(50, 4 * q.limit)
    use_kw = "keyword" in q.channels and bool(query_terms(q.text))
    use_vec = "vector" in q.channels and query_vector is not None and any(query_vector)
    use_tags = "tags" in q.channels and bool(q.tags)
    esig = core.sign(q.error).id if q.error else None
    esigs = core.miner.aliases(esig) if esig else []
    use_sig = "signature" in q.channels and (q.task_signature is not None or esig is not None)
    if not (use_kw or use_vec or use_tags or use_sig):
        return []

    kw: dict[int, float] = {}
    vec: dict[int, float] = {}
    cands: dict[int, None] = {}
    with core.backend.read():
        if use_kw:
            hidden = _known_hidden(core, q)
            kw = dict(
                core.backend.keyword_search(
                    q.text,
                    where,
                    params,
                    n_cand,
                    posting_budget=core.settings.keyword_posting_budget,
                    **({} if hidden is None else {"hidden": hidden}),
                )
            )
            cands.update(dict.fromkeys(kw))
        if use_vec:
            for mid, sim in _vector_candidates(core, q, query_vector, n_cand, where, params):
                vec[mid] = sim
                cands[mid] = None
        if use_tags:
            sql = (
                f"SELECT DISTINCT t.memory_id FROM memory_tags t JOIN memories m ON m.id = t.memory_id "
                f"WHERE t.tag IN ({','.join('?' * len(q.tags))}) AND {where} LIMIT ?"
            )
            cands.update(dict.fromkeys(r[0] for r in core.backend.execute(sql, (*q.tags, *params, n_cand))))
        if use_sig:
            sig_conds, sig_params = [], []
            if q.task_signature is not None:
                sig_conds.append("(m.task_signature = ? OR m.task_signature LIKE ? ESCAPE '\\')")
                sig_params += [q.task_signature, _like_prefix(q.task_signature)]
            if esig is not None:
                sig_conds.append(f"m.error_signature IN ({','.join('?' * len(esigs))})")
                sig_params += esigs
            sql = (
                f"SELECT m.id FROM memories m WHERE m.namespace = ? AND ({' OR '.join(sig_conds)}) AND {where} "
                "ORDER BY m.updated_at DESC LIMIT ?"
            )
            cands.update(
                dict.fromkeys(r[0] for r in core.backend.execute(sql, (q.namespace, *sig_params, *params, n_cand)))
            )
        use = (use_kw, use_vec, use_tags, use_sig)
        hits = _rank(core, q, query_vector, now, where, params, cands, kw, vec, esig, esigs, use)
    if core.index is not None and use_vec:
        core.index.save_if_due(core.backend)  # a first load's snapshot, written outside the read snapshot
    return hits


def _rank(
    core: Core,
    q: RecallQuery,
    query_vector: Any,
    now: float,
    where: str,
    params: list[Any],
    cands: dict[int, None],
    kw: dict[int, float],
    vec: dict[int, float],
    esig: str | None,
    esigs: list[str],
    use: tuple[bool, bool, bool, bool],
) -> list[RecallHit]:
    """Score the candidates, fetch the top and assess their confidence: inside the caller's read
    snapshot (one transaction for the whole recall, the hits' rows the rows that were scored)."""
    use_kw, use_vec, use_tags, use_sig = use
    w = core.settings.ranking
    rows = _scoring_rows(core, list(cands), where, params) if cands else {}
    if not rows:
        return []
    if use_vec:
        missing = [i for i in rows if i not in vec]
        if missing:
            vec.update(_similarities(core, missing, query_vector))
    best_kw = max(kw.values(), default=0.0)
    qtags = set(q.tags)
    ts, es = q.task_signature, esig
    esig_set = set(esigs)
    ids = list(rows)
    all_args: list[tuple] = []
    for mid, (tags_json, rel, updated, applied, succ, imp, tsig, esig_m) in rows.items():
        sig = None
        if use_sig:
            parts = []
            if ts is not None:
                parts.append(
                    1.0 if tsig == ts else 0.5 if tsig and (tsig.startswith(ts) or ts.startswith(tsig)) else 0.0
                )
            if es is not None:
                parts.append(1.0 if esig_m in esig_set else 0.0)
            sig = sum(parts) / len(parts)
        if use_tags:
            mt = set(json.loads(tags_json))
            tag_score = len(qtags & mt) / len(qtags | mt)
        else:
            tag_score = None
        all_args.append(
            (
                max(0.0, vec.get(mid, 0.0)) if use_vec else None,
                (kw.get(mid, 0.0) / best_kw if best_kw > 0 else 0.0) if use_kw else None,
                tag_score,
                sig,
                rel,
                now - updated,
                applied,
                succ,
                imp,
            )
        )
    scored: list[tuple[float, int, tuple]] = [
        (final, mid, args)
        for mid, args, (final, match) in zip(ids, all_args, ranking.compute_many(all_args, w))
        if match > 0
    ]
    scored.sort(key=lambda x: (-x[0], -x[1]))
    top = scored[: q.limit]
    mems = core.fetch([mid for _, mid, _ in top])
    conf = confidence.assess(
        core,
        q.text,
        kw,
        vec,
        [mid for _, mid, _ in top],
        {mid: a[3] for _, mid, a in top},
        {mid: a[2] for _, mid, a in top},
    )
    return [
        RecallHit(
            memory=mems[mid],
            score=final,
            confidence=conf[mid][0],
            evidence=conf[mid][1],
            breakdown=ranking.score(
                vector=a[0],
                keyword=a[1],
                tags=a[2],
                signature=a[3],
                relevance=a[4],
                age_seconds=a[5],
                times_applied=a[6],
                times_successful=a[7],
                importance=a[8],
                w=w,
            ),
        )
        for final, mid, a in top
        if mid in mems
    ]


def _scoring_rows(core: Core, ids: list[int], where: str, params: list[Any]) -> dict[int, tuple]:
    """Only the columns ranking needs, as plain tuples (full Memory objects are built for the top hits)."""
    out: dict[int, tuple] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        sql = (
            f"SELECT m.id, m.context_tags, m.relevance_score, m.updated_at, m.times_applied, m.times_successful, "
            f"m.importance, m.task_signature, m.error_signature FROM memories m "
            f"WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}"
        )
        for r in core.backend.execute(sql, (*chunk, *params)):
            out[r[0]] = r[1:]
    return out


def _like_prefix(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _vector_candidates(
    core: Core, q: RecallQuery, qv: Any, k: int, where: str | None = None, params: Sequence[Any] = ()
) -> list[tuple[int, float]]:
    """The vector channel's ``(memory_id, cosine)`` candidates, best first.

    Three paths: no local index (PostgreSQL's HNSW, or ``vector_search='vec0'``): the backend's
    KNN; a small SQLite store whose index is not loaded: the exact SQL path (sqlite-vec's cosine
    over the rows passing ``where``; numpy is never imported); otherwise the in-process index
    (loaded from its persisted snapshot or the database on first use, then kept in step)."""
    if core.index is None:
        return core.backend.vector_search(
            qv,
            namespace=q.namespace,
            k=k,
            agent_id=q.agent_id,
            include_global=q.include_global,
            types=q.types,
            include_archived=q.include_archived,
        )
    if where is not None and _exact_sql(core):
        t0 = time.perf_counter()
        try:
            return cast("SQLiteBackend", core.backend).vector_exact(qv, where, params, k)
        finally:
            core.index.sql_seconds += time.perf_counter() - t0
    core.index.sync(core.backend)
    return core.index.search(
        qv,
        namespace=q.namespace,
        agent_id=q.agent_id,
        include_global=q.include_global,
        types=q.types,
        include_archived=q.include_archived,
        k=k,
    )


def _known_hidden(core: Core, q: RecallQuery) -> bytearray | None:
    """The memories this recall's filters reject, as far as a loaded in-process index knows them
    (``VectorIndex.hidden``, synced to the recall's read snapshot first), for the keyword channel
    to leave out before BM25; None when there is no loaded index or the backend takes no such
    prefilter (PostgreSQL). Only filters the index holds are used (namespace, visibility, types,
    archived); the others stay with the keyword query's ``where``."""
    ix = core.index
    if ix is None or not ix.loaded or not hasattr(core.backend, "vector_exact"):
        return None
    ix.sync(core.backend)
    # with no agent the SQL visibility is the global memories whatever include_global says
    return ix.hidden(q.namespace, q.agent_id, q.include_global or q.agent_id is None, q.types, q.include_archived)


def _exact_sql(core: Core) -> bool:
    """Use the exact SQL path: the store is small and this process has not loaded its index
    (a loaded index stays in use: the writes keep it current for their duplicate checks), nor
    spent more time in the SQL path than loading the index would cost (a long-lived process
    switches to the index; a one-shot command never imports numpy)."""
    ix = core.index
    if ix is None or ix.loaded or ix.sql_seconds > ix.sql_budget or not hasattr(core.backend, "vector_exact"):
        return False
    size = core.backend.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0]
    return bool(size < ix.sql_below)


def _similarities(core: Core, ids: list[int], qv: Any) -> dict[int, float]:
    if core.index is not None and core.index.loaded:
        return core.index.similarities(ids, qv)
    if hasattr(core.backend, "vector_similarities"):
        return cast("SQLiteBackend", core.backend).vector_similarities(qv, ids)
    import numpy as np

    q = np.asarray(qv, dtype=np.float32)
    return {i: float(v @ q) for i, v in core.backend.get_vectors(ids).items()}


def record_access(
    core: Core,
    hits: list[RecallHit],
    *,
    agent_id: str | None,
    session_id: str | None,
    task_id: str | None,
    duration_ms: float | None = None,
) -> list[RecallHit]:
    """Count the access (count, last_accessed, a small relevance boost) and log a 'query' row per hit
    (the first carries the recall's ``duration_ms``: v_recall_latency), through the store's
    :class:`~harness_memory.access_writer.AccessWriter` (written beside the recall, not by it). The
    hits' memories are updated in place to what will be recorded (they are the recall's own), and the
    same list is returned."""
    if not hits:
        return hits
    now = core.now()
    boost = core.settings.recall_boost
    entry = (
        now,
        [h.memory.id for h in hits],
        {
            "agent_id": agent_id,
            "session_id": session_id,
            "task_id": task_id,
            "scores": [h.score for h in hits],
            "duration_ms": duration_ms,
        },
    )
    if core.access is not None:
        core.access.add(entry)
    else:  # a core without a store's writer: written now
        with core.backend.write() as c:
            write_access(core, c, [entry])
    ts = datetime.fromtimestamp(now, tz=UTC)
    for h in hits:
        # the hits are this recall's own (store.recall built them): updated in place, not copied
        m: Memory = h.memory
        m.access_count += 1
        m.last_accessed = ts
        m.relevance_score = min(1.0, m.relevance_score + boost)
    return hits


def write_access(core: Core, c: Any, pending: list) -> None:
    """Write recalls' bookkeeping (``AccessWriter`` entries, oldest first) in the caller's transaction
    on ``c``: one statement for the counts and one for the log rows of all of them (the writer's
    thread shares the interpreter with the recalls, so it makes few calls into SQLite)."""
    from .core import log_rows
    from .jobs.decay import current_relevance

    boost = core.settings.recall_boost
    cur, cur_params = current_relevance(core.settings, core.backend)  # decay up to the recall, then the boost
    all_ids = list(dict.fromkeys(i for _, ids, _ in pending for i in ids))
    alive: set[int] = set()
    for s in range(0, len(all_ids), 500):  # a memory deleted since its recall gets no log row
        chunk = all_ids[s : s + 500]
        alive.update(
            r[0] for r in c.execute(f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        )
    updates: list[tuple] = []
    rows: list[tuple] = []
    for now, ids, log in pending:
        updates += [(now, *cur_params, now, boost, now, i) for i in ids if i in alive]
        if all(i in alive for i in ids):
            rows += log_rows(ids, "query", now, **log)
        elif any(i in alive for i in ids):
            keep = [k for k, i in enumerate(ids) if i in alive]
            rows += log_rows(
                [ids[k] for k in keep],
                "query",
                now,
                **{
                    **log,
                    "scores": [log["scores"][k] for k in keep],
                    "duration_ms": log["duration_ms"] if keep[0] == 0 else None,
                },
            )
    # in the recalls' order: each boost on the relevance the one before it left; a row written after the decay job
    # decayed the memory past the recall's time keeps the job's time (the relevance is already decayed to it)
    if updates:
        c.executemany(
            "UPDATE memories SET access_count = access_count + 1, last_accessed = ?, "
            f"relevance_score = {core.backend.least('1.0', f'{cur} + ?')}, "
            f"decayed_at = {core.backend.greatest('COALESCE(decayed_at, created_at)', '?')} WHERE id = ?",
            updates,
        )
    if rows:
        core.insert_log(rows)


def validate_channels(channels: Any) -> frozenset[str]:
    allowed = ("vector", "keyword", "tags", "signature")
    return v.channels(channels, allowed) or frozenset(allowed)
