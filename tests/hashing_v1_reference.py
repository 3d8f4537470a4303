"""hashing-v1 as harness_memory computed it before the mmh3 package (ab33f50, issue 11): MurmurHash3 in
plain Python and vectorised in numpy, the n-gram caches, the whole-word numpy path. Kept unchanged as the
reference the tests compare the library's embedder against, bit for bit (stored vectors must not change)."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence

import numpy as np

_TOKEN = re.compile(r"(?u)\b\w+\b")  # scikit-learn's default token pattern
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)
_HASH_CACHE_MAX = 1 << 18  # word tokens whose hash is kept between calls


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_rows(keys: np.ndarray) -> np.ndarray:
    """Signed 32-bit MurmurHash3 (x86, seed 0) of each row of a ``(n, length)`` uint8 matrix,
    as int64: the hash scikit-learn's ``HashingVectorizer`` uses, vectorised over rows."""
    m, n = keys.shape
    h = np.zeros(m, dtype=np.uint32)
    nblocks = n // 4
    if nblocks:
        blocks = np.ascontiguousarray(keys[:, : nblocks * 4]).view("<u4")
        for b in range(nblocks):
            h ^= _rotl(blocks[:, b] * _C1, 15) * _C2
            h = _rotl(h, 13) * np.uint32(5) + np.uint32(0xE6546B64)
    if n & 3:
        k = np.zeros(m, dtype=np.uint32)
        for j in range((n & 3) - 1, -1, -1):
            k ^= keys[:, nblocks * 4 + j].astype(np.uint32) << np.uint32(8 * j)
        h ^= _rotl(k * _C1, 15) * _C2
    h ^= np.uint32(n)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h.view(np.int32).astype(np.int64)


def murmur3_32(keys: Sequence[bytes]) -> np.ndarray:
    """Signed 32-bit MurmurHash3 (seed 0) of each byte string (grouped by length, vectorised; a
    few keys in plain Python, where numpy's per-call cost would dominate)."""
    if len(keys) <= _PY_HASH_MAX_KEYS:
        return np.array([_murmur3_py(k) for k in keys], dtype=np.int64)
    out = np.empty(len(keys), dtype=np.int64)
    by_len: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        by_len.setdefault(len(key), []).append(i)
    for n, idx in by_len.items():
        rows = np.frombuffer(b"".join(keys[i] for i in idx), dtype=np.uint8).reshape(len(idx), n)
        out[idx] = murmur3_rows(rows)
    return out


_PY_HASH_MAX_KEYS = 48  # up to this many keys, murmur3_32 hashes in plain Python
_M32 = 0xFFFFFFFF


def _murmur3_py(key: bytes) -> int:
    """murmur3_rows for one key, in plain Python (a few microseconds for a word)."""
    h = 0
    n = len(key)
    end = n - (n & 3)
    for i in range(0, end, 4):
        k = (int.from_bytes(key[i : i + 4], "little") * 0xCC9E2D51) & _M32
        k = (((k << 15) | (k >> 17)) & _M32) * 0x1B873593 & _M32
        h ^= k
        h = ((((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64) & _M32
    if n & 3:
        k = int.from_bytes(key[end:], "little")
        k = (k * 0xCC9E2D51) & _M32
        h ^= (((k << 15) | (k >> 17)) & _M32) * 0x1B873593 & _M32
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


class ReferenceHashingEmbedder:
    """Offline, deterministic, no model download: hashed word and character n-grams.

    Word unigrams/bigrams and character 3–5-grams within word boundaries are hashed
    (MurmurHash3, signed) into ``dimensions`` buckets; each family is L2-normalised and the two
    are summed (characters at half weight): the sum is not of unit length (the store normalises
    every vector it keeps). Identical across
    processes and machines (no fitted state). The vectors are those of scikit-learn's
    ``HashingVectorizer`` (``word`` 1–2-grams plus ``char_wb`` 3–5-grams, ``alternate_sign``),
    which ``hashing-v1`` was first built on; this implementation needs only numpy, and a
    test pins it to scikit-learn's output.
    """

    def __init__(self, dimensions: int = 384):
        self.dimensions = dimensions
        self.name = f"hashing-v1:{dimensions}"
        self._word_hash: dict[str, int] = {}
        self._char_hash: dict[str, np.ndarray] = {}  # a word -> the hashes of its character n-grams
        self._gram_hash: dict[str, int] = {}  # a character n-gram -> its hash (for new words)
        # the caches are shared by the threads of a process (a PostgreSQL-backed store serves several):
        # one thread clearing a full cache while another reads it would fail the other's call
        self._cache_lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t.lower() for t in texts]
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        n = len(texts)
        with self._cache_lock:
            w_rows, w_hashes = self._words(texts)
            c_rows, c_hashes = self._chars(texts)
        if n <= _MERGED_BUCKETS_MAX:
            # a few texts: both families in one pass over the buckets (rows 0..n-1 words, n..2n-1
            # characters), each row counted and normalised on its own as two passes would (numpy's
            # per-call cost halved; for many texts the copies of the joined arrays cost more)
            both = self._buckets(2 * n, np.concatenate((w_rows, c_rows + n)), np.concatenate((w_hashes, c_hashes)))
            return (both[:n] + np.float32(0.5) * both[n:]).astype(np.float32)
        words, chars = self._buckets(n, w_rows, w_hashes), self._buckets(n, c_rows, c_hashes)
        return (words + np.float32(0.5) * chars).astype(np.float32)

    def _buckets(self, n_docs: int, rows: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """Signed bucket counts per document, L2-normalised (as scikit-learn's FeatureHasher)."""
        n = self.dimensions
        out = np.zeros((n_docs, n), dtype=np.float32)
        if len(hashes):
            idx = np.where(hashes == -(1 << 31), (2147483647 - (n - 1)) % n, np.abs(hashes) % n)
            sign = np.where(hashes >= 0, 1.0, -1.0)
            out = np.bincount(rows * n + idx, weights=sign, minlength=n_docs * n).reshape(n_docs, n).astype(np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))
        np.divide(out, norms[:, None], out=out, where=norms[:, None] > 0)
        return out

    def _words(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(row, hash)`` of each word 1- and 2-gram of each text."""
        cache = self._word_hash
        tokens: list[str] = []
        counts = []
        for t in texts:
            w = _TOKEN.findall(t)
            grams = w + [f"{a} {b}" for a, b in itertools.pairwise(w)]
            tokens += grams
            counts.append(len(grams))
        new = list(dict.fromkeys([t for t in tokens if t not in cache]))  # (the few new ones made unique)
        if new:
            if len(cache) + len(new) > _HASH_CACHE_MAX:
                cache.clear()  # every token of this call is then new (one already cached was just dropped)
                new = list(dict.fromkeys(tokens))
            cache.update(zip(new, murmur3_32([t.encode("utf-8") for t in new]).tolist()))
        hashes = np.array(list(map(cache.__getitem__, tokens)), dtype=np.int64)
        return np.repeat(np.arange(len(texts)), counts), hashes

    def _chars(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(row, hash)`` of each character 3-5-gram of each text's words."""
        # The character n-grams of a text are those of each of its words (a window never crosses
        # a word's padding), so they are hashed once per distinct word and kept (most words recur).
        cache = self._char_hash
        split = [t.split() for t in texts]
        new = list(dict.fromkeys([w for words in split for w in words if w not in cache]))
        if new:
            if len(cache) + len(new) > _CHAR_CACHE_MAX:
                cache.clear()
                new = list(dict.fromkeys(w for words in split for w in words))
            if len(new) <= _GRAM_WORDS_MAX:
                self._chars_by_gram(new)
            else:
                rows, hashes = _char_hashes(new)
                order = np.argsort(rows, kind="stable")
                bounds = np.searchsorted(rows[order], np.arange(len(new) + 1))
                for k, w in enumerate(new):
                    cache[w] = hashes[order[bounds[k] : bounds[k + 1]]]
        parts = [cache[w] for words in split for w in words]
        hashes = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        # each n-gram's text: each word's row repeated by its n-gram count (no loop over a text's words)
        word_rows = np.repeat(np.arange(len(texts)), list(map(len, split)))
        return np.repeat(word_rows, list(map(len, parts))), hashes

    def _chars_by_gram(self, words: list[str]) -> None:
        """The character n-gram hashes of a few new words, through a cache of n-gram hashes: a new
        word (a task id, a number, a file name) is mostly made of n-grams already seen, so only the
        unseen ones are hashed (MurmurHash in Python costs ~3-5 us a key). The same hashes in the
        same order as :func:`_char_hashes` (the windows of scikit-learn's ``char_wb``)."""
        grams = self._gram_hash
        per_word = []
        for w in words:
            seg = " " + w + " "
            per_word.append([seg[i : i + k] for k in (3, 4, 5) for i in range(len(seg) - k + 1)])
        missing = list(dict.fromkeys(g for gs in per_word for g in gs if g not in grams))
        if missing:
            if len(grams) + len(missing) > _GRAM_CACHE_MAX:
                grams.clear()  # every n-gram of these words is then unseen
                missing = list(dict.fromkeys(g for gs in per_word for g in gs))
            grams.update(zip(missing, murmur3_32([g.encode("utf-8") for g in missing]).tolist()))
        for w, gs in zip(words, per_word):
            self._char_hash[w] = np.array([grams[g] for g in gs], dtype=np.int64)


_MERGED_BUCKETS_MAX = 16  # up to this many texts in a call, both families are bucketed in one pass
_CHAR_CACHE_MAX = 1 << 16  # distinct words whose character n-gram hashes are kept between calls
_GRAM_CACHE_MAX = 1 << 16  # character n-grams whose hash is kept between calls (~7 MB at most)
_GRAM_WORDS_MAX = 64  # up to this many new words in a call are hashed through the n-gram cache


def _char_hashes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(text of each n-gram, its hash)``: every window of 3, 4 and 5 characters inside each
    " word " (all texts at once, on UTF-8 bytes; a padded word shorter than a window has none)."""
    padded = []
    for t in texts:
        words = t.split()
        padded.append(" " + "  ".join(words) + " " if words else "")
    big = "".join(padded)
    if not big:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(texts) <= _PY_HASH_MAX_KEYS // 8 and len(big) <= 64:  # a word or two: plain Python
        out_rows: list[int] = []
        out_hashes: list[int] = []
        for r, t in enumerate(texts):
            for w in t.split():
                seg = " " + w + " "
                for k in (3, 4, 5):
                    for i in range(len(seg) - k + 1):
                        out_hashes.append(_murmur3_py(seg[i : i + k].encode("utf-8")))
                        out_rows.append(r)
        return np.array(out_rows, dtype=np.int64), np.array(out_hashes, dtype=np.int64)
    text_of = np.repeat(np.arange(len(texts)), [len(p) for p in padded])
    raw = big.encode("utf-8")
    buf = np.frombuffer(raw, dtype=np.uint8)
    if len(raw) == len(big):  # ASCII: one byte per character
        offsets = np.arange(len(big) + 1, dtype=np.int64)
        is_space = buf == 32
    else:
        cp = np.frombuffer(big.encode("utf-32-le"), dtype=np.uint32)
        width = 1 + (cp >= 0x80).astype(np.int64) + (cp >= 0x800) + (cp >= 0x10000)
        offsets = np.concatenate(([0], np.cumsum(width)))
        is_space = cp == 32
    pos = np.arange(len(big))
    # a padded word ends after a space that follows a non-space
    ends = np.nonzero(is_space & np.concatenate(([False], ~is_space[:-1])))[0] + 1
    word_end = ends[np.searchsorted(ends, pos, side="right")]
    rows, hashes = [], []
    for k in (3, 4, 5):
        starts = np.nonzero(pos + k <= word_end)[0]
        first = offsets[starts]
        nbytes = offsets[starts + k] - first
        for length in np.unique(nbytes):
            sel = nbytes == length
            hashes.append(murmur3_rows(buf[first[sel][:, None] + np.arange(length)]))
            rows.append(text_of[starts[sel]])
    return np.concatenate(rows), np.concatenate(hashes)
