"""Documents (issue 14): structural chunking with a size bound, chunks as recallable memories linked
to their document, re-indexing only changed chunks, forgetting, preload in on_task_start, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_memory import InvalidInputError, MemoryNotFoundError
from harness_memory.documents import chunk_text
from harness_memory.errors import FileAccessError

MD = """# Deploying the service

Intro paragraph about deployments and the release train.

## Prerequisites

You need the VPN and a kubeconfig for the staging cluster.

```bash
kubectl config use-context staging

kubectl get pods
```

## Rolling back

If the canary fails, run `make rollback` within ten minutes.
Rollbacks page the on-call engineer.
"""

PY = '''"""Module docstring."""

import os


def alpha(x):
    return x + 1


# helper comment
@decorator
def beta(y):
    return y * 2


class Gamma:
    def method(self):
        return 3
'''


def test_markdown_splits_on_headings_and_keeps_fences_whole():
    kind, chunks = chunk_text(MD, source="deploy.md", limit=400)
    assert kind == "markdown"
    heads = [c.heading for c in chunks]
    assert heads[0] == "Deploying the service" and "Deploying the service > Rolling back" in heads
    fence = next(c.text for c in chunks if "kubectl config" in c.text)
    assert "kubectl get pods" in fence  # the blank line inside the fence did not split it
    assert all(len(c.text) <= 400 for c in chunks)
    assert [c.position for c in chunks] == list(range(len(chunks)))


def test_code_splits_on_definitions_and_text_on_paragraphs():
    kind, chunks = chunk_text(PY, source="m.py", limit=60)
    assert kind == "code"
    assert any(c.text.startswith("# helper comment\n@decorator\ndef beta") for c in chunks)
    assert any(c.text.startswith("class Gamma") for c in chunks)
    assert all(len(c.text) <= 60 for c in chunks)
    text = "\n\n".join(f"Paragraph {k} " + "word " * 30 for k in range(10))
    kind, chunks = chunk_text(text, limit=500)
    assert kind == "text" and all(len(c.text) <= 500 for c in chunks) and len(chunks) >= 3
    long_line = "x" * 5000
    assert all(len(c.text) <= 300 for c in chunk_text(long_line, limit=300)[1])


def test_add_recall_and_reindex_only_changed_chunks(store, tmp_path):
    path = tmp_path / "deploy.md"
    path.write_text(MD)
    rep = store.add_document(path, tags=["ops"])
    doc = rep.document
    assert (doc.kind, doc.title, doc.source, rep.added) == (
        "markdown",
        "Deploying the service",
        str(path.resolve()),
        doc.chunks,
    )
    hits = store.recall("how do I roll back a failed canary", types=["document"], agent_id="anyone")
    top = hits[0].memory
    assert "make rollback" in top.content and top.type == "document" and top.metadata["document"] == doc.uid
    assert top.tags == ["ops"] and top.scope == "global"
    ids_before = {
        r[0]: r[1]
        for r in store._core.backend.execute(
            "SELECT position, memory_id FROM document_chunks WHERE document_id = ?", (doc.id,)
        )
    }
    assert store.add_document(path, tags=["ops"]).skipped  # same text: nothing to do
    path.write_text(
        MD.replace("within ten minutes", "within five minutes") + "\n## New section\n\nBrand new text "
        "about feature flags and dark launches.\n"
    )
    again = store.add_document(path, tags=["ops"])
    assert again.added == 2 and again.removed == 1 and again.unchanged == doc.chunks - 1
    ids_after = {
        r[0]: r[1]
        for r in store._core.backend.execute(
            "SELECT position, memory_id FROM document_chunks WHERE document_id = ?", (doc.id,)
        )
    }
    assert sum(1 for p, m in ids_after.items() if ids_before.get(p) == m) == doc.chunks - 1  # kept, not re-embedded
    assert (
        store.recall("within ten minutes rollback", types=["document"], agent_id="x")[0].memory.content.count(
            "five minutes"
        )
        == 1
    )
    n = store._core.backend.execute("SELECT COUNT(*) FROM memories WHERE memory_type = 'document'").fetchone()[0]
    assert n == again.document.chunks
    assert store.forget_document(doc.id) == again.document.chunks
    assert store._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
    assert store.documents() == []
    with pytest.raises(MemoryNotFoundError):
        store.forget_document(doc.id)


def test_text_documents_sources_and_scopes(store):
    a = store.add_document(
        "Plain notes.\n\nThe cache key includes the tenant id.", agent_id="a", scope="agent", title="notes"
    )
    assert a.document.source.startswith("text:") and a.document.kind == "text"
    assert store.recall("cache key tenant", agent_id="b", types=["document"]) == []  # private to a
    assert store.recall("cache key tenant", agent_id="a", types=["document"])
    assert [d.id for d in store.documents(agent_id="b")] == []
    assert [d.id for d in store.documents(agent_id="a")] == [a.document.id]
    with pytest.raises(MemoryNotFoundError):
        store.forget_document(a.document.id, agent_id="b")
    # chunks are never merged with other memories, even identical ones
    m = store.remember("The cache key includes the tenant id.", type="document", agent_id="a", scope="agent")
    assert m.id not in {r[0] for r in store._core.backend.execute("SELECT memory_id FROM document_chunks")}


def test_bad_input_changes_nothing(store, tmp_path):
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe\x00bad")
    before = store._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    for bad, err in (
        (tmp_path / "bin.md", InvalidInputError),
        ("", InvalidInputError),
        ("  \n ", InvalidInputError),
        (5, InvalidInputError),
        (tmp_path / "missing.md", FileAccessError),
        (tmp_path, InvalidInputError),
        ("a\x00b", InvalidInputError),
    ):
        with pytest.raises(err):
            store.add_document(bad)
    for kw in ({"scope": "world"}, {"tags": "x"}, {"namespace": ""}, {"metadata": []}, {"title": 3}):
        with pytest.raises(InvalidInputError):
            store.add_document("some text here", **kw)
    assert store._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == before
    assert store.documents() == []


def test_on_task_start_preloads_document_chunks_within_budget(store):
    store.add_document(MD, source="deploy.md")
    task = {"id": "T1", "title": "Roll back the canary deploy", "agent_id": "ops"}
    ctx = store.on_task_start(task, documents=2)
    assert "### Reference documents" in ctx.prompt and "make rollback" in ctx.prompt
    assert len([i for i in ctx.injected]) >= 1
    small = store.on_task_start(task, documents=2, budget_chars=300)
    assert len(small.prompt) <= 300
    assert "Reference documents" not in store.on_task_start(task).prompt  # off unless asked


def test_cli_add_doc_files_folders_and_globs(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text(MD)
    (root / "sub" / "b.py").write_text(PY)
    (root / "skip.bin").write_bytes(b"\x00\x01")
    env = {**os.environ, "HARNESS_MEMORY_DB": str(tmp_path / "cli.db")}

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "harness_memory", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    r = cli("add-doc", str(root), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sorted(Path(d["source"]).name for d in out["documents"]) == ["a.md", "b.py"]
    assert out["failed"] == [] and out["chunks_added"] > 0
    r = cli("add-doc", str(root / "**" / "*.py"), "--json")
    assert json.loads(r.stdout)["documents"][0]["skipped"] is True
    bad = cli("add-doc", str(tmp_path / "nothing-here-*.md"))
    assert bad.returncode == 2 and "no files" in bad.stderr


def test_clear_removes_a_namespaces_documents(store):
    store.add_document(MD, source="deploy.md", namespace="run-1")
    keep = store.add_document(MD, source="deploy.md", namespace="run-2")
    store.clear("run-1")
    assert [d.id for d in store.documents()] == [keep.document.id]
    assert store._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == keep.document.chunks


def test_rest_documents_are_text_and_scoped(tmp_path):
    import httpx

    from harness_memory import Settings
    from test_api import Server

    secret_file = tmp_path / "server-secret.md"
    secret_file.write_text("# server only\n\nnot for callers\n")
    settings = Settings(api_tokens={"tok-a": "agent-a", "tok-b": "agent-b"})
    with Server(tmp_path / "api.db", settings) as url, httpx.Client(base_url=url, timeout=30) as h:
        ha, hb = {"Authorization": "Bearer tok-a"}, {"Authorization": "Bearer tok-b"}
        r = h.post("/api/documents", headers=ha, json={"text": MD, "source": "deploy.md", "scope": "agent"})
        assert r.status_code == 201, r.text
        doc = r.json()["document"]
        assert doc["agent_id"] == "agent-a" and doc["chunks"] >= 3
        path_as_text = h.post("/api/documents", headers=ha, json={"text": str(secret_file)}).json()
        assert path_as_text["document"]["chunks"] == 1 and path_as_text["document"]["source"].startswith("text:")
        found = h.post("/api/memory/recall", headers=ha, json={"query": "not for callers", "types": ["document"]})
        assert all("not for callers" not in x["memory"]["content"] for x in found.json())  # never read from disk
        seen_by_b = [d["id"] for d in h.get("/api/documents", headers=hb).json()]
        assert seen_by_b == [path_as_text["document"]["id"]]  # the global one; a's private document is not listed
        assert h.delete(f"/api/documents/{doc['id']}", headers=hb).status_code == 404
        assert h.delete(f"/api/documents/{doc['id']}", headers=ha).json()["chunks"] == doc["chunks"]
        r = h.post(
            "/api/memory/remember",
            headers=ha,
            json={"content": "Caroline went to the support group on Friday.", "type": "episode", "thread_id": "t1"},
        )
        assert r.status_code == 201, r.text
        h.post(
            "/api/memory/remember",
            headers=ha,
            json={"content": "Caroline said the support group helped her.", "type": "episode", "thread_id": "t1"},
        )
        assert h.post("/api/reflect", headers=hb, json={"thread_id": "t1"}).json() == []  # not b's episodes
        made = h.post("/api/reflect", headers=ha, json={"thread_id": "t1"}).json()
        assert made and all(m["agent_id"] == "agent-a" for m in made)


def test_export_import_keeps_documents_and_their_chunks(store, tmp_path):
    from harness_memory import MemoryStore

    path = tmp_path / "deploy.md"
    path.write_text(MD)
    doc = store.add_document(path, tags=["ops"]).document
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    assert sum(json.loads(ln).get("record") == "document" for ln in out.read_text().splitlines()[1:]) == 1
    with MemoryStore(tmp_path / "copy.db") as copy:
        report = copy.import_jsonl(out)
        assert report.documents == 1
        (got,) = copy.documents()
        assert (got.uid, got.source, got.chunks, got.title) == (doc.uid, doc.source, doc.chunks, doc.title)
        links = copy._core.backend.execute("SELECT COUNT(*) FROM document_chunks").fetchone()[0]
        assert links == doc.chunks
        assert copy.add_document(path, tags=["ops"]).skipped  # the same source: nothing to re-index
        assert copy.import_jsonl(out).documents == 0  # idempotent
        assert copy.forget_document(got.id) == doc.chunks


def test_a_bad_document_record_imports_nothing(store, tmp_path):
    path = tmp_path / "deploy.md"
    path.write_text(MD)
    store.add_document(path)
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    lines = out.read_text().splitlines()
    bad = [json.loads(ln) for ln in lines]
    for rec in bad:
        if rec.get("record") == "document":
            rec["kind"] = "spreadsheet"
    out.write_text("\n".join(json.dumps(r) for r in bad) + "\n")
    from harness_memory import ImportFormatError, MemoryStore

    with MemoryStore(tmp_path / "copy.db") as copy:
        with pytest.raises(ImportFormatError, match="kind"):
            copy.import_jsonl(out)
        assert copy._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
