"""Embedders turn text into unit-length float32 vectors.

An embedder is any object with ``name`` (str, recorded in the database), ``dimensions``
(int) and ``embed_batch(texts) -> sequence of vectors``. :func:`check_vectors` validates
what it returns; the store never writes a vector that fails it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from .errors import ConfigurationError, EmbedderError

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "OpenAICompatibleEmbedder",
    "embedder_from_name",
    "check_vectors",
]


@runtime_checkable
class Embedder(Protocol):
    name: str
    dimensions: int

    def embed_batch(self, texts: Sequence[str]) -> Sequence[Sequence[float]] | np.ndarray: ...


def check_vectors(embedder: Embedder, texts: Sequence[str], raw) -> np.ndarray:
    """Validate and L2-normalise an embedder's output; raise :class:`EmbedderError` if unusable."""
    try:
        arr = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbedderError(f"embedder {embedder.name!r} returned non-numeric output: {exc}") from exc
    if arr.ndim != 2 or arr.shape[0] != len(texts):
        raise EmbedderError(f"embedder {embedder.name!r} returned shape {arr.shape} for {len(texts)} texts")
    if arr.shape[1] != embedder.dimensions:
        raise EmbedderError(
            f"embedder {embedder.name!r} returned {arr.shape[1]} dimensions, declared {embedder.dimensions}"
        )
    if not np.isfinite(arr).all():
        raise EmbedderError(f"embedder {embedder.name!r} returned NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    # An all-zero vector (text with no features) stays zero: it matches nothing.
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)


class HashingEmbedder:
    """Offline, deterministic, no model download: hashed word and character n-grams.

    scikit-learn's ``HashingVectorizer`` maps word unigrams/bigrams and character 3–5-grams
    into ``dimensions`` signed buckets; the two are summed and L2-normalised. Identical
    across processes and machines (no fitted state).
    """

    def __init__(self, dimensions: int = 384):
        if not isinstance(dimensions, int) or not 8 <= dimensions <= 8192:
            raise ConfigurationError("HashingEmbedder dimensions must be an int in [8, 8192]")
        from sklearn.feature_extraction.text import HashingVectorizer

        self.dimensions = dimensions
        self.name = f"hashing-v1:{dimensions}"
        common = dict(n_features=dimensions, alternate_sign=True, norm="l2", lowercase=True, dtype=np.float32)
        self._words = HashingVectorizer(analyzer="word", ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b", **common)
        self._chars = HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), **common)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        w = self._words.transform(texts).toarray()
        c = self._chars.transform(texts).toarray()
        return (w + 0.5 * c).astype(np.float32)


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (extra ``[sentence-transformers]``).

    ``model`` is a local path or a model name already in the local cache; nothing is
    downloaded when ``HF_HUB_OFFLINE=1``.
    """

    def __init__(self, model: str, *, device: str = "cpu"):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on the optional extra
            raise ConfigurationError(
                "the sentence-transformers embedder needs: pip install 'harness-memory[sentence-transformers]'"
            ) from exc
        self._model = SentenceTransformer(model, device=device)
        self.dimensions = int(self._model.get_sentence_embedding_dimension())
        self.name = f"sentence-transformers:{model}"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)


class OpenAICompatibleEmbedder:
    """The ``/embeddings`` endpoint of OpenAI, Ollama, vLLM, LM Studio... (stdlib HTTP client).

    ``dimensions`` must be given (it is recorded before the first call); responses with
    another size are rejected.
    """

    def __init__(self, model: str, *, dimensions: int, base_url: str = "https://api.openai.com/v1",
                 api_key: str | None = None, timeout: float = 30.0, batch_size: int = 64):
        if dimensions <= 0:
            raise ConfigurationError("dimensions must be positive")
        self.model = model
        self.dimensions = int(dimensions)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.batch_size = batch_size
        self.name = f"openai:{model}:{dimensions}"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out.extend(self._post(texts[i : i + self.batch_size]))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1) if out else np.zeros((0, self.dimensions), np.float32)

    def _post(self, batch: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": batch}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(f"{self.base_url}/embeddings", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = json.loads(resp.read())
        except (urllib.error.URLError, TimeoutError, OSError, json.JSONDecodeError) as exc:
            raise EmbedderError(f"embedding request to {self.base_url} failed: {exc}") from exc
        try:
            data = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = [d["embedding"] for d in data]
        except (KeyError, TypeError) as exc:
            raise EmbedderError(f"unexpected embeddings response from {self.base_url}") from exc
        if len(vectors) != len(batch):
            raise EmbedderError(f"{self.base_url} returned {len(vectors)} embeddings for {len(batch)} inputs")
        return vectors


def embedder_from_name(name: str, *, base_url: str | None = None, api_key: str | None = None) -> Embedder:
    """Turn a configured name into an embedder (used only at the edges: CLI, settings).

    ``hashing`` / ``hashing:512`` · ``sentence-transformers:MODEL`` · ``openai:MODEL:DIM``
    (with ``base_url`` for a non-OpenAI server).
    """
    kind, _, rest = name.partition(":")
    if kind in ("hashing", "hashing-v1"):
        try:
            return HashingEmbedder(int(rest) if rest else 384)
        except ValueError as exc:
            raise ConfigurationError(f"bad hashing embedder name {name!r}") from exc
    if kind == "sentence-transformers" and rest:
        return SentenceTransformerEmbedder(rest)
    if kind == "openai" and rest:
        model, _, dim = rest.rpartition(":")
        if not model or not dim.isdigit():
            raise ConfigurationError(f"openai embedder name must be openai:MODEL:DIMENSIONS, got {name!r}")
        return OpenAICompatibleEmbedder(model, dimensions=int(dim), base_url=base_url or "https://api.openai.com/v1",
                                        api_key=api_key)
    raise ConfigurationError(
        f"unknown embedder {name!r}; use hashing[:DIM], sentence-transformers:MODEL or openai:MODEL:DIM"
    )


