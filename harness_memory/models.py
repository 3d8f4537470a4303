"""The public data models: :class:`Memory`, :class:`RecallHit` and :class:`ScoreBreakdown`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Memory", "RecallHit", "ScoreBreakdown", "MEMORY_COLUMNS", "row_to_memory"]


def _dt(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


def _dt_set(ts: float) -> datetime:
    """A timestamp of a NOT NULL column."""
    return datetime.fromtimestamp(ts, tz=UTC)


class Memory(BaseModel):
    """One stored memory, as returned by the store (a pydantic model; read-only by convention)."""

    id: int
    uid: str
    namespace: str
    agent_id: str
    scope: str
    type: str
    content: str
    key: str | None = None
    task_signature: str | None = None
    error_signature: str | None = None
    error_template: str | None = None
    tags: list[str] = Field(default_factory=list)
    importance: float = 0.5
    relevance_score: float = 1.0
    access_count: int = 0
    last_accessed: datetime | None = None
    times_applied: int = 0
    times_successful: int = 0
    success_rate: float | None = None
    session_id: str | None = None
    task_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    archived: bool = False
    pinned: bool = False
    consolidated_into: int | None = None
    embedding_pending: bool = False
    version: int = 1
    thread_id: str | None = Field(None, description="the thread (conversation, run) an episode belongs to")
    reflected_at: datetime | None = Field(None, description="when reflect() turned this episode into durable memories")

    @property
    def memory_type(self) -> str:
        return self.type

    @property
    def context_tags(self) -> list[str]:
        return self.tags


MEMORY_COLUMNS = (
    "id, uid, namespace, agent_id, scope, memory_type, content, key, task_signature, error_signature, "
    "error_template, context_tags, importance, relevance_score, access_count, last_accessed, times_applied, "
    "times_successful, success_rate, session_id, task_id, metadata, content_hash, created_at, updated_at, "
    "expires_at, archived, pinned, consolidated_into, embedding_pending, version, thread_id, reflected_at"
)


def row_to_memory(r: tuple[Any, ...]) -> Memory:
    return Memory(
        id=r[0],
        uid=r[1],
        namespace=r[2],
        agent_id=r[3],
        scope=r[4],
        type=r[5],
        content=r[6],
        key=r[7],
        task_signature=r[8],
        error_signature=r[9],
        error_template=r[10],
        tags=json.loads(r[11]),
        importance=r[12],
        relevance_score=r[13],
        access_count=r[14],
        last_accessed=_dt(r[15]),
        times_applied=r[16],
        times_successful=r[17],
        success_rate=r[18],
        session_id=r[19],
        task_id=r[20],
        metadata=json.loads(r[21]),
        content_hash=r[22],
        created_at=_dt_set(r[23]),
        updated_at=_dt_set(r[24]),
        expires_at=_dt(r[25]),
        archived=bool(r[26]),
        pinned=bool(r[27]),
        consolidated_into=r[28],
        embedding_pending=bool(r[29]),
        version=r[30],
        thread_id=r[31],
        reflected_at=_dt(r[32]),
    )


class ScoreBreakdown(BaseModel):
    """Every component of a recall score, each in [0, 1], and how they combine."""

    model_config = ConfigDict(frozen=True)

    vector: float | None = Field(None, description="cosine similarity to the query (None: no vector)")
    keyword: float | None = Field(None, description="BM25 relative to the best keyword hit (None: no query terms)")
    tags: float | None = Field(None, description="Jaccard overlap with the query tags (None: no tags asked)")
    signature: float | None = Field(None, description="task/error signature match (None: none asked)")
    match: float = Field(description="weighted mean of the active channels above")
    relevance: float = Field(description="the memory's relevance_score (decays, boosted by access)")
    recency: float = Field(description="0.5 ** (age_days / half_life)")
    usefulness: float = Field(description="smoothed success rate: (successes + a) / (applied + a + b)")
    importance: float
    prior: float = Field(description="weighted mean of usefulness, recency and importance")
    score: float = Field(description="match * relevance * (1 - w + w * prior)")
    weights: dict[str, float]

    def describe(self) -> str:
        parts = [
            f"{k} {v:.2f}"
            for k, v in (
                ("vector", self.vector),
                ("keyword", self.keyword),
                ("tags", self.tags),
                ("signature", self.signature),
            )
            if v is not None
        ]
        return (
            f"score {self.score:.3f} = match {self.match:.3f} ({', '.join(parts)}) x relevance "
            f"{self.relevance:.2f} x prior-factor (usefulness {self.usefulness:.2f}, recency {self.recency:.2f}, "
            f"importance {self.importance:.2f})"
        )


class RecallHit(BaseModel):
    """One recalled memory with its score; :meth:`explain` tells where the score came from."""

    memory: Memory
    score: float
    breakdown: ScoreBreakdown
    confidence: float | None = Field(
        None,
        description="calibrated probability that this hit is relevant "
        "experience, from absolute evidence (see confidence.py)",
    )
    evidence: dict[str, float] = Field(default_factory=dict, description="what the confidence was computed from")

    def explain(self) -> dict[str, Any]:
        """Each score component (vector, keyword, tags, signature, relevance, recency, usefulness...),
        the confidence and its evidence."""
        return {**self.breakdown.model_dump(), "confidence": self.confidence, "evidence": dict(self.evidence)}
