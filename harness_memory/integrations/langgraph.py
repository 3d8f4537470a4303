"""LangGraph long-term memory on harness-memory: :class:`HarnessMemoryStore`, a ``BaseStore``.

A LangGraph application passes it where it would pass ``InMemoryStore`` or ``PostgresStore``::

    from harness_memory.integrations.langgraph import HarnessMemoryStore

    store = HarnessMemoryStore("memory.db", agent_id="support-bot")
    graph = builder.compile(store=store)

Mapping. One ``HarnessMemoryStore`` writes into one harness-memory namespace, agent and memory
type (``namespace=`` default the settings' namespace, ``agent_id=`` default ``langgraph``,
``memory_type=`` default ``context``, which consolidation leaves alone). Inside it every LangGraph
item is one keyed memory: the LangGraph namespace tuple and key make its ``key`` (hashed), the
value is kept whole as a JSON document in its metadata, and the text of the indexed fields (the
whole value unless ``index={"fields": [...]}`` or ``put(..., index=[...])`` says otherwise) is its
content, so searches with a ``query`` run through this library's recall (BM25 + vectors + tags,
ranked with the usual priors). Tags carry the namespace's prefixes, which is how a search finds
the items under a prefix. Updates keep the previous version in ``memory_history``.

Semantics follow LangGraph's stores: ``get``/``put``/``delete``; ``search`` with
``namespace_prefix``, ``filter`` (equality and ``$eq $ne $gt $gte $lt $lte``), ``limit``,
``offset`` and ``query`` (ranked by recall, with ``score``; without a query the newest first, as
``PostgresStore``); ``list_namespaces`` with prefix/suffix conditions (``*`` wildcards),
``max_depth``, ``limit`` and ``offset``; TTL in minutes per put or through
``ttl={"default_ttl": ...}`` (an expired item is gone for every read; ``refresh_on_read`` is not
supported: reads never write). Differences, by design of the library: values are redacted like
every memory (a secret in a value is stored as ``[REDACTED:…]``); a namespace lists while it has
items; namespace labels and keys are at most 200 characters without control characters
(:class:`~harness_memory.errors.InvalidInputError` otherwise, and nothing is written); a search or
a namespace listing looks at most ``settings.max_limit`` items or namespaces (default 1,000; set
``HARNESS_MEMORY_MAX_LIMIT`` higher for larger stores).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from ..errors import InvalidInputError
from ..store import MemoryStore

__all__ = ["HarnessMemoryStore"]

_ITEM = "lg-item:"  # one item: namespace and key
_PREFIX = "lg-pre:"  # every prefix of the item's namespace (the empty one included)
_EXACT = "lg-ns:"  # the item's namespace itself
_REGISTRY = "lg-nsreg"  # the per-namespace registry memories (list_namespaces)
_META = "langgraph"


def _h(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def _ns_check(namespace: Any, what: str = "namespace", *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(namespace, tuple | list):
        raise InvalidInputError(f"{what} must be a tuple of strings")
    ns = tuple(namespace)
    if not ns and not allow_empty:
        raise InvalidInputError(f"{what} must not be empty")
    for label in ns:
        if (
            not isinstance(label, str)
            or not label
            or "." in label
            or len(label) > 200
            or any(ord(c) < 32 or ord(c) == 127 for c in label)
        ):
            raise InvalidInputError(
                f"{what} labels must be non-empty strings of at most 200 characters, without "
                f"periods or control characters; got {label!r:.80}"
            )
    return ns


def _key_check(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > 200 or any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise InvalidInputError("key must be a non-empty string of at most 200 characters without control characters")
    return key


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: nested equality, and the $-operators on numbers."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=False))
        )
    return value == wanted


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return value == arg
    if op == "$ne":
        return value != arg
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, b = float(value), float(arg)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise InvalidInputError(f"unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte")


_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def _check_filter(wanted: Any, depth: int = 0) -> None:
    if depth > 32:
        raise InvalidInputError("filter nests too deep")
    if isinstance(wanted, dict):
        for k, w in wanted.items():
            if not isinstance(k, str):
                raise InvalidInputError("filter keys must be strings")
            if k.startswith("$") and k not in _OPERATORS:
                raise InvalidInputError(f"unsupported filter operator {k!r}: use $eq, $ne, $gt, $gte, $lt or $lte")
            _check_filter(w, depth + 1)
    elif isinstance(wanted, list | tuple):
        for w in wanted:
            _check_filter(w, depth + 1)


def _matches(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(ns, path, strict=False)
    elif cond.match_type == "suffix":
        pairs = zip(reversed(ns), reversed(path), strict=False)
    else:
        raise InvalidInputError(f"unsupported match type {cond.match_type!r}: use prefix or suffix")
    return all(p == "*" or a == p for a, p in pairs)


class HarnessMemoryStore(BaseStore):
    """LangGraph's ``BaseStore`` on a harness-memory database (see the module's documentation)."""

    supports_ttl: bool = True

    def __init__(
        self,
        store: MemoryStore | str | Path | None = None,
        *,
        agent_id: str = "langgraph",
        namespace: str | None = None,
        memory_type: str = "context",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ):
        from .. import validation as v

        self._own = not isinstance(store, MemoryStore)
        self._store = store if isinstance(store, MemoryStore) else MemoryStore(store)
        try:
            s = self._store
            self.agent_id = v.ident(agent_id, "agent_id")
            self.hm_namespace = v.ident(namespace, "namespace", optional=True) or s.settings.namespace
            self.memory_type = s._core.types.check(memory_type)
            fields = (index or {}).get("fields") or ["$"]
            if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
                raise InvalidInputError("index fields must be a list of paths such as ['$'] or ['text', 'tags[*]']")
            self.index_fields = list(fields)
            self.ttl_config = ttl
            if ttl is not None:
                for k in ("default_ttl", "sweep_interval_minutes"):
                    val = ttl.get(k)
                    if val is not None and (isinstance(val, bool) or not isinstance(val, int | float) or val <= 0):
                        raise InvalidInputError(f"ttl {k} must be a positive number of minutes")
        except BaseException:
            if self._own:
                self._store.close()
            raise

    # -- plumbing ---------------------------------------------------------------------------------
    @property
    def memory_store(self) -> MemoryStore:
        return self._store

    def close(self) -> None:
        if self._own:
            self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _find(self, tags: list[str], limit: int, query: str = "") -> list[Any]:
        """Recall within this store's namespace/agent/type: archived items included, nothing recorded."""
        return self._store.recall(
            query,
            agent_id=self.agent_id,
            namespace=self.hm_namespace,
            types=[self.memory_type],
            tags=tags,
            include_global=False,
            include_archived=True,
            limit=limit,
            record=False,
        )

    @staticmethod
    def _payload(memory: Any) -> dict[str, Any] | None:
        p = memory.metadata.get(_META)
        return p if isinstance(p, dict) and "ns" in p and "key" in p else None

    def _item(self, memory: Any, score: float | None = None, search: bool = False) -> Item:
        p = self._payload(memory)
        assert p is not None  # the lookup and the search keep only memories that carry a payload
        kw = {
            "namespace": tuple(p["ns"]),
            "key": p["key"],
            "value": p["value"],
            "created_at": memory.created_at,
            "updated_at": memory.updated_at,
        }
        return SearchItem(**kw, score=score) if search else Item(**kw)

    def _lookup(self, ns: tuple[str, ...], key: str) -> Any | None:
        for hit in self._find([_ITEM + _h(ns, key)], 5):
            p = self._payload(hit.memory)
            if p is not None and tuple(p["ns"]) == ns and p["key"] == key:
                return hit.memory
        return None

    def _content(self, value: dict[str, Any], index: Any, ns: tuple[str, ...], key: str) -> str:
        fields = self.index_fields if index is None else ([] if index is False else list(index))
        texts: list[str] = []
        for f in fields:
            try:
                texts += get_text_at_path(value, tokenize_path(f) if f != "$" else "$")
            except Exception as exc:  # noqa: BLE001 - a bad path is the caller's input
                raise InvalidInputError(f"index field {f!r} cannot be read from the value: {exc}") from None
        text = "\n".join(t for t in texts if t.strip()) or f"{'/'.join(ns)}/{key}"
        limit = self._store.settings.max_content_bytes
        data = text.encode("utf-8")
        return text if len(data) <= limit else data[:limit].decode("utf-8", errors="ignore")

    # -- the operations -----------------------------------------------------------------------------
    def _check(self, op: Op) -> None:
        if isinstance(op, GetOp):
            _ns_check(op.namespace)
            _key_check(op.key)
        elif isinstance(op, PutOp):
            _ns_check(op.namespace)
            _key_check(op.key)
            if op.value is not None and not isinstance(op.value, dict):
                raise InvalidInputError("a value must be a dict (or None to delete)")
            if op.value is not None:  # JSON without NaN, within the metadata size limit: checked before any write
                from .. import validation as v

                v.metadata({_META: {"ns": list(op.namespace), "key": op.key, "value": op.value}})
            if len(op.namespace) > self._store.settings.max_tags - 3:
                raise InvalidInputError(f"namespaces are at most {self._store.settings.max_tags - 3} labels deep")
            if op.ttl is not None and (isinstance(op.ttl, bool) or not isinstance(op.ttl, int | float) or op.ttl <= 0):
                raise InvalidInputError("ttl must be a positive number of minutes, or None")
            if op.index not in (None, False) and (isinstance(op.index, str) or not isinstance(op.index, list | tuple)):
                raise InvalidInputError("index must be False, None or a list of field paths")
        elif isinstance(op, SearchOp):
            _ns_check(op.namespace_prefix, "namespace_prefix", allow_empty=True)
            if op.filter is not None and not isinstance(op.filter, dict):
                raise InvalidInputError("filter must be a dict")
            _check_filter(op.filter or {})
            for name in ("limit", "offset"):
                val = getattr(op, name)
                if isinstance(val, bool) or not isinstance(val, int) or val < 0:
                    raise InvalidInputError(f"{name} must be a non-negative int")
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidInputError("query must be a string")
        elif isinstance(op, ListNamespacesOp):
            for cond in op.match_conditions or ():
                _ns_check(cond.path, "match path", allow_empty=True)
                if cond.match_type not in ("prefix", "suffix"):
                    raise InvalidInputError(f"unsupported match type {cond.match_type!r}: use prefix or suffix")
            if op.max_depth is not None and (
                isinstance(op.max_depth, bool) or not isinstance(op.max_depth, int) or op.max_depth < 1
            ):
                raise InvalidInputError("max_depth must be a positive int")
            for name in ("limit", "offset"):
                val = getattr(op, name)
                if isinstance(val, bool) or not isinstance(val, int) or val < 0:
                    raise InvalidInputError(f"{name} must be a non-negative int")
        else:
            raise InvalidInputError(f"unknown operation {type(op).__name__}")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:  # every op is checked before the first one runs
            self._check(op)
        # puts of one (namespace, key) in a batch: the last one wins, applied after the reads (as InMemoryStore)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                m = self._lookup(tuple(op.namespace), op.key)
                results.append(None if m is None else self._item(m))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
        for op in puts.values():
            self._put(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _put(self, op: PutOp) -> None:
        ns, key = tuple(op.namespace), op.key
        existing = self._lookup(ns, key)
        if op.value is None:
            if existing is not None:
                self._store.forget(existing.id)
                if not self._find([_EXACT + _h(ns)], 1):
                    reg = self._registry(ns)
                    if reg is not None:
                        self._store.forget(reg.id)
            return
        value = dict(op.value)
        ttl_min = op.ttl  # put() has applied ttl_config's default_ttl when no ttl was given
        tags = [_ITEM + _h(ns, key), _EXACT + _h(ns)] + [_PREFIX + _h(ns[:i]) for i in range(len(ns) + 1)]
        self._store.remember(
            self._content(value, op.index, ns, key),
            type=self.memory_type,
            agent_id=self.agent_id,
            namespace=self.hm_namespace,
            key="lg:" + _h(ns, key),
            tags=tags,
            ttl=None if ttl_min is None else float(ttl_min) * 60.0,
            metadata={_META: {"ns": list(ns), "key": key, "value": value}},
        )
        if existing is None and self._registry(ns) is None:
            self._store.remember(
                f"LangGraph namespace {'/'.join(ns)}",
                type=self.memory_type,
                agent_id=self.agent_id,
                namespace=self.hm_namespace,
                key="lg-ns:" + _h(ns),
                tags=[_REGISTRY, _REGISTRY + ":" + _h(ns)],
                metadata={_META + "_ns": list(ns)},
            )

    def _registry(self, ns: tuple[str, ...]) -> Any | None:
        for hit in self._find([_REGISTRY + ":" + _h(ns)], 5):
            if hit.memory.metadata.get(_META + "_ns") == list(ns):
                return hit.memory
        return None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        cap = self._store.settings.max_limit
        if op.limit == 0:
            return []
        want = min(cap, (op.offset + op.limit) * 4 + 50)
        query = (op.query or "").strip()
        hits = self._find([_PREFIX + _h(prefix)], want if query else cap, query)
        found: list[tuple[float | None, Any]] = []
        for hit in hits:
            p = self._payload(hit.memory)
            if p is None or tuple(p["ns"][: len(prefix)]) != prefix:
                continue
            if op.filter and not all(_compare(p["value"].get(k), w) for k, w in op.filter.items()):
                continue
            found.append((hit.score if query else None, hit.memory))
        if not query:
            found.sort(key=lambda t: (t[1].updated_at, t[1].id), reverse=True)
        page = found[op.offset : op.offset + op.limit]
        return [self._item(m, score, search=True) for score, m in page]  # type: ignore[misc]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = set()
        for hit in self._find([_REGISTRY], self._store.settings.max_limit):
            ns = hit.memory.metadata.get(_META + "_ns")
            if isinstance(ns, list) and ns:
                namespaces.add(tuple(ns))
        if op.match_conditions:
            namespaces = {ns for ns in namespaces if all(_matches(c, ns) for c in op.match_conditions)}
        if op.max_depth is not None:
            namespaces = {ns[: op.max_depth] for ns in namespaces}
        return sorted(namespaces)[op.offset : op.offset + op.limit]
