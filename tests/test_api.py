"""The REST API: a real uvicorn server on loopback, a real HTTP client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
import uvicorn

from harness_memory import Settings
from harness_memory.api import create_app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, db, settings):
        self.port = _free_port()
        config = uvicorn.Config(create_app(str(db), settings), host="127.0.0.1", port=self.port, log_level="error")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started and time.time() < deadline:
            time.sleep(0.05)
        assert self.server.started
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def open_server(db):  # both backends (the db fixture): a file, or a PostgreSQL URL
    with Server(db, Settings()) as url:
        yield url


@pytest.fixture
def token_server(tmp_path):
    st = Settings(api_tokens={"tok-alice": "alice", "tok-bob": "bob"})
    with Server(tmp_path / "api-tok.db", st) as url:
        yield url


def test_remember_recall_apply_forget_over_http(open_server):
    with httpx.Client(base_url=open_server, headers={"X-Agent-Id": "build"}) as c:
        r = c.post(
            "/api/memory/remember",
            json={
                "content": "pin tenacity before importing it",
                "type": "success",
                "tags": ["deps"],
                "error": "ModuleNotFoundError: No module named 'x'",
            },
        )
        assert r.status_code == 201
        mid = r.json()["id"]
        hits = c.post("/api/memory/recall", json={"query": "tenacity import", "limit": 5}).json()
        assert hits[0]["memory"]["id"] == mid and "keyword" in hits[0]["explain"]
        assert c.post(f"/api/memory/{mid}/apply", json={"helpful": True}).json()["times_applied"] == 1
        sig = c.post("/api/memory/error-signature", json={"text": "ModuleNotFoundError: No module named 'y'"}).json()
        assert sig["category"] == "import_error" and sig["id"].startswith("err_")
        d = c.post("/api/memory/select-technique", json={"task_id": "T1", "error": "TimeoutError: 3s"}).json()
        assert d["technique"] == "prompt_restructure"
        o = c.post("/api/memory/record-outcome", json={"task_id": "T1", "technique": d["technique"], "success": True})
        assert o.status_code == 201 and o.json()["result"] == "fixed"
        assert c.get("/api/memory/stats").json()["memories"] >= 2
        assert "runs" in c.get("/api/memory/jobs").json()
        assert c.delete(f"/api/memory/{mid}").json() == {"deleted": mid}
        r = c.get(f"/api/memory/{mid}")
        assert r.status_code == 404 and r.json()["error"] == "MemoryNotFoundError"
        assert c.get("/openapi.json").json()["info"]["title"] == "harness-memory"


def test_errors_are_json_with_status_codes(open_server):
    with httpx.Client(base_url=open_server) as c:
        r = c.post("/api/memory/remember", json={"content": "x", "type": "bogus"})
        assert r.status_code == 422 and r.json()["error"] == "ValidationError"  # the schema enumerates the types
        r = c.post("/api/memory/remember", json={"content": "   ", "type": "success"})
        assert r.status_code == 422 and r.json()["error"] == "InvalidInputError"
        r = c.post("/api/memory/recall", json={"query": "x", "limit": 10_000})
        assert r.status_code == 422 and r.json()["error"] == "ValidationError"
        r = c.post("/api/memory/remember", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 422
        r = c.post("/api/memory/remember", json={"content": "y" * 2_000_000, "type": "success"})
        assert r.status_code == 413 and r.json()["error"] == "RequestTooLarge"


def test_agent_identity_comes_from_the_token_and_scope_is_enforced(token_server):
    alice = httpx.Client(base_url=token_server, headers={"Authorization": "Bearer tok-alice"})
    bob = httpx.Client(base_url=token_server, headers={"Authorization": "Bearer tok-bob", "X-Agent-Id": "alice"})
    try:
        assert httpx.get(f"{token_server}/api/memory/stats").status_code == 401
        assert (
            httpx.get(f"{token_server}/api/memory/stats", headers={"Authorization": "Bearer nope"}).status_code == 401
        )
        secret = alice.post(
            "/api/memory/remember", json={"content": "alice private note on the vault", "type": "decision"}
        )
        shared = alice.post(
            "/api/memory/remember", json={"content": "shared note on the vault", "type": "decision", "scope": "global"}
        )
        assert secret.json()["agent_id"] == "alice"
        sid = secret.json()["id"]
        # bob claims to be alice in a header: the token decides, so he sees only the global note
        assert bob.get(f"/api/memory/{sid}").status_code == 404
        assert bob.delete(f"/api/memory/{sid}").status_code == 404
        assert bob.post(f"/api/memory/{sid}/apply", json={"helpful": True}).status_code == 404
        ids = {h["memory"]["id"] for h in bob.post("/api/memory/recall", json={"query": "vault note"}).json()}
        assert ids == {shared.json()["id"]}
        assert alice.get(f"/api/memory/{sid}").status_code == 200
    finally:
        alice.close()
        bob.close()


def test_serve_refuses_a_public_address_without_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_API_TOKEN")}
    p = subprocess.run(
        [sys.executable, "-m", "harness_memory", "serve", "--host", "0.0.0.0", "--db", str(tmp_path / "x.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert p.returncode == 2 and "refusing" in p.stderr


def test_schema_driven_fuzz_finds_no_server_errors(tmp_path):
    import schemathesis
    from hypothesis import HealthCheck, given, settings as hsettings

    with Server(tmp_path / "fuzz.db", Settings()) as url:
        schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
        failures = []
        for result in schema.get_all_operations():
            op = result.ok()
            strategy = op.as_strategy()

            @hsettings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
            @given(case=strategy)
            def check(case):
                resp = case.call(base_url=url, headers={"X-Agent-Id": "fuzzer"})
                if resp.status_code >= 500:
                    failures.append((case.operation.label, resp.status_code, resp.text[:200]))

            check()
        assert failures == []
