"""Review of issues 8 and 11's new code: what it computes does not depend on the process. The failure lexicon's
categories, the miner's grouping by evidence (ids and templates, on a real SQLite file) and the mmh3 hashing
embedder's vectors are the same in two processes started with different ``PYTHONHASHSEED`` (string hashing, and
so set and frozenset order, differ between them), for ASCII and non-ASCII text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LINES = [
    "deploy: open /srv/app/data.bin: EACCES",
    "acme-sync: could not render page (ECONNREFUSED)",
    "zorp: upload asset failed: Disk quota exceeded",
    "error: unable to create compilation: AccessDenied",
    "botocore.errorfactory.NoSuchBucket: An error occurred (NoSuchBucket)",
    "requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url",
    "HTTP/1.1 429 Too Many Requests",
    "grpc: code = DeadlineExceeded desc = context deadline exceeded",
    "ER_ACCESS_DENIED_ERROR: Access denied for user 'root'",
    "Fehler: Verbindung abgelehnt: ECONNRESET beim Lesen von straße",
    "例外: FooTimeoutException 接続がタイムアウトしました",
    "connect_timeout=10 retries=3 then ThrottlingException",
    "FAIL: TestConnectionRefused (0.01s)",
    "java.io.FileNotFoundException: /etc/x (Permission denied)",
]
# a sequence where evidence decides: the fourth distinct word makes a variable and the earlier groups join it
MESSAGES = [f"session for user {w} opened on the console" for w in ("alpha", "beta", "gamma", "delta", "omega")] + [
    "worker red stopped after 3 retries on the main node",
    "worker red stopped after many retries on the main node",
    "<_SelectorSocketTransport fd=7 read=idle write=<idle, bufsize=0>> pauses reading",
    "<_SelectorSocketTransport fd=9 read=polling write=<idle, bufsize=0>> resumes reading",
    "ünïcödé Verbindung für Benutzer 岡田 abgelehnt nach 3 Versuchen",
    "ünïcödé Verbindung für Benutzer 山本 abgelehnt nach 4 Versuchen",
]
TEXTS = LINES + MESSAGES + ["", "ß İ ı ſ 日本語 \U0001f600 a\x00b", "T-1234: retry"]

SCRIPT = r"""
import hashlib, json, sys, tempfile
from pathlib import Path
from harness_memory import MemoryStore, error_signatures as es, failure_lexicon as lex
from harness_memory.embedders import HashingEmbedder
from harness_memory.failure_excerpt import extract
lines, messages, texts = json.loads(sys.stdin.read())
out = {"lexicon": [], "categories": [], "signatures": []}
for t in lines:
    out["lexicon"].append([lex.text_category(t), lex.named_category(t), lex.trailing_reason(t), lex.os_reason(t),
                           lex.http_category(t)])
    out["categories"].append(es.categorize(extract(t)))
with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "m.db") as s:
    for m in lines + messages:
        sig = s.error_signature(m)
        out["signatures"].append([sig.id, sig.template, sig.category])
    for row in out["signatures"]:  # each id's group once every message was signed
        row.append(s._core.miner.canonical(row[0]))
out["vectors"] = hashlib.sha256(HashingEmbedder(384).embed_batch(texts).tobytes()).hexdigest()
out["vector_one"] = hashlib.sha256(HashingEmbedder(96).embed_batch(texts[-2:-1]).tobytes()).hexdigest()
print(json.dumps(out))
"""


def _run(seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=json.dumps([LINES, MESSAGES, TEXTS]),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_categories_groups_and_vectors_are_the_same_whatever_the_hash_seed():
    a, b = _run("1"), _run("4242")
    assert a == b
    # and the run saw what it was meant to: categories found, a variable made by evidence, groups kept apart
    assert a["lexicon"][0][0] == "permission" and a["categories"][2] == "out_of_memory"
    templates = [t for _, t, _, _ in a["signatures"]]
    assert "session for user <*> opened on the console" in templates
    canon = [c for *_, c in a["signatures"]]
    first = len(LINES)
    assert len(set(canon[first : first + 5])) == 1  # the five users are one group once evidence came


def test_the_http_reason_phrases_are_the_ones_every_python_prints():
    # the phrases are read from http.HTTPStatus at import (the one part of the lexicon computed there, not a committed
    # table): pinned, so a Python whose stdlib renames one (3.13 renamed 413 and 422, not these) cannot move a category
    from harness_memory import failure_lexicon as lex

    assert lex._PHRASES == {
        "unauthorized": "permission",
        "forbidden": "permission",
        "proxy authentication required": "permission",
        "not found": "not_found",
        "gone": "not_found",
        "request timeout": "timeout",
        "gateway timeout": "timeout",
        "too many requests": "rate_limit",
        "bad gateway": "network",
        "service unavailable": "network",
    }
