"""Embedders turn text into unit-length float32 vectors.

An embedder is any object with ``name`` (str, recorded in the database), ``dimensions``
(int) and ``embed_batch(texts) -> sequence of vectors``. :func:`check_vectors` validates
what it returns; the store never writes a vector that fails it.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import mmh3
import numpy as np

from .backend import safe_url
from .errors import ConfigurationError, EmbedderError, InvalidInputError

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "OpenAICompatibleEmbedder",
    "SentenceTransformerEmbedder",
    "check_vectors",
    "embedder_from_name",
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


_TOKEN = re.compile(r"(?u)\b\w+\b")  # scikit-learn's default token pattern
_HASH_CACHE_MAX = 1 << 18  # word tokens whose hash is kept between calls
_CHAR_CACHE_MAX = 1 << 16  # distinct words whose character n-gram hashes are kept between calls
_MERGED_BUCKETS_MAX = 16  # up to this many texts in a call, both families are bucketed in one pass
_PY_CODES_MAX = 128  # up to this many new keys in a call, their bucket codes are computed in plain Python

_hash = mmh3.hash  # signed 32-bit MurmurHash3 (x86, seed 0) of a str's UTF-8 bytes, or of bytes
# mmh3 (5.3.1) crashes the interpreter on a str holding a lone surrogate (text decoded with
# ``surrogateescape``, e.g. ``os.fsdecode`` of a non-UTF-8 name), which has no UTF-8 form: such text is
# refused before anything is hashed
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def murmur3_32(keys: Sequence[bytes | str]) -> np.ndarray:
    """Signed 32-bit MurmurHash3 (x86, seed 0) of each key (a str is hashed as its UTF-8 bytes), as
    int64: the hash scikit-learn's ``HashingVectorizer`` uses (the ``mmh3`` package's C code)."""
    return np.fromiter(map(_hash, keys), dtype=np.int64, count=len(keys))


def _gram_hashes(word: str) -> list[int]:
    """The hashes of a word's character 3-, 4- and 5-grams, the windows of scikit-learn's ``char_wb``
    over " word " (a padded word shorter than a window has none of that length)."""
    seg = " " + word + " "
    n = len(seg)
    return [_hash(seg[i : i + k]) for k in (3, 4, 5) for i in range(n - k + 1)]


class HashingEmbedder:
    """Offline, deterministic, no model download: hashed word and character n-grams.

    Word unigrams/bigrams and character 3–5-grams within word boundaries are hashed
    (MurmurHash3, signed) into ``dimensions`` buckets; each family is L2-normalised and the two
    are summed (characters at half weight): the sum is not of unit length (the store normalises
    every vector it keeps). Identical across
    processes and machines (no fitted state). The vectors are those of scikit-learn's
    ``HashingVectorizer`` (``word`` 1–2-grams plus ``char_wb`` 3–5-grams, ``alternate_sign``),
    which ``hashing-v1`` was first built on; this implementation needs numpy and the ``mmh3``
    package, and tests pin it to scikit-learn's output and to the earlier pure numpy one.
    """

    def __init__(self, dimensions: int = 384):
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 8 <= dimensions <= 8192:
            raise ConfigurationError("HashingEmbedder dimensions must be an int in [8, 8192]")
        self.dimensions = dimensions
        self.name = f"hashing-v1:{dimensions}"
        self._word_hash: dict[str, int] = {}  # a word 1- or 2-gram -> its bucket code
        self._char_hash: dict[str, np.ndarray] = {}  # a word -> the codes of its character n-grams
        # (both caches keep bucket codes, see _codes: an embedder's dimensions never change)
        # the caches are shared by the threads of a process (a PostgreSQL-backed store serves several):
        # one thread clearing a full cache while another reads it would fail the other's call
        self._cache_lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t.lower() for t in texts]
        for t in texts:
            if not t.isascii() and _LONE_SURROGATE.search(t):
                raise InvalidInputError(
                    "text to embed holds a lone surrogate (no UTF-8 form; text decoded with surrogateescape?): "
                    "decode it with errors='replace' first"
                )
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        n = len(texts)
        with self._cache_lock:
            w_codes, w_counts = self._words(texts)
            c_codes, c_words, c_parts = self._chars(texts)
        two_n = 2 * self.dimensions
        if n == 1:  # one text (a remember, a query): its words are bucket row 0, its characters row 1
            both = self._buckets(2, np.concatenate((w_codes, c_codes + two_n)))
            return (both[:1] + np.float32(0.5) * both[1:]).astype(np.float32)
        w_keys = np.repeat(np.arange(n) * two_n, w_counts) + w_codes
        # each character n-gram's text: each word's text repeated by its n-gram count
        c_rows = np.repeat(np.repeat(np.arange(n), c_words), list(map(len, c_parts)))
        c_keys = c_rows * two_n + c_codes
        if n <= _MERGED_BUCKETS_MAX:
            # a few texts: both families in one pass over the buckets (rows 0..n-1 words, n..2n-1
            # characters), each row counted and normalised on its own as two passes would (numpy's
            # per-call cost halved; for many texts the copies of the joined arrays cost more)
            both = self._buckets(2 * n, np.concatenate((w_keys, c_keys + n * two_n)))
            return (both[:n] + np.float32(0.5) * both[n:]).astype(np.float32)
        words, chars = self._buckets(n, w_keys), self._buckets(n, c_keys)
        return (words + np.float32(0.5) * chars).astype(np.float32)

    def _codes(self, hashes: list[int]) -> np.ndarray:
        """Each hash's signed bucket as one code: its bucket ``b`` (scikit-learn's ``FeatureHasher``:
        ``abs(h) % dimensions``, with int32's ``abs(-2**31)``) for a hash >= 0, ``dimensions + b`` for a
        negative one (counted with the sign -1)."""
        n = self.dimensions
        if len(hashes) <= _PY_CODES_MAX:  # a few keys: numpy's per-call cost would dominate
            low = (2147483647 - (n - 1)) % n  # the bucket of -2**31
            return np.array(
                [h % n if h >= 0 else n + (low if h == -(1 << 31) else -h % n) for h in hashes], dtype=np.int64
            )
        h = np.array(hashes, dtype=np.int64)
        idx = np.where(h == -(1 << 31), (2147483647 - (n - 1)) % n, np.abs(h) % n)
        return idx + np.where(h < 0, n, 0)

    def _buckets(self, n_docs: int, keys: np.ndarray) -> np.ndarray:
        """Signed bucket counts per document (key ``doc * 2 * dimensions + code``), L2-normalised (as
        scikit-learn's FeatureHasher)."""
        n = self.dimensions
        counts = np.bincount(keys, minlength=n_docs * 2 * n).reshape(n_docs, 2, n)
        out = (counts[:, 0] - counts[:, 1]).astype(np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))
        np.divide(out, norms[:, None], out=out, where=norms[:, None] > 0)
        return out

    def _words(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """The bucket code of each word 1- and 2-gram of each text, and each text's count of them."""
        cache = self._word_hash
        tokens: list[str] = []
        counts = []
        for t in texts:
            w = _TOKEN.findall(t)
            grams = w + [f"{a} {b}" for a, b in itertools.pairwise(w)]
            tokens += grams
            counts.append(len(grams))
        new = [t for t in tokens if t not in cache]
        if new:
            if len(cache) + len(new) > _HASH_CACHE_MAX:
                cache.clear()  # every token of this call is then new (one already cached was just dropped)
                new = tokens
            cache.update(zip(new, self._codes(list(map(_hash, new))).tolist()))
        return np.fromiter(map(cache.__getitem__, tokens), dtype=np.int64, count=len(tokens)), counts

    def _chars(self, texts: list[str]) -> tuple[np.ndarray, list[int], list[np.ndarray]]:
        """The bucket code of each character 3-5-gram of each text's words; each text's count of words,
        and each word's codes."""
        # The character n-grams of a text are those of each of its words (a window never crosses
        # a word's padding), so they are hashed once per distinct word and kept (most words recur).
        cache = self._char_hash
        split = [t.split() for t in texts]
        new = [w for words in split for w in words if w not in cache]
        if new:
            if len(cache) + len(new) > _CHAR_CACHE_MAX:
                cache.clear()
                new = [w for words in split for w in words]
            new = list(dict.fromkeys(new))
            grams = [_gram_hashes(w) for w in new]
            codes = self._codes([h for g in grams for h in g])
            ends = np.cumsum([len(g) for g in grams]).tolist()
            for w, a, b in zip(new, [0, *ends], ends):
                cache[w] = codes[a:b]
        flat = [cache[w] for words in split for w in words]
        return (np.concatenate(flat) if flat else np.zeros(0, np.int64)), list(map(len, split)), flat


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

    def __init__(
        self,
        model: str,
        *,
        dimensions: int,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
    ):
        if dimensions <= 0:
            raise ConfigurationError("dimensions must be positive")
        self.model = model
        self.dimensions = int(dimensions)
        self.base_url = base_url.rstrip("/")
        self._shown_url = safe_url(self.base_url)  # what messages say: no password, no key in the query
        self.api_key = api_key
        self.timeout = timeout
        self.batch_size = batch_size
        self.name = f"openai:{model}:{dimensions}"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out.extend(self._post(texts[i : i + self.batch_size]))
        return (
            np.asarray(out, dtype=np.float32).reshape(len(texts), -1)
            if out
            else np.zeros((0, self.dimensions), np.float32)
        )

    def _post(self, batch: list[str]) -> list[list[float]]:
        import urllib.error  # here, not at import: http.client and ssl cost every CLI call ~0.1 s
        import urllib.request

        body = json.dumps({"model": self.model, "input": batch}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(f"{self.base_url}/embeddings", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = json.loads(resp.read())
        except (urllib.error.URLError, TimeoutError, OSError, json.JSONDecodeError) as exc:
            raise EmbedderError(f"embedding request to {self._shown_url} failed: {exc}") from exc
        try:
            data = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = [d["embedding"] for d in data]
        except (KeyError, TypeError) as exc:
            raise EmbedderError(f"unexpected embeddings response from {self._shown_url}") from exc
        if len(vectors) != len(batch):
            raise EmbedderError(f"{self._shown_url} returned {len(vectors)} embeddings for {len(batch)} inputs")
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
        return OpenAICompatibleEmbedder(
            model, dimensions=int(dim), base_url=base_url or "https://api.openai.com/v1", api_key=api_key
        )
    raise ConfigurationError(
        f"unknown embedder {name!r}; use hashing[:DIM], sentence-transformers:MODEL or openai:MODEL:DIM"
    )
