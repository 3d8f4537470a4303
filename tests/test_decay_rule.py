"""Decay follows one rule whatever happens in between (issue 17): with any interleaving of
time passing, decay runs, pin/unpin, keyed updates and recalls, a memory's
relevance equals the rule computed in closed form:

- between events, unpinned: r <- max(floor, r * (1 - rate) ** days) (unchanged at or below floor);
- pinned: no decay; pin and unpin take the decayed value first and restart the clock;
- an access (recall, duplicate write): decayed value first, then + recall_boost (at most 1);
- a keyed update: 1.0, clock restarted.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings, strategies as st

from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings
from harness_memory.testing import ManualClock

DAY = 86400.0
RATE, FLOOR, BOOST = 0.01, 0.1, 0.02

events = st.lists(
    st.one_of(
        st.tuples(st.just("wait"), st.floats(0.0, 400.0)),
        st.tuples(st.sampled_from(["decay", "pin", "unpin", "update", "recall"]), st.just(0.0)),
    ),
    min_size=1,
    max_size=14,
)


class Rule:
    def __init__(self) -> None:
        self.r, self.t0, self.pinned, self.t = 1.0, 0.0, False, 0.0

    def current(self) -> float:
        if self.pinned or self.r <= FLOOR:
            return self.r
        return max(FLOOR, self.r * (1 - RATE) ** ((self.t - self.t0) / DAY))

    def event(self, kind: str) -> None:
        if kind == "update":
            self.r = 1.0
        elif kind in ("recall", "duplicate"):
            self.r = min(1.0, self.current() + BOOST)
        elif kind == "decay" and self.pinned:
            return  # the job leaves pinned memories alone
        else:
            self.r = self.current()
        if kind in ("pin", "unpin"):
            self.pinned = kind == "pin"
        self.t0 = self.t


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seq=events)
def test_decay_equals_the_closed_form_rule_under_any_interleaving(tmp_path_factory, seq):
    clock = ManualClock()
    st_ = Settings(
        recall_boost=BOOST,
        maintenance=MaintenanceSettings(
            decay_rate_per_day=RATE, decay_floor=FLOOR, decay_exempt_types=[], archive_after_days=1e6
        ),
    )
    path = tmp_path_factory.mktemp("rule") / "r.db"
    rule = Rule()
    text = "the nightly deploy of the billing service needs the migration lock released first"
    with MemoryStore(path, settings=st_, clock=clock) as s:
        mid = s.remember(text, type="success", agent_id="a", key="deploy").id
        start, now_text, n = clock.now, text, 0
        for kind, days in seq:
            if kind == "wait":
                clock.advance(days * DAY)
                rule.t = clock.now - start
                continue
            if kind == "decay":
                s.run_job("decay")
            elif kind in ("pin", "unpin"):
                s.pin(mid, kind == "pin")
            elif kind == "update":
                n += 1
                now_text = f"{text} (version {n})"
                s.remember(now_text, type="success", agent_id="a", key="deploy")
            elif kind == "recall":
                assert [h.memory.id for h in s.recall(now_text, agent_id="a")] == [mid]
            rule.event(kind)
        s.pin(mid, False)  # read the value through one more event: decayed to now, clock restarted
        rule.event("unpin")
        got = s.get(mid).relevance_score
    assert math.isclose(got, rule.r, rel_tol=1e-9, abs_tol=1e-12), (seq, got, rule.r)


def test_the_issue_cases(tmp_path):
    """Pinned 200 days then unpinned and decayed a day later: 0.99, not archived; a keyed
    update at day 200 restarts from 1.0; a recall or a duplicate write at day 100 keeps its boost."""
    clock = ManualClock()
    keep = Settings(maintenance=MaintenanceSettings(archive_after_days=1000))
    with MemoryStore(tmp_path / "c.db", settings=keep, clock=clock) as s:
        pinned = s.remember("pinned note about the cache warmer", type="success", agent_id="a").id
        keyed = s.remember("keyed note v1 about the proxy", type="success", agent_id="a", key="k").id
        recalled = s.remember("recalled note about flaky dns in ci", type="success", agent_id="a").id
        twin = s.remember("untouched twin note about gpu drivers", type="success", agent_id="a").id
        dup = s.remember("duplicated note about the artifact cache", type="success", agent_id="a").id
        s.pin(pinned)
        clock.advance(100 * DAY)
        assert [h.memory.id for h in s.recall("recalled note about flaky dns in ci", agent_id="a", limit=1)] == [
            recalled
        ]
        assert s.remember("duplicated note about the artifact cache", type="success", agent_id="a").id == dup
        clock.advance(100 * DAY)
        s.pin(pinned, False)
        s.remember("keyed note v2 about the proxy", type="success", agent_id="a", key="k")
        clock.advance(DAY)
        s.run_job("decay")
        assert math.isclose(s.get(pinned).relevance_score, 0.99) and not s.get(pinned).archived
        assert math.isclose(s.get(keyed).relevance_score, 0.99)
        expected = max(0.1, (min(1.0, 0.99**100 + 0.02)) * 0.99**101)
        assert math.isclose(s.get(recalled).relevance_score, expected, rel_tol=1e-9)
        assert math.isclose(s.get(dup).relevance_score, expected, rel_tol=1e-9)
        assert s.get(recalled).relevance_score > s.get(twin).relevance_score
