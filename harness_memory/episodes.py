"""Episodes, threads and reflection.

An *episode* is a short-term memory of one thread (a conversation, a run): ``remember(text,
type="episode", thread_id=...)``. A thread's events are each kept (never merged as duplicates).
:func:`reflect` turns a thread's unreflected episodes into durable ``fact`` (and, for what recurs
across episodes, ``pattern``) memories, links each to the episodes it came from
(``memory_sources``) and marks those episodes reflected, all in one transaction: running it again
adds nothing. Without a summariser it is extractive and offline (:func:`extract`); with one it
asks it, and falls back to the extractive path with a warning when it fails.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import writes
from .core import Core
from .errors import InvalidInputError
from .models import MEMORY_COLUMNS, Memory, row_to_memory
from .summarisers import Summariser, SummariserError

if TYPE_CHECKING:  # pragma: no cover
    from .store import MemoryStore

__all__ = ["Fact", "extract", "reflect", "sources_of", "thread_memories"]

log = logging.getLogger("harness_memory.episodes")

MAX_FACTS = 8
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’_-]*|\d[\d.,:/-]*")
_STOP = frozenset(
    """a an the and or but if then so of to in on at by for with from as is are was were be been being am
i me my we our you your he him his she her it its they them their this that these those there here what which who whom
whose when where why how not no yes do does did done have has had having can could will would shall should may might
must just very really also too more most much many some any all each every other such only own same than about into
over after before again further once up down out off under above below between through during while both few nor
oh ok okay hey hi hello thanks thank yeah yep wow lol great good nice cool sure well like get got go going went
""".split()
)
_OUTCOME = frozenset(
    """fixed fix fixes failed fails fail failure error errors resolved resolve worked works work broke
broken succeeded success passed pass timeout timed decided decide decision because learned learn plan planned
started finished won lost bought moved joined left""".split()
)


@dataclass
class Fact:
    """One reflected statement: its text, the episodes it came from, its recurring entities."""

    text: str
    sources: list[int]
    entities: list[str] = field(default_factory=list)
    type: str = "fact"


def _content_words(sentence: str) -> list[str]:
    return [w.lower().strip("'’") for w in _WORD.findall(sentence) if w.lower() not in _STOP and len(w) > 1]


def _entities(sentence: str) -> set[str]:
    """Names and numbers: capitalised words that are not stop words, and numbers / dates."""
    words = _WORD.findall(sentence)
    out = set()
    for k, w in enumerate(words):
        if w[0].isdigit():
            out.add(w.rstrip(".,"))
        elif w[0].isupper() and w.lower() not in _STOP and (k > 0 or len(w) > 2):
            out.add(w.strip("'’"))
    return out


def extract(episodes: Sequence[tuple[int, str]], *, max_facts: int = MAX_FACTS) -> list[Fact]:
    """Extractive reflection: pick the thread's representative sentences and merge them per entity.

    A sentence scores by the words it shares with other episodes of the thread (log document
    frequency, length-normalised), its recurring entities (names and numbers said in two or more
    episodes) and outcome words (fixed, failed, decided, ...). The best ``sqrt(n)`` (at most
    ``max_facts``) are kept, near-repeats folded into the first, and the kept sentences merged
    per dominant entity; a merge of sentences from different episodes is a ``pattern``."""
    sentences: list[tuple[int, str, list[str], set[str]]] = []
    df: Counter[str] = Counter()
    edf: Counter[str] = Counter()
    for eid, text in episodes:
        words_here: set[str] = set()
        ents_here: set[str] = set()
        for s in _SENTENCE.split(text):
            s = " ".join(s.split())
            words = _content_words(s)
            if len(set(words)) < 3:
                continue  # phatic or too short to be a fact
            ents = _entities(s)
            sentences.append((eid, s, words, ents))
            words_here.update(words)
            ents_here.update(ents)
        df.update(words_here)
        edf.update(ents_here)
    if not sentences:
        return []
    scored = []
    for pos, (_eid, _s, words, ents) in enumerate(sentences):
        uniq = set(words)
        shared = sum(math.log1p(df[w]) for w in uniq if df[w] >= 2) / math.sqrt(len(uniq))
        n_recurring = sum(1 for e in ents if edf[e] >= 2)
        outcome = 0.5 if uniq & _OUTCOME else 0.0
        scored.append((shared + n_recurring + outcome + 0.1 * min(len(ents), 3), pos))
    k = min(max_facts, max(1, round(math.sqrt(len(sentences)))))
    chosen: list[tuple[int, set[str], list[int]]] = []  # (position, words, sources)
    for _score, pos in sorted(scored, key=lambda x: (-x[0], x[1])):
        eid, _s, words, _e = sentences[pos]
        ws = set(words)
        dup = next((c for c in chosen if len(ws & c[1]) / len(ws | c[1]) >= 0.6), None)
        if dup is not None:
            if eid not in dup[2]:
                dup[2].append(eid)
            continue
        if len(chosen) < k:
            chosen.append((pos, ws, [eid]))
    chosen.sort(key=lambda c: c[0])
    groups: dict[str, Fact] = {}
    order: list[str] = []
    for pos, _ws, srcs in chosen:
        _eid, s, _words, ents = sentences[pos]
        recurring = sorted((e for e in ents if edf[e] >= 2), key=lambda e: (-edf[e], e))
        key = recurring[0] if recurring else f"#{pos}"
        f = groups.get(key)
        if f is None or len(f.text) > 1200:
            key = key if f is None else f"{key}#{pos}"
            groups[key] = Fact(text=s, sources=list(srcs), entities=recurring[:5])
            order.append(key)
        else:
            f.text += " " + s
            f.sources += [x for x in srcs if x not in f.sources]
            f.entities = sorted(set(f.entities) | set(recurring[:5]), key=lambda e: (-edf[e], e))[:5]
    out = [groups[key] for key in order]
    for f in out:
        if len(set(f.sources)) >= 2:
            f.type = "pattern"
    return out


_INSTRUCTION = (
    "Below are the numbered events of one conversation or run. Write the durable facts worth "
    "remembering from them: one per line, each a self-contained sentence that names the people and "
    "things it is about, at most {n} lines. Start a line with 'PATTERN: ' when it states something "
    "that recurs across several events. No other text."
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def _from_summary(answer: str, sources: list[int], max_facts: int) -> list[Fact]:
    facts = []
    for line in answer.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        kind = "fact"
        if line.upper().startswith("PATTERN:"):
            kind, line = "pattern", line[len("PATTERN:") :].strip()
        if len(_content_words(line)) >= 2:
            facts.append(Fact(text=line, sources=list(sources), type=kind))
        if len(facts) == max_facts:
            break
    if not facts:
        raise SummariserError("the summariser answered no usable fact")
    return facts


def _cap(text: str, max_bytes: int) -> str:
    """``text`` within ``max_bytes`` UTF-8 bytes, an ellipsis included when it was cut."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[: max(0, max_bytes - len("…".encode()))].decode("utf-8", "ignore").rstrip() + "…"


def reflect(
    store: MemoryStore,
    *,
    thread_id: str | None,
    namespace: str | None,
    agent_id: str | None,
    summariser: Summariser | None,
    idle_seconds: float | None = None,
    max_facts: int = MAX_FACTS,
) -> list[Memory]:
    """Reflect the unreflected episodes of one thread (or of every thread of the namespace, or only
    threads idle for ``idle_seconds``), per agent and scope. Returns the memories written (a fact
    equal to an existing one reinforces it and is returned too)."""
    core: Core = store._core
    ns = namespace or core.settings.namespace
    conds = [
        "namespace = ?",
        "memory_type = 'episode'",
        "thread_id IS NOT NULL",
        "reflected_at IS NULL",
        "archived = 0",
    ]
    params: list[Any] = [ns]
    if thread_id is not None:
        conds.append("thread_id = ?")
        params.append(thread_id)
    if agent_id is not None:
        conds.append("agent_id = ?")
        params.append(agent_id)
    rows = core.backend.execute(
        f"SELECT id, agent_id, scope, thread_id, content, created_at FROM memories WHERE {' AND '.join(conds)} "
        "ORDER BY thread_id, agent_id, scope, created_at, id",
        params,
    ).fetchall()
    groups: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
    for r in rows:
        groups.setdefault((r[3], r[1], r[2]), []).append(r)
    now = core.now()
    plans: list[tuple[list[int], list[writes.MemoryInput], list[list[int]]]] = []
    for (thread, agent, scope), eps in groups.items():
        if idle_seconds is not None and max(e[5] for e in eps) > now - idle_seconds:
            continue  # the thread is still active
        episodes = [(e[0], e[4]) for e in eps]
        method = "extractive"
        facts: list[Fact] = []
        if summariser is not None:
            try:
                answer = summariser.summarise([t for _, t in episodes], instruction=_INSTRUCTION.format(n=max_facts))
                if not isinstance(answer, str):
                    raise SummariserError("the summariser did not answer text")
                facts = _from_summary(answer, [e for e, _ in episodes], max_facts)
                method = "summariser"
            except SummariserError as exc:
                log.warning(
                    "reflect: the summariser failed (%s); thread %r reflected extractively instead", exc, thread
                )
            except Exception as exc:  # noqa: BLE001 - a summariser is user code: any failure falls back
                log.warning(
                    "reflect: the summariser raised %s; thread %r reflected extractively instead",
                    type(exc).__name__,
                    thread,
                )
        if not facts:
            facts = extract(episodes, max_facts=max_facts)
        items = []
        for f in facts:
            tags = [e.lower()[:64] for e in f.entities if not e[0].isdigit()][:5]
            items.append(
                writes.prepare(
                    core,
                    _cap(f.text, core.settings.max_content_bytes),
                    type=f.type,
                    agent_id=agent,
                    scope=scope,
                    namespace=ns,
                    tags=tags,
                    importance=0.6 if f.type == "fact" else 0.7,
                    metadata={"thread_id": thread, "reflected_from": len(f.sources), "method": method},
                )
            )
        plans.append(([e for e, _ in episodes], items, [f.sources for f in facts]))
    if not plans:
        return []
    texts = [it.content for _, items, _ in plans for it in items]
    vectors = core.embed(texts) if texts else None  # before the transaction: never embed holding the lock
    writes.catch_up(core, vectors)  # nor load the vector index
    out: list[Memory] = []
    offset = 0
    with core.backend.write() as c:
        for episode_ids, items, sources in plans:
            vecs = None if vectors is None else vectors[offset : offset + len(items)]
            offset += len(items)
            marks = ",".join("?" * len(episode_ids))
            still = c.execute(
                f"SELECT COUNT(*) FROM memories WHERE id IN ({marks}) AND reflected_at IS NULL", episode_ids
            ).fetchone()[0]
            if still != len(episode_ids):
                continue  # another process reflected (or someone deleted) some of them meanwhile: leave it
            written = writes.write_many(core, items, writes.NO_VECTORS if vecs is None else vecs) if items else []
            now = core.now()
            for m, srcs in zip(written, sources):
                c.executemany(
                    "INSERT INTO memory_sources(memory_id, source_id, kind, added_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (memory_id, source_id) DO NOTHING",
                    [(m.id, s, "reflection", now) for s in srcs],
                )
            c.execute(f"UPDATE memories SET reflected_at = ? WHERE id IN ({marks})", (now, *episode_ids))
            out.extend(written)
    return out


def thread_memories(
    core: Core, thread_id: str, *, namespace: str, agent_id: str | None, include_global: bool, limit: int
) -> list[Memory]:
    """The memories of a thread visible to ``agent_id``, oldest first."""
    vis, params = core.visibility(agent_id, include_global) if agent_id is not None else ("TRUE", [])
    rows = core.backend.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.namespace = ? AND m.thread_id = ? AND {vis} "
        "ORDER BY m.created_at, m.id LIMIT ?",
        (namespace, thread_id, *params, limit),
    ).fetchall()
    return [row_to_memory(r) for r in rows]


def sources_of(core: Core, memory_id: int) -> list[Memory]:
    """The episodes a reflected memory came from, oldest first."""
    rows = core.backend.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories m JOIN memory_sources s ON s.source_id = m.id "
        "WHERE s.memory_id = ? ORDER BY m.created_at, m.id",
        (memory_id,),
    ).fetchall()
    return [row_to_memory(r) for r in rows]


def check_summariser(summariser: Any) -> Summariser | None:
    if summariser is not None and not isinstance(summariser, Summariser):
        raise InvalidInputError("summariser must have summarise(texts, *, instruction) -> str")
    return summariser
