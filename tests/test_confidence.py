"""Calibrated confidence and the injection gate: quiet on tasks the store knows nothing about."""

from __future__ import annotations

import random

import pytest

from conftest import table_snapshot
from harness_memory import InvalidInputError, MemoryStore, Settings

SUBJECTS = [
    "pip",
    "the wheel build",
    "pytest",
    "the docker image",
    "the CI runner",
    "mypy",
    "the lockfile",
    "the proxy",
    "the cache",
    "the migration",
    "the release tag",
    "the coverage job",
]
PROBLEMS = [
    "fails behind the corporate proxy",
    "times out after 30 minutes",
    "runs out of memory",
    "cannot resolve the index URL",
    "breaks on Python 3.12",
    "reports a stale hash",
    "hangs on the network mount",
    "loses its environment variables",
]
FIXES = [
    "set HTTPS_PROXY before install",
    "pin the dependency",
    "raise the job timeout",
    "clear the cache first",
    "use the internal mirror",
    "rebuild from a clean checkout",
    "split the job in two",
]


def _corpus(n: int = 240) -> list[str]:
    rnd = random.Random(7)
    return [f"{rnd.choice(SUBJECTS)} {rnd.choice(PROBLEMS)}: {rnd.choice(FIXES)}" for _ in range(n)]


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "c.db") as s:
        s.remember_many([{"content": c, "type": "failure", "agent_id": "build"} for c in _corpus()])
        yield s


RELATED = "pip install fails behind the proxy in CI"
UNRELATED = "bake sourdough bread with rye flour and walnuts"


def test_confidence_separates_known_from_unknown_subjects_and_is_explained(store):
    gate = store.settings.confidence.inject_min
    known = store.recall(RELATED, agent_id="build", limit=8, record=False)
    unknown = store.recall(UNRELATED, agent_id="build", limit=8, record=False)
    assert known and unknown  # ungated recall returns something for both
    assert known[0].confidence >= gate > max(h.confidence for h in unknown)
    for h in known + unknown:
        ex = h.explain()
        assert 0.0 <= ex["confidence"] <= 1.0 and ex["confidence"] == h.confidence
        assert set(ex["evidence"]) >= {"unseen", "best_keyword", "best_vector", "vector", "text"}
    assert unknown[0].evidence["unseen"] > 0.5 > known[0].evidence["unseen"]


def test_min_confidence_filters_and_is_validated(store, tmp_path):
    assert store.recall(UNRELATED, agent_id="build", min_confidence=store.settings.confidence.inject_min) == []
    kept = store.recall(RELATED, agent_id="build", min_confidence=0.5, record=False)
    assert kept and all(h.confidence >= 0.5 for h in kept)
    before = table_snapshot(store)
    for bad in (1.5, -0.1, "high", True, float("nan")):
        with pytest.raises(InvalidInputError):
            store.recall(RELATED, agent_id="build", min_confidence=bad)
    assert table_snapshot(store) == before  # a refused call recorded no access


def test_on_task_start_stays_quiet_on_an_unrelated_task_and_injects_a_related_one(store):
    quiet = store.on_task_start({"id": "T1", "title": UNRELATED, "agent_id": "build"})
    assert quiet.hits == [] and "Relevant experience" not in quiet.prompt and quiet.injected == []
    loud = store.on_task_start({"id": "T2", "title": RELATED, "agent_id": "build"})
    assert loud.hits and "### Relevant experience" in loud.prompt
    assert all(h.confidence >= store.settings.confidence.inject_min for h in loud.hits)


def test_gate_zero_injects_everything_matched(tmp_path):
    with MemoryStore(tmp_path / "g.db", settings=Settings(confidence={"inject_min": 0.0})) as s:
        s.remember_many([{"content": c, "type": "failure", "agent_id": "build"} for c in _corpus()])
        ctx = s.on_task_start({"id": "T1", "title": UNRELATED, "agent_id": "build"})
        assert ctx.hits  # no gate: today's behaviour, whatever matched is injected


def test_a_signature_or_tag_match_is_evidence(tmp_path):
    err = "ModuleNotFoundError: No module named 'zstandard'"
    with MemoryStore(tmp_path / "s.db") as s:
        m = s.remember("install the zstd extra", type="success", agent_id="a", error=err)
        t = s.remember("rotate the signing key yearly", type="decision", agent_id="a", tags=["keys"])
        by_sig = s.recall("zstandard", agent_id="a", error=err, record=False)
        assert by_sig[0].memory.id == m.id and by_sig[0].confidence >= 0.9
        assert by_sig[0].evidence["signature"] == 1.0
        by_tag = s.recall("key rotation", agent_id="a", tags=["keys"], record=False)
        assert by_tag[0].memory.id == t.id and by_tag[0].confidence >= 0.9
        plain = s.recall("key rotation", agent_id="a", record=False)
        assert not plain or plain[0].confidence < by_tag[0].confidence
