"""Signing a whole log from the command line and over REST, with a passing baseline (issue 8)."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from harness_memory import Settings
from test_api import Server

FAILING = (
    "##[group]Run make\n"
    "2025-03-04T10:11:12.1234567Z src/util.c:3:1: error: deprecated API (tolerated)\n"
    "2025-03-04T10:11:12.2234567Z \x1b[31msrc/main.c:14:5: error: unknown type name 'cfg_t'\x1b[0m\n"
    "2025-03-04T10:11:12.3234567Z make: *** [Makefile:12: build/main.o] Error 1\n"
    "##[error]Process completed with exit code 2.\n"
)
PASSING = "##[group]Run make\n2025-03-03T09:00:00.0000000Z src/util.c:3:1: error: deprecated API (tolerated)\nok\n"


def _cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "harness_memory", *args], capture_output=True, timeout=120, input=stdin
    )


def test_cli_signature_of_a_file_with_a_baseline(tmp_path):
    log, base, db = tmp_path / "fail.log", tmp_path / "pass.log", tmp_path / "m.db"
    log.write_bytes(FAILING.replace("\n", "\r\n").encode())
    base.write_bytes(PASSING.encode())
    p = _cli("signature", str(log), "--db", str(db), "--json")
    assert p.returncode == 0, p.stderr
    plain = json.loads(p.stdout)
    assert "deprecated API" in plain["message"] and plain["excerpt_lines"] == [2, 2]
    p = _cli("signature", str(log), "--baseline", str(base), "--db", str(db), "--json")
    got = json.loads(p.stdout)
    assert "unknown type name" in got["message"] and got["excerpt_lines"][0] == 3
    assert got["category"] == "compile_error"
    p = _cli("signature", "-", "--db", str(db), stdin=FAILING.encode())
    assert p.returncode == 0 and b"lines 2-" in p.stdout
    p = _cli("signature", str(tmp_path / "missing.log"), "--db", str(db))
    assert p.returncode == 2 and b"Traceback" not in p.stderr and p.stderr.count(b"\n") == 1


def test_rest_signature_with_a_baseline(tmp_path):
    with (
        Server(tmp_path / "api.db", Settings()) as url,
        httpx.Client(base_url=url, headers={"X-Agent-Id": "ci"}, timeout=60) as c,
    ):
        r = c.post("/api/memory/error-signature", json={"text": FAILING, "baseline": PASSING})
        assert r.status_code == 200, r.text
        body = r.json()
        assert "unknown type name" in body["message"] and body["excerpt_lines"] == [3, 3]
        big = "ok\n" * 150_000 + FAILING  # a whole log within the body limit (JSON doubles each \\n)
        r = c.post("/api/memory/error-signature", json={"text": big})
        assert r.status_code == 200 and r.json()["excerpt_lines"][0] == 150_002
