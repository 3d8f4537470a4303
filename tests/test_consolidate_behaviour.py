"""Consolidation as a user sees it (jobs/consolidate.py, docs/maintenance.md), with an embedder
whose geometry the test controls: clusters of at least ``consolidate_min_members`` similar memories
become one ``pattern`` per (namespace, agent, scope, type); a shared error signature pulls memories
together; the pattern's content, tags, importance, signatures and metadata come from its members;
members are linked, not deleted, at half relevance; a new close memory joins an existing pattern; a
dry run plans and changes nothing; a summariser is used and falls back when it fails."""

from __future__ import annotations

import hashlib
import logging
import re

import numpy as np
import pytest

from conftest import table_snapshot
from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings


class TopicEmbedder:
    """``[t<K> v<J>]`` in a text: a unit vector sqrt(rho) * e_K + sqrt(1 - rho) * f_(K,J), so two
    variants of one topic have cosine ``rho`` and different topics are orthogonal. Other texts (a
    query, a pattern's summary) get their own direction."""

    def __init__(self, dimensions: int = 64, rho: float = 0.8):
        self.dimensions, self.rho = dimensions, rho
        self.name = f"topic:{dimensions}:{rho}"

    def _dir(self, key: str) -> np.ndarray:
        h = int.from_bytes(hashlib.sha1(key.encode()).digest()[:4], "little")
        v = np.zeros(self.dimensions, dtype=np.float32)
        v[h % self.dimensions] = 1.0
        return v

    def embed_batch(self, texts):
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            m = re.search(r"\[t(\d+) v(\d+)\]", t)
            if m is None:
                out[i] = self._dir("other:" + t)
                continue
            k, j = int(m.group(1)), int(m.group(2))
            topic = np.zeros(self.dimensions, dtype=np.float32)
            topic[k] = 1.0  # topics use the first dimensions, variants the rest
            var = np.zeros(self.dimensions, dtype=np.float32)
            var[16 + (k * 7 + j) % (self.dimensions - 16)] = 1.0
            out[i] = np.sqrt(self.rho) * topic + np.sqrt(1 - self.rho) * var
        return out


def open_store(db, clock, embedder=None, **maintenance):
    cfg = Settings(maintenance=MaintenanceSettings(**maintenance))
    return MemoryStore(db, settings=cfg, clock=clock, embedder=embedder or TopicEmbedder())


def add(s, topic, variant, *, type="failure", agent="a", **kw):
    return s.remember(f"the build broke in step {variant} [t{topic} v{variant}]", type=type, agent_id=agent, **kw)


def patterns(s, agent="a"):
    return s.get_by_type("pattern", agent_id=agent)


def test_a_cluster_becomes_a_pattern_built_from_its_members(db, clock):
    with open_store(db, clock) as s:
        members = [
            add(s, 1, 0, tags=["ci", "npm"], importance=0.4, task_signature="task:build"),
            add(s, 1, 1, tags=["ci", "npm"], importance=0.9, task_signature="task:build"),
            add(s, 1, 2, tags=["docker"], importance=0.2, task_signature="task:build"),
            add(s, 1, 3, tags=["npm"], importance=0.3, task_signature="task:build"),
        ]
        s.apply(members[0].id, helpful=True, agent_id="a")
        s.apply(members[1].id, helpful=False, agent_id="a")
        run = s.run_job("consolidate")
        assert run.counts["patterns_created"] == 1 and run.counts["members_linked"] == 4
        (p,) = patterns(s)
        assert p.content.startswith("Pattern of 4 failure memories: the build broke in step")
        assert "Combined record: 1/2 applications succeeded." in p.content
        assert "Shared tags: npm, ci." in p.content  # in at least half of the members, most common first
        assert p.content.count("the build broke") == 4  # the medoid and three others under "Also:"
        assert "Also: " in p.content
        assert set(p.tags) == {"ci", "npm"}  # tags shared by two or more members
        assert p.importance == 0.9
        assert p.task_signature == "task:build"
        assert p.metadata["source_type"] == "failure" and p.metadata["members"] == 4
        assert p.metadata["medoid"] in {m.id for m in members}
        assert set(p.metadata) == {"source_type", "members", "medoid"}
        assert not p.embedding_pending  # the pattern has its own vector: vector search finds it
        hits = s.recall(p.content, agent_id="a", channels={"vector"}, limit=1, record=False)
        assert hits[0].memory.id == p.id and hits[0].breakdown.vector == pytest.approx(1.0, abs=1e-4)
        for m in members:
            got = s.get(m.id)
            assert got.consolidated_into == p.id and got.relevance_score == pytest.approx(0.5)
        rows = s._core.backend.execute(
            "SELECT member_id, similarity FROM pattern_members WHERE pattern_id = ?", (p.id,)
        ).fetchall()
        assert {r[0] for r in rows} == {m.id for m in members}
        assert all(0.75 <= r[1] <= 1.0 for r in rows)


def test_a_pattern_not_applied_yet_says_so_and_lists_at_most_three_others(db, clock):
    with open_store(db, clock) as s:
        for j in range(6):
            add(s, 2, j)
        s.run_job("consolidate")
        (p,) = patterns(s)
        assert "Combined record: not applied yet." in p.content
        assert "Shared tags" not in p.content
        also = p.content.split("Also: ")[1]
        assert len(also.split(" | ")) == 3


def test_separate_topics_become_separate_patterns_and_a_loner_stays_alone(db, clock):
    with open_store(db, clock) as s:
        a = [add(s, 1, j).id for j in range(3)]
        b = [add(s, 2, j).id for j in range(4)]
        loner = add(s, 3, 0).id
        run = s.run_job("consolidate")
        assert run.counts["patterns_created"] == 2 and run.counts["members_linked"] == 7
        assert len({s.get(i).consolidated_into for i in a}) == 1
        assert len({s.get(i).consolidated_into for i in b}) == 1
        assert s.get(a[0]).consolidated_into != s.get(b[0]).consolidated_into
        assert s.get(loner).consolidated_into is None and s.get(loner).relevance_score == 1.0


def test_fewer_than_the_minimum_members_make_no_pattern(db, clock):
    with open_store(db, clock, consolidate_min_members=4) as s:
        for j in range(3):
            add(s, 1, j)
        assert s.run_job("consolidate").counts["patterns_created"] == 0
        add(s, 1, 3)
        assert s.run_job("consolidate", min_interval=0).counts["patterns_created"] == 1


def test_memories_of_different_agents_scopes_and_types_are_never_mixed(db, clock):
    with open_store(db, clock) as s:
        for j in range(2):
            add(s, 1, j, agent="a")
            add(s, 1, j + 10, agent="b")
            add(s, 1, j + 20, agent="a", type="success")
            add(s, 1, j + 30, agent="a", scope="global")
        run = s.run_job("consolidate")
        assert run.counts["groups"] == 4 and run.counts["patterns_created"] == 0  # two of each: none has three
        add(s, 1, 40, agent="b")
        run = s.run_job("consolidate", min_interval=0)
        assert run.counts["patterns_created"] == 1
        assert patterns(s, "a") == []
        (p,) = patterns(s, "b")
        assert p.agent_id == "b" and p.scope == "agent"


def test_context_memories_and_patterns_are_not_consolidated(db, clock):
    with open_store(db, clock) as s:
        for j in range(4):
            add(s, 1, j, type="context")
        assert s.run_job("consolidate").counts == {
            "groups": 0,
            "patterns_created": 0,
            "members_linked": 0,
            "joined_existing": 0,
            "planned": 0,
        }


def test_only_the_asked_namespace_is_consolidated(db, clock):
    with open_store(db, clock) as s:
        for j in range(3):
            add(s, 1, j, namespace="team-x")
            add(s, 2, j, namespace="team-y")
        s.run_job("consolidate", namespace="team-x")
        assert [p.namespace for p in s.get_by_type("pattern", agent_id="a", namespace="team-x")] == ["team-x"]
        assert s.get_by_type("pattern", agent_id="a", namespace="team-y") == []


def test_a_new_close_memory_joins_the_existing_pattern(db, clock):
    with open_store(db, clock) as s:
        for j in range(3):
            add(s, 1, j)
        s.run_job("consolidate")
        (p,) = patterns(s)
        new = add(s, 1, 7)
        other = add(s, 4, 0)
        run = s.run_job("consolidate", min_interval=0)
        assert run.counts["joined_existing"] == 1 and run.counts["patterns_created"] == 0
        assert s.get(new.id).consolidated_into == p.id and s.get(new.id).relevance_score == pytest.approx(0.5)
        assert s.get(other.id).consolidated_into is None
        assert s.get(p.id).metadata["members"] == 4
        assert s.run_job("consolidate", min_interval=0).counts["joined_existing"] == 0  # idempotent


def test_a_dry_run_plans_and_changes_nothing(db, clock):
    with open_store(db, clock) as s:
        ids = [add(s, 1, j).id for j in range(3)]
        before = table_snapshot(s)
        seen = []
        run = s.run_job("consolidate", dry_run=True, progress=lambda done, total: seen.append((done, total)))
        assert table_snapshot(s) == before
        assert run.counts["planned"] == 1 and run.counts["patterns_created"] == 0
        (step,) = run.counts["plan"]
        assert step["pattern"] is None and sorted(step["members"]) == ids
        assert step["group"] == ["default", "a", "agent", "failure"]
        assert seen == [(1, 1)]


def test_progress_is_reported_per_group(db, clock):
    with open_store(db, clock) as s:
        for agent in ("a", "b", "c"):
            add(s, 1, 0, agent=agent)
        seen = []
        s.run_job("consolidate", progress=lambda done, total: seen.append((done, total)))
        assert seen == [(1, 3), (2, 3), (3, 3)]


def test_a_shared_error_signature_pulls_memories_into_one_pattern(db, clock):
    # variants whose texts alone are just below the similarity a cluster needs (0.745 < 0.75)
    emb = TopicEmbedder(dimensions=4096, rho=0.745)
    errors = [
        "ModuleNotFoundError: No module named 'tenacity'",
        "KeyError: 'user_id'",
        "PermissionError: [Errno 13] Permission denied: '/etc/app.conf'",
    ]
    with open_store(db, clock, embedder=emb) as s:
        for j in range(3):
            add(s, 1, j)  # no signature
            add(s, 2, j, error=errors[0])  # one signature
            add(s, 3, j, error=errors[j])  # three different ones
        s.run_job("consolidate")
        (p,) = patterns(s)
        sig = s.error_signature(errors[0])
        assert p.error_signature == sig.id and p.error_template == sig.template
        members = [m for m in s.get_by_type("failure", agent_id="a", limit=100) if m.consolidated_into == p.id]
        assert len(members) == 3 and {m.error_signature for m in members} == {sig.id}


def test_a_summariser_writes_the_content_and_a_failing_one_falls_back(db, clock, caplog):
    class Good:
        def summarise(self, texts, instruction=""):
            return f"  {len(texts)} builds broke the same way  "

    class Broken:
        def summarise(self, texts, instruction=""):
            raise ConnectionError("endpoint down")

    class Empty:
        def summarise(self, texts, instruction=""):
            return "   "

    with open_store(db, clock) as s:
        for j in range(3):
            add(s, 1, j)
            add(s, 2, j, agent="b")
            add(s, 3, j, agent="c")
        s.run_job("consolidate", namespace="default", summariser=Good())
        assert [p.content for p in patterns(s)] == ["3 builds broke the same way"]
    with open_store(db, clock) as s, caplog.at_level(logging.WARNING, logger="harness_memory.jobs.consolidate"):
        for summariser in (Broken(), Empty()):
            for agent in ("a", "b", "c"):  # undo, to consolidate again with another summariser
                for p in patterns(s, agent):
                    s.forget(p.id, agent_id=agent)
            with s._core.backend.write() as c:
                c.execute("DELETE FROM pattern_members")
                c.execute("UPDATE memories SET consolidated_into = NULL")
            caplog.clear()
            run = s.run_job("consolidate", min_interval=0, summariser=summariser)
            assert run.counts["patterns_created"] == 3
            assert caplog.text.count("extractive summary used") == 3
            assert patterns(s, "b")[0].content.startswith("Pattern of 3 failure memories")


def test_different_signatures_do_not_keep_very_similar_memories_apart(db, clock):
    # a signature is extra evidence, not a veto: texts at cosine 0.93 cluster whatever their errors
    emb = TopicEmbedder(dimensions=4096, rho=0.93)
    errors = [
        "ModuleNotFoundError: No module named 'tenacity'",
        "KeyError: 'user_id'",
        "PermissionError: [Errno 13] Permission denied: '/etc/app.conf'",
    ]
    with open_store(db, clock, embedder=emb) as s:
        ids = [add(s, 1, j, error=errors[j]).id for j in range(3)]
        run = s.run_job("consolidate")
        assert run.counts["patterns_created"] == 1
        assert len({s.get(i).consolidated_into for i in ids} - {None}) == 1


def test_large_groups_cluster_through_pca_and_birch_into_the_same_patterns(db, clock, monkeypatch):
    import importlib

    module = importlib.import_module("harness_memory.jobs.consolidate")  # the module, not the job function
    monkeypatch.setattr(module, "SMALL", 40)  # the large-group path, on a store small enough for a test
    # tight topics (cosine 0.92 within one): a small sample keeps its variant directions through the PCA
    with open_store(db, clock, embedder=TopicEmbedder(dimensions=512, rho=0.92)) as s:
        s.remember_many(
            [
                {"content": f"the build broke in step {j} [t{k} v{j}]", "type": "failure", "agent_id": "a"}
                for k in range(3)
                for j in range(30)
            ]
        )
        loner = add(s, 7, 0)
        run = s.run_job("consolidate")
        assert run.counts["patterns_created"] == 3 and run.counts["members_linked"] == 90
        sizes = sorted(p.metadata["members"] for p in patterns(s))
        assert sizes == [30, 30, 30]
        assert s.get(loner.id).consolidated_into is None
        for p in patterns(s):
            topics = {
                m.content.split("[t")[1].split()[0]
                for m in s.get_by_type("failure", agent_id="a", limit=200)
                if m.consolidated_into == p.id
            }
            assert len(topics) == 1


def test_a_patterns_summary_and_tags_are_bounded(db, clock):
    tags = [f"tag{i}" for i in range(10)]
    with open_store(db, clock) as s:
        long_tail = " and then it went on" * 20
        for j in range(4):
            s.remember(f"the build broke in step {j} [t1 v{j}]{long_tail} {j}", type="failure", agent_id="a", tags=tags)
        s.run_job("consolidate")
        (p,) = patterns(s)
        assert len(p.tags) == 8 and set(p.tags) <= set(tags)
        shared = p.content.split("Shared tags: ")[1].split(".")[0].split(", ")
        assert len(shared) == 8
        others = p.content.split("Also: ")[1].split(" | ")
        assert len(others) == 3 and all(len(o) == 160 for o in others)


def test_a_memory_still_waiting_for_its_vector_is_left_out_not_a_failure(db, clock):
    class Flaky(TopicEmbedder):
        broken = False

        def embed_batch(self, texts):
            if self.broken:
                raise ConnectionError("embedding service down")
            return super().embed_batch(texts)

    emb = Flaky()
    with open_store(db, clock, embedder=emb) as s:
        ids = [add(s, 1, j).id for j in range(3)]
        emb.broken = True
        pending = add(s, 1, 9)
        assert pending.embedding_pending
        emb.broken = False
        run = s.run_job("consolidate")
        assert run.status == "ok" and run.counts["patterns_created"] == 1 and run.counts["members_linked"] == 3
        assert {s.get(i).consolidated_into for i in ids} != {None}
        assert s.get(pending.id).consolidated_into is None


def test_a_dry_run_plans_a_join_with_the_pattern_it_would_join(db, clock):
    with open_store(db, clock) as s:
        for j in range(3):
            add(s, 1, j)
        s.run_job("consolidate")
        (p,) = patterns(s)
        new = add(s, 1, 8)
        before = table_snapshot(s)
        run = s.run_job("consolidate", dry_run=True)
        assert run.counts["plan"] == [
            {"group": ["default", "a", "agent", "failure"], "pattern": p.id, "join": [new.id]}
        ]
        assert run.counts["joined_existing"] == 0 and table_snapshot(s) == before


def test_a_consolidation_stopped_mid_run_records_the_patterns_it_committed(db, clock):
    import json

    with open_store(db, clock) as s:
        for agent in ("a", "b"):
            for j in range(3):
                add(s, 1, j, agent=agent)

        def stop(done, total):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            s.run_job("consolidate", progress=stop)
        last = s.job_status()["last"]["consolidate"]
        counts = json.loads(last["counts"]) if isinstance(last["counts"], str) else last["counts"]
        assert last["status"] == "interrupted"
        assert counts == {"patterns_created": 1, "members_linked": 3, "committed_before_stop": True}
        assert s.run_job("consolidate", min_interval=0).counts["patterns_created"] == 1  # the other group
