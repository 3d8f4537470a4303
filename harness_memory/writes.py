"""remember(): validation, redaction, de-duplication, keyed update-in-place, insertion."""

from __future__ import annotations

import json
import os
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from . import fixes, validation as v
from .core import Core, content_hash, dumps, error_text, signature_basis
from .fixes import fix_kind
from .models import Memory
from .redact import redact_mapping

__all__ = ["MemoryInput", "prepare", "write_many"]


@dataclass
class MemoryInput:
    """A validated, redacted memory ready to be written."""

    content: str
    type: str
    agent_id: str
    scope: str
    namespace: str
    key: str | None
    task_signature: str | None
    error_signature: str | None
    error_template: str | None
    tags: list[str]
    importance: float
    ttl: float | None
    metadata: dict[str, Any]
    session_id: str | None
    task_id: str | None
    content_hash: str
    error_basis: str | None = None  # JSON of what was signed (for re-signing, see jobs/resign.py)
    fix_kind: str | None = None
    fix_link: tuple[str, str | None, bool, list[str]] | None = None  # (signature, category, worked, bound params)
    error_message: str | None = None  # the decisive line that was signed (links index it for similar errors)
    error_origin: str | None = None  # where the failing run started (ErrorSignature.origin), on the link
    error_instance: str | None = None  # the error's failure block (fixes.instance_text), on the link
    thread_id: str | None = None  # an event of a thread (an episode): never merged into another memory


def _redact_obj(obj: Any, found: list[str]) -> Any:
    """Every string redacted; a value under a secret-named key ({"password": ...}) replaced whole."""
    return redact_mapping(obj, found)


def prepare(
    core: Core,
    content: Any,
    *,
    type: Any,
    agent_id: Any,
    scope: Any = "agent",
    namespace: Any = None,
    key: Any = None,
    task_signature: Any = None,
    error: Any = None,
    tags: Any = (),
    importance: Any = 0.5,
    ttl: Any = None,
    metadata: Any = None,
    session_id: Any = None,
    task_id: Any = None,
    fix_worked: bool | None = None,
    link_fix: bool = True,
    thread_id: Any = None,
    fix_text: str | None = None,
) -> MemoryInput:
    """Validate and redact one memory. A ``success`` taught with an ``error`` is a fix that worked
    for it (an error→fix link); ``fix_worked`` sets the link explicitly for any type. ``fix_text``
    is the end of ``content`` that is the fix itself when the content
    also carries the error (``learn_error`` stores "<error>: <fix>"): the fix's kind and the values
    it is bound to come from it, and ``metadata["fix_starts_at"]`` records where it starts."""
    s = core.settings
    content = v.text(content, "content", max_bytes=s.max_content_bytes).strip()
    mtype = core.types.check(type)
    agent = v.ident(agent_id, "agent_id")
    sc = v.scope(scope)
    ns = v.ident(namespace, "namespace", optional=True) or s.namespace
    key = v.ident(key, "key", optional=True) if key is not None else None
    if task_signature is not None:
        task_signature = v.text(task_signature, "task_signature", max_bytes=1000).strip()
    if error is not None:
        error = error_text(error)
    tag_list = v.tags(tags, max_tags=s.max_tags, max_len=s.max_tag_length)
    imp = v.unit_float(importance, "importance")
    ttl_s = v.ttl_seconds(ttl)
    meta = v.metadata(metadata)
    session_id = v.ident(session_id, "session_id", optional=True)
    task_id = v.ident(task_id, "task_id", optional=True)
    thread_id = v.ident(thread_id, "thread_id", optional=True)
    if fix_text is not None:
        fix_text = v.text(fix_text, "fix_text", max_bytes=s.max_content_bytes, allow_empty=True)

    found: list[str] = []
    if s.redact_secrets:
        content = _redact_obj(content, found)
        meta = _redact_obj(meta, found)
        if task_signature is not None:  # free text a harness builds from its task (a title, a command line)
            task_signature = _redact_obj(task_signature, found)
        tag_list = [t for t in dict.fromkeys(_redact_obj(tag_list, found))]
        if found:
            meta["redacted"] = sorted(
                set(found) | set(meta.get("redacted", []) if isinstance(meta.get("redacted"), list) else [])
            )
    esig = etpl = excerpt = message = link = kind = origin = instance = None
    if error is not None and error.strip():
        signed = core.sign(error)
        esig, etpl = signed.id, signed.template
        message = fixes.link_text(signed)
        origin = signed.origin
        instance = fixes.instance_text(signed)
        excerpt = signature_basis(signed)
        meta.setdefault("error_category", signed.category)
        worked = fix_worked if fix_worked is not None else (True if mtype == "success" else None)
        if worked is not None and link_fix:
            fix = content
            if fix_text is not None:
                part = (_redact_obj(fix_text, []) if s.redact_secrets else fix_text).strip()
                if part and content.endswith(part):
                    fix = part
                    meta["fix_starts_at"] = len(content) - len(part)
            link = (signed.id, signed.category, bool(worked), fixes.bound_params(fix, signed.params))
            kind = fix_kind(fix)
    return MemoryInput(
        content=content,
        type=mtype,
        agent_id=agent,
        scope=sc,
        namespace=ns,
        key=key,
        task_signature=task_signature or None,
        error_signature=esig,
        error_template=etpl,
        tags=tag_list,
        importance=imp,
        ttl=ttl_s,
        metadata=meta,
        session_id=session_id,
        task_id=task_id,
        content_hash=content_hash(content),
        error_basis=excerpt,
        fix_kind=kind,
        fix_link=link,
        error_message=message,
        error_origin=origin,
        error_instance=instance,
        thread_id=thread_id,
    )


def catch_up(core: Core, vectors: object) -> None:
    """Bring the in-process vector index up to date before a write transaction opens: its first load
    reads every vector of the store (seconds at 100k), which must never happen holding the write
    lock. :func:`write_many` does it itself; a caller that opens the transaction around
    ``write_many`` (and other writes of its own) calls this first. Nothing to do without vectors, or
    when already inside a transaction (the write's own catch-up then reads only what others logged)."""
    if core.index is not None and vectors is not None and vectors is not NO_VECTORS and not core.backend.in_transaction:
        core.index.sync(core.backend)


def write_many(core: Core, items: list[MemoryInput], vectors: np.ndarray | None | object = None) -> list[Memory]:
    """Write validated inputs in ONE transaction; return the resulting memories in order.

    Per item: a key that exists updates in place (old version kept in memory_history); an
    exact duplicate (same content hash, namespace, agent, scope, type) or a near duplicate
    (cosine >= near_duplicate_threshold) reinforces the existing memory and records the
    merge; anything else is inserted.
    """
    checked = False  # core.embed checked the embedder just now (one statement fewer per remember)
    if vectors is None:  # embedding happens here, before the write transaction (callers may embed earlier)
        vectors = core.embed([it.content for it in items]) if items else None
        checked = True
    elif vectors is NO_VECTORS:
        vectors = None
    vectors = cast("np.ndarray | None", vectors)  # NO_VECTORS, the only other value, is gone
    ids: list[int] = []
    if vectors is not None and not checked:
        core.check_embedder()  # re-embedded elsewhere since embed() checked: say so before the index reads it
    catch_up(core, vectors)  # before the lock (a first load or a mass archive is slow); no-op inside one
    try:
        with core.backend.write():
            if vectors is not None:
                # another process may have re-embedded the store since these vectors were made (the
                # check in embed() ran before): a vector of the old space is never stored
                core.check_embedder()
            pre: dict[int, tuple[int, float] | None] = {}
            start: tuple[int, int] | None = None
            if core.index is not None and vectors is not None:
                core.index.sync(core.backend)  # only what other writers logged since: a few rows
                start = _own_start(core)
                pre = _batch_nearest(core, items, vectors)
            if len(items) > 1:
                ids = _write_batch(core, items, vectors, pre)
            else:
                ids = _write_sequential(core, items, vectors, pre)
            if start is not None and vectors is not None:
                _own_apply(core, start, items, ids, vectors)
            # read back inside the transaction: a bulk delete in another process (a clear of the
            # namespace) could delete the new rows right after the commit (a KeyError here, seen
            # by benchmarks/stalls.py's probe); the caller gets what it wrote
            got = core.fetch(ids)
    except BaseException:
        if core.index is not None:
            core.index.seq = None  # it may have read rows of the rolled-back transaction
        raise
    return [got[i] for i in ids]


def _own_start(core: Core) -> tuple[int, int] | None:
    """``(change-log sequence, largest memory id)`` before this transaction writes, when its own
    vectors may go straight into the in-process index (see :func:`_own_apply`)."""
    if core.index is None or core.index.seq is None:
        return None
    top = core.backend.conn.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0]
    return core.index.seq, int(top)


def _own_apply(core: Core, start: tuple[int, int], items: list[MemoryInput], ids: list[int], vectors: Any) -> None:
    """Put the vectors this transaction inserted into the in-process index and advance it past
    them, instead of reading them back from vec0 at the next sync. Only when every change logged
    since ``start`` (inside the write lock: all of them this transaction's) is the first 'put' of
    a memory it created, whose vector and filter fields are the item's; otherwise (an update in
    place, an un-archived duplicate, a sync in between) the next sync catches up from the log."""
    index = core.index
    seq, top = start
    if index is None or index.seq != seq or any(it.key is not None for it in items):
        return
    first: dict[int, int] = {}
    for k, mid in enumerate(ids):
        if mid > top:
            first.setdefault(mid, k)
    changes = core.backend.conn.execute(
        "SELECT seq, memory_id, op FROM vector_changes WHERE seq > ? ORDER BY seq", (seq,)
    ).fetchall()
    if not changes or len(changes) != len(first) or any(op != "put" or mid not in first for _, mid, op in changes):
        return
    if len({mid for _, mid, _ in changes}) != len(changes):
        return
    rows = []
    for _, mid, _ in changes:
        it = items[first[mid]]
        rows.append((mid, it.namespace, it.agent_id, it.scope, it.type, False, vectors[first[mid]]))
    if len(rows) == 1:
        index.put(*rows[0])
    else:
        index.put_many(rows)  # as whole arrays (put costs tens of us a row)
    index.caught_up(int(changes[-1][0]))


def _link_fix(core: Core, mid: int, it: MemoryInput) -> None:
    """The error->fix link of ``it`` (it survives de-duplication: it joins the kept memory)."""
    assert it.fix_link is not None
    fixes.link(
        core,
        mid,
        it.fix_link[0],
        it.fix_link[1],
        it.error_message,
        worked=it.fix_link[2],
        now=core.now(),
        bound=it.fix_link[3],
        task_signature=it.task_signature,
        origin=it.error_origin,
        instance=it.error_instance,
    )
    if it.fix_kind is not None:
        core.backend.conn.execute(
            "UPDATE memories SET fix_kind = COALESCE(fix_kind, ?) WHERE id = ?", (it.fix_kind, mid)
        )


def _write_sequential(
    core: Core, items: list[MemoryInput], vectors: np.ndarray | None, pre: dict[int, tuple[int, float] | None]
) -> list[int]:
    """One item after the other, each seeing the rows the ones before it wrote (one remember)."""
    ids: list[int] = []
    added: dict[tuple[str, str, str, str], _Added] = defaultdict(_Added)  # (memory id, vector)
    for k, it in enumerate(items):
        vec = None if vectors is None else vectors[k]
        group = (it.namespace, it.agent_id, it.scope, it.type)
        near: Any = _UNKNOWN
        if k in pre:  # best match among rows before this batch, then among rows this batch added
            near = pre[k]
            best = added[group].best(vec)
            if best is not None and (near is None or best[1] > near[1]):
                near = best
        mid, inserted = _write_one(core, it, vec, near)
        if it.fix_link is not None:
            _link_fix(core, mid, it)
        if inserted and vec is not None and it.key is None and it.thread_id is None:
            added[group].append(mid, vec)
        ids.append(mid)
    return ids


def _write_batch(
    core: Core, items: list[MemoryInput], vectors: np.ndarray | None, pre: dict[int, tuple[int, float] | None]
) -> list[int]:
    """A batch with the same outcome as :func:`_write_sequential`, in few statements: the exact
    duplicates of the whole batch are looked up at once (``backend.existing_hashes``), the near
    duplicates too when no in-process index answered them (``backend.vector_knn_many``), and new
    memories are inserted together (``backend.insert_returning``, ``index_texts``, ``put_vectors``)
    — one round trip per table on PostgreSQL instead of about eight per memory.

    Inserts are deferred and flushed whenever a later item needs a deferred row's id (it
    duplicates it), before any item that takes the sequential path (a key, a thread, a fix link),
    and at the end, so ids follow the items' order and every decision sees what the sequential
    path would have seen."""
    ids: list[int | None] = [None] * len(items)
    fast = [k for k, it in enumerate(items) if it.key is None and it.thread_id is None and it.fix_link is None]
    dedup = [k for k, it in enumerate(items) if it.key is None and it.thread_id is None]
    seen: dict[tuple[str, str, str, str, str], int | None] = dict(
        core.backend.existing_hashes(list(dict.fromkeys(_hash_key(items[k]) for k in dedup)))
    )
    if vectors is not None and core.index is None:
        # an exact duplicate of a stored row is reinforced whatever its neighbours: no search for it
        need = [k for k in fast if seen.get(_hash_key(items[k])) is None]
        pre = _knn_nearest_many(core, items, vectors, need)
    pending: list[int] = []  # items whose insert is deferred
    slot: dict[tuple[str, str, str, str, str], int] = {}  # hash key -> the deferred item holding it
    added: dict[tuple[str, str, str, str], _Added] = defaultdict(_Added)  # (item, vector)

    def flush() -> None:
        if pending:
            for k, mid in zip(pending, _insert_many(core, [items[k] for k in pending], vectors, pending)):
                ids[k] = mid
            for key, k in slot.items():
                seen[key] = ids[k]
            pending.clear()
            slot.clear()

    merges: list[tuple[int, MemoryInput, float, float | None, str, float]] = []  # reinforcements, applied together
    fast_set = set(fast)
    may_repeat = _may_repeat(items, vectors, core.settings.near_duplicate_threshold)
    for k, it in enumerate(items):
        vec = None if vectors is None else vectors[k]
        group = (it.namespace, it.agent_id, it.scope, it.type)
        hkey = (*group, it.content_hash)
        if k not in fast_set:
            flush()
            _reinforce_many(core, merges)  # this item may read (and reinforce) the rows they change
            near: Any = _UNKNOWN
            if k in pre:
                near = _best_with_added(pre[k], added[group], vec, ids)
            mid, inserted = _write_one(core, it, vec, near)
            if it.fix_link is not None:
                _link_fix(core, mid, it)
            if inserted and it.key is None and it.thread_id is None:
                seen.setdefault(hkey, mid)
                if vec is not None:
                    added[group].append(k, vec)
            ids[k] = mid
            continue
        now = core.now()
        expires = None if it.ttl is None else now + it.ttl
        if hkey in slot:  # an exact duplicate of a deferred item of this batch
            flush()
        if seen.get(hkey) is not None:
            target = seen[hkey]
            assert target is not None
            merges.append((target, it, now, expires, "exact", 1.0))
            ids[k] = target
            continue
        if vec is not None:
            near = pre[k] if k in pre else _nearest(core, it, vec)
            # an earlier item of the batch can be its near duplicate only if one reaches the threshold
            best = added[group].best(vec) if k in may_repeat else None
            threshold = core.settings.near_duplicate_threshold
            if best is not None and best[1] >= threshold and (near is None or best[1] > near[1]):
                if ids[best[0]] is None:
                    flush()
                target = ids[best[0]]
                assert target is not None
                merges.append((target, it, now, expires, "near", best[1]))
                ids[k] = target
                continue
            if near is not None and near[1] >= threshold:
                merges.append((near[0], it, now, expires, "near", near[1]))
                ids[k] = near[0]
                continue
            added[group].append(k, vec)
        pending.append(k)
        slot[hkey] = k
    flush()
    _reinforce_many(core, merges)
    assert all(i is not None for i in ids)
    return cast("list[int]", ids)


def _may_repeat(items: list[MemoryInput], vectors: np.ndarray | None, threshold: float) -> set[int]:
    """The items whose vector may reach ``threshold`` with an earlier item's of the same group (one
    product per group for the whole batch, with a slack for its rounding): only these can be near
    duplicates of what the batch added before them; for the others ``_Added.best`` is skipped (most
    of a batch: a product per item). A superset: the decision itself is still ``_Added.best``'s."""
    out: set[int] = set()
    if vectors is None:
        return out
    groups: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    for k, it in enumerate(items):
        groups[(it.namespace, it.agent_id, it.scope, it.type)].append(k)
    for ks in groups.values():
        if len(ks) < 2:
            continue
        vs = np.asarray(vectors[ks], dtype=np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", vs, vs))
        # rows in blocks against the rows before them: memory linear in the group's size (a whole
        # n x n product took ~12 n^2 bytes: 6,000 items of one group 420 MB)
        step = max(1, MAY_REPEAT_PAIRS // len(ks))
        for a in range(1, len(ks), step):
            b = min(a + step, len(ks))
            sims = vs[a:b] @ vs[:b].T
            # float32 rounding of a product of n terms stays far below 1e-4 of |a| |b| (n <= 4096)
            reach = sims >= threshold - MAY_REPEAT_SLACK * np.maximum(1.0, np.outer(norms[a:b], norms[:b]))
            reach &= np.tri(b - a, b, k=a - 1, dtype=bool)  # earlier items only
            out.update(ks[a + i] for i in np.flatnonzero(reach.any(axis=1)).tolist())
    return out


MAY_REPEAT_SLACK = 1e-4
MAY_REPEAT_PAIRS = 1 << 20  # (item, earlier item) pairs compared at once by _may_repeat (~12 MB)


def _hash_key(it: MemoryInput) -> tuple[str, str, str, str, str]:
    return (it.namespace, it.agent_id, it.scope, it.type, it.content_hash)


def _best_with_added(
    near: tuple[int, float] | None, added: _Added, vec: Any, ids: list[int | None]
) -> tuple[int, float] | None:
    best = added.best(vec, usable=[ids[j] is not None for j in added.keys])
    if best is not None and (near is None or best[1] > near[1]):
        near = (cast("int", ids[best[0]]), best[1])
    return near


class _Added:
    """What a batch inserted so far in one group: keys (item positions or memory ids) and their
    vectors as one growing matrix, so the most similar to the next item is one product instead of
    a dot product per earlier item (a batch of 1,000 in 16 groups: ~30 per item)."""

    __slots__ = ("keys", "vecs")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.vecs: np.ndarray | None = None

    def append(self, key: int, vec: np.ndarray) -> None:
        n = len(self.keys)
        if self.vecs is None or n == len(self.vecs):
            grown = np.empty((max(16, 2 * n), len(vec)), dtype=np.float32)
            if self.vecs is not None:
                grown[:n] = self.vecs[:n]
            self.vecs = grown
        self.vecs[n] = vec
        self.keys.append(key)

    def best(self, vec: Any, usable: list[bool] | None = None) -> tuple[int, float] | None:
        """``(key, cosine)`` of the most similar (the first of equals), among the ``usable`` ones."""
        if self.vecs is None or not self.keys:
            return None
        sims = self.vecs[: len(self.keys)] @ np.asarray(vec, dtype=np.float32)
        if usable is not None:
            if not any(usable):
                return None
            sims = np.where(usable, sims, -np.inf)
        b = int(sims.argmax())
        return self.keys[b], float(sims[b])


def _knn_nearest_many(
    core: Core, items: list[MemoryInput], vectors: np.ndarray, ks: list[int]
) -> dict[int, tuple[int, float] | None]:
    """Nearest existing un-keyed memory per item through the database's own vector search, all
    items in one call (``backend.vector_knn_many``; PostgreSQL: one statement for the batch)."""
    if not ks:
        return {}
    hits = core.backend.vector_knn_many(
        [(vectors[k], items[k].namespace, items[k].agent_id, items[k].scope, items[k].type) for k in ks],
        4,
        min_sim=core.settings.near_duplicate_threshold,  # rows below it decide nothing here
    )
    found = list(dict.fromkeys(mid for h in hits for mid, _ in h))
    excluded: set[int] = set()
    for i in range(0, len(found), 500):  # keyed memories and a thread's events are never merged into
        chunk = found[i : i + 500]
        excluded.update(
            r[0]
            for r in core.backend.conn.execute(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(chunk))}) "
                "AND (key IS NOT NULL OR thread_id IS NOT NULL)",
                chunk,
            )
        )
    out: dict[int, tuple[int, float] | None] = {}
    for k, h in zip(ks, hits):
        out[k] = next(((mid, sim) for mid, sim in h if mid not in excluded), None)
    return out


def _insert_many(core: Core, items: list[MemoryInput], vectors: np.ndarray | None, ks: list[int]) -> list[int]:
    """Insert new memories (rows, tags, keyword rows, vectors) together; their ids in order."""
    now = core.now()
    rows = [
        _insert_row(it, vectors is None, now, None if it.ttl is None else now + it.ttl, uid)
        for it, uid in zip(items, _uids(len(items)))
    ]
    mids = core.backend.insert_returning(_INSERT_SQL, rows)
    c = core.backend.conn
    c.executemany(
        "INSERT INTO memory_tags(memory_id, tag) VALUES (?, ?)",
        [(mid, t) for mid, it in zip(mids, items) for t in it.tags],
    )
    core.backend.index_texts([(mid, it.content, it.tags) for mid, it in zip(mids, items)])
    if vectors is not None:
        core.backend.put_vectors(
            [
                (mid, it.namespace, it.agent_id, it.scope, it.type, False, vectors[k])
                for mid, it, k in zip(mids, items, ks)
            ]
        )
    return mids


_UNKNOWN = object()
NO_VECTORS = object()  # write_many(vectors=NO_VECTORS): the embedder failed earlier (keyword-only + pending)
BATCH_EXACT_LIMIT = 65_536


def _batch_nearest(core: Core, items: list[MemoryInput], vectors: np.ndarray) -> dict[int, tuple[int, float] | None]:
    """Nearest existing un-keyed memory per item, per (namespace, agent, scope, type): for a few
    items (one remember), every row reaching the near-duplicate threshold, found through the sign
    codes (``VectorIndex.near``: exact, reads the vectors of the few rows that can reach it; None
    when none does; once the group's first coordinates are kept, through the bound they give); for
    many, the best row reaching the threshold (``VectorIndex.best_in_group``: that bound, one
    product for all the group's items; None when none does)."""
    groups: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    for k, it in enumerate(items):
        if it.key is None and it.thread_id is None:
            groups[(it.namespace, it.agent_id, it.scope, it.type)].append(k)
    out: dict[int, tuple[int, float] | None] = {}
    index = core.index
    assert index is not None  # the caller searches only with an index
    threshold = core.settings.near_duplicate_threshold
    for (ns, agent, scope, mtype), ks in groups.items():
        rows = (
            None
            if len(ks) <= NEAR_ITEMS
            else index.candidates(namespace=ns, agent_id=agent, scope=scope, types=[mtype], include_archived=True)
        )  # (a few items never need the group's rows: each is checked through its codes)
        if rows is None or len(rows) > BATCH_EXACT_LIMIT:
            hits = {k: index.near_in_group(ns, agent, scope, mtype, vectors[k], threshold) for k in ks}
            found = list(dict.fromkeys(mid for h in hits.values() for mid, _ in h))
            excluded = _keyed_or_thread(core, found)
            for k, h in hits.items():
                out[k] = next(((mid, sim) for mid, sim in h if mid not in excluded), None)
            continue
        # two reads, each through its partial index (one OR-ed condition read every row of the agent)
        keyed = {
            r[0]
            for r in core.backend.conn.execute(
                "SELECT id FROM memories WHERE namespace = ? AND agent_id = ? AND memory_type = ? AND key IS NOT NULL "
                "UNION SELECT id FROM memories WHERE namespace = ? AND thread_id IS NOT NULL AND agent_id = ? "
                "AND memory_type = ?",
                (ns, agent, mtype, ns, agent, mtype),
            )
        }
        best = index.best_in_group(ns, agent, scope, mtype, vectors[ks], threshold, exclude=keyed)
        out.update(zip(ks, best))  # (only a row reaching the threshold decides anything: None below it)
    return out


NEAR_ITEMS = 16  # a group with at most this many items of a batch checks each through VectorIndex.near


def _keyed_or_thread(core: Core, ids: list[int]) -> set[int]:
    """Those of ``ids`` never merged into: keyed memories (updated through their key) and a thread's events."""
    out: set[int] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        out.update(
            r[0]
            for r in core.backend.conn.execute(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(chunk))}) "
                "AND (key IS NOT NULL OR thread_id IS NOT NULL)",
                chunk,
            )
        )
    return out


def _write_one(core: Core, it: MemoryInput, vec: np.ndarray | None, near: Any = _UNKNOWN) -> tuple[int, bool]:
    """Returns ``(memory_id, inserted)``."""
    c = core.backend.conn
    now = core.now()
    expires = None if it.ttl is None else now + it.ttl
    if it.key is not None:
        row = c.execute(
            "SELECT id FROM memories WHERE namespace = ? AND agent_id = ? AND memory_type = ? AND key = ?",
            (it.namespace, it.agent_id, it.type, it.key),
        ).fetchone()
        if row is not None:
            _update_in_place(core, row[0], it, vec, now, expires)
            return row[0], False
    elif it.thread_id is None:  # a thread's events are each kept: the same words said twice happened twice
        row = c.execute(
            "SELECT id FROM memories WHERE namespace = ? AND agent_id = ? AND scope = ? AND memory_type = ? "
            "AND content_hash = ? AND key IS NULL AND thread_id IS NULL ORDER BY id LIMIT 1",
            _hash_key(it),
        ).fetchone()
        if row is not None:
            _reinforce(core, row[0], it, now, expires, "exact", 1.0)
            return row[0], False
        if vec is not None:
            if near is _UNKNOWN:
                near = _nearest(core, it, vec)
            if near is not None and near[1] >= core.settings.near_duplicate_threshold:
                _reinforce(core, near[0], it, now, expires, "near", near[1])
                return near[0], False
    return _insert(core, it, vec, now, expires), True


def _nearest(core: Core, it: MemoryInput, vec: np.ndarray) -> tuple[int, float] | None:
    if core.index is not None:
        core.index.sync(core.backend)
        hits = core.index.search(
            vec,
            namespace=it.namespace,
            agent_id=it.agent_id,
            types=[it.type],
            scope=it.scope,
            include_archived=True,
            k=4,
        )
    else:
        hits = core.backend.vector_knn(
            vec,
            namespace=it.namespace,
            agent_id=it.agent_id,
            scope=it.scope,
            memory_type=it.type,
            include_archived=True,
            k=4,
        )
    # keyed memories are updated through their key, a thread's events are kept: never merged into
    for mid, sim in hits:
        r = core.backend.conn.execute("SELECT key, thread_id FROM memories WHERE id = ?", (mid,)).fetchone()
        if r is not None and r[0] is None and r[1] is None:
            return mid, sim
    return None


_INSERT_SQL = (
    "INSERT INTO memories(uid, namespace, agent_id, scope, memory_type, content, key, task_signature, "
    "error_signature, error_template, context_tags, importance, relevance_score, session_id, task_id, "
    "metadata, content_hash, created_at, updated_at, expires_at, embedding_pending, error_basis, fix_kind, "
    "thread_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1.0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"
)


def _uids(n: int) -> list[str]:
    """``uuid.uuid4().hex`` ``n`` times from one ``os.urandom`` call (uuid4 makes one per id, ~6 us):
    16 random bytes each, with the version (4) and the variant (RFC 4122) bits set as uuid4 sets them."""
    raw = bytearray(os.urandom(16 * n))
    raw[6::16] = bytes((b & 0x0F) | 0x40 for b in raw[6::16])
    raw[8::16] = bytes((b & 0x3F) | 0x80 for b in raw[8::16])
    h = raw.hex()
    return [h[32 * i : 32 * i + 32] for i in range(n)]


def _insert_row(
    it: MemoryInput, no_vector: bool, now: float, expires: float | None, uid: str | None = None
) -> tuple[Any, ...]:
    return (
        uid or uuid.uuid4().hex,
        it.namespace,
        it.agent_id,
        it.scope,
        it.type,
        it.content,
        it.key,
        it.task_signature,
        it.error_signature,
        it.error_template,
        dumps(it.tags),
        it.importance,
        it.session_id,
        it.task_id,
        dumps(it.metadata),
        it.content_hash,
        now,
        now,
        expires,
        int(no_vector),
        it.error_basis,
        it.fix_kind,
        it.thread_id,
    )


def _insert(core: Core, it: MemoryInput, vec: np.ndarray | None, now: float, expires: float | None) -> int:
    cur = core.backend.conn.execute(_INSERT_SQL, _insert_row(it, vec is None, now, expires))
    mid = int(cur.fetchone()[0])
    _index(core, mid, it, vec, archived=False, new=True)
    return mid


def _index(core: Core, mid: int, it: MemoryInput, vec: np.ndarray | None, *, archived: bool, new: bool = False) -> None:
    """Tags, FTS row and vector of a memory; ``new`` skips the deletes a brand-new id cannot need."""
    c = core.backend.conn
    if not new:
        c.execute("DELETE FROM memory_tags WHERE memory_id = ?", (mid,))
    c.executemany("INSERT INTO memory_tags(memory_id, tag) VALUES (?, ?)", [(mid, t) for t in it.tags])
    core.backend.index_text(mid, it.content, it.tags, new=new)
    if vec is not None:
        core.backend.put_vector(mid, it.namespace, it.agent_id, it.scope, it.type, archived, vec, new=new)


def _update_in_place(
    core: Core, mid: int, it: MemoryInput, vec: np.ndarray | None, now: float, expires: float | None
) -> None:
    c = core.backend.conn
    old = c.execute(
        "SELECT version, content, content_hash, context_tags, importance, metadata, updated_at, archived "
        "FROM memories WHERE id = ?",
        (mid,),
    ).fetchone()
    c.execute(
        "INSERT INTO memory_history(memory_id, version, content, content_hash, context_tags, importance, "
        "metadata, valid_from, valid_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (mid, old[0], old[1], old[2], old[3], old[4], old[5], old[6], now),
    )
    c.execute(
        "UPDATE memories SET content = ?, content_hash = ?, scope = ?, task_signature = ?, error_signature = ?, "
        "error_template = ?, context_tags = ?, importance = ?, metadata = ?, session_id = ?, task_id = ?, "
        "updated_at = ?, expires_at = ?, version = version + 1, embedding_pending = ?, archived = 0, "
        "relevance_score = 1.0, decayed_at = ?, error_basis = ?, fix_kind = COALESCE(?, fix_kind) WHERE id = ?",
        (
            it.content,
            it.content_hash,
            it.scope,
            it.task_signature,
            it.error_signature,
            it.error_template,
            dumps(it.tags),
            it.importance,
            dumps(it.metadata),
            it.session_id,
            it.task_id,
            now,
            expires,
            int(vec is None),
            now,
            it.error_basis,
            it.fix_kind,
            mid,
        ),
    )
    if vec is None:
        core.backend.remove_vectors([mid])
    _index(core, mid, it, vec, archived=False)
    core.log(
        [mid],
        "updated",
        agent_id=it.agent_id,
        session_id=it.session_id,
        task_id=it.task_id,
        outcome="updated in place via key",
    )


def _reinforce_many(core: Core, merges: list[tuple[int, MemoryInput, float, float | None, str, float]]) -> None:
    """:func:`_reinforce` of each ``(memory id, item, now, expires, kind, similarity)`` in order, with the
    same outcome, in a few statements for all of them (a batch with many duplicates paid five to seven
    statements, each a round trip on PostgreSQL, per duplicate): the rows read at once, each memory's
    state folded through its items in order (tags united and capped, importance raised, the later
    expiry, one access and one relevance boost per item: ``least(1, r + b)`` taken k times is
    ``least(1, r + k b)``), then one update per memory, the merge and access-log rows together. Empties
    ``merges``."""
    if len(merges) <= 1:
        for m in merges:
            _reinforce(core, *m)
        merges.clear()
        return
    c = core.backend.conn
    ids = list(dict.fromkeys(m[0] for m in merges))
    rows: dict[int, Any] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        for r in c.execute(
            "SELECT id, context_tags, importance, expires_at, archived, namespace, agent_id, scope, memory_type, "
            f"content FROM memories WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            rows[int(r[0])] = r
    # per memory: [tags, importance, expires_at, items folded in, the last item's time]
    state = {mid: [json.loads(rows[mid][1]), rows[mid][2], rows[mid][3], 0, 0.0] for mid in ids}
    for mid, it, now, expires, _, _ in merges:
        st = state[mid]
        st[0] = list(dict.fromkeys(st[0] + it.tags))[: core.settings.max_tags]
        st[1] = min(1.0, max(st[1], it.importance) + 0.05)
        st[2] = None if (st[2] is None or expires is None) else max(st[2], expires)
        st[3] += 1
        st[4] = now
    from .jobs.decay import current_relevance

    cur, cur_params = current_relevance(core.settings, core.backend)
    boost = core.settings.recall_boost
    c.executemany(
        "UPDATE memories SET access_count = access_count + ?, last_accessed = ?, importance = ?, "
        "context_tags = ?, expires_at = ?, updated_at = ?, "
        f"relevance_score = {core.backend.least('1.0', f'{cur} + ?')}, decayed_at = ?, archived = 0 WHERE id = ?",
        [
            (n, now, imp, dumps(tags), exp, now, *cur_params, now, boost * n, now, mid)
            for mid, (tags, imp, exp, n, now) in state.items()
        ],
    )
    c.executemany(
        "INSERT INTO memory_merges(memory_id, kind, similarity, merged_content, merged_hash, agent_id, "
        "session_id, task_id, merged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (mid, kind, float(sim), it.content, it.content_hash, it.agent_id, it.session_id, it.task_id, now)
            for mid, it, now, _, kind, sim in merges
        ],
    )
    retagged = [mid for mid in ids if state[mid][0] != json.loads(rows[mid][1])]
    if retagged:
        c.executemany("DELETE FROM memory_tags WHERE memory_id = ?", [(mid,) for mid in retagged])
        c.executemany(
            "INSERT INTO memory_tags(memory_id, tag) VALUES (?, ?)", [(m, t) for m in retagged for t in state[m][0]]
        )
        for mid in retagged:
            core.backend.index_text(mid, rows[mid][9], state[mid][0])
    archived = [mid for mid in ids if rows[mid][4]]
    if archived:  # un-archived: the vector rows' metadata must follow
        vecs = core.backend.get_vectors(archived)
        for mid in archived:
            if mid in vecs:
                r = rows[mid]
                core.put_vector((mid, r[5], r[6], r[7], r[8], False), vecs[mid])
    logged: dict[tuple[str, str | None, str | None, str], list[int]] = {}
    for mid, it, _, _, kind, sim in merges:
        outcome = f"{kind} duplicate merged (similarity {sim:.3f})"
        logged.setdefault((it.agent_id, it.session_id, it.task_id, outcome), []).append(mid)
    for (agent, session, task, outcome), mids in logged.items():
        core.log(mids, "updated", agent_id=agent, session_id=session, task_id=task, outcome=outcome)
    merges.clear()


def _reinforce(
    core: Core, mid: int, it: MemoryInput, now: float, expires: float | None, kind: str, similarity: float
) -> None:
    """Fold a duplicate into an existing memory: more accesses, more importance, union of tags."""
    c = core.backend.conn
    row = c.execute(
        "SELECT context_tags, importance, expires_at, archived, namespace, agent_id, scope, "
        "memory_type, content FROM memories WHERE id = ?",
        (mid,),
    ).fetchone()
    tags = list(dict.fromkeys(json.loads(row[0]) + it.tags))[: core.settings.max_tags]
    importance = min(1.0, max(row[1], it.importance) + 0.05)
    new_expires = None if (row[2] is None or expires is None) else max(row[2], expires)
    from .jobs.decay import current_relevance

    cur, cur_params = current_relevance(core.settings, core.backend)  # decay up to now, then the boost
    c.execute(
        "UPDATE memories SET access_count = access_count + 1, last_accessed = ?, importance = ?, "
        "context_tags = ?, expires_at = ?, updated_at = ?, "
        f"relevance_score = {core.backend.least('1.0', f'{cur} + ?')}, decayed_at = ?, archived = 0 WHERE id = ?",
        (now, importance, dumps(tags), new_expires, now, *cur_params, now, core.settings.recall_boost, now, mid),
    )
    c.execute(
        "INSERT INTO memory_merges(memory_id, kind, similarity, merged_content, merged_hash, agent_id, "
        "session_id, task_id, merged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (mid, kind, float(similarity), it.content, it.content_hash, it.agent_id, it.session_id, it.task_id, now),
    )
    if tags != json.loads(row[0]):
        c.execute("DELETE FROM memory_tags WHERE memory_id = ?", (mid,))
        c.executemany("INSERT INTO memory_tags(memory_id, tag) VALUES (?, ?)", [(mid, t) for t in tags])
        core.backend.index_text(mid, row[8], tags)
    if row[3]:  # un-archive: the vector row's metadata must follow
        vecs = core.backend.get_vectors([mid])
        if mid in vecs:
            core.put_vector((mid, row[4], row[5], row[6], row[7], False), vecs[mid])
    core.log(
        [mid],
        "updated",
        agent_id=it.agent_id,
        session_id=it.session_id,
        task_id=it.task_id,
        outcome=f"{kind} duplicate merged (similarity {similarity:.3f})",
    )
