"""How sure recall is that a hit is relevant experience: a calibrated confidence from
absolute evidence, and the gate that keeps prompts quiet when the store knows nothing.

A recall score ranks hits *within* one query (its keyword part is relative to the best
keyword hit, so the best hit always scores 1.0 on it); it cannot tell a store that knows
the task from one that has never met it. The confidence can. It reads evidence that does
not depend on the other hits:

* ``unseen``: the share of the query's words (stop words removed) that no memory in the
  store contains at all (a task about things the store has never met names them), times
  ``N / (N + 100)`` for a store of ``N`` memories: a store of a few memories cannot be expected
  to hold a related task's words (a stated rule; LoCoMo's stores hold 400 to 700 memories).
* ``best_keyword``: the best keyword hit's raw BM25 over the sum of the query words' IDF
  (words the store never saw count with the IDF of a word in no document): how much of the
  query's rare, salient vocabulary the best match holds, about 0 to 1.
* ``best_vector``: the best candidate's cosine similarity to the query.
* ``vector``: this hit's cosine similarity to the query.
* ``signature``: an exact task or error signature match (1.0), a task-signature prefix match
  (0.5), or none (0.0, or absent when no signature was asked).
* ``tags``: the Jaccard overlap of the hit's tags with the asked tags (absent when none asked).

``confidence = 1 - (1 - p_text) * (1 - w_sig * signature) * (1 - w_tags * tags)`` where
``p_text`` is a logistic function of the four text features. Its coefficients (:class:`ConfidenceWeights`)
were fit by ``benchmarks/gate.py`` on LoCoMo: each conversation's questions asked of its own
memories (related) and of other conversations' memories (unrelated), classes weighted equally,
so ``p_text`` is the probability that the store holds experience about the task at even prior
odds. The signature and tag terms are stated rules (no public data set here has signatures
or tags): an exact signature match, or the harness's own labels shared, is direct evidence
that the memory is about this task or error.

The gate (``Settings.confidence.inject_min``) is what ``on_task_start``, the MCP tools and the
REST ``/context`` path inject; ``recall(..., min_confidence=)`` applies any other floor.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .sqlite_backend import query_terms

if TYPE_CHECKING:  # pragma: no cover
    from .core import Core
    from .settings import ConfidenceWeights

__all__ = ["assess", "term_statistics", "text_confidence"]


def term_statistics(backend: Any, terms: list[str]) -> tuple[int, dict[str, int]]:
    """``(documents, {term: documents containing it})`` from the keyword index's vocabulary.

    A backend may provide ``term_frequencies(terms)``; SQLite's comes from the FTS5 vocabulary
    table (``memories_fts_vocab``, migration 0002), each term stemmed by the index's own tokenizer."""
    own = getattr(backend, "term_frequencies", None)
    if callable(own):  # SQLite and PostgreSQL both provide it (one read snapshot each)
        return own(terms)
    return 0, {}  # an engine without statistics: no word evidence


_SMALL_STORE = 100  # memories: below about this many, unseen words are weak evidence


def _idf(n_docs: int, df: int) -> float:
    """FTS5's BM25 IDF (floored as FTS5 floors it); a count above the store's size (statistics
    read while another process wrote) is taken as the size."""
    df = min(max(df, 0), n_docs)
    return max(1e-6, math.log((n_docs - df + 0.5) / (df + 0.5)))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


def text_confidence(evidence: dict[str, float], w: ConfidenceWeights) -> float:
    """``p_text``: the logistic function of the text features."""
    z = (
        w.intercept
        + w.unseen * evidence["unseen"]
        + w.best_keyword * evidence["best_keyword"]
        + w.best_vector * evidence["best_vector"]
        + w.vector * evidence["vector"]
    )
    return _sigmoid(z)


def assess(
    core: Core,
    text: str,
    keyword: dict[int, float],
    vector: dict[int, float],
    ids: list[int],
    signature: dict[int, float | None],
    tags: dict[int, float | None] | None = None,
) -> dict[int, tuple[float, dict[str, float]]]:
    """``{memory id: (confidence, evidence)}`` for the hits ``ids`` of one recall.

    ``keyword`` holds the raw BM25 of every keyword candidate, ``vector`` the cosine of every
    vector candidate (as recall computed them); ``signature`` and ``tags`` the signature match
    and tag overlap per hit (None: not asked)."""
    w = core.settings.confidence
    terms = query_terms(text)[:32]
    n_docs, df = term_statistics(core.backend, terms) if terms else (0, {})
    if df:
        idf_total = sum(_idf(n_docs, df[t]) for t in terms)
        unseen = sum(1 for t in terms if df[t] == 0) / len(terms) * n_docs / (n_docs + _SMALL_STORE)
    else:
        idf_total, unseen = 0.0, 0.0
    best_kw = max(keyword.values(), default=0.0) / idf_total if idf_total > 0 else 0.0
    best_vec = max(vector.values(), default=0.0)
    out = {}
    for mid in ids:
        ev = {
            "unseen": round(unseen, 4),
            "best_keyword": round(min(best_kw, 4.0), 4),
            "best_vector": round(max(best_vec, 0.0), 4),
            "vector": round(max(vector.get(mid, 0.0), 0.0), 4),
        }
        p_text = text_confidence(ev, w) if (terms or vector) else 0.0
        ev["text"] = round(p_text, 4)
        doubt = 1.0 - p_text
        sig = signature.get(mid)
        if sig is not None:
            ev["signature"] = round(sig, 4)
            doubt *= 1.0 - w.signature * sig
        tag = (tags or {}).get(mid)
        if tag is not None:
            ev["tags"] = round(tag, 4)
            doubt *= 1.0 - w.tags * tag
        p = 1.0 - doubt
        out[mid] = (round(p, 4), ev)
    return out
