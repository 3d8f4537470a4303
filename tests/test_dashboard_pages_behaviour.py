"""The overview page's figures say what the harness's history says.

A store written through the public API under a manual clock, week by week, with a history whose figures are
known in advance: the overview's headline tiles name the direction of each trend in words, pool the last four
weeks only, and the "created per week" charts keep the six largest groups and put the rest under "other".
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from harness_memory import MemoryStore
from harness_memory.dashboard import pages
from harness_memory.dashboard.queries import Queries
from harness_memory.testing import ManualClock

WEEK = 7 * 86400
NEW = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]  # errors met once each
MONDAY = datetime(2026, 1, 5, tzinfo=UTC).timestamp()


def _tile(html: str, title: str) -> str:
    m = re.search(rf'<section class="tile" aria-label="{re.escape(title)}">.*?</section>', html, re.DOTALL)
    assert m, title
    return m.group(0)


def _history(path, clock: ManualClock) -> None:
    """Eight weeks: at first every failure repeats a known error and no retry fixes its task; in the last four
    weeks every failure is new and every retry fixes it (at first one in two did). Recalls happen in the first week and in the last."""
    with MemoryStore(path, clock=clock) as s:
        s.remember("raise the timeout", type="success", agent_id="a", scope="global", error="TimeoutError: slow")
        for w in range(8):
            clock.now = MONDAY + w * WEEK + 3600
            for t in range(2):
                task = f"W{w}-T{t}"
                word = NEW[2 * (w - 4) + t] if w >= 4 else ""
                err = "TimeoutError: slow" if w < 4 else f"{word.capitalize()}Error: the {word} setting is not defined"
                clock.advance(60)
                s.record_outcome(task, "fresh_start", w >= 4 or t == 0, error=err, agent_id="a")
            if w in (0, 7):
                for _ in range(3 if w == 0 else 2):
                    clock.advance(60)
                    s.recall("raise the timeout", agent_id="a", task_id=f"W{w}-R")


def test_the_overview_names_each_trend_and_pools_the_last_four_weeks(tmp_path):
    clock = ManualClock(MONDAY)
    _history(tmp_path / "h.db", clock)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        _, body = pages.overview(Queries(s), "/d", weeks=8)
    repeat = _tile(body, "Repeat-failure rate")
    # the first four weeks: 7 of 8 failures met a known error; the last four: none did
    assert '<p class="figure">0%</p>' in repeat
    assert "down 100% from the first weeks" in repeat and "target met" in repeat
    success = _tile(body, "Technique success rate")
    assert '<p class="figure">100%</p>' in success
    assert "up 100% from the first weeks" in success and "up since the first weeks" in success  # from half to all
    retries = _tile(body, "Retries per task")
    assert '<p class="figure">1.00</p>' in retries  # one attempt per task throughout: no change is not "up 0%"
    assert "unchanged from the first weeks" in retries and "not fewer retries yet" in retries
    chart = re.search(
        r'<svg class="chart line"[^>]*aria-label="repeat-failure rate per week".*?</svg>', body, re.DOTALL
    )
    assert chart
    tips = re.findall(r"<title>([^<]+)</title>", chart.group(0))
    assert tips[0] == "repeat-failure rate, Jan 05: 50%" and tips[-1] == "repeat-failure rate, Feb 23: 0%"
    # the numbers under the retries chart: the week, then five numeric (right-aligned) columns
    data = re.search(r"<th[^>]*>week</th><th[^>]*>tasks</th>.*?</table>", body, re.DOTALL)
    assert data
    heads = re.findall(r"<th scope=\"col\"( class=num)?>([^<]*)</th>", data.group(0))
    assert [h for num, h in heads if num] == ["tasks", "retries", "fixed", "escalated", "retries per task"]
    lat_chart = re.search(
        r'<svg class="chart line"[^>]*aria-label="recall latency p50 and p95 per week".*?</svg>', body, re.DOTALL
    )
    assert lat_chart
    assert re.findall(r'class="legend">([^<]*)<', lat_chart.group(0)) == ["p50", "p95"]
    lat_data = re.search(r"<th[^>]*>week</th><th[^>]*>recalls</th>.*?</tr>", body, re.DOTALL)
    assert lat_data
    assert re.findall(r"<th[^>]*>([^<]*)</th>", lat_data.group(0)) == ["week", "recalls", "p50", "p95", "max"]
    latency = _tile(body, "Recall latency p50 / p95")
    # the headline pools the last four weeks: the first week's three recalls are not in it
    assert "(2 recalls recorded)" in latency, latency


def test_a_repeat_failure_rate_down_exactly_thirty_percent_meets_the_target(tmp_path):
    # the first four weeks with failures: 5 of 6 repeat a known error; the last four: 7 of 12 (-30% exactly)
    clock = ManualClock(MONDAY)
    new = iter(NEW)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        plan = [[True, True], [True, True], [True], [True]] + [[True, True, False]] * 3 + [[True, False, False]]
        for w, week in enumerate(plan):
            clock.now = MONDAY + w * WEEK + 3600
            for t, known in enumerate(week):
                clock.advance(60)
                word = next(new) if not known else ""
                err = "TimeoutError: slow" if known else f"{word.capitalize()}Error: the {word} setting is not defined"
                s.record_outcome(f"W{w}-T{t}", "fresh_start", False, error=err, agent_id="a")
        _, body = pages.overview(Queries(s), "/d", weeks=8)
    repeat = _tile(body, "Repeat-failure rate")
    assert '<p class="figure">58%</p>' in repeat  # 7 / 12
    assert "down 30% from the first weeks" in repeat
    assert "target met: down 30% or more" in repeat and "✔" in repeat


def test_memories_created_by_more_than_six_agents_show_the_six_largest_and_the_rest_as_other(tmp_path):
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        for i in range(8):  # agent-i writes i + 1 memories: agent-0 and agent-1 are the smallest
            for k in range(i + 1):
                clock.advance(60)
                s.remember(f"note {k} of agent {i}", type="decision", agent_id=f"agent-{i}")
        _, body = pages.overview(Queries(s), "/d", weeks=2)
    chart = re.search(r'aria-label="memories created per week, by agent".*?</svg>', body, re.DOTALL)
    assert chart
    legend = re.findall(r'class="legend">([^<]*)</text>', chart.group(0))
    assert legend == [f"agent-{i}" for i in range(7, 1, -1)] + ["other"]
    # the "other" bar holds the two smallest agents' 1 + 2 memories
    assert re.search(r'data-value="3"[^>]*>\s*<title>other, Jan 05: 3</title>', chart.group(0))


def test_the_memories_page_is_titled_and_offers_every_state(tmp_path):
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        s.remember("a note", type="decision", agent_id="a")
        title, body = pages.memories(Queries(s), s, "/d", {})
    assert title == "Memories"
    state = re.search(r'<select name="state".*?</select>', body, re.DOTALL)
    assert state
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', state.group(0))
    assert [(v, label) for v, _sel, label in options] == [
        ("", "(any)"),
        ("live", "live"),
        ("archived", "archived"),
        ("pinned", "pinned"),
    ]
    assert [v for v, sel, _label in options if sel] == [""]  # nothing asked: any state


def test_a_memory_page_shows_its_replaced_versions_as_text(tmp_path):
    hostile = "<script>alert(1)</script> first"
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        m = s.remember(hostile, type="decision", agent_id="a", key="k")
        clock.advance(86400)
        m2 = s.remember("second version", type="decision", agent_id="a", key="k")
        assert m2.id == m.id
        _, body = pages.memory(Queries(s), s, "/d", m.id, "tok")
    history = re.search(r"<h2>History</h2>.*?</table>", body, re.DOTALL)
    assert history, "the page has a history of versions"
    rows = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td>", history.group(0))
    # the replaced version is kept in the history, shown as text; the page shows the current one
    assert rows == [("1", "&lt;script&gt;alert(1)&lt;/script&gt; first")]
    assert "second version" in body.replace(history.group(0), "")
    assert "<script>" not in body


def test_each_confirmation_says_what_the_action_does(tmp_path):
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        m = s.remember("a note", type="decision", agent_id="a", key="k")
        said = {a: pages.confirm(s, "/d", m.id, a, "tok") for a in ("pin", "archive", "restore", "forget", "edit")}
    assert "decay and archiving will skip it" in said["pin"][1]
    assert "recall leaves it out" in said["archive"][1] and "Restore brings it back" in said["archive"][1]
    assert "recall sees it again" in said["restore"][1]
    assert "cannot be undone" in said["forget"][1] and 'class="danger"' in said["forget"][1]
    assert "<textarea" in said["edit"][1] and "<textarea" not in said["pin"][1]
    verbs = {"pin": "Pin", "archive": "Archive", "restore": "Restore", "forget": "Forget", "edit": "Store"}
    for action, (title, body) in said.items():
        assert title.endswith(f"memory #{m.id}?")
        # the explanation is one sentence of its own, opening with what the button will do
        assert re.search(rf"<p>{verbs[action]} [^<]*\.</p>", body), body
        assert f'action="/d/memories/{m.id}/{action}"' in body and 'name="csrf" value="tok"' in body


def test_each_error_category_lists_its_techniques_best_first_with_their_record(tmp_path):
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        for i in range(4):  # on this category, decomposition always fixed the task, fresh_start never did
            clock.advance(600)
            s.record_outcome(f"T{i}", "fresh_start", False, error="TimeoutError: request timed out after 30s")
            s.record_outcome(f"T{i}", "decomposition", True, error="TimeoutError: request timed out after 30s")
        _, body = pages.techniques(Queries(s), "/d", prior_strength=2.0, weeks=2)
    plots = re.findall(r'aria-label="technique estimates for ([^"]+) errors".*?</svg>', body, re.DOTALL)
    assert len(plots) == 1
    (cat,) = plots
    plot = re.search(rf'aria-label="technique estimates for {re.escape(cat)} errors".*?</svg>', body, re.DOTALL)
    assert plot
    labels = re.findall(r'class="rowlabel"[^>]*>([^<]+)</text>', plot.group(0))
    assert labels == ["decomposition", "fresh_start"]  # the better estimate first
    tips = re.findall(r"<title>([^<]+)</title>", plot.group(0))
    assert tips[0].startswith("decomposition: ") and tips[0].endswith(f"4/4 fixed in {cat}")
    assert tips[1].startswith("fresh_start: ") and tips[1].endswith(f"0/4 fixed in {cat}")
    assert f"{cat} <span" in body and "(8 retries)" in body


def test_the_memories_page_names_its_columns_and_its_filters_and_counts_a_searchs_hits(tmp_path):
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        s.remember("raise the client timeout", type="success", agent_id="a", scope="global", namespace="ns")
        s.remember("pin the package version", type="success", agent_id="a", scope="global", namespace="ns")
        _, browse = pages.memories(Queries(s), s, "/d", {})
        _, search = pages.memories(Queries(s), s, "/d", {"q": "client timeout", "namespace": "ns"})
    heads = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', browse)
    assert heads == ["id", "type", "agent", "scope", "namespace", "content", "tags", "relevance", "applied", "state"]
    # the form's fields are the parameters the page reads
    fields = set(re.findall(r'<(?:select|input)[^>]* name="([^"]+)"', browse))
    assert fields == {"q", "namespace", "agent", "type", "scope", "tags", "state"}
    assert re.search(r'<p class="lead">[12] hits of the same hybrid recall', search), search


def test_the_maintenance_page_reports_the_database_files_in_megabytes(tmp_path):
    path = tmp_path / "h.db"
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(path, clock=clock) as s:
        for i in range(200):
            s.remember(f"note {i} " + "word " * 200, type="decision", agent_id="a")
        _, body = pages.maintenance(Queries(s), s, "/d", weeks=2)
        db_mb = path.stat().st_size / 1e6
        wal = path.with_name(path.name + "-wal")
        wal_mb = wal.stat().st_size / 1e6 if wal.exists() else 0.0
    storage = _tile(body, "Storage")
    assert db_mb >= 0.1  # big enough for its size in MB to show at one decimal
    assert f"database {db_mb:,.1f} MB + write-ahead log {wal_mb:,.1f} MB" in storage, storage
    assert f'<p class="figure">{db_mb + wal_mb:,.1f} MB</p>' in storage


def test_a_fix_lists_the_errors_it_fixes_with_their_record_as_text(tmp_path):
    err = 'ModuleNotFoundError: No module named "<script>pwn</script>"'
    clock = ManualClock(MONDAY + 3600)
    with MemoryStore(tmp_path / "h.db", clock=clock) as s:
        m = s.learn_fix(err, "pip install the package", agent_id="a")
        s.apply(m.id, helpful=True, agent_id="a", error=err)
        _, body = pages.memory(Queries(s), s, "/d", m.id, "tok")
    fixes = re.search(r"<h2>Errors it fixes</h2>.*?</table>", body, re.DOTALL)
    assert fixes
    heads = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', fixes.group(0))
    assert heads == ["signature", "category", "error", "worked", "did not", "helpful", "unhelpful"]
    (row,) = re.findall(r"<tr><td>(.*?)</td></tr>", fixes.group(0).split("<tbody>")[1])
    cells = re.split(r"</td><td[^>]*>", row)
    assert "&lt;script&gt;pwn&lt;/script&gt;" in cells[2] and "<script>" not in body
    assert cells[5] == "1" and cells[6] == "0"  # one helpful credit, none unhelpful
