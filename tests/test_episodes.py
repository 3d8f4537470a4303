"""Episodes, threads and reflection (issue 14): thread_id on memories and its filters, reflect()
offline and with a summariser served over real HTTP on loopback (and its failures), idempotency,
source links, the reflect job, export/import of thread ids."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.episodes import extract
from harness_memory.summarisers import (
    OpenAICompatibleSummariser,
    SummariserError,
    SummariserNormaliser,
)

DAY = 86400
TURNS = [
    "Caroline went to the LGBTQ support group on 7 May 2023. It was powerful.",
    "Melanie said she painted a sunrise with her kids last week.",
    "Caroline is researching adoption agencies because she wants to be a mom.",
    "Melanie ran a charity race for mental health on Saturday.",
    "Caroline said the support group made her feel accepted.",
    "ok thanks!",
]


def _thread(store, thread="conv-1", agent="a", turns=TURNS, **kw):
    return [store.remember(t, type="episode", agent_id=agent, thread_id=thread, **kw) for t in turns]


def _count(store, sql="SELECT COUNT(*) FROM memories"):
    return store._core.backend.execute(sql).fetchone()[0]


def test_thread_events_are_kept_and_filtered(store):
    eps = _thread(store)
    again = store.remember(TURNS[0], type="episode", agent_id="a", thread_id="conv-1")  # said twice: two events
    other = store.remember(TURNS[0], type="episode", agent_id="a", thread_id="conv-2")
    assert len({m.id for m in [*eps, again, other]}) == len(eps) + 2
    assert all(m.thread_id == "conv-1" for m in eps) and other.thread_id == "conv-2"
    plain = store.remember(TURNS[0], type="episode", agent_id="a")  # no thread: never merged into an event
    assert plain.id not in {m.id for m in [*eps, again, other]} and plain.thread_id is None
    assert [m.id for m in store.thread("conv-1", agent_id="a")] == [m.id for m in eps] + [again.id]
    hits = store.recall("support group", agent_id="a", thread_id="conv-2")
    assert [h.memory.id for h in hits] == [other.id]
    assert {m.id for m in store.get_by_type("episode", agent_id="a", thread_id="conv-2")} == {other.id}
    assert store.thread("conv-1", agent_id="b", include_global=False) == []  # another agent's private thread
    for bad in ("", "x" * 201, "a\nb", 5):
        with pytest.raises(InvalidInputError):
            store.remember("x", type="episode", agent_id="a", thread_id=bad)
        with pytest.raises(InvalidInputError):
            store.recall("x", thread_id=bad)


def test_extractive_reflection_keeps_recurring_entities():
    facts = extract(list(enumerate(TURNS, start=1)))
    assert facts, "a thread with content yields facts"
    joined = " ".join(f.text for f in facts)
    assert "Caroline" in joined and "ok thanks" not in joined
    caroline = next(f for f in facts if "Caroline" in f.entities)
    assert caroline.type == "pattern" and len(set(caroline.sources)) >= 2  # said in several episodes
    assert extract([(1, "ok"), (2, "hi there!")]) == []


def test_reflect_is_one_transaction_idempotent_and_linked(store):
    eps = _thread(store)
    _thread(
        store,
        thread="conv-2",
        turns=["Jon opened a dance studio downtown in January.", "Jon said the studio lost money in February."],
    )
    before = _count(store)
    made = store.reflect(thread_id="conv-1")
    assert made and {m.type for m in made} <= {"fact", "pattern"}
    assert all(m.metadata["thread_id"] == "conv-1" and m.metadata["method"] == "extractive" for m in made)
    assert all(m.thread_id is None for m in made)  # durable: not an event of the thread
    assert _count(store) == before + len(made)
    for m in made:
        srcs = store.reflection_sources(m.id)
        assert srcs and {s.id for s in srcs} <= {e.id for e in eps}
        assert any(word in m.content for s in srcs for word in s.content.split()[:3])
    assert all(m.reflected_at is not None for m in store.thread("conv-1", agent_id="a"))
    assert all(m.reflected_at is None for m in store.thread("conv-2", agent_id="a"))
    assert store.reflect(thread_id="conv-1") == []  # running it again adds nothing
    assert _count(store) == before + len(made)
    rest = store.reflect()  # every remaining thread of the namespace
    assert rest and all(m.metadata["thread_id"] == "conv-2" for m in rest)
    assert store.reflect() == []
    # deleting an episode removes its links, not the fact
    store.forget(eps[0].id)
    assert all(s.id != eps[0].id for m in made for s in store.reflection_sources(m.id))


def test_reflect_per_agent_and_scope(store):
    _thread(store, agent="a")
    _thread(
        store,
        agent="b",
        turns=[
            "Deborah teaches yoga at the community center every Monday.",
            "Deborah said her yoga class grew to twenty people.",
        ],
    )
    made = store.reflect(agent_id="b")
    assert made and {m.agent_id for m in made} == {"b"}
    assert all(m.reflected_at is None for m in store.thread("conv-1", agent_id="a", include_global=False))
    assert {m.agent_id for m in store.reflect()} == {"a"}


class _ChatServer:
    """A loopback HTTP server speaking the chat-completions API (or failing on purpose)."""

    def __init__(self, answer: str | None = None, status: int = 200, raw: bytes | None = None):
        seen = self.requests = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                payload = (
                    raw
                    if raw is not None
                    else json.dumps(
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": answer},
                                }
                            ],
                        }
                    ).encode()
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *a):
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_reflect_with_a_chat_summariser_over_http(store):
    eps = _thread(store)
    answer = (
        "- Caroline attended an LGBTQ support group on 7 May 2023.\n"
        "2. Caroline is researching adoption agencies.\nPATTERN: Caroline finds the support group accepting.\n"
    )
    with _ChatServer(answer) as srv:
        summ = OpenAICompatibleSummariser("llama3", base_url=srv.url, api_key="sk-test-not-a-real-key-123456")
        made = store.reflect(thread_id="conv-1", summariser=summ)
    assert [m.content for m in made] == [
        "Caroline attended an LGBTQ support group on 7 May 2023.",
        "Caroline is researching adoption agencies.",
        "Caroline finds the support group accepting.",
    ]
    assert [m.type for m in made] == ["fact", "fact", "pattern"]
    assert all(m.metadata["method"] == "summariser" for m in made)
    req = srv.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test-not-a-real-key-123456"
    assert req["body"]["model"] == "llama3" and "Caroline went to the LGBTQ" in req["body"]["messages"][1]["content"]
    assert {s.id for s in store.reflection_sources(made[0].id)} == {e.id for e in eps}
    assert "sk-test" not in repr(summ)


@pytest.mark.parametrize(
    "server",
    [{"status": 500, "answer": "x"}, {"raw": b"not json"}, {"answer": "   "}, {"raw": b'{"choices": []}'}, None],
)
def test_a_failing_summariser_falls_back_with_a_warning(store, caplog, server):
    _thread(store)
    if server is None:  # nothing listens there
        summ = OpenAICompatibleSummariser("m", base_url="http://127.0.0.1:9/v1", timeout=2)
        with caplog.at_level(logging.WARNING, logger="harness_memory.episodes"):
            made = store.reflect(thread_id="conv-1", summariser=summ)
    else:
        with _ChatServer(**server) as srv:
            summ = OpenAICompatibleSummariser("m", base_url=srv.url, api_key="sk-secret-abcdefabcdef123456")
            with caplog.at_level(logging.WARNING, logger="harness_memory.episodes"):
                made = store.reflect(thread_id="conv-1", summariser=summ)
    assert made and all(m.metadata["method"] == "extractive" for m in made)
    assert "reflected extractively" in caplog.text and "sk-secret" not in caplog.text


def test_a_summariser_that_raises_anything_falls_back(store, caplog):
    class Broken:
        def summarise(self, texts, *, instruction):
            raise RuntimeError("boom")

    _thread(store)
    with caplog.at_level(logging.WARNING, logger="harness_memory.episodes"):
        made = store.reflect(summariser=Broken())
    assert made and "RuntimeError" in caplog.text
    with pytest.raises(InvalidInputError):
        store.reflect(summariser="openai")


def test_nothing_partial_when_the_write_fails(store, monkeypatch):
    from harness_memory import writes

    _thread(store)
    before = _count(store)

    def explode(*a, **kw):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writes, "write_many", explode)
    with pytest.raises(RuntimeError):
        store.reflect(thread_id="conv-1")
    assert _count(store) == before
    assert all(m.reflected_at is None for m in store.thread("conv-1", agent_id="a"))


def test_reflect_job_takes_idle_threads_only(db_path, clock):
    with MemoryStore(db_path, clock=clock, settings=Settings(maintenance={"reflect_idle_minutes": 60})) as s:
        _thread(s, thread="old")
        clock.advance(2 * 3600)
        _thread(
            s,
            thread="live",
            turns=["Jon opened a dance studio downtown in January.", "Jon said the studio lost money in February."],
        )
        assert s.run_job("reflect", dry_run=True).counts == {"threads": 1, "active_threads": 1}
        run = s.run_job("reflect")
        assert run.counts["threads"] == 1 and run.counts["memories"] > 0
        assert all(m.reflected_at is not None for m in s.thread("old", agent_id="a"))
        assert all(m.reflected_at is None for m in s.thread("live", agent_id="a"))
        assert "reflect" not in s.settings.maintenance.schedules  # off unless scheduled


def test_thread_ids_survive_export_and_import(store, tmp_path, settings):
    _thread(store)
    made = store.reflect(thread_id="conv-1")
    path = tmp_path / "x.jsonl"
    store.export_jsonl(path)
    with MemoryStore(tmp_path / "copy.db", settings=settings) as copy:
        copy.import_jsonl(path)
        eps = copy.thread("conv-1", agent_id="a")
        assert len(eps) == len(TURNS) and all(m.reflected_at is not None for m in eps)
        fact = copy.get(
            next(m.id for m in copy.get_by_type(made[0].type, agent_id="a") if m.content == made[0].content)
        )
        assert {s.content for s in copy.reflection_sources(fact.id)} == {
            s.content for s in store.reflection_sources(made[0].id)
        }
        assert copy.import_jsonl(path).unchanged == len(TURNS) + len(made)


def test_normaliser_on_a_summariser(store):
    answer = json.dumps({"content": "The build needs Python 3.12.", "type": "preference", "tags": ["python"]})
    with _ChatServer("Sure! " + answer) as srv:
        norm = SummariserNormaliser(OpenAICompatibleSummariser("m", base_url=srv.url))
        got = norm.normalise("uh so the build, it wants py 3.12 i think", types=store.memory_types)
    assert (got.content, got.type, got.tags) == ("The build needs Python 3.12.", "preference", ["python"])
    with _ChatServer(json.dumps({"content": "x", "type": "nonsense"})) as srv, pytest.raises(SummariserError):
        SummariserNormaliser(OpenAICompatibleSummariser("m", base_url=srv.url)).normalise("x", types=store.memory_types)


def test_remember_normalised_and_its_fallback(store, caplog):
    answer = json.dumps({"content": "Deploys need the VPN.", "type": "preference", "tags": ["deploy"]})
    with _ChatServer(answer) as srv:
        norm = SummariserNormaliser(OpenAICompatibleSummariser("m", base_url=srv.url))
        m = store.remember_normalised(
            "so like deploys only work w/ vpn on??", agent_id="a", normaliser=norm, tags=["ops"]
        )
    assert (m.content, m.type, m.tags) == ("Deploys need the VPN.", "preference", ["deploy", "ops"])
    down = SummariserNormaliser(OpenAICompatibleSummariser("m", base_url="http://127.0.0.1:9/v1", timeout=2))
    with caplog.at_level(logging.WARNING, logger="harness_memory.summarisers"):
        raw = store.remember_normalised("raw note about the proxy", agent_id="a", normaliser=down)
    assert (raw.content, raw.type) == ("raw note about the proxy", "context") and "normaliser failed" in caplog.text
    with pytest.raises(InvalidInputError):
        store.remember_normalised("x", agent_id="a", normaliser=object())


def test_consolidation_takes_the_same_summariser_interface(tmp_path, caplog):
    class Fixed:
        def __init__(self):
            self.seen = []

        def summarise(self, texts, *, instruction):
            self.seen.append(list(texts))
            return "Docker builds fail when the daemon is down: start dockerd first."

    class Down:
        def summarise(self, texts, *, instruction):
            raise SummariserError("HTTP 503")

    base = "docker build fails: Cannot connect to the Docker daemon at unix:///var/run/docker.sock"
    for name, summ in (("ok", Fixed()), ("down", Down())):
        with MemoryStore(tmp_path / f"{name}.db") as s:
            for v in (" on the CI runner", " in the nightly job", " after the reboot"):
                s.remember(base + v, type="failure", agent_id="a")
            with caplog.at_level(logging.WARNING, logger="harness_memory.jobs.consolidate"):
                run = s.run_job("consolidate", summariser=summ)
            assert run.status == "ok" and run.counts["patterns_created"] == 1
            content = s.get_by_type("pattern", agent_id="a")[0].content
            if name == "ok":
                assert content.startswith("Docker builds fail") and len(summ.seen[0]) == 3
            else:
                assert "docker build fails" in content.lower() and "extractive summary used" in caplog.text


def test_cli_reflect(tmp_path):
    import os
    import subprocess
    import sys

    db = tmp_path / "cli.db"
    with MemoryStore(db) as s:
        _thread(s)
    env = {**os.environ, "HARNESS_MEMORY_DB": str(db)}
    r = subprocess.run(
        [sys.executable, "-m", "harness_memory", "reflect", "--thread", "conv-1", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    made = json.loads(r.stdout)
    assert made and all(m["metadata"]["method"] == "extractive" for m in made)
    again = subprocess.run(
        [sys.executable, "-m", "harness_memory", "reflect", "--thread", "conv-1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0 and "nothing to reflect" in again.stdout


def test_mcp_episodes_with_a_thread(tmp_path):
    import asyncio

    from test_mcp import _session_run, _text

    db = tmp_path / "mcp.db"

    async def steps(session):
        for t in TURNS[:3]:
            await session.call_tool("memory_store", {"content": t, "type": "episode", "thread_id": "c1"})
        await session.call_tool(
            "memory_store", {"content": "Caroline moved to Boston", "type": "episode", "thread_id": "c2"}
        )
        return _text(await session.call_tool("memory_search", {"query": "Caroline", "thread_id": "c2"}))

    found = asyncio.run(_session_run(db, steps))
    assert [h["content"] for h in found] == ["Caroline moved to Boston"]
    with MemoryStore(db) as s:
        assert len(s.thread("c1", agent_id="agent-x")) == 3
