"""REST privacy: stats and task ids scoped to the caller, an admin token, non-ASCII tokens.
A real uvicorn server on loopback, a real HTTP client."""

from __future__ import annotations

import socket

import httpx
import pytest

from harness_memory import Settings
from test_api import Server

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


@pytest.fixture
def server(tmp_path):
    st = Settings(api_tokens=TOKENS, api_admin_token="tok-admin")
    with Server(tmp_path / "priv.db", st) as url:
        yield url


def _client(url, token, **headers):
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}", **headers}, timeout=30)


def test_stats_show_only_what_the_caller_may_see(server):
    with (
        _client(server, "tok-alice") as alice,
        _client(server, "tok-bob") as bob,
        _client(server, "tok-admin") as admin,
    ):
        for i in range(3):
            assert (
                alice.post(
                    "/api/memory/remember", json={"content": f"alice private {i}", "type": "decision"}
                ).status_code
                == 201
            )
        alice.post("/api/memory/remember", json={"content": "alice shared", "type": "decision", "scope": "global"})
        bob.post("/api/memory/remember", json={"content": "bob private", "type": "failure"})
        mid = bob.post("/api/memory/recall", json={"query": "bob private"}).json()[0]["memory"]["id"]
        bob.post(f"/api/memory/{mid}/apply", json={"helpful": True})
        alice.post("/api/memory/recall", json={"query": "alice private"})

        b = bob.get("/api/memory/stats").json()
        assert b["memories"] == 2  # its own and the global one
        agents = {row["agent_id"] for row in b["by_agent_type"]}
        assert agents == {"bob", None}  # alice's global memory counts, her id does not show
        assert "alice" not in str(b)
        assert b["access_log"] == {"query": 1, "applied": 1}  # bob's own log rows only

        a = alice.get("/api/memory/stats").json()
        assert a["memories"] == 4 and "bob" not in str(a)

        everything = admin.get("/api/memory/stats").json()
        assert everything["memories"] == 5
        assert {row["agent_id"] for row in everything["by_agent_type"]} == {"alice", "bob"}


def test_select_technique_never_reveals_another_agents_attempts(server):
    with (
        _client(server, "tok-alice") as alice,
        _client(server, "tok-bob") as bob,
        _client(server, "tok-admin") as admin,
    ):
        err = "TimeoutError: the build step took longer than 600s"
        for tech in ("prompt_restructure", "decomposition"):
            r = alice.post(
                "/api/memory/record-outcome", json={"task_id": "T-7", "technique": tech, "success": False, "error": err}
            )
            assert r.status_code == 201 and r.json()["task_id"] == "T-7"  # the caller's own name comes back
        mine = alice.post("/api/memory/select-technique", json={"task_id": "T-7", "error": err}).json()
        assert set(mine["tried"]) == {"prompt_restructure", "decomposition"}
        assert "@" not in mine["reason"]
        theirs = bob.post("/api/memory/select-technique", json={"task_id": "T-7", "error": err}).json()
        assert theirs["tried"] == []
        assert "prompt_restructure" not in theirs["reason"] and "decomposition" not in theirs["reason"]
        # bob's own attempts on "T-7" are his and do not touch alice's
        bob.post("/api/memory/record-outcome", json={"task_id": "T-7", "technique": "fresh_start", "success": False})
        again = alice.post("/api/memory/select-technique", json={"task_id": "T-7", "error": err}).json()
        assert set(again["tried"]) == {"prompt_restructure", "decomposition"}
        # an admin uses task ids as stored: the scoped ones are not guessable from the name alone
        assert admin.post("/api/memory/select-technique", json={"task_id": "T-7"}).json()["tried"] == []


def _raw_request(port: int, auth: bytes) -> bytes:
    """A request with raw header bytes, as a client that sends UTF-8 in a header would."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(
            b"GET /api/memory/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
            + auth
            + b"\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


@pytest.mark.parametrize(
    "auth",
    [
        "Bearer tok-\u00e9lice".encode("utf-8"),
        "Bearer tok-alice\u00ff".encode("latin-1"),
        "Bearer \u2603\u2603".encode("utf-8"),
        b"Bearer \x80\x81\x82",
        b"Basic \xc3\xa9",
        b"Bearer",
        b"Bearer  ",
    ],
)
def test_a_malformed_or_non_ascii_token_is_a_401(server, auth):
    port = int(server.rsplit(":", 1)[1])
    reply = _raw_request(port, auth)
    status = reply.split(b"\r\n", 1)[0]
    assert b" 401 " in status, reply[:300]
    assert b'"error"' in reply  # a JSON body, not a reset connection
    # the server is still fine
    with _client(server, "tok-alice") as alice:
        assert alice.get("/api/memory/stats").status_code == 200


def test_the_bearer_scheme_is_case_insensitive(server):
    for scheme in ("bearer", "BEARER", "Bearer"):
        r = httpx.get(f"{server}/api/memory/stats", headers={"Authorization": f"{scheme} tok-bob"})
        assert r.status_code == 200
    assert httpx.get(f"{server}/api/memory/stats", headers={"Authorization": "Token tok-bob"}).status_code == 401


def test_task_ids_that_would_not_fit_once_scoped_are_refused(server):
    with _client(server, "tok-alice") as alice:
        r = alice.post("/api/memory/select-technique", json={"task_id": "x" * 190})
        assert r.status_code == 422
        r = alice.post("/api/memory/select-technique", json={"task_id": "x" * 183})
        assert r.status_code == 200


HOSTILE_BODIES = [
    ('{"content": "x", "type": "success", "metadata": ' + '{"a": ' * 3000 + "1" + "}" * 3000 + "}", 400),
    ('{"content": "x", "type": "success", "metadata": ' + '{"a": ' * 100 + "1" + "}" * 100 + "}", 422),
    ('{"content": "x", "type": "success", "metadata": {"n": 1e400}}', 422),
    ('{"content": "x", "type": "success", "importance": NaN}', 422),
    ('{"content": "\\ud800", "type": "success"}', 422),
    ('{"content": "a\\u0000b", "type": "success"}', 422),
    # 40 distinct tags, past max_tags (the store's bound since the REST model's own 32 went: repeated tags are one)
    ('{"content": "x", "type": "success", "tags": [' + ",".join(f'"t{i}"' for i in range(40)) + "]}", 422),
    ('{"content": "x", "type": "success", "ttl": 60}', 422),  # a field the body does not define
    ('{"content": "x", "type": "success", "ttl_seconds": 1e300}', 422),
    ("[" * 5000 + "]" * 5000, 400),
    ("null", 422),
]


@pytest.mark.parametrize("body,status", HOSTILE_BODIES, ids=[str(i) for i in range(len(HOSTILE_BODIES))])
def test_hostile_bodies_get_json_errors(server, body, status):
    with _client(server, "tok-alice") as alice:
        r = alice.post("/api/memory/remember", content=body.encode(), headers={"content-type": "application/json"})
        assert r.status_code == status, r.text
        assert "error" in r.json() and r.json()["error"] != "InternalError"
        assert alice.get("/api/memory/stats").json()["memories"] == 0  # nothing was written
