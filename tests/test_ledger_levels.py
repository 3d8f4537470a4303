"""The technique selector reads every level of evidence and explores as documented (docs/signatures.md,
harness_memory/ledger.py): signature-level evidence beats category-level evidence, the category
lends strength to an unseen signature, the pooled rate is the prior of a technique with no record,
UCB is the posterior mean plus ucb_c posterior standard deviations (so it prefers the uncertain arm),
Thompson sampling is a reproducible posterior draw, cost divides the value, and a data-backed choice
does not escalate."""

from __future__ import annotations

import math

import pytest

from harness_memory import MemoryStore, Settings

MODULE = "ModuleNotFoundError: No module named 'tenacity'"
IMPORT = "ImportError: cannot import name 'Retry' from 'urllib3'"  # the same category, another signature
REFUSED = "ConnectionRefusedError: [Errno 111] Connection refused"  # another category

_task = iter(range(10**6))


def record(store, technique, error, successes, failures):
    for ok in [True] * successes + [False] * failures:
        store.record_outcome(f"hist-{next(_task)}", technique, ok, error=error)


def by_name(decision):
    return {e.technique: e for e in decision.candidates}


def beta_sd(a, b):
    return math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))


@pytest.fixture
def ucb_store(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["alpha", "beta", "gamma"])) as s:
        yield s


def test_the_ledger_counts_each_outcome_at_the_signature_category_and_global_level(ucb_store):
    s = ucb_store
    record(s, "alpha", MODULE, 3, 1)
    record(s, "alpha", IMPORT, 0, 2)
    record(s, "alpha", None, 1, 0)  # no error: only the global level
    sig_m, sig_i = s.error_signature(MODULE), s.error_signature(IMPORT)
    assert sig_m.category == sig_i.category and sig_m.id != sig_i.id
    ev = by_name(s.select_technique("new", MODULE))["alpha"].evidence
    assert ev == {"signature": (3, 1), "category": (3, 3), "global": (4, 3)}
    ev = by_name(s.select_technique("new", IMPORT))["alpha"].evidence
    assert ev == {"signature": (0, 2), "category": (3, 3), "global": (4, 3)}
    rows = {r["level"]: r for r in s.technique_stats(level="signature", error_key=sig_m.id)}
    assert rows["signature"]["successes"] == 3 and rows["signature"]["failures"] == 1
    assert rows["signature"]["attempts"] == 4 and rows["signature"]["success_rate"] == pytest.approx(0.75)
    (cat,) = s.technique_stats(level="category", error_key=sig_m.category)
    assert (cat["successes"], cat["failures"], cat["attempts"]) == (3, 3, 6)
    assert cat["success_rate"] == pytest.approx(0.5)
    (glob,) = s.technique_stats(level="global")
    assert (glob["successes"], glob["failures"], glob["attempts"]) == (4, 3, 7)


def test_the_ledger_keeps_examples_and_last_times_per_outcome(ucb_store, clock):
    s = ucb_store
    s.record_outcome("T-ok", "alpha", True, error=MODULE, agent_type="coder", task_category="build")
    first_success = clock()
    clock.advance(60)
    s.record_outcome("T-bad", "alpha", False, error=MODULE, agent_type="reviewer", task_category="build")
    (row,) = s.technique_stats(level="signature", error_key=s.error_signature(MODULE).id)
    assert row["example_successes"] == ["T-ok"] and row["example_failures"] == ["T-bad"]
    assert row["agent_types"] == ["coder", "reviewer"] and row["task_categories"] == ["build"]
    assert row["last_success"] == pytest.approx(first_success)
    assert row["last_failure"] == pytest.approx(first_success + 60)
    assert row["first_used"] == pytest.approx(first_success) and row["last_used"] == pytest.approx(first_success + 60)


def test_signature_level_evidence_beats_category_level_evidence(ucb_store):
    s = ucb_store
    # within one category, alpha fixes the first error and beta the second: the category alone cannot tell
    record(s, "alpha", MODULE, 6, 0)
    record(s, "beta", MODULE, 0, 6)
    record(s, "beta", IMPORT, 6, 0)
    record(s, "alpha", IMPORT, 0, 6)
    d1 = s.select_technique("T-1", MODULE, techniques=["beta", "alpha"])
    d2 = s.select_technique("T-2", IMPORT, techniques=["alpha", "beta"])
    assert (d1.technique, d2.technique) == ("alpha", "beta")
    assert not d1.escalate and not d2.escalate
    est = by_name(d1)
    assert est["alpha"].mean > 0.7 > 0.3 > est["beta"].mean
    assert "signature 6/6" in d1.reason


def test_category_evidence_is_lent_to_a_signature_never_seen(ucb_store):
    s = ucb_store
    record(s, "beta", MODULE, 5, 0)  # beta fixes import errors ...
    record(s, "alpha", REFUSED, 5, 0)  # ... and alpha fixes network errors
    d = s.select_technique("T-1", IMPORT)  # an import error never recorded
    assert d.technique == "beta" and not d.escalate
    est = by_name(d)
    assert est["beta"].evidence["signature"] == (0, 0) and est["beta"].evidence["category"] == (5, 0)
    assert est["beta"].mean > est["alpha"].mean
    d = s.select_technique("T-2", "ConnectionRefusedError: [Errno 111] Connection refused by 10.0.0.7")
    assert d.technique == "alpha"


def test_more_evidence_at_the_same_rate_moves_the_estimate_further_from_the_prior(ucb_store):
    s = ucb_store
    record(s, "alpha", MODULE, 2, 0)
    record(s, "beta", MODULE, 20, 0)
    record(s, "gamma", REFUSED, 0, 10)  # pulls the pooled prior down
    est = by_name(s.select_technique("T", MODULE))
    assert est["beta"].mean > est["alpha"].mean > est["gamma"].mean
    assert est["beta"].alpha > est["alpha"].alpha


def test_a_technique_without_a_record_starts_at_the_pooled_success_rate(ucb_store):
    s = ucb_store
    record(s, "alpha", MODULE, 5, 1)
    record(s, "beta", REFUSED, 1, 3)
    root = (5 + 1 + 1) / (10 + 2)  # every technique's outcomes pooled, plus one of each
    est = by_name(s.select_technique("T", MODULE))
    assert est["gamma"].mean == pytest.approx(root)
    assert est["gamma"].alpha + est["gamma"].beta == pytest.approx(s.settings.prior_strength)
    assert est["gamma"].evidence == {"global": (0, 0), "category": (0, 0), "signature": (0, 0)}


def test_each_level_lends_prior_strength_pseudo_observations_to_the_next(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["alpha", "beta"], prior_strength=2.0)) as s:
        record(s, "alpha", MODULE, 3, 1)
        record(s, "beta", REFUSED, 0, 4)
        est = by_name(s.select_technique("T", MODULE))["alpha"]
        k, root = 2.0, (3 + 1) / (8 + 2)
        a, b = k * root + 3, k * (1 - root) + 1  # global
        for succ, fail in ((3, 1), (3, 1)):  # category, then signature
            m = a / (a + b)
            a, b = k * m + succ, k * (1 - m) + fail
        assert (est.alpha, est.beta) == (pytest.approx(a), pytest.approx(b))
        assert est.mean == pytest.approx(a / (a + b))


def test_ucb_is_the_posterior_mean_plus_ucb_c_standard_deviations(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["alpha", "beta"], ucb_c=0.5)) as s:
        record(s, "alpha", MODULE, 1, 1)
        record(s, "beta", MODULE, 12, 12)
        d = s.select_technique("T", MODULE)
        for e in d.candidates:
            assert e.draw == pytest.approx(e.mean + 0.5 * beta_sd(e.alpha, e.beta))
            assert e.value == pytest.approx(e.draw / e.cost)
        assert "upper bound" in d.reason


def test_ucb_picks_the_uncertain_arm_when_the_means_are_equal(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["certain", "uncertain"], ucb_c=1.0)) as s:
        record(s, "certain", MODULE, 30, 30)
        record(s, "uncertain", MODULE, 1, 1)
        d = s.select_technique("T", MODULE)
        est = by_name(d)
        assert est["certain"].mean == pytest.approx(0.5, abs=0.01)
        assert est["uncertain"].mean == pytest.approx(0.5, abs=0.01)
        assert d.technique == "uncertain"  # although it comes second on the ladder
        assert est["uncertain"].draw > est["certain"].draw


def test_ucb_with_no_bonus_is_greedy_on_the_mean(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["uncertain", "certain"], ucb_c=0.0)) as s:
        record(s, "certain", MODULE, 40, 20)
        record(s, "uncertain", MODULE, 1, 1)
        d = s.select_technique("T", MODULE)
        assert d.technique == "certain"
        assert all(e.draw == pytest.approx(e.mean) for e in d.candidates)


def test_ucb_never_exceeds_one(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["alpha"], ucb_c=50.0)) as s:
        record(s, "alpha", MODULE, 3, 0)
        (e,) = s.select_technique("T", MODULE).candidates
        assert e.draw == 1.0 and e.mean < 1.0


def test_thompson_sampling_draws_from_the_posterior_and_is_reproducible_with_a_seed(db, clock):
    with MemoryStore(
        db, clock=clock, settings=Settings(techniques=["good", "bad", "new"], exploration="thompson")
    ) as s:
        record(s, "good", MODULE, 25, 0)
        record(s, "bad", MODULE, 0, 25)
        decisions = [s.select_technique("T", MODULE, seed=seed) for seed in range(40)]
        assert all(d.technique == "good" and not d.escalate for d in decisions)
        assert "sampled" in decisions[0].reason
        again = s.select_technique("T", MODULE, seed=7)
        assert [e.draw for e in again.candidates] == [e.draw for e in decisions[7].candidates]
        draws = [by_name(d)["new"].draw for d in decisions]
        assert len(set(draws)) == len(draws)  # a draw, not the mean
        assert all(0.0 < x < 1.0 for x in draws)
        assert min(draws) < by_name(decisions[0])["new"].mean < max(draws)


def test_thompson_sampling_explores_between_close_arms(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["alpha", "beta"], exploration="thompson")) as s:
        record(s, "alpha", MODULE, 3, 2)
        record(s, "beta", MODULE, 2, 3)
        picks = {s.select_technique("T", MODULE, seed=seed).technique for seed in range(60)}
        assert picks == {"alpha", "beta"}


def test_cost_divides_the_value(db, clock):
    cfg = Settings(techniques=["dear", "cheap"], technique_costs={"dear": 3.0}, ucb_c=0.0)
    with MemoryStore(db, clock=clock, settings=cfg) as s:
        record(s, "dear", MODULE, 8, 2)
        record(s, "cheap", MODULE, 5, 5)
        d = s.select_technique("T", MODULE)
        est = by_name(d)
        assert est["dear"].mean > est["cheap"].mean
        assert est["dear"].cost == 3.0 and est["cheap"].cost == 1.0
        assert est["dear"].value == pytest.approx(est["dear"].draw / 3.0)
        assert d.technique == "cheap"
        assert "cost 1" in d.reason


def test_a_tried_technique_is_never_chosen_again_even_when_it_has_the_best_record(ucb_store):
    s = ucb_store
    record(s, "alpha", MODULE, 10, 0)
    s.record_outcome("T", "alpha", False, error=MODULE)
    d = s.select_technique("T", MODULE)
    assert d.technique != "alpha" and d.tried == ["alpha"]
    assert "alpha" not in by_name(d)


def test_escalates_at_the_retry_limit_and_when_every_technique_was_tried(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(techniques=["a", "b", "c"], max_retries=2)) as s:
        s.record_outcome("T", "a", False, error=MODULE)
        d = s.select_technique("T", MODULE)
        assert not d.escalate and d.technique in ("b", "c")
        s.record_outcome("T", "b", False, error=MODULE)
        d = s.select_technique("T", MODULE)
        assert d.escalate and d.technique == "escalate" and "retry limit (2" in d.reason
        d = s.select_technique("U", MODULE, techniques=["a"])
        assert not d.escalate
        s.record_outcome("U", "a", False, error=MODULE)
        d = s.select_technique("U", MODULE, techniques=["a", "escalate"])
        assert d.escalate and "every technique was tried" in d.reason


def test_escalates_when_no_estimate_clears_the_floor_and_not_otherwise(db, clock):
    cfg = Settings(techniques=["a", "b"], success_floor=0.3)
    with MemoryStore(db, clock=clock, settings=cfg) as s:
        record(s, "a", MODULE, 0, 15)
        record(s, "b", MODULE, 0, 15)
        d = s.select_technique("T", MODULE)
        assert d.escalate and d.technique == "escalate" and "clears the floor" in d.reason
        assert max(e.mean for e in d.candidates) < 0.3
        record(s, "b", MODULE, 20, 0)
        d = s.select_technique("T", MODULE)
        assert d.technique == "b" and not d.escalate


def test_no_outcomes_yet_takes_the_next_rung_of_the_ladder(ucb_store):
    d = ucb_store.select_technique("T", MODULE, techniques=["gamma", "alpha"])
    assert d.technique == "gamma" and not d.escalate and "no outcomes" in d.reason
    ucb_store.record_outcome("T", "gamma", False, error=MODULE)
    d = ucb_store.select_technique("T", MODULE, techniques=["gamma", "alpha"])
    assert d.technique == "alpha"


def test_the_task_history_keeps_each_attempt_with_its_error_agent_and_notes(ucb_store, clock):
    s = ucb_store
    s.record_outcome("T", "alpha", False, error=MODULE, agent_id="coder", notes="retried with a smaller prompt")
    clock.advance(5)
    s.record_outcome("T", "beta", True, error=MODULE, agent_id="coder")
    first, second = s.task_attempts("T")
    sig = s.error_signature(MODULE)
    assert (first.technique, first.result, first.notes) == ("alpha", "failed", "retried with a smaller prompt")
    assert (first.error_signature, first.error_category, first.agent_id) == (sig.id, sig.category, "coder")
    assert (second.technique, second.result, second.notes) == ("beta", "fixed", None)
    assert first.task_id == second.task_id == "T" and first.id < second.id
    assert second.attempted_at == pytest.approx(first.attempted_at + 5)


def test_the_ledger_keeps_the_last_ten_examples_and_fifty_agent_types(ucb_store):
    s = ucb_store
    for i in range(12):
        s.record_outcome(f"ok-{i}", "alpha", True, error=MODULE)
    for i in range(51):
        s.record_outcome(f"bad-{i}", "alpha", False, error=MODULE, agent_type=f"type-{i}")
    (row,) = s.technique_stats(level="global")
    assert row["example_successes"] == [f"ok-{i}" for i in range(2, 12)]
    assert row["example_failures"] == [f"bad-{i}" for i in range(41, 51)]
    assert row["agent_types"] == [f"type-{i}" for i in range(1, 51)]


def test_without_an_error_only_the_overall_record_counts(ucb_store):
    s = ucb_store
    record(s, "alpha", None, 3, 1)
    d = s.select_technique("T", techniques=["escalate", "beta", "alpha"])
    est = by_name(d)
    assert "escalate" not in est and d.technique in ("alpha", "beta") and not d.escalate
    assert est["alpha"].evidence == {"global": (3, 1), "category": (0, 0), "signature": (0, 0)}
    k, root = s.settings.prior_strength, (3 + 1) / (4 + 2)
    a, b = k * root + 3, k * (1 - root) + 1
    for _ in range(2):  # two empty levels each re-centre on the level above without new counts
        m = a / (a + b)
        a, b = k * m, k * (1 - m)
    assert est["alpha"].mean == pytest.approx(a / (a + b))


def test_decomposed_counts_as_a_success_and_escalated_is_not_counted(ucb_store):
    s = ucb_store
    s.record_outcome("T", "alpha", True, error=MODULE, result="decomposed")
    s.record_outcome("T", "escalate", False, error=MODULE, result="escalated")
    (row,) = s.technique_stats(level="global")
    assert row["technique"] == "alpha" and row["successes"] == 1 and row["failures"] == 0
    assert [a.result for a in s.task_attempts("T")] == ["decomposed", "escalated"]
