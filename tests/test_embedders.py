"""One contract suite, run against every embedder, plus the failure and change policies."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from conftest import table_counts, table_snapshot
from harness_memory import (
    ConfigurationError,
    EmbedderError,
    EmbedderMismatchError,
    HashingEmbedder,
    MemoryStore,
    OpenAICompatibleEmbedder,
    Settings,
    embedder_from_name,
)
from harness_memory.embedders import check_vectors
from harness_memory.testing import FailingEmbedder, FakeEmbedder


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A minimal OpenAI-compatible /v1/embeddings server (hashing vectors)."""

    backend = HashingEmbedder(48)
    seen_auth: list[str] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen_auth.append(self.headers.get("Authorization", ""))
        if self.path != "/v1/embeddings":
            self.send_response(404)
            self.end_headers()
            return
        vecs = self.backend.embed_batch(body["input"])
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def http_server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


@pytest.fixture(params=["hashing", "hashing-small", "fake", "openai-compatible"])
def embedder(request, http_server):
    if request.param == "hashing":
        return HashingEmbedder()
    if request.param == "hashing-small":
        return embedder_from_name("hashing:64")
    if request.param == "fake":
        return FakeEmbedder(32)
    return OpenAICompatibleEmbedder("test-model", dimensions=48, base_url=http_server, api_key="k-123", batch_size=3)


def test_contract_shape_determinism_and_normalisation(embedder):
    texts = ["retry the build", "the network is down", "retry the build", "ünïcödé text ✓"]
    raw = embedder.embed_batch(texts)
    vecs = check_vectors(embedder, texts, raw)
    assert vecs.shape == (4, embedder.dimensions) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vecs[0], vecs[2])
    assert isinstance(embedder.name, str) and embedder.name
    assert check_vectors(embedder, [], embedder.embed_batch([])).shape == (0, embedder.dimensions)


def test_contract_similar_texts_are_closer(embedder):
    a, b, c = check_vectors(
        embedder,
        ["x"] * 3,
        embedder.embed_batch(
            [
                "npm install fails with a stale lockfile",
                "npm install fails: the lockfile is stale",
                "the quarterly sales report is due friday",
            ]
        ),
    )
    assert a @ b > a @ c


def test_contract_store_round_trip(embedder, tmp_path):
    with MemoryStore(tmp_path / "e.db", embedder=embedder) as s:
        s.remember("npm install fails with a stale lockfile", type="failure", agent_id="a")
        s.remember("the quarterly sales report is due friday", type="decision", agent_id="a")
        hits = s.recall("npm lockfile stale", agent_id="a", channels={"vector"})
        assert hits[0].memory.content.startswith("npm")


def test_openai_embedder_sends_bearer_and_fails_cleanly(http_server):
    _EmbeddingsHandler.seen_auth.clear()
    e = OpenAICompatibleEmbedder("m", dimensions=48, base_url=http_server, api_key="sekret")
    e.embed_batch(["hello"])
    assert _EmbeddingsHandler.seen_auth == ["Bearer sekret"]
    with pytest.raises(EmbedderError):
        OpenAICompatibleEmbedder("m", dimensions=48, base_url=http_server + "/nope").embed_batch(["x"])
    with pytest.raises(EmbedderError):  # nothing listens there
        OpenAICompatibleEmbedder("m", dimensions=48, base_url="http://127.0.0.1:9", timeout=2).embed_batch(["x"])


def test_embedder_names_resolve_at_the_edges():
    assert embedder_from_name("hashing").dimensions == 384
    assert embedder_from_name("openai:text-embedding-3-small:1536").dimensions == 1536
    for bad in ("magic", "openai:model", "hashing:abc", "hashing:4"):
        with pytest.raises(ConfigurationError):
            embedder_from_name(bad)


@pytest.mark.parametrize("mode", ["raise", "nan", "inf", "wrong_dims"])
def test_failing_embedder_stores_keyword_only_then_backfills(tmp_path, mode):
    e = FailingEmbedder(32, mode=mode)
    with MemoryStore(tmp_path / "p.db", embedder=e) as s:
        m = s.remember("the cache server refuses connections on port 6379", type="failure", agent_id="a")
        assert m.embedding_pending
        counts = table_counts(s)
        assert counts["memory_vectors"] == 0 and counts["memories_fts"] == 1
        assert s.recall("cache server connections", agent_id="a")[0].memory.id == m.id  # keyword still works
        assert s.backfill_embeddings() == 0  # still failing: nothing changes
        e.mode = "ok"
        assert s.backfill_embeddings() == 1
        assert not s.get(m.id).embedding_pending
        assert s.recall("cache server refuses", agent_id="a", channels={"vector"})[0].memory.id == m.id


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("nan", "returned NaN or infinite values"),  # unusable vectors
        ("raise", "embedder 'fake:32' failed: embedding service unavailable"),  # any exception of user code
    ],
)
def test_failing_embedder_with_raise_policy_writes_nothing(tmp_path, mode, message):
    with MemoryStore(
        tmp_path / "r.db", embedder=FailingEmbedder(32, mode=mode), settings=Settings(embed_failure="raise")
    ) as s:
        before = table_snapshot(s)
        with pytest.raises(EmbedderError, match=message):
            s.remember("x y z", type="failure", agent_id="a")
        with pytest.raises(EmbedderError, match=message):
            s.recall("x y z", agent_id="a")
        assert table_snapshot(s) == before


def test_embedder_change_is_refused_then_reembedded(tmp_path):
    path = tmp_path / "c.db"
    with MemoryStore(path, embedder=FakeEmbedder(32)) as s:
        for i in range(10):
            s.remember(f"memory number {i} about topic {i % 3}", type="success", agent_id="a")
    with pytest.raises(EmbedderMismatchError, match="harness-memory reembed"):
        MemoryStore(path, embedder=HashingEmbedder(64))
    seen = []
    with MemoryStore(path, embedder=HashingEmbedder(64), allow_embedder_change=True) as s:
        assert s.remember("written before reembed", type="success", agent_id="a").embedding_pending
        assert s.reembed(batch_size=4, progress=lambda d, t: seen.append((d, t))) == 11
        assert seen[-1] == (11, 11)
        assert s.stats()["pending_embeddings"] == 0
        assert s.recall("topic 2", agent_id="a", channels={"vector"})
    with MemoryStore(path, embedder=HashingEmbedder(64)) as s:
        assert s.stats()["embedder"] == {"name": "hashing-v1:64", "dimensions": 64}
