"""The confidence formula as harness_memory/confidence.py documents it: a logistic function of the text
evidence, BM25 IDFs as FTS5 computes them, the unseen-word share scaled by the store's size, and the
signature and tag terms combined as independent doubts."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from harness_memory import Settings
from harness_memory.confidence import assess, term_statistics, text_confidence

W = Settings().confidence
NEUTRAL = {"unseen": 0.0, "best_keyword": 0.0, "best_vector": 0.0, "vector": 0.0}


class _Vocabulary:
    """A backend whose keyword index holds ``n_docs`` documents and the given document counts."""

    def __init__(self, n_docs: int, df: dict[str, int]):
        self.n_docs, self.df = n_docs, df
        self.asked: list[list[str]] = []

    def term_frequencies(self, terms):
        self.asked.append(list(terms))
        return self.n_docs, {t: self.df.get(t, 0) for t in terms}


def _core(n_docs: int, df: dict[str, int], **weights: float) -> SimpleNamespace:
    return SimpleNamespace(settings=Settings(confidence=weights), backend=_Vocabulary(n_docs, df))


def _bm25_idf(n: int, df: int) -> float:
    return max(1e-6, math.log((n - df + 0.5) / (df + 0.5)))


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


@pytest.mark.parametrize(
    "evidence",
    [
        NEUTRAL,
        {"unseen": 0.5, "best_keyword": 0.3, "best_vector": 0.4, "vector": 0.2},
        {"unseen": 0.0, "best_keyword": 1.0, "best_vector": 0.9, "vector": 0.9},
    ],
)
def test_text_confidence_is_the_logistic_of_the_weighted_evidence(evidence):
    z = (
        W.intercept
        + W.unseen * evidence["unseen"]
        + W.best_keyword * evidence["best_keyword"]
        + W.best_vector * evidence["best_vector"]
        + W.vector * evidence["vector"]
    )
    assert text_confidence(evidence, W) == pytest.approx(_logistic(z), rel=1e-12)


def test_text_confidence_moves_with_each_feature_in_the_direction_of_its_weight():
    base = text_confidence(NEUTRAL, W)
    assert base == pytest.approx(_logistic(W.intercept))
    for feature in ("best_keyword", "best_vector", "vector"):  # positive weights: more evidence, more sure
        assert text_confidence({**NEUTRAL, feature: 0.5}, W) > base
    assert text_confidence({**NEUTRAL, "unseen": 0.5}, W) < base  # words the store never met: less sure


def test_text_confidence_stays_within_zero_and_one_at_extreme_evidence():
    very_negative = Settings(confidence={"intercept": -1000.0}).confidence
    assert text_confidence(NEUTRAL, very_negative) == 0.0  # no overflow far below
    very_positive = Settings(confidence={"intercept": 1000.0}).confidence
    assert text_confidence(NEUTRAL, very_positive) == pytest.approx(1.0)
    at_zero = Settings(confidence={"intercept": 0.0}).confidence
    assert text_confidence(NEUTRAL, at_zero) == pytest.approx(0.5)


def test_best_keyword_is_the_raw_bm25_over_the_summed_idf_of_the_query_words():
    n = 1000
    df = {"zebra": 3, "quagga": 40, "okapi": 0}  # okapi: a word the store never saw
    core = _core(n, df)
    out = assess(core, "zebra quagga okapi", {1: 2.5, 2: 7.0}, {}, [1], {1: None})
    idf_total = sum(_bm25_idf(n, d) for d in df.values())
    ev = out[1][1]
    assert ev["best_keyword"] == pytest.approx(7.0 / idf_total, abs=1e-4)  # the best hit's score, not hit 1's
    assert core.backend.asked == [["zebra", "quagga", "okapi"]]


def test_a_document_count_above_the_store_size_is_taken_as_the_size():
    # read while another process wrote: df 50 in a store of 10 is df 10, whose IDF FTS5 floors
    n = 10
    out = assess(_core(n, {"zebra": 50, "quagga": 1}), "zebra quagga", {1: 1.0}, {}, [1], {1: None})
    idf_total = _bm25_idf(n, 10) + _bm25_idf(n, 1)
    assert _bm25_idf(n, 10) == 1e-6
    assert out[1][1]["best_keyword"] == pytest.approx(1.0 / idf_total, abs=1e-4)


def test_best_keyword_is_capped_at_four():
    out = assess(_core(1000, {"zebra": 999}), "zebra", {1: 1000.0}, {}, [1], {1: None})
    assert out[1][1]["best_keyword"] == 4.0


@pytest.mark.parametrize("n_docs", [1, 100, 10_000])
def test_unseen_is_the_share_of_words_never_seen_scaled_by_the_store_size(n_docs):
    df = {"zebra": 1, "quagga": 0, "okapi": 0, "tapir": 1}
    out = assess(_core(n_docs, df), "zebra quagga okapi tapir", {}, {}, [1], {1: None})
    assert out[1][1]["unseen"] == round(2 / 4 * n_docs / (n_docs + 100), 4)  # evidence is shown to 4 places


def test_a_bigger_store_makes_unseen_words_stronger_evidence_of_an_unknown_task():
    small = assess(_core(20, {}), "zebra quagga", {}, {}, [1], {1: None})[1]
    big = assess(_core(5000, {}), "zebra quagga", {}, {}, [1], {1: None})[1]
    assert big[1]["unseen"] > small[1]["unseen"]
    assert big[0] < small[0]


def test_vector_evidence_is_the_hits_own_cosine_and_the_best_candidates_clipped_at_zero():
    out = assess(_core(100, {"zebra": 5}), "zebra", {}, {1: 0.8, 2: -0.3, 3: 0.4}, [1, 2], {1: None, 2: None})
    assert out[1][1]["vector"] == 0.8 and out[1][1]["best_vector"] == 0.8
    assert out[2][1]["vector"] == 0.0 and out[2][1]["best_vector"] == 0.8
    assert out[1][0] > out[2][0]  # the closer hit is the surer one
    keyword_only = assess(_core(100, {"zebra": 5}), "zebra", {4: 2.0}, {1: 0.8}, [4], {4: None})
    assert keyword_only[4][1]["vector"] == 0.0  # a hit no vector candidate matched has no cosine evidence
    all_far = assess(_core(100, {"zebra": 5}), "zebra", {}, {1: -0.2, 2: -0.6}, [1], {1: None})
    assert all_far[1][1]["best_vector"] == 0.0


def test_signature_and_tags_are_independent_doubts_on_top_of_the_text():
    core = _core(100, {"zebra": 5})
    text_only = assess(core, "zebra", {}, {1: 0.5}, [1], {1: None})[1]
    p_text = text_only[1]["text"]
    assert text_only[0] == pytest.approx(p_text, abs=1e-4)
    assert "signature" not in text_only[1] and "tags" not in text_only[1]
    both = assess(core, "zebra", {}, {1: 0.5}, [1], {1: 0.5}, {1: 0.25})[1]
    expected = 1 - (1 - p_text) * (1 - W.signature * 0.5) * (1 - W.tags * 0.25)
    assert both[0] == pytest.approx(expected, abs=2e-4)
    assert both[1]["signature"] == 0.5 and both[1]["tags"] == 0.25
    exact = assess(core, "zebra", {}, {1: 0.5}, [1], {1: 1.0})[1]
    assert exact[0] >= W.signature  # an exact signature match lifts it to at least the weight
    no_tag_weight = assess(_core(100, {"zebra": 5}, tags=0.0), "zebra", {}, {1: 0.5}, [1], {1: None}, {1: 1.0})[1]
    assert no_tag_weight[0] == pytest.approx(p_text, abs=1e-4)


def test_no_words_and_no_vectors_is_no_confidence():
    core = _core(100, {})
    out = assess(core, "the and of", {}, {}, [1], {1: None})  # stop words only
    assert out[1][0] == 0.0 and out[1][1]["text"] == 0.0
    assert core.backend.asked == []  # no words: the statistics are not read


def test_a_backend_without_statistics_gives_no_word_evidence():
    assert term_statistics(object(), ["zebra"]) == (0, {})
    core = SimpleNamespace(settings=Settings(), backend=object())
    out = assess(core, "zebra", {1: 3.0}, {1: 0.6}, [1], {1: None})
    assert out[1][1]["unseen"] == 0.0 and out[1][1]["best_keyword"] == 0.0
    assert out[1][1]["vector"] == 0.6
