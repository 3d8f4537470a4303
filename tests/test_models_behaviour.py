"""The public models as a caller reads them: every stored field read back from a store (times as
UTC datetimes, flags as booleans), the aliases, the defaults of a Memory built directly, and a recall
hit's explanation and one-line description."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from harness_memory import MemoryStore
from harness_memory.models import Memory, RecallHit, ScoreBreakdown
from harness_memory.testing import ManualClock


def test_every_field_is_read_back_as_stored(tmp_path):
    clock = ManualClock()
    with MemoryStore(tmp_path / "m.db", clock=clock) as s:
        m = s.remember(
            "pin the proxy in CI",
            type="decision",
            agent_id="a",
            key="proxy",
            tags=["ci", "proxy"],
            importance=0.8,
            metadata={"k": [1, 2]},
            session_id="S1",
            task_id="T1",
            task_signature="bug:any:any:proxy",
            error="ConnectionRefusedError: [Errno 111] Connection refused",
            ttl=3600,
            thread_id="th-1",
        )
        got = s.get(m.id)
        assert got == m
        assert (got.type, got.memory_type, got.key, got.agent_id, got.scope) == (
            "decision",
            "decision",
            "proxy",
            "a",
            "agent",
        )
        assert got.tags == got.context_tags == ["ci", "proxy"]
        assert (got.importance, got.metadata, got.session_id, got.task_id) == (
            0.8,
            {"k": [1, 2], "error_category": "network"},
            "S1",
            "T1",
        )
        assert got.task_signature == "bug:any:any:proxy" and got.error_signature.startswith("err_")
        assert got.error_template and got.thread_id == "th-1" and got.content_hash and got.uid
        assert got.created_at == got.updated_at == datetime.fromtimestamp(clock.now, tz=UTC)
        assert got.expires_at == datetime.fromtimestamp(clock.now + 3600, tz=UTC)
        assert got.last_accessed is None and got.reflected_at is None and got.consolidated_into is None
        assert (got.archived, got.pinned, got.embedding_pending) == (False, False, False)
        assert (got.access_count, got.times_applied, got.times_successful, got.success_rate) == (0, 0, 0, None)
        assert got.version == 1 and got.relevance_score == 1.0
        clock.advance(60)
        s.apply(m.id, helpful=True, agent_id="a")
        s.pin(m.id)
        other = s.remember("retry the flaky upload", type="success", agent_id="a")
        s.archive(other.id, agent_id="a")
        later = s.get(m.id)
        assert (later.archived, later.pinned) == (False, True)
        assert (s.get(other.id).archived, s.get(other.id).pinned) == (True, False)
        assert (later.times_applied, later.times_successful, later.success_rate) == (1, 1, 1.0)


def test_a_memory_built_directly_has_the_documented_defaults():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    m = Memory(
        id=1,
        uid="u",
        namespace="n",
        agent_id="a",
        scope="agent",
        type="success",
        content="c",
        content_hash="h",
        created_at=now,
        updated_at=now,
    )
    assert (m.importance, m.relevance_score, m.version, m.tags, m.metadata) == (0.5, 1.0, 1, [], {})
    assert (m.archived, m.pinned, m.embedding_pending, m.access_count, m.times_applied) == (False, False, False, 0, 0)


def _breakdown(**kw):
    base = dict(
        vector=0.8,
        keyword=None,
        tags=None,
        signature=1.0,
        match=0.9,
        relevance=0.95,
        recency=0.5,
        usefulness=0.6,
        importance=0.7,
        prior=0.6,
        score=0.81234,
        weights={"vector": 1.0},
    )
    return ScoreBreakdown(**{**base, **kw})


def test_describe_names_the_active_channels_only():
    text = _breakdown().describe()
    assert text.startswith("score 0.812 = match 0.900 (vector 0.80, signature 1.00) x relevance 0.95")
    assert "keyword" not in text and "tags" not in text
    assert "usefulness 0.60, recency 0.50, importance 0.70" in text
    every = _breakdown(keyword=0.25, tags=0.5).describe()
    assert "(vector 0.80, keyword 0.25, tags 0.50, signature 1.00)" in every


def test_explain_is_the_breakdown_with_the_confidence_and_a_copy_of_its_evidence(tmp_path):
    with MemoryStore(tmp_path / "x.db") as s:
        s.remember("pin the proxy in CI", type="decision", agent_id="a")
        hit = s.recall("proxy in CI", agent_id="a")[0]
        assert isinstance(hit, RecallHit)
        ex = hit.explain()
        assert {k: ex[k] for k in hit.breakdown.model_dump()} == hit.breakdown.model_dump()
        assert ex["confidence"] == hit.confidence and ex["evidence"] == hit.evidence
        ex["evidence"]["text"] = -1.0
        assert hit.evidence.get("text") != -1.0  # the explanation is a copy


def test_a_score_breakdown_cannot_be_changed_after_the_fact():
    from pydantic import ValidationError

    b = _breakdown()
    with pytest.raises(ValidationError):
        b.score = 1.0
    assert b.score == 0.81234
