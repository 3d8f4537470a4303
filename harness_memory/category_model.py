"""A learned fallback for the category of a failure block the rules cannot name.

The rules of ``error_signatures.categorize`` read a decisive block's words and shape; on logs of tools
and vocabularies they were not written against they often answer ``unknown``. This module holds a small
linear model (multinomial logistic regression) over the block's words, word pairs and character n-grams,
trained on the hand-labelled CI corpus (``tests/fixtures/ci_logs``). It is consulted only where the rules
answer ``unknown`` (``categorize``), and only when it is confident enough (``MIN_PROBABILITY``): the
choice of both was made by leave-one-split-out measurement (docs/signatures.md, "The learned fallback").

The weights are plain data (``category_model.json.gz`` beside this file, gzip-compressed JSON: the
vocabulary with each feature's IDF and one coefficient per category), read lazily on first use; nothing is
unpickled and importing this module reads nothing. ``python benchmarks/category_model.py --write`` rebuilds the file from the corpus.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import ConfigurationError
from .regex_prefilter import lower_case_twin

__all__ = [
    "ENABLED",
    "FAILURE_WORDS",
    "is_boilerplate",
    "features",
    "block_text",
    "CategoryModel",
    "load",
    "predict",
    "MODEL_PATH",
    "MIN_PROBABILITY",
]

MODEL_PATH = Path(__file__).with_name("category_model.json.gz")  # gzip-compressed JSON (2.3 MB plain)
FORMAT = 1
# below this probability the model's answer is not used and the category stays ``unknown``
MIN_PROBABILITY = 0.3
# False: signing uses the rules alone (``benchmarks/ci_logs.py --no-model`` measures them so)
ENABLED = True
WORD_CACHE = 50_000  # words (and short messages) whose columns (answers) are remembered, then forgotten at once
MAX_CHARS = 4000  # of the block read: the decisive lines and their detail, never a whole log

# words of a failure in any tool's language; a block without one is not a failure the fallback names
FAILURE_WORDS = re.compile(
    r"(?i)error|fail|fatal|exception|panic|traceback|timed? ?out|denied|refused|not found|cannot|can't|could not|"
    r"couldn't|unable|killed|abort|fault|exhausted|invalid|missing|no such|undefined|unbound|expected|not allowed|"
    r"forbidden|unknown|bad |attempt to|violat|crash|died|terminat"
)
_FAILURE_LOWER = lower_case_twin(FAILURE_WORDS)


def has_failure_word(text: str) -> bool:
    """``FAILURE_WORDS.search(text) is not None``, ten times faster on ASCII text (a lower-case twin of the pattern)."""
    if _FAILURE_LOWER is not None and text.isascii():
        return _FAILURE_LOWER.search(text.lower()) is not None
    return FAILURE_WORDS.search(text) is not None


# The words of a CI runner's or a wrapper's exit and summary lines (``ERROR: Job failed: exit code 1``, ``BUILD
# FAILED in 3s``, ``##[error]Process completed with exit code 1.``, ``🚨 Error: The command exited with status 1``,
# ``Done. Your build exited with 1.``, ``Finished: FAILURE``, ``Step Run (Command Line) failed``): they say that a
# unit of work (a job, build, step, task, process, command) failed or exited, never what kind of failure it was. A
# line made of these words alone (with numbers, durations and punctuation) is no evidence of a category.
BOILERPLATE_WORDS = frozenset(
    """
    a an the this that it its your our with without in at on of for to by from as and or after while during
    see above below log logs output details more information please check
    error errors errored err fatal failed failure failures fail fails failing unsuccessful unsuccessfully
    exit exits exited exiting code codes status returned return returns nonzero non zero
    completed complete finished finish finishing ended end done
    job jobs build builds step steps stage stages task tasks process processes command commands script scripts
    shell bash sh pipeline pipelines workflow workflows run runs running action actions recipe target targets user
    program executable line lines marked was were has have had been is are be exception occurred problem
    """.split()
)
_FAILING = frozenset(
    "error errors errored err fatal failed failure failures fail fails failing unsuccessful unsuccessfully exit exits "
    "exited exiting nonzero exception problem".split()
)
_DURATION = re.compile(r"(?i)\b\d[\d.,:]*\s?(?:ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)\b|\d+")
_LETTERS = re.compile(r"[A-Za-z]+")
_UNIT_WORDS = frozenset("ms s sec secs second seconds m min mins minute minutes h hr hrs hour hours".split())


def is_boilerplate(text: str) -> bool:
    """Whether every line of ``text`` is made of ``BOILERPLATE_WORDS`` alone (numbers, durations and punctuation
    aside) and at least one line says something failed: a runner's exit or summary line, which names no
    category (its exit code may: 124 and 137 are read by the rules, never from these words)."""
    # A quick no first: the text's letter runs in order, up to the first one that is no boilerplate word. Masking the
    # durations only removes whole runs that are a unit (``3s``, ``5 min``: a unit starts right after a number and
    # ends at a word boundary) and splits none, so when that first run cannot be a unit the answer is no (most lines
    # of a log: ``Receiving block ...``); where it can, the full reading decides. (ASCII text only: ``(?i)`` lets a
    # unit's ``s`` be ``ſ``, which no letter run holds, so ``3ſec`` would remove the run ``ec``.)
    if not text.isascii():
        return _boilerplate_reading(text)
    for line in text[:MAX_CHARS].split("\n"):
        for m in _LETTERS.finditer(line):
            word = m.group().lower()
            if word not in BOILERPLATE_WORDS:
                if word not in _UNIT_WORDS:
                    return False
                break
        else:
            continue
        break
    return _boilerplate_reading(text)


def _boilerplate_reading(text: str) -> bool:
    """``is_boilerplate`` without its quick no: every line read with its durations masked."""
    said = False
    for line in text[:MAX_CHARS].split("\n"):
        for m in _LETTERS.finditer(_DURATION.sub(" ", line)):
            word = m.group().lower()
            if word not in BOILERPLATE_WORDS:
                return False
            said = said or word in _FAILING
    return said


_ANSI = re.compile(r"\x1b\[[0-?]{0,40}[ -/]{0,10}[@-~]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z]{2,30}")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")


def block_text(message: str, block: str = "", detail: str = "", exception: str | None = None) -> str:
    """The text the model reads: the decisive line, its block and detail, and the exception's name."""
    parts = [exception or "", message]
    if block and block != message:
        parts.append(block)
    if detail:
        parts.append(detail)
    return "\n".join(parts)[:MAX_CHARS]


def _words(text: str) -> list[str]:
    """The text's words (runs of two or more letters: numbers are never features): ANSI codes and hex numbers
    dropped, camelCase split, lower-cased."""
    text = _ANSI.sub("", text[:MAX_CHARS])
    return _WORD.findall(_CAMEL.sub(" ", _HEX.sub(" ", text)).lower())


def _word_keys(word: str) -> list[str]:
    """A word's own features: the word and its character 3-5-grams (padded with a space at each end)."""
    padded = f" {word} "
    return ["w:" + word] + ["c:" + padded[i : i + n] for n in (3, 4, 5) for i in range(len(padded) - n + 1)]


def features(text: str) -> dict[str, float]:
    """Counts of the text's words (camelCase split, lower-cased), adjacent word pairs and the character
    3-5-grams inside words: ``{"w:refused": 1, "b:connection refused": 1, "c:efu": 1, ...}``."""
    counts: dict[str, float] = {}
    words = _words(text)
    for w in words:
        for key in _word_keys(w):
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
    _word_columns: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)
    _matrix: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)
    _answers: dict[tuple[str, ...], tuple[str, float]] = field(default_factory=dict, compare=False, repr=False)

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

    def _columns(self, word: str) -> tuple[int, ...]:
        """The model's columns of a word's own features, cached per word (bounded): signing many short
        messages meets the same words again and again."""
        cols = self._word_columns.get(word)
        if cols is None:
            if len(self._word_columns) >= WORD_CACHE:
                self._word_columns.clear()
            vocab = self.vocabulary
            cols = tuple(vocab[k] for k in _word_keys(word) if k in vocab)
            self._word_columns[word] = cols
        return cols

    def vector(self, text: str) -> dict[int, float]:
        """The text's TF-IDF vector (sublinear counts, L2-normalised) over the model's vocabulary: the same
        as ``features(text)`` looked up in it."""
        return self._vector_of(_words(text))

    def _vector_of(self, words: list[str]) -> dict[int, float]:
        counts: dict[int, float] = {}
        for w in words:
            for col in self._columns(w):
                counts[col] = counts.get(col, 0.0) + 1.0
        for a, b in zip(words, words[1:], strict=False):
            pair = self.vocabulary.get(f"b:{a} {b}")
            if pair is not None:
                counts[pair] = counts.get(pair, 0.0) + 1.0
        vec = {col: (1.0 + math.log(n)) * self.idf[col] for col, n in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {c: v / norm for c, v in vec.items()} if norm else {}

    def _scores(self, vec: dict[int, float]) -> list[float]:
        if not self._matrix:  # the coefficients column by column (features x categories), made on first use
            self._matrix.append(np.asarray(self.coef, dtype=np.float64).T.copy())
        matrix = self._matrix[0]
        cols = np.fromiter(vec.keys(), dtype=np.intp, count=len(vec))
        vals = np.fromiter(vec.values(), dtype=np.float64, count=len(vec))
        return (vals @ matrix[cols] + np.asarray(self.intercept)).tolist()

    def _softmax(self, scores: list[float]) -> dict[str, float]:
        top = max(scores)
        exp = [math.exp(s - top) for s in scores]
        total = sum(exp)
        return {cat: e / total for cat, e in zip(self.classes, exp, strict=True)}

    def probabilities(self, text: str) -> dict[str, float]:
        return self._softmax(self._scores(self.vector(text)))

    def predict(self, text: str) -> tuple[str, float]:
        """The most probable category of ``text`` and its probability (``unknown``, 0.0 for a text with none of
        the model's features)."""
        words = _words(text)
        # a short message's words (numbers are not words) are often met again: its answer is cached
        key = tuple(words) if len(words) <= 64 else None
        if key is not None:
            got = self._answers.get(key)
            if got is not None:
                return got
        vec = self._vector_of(words)
        if not vec:
            answer = ("unknown", 0.0)
        else:
            probs = self._softmax(self._scores(vec))
            best = max(probs, key=probs.__getitem__)
            answer = (best, probs[best])
        if key is not None:
            if len(self._answers) >= WORD_CACHE:
                self._answers.clear()
            self._answers[key] = answer
        return answer


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
                    raw = path.read_bytes()
                    data = json.loads((gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8"))
                except (OSError, EOFError, ValueError) as exc:
                    raise ConfigurationError(f"category model {path}: {exc}") from exc
                model = CategoryModel.from_json(data)
                _loaded[path] = model
    return model


def predict(text: str, model: CategoryModel | None = None) -> str:
    """The model's category for a block, or ``unknown`` below ``MIN_PROBABILITY``, for a text that has no
    failure word at all (``FAILURE_WORDS``: most lines of an application's log, which the rules also leave
    ``unknown``, are not failures, and the model is not asked about them) and for a runner's generic exit or
    summary lines alone (``is_boilerplate``)."""
    if not has_failure_word(text[:MAX_CHARS]) or is_boilerplate(text):
        return "unknown"  # (a runner's exit line is a failure word without a category: ``is_boilerplate``)
    model = model if model is not None else load()
    cat, prob = model.predict(text)
    return cat if prob >= MIN_PROBABILITY else "unknown"
