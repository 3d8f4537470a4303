"""The command line, run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def run(*args, db=None, check=True, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    cmd = [sys.executable, "-m", "harness_memory", *args]
    if db is not None:
        cmd += ["--db", str(db)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}: {p.stdout}\n{p.stderr}")
    return p


def test_cli_remember_recall_show_forget_stats(tmp_path):
    db = tmp_path / "cli.db"
    run("init", db=db)
    m = json.loads(
        run(
            "remember",
            "pip install fails behind the proxy; set HTTPS_PROXY",
            "--type",
            "failure",
            "--agent",
            "a1",
            "--tag",
            "pip",
            "--json",
            db=db,
        ).stdout
    )
    assert m["type"] == "failure" and m["tags"] == ["pip"]
    hits = json.loads(run("recall", "proxy pip install", "--agent", "a1", "--json", db=db).stdout)
    assert hits[0]["memory"]["id"] == m["id"] and "keyword" in hits[0]["explain"]
    human = run("recall", "proxy pip install", "--agent", "a1", "--explain", db=db).stdout
    assert "HTTPS_PROXY" in human and "match" in human
    shown = json.loads(run("show", str(m["id"]), "--json", db=db).stdout)
    assert shown["access_count"] == 2
    stats = json.loads(run("stats", "--json", db=db).stdout)
    assert stats["memories"] == 1
    run("forget", str(m["id"]), db=db)
    assert json.loads(run("stats", "--json", db=db).stdout)["memories"] == 0


def test_cli_errors_are_clear_and_exit_2(tmp_path):
    db = tmp_path / "cli.db"
    p = run("remember", "x", "--type", "nonsense", "--agent", "a", db=db, check=False)
    assert p.returncode == 2 and "UnknownMemoryTypeError" in p.stderr and "Traceback" not in p.stderr
    assert not db.exists()  # a refused command leaves no new database behind
    run("init", db=db)
    p = run("show", "12345", db=db, check=False)
    assert p.returncode == 2 and "MemoryNotFoundError" in p.stderr


def test_cli_export_import_jsonl_and_markdown(tmp_path):
    db, db2 = tmp_path / "a.db", tmp_path / "b.db"
    run("remember", "alpha memory", "--type", "success", "--agent", "a", db=db)
    run("remember", "beta memory", "--type", "decision", "--agent", "a", db=db)
    run("export", str(tmp_path / "x.jsonl"), db=db)
    rep = json.loads(run("import", str(tmp_path / "x.jsonl"), "--json", db=db2).stdout)
    assert rep["inserted"] == 2
    md = tmp_path / "MEMORY.md"
    run("export", str(md), "--format", "markdown", "--agent", "a", db=db)
    md.write_text(md.read_text().replace("beta memory", "beta memory, edited"))
    rep = json.loads(run("import", str(md), "--format", "markdown", "--agent", "a", "--json", db=db).stdout)
    assert rep["updated"] == 1


def test_cli_default_db_from_environment(tmp_path):
    env = {"HARNESS_MEMORY_DB": str(tmp_path / "env.db")}
    run("remember", "from env", "--type", "success", "--agent", "a", env_extra=env)
    assert (tmp_path / "env.db").exists()


def test_cli_reembed(tmp_path):
    db = tmp_path / "r.db"
    run("remember", "gamma memory", "--type", "success", "--agent", "a", db=db)
    p = run("stats", db=db, env_extra={"HARNESS_MEMORY_EMBEDDER": "hashing:128"}, check=False)
    assert p.returncode == 2 and "reembed" in p.stderr
    out = json.loads(run("reembed", "--embedder", "hashing:128", "--json", db=db).stdout)
    assert out == {"reembedded": 1, "embedder": "hashing-v1:128"}
    assert run("stats", db=db, env_extra={"HARNESS_MEMORY_EMBEDDER": "hashing:128"}).returncode == 0


@pytest.mark.parametrize("as_json", [False, True])
def test_demo_runs_offline_end_to_end(tmp_path, as_json):
    db = tmp_path / "demo.db"
    args = ["demo", "--db", str(db)] + (["--json"] if as_json else [])
    p = run(*args)
    if as_json:
        rep = json.loads(p.stdout)
        assert len(rep["stored"]) == 6 and rep["recalled"]
        assert "Add the missing package" in rep["recalled"][0]["content"]
        assert rep["applied"]["times_applied"] == 2
    else:
        assert "seen this error before? yes" in p.stdout and "applied #" in p.stdout
    run(*args)  # re-runnable on the same file
