"""remember() as a user relies on it (harness_memory/writes.py, README): exact and near duplicates
reinforce the existing memory (and its tags become findable), a key updates in place and keeps the
old version (and the indexes follow the new content), a thread's events are each kept, a batch
de-duplicates within itself, secrets are redacted everywhere before storage, an error signs the
memory and a success taught with an error becomes a fix. Side effects are read back through the
public API in stores with many distractors, so a skipped index write fails."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import table_snapshot
from harness_memory import MemoryStore, Settings

DAY = 86400.0
ERROR = "ModuleNotFoundError: No module named 'tenacity'"


class AngleEmbedder:
    """``<angle:D>`` in a text: a unit vector at D degrees from the base direction, so two texts'
    cosine is cos(D1 - D2); other texts get an orthogonal direction of their own."""

    name = "angle:8"
    dimensions = 8

    def embed_batch(self, texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            if "<angle:" in t:
                d = np.radians(float(t.split("<angle:")[1].split(">")[0]))
                out[i, 0], out[i, 1] = np.cos(d), np.sin(d)
            else:
                out[i, 2 + sum(map(ord, t)) % 6] = 1.0
        return out


def count(s, table, where="1 = 1", params=()):
    return s._core.backend.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchone()[0]


def by_tag(s, tag, agent="a"):
    return [h.memory.id for h in s.recall("x", agent_id=agent, tags=[tag], channels={"tags"}, limit=50, record=False)]


def by_words(s, words, agent="a"):
    return [h.memory.id for h in s.recall(words, agent_id=agent, channels={"keyword"}, limit=50, record=False)]


@pytest.fixture
def busy(db, clock):
    with MemoryStore(db, clock=clock) as s:
        s.remember_many(
            [
                {
                    "content": f"the nightly build of module {i} timed out in stage {i % 9}",
                    "type": "failure",
                    "agent_id": "a",
                    "tags": ["nightly", f"m{i}"],
                }
                for i in range(250)
            ]
        )
        yield s


def test_an_exact_duplicate_reinforces_the_memory_and_its_new_tags_are_indexed(busy, clock):
    s = busy
    m = s.remember(
        "the artifact cache is full: prune it weekly",
        type="failure",
        agent_id="a",
        tags=["cache"],
        importance=0.4,
        ttl=10 * DAY,
    )
    clock.advance(DAY)
    again = s.remember(
        "the artifact cache is full: prune it weekly",
        type="failure",
        agent_id="a",
        tags=["disk", "cache"],
        importance=0.6,
        ttl=30 * DAY,
    )
    assert again.id == m.id
    assert again.access_count == 1 and again.importance == pytest.approx(0.65)  # the larger, plus 0.05
    assert again.tags == ["cache", "disk"]
    assert by_tag(s, "disk") == [m.id]  # the tag index follows the merged tags
    assert again.expires_at.timestamp() == pytest.approx(clock() + 30 * DAY)  # the later expiry
    assert again.last_accessed.timestamp() == pytest.approx(clock())
    rows = s._core.backend.execute(
        "SELECT kind, similarity, merged_content FROM memory_merges WHERE memory_id = ?", (m.id,)
    ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [("exact", 1.0)]
    assert count(s, "memories", "content_hash = (SELECT content_hash FROM memories WHERE id = ?)", (m.id,)) == 1


def test_a_duplicate_of_a_memory_that_never_expires_keeps_it_forever(busy):
    s = busy
    m = s.remember("use the internal pypi mirror", type="decision", agent_id="a")
    again = s.remember("use the internal pypi mirror", type="decision", agent_id="a", ttl=3600)
    assert again.id == m.id and again.expires_at is None


def test_importance_of_a_reinforced_memory_never_exceeds_one(busy):
    s = busy
    m = s.remember("keep the lockfile committed", type="decision", agent_id="a", importance=1.0)
    assert s.remember("keep the lockfile committed", type="decision", agent_id="a").importance == 1.0
    assert s.get(m.id).importance == 1.0


def test_a_duplicate_un_archives_the_memory(busy):
    s = busy
    m = s.remember("the proxy drops idle connections after 60 s", type="failure", agent_id="a")
    s.archive(m.id, agent_id="a")
    assert m.id not in by_words(s, "proxy idle connections")
    s.remember("the proxy drops idle connections after 60 s", type="failure", agent_id="a")
    assert not s.get(m.id).archived
    assert m.id in by_words(s, "proxy idle connections")
    hits = s.recall("the proxy drops idle connections", agent_id="a", channels={"vector"}, limit=3, record=False)
    assert hits[0].memory.id == m.id


def test_the_same_text_from_another_agent_scope_or_type_is_another_memory(busy):
    s = busy
    m = s.remember("restart the runner", type="failure", agent_id="a")
    others = [
        s.remember("restart the runner", type="failure", agent_id="b"),
        s.remember("restart the runner", type="failure", agent_id="a", scope="global"),
        s.remember("restart the runner", type="success", agent_id="a"),
        s.remember("restart the runner", type="failure", agent_id="a", namespace="other"),
    ]
    assert len({m.id, *(o.id for o in others)}) == 5
    assert s.get(m.id).access_count == 0


def test_a_near_duplicate_reinforces_and_a_less_similar_text_is_inserted(db, clock):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder()) as s:
        m = s.remember("disk quota exceeded on the runner <angle:0>", type="failure", agent_id="a", tags=["disk"])
        near = s.remember(
            "disk quota exceeded on a runner <angle:15>", type="failure", agent_id="a", tags=["quota"]
        )  # cos 15 degrees = 0.966 >= 0.95
        far = s.remember("disk quota exceeded on some runner <angle:25>", type="failure", agent_id="a")  # 0.906
        assert near.id == m.id and far.id != m.id
        (row,) = s._core.backend.execute("SELECT kind, similarity, merged_content FROM memory_merges").fetchall()
        assert row[0] == "near" and row[1] == pytest.approx(np.cos(np.radians(15)), abs=1e-4)
        assert row[2] == "disk quota exceeded on a runner <angle:15>"
        assert s.get(m.id).content == "disk quota exceeded on the runner <angle:0>"  # the first wording stays
        assert by_tag(s, "quota") == [m.id]


def test_the_threshold_is_a_setting(db, clock):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder(), settings=Settings(near_duplicate_threshold=0.8)) as s:
        m = s.remember("first wording <angle:0>", type="failure", agent_id="a")
        assert s.remember("second wording <angle:30>", type="failure", agent_id="a").id == m.id  # 0.866
        assert s.remember("third wording <angle:35>", type="failure", agent_id="a").id == m.id  # 0.819
        assert s.remember("fourth wording <angle:40>", type="failure", agent_id="a").id != m.id  # 0.766


def test_a_batch_de_duplicates_within_itself(db, clock):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder()) as s:
        out = s.remember_many(
            [
                {"content": "flaky test in the auth module <angle:0>", "type": "failure", "agent_id": "a"},
                {"content": "flaky test in the auth module again <angle:10>", "type": "failure", "agent_id": "a"},
                {"content": "flaky test in the auth module <angle:0>", "type": "failure", "agent_id": "a"},
                {"content": "flaky test in the auth module <angle:0>", "type": "failure", "agent_id": "b"},
                {"content": "unrelated <angle:70>", "type": "failure", "agent_id": "a"},
            ]
        )
        assert out[0].id == out[1].id == out[2].id
        assert len({out[0].id, out[3].id, out[4].id}) == 3
        assert s.get(out[0].id).access_count == 2


def test_a_key_updates_in_place_keeps_the_old_version_and_the_indexes_follow(busy, clock):
    s = busy
    v1 = s.remember(
        "the staging database is legacyhost",
        type="context",
        agent_id="a",
        key="staging-db",
        tags=["legacy"],
        importance=0.3,
    )
    assert v1.id in by_words(s, "legacyhost") and by_tag(s, "legacy") == [v1.id]
    clock.advance(60)
    v2 = s.remember(
        "the staging database moved to newhost",
        type="context",
        agent_id="a",
        key="staging-db",
        tags=["postgres"],
        importance=0.8,
    )
    assert v2.id == v1.id and v2.version == 2 and v2.content.endswith("newhost")
    assert v2.tags == ["postgres"] and v2.importance == 0.8 and v2.relevance_score == 1.0
    assert by_tag(s, "legacy") == [] and by_tag(s, "postgres") == [v1.id]
    assert v1.id in by_words(s, "newhost") and v1.id not in by_words(s, "legacyhost")
    hits = s.recall("the staging database moved to newhost", agent_id="a", channels={"vector"}, limit=1, record=False)
    assert hits[0].memory.id == v1.id and hits[0].breakdown.vector == pytest.approx(1.0, abs=1e-3)
    rows = s._core.backend.execute(
        "SELECT version, content, importance FROM memory_history WHERE memory_id = ?", (v1.id,)
    ).fetchall()
    assert [tuple(r) for r in rows] == [(1, "the staging database is legacyhost", 0.3)]
    assert count(s, "memories", "key = ?", ("staging-db",)) == 1


def test_a_key_update_revives_an_archived_memory(busy):
    s = busy
    m = s.remember("runner pool size is 4", type="context", agent_id="a", key="pool")
    s.archive(m.id, agent_id="a")
    again = s.remember("runner pool size is 8", type="context", agent_id="a", key="pool")
    assert again.id == m.id and not again.archived
    assert m.id in by_words(s, "runner pool size")


def test_the_same_key_for_another_agent_is_another_memory(busy):
    s = busy
    a = s.remember("region is eu-west-1", type="context", agent_id="a", key="region")
    b = s.remember("region is us-east-2", type="context", agent_id="b", key="region")
    assert a.id != b.id and s.get(a.id).content == "region is eu-west-1"


def test_a_threads_events_are_each_kept(busy):
    s = busy
    e1 = s.remember("ran the tests", type="episode", agent_id="a", thread_id="t-1")
    e2 = s.remember("ran the tests", type="episode", agent_id="a", thread_id="t-1")
    assert e1.id != e2.id
    plain = s.remember("ran the tests", type="episode", agent_id="a")
    assert plain.id not in (e1.id, e2.id)


def test_secrets_are_redacted_from_content_tags_and_metadata_and_listed(busy):
    s = busy
    m = s.remember(
        "login with password=hunter22 failed",
        type="failure",
        agent_id="a",
        tags=["token=Zx81Ka0PqLm2", "auth"],
        metadata={"env": {"API_KEY": "Zx81Ka0PqLm2x"}, "redacted": ["bearer"]},
    )
    assert m.content == "login with password=[REDACTED:secret_pair] failed"
    assert m.tags == ["token=[REDACTED:secret_pair]", "auth"]
    assert m.metadata["env"] == {"API_KEY": "[REDACTED:secret_pair]"}
    assert m.metadata["redacted"] == ["bearer", "secret_pair"]
    assert by_words(s, "hunter22") == []
    clean = s.remember("nothing secret here", type="failure", agent_id="a", metadata={"k": "v"})
    assert "redacted" not in clean.metadata


def test_two_tags_that_redact_to_the_same_text_become_one(busy):
    m = busy.remember("x happened", type="failure", agent_id="a", tags=["token=Zx81Ka0PqLm2", "token=Qw81Ka0PqLm2"])
    assert m.tags == ["token=[REDACTED:secret_pair]"]


def test_with_redaction_off_the_text_is_kept(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(redact_secrets=False)) as s:
        m = s.remember("password=hunter22", type="failure", agent_id="a")
        assert m.content == "password=hunter22" and "redacted" not in m.metadata


def test_an_error_signs_the_memory_and_a_success_with_an_error_is_a_fix(busy):
    s = busy
    sig = s.error_signature(ERROR)
    failure = s.remember("the worker crashed at import", type="failure", agent_id="a", error=ERROR)
    assert failure.error_signature == sig.id and failure.error_template == sig.template
    assert failure.metadata["error_category"] == sig.category
    assert s.fixes_for(ERROR, agent_id="a") == []  # a failure is not a fix
    fix = s.remember("pin tenacity<9 in requirements.txt", type="success", agent_id="a", error=ERROR)
    (found,) = s.fixes_for(ERROR, agent_id="a")
    assert found.memory.id == fix.id
    s.learn_fix(ERROR, "upgrading pip did not help", agent_id="a", worked=False)
    assert [f.memory.id for f in s.fixes_for(ERROR, agent_id="a")][0] == fix.id


def test_content_is_stripped_and_a_memory_without_vectors_is_pending(db, clock):
    from harness_memory.testing import FailingEmbedder

    with MemoryStore(db, clock=clock, embedder=FailingEmbedder(8, mode="raise")) as s:
        m = s.remember("   padded content   ", type="failure", agent_id="a")
        assert m.content == "padded content" and m.embedding_pending
        assert count(s, "memory_vectors") == 0
        assert by_words(s, "padded content") == [m.id]


def test_a_refused_batch_writes_nothing(busy):
    s = busy
    before = table_snapshot(s)
    with pytest.raises(ValueError):
        s.remember_many(
            [
                {"content": "good one", "type": "failure", "agent_id": "a"},
                {"content": "bad one", "type": "failure", "agent_id": "a", "importance": 7},
            ]
        )
    assert table_snapshot(s) == before


@pytest.mark.parametrize("vector_search", ["memory", "vec0"])
def test_near_duplicates_are_found_by_either_vector_search_and_never_merge_into_keyed_or_thread_memories(
    db, clock, vector_search
):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder(), settings=Settings(vector_search=vector_search)) as s:
        keyed = s.remember("the runner image is ubuntu 22 <angle:0>", type="context", agent_id="a", key="image")
        event = s.remember(
            "the runner image is ubuntu 22, said in a thread <angle:50>", type="context", agent_id="a", thread_id="th"
        )
        plain = s.remember("the runner image is ubuntu 22 today <angle:2>", type="context", agent_id="a")
        assert plain.id not in (keyed.id, event.id)  # 0.999 to the keyed memory, but that is updated by its key
        again = s.remember("the runner image is ubuntu 22 this week <angle:4>", type="context", agent_id="a")
        assert again.id == plain.id
        near_event = s.remember("the runner image was ubuntu 22 <angle:51>", type="context", agent_id="a")
        assert near_event.id != event.id
        rows = s._core.backend.execute("SELECT memory_id, kind FROM memory_merges").fetchall()
        assert [tuple(r) for r in rows] == [(plain.id, "near")]


def test_merged_tags_are_capped_at_max_tags(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(max_tags=3)) as s:
        m = s.remember("same words", type="failure", agent_id="a", tags=["a", "b"])
        again = s.remember("same words", type="failure", agent_id="a", tags=["c", "d"])
        assert again.id == m.id and again.tags == ["a", "b", "c"]
        assert by_tag(s, "c") == [m.id] and by_tag(s, "d") == []


def test_a_duplicate_without_a_ttl_makes_the_memory_permanent(busy, clock):
    m = busy.remember("temporary: the proxy is down", type="context", agent_id="a", ttl=3600)
    again = busy.remember("temporary: the proxy is down", type="context", agent_id="a")
    assert again.id == m.id and again.expires_at is None
    clock.advance(7200)
    assert busy.get(m.id).content == "temporary: the proxy is down"


def test_a_fix_taught_again_with_its_error_links_the_kept_memory(busy):
    s = busy
    m = s.remember("pin tenacity<9", type="success", agent_id="a")
    assert s.fixes_for(ERROR, agent_id="a") == []
    again = s.remember("pin tenacity<9", type="success", agent_id="a", error=ERROR)
    assert again.id == m.id
    assert [f.memory.id for f in s.fixes_for(ERROR, agent_id="a")] == [m.id]


def test_updates_and_merges_are_logged_as_accesses(busy):
    s = busy
    m = s.remember("the registry token expires hourly", type="context", agent_id="a", key="registry")
    s.remember(
        "the registry token expires every two hours",
        type="context",
        agent_id="a",
        key="registry",
        session_id="s1",
        task_id="t1",
    )
    plain = s.remember("the registry token expires every two hours", type="context", agent_id="a")
    assert plain.id != m.id  # a keyed memory is updated through its key, never merged into
    s.remember("the registry token expires every two hours", type="context", agent_id="a", session_id="s2")
    rows = s._core.backend.execute(
        "SELECT memory_id, access_type, agent_id, session_id, task_id, outcome FROM "
        "memory_access_log WHERE access_type = 'updated' ORDER BY id"
    ).fetchall()
    assert [tuple(r)[:5] for r in rows] == [(m.id, "updated", "a", "s1", "t1"), (plain.id, "updated", "a", "s2", None)]
    assert rows[0][5] == "updated in place via key"


def test_a_keyed_update_whose_embedding_fails_drops_the_stale_vector(db, clock):
    from harness_memory.testing import FailingEmbedder

    emb = FailingEmbedder(8, mode="ok")
    with MemoryStore(db, clock=clock, embedder=emb) as s:
        m = s.remember("first text", type="context", agent_id="a", key="k")
        assert count(s, "memory_vectors") == 1 and not m.embedding_pending
        emb.mode = "raise"
        again = s.remember("second text", type="context", agent_id="a", key="k")
        assert again.id == m.id and again.embedding_pending
        assert count(s, "memory_vectors") == 0
        assert by_words(s, "second") == [m.id]


def test_a_fix_taught_as_not_working_counts_as_a_failure(busy):
    s = busy
    s.learn_fix(ERROR, "reinstall tenacity with pip", agent_id="a", worked=True)
    (f,) = s.fixes_for(ERROR, agent_id="a")
    assert (f.worked, f.failed) == (1, 0)
    s.learn_fix(ERROR, "reinstall tenacity with pip", agent_id="a", worked=False)
    assert s.fixes_for(ERROR, agent_id="a") == []  # as often failed as worked: not offered
    s.learn_fix(ERROR, "reinstall tenacity with pip", agent_id="a", worked=True)
    (f,) = s.fixes_for(ERROR, agent_id="a")
    assert (f.worked, f.failed) == (2, 1)


def test_within_a_batch_an_item_merges_into_the_closer_of_an_earlier_item_and_an_old_memory(db, clock):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder()) as s:
        old = s.remember("an old note <angle:40>", type="failure", agent_id="a")
        first, second = s.remember_many(
            [
                {"content": "a new note <angle:0>", "type": "failure", "agent_id": "a"},
                {"content": "the same new note <angle:5>", "type": "failure", "agent_id": "a"},  # 0.996 to the first
            ]
        )
        assert second.id == first.id != old.id


@pytest.mark.parametrize("vector_search", ["memory", "vec0"])
def test_a_near_duplicate_of_an_archived_memory_brings_it_back_to_vector_search(db, clock, vector_search):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder(), settings=Settings(vector_search=vector_search)) as s:
        m = s.remember("the flaky upload <angle:0>", type="failure", agent_id="a")
        s.archive(m.id, agent_id="a")
        again = s.remember("the flaky upload again <angle:5>", type="failure", agent_id="a")
        assert again.id == m.id and not again.archived
        exact = s.remember("a second memory <angle:60>", type="failure", agent_id="a")
        s.archive(exact.id, agent_id="a")
        assert s.remember("a second memory <angle:60>", type="failure", agent_id="a").id == exact.id
        for mid, query in ((m.id, "q <angle:0>"), (exact.id, "q <angle:60>")):
            hits = s.recall(query, agent_id="a", channels={"vector"}, limit=1, record=False)
            assert [h.memory.id for h in hits] == [mid]


@pytest.mark.parametrize("vector_search", ["memory", "vec0"])
def test_a_keyed_update_is_found_by_its_new_vector(db, clock, vector_search):
    with MemoryStore(db, clock=clock, embedder=AngleEmbedder(), settings=Settings(vector_search=vector_search)) as s:
        m = s.remember("the image tag <angle:0>", type="context", agent_id="a", key="image")
        s.archive(m.id, agent_id="a")
        s.remember("the image tag moved <angle:90>", type="context", agent_id="a", key="image")
        hits = s.recall("q <angle:90>", agent_id="a", channels={"vector"}, limit=1, record=False)
        assert [h.memory.id for h in hits] == [m.id] and hits[0].breakdown.vector == pytest.approx(1.0, abs=1e-4)


def test_the_history_keeps_the_replaced_versions_hash_tags_and_metadata(busy):
    s = busy
    v1 = s.remember(
        "replica count is 3", type="context", agent_id="a", key="replicas", tags=["k8s"], metadata={"source": "helm"}
    )
    s.remember("replica count is 5", type="context", agent_id="a", key="replicas", tags=["prod"])
    (row,) = s._core.backend.execute(
        "SELECT version, content, content_hash, context_tags, metadata, valid_until "
        "FROM memory_history WHERE memory_id = ?",
        (v1.id,),
    ).fetchall()
    assert row[0] == 1 and row[1] == "replica count is 3"
    from harness_memory.core import content_hash

    assert row[2] == content_hash("replica count is 3") != content_hash("replica count is 5")
    assert "k8s" in row[3] and "helm" in row[4] and row[5] is not None


def test_a_task_signature_is_bounded_at_1000_bytes_and_a_bad_importance_is_named(tmp_path):
    from harness_memory.errors import InvalidInputError

    with MemoryStore(tmp_path / "m.db") as s:
        m = s.remember("the deploy step timed out", type="failure", agent_id="a", task_signature="é" * 500)
        assert m.task_signature == "é" * 500  # 1,000 bytes
        with pytest.raises(InvalidInputError, match="task_signature"):
            s.remember("the deploy step timed out", type="failure", agent_id="a", task_signature="é" * 500 + "x")
        with pytest.raises(InvalidInputError, match=r"^importance must be in \[0, 1\]"):
            s.remember("the deploy step timed out", type="failure", agent_id="a", importance=7)


def test_a_fix_whose_secret_only_the_whole_text_shows_is_linked_by_the_redacted_text(tmp_path):
    """learn_error's details are the end of its content, unless redaction changed that end: a password
    after the error's 'password' is a secret in the content, not in the details alone. The fix is then
    the redacted content (no fix_starts_at pointing into it), and the secret is stored nowhere."""
    with MemoryStore(tmp_path / "m.db") as s:
        m = s.learn_error("a", "the login failed, password", details="hunter2hunter2")
        assert m.content.endswith("[REDACTED:secret_pair]")
        assert "fix_starts_at" not in m.metadata
        assert "hunter2" not in repr(table_snapshot(s))
        ok = s.learn_error("a", "the deploy failed: disk full", details="prune the docker images")
        assert ok.metadata["fix_starts_at"] == len("the deploy failed: disk full: ")


def test_an_outcome_recorded_while_the_embedder_fails_is_kept_by_its_words_and_pending(tmp_path):
    """record_outcome writes its memory with the vectors it made before its transaction, or with none
    when the embedder failed (``writes.NO_VECTORS``): keyword-only, flagged for the backfill."""
    from harness_memory.testing import FailingEmbedder

    with MemoryStore(tmp_path / "m.db", embedder=FailingEmbedder(8, mode="raise")) as s:
        s.record_outcome("T-1", "retry", success=False, error=ERROR, notes="the retry hit the same import error")
        rows = s._core.backend.execute("SELECT id, embedding_pending FROM memories").fetchall()
        assert rows and all(pending for _, pending in rows)
        assert count(s, "memory_vectors") == 0
        assert by_words(s, "retry import error") == [rows[0][0]]
