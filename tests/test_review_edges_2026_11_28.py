"""Defects an adversarial review of the edges found on 2026-11-28 (CLI, REST, configuration), each pinned by a test
that fails on the code before its fix: secrets in error messages (a mapping's key in a settings error, a URL's
password or key in an embedder's or summariser's error), a document's title and source stored unredacted, a
``file:`` URI taken as a database path, the REST server's own bounds over the configured ones."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from harness_memory import (
    ConfigurationError,
    EmbedderError,
    InvalidInputError,
    MemoryStore,
    OpenAICompatibleEmbedder,
    OpenAICompatibleSummariser,
    Settings,
    SummariserError,
)
from harness_memory.settings import from_environment

SECRET = "tok-9f8e7d6c5b4a-SECRET"


# -- a settings error names the field, never a mapping's key (api_tokens is keyed by the tokens) -----------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("HARNESS_MEMORY_API_TOKENS", json.dumps({SECRET: 42})),
        ("HARNESS_MEMORY_TECHNIQUE_COSTS", json.dumps({SECRET: "a lot"})),
    ],
)
def test_a_settings_error_never_shows_a_mappings_key(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as err:
        from_environment()
    assert SECRET not in str(err.value)
    assert name.removeprefix("HARNESS_MEMORY_").lower() + ".<key>: Input should be a valid" in str(err.value)


def test_a_settings_error_still_names_a_plain_field(monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_MAX_TAGS", "many")
    with pytest.raises(ConfigurationError, match=r"max_tags: "):
        from_environment()


def test_the_cli_prints_no_token_of_a_bad_token_map(tmp_path):
    MemoryStore(tmp_path / "m.db").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    env["HARNESS_MEMORY_API_TOKENS"] = json.dumps({SECRET: 42})
    p = subprocess.run(
        [sys.executable, "-m", "harness_memory", "stats", "--db", str(tmp_path / "m.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode != 0
    assert "ConfigurationError" in p.stderr
    assert SECRET not in p.stdout + p.stderr


# -- an embedder's or a summariser's error names its server without the password or a key in the query ------------


class _Failing(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"unexpected": true}')

    def log_message(self, *args):
        pass


@pytest.fixture
def failing_server():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _Failing)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_an_embedders_error_shows_no_key_of_its_url(failing_server):
    e = OpenAICompatibleEmbedder("m", dimensions=8, base_url=f"http://{failing_server}/v1?api-key={SECRET}")
    with pytest.raises(EmbedderError) as err:
        e.embed_batch(["x"])
    assert "unexpected embeddings response" in str(err.value)
    assert SECRET not in str(err.value) and "api-key=***" in str(err.value)


def test_an_embedders_connection_error_shows_no_password(tmp_path):
    e = OpenAICompatibleEmbedder("m", dimensions=8, base_url=f"http://svc:{SECRET}@127.0.0.1:9/v1", timeout=2)
    with pytest.raises(EmbedderError) as err:
        e.embed_batch(["x"])
    assert SECRET not in str(err.value) and "svc@127.0.0.1:9" in str(err.value)


def test_a_summarisers_error_and_repr_show_no_key_of_its_url(failing_server):
    s = OpenAICompatibleSummariser("m", base_url=f"http://{failing_server}/v1?key={SECRET}", timeout=5)
    assert SECRET not in repr(s)
    with pytest.raises(SummariserError) as err:
        s.summarise(["a"], instruction="b")
    assert SECRET not in str(err.value)


# -- a document's title and source are redacted as its text is -----------------------------------------------------


def test_a_documents_title_and_source_are_redacted(tmp_path):
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"
    with MemoryStore(tmp_path / "m.db") as s:
        rep = s.add_document(
            f"# Deploy with {key}\n\nrun the deploy\n",
            source="https://deploy:Pg5ecretPassw0rd@git.internal/repo",
            agent_id="a",
        )
        for doc in (rep.document, *s.documents(agent_id="b")):
            assert key not in doc.title and "[REDACTED" in doc.title
            assert "Pg5ecretPassw0rd" not in doc.source
        exported = tmp_path / "out.jsonl"
        s.export_jsonl(exported)
    assert key not in exported.read_text() and "Pg5ecretPassw0rd" not in exported.read_text()


def test_redaction_off_keeps_a_documents_title(tmp_path):
    with MemoryStore(tmp_path / "m.db", settings=Settings(redact_secrets=False)) as s:
        rep = s.add_document("# Title password=hunter2hunter2\n\nbody\n", agent_id="a")
    assert "hunter2hunter2" in rep.document.title


# -- a file: URI is no database path -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["file:x.db", "FILE:x.db?mode=ro", "file:/tmp/abs.db", " file:y.db?vfs=unix-none"])
def test_a_file_uri_is_refused_and_creates_nothing(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match="file: URI"):
        MemoryStore(target)
    assert list(tmp_path.iterdir()) == []


def test_a_path_object_named_file_colon_is_that_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with MemoryStore(Path("file:y.db")) as s:
        s.remember("hello world", type="success", agent_id="a")
    assert (tmp_path / "file:y.db").is_file()
    assert not (tmp_path / "y.db").exists()


def test_the_cli_refuses_a_file_uri(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "harness_memory", "init", "--db", "file:x.db"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 2 and "file: URI" in p.stderr
    assert not (tmp_path / "x.db").exists() and "created" not in p.stdout


# -- the REST server bounds content and tags by the settings, not by its own numbers --------------------------------


def test_rest_takes_content_and_tags_up_to_the_configured_limits(tmp_path):
    from tests.test_api import Server

    st = Settings(max_content_bytes=100_000, max_tags=40)
    with Server(tmp_path / "api.db", st) as url, httpx.Client(base_url=url, headers={"X-Agent-Id": "a"}) as c:
        big = c.post("/api/memory/remember", json={"content": "word " * 10_000, "type": "success"})
        assert big.status_code == 201, big.text
        tags = c.post(
            "/api/memory/remember", json={"content": "tagged", "type": "success", "tags": [f"t{i}" for i in range(35)]}
        )
        assert tags.status_code == 201, tags.text
        over = c.post("/api/memory/remember", json={"content": "x" * 100_001, "type": "success"})
        assert over.status_code == 422 and over.json()["error"] == "ContentTooLargeError"
        too_many = c.post(
            "/api/memory/remember", json={"content": "t", "type": "success", "tags": [f"t{i}" for i in range(41)]}
        )
        assert too_many.status_code == 422 and "at most 40 tags" in too_many.text


# -- the command line: a recall gives its answer while another process holds the write lock; a refused command
# -- leaves no new database behind --------------------------------------------------------------------------------


def _cli(*args, cwd=None, env_extra=None, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    env.update({"HARNESS_MEMORY_CLI_SERVER": "0", **(env_extra or {})})
    return subprocess.run(
        [sys.executable, "-m", "harness_memory", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


_HOLD = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("UPDATE memories SET importance = importance WHERE id = 1")
print("locked", flush=True)
sys.stdin.readline()
c.execute("COMMIT")
"""


def test_a_cli_recall_answers_while_another_process_holds_the_write_lock(tmp_path):
    db = str(tmp_path / "m.db")
    assert _cli("remember", "docker build needs buildx", "-t", "failure", "-a", "x", "--db", db).returncode == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        p = _cli(
            "recall", "docker", "-a", "x", "--db", db, "--json", env_extra={"HARNESS_MEMORY_BUSY_TIMEOUT_MS": "1500"}
        )
    finally:
        holder.communicate("\n", timeout=30)
    assert p.returncode == 0, p.stderr
    assert [h["memory"]["content"] for h in json.loads(p.stdout)] == ["docker build needs buildx"]
    assert "bookkeeping" in p.stderr and "was not written" in p.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "", "-t", "failure", "-a", "x"),
        ("remember", "hi", "-t", "bogus", "-a", "x"),
        ("import", "does-not-exist.jsonl"),
        ("import", "v99.jsonl"),
        ("signature", "does-not-exist.log"),
    ],
    ids=["empty content", "unknown type", "missing file", "newer export", "missing log"],
)
def test_a_refused_command_leaves_no_new_database(tmp_path, args):
    (tmp_path / "v99.jsonl").write_text('{"format": "harness-memory", "version": 99}\n')
    p = _cli(*args, "--db", str(tmp_path / "new.db"), cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and p.stderr.startswith("error: ")
    assert not (tmp_path / "new.db").exists()


def test_a_registered_type_is_taken_for_a_new_database(tmp_path):
    p = _cli(
        "remember",
        "hi",
        "-t",
        "runbook",
        "-a",
        "x",
        "--db",
        str(tmp_path / "new.db"),
        env_extra={"HARNESS_MEMORY_EXTRA_TYPES": "runbook"},
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "new.db").exists() and "created" in p.stderr


def test_signature_says_it_created_a_database(tmp_path):
    (tmp_path / "e.txt").write_text("ValueError: x\n")
    p = _cli("signature", str(tmp_path / "e.txt"), "--db", str(tmp_path / "new.db"))
    assert p.returncode == 0 and "created" in p.stderr


# -- a task signature holds no secret; the terminal gets no control characters from a memory -----------------------

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def test_a_task_signature_given_or_derived_holds_no_secret(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        m = s.remember("deployed", type="success", agent_id="a", error="x failed", task_signature=f"deploy {TOKEN}")
        assert TOKEN not in (m.task_signature or "") and "[REDACTED" in (m.task_signature or "")
        derived = s.task_signature(f"deploy with token {TOKEN} to prod")
        assert "abcdefghij" not in derived and "ghp" not in derived
        assert s.task_signature("deploy with token to prod") == derived  # the secret's words are not terms
    assert s.task_signature("fix flaky login test in auth module") == "any:any:any:auth-flaky-login-module-test"


def test_the_terminal_gets_no_control_characters_from_a_memory(tmp_path):
    db = str(tmp_path / "m.db")
    assert (
        _cli("remember", "red \x1b[31mALERT\x1b[0m and a bell \x07", "-t", "success", "-a", "x", "--db", db).returncode
        == 0
    )
    for args in (("recall", "ALERT", "-a", "x"), ("show", "1")):
        p = _cli(*args, "--db", db)
        assert p.returncode == 0, p.stderr
        assert "\x1b" not in p.stdout and "\x07" not in p.stdout
        assert "\\x1b" in p.stdout  # shown, visibly
    p = _cli("show", "1", "--db", db, "--json")
    assert json.loads(p.stdout)["content"] == "red \x1b[31mALERT\x1b[0m and a bell \x07"  # the data itself unchanged


def test_a_nested_settings_error_names_its_fields_and_hides_a_mappings_key(monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_MAINTENANCE", json.dumps({"decay_rates": {SECRET: "fast"}}))
    with pytest.raises(ConfigurationError) as err:
        from_environment()
    assert "maintenance.decay_rates.<key>: Input should be a valid number" in str(err.value)
    assert SECRET not in str(err.value)
    monkeypatch.delenv("HARNESS_MEMORY_MAINTENANCE")
    monkeypatch.setenv("HARNESS_MEMORY_RANKING", json.dumps({"vector": "heavy"}))
    with pytest.raises(ConfigurationError, match=r"ranking\.vector: Input should be a valid number"):
        from_environment()
