"""The first hour on the command line (issue 16): no silent dead ends. Real subprocesses, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness_memory import MemoryStore, __version__


def hm(*args, env_extra=None, stdin=None):
    env = {**os.environ, **(env_extra or {})}
    if "HARNESS_MEMORY_EMBEDDER" not in (env_extra or {}):
        env.pop("HARNESS_MEMORY_EMBEDDER", None)
    return subprocess.run(
        [sys.executable, "-m", "harness_memory", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        input=stdin,
        check=False,
    )


@pytest.mark.parametrize(
    "cmd",
    [
        ["recall", "x"],
        ["show", "1"],
        ["stats"],
        ["export", "OUT"],
        ["jobs", "status"],
        ["forget", "1"],
        ["mcp"],
        ["serve"],
        ["select-technique", "T1"],
    ],
)
def test_read_commands_refuse_a_missing_database_and_create_nothing(tmp_path, cmd):
    db = tmp_path / "no" / "such" / "dir" / "x.db"
    args = [str(tmp_path / "out.jsonl") if a == "OUT" else a for a in cmd]
    p = hm(*args, "--db", str(db))
    assert p.returncode == 2
    line = p.stderr.strip()
    assert "\n" not in line and f"harness-memory init --db {db}" in line and "Traceback" not in p.stderr
    assert not (tmp_path / "no").exists() and not (tmp_path / "out.jsonl").exists()


def test_json_errors_are_json(tmp_path):
    p = hm("recall", "x", "--db", str(tmp_path / "typo.db"), "--json")
    assert p.returncode == 2
    err = json.loads(p.stdout)
    assert err["error"] == "DatabaseOpenError" and "harness-memory init" in err["detail"] and err["exit_code"] == 2


def test_creating_commands_say_where_and_bad_files_are_one_line(tmp_path):
    db = tmp_path / "new" / "m.db"
    p = hm(
        "remember",
        "pip fails behind the proxy [api]",
        "-t",
        "failure",
        "-a",
        "build",
        "--db",
        str(db),
        "--metadata",
        '{"ticket": "OPS-1"}',
        "--json",
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["metadata"] == {"ticket": "OPS-1"}
    assert p.stderr.strip() == f"created {db}"
    again = hm("remember", "another", "-t", "failure", "-a", "build", "--db", str(db))
    assert again.returncode == 0 and "created" not in again.stderr
    assert "[api]" in hm("show", "1", "--db", str(db)).stdout  # console markup does not eat the text
    for bad in ("[1]", "not json"):
        p = hm("remember", "x", "-t", "failure", "-a", "b", "--db", str(db), "--metadata", bad)
        assert p.returncode == 2 and "--metadata must be a JSON object" in p.stderr
    (tmp_path / "notdb.db").write_text("hello")
    for target in (tmp_path, tmp_path / "notdb.db"):
        p = hm("stats", "--db", str(target))
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "DatabaseOpenError" in p.stderr
    assert (tmp_path / "notdb.db").read_text() == "hello"


def test_version_short_help_flags_and_extras_in_help():
    v = hm("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"harness-memory {__version__}"
    h = hm("-h")
    assert h.returncode == 0 and "Usage:" in h.stdout
    assert "(extra [api])" in h.stdout and "(extra [mcp])" in h.stdout and "(extra )" not in h.stdout
    r = hm("recall", "-h")
    assert "--json " in r.stdout and "<bool>" not in r.stdout  # a plain flag
    assert "agent id" in r.stdout


def test_recall_says_when_other_agents_hold_memories(tmp_path):
    db = str(tmp_path / "a.db")
    assert hm("remember", "the proxy needs HTTPS_PROXY", "-t", "failure", "-a", "build", "--db", db).returncode == 0
    p = hm("recall", "proxy", "--db", db)
    assert "no memories matched" in p.stdout
    assert "1 memory of other agents" in " ".join(p.stderr.split()) and "--agent" in p.stderr
    assert "HTTPS_PROXY" not in p.stderr  # counts only
    seen = hm("recall", "proxy", "-a", "build", "--db", db)
    assert "HTTPS_PROXY" in seen.stdout and "other agents" not in seen.stderr


def test_jobs_status_counts_are_objects_and_plurals(tmp_path):
    db = str(tmp_path / "j.db")
    hm("remember", "one memory", "-t", "failure", "-a", "a", "--db", db)
    assert hm("jobs", "run", "expire", "--db", db).returncode == 0
    st = json.loads(hm("jobs", "status", "--db", db, "--json").stdout)
    assert isinstance(st["runs"][0]["counts"], dict) and "expired" in st["runs"][0]["counts"]
    assert "exported 1 memory to" in hm("export", str(tmp_path / "e.jsonl"), "--db", db).stdout
    assert "1 memory in 1 namespace;" in hm("stats", "--db", db).stdout


def test_reembed_is_remembered_by_the_database(tmp_path):
    db = str(tmp_path / "r.db")
    hm("remember", "pip fails behind the proxy", "-t", "failure", "-a", "a", "--db", db)
    out = json.loads(hm("reembed", "--embedder", "hashing:128", "--json", "--db", db).stdout)
    assert out == {"reembedded": 1, "embedder": "hashing-v1:128"}
    p = hm("recall", "proxy", "-a", "a", "--db", db, "--json")  # no HARNESS_MEMORY_EMBEDDER: the recorded one
    assert p.returncode == 0 and json.loads(p.stdout)[0]["memory"]["content"].startswith("pip")
    bad = hm("recall", "proxy", "-a", "a", "--db", db, env_extra={"HARNESS_MEMORY_EMBEDDER": "hashing:256"})
    assert bad.returncode == 2 and "EmbedderMismatchError" in bad.stderr
    assert "hashing-v1:128" in bad.stderr and "hashing-v1:256" in bad.stderr and "reembed" in bad.stderr


def test_learning_verbs(tmp_path):
    db = str(tmp_path / "l.db")
    err = "TimeoutError: job 17 timed out after 30s"
    rec = hm(
        "outcome",
        "T1",
        "decomposition",
        "--success",
        "-e",
        err,
        "-a",
        "build",
        "--notes",
        "split the batch",
        "--db",
        db,
        "--json",
    )
    assert rec.returncode == 0, rec.stderr
    assert json.loads(rec.stdout)["result"] == "fixed"
    pick = json.loads(hm("select-technique", "T2", "--error-file", "-", "--db", db, "--json", stdin=err).stdout)
    assert pick["technique"] == "decomposition" and pick["reason"]
    seen = hm("has-seen", "-a", "build", "-e", "TimeoutError: job 99 timed out after 45s", "--db", db, "--json")
    assert seen.returncode == 0 and json.loads(seen.stdout)["seen"] is True
    unseen = hm("has-seen", "-a", "build", "-e", "KeyError: 'zebra'", "--db", db)
    assert unseen.returncode == 1 and "not seen" in unseen.stdout
    with MemoryStore(db) as s:
        mid = s.recall("split the batch", agent_id="build", record=False)[0].memory.id
    applied = json.loads(hm("apply", str(mid), "--unhelpful", "-a", "build", "--db", db, "--json").stdout)
    assert applied["times_applied"] == 1 and applied["times_successful"] == 0
    both = hm("select-technique", "T3", "-e", "x", "--error-file", "-", "--db", db, stdin="y")
    assert both.returncode == 2 and "not both" in both.stderr
    sig = json.loads(hm("signature", "-", "--db", db, "--json", stdin=err).stdout)
    assert sig["category"] == "timeout"
