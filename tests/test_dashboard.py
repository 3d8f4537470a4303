"""The dashboard over real HTTP: a uvicorn server on loopback, an httpx client (issue 13)."""

from __future__ import annotations

import html
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC
from pathlib import Path

import httpx
import pytest
import uvicorn

from conftest import table_snapshot
from dashboard_data import WEEK, fill_history
from harness_memory import MemoryStore, Settings
from harness_memory.api import create_app
from harness_memory.dashboard import build_app, dashboard_url
from harness_memory.dashboard.app import mask_tokens
from harness_memory.dashboard.queries import Queries, week_start
from harness_memory.dashboard.stats import hierarchical, pooled_root
from harness_memory.testing import ManualClock

XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
PAGES = ["/dashboard/", "/dashboard/techniques", "/dashboard/errors", "/dashboard/memories", "/dashboard/maintenance"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A real uvicorn server on loopback in a thread."""

    def __init__(self, app, log_level: str = "error"):
        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level=log_level))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started and time.time() < deadline:
            time.sleep(0.05)
        assert self.server.started
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=10)


def make_history(path: Path, weeks: int = 8) -> dict[str, int]:
    """The demo's memories, then ``weeks`` of harness history ending now, and a hostile memory."""
    from rich.console import Console

    from harness_memory.demo import run_demo

    with open(os.devnull, "w") as sink:
        run_demo(path, console=Console(file=sink))
    clock = ManualClock(time.time() - weeks * WEEK)
    with MemoryStore(path, clock=clock) as s:
        counts = fill_history(s, clock, weeks=weeks)
        hostile = s.remember(
            f"hostile {XSS} content",
            type="decision",
            agent_id=f'agent"><b>{XSS}',
            scope="global",
            namespace="demo",
            tags=["x<y>", "a&b"],
            key="hostile-key",
        )
        counts["hostile"] = hostile.id
        for job in ("decay", "expire"):  # job runs, and relevance that decayed over the weeks
            assert s.run_job(job).status == "ok"
    return counts


@pytest.fixture(scope="session")
def history_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("dash") / "history.db"
    counts = make_history(path)
    return path, counts


@pytest.fixture
def db(history_db, tmp_path):
    """A private copy of the filled database (tests that write must not share it)."""
    src, counts = history_db
    dst = tmp_path / "dash.db"
    shutil.copy(src, dst)
    return dst, counts


def _csrf(client: httpx.Client, base: str, path: str) -> str:
    r = client.get(base + path)
    assert r.status_code == 200, r.text[:300]
    m = re.search(r'name="csrf" value="([^"]+)"', r.text)
    assert m, "the confirmation page carries a CSRF field"
    return m.group(1)


# -- pages ------------------------------------------------------------------------------------
def test_every_page_renders_plots_with_data_and_reads_nothing_it_should_not_write(db):
    path, counts = db
    with MemoryStore(path) as s:
        before = table_snapshot(s)
        log_before = s._core.backend.execute("SELECT COUNT(*), MAX(id) FROM memory_access_log").fetchone()
    with Server(build_app(path, Settings())) as base, httpx.Client(follow_redirects=False) as c:
        for p in PAGES:
            r = c.get(base + p)
            assert r.status_code == 200, (p, r.text[:500])
            assert r.headers["content-type"].startswith("text/html")
            assert "default-src 'none'" in r.headers["content-security-policy"]
            assert "<script" not in r.text.lower().replace(html.escape("<script").lower(), "")
        ov = c.get(base + "/dashboard/").text
        # the overview's plots: a line chart per metric with a point per week of data
        charts = re.findall(r'<svg class="chart line".*?</svg>', ov, re.DOTALL)
        assert len(charts) >= 3
        assert all(len(re.findall(r'class="pt"', ch)) >= 4 for ch in charts)
        assert "Repeat-failure rate" in ov and "Helpfulness of applied memories" in ov
        # recall latency from the access log: a headline figure and a p50/p95 chart with a point per week
        assert re.search(r'<h3>Recall latency p50 / p95</h3><p class="figure">[0-9.,]+ ms / [0-9.,]+ ms</p>', ov)
        lat = re.search(
            r'<svg class="chart line"[^>]*aria-label="recall latency p50 and p95 per week".*?</svg>', ov, re.DOTALL
        )
        assert lat and len(re.findall(r'class="pt"', lat.group(0))) >= 2 * 8
        for weeks in (2, 3, 260):  # any window: the headline still pools the last 4 weeks
            r = c.get(base + f"/dashboard/?weeks={weeks}")
            assert r.status_code == 200 and re.search(r'<p class="figure">[0-9.,]+ ms / [0-9.,]+ ms</p>', r.text)
        tech = c.get(base + "/dashboard/techniques").text
        assert len(re.findall(r'class="pt" data-value="[0-9.e-]+" data-lo=', tech)) >= 3  # credible intervals
        for name in ("prompt_restructure", "decomposition", "fresh_start"):
            assert name in tech
        errs = c.get(base + "/dashboard/errors").text
        sig = re.search(r'href="/dashboard/errors/(err_[0-9a-f]+)"', errs).group(1)
        sp = c.get(f"{base}/dashboard/errors/{sig}")
        assert sp.status_code == 200 and sig in sp.text and "Attempts" in sp.text
        assert c.get(base + "/dashboard/errors/err_doesnotexist").status_code == 404
        hits = c.get(base + "/dashboard/memories", params={"q": "install the missing package", "agent": "build-agent"})
        assert hits.status_code == 200
        assert len(re.findall(r'<svg class="chart scorebar"', hits.text)) >= 1
        assert re.search(r'data-part="keyword"', hits.text)
        both = c.get(base + "/dashboard/memories", params={"tags": "python, deps"}).text
        ids = re.findall(r'href="/dashboard/memories/(\d+)"', both)
        assert ids
        with MemoryStore(path) as s:
            assert all({"python", "deps"} <= set(s.get(int(i)).tags) for i in ids)
        m = c.get(f"{base}/dashboard/memories/{counts['hostile']}")
        assert m.status_code == 200 and "hostile-key" in m.text
        assert c.get(base + "/dashboard/memories/999999").status_code == 404
        assert c.get(base + "/dashboard/memories/abc").status_code == 404
        mt = c.get(base + "/dashboard/maintenance").text
        assert "relevance" in mt and 'class="pt"' in mt
    with MemoryStore(path) as s:
        assert table_snapshot(s) == before  # no page view wrote anything (a search is not an access)
        assert s._core.backend.execute("SELECT COUNT(*), MAX(id) FROM memory_access_log").fetchone() == log_before


def test_stored_content_is_escaped_everywhere(db):
    path, counts = db
    with Server(build_app(path, Settings())) as base, httpx.Client() as c:
        for p in PAGES + [
            f"/dashboard/memories/{counts['hostile']}",
            "/dashboard/memories?q=hostile+content",
            f"/dashboard/memories/{counts['hostile']}/confirm/edit",
            "/dashboard/memories?agent=" + httpx.QueryParams({"a": f'agent"><b>{XSS}'})["a"],
        ]:
            body = c.get(base + p).text
            assert "<script>window.__xss" not in body, p
            assert "<img src=x" not in body, p
            assert '"><b>' not in body, p
        page = c.get(f"{base}/dashboard/memories/{counts['hostile']}").text
        assert html.escape(XSS, quote=True) in page  # shown, as text
        assert "x&lt;y&gt;" in page and "a&amp;b" in page


def test_weekly_queries_agree_with_the_views(db):
    path, _ = db
    with MemoryStore(path) as s:
        q = Queries(s)
        since = 0.0
        views = {
            "v_failures_by_week": [
                (float(r[0]), r[1], r[2])
                for r in s._core.backend.execute("SELECT week_start, failures, repeated FROM v_failures_by_week")
            ],
            "v_retries_by_week": [
                (float(r[0]), r[1], r[2], r[3], r[4])
                for r in s._core.backend.execute(
                    "SELECT week_start, tasks, attempts, fixed, escalated FROM v_retries_by_week"
                )
            ],
            "v_techniques_by_week": [
                (float(r[0]), r[1], r[2], r[3])
                for r in s._core.backend.execute(
                    "SELECT week_start, attempts, successes, escalations FROM v_techniques_by_week"
                )
            ],
            "v_helpfulness_by_week": [
                (float(r[0]), r[1], r[2])
                for r in s._core.backend.execute("SELECT week_start, applied, helpful FROM v_helpfulness_by_week")
            ],
            "v_recall_latency_by_week": [
                (float(r[0]), r[1], r[2], r[3], r[4])
                for r in s._core.backend.execute(
                    "SELECT week_start, recalls, p50_ms, p95_ms, max_ms FROM v_recall_latency_by_week"
                )
            ],
        }
        assert len(views["v_failures_by_week"]) >= 8
        assert q.weekly_failures(since) == views["v_failures_by_week"]
        assert q.weekly_retries(since) == views["v_retries_by_week"]
        assert q.weekly_techniques(since) == views["v_techniques_by_week"]
        assert q.weekly_helpfulness(since) == views["v_helpfulness_by_week"]
        assert q.weekly_latency(since) == views["v_recall_latency_by_week"]
        assert len(views["v_recall_latency_by_week"]) >= 8  # fill_history recalls every week
        view = s._core.backend.execute(
            "SELECT week_start, memory_type, agent_id, created FROM v_memories_by_week"
        ).fetchall()
        assert sorted(q.weekly_created(since)) == sorted((float(w), t, a, n) for w, t, a, n in view)
        assert len(view) >= 8
        # past weeks cached, the current week live: the same figures
        for fn in (q.weekly_techniques, q.weekly_helpfulness, q.weekly_created, q.weekly_selections, q.weekly_latency):
            assert q.weekly(fn, since) == fn(since), fn.__name__
            assert q.weekly(fn, since) == fn(since), fn.__name__  # from the cache
        # weeks start on Monday 00:00 UTC
        from datetime import datetime

        for w, *_ in views["v_failures_by_week"]:
            d = datetime.fromtimestamp(w, tz=UTC)
            assert (d.weekday(), d.hour, d.minute) == (0, 0, 0)
            assert week_start(w + 3 * 86400) == w


def test_a_page_read_does_not_hold_the_stores_connection(db):
    """The pages read on a connection of their own: while a page's read snapshot is open, a write
    through the store (the REST server's) goes through at once."""
    from harness_memory.dashboard import create_dashboard

    path, _ = db
    with MemoryStore(path) as s:
        board = create_dashboard(s, Settings())
        q = board.state.queries
        try:
            done = threading.Event()

            def write():
                s.remember("written while a page reads", type="decision", agent_id="w", namespace="demo")
                done.set()

            with q.snapshot():
                q.totals()
                t = threading.Thread(target=write)
                t.start()
                assert done.wait(10), "the write waited for the page's read snapshot"
            t.join()
            assert q.totals()["memories"] == s.stats()["memories"]
        finally:
            q.close()


def test_technique_estimates_are_the_selectors(db):
    """The intervals drawn are around the selector's own posterior mean (ledger.select)."""
    path, _ = db
    with MemoryStore(path) as s:
        q = Queries(s)
        err = "ModuleNotFoundError: No module named 'requests'"
        sig = s.error_signature(err)
        d = s.select_technique(
            "fresh-task-for-the-check", err, techniques=["prompt_restructure", "decomposition", "fresh_start"], seed=1
        )
        root = pooled_root(*q.pooled())
        glob = {r["technique"]: r for r in q.ledger("global")}
        cat = {r["technique"]: r for r in q.ledger("category", keys=[sig.category])}
        sg = {r["technique"]: r for r in q.ledger("signature", keys=[sig.id])}
        assert d.candidates
        for cand in d.candidates:
            levels = [
                (x["successes"], x["failures"]) if x else (0, 0)
                for x in (glob.get(cand.technique), cat.get(cand.technique), sg.get(cand.technique))
            ]
            est = hierarchical(levels, root=root, k=s.settings.prior_strength)
            assert est.mean == pytest.approx(cand.mean, abs=1e-12)
            assert est.lo < est.mean < est.hi


# -- curator actions ----------------------------------------------------------------------------
def test_actions_are_confirmed_posts_with_csrf_through_the_public_api(db):
    path, counts = db
    mid = counts["hostile"]
    with Server(build_app(path, Settings())) as base, httpx.Client() as c:
        token = _csrf(c, base, f"/dashboard/memories/{mid}/confirm/pin")
        # without the CSRF field, or with another one: refused, nothing changes
        assert c.post(f"{base}/dashboard/memories/{mid}/pin", data={"csrf": "x" * 30}).status_code == 403
        assert c.post(f"{base}/dashboard/memories/{mid}/pin").status_code == 403
        other_site = c.post(
            f"{base}/dashboard/memories/{mid}/pin", data={"csrf": token}, headers={"Origin": "http://evil.example"}
        )
        assert other_site.status_code == 403
        with MemoryStore(path) as s:
            assert not s.get(mid).pinned
        r = c.post(f"{base}/dashboard/memories/{mid}/pin", data={"csrf": token})
        assert r.status_code == 303 and r.headers["location"] == f"/dashboard/memories/{mid}?done=pin"
        with MemoryStore(path) as s:
            assert s.get(mid).pinned
        assert "Pinned." in c.get(base + r.headers["location"]).text
        assert c.post(f"{base}/dashboard/memories/{mid}/unpin", data={"csrf": token}).status_code == 303
        # edit: a new version through the memory's key; the old one goes to its history
        r = c.post(f"{base}/dashboard/memories/{mid}/edit", data={"csrf": token, "content": "curated <content>"})
        assert r.status_code == 303
        with MemoryStore(path) as s:
            m = s.get(mid)
            assert m.content == "curated <content>" and m.version == 2 and not m.pinned
        page = c.get(f"{base}/dashboard/memories/{mid}").text
        assert "curated &lt;content&gt;" in page and "hostile" in page  # history shows the previous version
        # a memory without a key cannot be edited
        with MemoryStore(path) as s:
            plain = s.remember("no key here", type="decision", agent_id="a", namespace="demo")
        assert (
            c.post(f"{base}/dashboard/memories/{plain.id}/edit", data={"csrf": token, "content": "x"}).status_code
            == 422
        )
        # forget: the memory is gone
        r = c.post(f"{base}/dashboard/memories/{plain.id}/forget", data={"csrf": token})
        assert r.status_code == 303
        assert f"Forgot memory #{plain.id}." in c.get(base + r.headers["location"]).text
        assert c.get(f"{base}/dashboard/memories/{plain.id}").status_code == 404
        assert c.post(f"{base}/dashboard/memories/{mid}/explode", data={"csrf": token}).status_code == 404
        assert c.get(f"{base}/dashboard/memories/{mid}/pin").status_code in (404, 405)  # no write by GET


def test_archive_and_restore_through_the_pages(db):
    path, counts = db
    mid = counts["hostile"]
    with Server(build_app(path, Settings())) as base, httpx.Client() as c:
        page = c.get(f"{base}/dashboard/memories/{mid}").text
        assert f"/dashboard/memories/{mid}/confirm/archive" in page
        assert f"/dashboard/memories/{mid}/confirm/restore" not in page
        token = _csrf(c, base, f"/dashboard/memories/{mid}/confirm/archive")
        r = c.post(f"{base}/dashboard/memories/{mid}/archive", data={"csrf": token})
        assert r.status_code == 303
        assert "Archived." in c.get(base + r.headers["location"]).text
        with MemoryStore(path) as s:
            assert s.get(mid).archived
        page = c.get(f"{base}/dashboard/memories/{mid}").text
        assert f"/dashboard/memories/{mid}/confirm/restore" in page
        assert f"/dashboard/memories/{mid}/confirm/archive" not in page
        token = _csrf(c, base, f"/dashboard/memories/{mid}/confirm/restore")
        assert c.post(f"{base}/dashboard/memories/{mid}/restore", data={"csrf": token}).status_code == 303
        page = c.get(f"{base}/dashboard/memories/{mid}").text
        assert "<td>archived</td>" in page and "<td>restored</td>" in page  # both in its access log
        with MemoryStore(path) as s:
            m = s.get(mid)
            assert not m.archived and m.relevance_score >= 0.5
            s.pin(mid)
        # a pinned memory offers no Archive, and a forged POST is refused with a typed error
        assert f"/dashboard/memories/{mid}/confirm/archive" not in c.get(f"{base}/dashboard/memories/{mid}").text
        assert c.post(f"{base}/dashboard/memories/{mid}/archive", data={"csrf": token}).status_code == 422
    with MemoryStore(path) as s:
        assert not s.get(mid).archived


# -- token rules ----------------------------------------------------------------------------------
def test_token_rules_bearer_link_cookie_and_login(db):
    path, _ = db
    st = Settings(api_token="s3cret-token", api_tokens={"tok-alice": "alice"})
    with Server(build_app(path, st)) as base, httpx.Client(follow_redirects=False) as c:
        r = c.get(base + "/dashboard/")
        assert r.status_code == 401 and "needs a token" in r.text and 'type="password"' in r.text
        assert c.get(base + "/dashboard/", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get(base + "/dashboard/", headers={"Authorization": "Bearer tok-alice"}).status_code == 401
        assert c.get(base + "/dashboard/", headers={"Authorization": b"Bearer \xff\xfe"}).status_code == 401
        assert c.get(base + "/dashboard/", headers={"Authorization": "Basic czNjcmV0LXRva2Vu"}).status_code == 401
        assert c.get(base + "/dashboard/", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
        assert c.get(base + "/dashboard/techniques?token=wrong").status_code == 401
        # the printed link: the token is exchanged for a session cookie and dropped from the address
        r = c.get(base + "/dashboard/techniques?token=s3cret-token&weeks=8")
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/techniques?weeks=8"
        cookie = r.cookies.get("hm_session")
        assert cookie and "s3cret" not in cookie
        assert "httponly" in r.headers["set-cookie"].lower() and "samesite=strict" in r.headers["set-cookie"].lower()
        assert c.get(base + r.headers["location"]).status_code == 200  # the client keeps the cookie
        for p in PAGES:
            assert c.get(base + p).status_code == 200
            assert "s3cret-token" not in c.get(base + p).text
        assert 'action="/dashboard/logout"' in c.get(base + "/dashboard/").text
        c.post(base + "/dashboard/logout")
        assert c.get(base + "/dashboard/").status_code == 401
    with Server(build_app(path, st)) as base, httpx.Client(follow_redirects=False) as c:
        assert c.post(base + "/dashboard/login", data={"token": "nope"}).status_code == 401
        r = c.post(base + "/dashboard/login", data={"token": "s3cret-token", "next": "//evil.example/x"})
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/"
        assert c.get(base + "/dashboard/memories").status_code == 200
        assert c.get(base + "/dashboard/static/dashboard.css").status_code == 200
    # a forged session id is not a session
    with Server(build_app(path, st)) as base, httpx.Client(cookies={"hm_session": "forged"}) as c:
        assert c.get(base + "/dashboard/").status_code == 401


def test_per_agent_tokens_only_are_refused_and_open_mode_is_loopback_only(db):
    path, _ = db
    with Server(build_app(path, Settings(api_tokens={"tok-alice": "alice"}))) as base, httpx.Client() as c:
        r = c.get(base + "/dashboard/", headers={"Authorization": "Bearer tok-alice"})
        assert r.status_code == 403 and "every agent" in r.text
    with Server(build_app(path, Settings())) as base, httpx.Client() as c:
        assert c.get(base + "/dashboard/").status_code == 200
        assert c.get(base + "/dashboard/", headers={"Host": "localhost"}).status_code == 200
        assert c.get(base + "/dashboard/", headers={"Host": "rebound.example:8766"}).status_code == 403  # DNS rebinding


def test_serve_mounts_the_dashboard_with_the_same_tokens(tmp_path):
    path = tmp_path / "api.db"
    st = Settings(api_admin_token="adm-token")
    with Server(create_app(str(path), st)) as base, httpx.Client(follow_redirects=False) as c:
        assert c.get(base + "/dashboard/").status_code == 401
        assert c.get(base + "/dashboard/", headers={"Authorization": "Bearer adm-token"}).status_code == 200
        r = c.post(
            base + "/api/memory/remember",
            json={"content": "from the API", "type": "decision"},
            headers={"Authorization": "Bearer adm-token"},
        )
        assert r.status_code == 201
        page = c.get(base + "/dashboard/memories", headers={"Authorization": "Bearer adm-token"}).text
        assert "from the API" in page
        assert c.get(base + "/api/memory/stats").status_code == 401  # the API's own rules are unchanged


def test_serve_reads_the_summary_pages_once_at_start_up(tmp_path):
    path = tmp_path / "api.db"
    with MemoryStore(path) as s:
        s.remember("the deploy job failed: disk full", type="failure", agent_id="ci")
    app = create_app(str(path), Settings(api_admin_token="adm-token"))
    board = next(r.app for r in app.routes if getattr(r, "path", "") == "/dashboard")
    with Server(app):  # no page is visited
        deadline = time.monotonic() + 60
        while not board.state.queries._cache and time.monotonic() < deadline:
            time.sleep(0.05)
    assert board.state.queries._cache  # filled by the warm-up, before any visitor


def test_access_log_masks_the_token_of_a_link(db):
    path, _ = db
    st = Settings(api_token="s3cret-token")
    records: list[str] = []

    class Grab(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    app = build_app(path, st)
    with Server(app, log_level="info") as base:
        logging.getLogger("uvicorn.access").addHandler(grab := Grab())
        try:
            with httpx.Client(follow_redirects=False) as c:
                assert c.get(base + "/dashboard/?token=s3cret-token").status_code == 303
        finally:
            logging.getLogger("uvicorn.access").removeHandler(grab)
    assert any("token=***" in m for m in records), records
    assert not any("s3cret" in m for m in records)
    assert mask_tokens("/x?a=1&token=abc&b=2") == "/x?a=1&token=***&b=2"


# -- the command ----------------------------------------------------------------------------------
def test_dashboard_command_prints_the_address_and_serves(db, tmp_path):
    path, _ = db
    port = _free_port()
    env = {**os.environ, "HARNESS_MEMORY_API_TOKEN": "cli-token", "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness_memory", "dashboard", "--db", str(path), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == f"dashboard: http://127.0.0.1:{port}/dashboard/?token=cli-token"
        url = line.split(": ", 1)[1].strip()
        deadline = time.time() + 30
        while True:
            try:
                with httpx.Client(follow_redirects=True) as c:  # keeps the cookie across the redirect
                    r = c.get(url)
                break
            except httpx.ConnectError:
                assert time.time() < deadline
                time.sleep(0.2)
        assert r.status_code == 200 and "Overview" in r.text
        assert str(r.url) == f"http://127.0.0.1:{port}/dashboard/"
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=20)
    assert "cli-token" not in err  # the access log masks it


def test_dashboard_command_refuses_a_public_address_without_a_token(db):
    path, _ = db
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_API")}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness_memory",
            "dashboard",
            "--db",
            str(path),
            "--host",
            "0.0.0.0",
            "--port",
            str(_free_port()),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert r.returncode == 2 and "refusing to serve the dashboard on 0.0.0.0" in " ".join(r.stderr.split())


def test_dashboard_command_refuses_a_missing_database(tmp_path):
    missing = tmp_path / "typo.db"
    r = subprocess.run(
        [sys.executable, "-m", "harness_memory", "dashboard", "--db", str(missing), "--port", str(_free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 2 and "no database at" in " ".join(r.stderr.split())
    assert not missing.exists()


def test_dashboard_url():
    assert dashboard_url("127.0.0.1", 8766, Settings()) == "http://127.0.0.1:8766/dashboard/"
    assert dashboard_url("::1", 1, Settings(api_admin_token="a b")) == "http://[::1]:1/dashboard/?token=a%20b"


def test_week_start_is_monday():
    from datetime import datetime

    ts = datetime(2026, 11, 26, 15, 0, tzinfo=UTC).timestamp()  # a Thursday
    assert datetime.fromtimestamp(week_start(ts), tz=UTC) == datetime(2026, 11, 23, tzinfo=UTC)


def test_the_pages_on_postgresql():
    """The same queries and pages on the PostgreSQL backend: views and windowed reads agree, every page renders."""
    import pgtestdb

    url, schema = pgtestdb.new_schema()
    try:
        clock = ManualClock(time.time() - 4 * WEEK)
        with MemoryStore(url, clock=clock) as s:
            assert s._core.backend.dialect == "postgresql"
            fill_history(s, clock, weeks=4, tasks_per_week=5)
            q = Queries(s)
            b = s._core.backend
            assert q.weekly_failures(0.0) == [
                (float(r[0]), r[1], r[2])
                for r in b.execute("SELECT week_start, failures, repeated FROM v_failures_by_week")
            ]
            assert q.weekly_helpfulness(0.0) == [
                (float(r[0]), r[1], r[2])
                for r in b.execute("SELECT week_start, applied, helpful FROM v_helpfulness_by_week")
            ]
            assert len(q.weekly_techniques(0.0)) >= 4
            lat = [
                (float(r[0]), r[1], r[2], r[3], r[4])
                for r in b.execute("SELECT week_start, recalls, p50_ms, p95_ms, max_ms FROM v_recall_latency_by_week")
            ]
            assert len(lat) >= 4 and q.weekly_latency(0.0) == lat
            for fn in (q.weekly_techniques, q.weekly_created, q.weekly_selections, q.weekly_latency):
                assert q.weekly(fn, 0.0) == fn(0.0)
        with Server(build_app(url, Settings())) as base, httpx.Client() as c:
            for p in PAGES + ["/dashboard/memories?q=install+the+missing+package&agent=build-agent"]:
                r = c.get(base + p)
                assert r.status_code == 200, (p, r.text[:300])
            assert 'class="pt"' in c.get(base + "/dashboard/").text
            mt = c.get(base + "/dashboard/maintenance").text
            assert re.search(
                r'<p class="figure">[0-9.,]+ MB</p><p class="detail">the tables of schema t_[0-9a-f]+ ', mt
            )
    finally:
        pgtestdb.drop_schema(schema)
