"""Test doubles for code that uses harness-memory (as httpx ships MockTransport).

- :class:`FakeEmbedder`: deterministic, tiny, no dependencies; equal texts give equal vectors.
- :class:`FailingEmbedder`: fails (raises, NaN, or wrong size) on demand, to test the pending path.
- :class:`ManualClock`: a clock you advance by hand, for TTL and recency tests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = ["FakeEmbedder", "FailingEmbedder", "ManualClock"]


class FakeEmbedder:
    """Bag-of-words hashed into ``dimensions`` buckets (sha1, so stable everywhere)."""

    def __init__(self, dimensions: int = 32, name: str | None = None):
        self.dimensions = dimensions
        self.name = name or f"fake:{dimensions}"
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                h = int.from_bytes(hashlib.sha1(w.encode()).digest()[:8], "little")
                out[i, h % self.dimensions] += 1.0 if (h >> 63) else -1.0
        return out


class FailingEmbedder(FakeEmbedder):
    """``mode``: 'raise', 'nan', 'inf', 'wrong_dims' or 'ok'; change ``mode`` at any time."""

    def __init__(self, dimensions: int = 32, mode: str = "raise", name: str | None = None):
        super().__init__(dimensions, name=name or f"fake:{dimensions}")
        self.mode = mode

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if self.mode == "raise":
            raise ConnectionError("embedding service unavailable")
        out = super().embed_batch(texts)
        if self.mode == "nan" and len(out):
            out[0, 0] = np.nan
        elif self.mode == "inf" and len(out):
            out[0, 0] = np.inf
        elif self.mode == "wrong_dims":
            out = np.zeros((len(texts), self.dimensions + 1), dtype=np.float32)
        return out


class ManualClock:
    def __init__(self, start: float = 1_767_225_600.0):  # 2026-01-01T00:00:00Z
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
