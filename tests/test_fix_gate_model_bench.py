"""benchmarks/fix_gate_model.py's scoring: hand-made records with known answers (the library is not judged here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import fix_gate_model as gm  # noqa: E402
import fix_recall as fr  # noqa: E402


def case(i: int, repair_shape: str | None) -> fr.Case:
    return fr.Case(f"c{i}", "t", "err", "k", repair_shape, repair_shape, run_title=f"run{i}")


def records(n: int = 200):
    """Per failure one fix: feature 0 is 1 for a helpful fix and 0 for an unhelpful one (separable).
    Every fourth failure's repair was never taught (its fix is unhelpful); every fifth has no repair."""
    recs = []
    for i in range(n):
        if i % 5 == 4:
            recs.append((case(i, None), False, [([0.0, float(i % 3)], False)]))
        elif i % 4 == 3:
            recs.append((case(i, "x"), False, [([0.0, float(i % 3)], False)]))
        else:
            recs.append((case(i, "x"), True, [([1.0, float(i % 3)], True)]))
    return recs


@pytest.mark.parametrize("folds", [0, 5])
def test_without_a_gate_the_figures_are_the_evidence_ranking_s(folds):
    r = gm.evaluate(records(), None, folds)
    recs = records()
    pairs = [c for c, _, _ in recs if c.repair_shape is not None]
    hits = sum(rows[0][1] for c, _, rows in recs if c.repair_shape is not None)
    assert r["hit@3"] == r["hit@1"] == pytest.approx(hits / len(pairs))
    assert r["false unseen"] == 1.0 and r["false no repair"] == 1.0
    assert r["examples"] == len(recs) and r["helpful"] == hits


def test_a_gate_that_separates_keeps_the_hits_and_withholds_the_rest_once_trained():
    recs = records()
    r = gm.evaluate(recs, 0.5, 5)  # cross-fitted: every failure judged by a trained model
    assert r["hit@3"] == pytest.approx(gm.evaluate(recs, None, 5)["hit@3"])
    assert r["false unseen"] == 0.0 and r["false no repair"] == 0.0
    pre = gm.evaluate(recs, 0.5, 0)  # prequential: the first failures are answered before any model exists
    assert 0.0 < pre["false no repair"] < 0.2


def test_no_model_from_one_label_or_too_few_examples():
    assert gm._fit([[1.0]] * 100, [True] * 100) is None
    assert gm._fit([[1.0], [0.0]] * 10, [True, False] * 10) is None
    assert gm._fit([[1.0], [0.0]] * 20, [True, False] * 20) is not None
