"""Consolidate: within each namespace, agent, scope and memory type, cluster similar memories
and write one ``pattern`` memory per cluster of at least N members.

Embeddings come from the vector table; a shared task or error signature is extra evidence
(a signature-seeded direction is added to the vector, pulling such memories together).
Clustering: average-linkage agglomerative clustering on cosine distance for groups up to
2,000 memories; PCA to 64 dimensions then Birch above that (agglomerative is quadratic).
A cluster keeps a member only if it is at least ``consolidate_similarity`` (cosine) from
the cluster's centroid.

Members are not deleted: their relevance is halved, ``consolidated_into`` points to the
pattern and ``pattern_members`` links both ways. Re-running without new memories creates
nothing; a new memory close enough to an existing pattern's centroid joins it.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from harness_memory.jobs.batches import tally

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.models import Memory
    from harness_memory.store import MemoryStore

SKIP_TYPES = ("pattern", "context")
SMALL = 2000
SIG_WEIGHT = 0.35

Summariser = Callable[[list["Memory"]], str]


def _signature_direction(sig: str, dim: int) -> np.ndarray:
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(sig.encode()).digest()[:8], "little"))
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def _features(vecs: np.ndarray, sigs: list[str | None]) -> np.ndarray:
    X = vecs.copy()
    for i, s in enumerate(sigs):
        if s:
            X[i] += SIG_WEIGHT * _signature_direction(s, X.shape[1])
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, n, out=np.zeros_like(X), where=n > 0)


def cluster(X: np.ndarray, similarity: float) -> np.ndarray:
    """Cluster labels for unit rows of X (-1: no cluster)."""
    n = len(X)
    if n < 2:
        return np.full(n, -1)
    if n <= SMALL:
        from sklearn.cluster import AgglomerativeClustering

        labels = AgglomerativeClustering(
            n_clusters=None, metric="cosine", linkage="average", distance_threshold=1.0 - similarity
        ).fit_predict(X)
    else:
        from sklearn.cluster import Birch
        from sklearn.decomposition import PCA

        Z = PCA(n_components=min(64, X.shape[1]), random_state=0).fit_transform(X).astype(np.float32)
        Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)
        # unit vectors: cosine >= s  <=>  euclidean distance <= sqrt(2 - 2s); Birch's threshold is a radius
        labels = Birch(threshold=float(np.sqrt(2 - 2 * similarity)) / 2, n_clusters=None).fit_predict(Z)
    # keep members close to their cluster's centroid
    out = np.full(n, -1)
    for lab in np.unique(labels):
        idx = np.flatnonzero(labels == lab)
        c = X[idx].mean(axis=0)
        c /= max(np.linalg.norm(c), 1e-12)
        keep = idx[X[idx] @ c >= similarity]
        out[keep] = lab
    return out


def _summary(members: list[Memory], medoid: Memory) -> str:
    tags = [t for t, k in Counter(t for m in members for t in m.tags).most_common() if k >= max(2, len(members) // 2)]
    applied = sum(m.times_applied for m in members)
    ok = sum(m.times_successful for m in members)
    rate = f"{ok}/{applied} applications succeeded" if applied else "not applied yet"
    lines = [
        f"Pattern of {len(members)} {medoid.type} memories: {medoid.content}",
        f"Combined record: {rate}." + (f" Shared tags: {', '.join(tags[:8])}." if tags else ""),
    ]
    others = [m.content for m in members if m.id != medoid.id][:3]
    if others:
        lines.append("Also: " + " | ".join(o[:160] for o in others))
    return "\n".join(lines)


def consolidate(
    store: MemoryStore,
    *,
    dry_run: bool = False,
    namespace: str | None = None,
    summariser: Summariser | None = None,
    progress: Callable[[int, int], None] | None = None,
    **_: object,
) -> dict[str, Any]:
    core = store._core
    b = core.backend
    m = store.settings.maintenance
    sim = m.consolidate_similarity
    cond, params = "archived = 0 AND consolidated_into IS NULL AND memory_type NOT IN ('pattern', 'context')", []
    if namespace is not None:
        cond += " AND namespace = ?"
        params.append(namespace)
    groups = b.execute(
        f"SELECT namespace, agent_id, scope, memory_type, COUNT(*) FROM memories WHERE {cond} "
        f"GROUP BY 1, 2, 3, 4 HAVING COUNT(*) >= 1",
        params,
    ).fetchall()
    plan: list[dict[str, Any]] = []
    stats: dict[str, Any] = {"groups": len(groups), "patterns_created": 0, "members_linked": 0, "joined_existing": 0}
    for gi, (ns, agent, scope, mtype, _n) in enumerate(groups):
        rows = b.execute(
            f"SELECT id, error_signature, task_signature FROM memories WHERE {cond} AND namespace = ? "
            "AND agent_id = ? AND scope = ? AND memory_type = ? ORDER BY id",
            (*params, ns, agent, scope, mtype),
        ).fetchall()
        vecs = b.get_vectors([r[0] for r in rows])
        rows = [r for r in rows if r[0] in vecs]
        # existing patterns of this group and their centroids
        pats = b.execute(
            "SELECT id FROM memories WHERE namespace = ? AND agent_id = ? AND scope = ? AND "
            f"memory_type = 'pattern' AND {b.json_text('metadata', 'source_type')} = ?",
            (ns, agent, scope, mtype),
        ).fetchall()
        centroids: dict[int, np.ndarray] = {}
        for (pid,) in pats:
            mids = [r[0] for r in b.execute("SELECT member_id FROM pattern_members WHERE pattern_id = ?", (pid,))]
            mv = [v for v in b.get_vectors(mids).values()]
            if mv:
                c = np.mean(mv, axis=0)
                centroids[pid] = c / max(np.linalg.norm(c), 1e-12)
        joins: dict[int, list[tuple[int, float]]] = defaultdict(list)
        rest = []
        for r in rows:
            best = max(((pid, float(vecs[r[0]] @ c)) for pid, c in centroids.items()), key=lambda x: x[1], default=None)
            if best is not None and best[1] >= sim:
                joins[best[0]].append((r[0], best[1]))
            else:
                rest.append(r)
        new_clusters: list[list[int]] = []
        if len(rest) >= m.consolidate_min_members:
            X = _features(np.stack([vecs[r[0]] for r in rest]), [r[1] or r[2] for r in rest])
            labels = cluster(X, sim)
            for lab in set(labels.tolist()) - {-1}:
                members = [rest[i][0] for i in np.flatnonzero(labels == lab)]
                if len(members) >= m.consolidate_min_members:
                    new_clusters.append(members)
        for pid, mem in joins.items():
            plan.append({"group": [ns, agent, scope, mtype], "pattern": pid, "join": [i for i, _ in mem]})
        for members in new_clusters:
            plan.append({"group": [ns, agent, scope, mtype], "pattern": None, "members": members})
        if not dry_run:
            for pid, mem in joins.items():
                _link(core, pid, mem)
                stats["joined_existing"] += len(mem)
                tally("joined_existing", len(mem))
            for members in new_clusters:
                _create_pattern(store, ns, agent, scope, mtype, members, {i: vecs[i] for i in members}, summariser)
                stats["patterns_created"] += 1
                stats["members_linked"] += len(members)
                tally("patterns_created", 1)
                tally("members_linked", len(members))
        if progress:
            progress(gi + 1, len(groups))
    stats["planned"] = len(plan)
    if dry_run:
        stats["plan"] = plan
    return stats


def _link(core, pattern_id: int, members: list[tuple[int, float]]) -> None:
    now = core.now()
    with core.backend.write() as c:
        for mid, s in members:
            c.execute(
                "INSERT INTO pattern_members(pattern_id, member_id, similarity, added_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (pattern_id, mid, s, now),
            )
            c.execute(
                "UPDATE memories SET consolidated_into = ?, relevance_score = relevance_score * 0.5 "
                "WHERE id = ? AND consolidated_into IS NULL",
                (pattern_id, mid),
            )
        n = c.execute("SELECT COUNT(*) FROM pattern_members WHERE pattern_id = ?", (pattern_id,)).fetchone()[0]
        import json

        from harness_memory.core import dumps

        meta = json.loads(c.execute("SELECT metadata FROM memories WHERE id = ?", (pattern_id,)).fetchone()[0])
        meta["members"] = n  # read-modify-write inside the write transaction (writers are serialised)
        c.execute("UPDATE memories SET metadata = ?, updated_at = ? WHERE id = ?", (dumps(meta), now, pattern_id))


def _summarise(summariser: Any, group: list, medoid: Any) -> str:
    """The pattern's content: a legacy ``summariser(members) -> str`` callable as before; a
    :class:`harness_memory.summarisers.Summariser` (the interface reflection uses) asked to condense
    the members' contents, falling back to the extractive summary with a warning when it fails."""
    if summariser is None:
        return _summary(group, medoid)
    if not hasattr(summariser, "summarise"):
        return summariser(group)
    import logging

    try:
        text = summariser.summarise(
            [m.content for m in group],
            instruction=(
                "These memories describe the same recurring situation. Write one short paragraph stating the "
                "pattern they share and what worked, naming the concrete errors, tools and fixes. No other text."
            ),
        )
        if isinstance(text, str) and text.strip():
            return text.strip()
        raise ValueError("empty answer")
    except Exception as exc:  # noqa: BLE001 - an endpoint or user code: the offline summary instead
        logging.getLogger("harness_memory.jobs.consolidate").warning(
            "consolidate: the summariser failed (%s); extractive summary used", type(exc).__name__
        )
        return _summary(group, medoid)


def _create_pattern(
    store: MemoryStore,
    ns: str,
    agent: str,
    scope: str,
    mtype: str,
    members: list[int],
    vecs: dict[int, np.ndarray],
    summariser: Summariser | None,
) -> int:
    from harness_memory import writes

    core = store._core
    mems = core.fetch(members)
    M = np.stack([vecs[i] for i in members])
    c = M.mean(axis=0)
    c /= max(np.linalg.norm(c), 1e-12)
    sims = M @ c
    medoid = mems[members[int(np.argmax(sims))]]
    group = [mems[i] for i in members]
    content = _summarise(summariser, group, medoid)
    tags = [t for t, k in Counter(t for g in group for t in g.tags).most_common(8) if k >= 2]
    item = writes.prepare(
        core,
        content[: store.settings.max_content_bytes],
        type="pattern",
        agent_id=agent,
        scope=scope,
        namespace=ns,
        tags=tags,
        importance=max(g.importance for g in group),
        task_signature=Counter(g.task_signature for g in group).most_common(1)[0][0],
        metadata={"source_type": mtype, "members": len(members), "medoid": medoid.id},
    )
    vec = core.embed([item.content])  # before the write lock: an embedder may be slow or remote
    writes.catch_up(core, vec)  # the vector index's first load too
    with core.backend.write():
        pattern = writes.write_many(core, [item], writes.NO_VECTORS if vec is None else vec)[0]
        core.backend.conn.execute(
            "UPDATE memories SET error_signature = ?, error_template = ? WHERE id = ?",
            (medoid.error_signature, medoid.error_template, pattern.id),
        )
        _link(core, pattern.id, [(i, float(s)) for i, s in zip(members, sims)])
    return pattern.id
