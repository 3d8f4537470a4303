"""A learned fallback for the category of a failure block the rules cannot name.

The rules of ``error_signatures.categorize`` read a decisive block's words and shape; on logs of tools
and vocabularies they were not written against they often answer ``unknown``. This module holds a small
linear model (multinomial logistic regression) over the block's words, word pairs and character n-grams,
trained on the hand-labelled CI corpus (``tests/fixtures/ci_logs``). It is consulted only where the rules
answer ``unknown`` (``categorize``), and only when it is confident enough (``MIN_PROBABILITY``): the
choice of both was made by leave-one-split-out measurement (docs/signatures.md, "The learned fallback").

The weights are plain data (``category_model.json`` beside this file: the vocabulary with each feature's
IDF and one coefficient per category), read lazily on first use; nothing is unpickled and importing this
module reads nothing. ``python benchmarks/category_model.py --write`` rebuilds the file from the corpus.
"""

from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigurationError

__all__ = ["ENABLED", "features", "block_text", "CategoryModel", "load", "predict", "MODEL_PATH", "MIN_PROBABILITY"]

MODEL_PATH = Path(__file__).with_name("category_model.json")
FORMAT = 1
# below this probability the model's answer is not used and the category stays ``unknown``
MIN_PROBABILITY = 0.3
# False: signing uses the rules alone (``benchmarks/ci_logs.py --no-model`` measures them so)
ENABLED = True
MAX_CHARS = 4000  # of the block read: the decisive lines and their detail, never a whole log

_ANSI = re.compile(r"\x1b\[[0-?]{0,40}[ -/]{0,10}[@-~]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z]{2,30}")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_DIGITS = re.compile(r"\d+")


def block_text(message: str, block: str = "", detail: str = "", exception: str | None = None) -> str:
    """The text the model reads: the decisive line, its block and detail, and the exception's name."""
    parts = [exception or "", message]
    if block and block != message:
        parts.append(block)
    if detail:
        parts.append(detail)
    return "\n".join(parts)[:MAX_CHARS]


def features(text: str) -> dict[str, float]:
    """Counts of the text's words (camelCase split, lower-cased), adjacent word pairs and the character
    3-5-grams inside words, digits masked: ``{"w:refused": 1, "b:connection refused": 1, "c:efu": 1, ...}``."""
    text = _ANSI.sub("", text[:MAX_CHARS])
    text = _CAMEL.sub(" ", _HEX.sub(" ", text)).lower()
    text = _DIGITS.sub("0", text)
    counts: dict[str, float] = {}
    words = _WORD.findall(text)
    for w in words:
        key = "w:" + w
        counts[key] = counts.get(key, 0.0) + 1.0
        padded = f" {w} "
        for n in (3, 4, 5):
            for i in range(len(padded) - n + 1):
                key = "c:" + padded[i : i + n]
                counts[key] = counts.get(key, 0.0) + 1.0
    for a, b in zip(words, words[1:], strict=False):
        key = f"b:{a} {b}"
        counts[key] = counts.get(key, 0.0) + 1.0
    return counts


@dataclass(frozen=True)
class CategoryModel:
    """Weights of a linear model: ``vocabulary`` maps a feature to its column, ``idf`` and ``coef`` (one row per
    category, one value per column) and ``intercept`` (one per category) as trained."""

    classes: tuple[str, ...]
    vocabulary: dict[str, int]
    idf: list[float]
    coef: list[list[float]]
    intercept: list[float]

    @classmethod
    def from_json(cls, data: dict) -> CategoryModel:
        """The model of a ``to_json`` document; ``ConfigurationError`` for any other document."""
        try:
            return cls._from_json(data)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            if isinstance(exc, ConfigurationError):
                raise
            raise ConfigurationError(f"category model: not a model document ({exc!r})") from exc

    @classmethod
    def _from_json(cls, data: dict) -> CategoryModel:
        if data.get("format") != FORMAT:
            raise ConfigurationError(f"category model format {data.get('format')!r}, expected {FORMAT}")
        features = data["features"]
        classes = tuple(data["classes"])
        coef = data["coef"]
        if len(coef) != len(classes) or any(len(row) != len(features) for row in coef):
            raise ConfigurationError("category model: coef does not match classes x features")
        if len(data["idf"]) != len(features) or len(data["intercept"]) != len(classes):
            raise ConfigurationError("category model: idf or intercept of the wrong length")
        return cls(
            classes=classes,
            vocabulary={f: i for i, f in enumerate(features)},
            idf=[float(x) for x in data["idf"]],
            coef=[[float(x) for x in row] for row in coef],
            intercept=[float(x) for x in data["intercept"]],
        )

    def to_json(self) -> dict:
        feats = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        return {
            "format": FORMAT,
            "classes": list(self.classes),
            "features": feats,
            "idf": [round(x, 5) for x in self.idf],
            "coef": [[round(x, 5) for x in row] for row in self.coef],
            "intercept": [round(x, 5) for x in self.intercept],
        }

    def vector(self, text: str) -> dict[int, float]:
        """The text's TF-IDF vector (sublinear counts, L2-normalised) over the model's vocabulary."""
        vec: dict[int, float] = {}
        for feat, count in features(text).items():
            col = self.vocabulary.get(feat)
            if col is not None:
                vec[col] = (1.0 + math.log(count)) * self.idf[col]
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {c: v / norm for c, v in vec.items()} if norm else {}

    def probabilities(self, text: str) -> dict[str, float]:
        vec = self.vector(text)
        scores = [b + sum(row[c] * v for c, v in vec.items()) for row, b in zip(self.coef, self.intercept, strict=True)]
        top = max(scores)
        exp = [math.exp(s - top) for s in scores]
        total = sum(exp)
        return {cat: e / total for cat, e in zip(self.classes, exp, strict=True)}

    def predict(self, text: str) -> tuple[str, float]:
        """The most probable category of ``text`` and its probability (``unknown``, 0.0 for a text with none of
        the model's features)."""
        if not self.vector(text):
            return "unknown", 0.0
        probs = self.probabilities(text)
        best = max(probs, key=probs.__getitem__)
        return best, probs[best]


_lock = threading.Lock()
_loaded: dict[Path, CategoryModel] = {}


def load(path: Path = MODEL_PATH) -> CategoryModel:
    """The model stored at ``path``, read once per process (thread-safe); ``ConfigurationError`` when the file
    cannot be read or does not hold a model of this format."""
    model = _loaded.get(path)
    if model is None:
        with _lock:
            model = _loaded.get(path)
            if model is None:
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise ConfigurationError(f"category model {path}: {exc}") from exc
                model = CategoryModel.from_json(data)
                _loaded[path] = model
    return model


def predict(text: str, model: CategoryModel | None = None) -> str:
    """The model's category for a block, or ``unknown`` below ``MIN_PROBABILITY``."""
    model = model if model is not None else load()
    cat, prob = model.predict(text)
    return cat if prob >= MIN_PROBABILITY else "unknown"
