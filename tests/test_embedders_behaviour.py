"""Embedders as a user configures them (harness_memory/embedders.py, docs/embedders.md): the hashing
embedder's size bounds and their message, and a sentence-transformers model (the optional extra,
stood in for by a small fake with the library's interface) giving unit vectors of its own size."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from harness_memory.embedders import HashingEmbedder, embedder_from_name
from harness_memory.errors import ConfigurationError


@pytest.mark.parametrize("dimensions", [7, 8193, 0, 384.0, True, "384"])
def test_a_hashing_embedder_of_a_bad_size_is_refused_naming_the_range(dimensions):
    with pytest.raises(ConfigurationError) as err:
        HashingEmbedder(dimensions)
    assert str(err.value) == "HashingEmbedder dimensions must be an int in [8, 8192]"


@pytest.mark.parametrize("dimensions", [8, 8192])
def test_a_hashing_embedder_at_its_size_bounds_embeds(dimensions):
    v = HashingEmbedder(dimensions).embed_batch(["pip cannot reach the index"])
    assert v.shape == (1, dimensions) and np.isfinite(v).all() and float(np.linalg.norm(v[0])) > 0


class _FakeModel:
    """sentence_transformers.SentenceTransformer's interface: unnormalised vectors unless asked."""

    def __init__(self, name, device="cpu"):
        self.name, self.device = name, device

    def get_sentence_embedding_dimension(self):
        return 12

    def encode(self, texts, normalize_embeddings=False, convert_to_numpy=True):
        raw = np.array([[len(t) + k for k in range(12)] for t in texts], dtype=np.float32)
        return raw / np.linalg.norm(raw, axis=1, keepdims=True) if normalize_embeddings else raw


@pytest.fixture
def fake_sentence_transformers(monkeypatch):
    mod = types.ModuleType("sentence_transformers")
    mod.SentenceTransformer = _FakeModel
    monkeypatch.setitem(sys.modules, "sentence_transformers", mod)


def test_a_sentence_transformers_model_gives_unit_vectors_of_its_own_size(fake_sentence_transformers):
    e = embedder_from_name("sentence-transformers:all-MiniLM-L6-v2")
    assert e.name == "sentence-transformers:all-MiniLM-L6-v2" and e.dimensions == 12
    v = e.embed_batch(["first text", "a second, longer text"])
    assert v.shape == (2, 12)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_an_openai_compatible_embedder_needs_a_positive_size():
    from harness_memory.embedders import OpenAICompatibleEmbedder

    for bad in (0, -3):
        with pytest.raises(ConfigurationError, match="dimensions must be positive"):
            OpenAICompatibleEmbedder("text-embedding-3-small", dimensions=bad)
    with pytest.raises(ConfigurationError, match="dimensions must be positive"):
        embedder_from_name("openai:text-embedding-3-small:0")
    one = OpenAICompatibleEmbedder("text-embedding-3-small", dimensions=1)
    assert one.dimensions == 1 and one.name == "openai:text-embedding-3-small:1"


def test_embeddings_answered_out_of_order_come_back_in_the_order_asked():
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from harness_memory.embedders import OpenAICompatibleEmbedder

    class H(BaseHTTPRequestHandler):
        def do_POST(self):
            texts = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]
            data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(texts)]
            body = json.dumps({"data": data[::-1]}).encode()  # a server may answer in any order
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        e = OpenAICompatibleEmbedder("m", dimensions=3, base_url=f"http://127.0.0.1:{srv.server_port}/v1")
        v = e.embed_batch(["a", "bbb", "cc"])
        assert v[:, 0].tolist() == [1.0, 3.0, 2.0]
    finally:
        srv.shutdown()
        srv.server_close()
