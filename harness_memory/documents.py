"""Documents and their chunks: static reference text (docs, READMEs, code) searchable beside memories.

A document is split on its structure — markdown on headings and then paragraphs (a fenced code
block kept whole when it fits), code on its top-level definitions, plain text on paragraphs —
into chunks of at most ``document_chunk_chars`` characters. Each chunk is a memory of type
``document`` (keyed ``doc:<document uid>:<chunk hash>:<n>``, so never merged with another memory)
linked to its document and position in ``document_chunks``. Adding the same source again
re-indexes only the chunks whose hash changed: unchanged chunks keep their memory, vector and
statistics; removed ones are deleted. One transaction per document, embedding before it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from . import validation as v, writes
from .core import Core, dumps
from .errors import FileAccessError, InvalidInputError, MemoryNotFoundError
from .redact import redact_text

if TYPE_CHECKING:  # pragma: no cover
    from .store import MemoryStore

__all__ = [
    "Chunk",
    "Document",
    "DocumentReport",
    "add_document",
    "chunk_text",
    "forget_document",
    "list_documents",
    "read_source",
]

MAX_DOCUMENT_BYTES = 16 << 20
CODE_SUFFIXES = {
    ".py",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".go",
    ".rs",
    ".java",
    ".kt",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".cs",
    ".rb",
    ".php",
    ".swift",
    ".scala",
    ".sh",
    ".bash",
    ".lua",
    ".r",
    ".sql",
}
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx", ".rst"}
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# a top-level definition starts a code chunk (decorators and comments just above it go with it)
_DEF = re.compile(
    r"^(?:async\s+def|def|class|function|func|fn|pub\s+fn|impl|struct|enum|interface|type|const|"
    r"export\s+(?:default\s+)?(?:function|class|const|interface|type)|public|private|protected|static|"
    r"module|trait|CREATE|package|import\s*\()\b"
)


class Document(BaseModel):
    """A stored document: where it came from, how it was split."""

    id: int
    uid: str
    namespace: str
    agent_id: str
    scope: str
    source: str
    title: str
    kind: str = Field(description="markdown, code or text: how it was split")
    content_hash: str
    chunks: int
    bytes: int
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class DocumentReport(BaseModel):
    """What add_document did: the document and its chunks added, kept (unchanged) and removed."""

    document: Document
    added: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: bool = Field(False, description="the same text was already indexed under this source")


@dataclass
class Chunk:
    text: str
    heading: str | None
    position: int = 0

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _kind(source: str | None, text: str) -> str:
    suffix = Path(source).suffix.lower() if source else ""
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in CODE_SUFFIXES:
        return "code"
    if suffix in ("", ".txt") and sum(1 for ln in text.splitlines()[:400] if _HEADING.match(ln)) >= 2:
        return "markdown"
    return "text"


def _split_long(text: str, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters: on blank lines, then lines, then hard."""
    if len(text) <= limit:
        return [text]
    out: list[str] = []
    for sep in ("\n\n", "\n"):
        parts = text.split(sep)
        if len(parts) > 1:
            buf = ""
            for p in parts:
                cand = p if not buf else buf + sep + p
                if len(cand) <= limit:
                    buf = cand
                    continue
                if buf:
                    out.append(buf)
                if len(p) <= limit:
                    buf = p
                else:
                    out.extend(_split_long(p, limit))
                    buf = ""
            if buf:
                out.append(buf)
            return out
    return [text[i : i + limit] for i in range(0, len(text), limit)]


def _pack(blocks: list[str], limit: int) -> list[str]:
    """Greedy packing of whole blocks (each at most ``limit``) into chunks of at most ``limit``."""
    out, buf = [], ""
    for b in blocks:
        for piece in _split_long(b, limit):
            cand = piece if not buf else buf + "\n\n" + piece
            if len(cand) <= limit:
                buf = cand
            else:
                if buf:
                    out.append(buf)
                buf = piece
    if buf:
        out.append(buf)
    return out


def _markdown_sections(text: str) -> list[tuple[str | None, list[str]]]:
    """``(heading path, blocks)`` per section; a block is a paragraph or a whole fenced code block."""
    sections: list[tuple[str | None, list[str]]] = []
    path: list[tuple[int, str]] = []
    blocks: list[str] = []
    buf: list[str] = []
    fence = None

    def flush_block():
        if buf and any(x.strip() for x in buf):
            blocks.append("\n".join(buf).strip("\n"))
        buf.clear()

    def flush_section():
        flush_block()
        if blocks:
            sections.append((" > ".join(t for _, t in path) or None, list(blocks)))
        blocks.clear()

    for line in text.splitlines():
        if fence is not None:
            buf.append(line)
            if _FENCE.match(line) and line.strip().startswith(fence):
                fence = None
                flush_block()
            continue
        m = _FENCE.match(line)
        if m:
            flush_block()
            fence = m.group(1)
            buf.append(line)
            continue
        h = _HEADING.match(line)
        if h:
            flush_section()
            level = len(h.group(1))
            path = [(lv, t) for lv, t in path if lv < level] + [(level, h.group(2).strip())]
            continue
        if not line.strip():
            flush_block()
        else:
            buf.append(line)
    flush_section()
    return sections


def _code_blocks(text: str) -> list[str]:
    """Top-level definitions (with the comments and decorators just above them) as blocks."""
    lines = text.splitlines()
    starts = [0]
    for i, line in enumerate(lines):
        if i and _DEF.match(line):
            j = i
            while j > 0 and (lines[j - 1].startswith(("@", "#", "//", "/*", " *", "*")) and lines[j - 1].strip()):
                j -= 1
            if j > starts[-1]:
                starts.append(j)
    starts.append(len(lines))
    return ["\n".join(lines[a:b]).strip("\n") for a, b in itertools.pairwise(starts) if "\n".join(lines[a:b]).strip()]


def chunk_text(text: str, *, source: str | None = None, limit: int = 1500) -> tuple[str, list[Chunk]]:
    """``(kind, chunks)``: ``text`` split on its structure into chunks of at most ``limit`` characters
    (a markdown chunk starts with its heading path, which counts towards the limit)."""
    kind = _kind(source, text)
    chunks: list[Chunk] = []
    if kind == "markdown":
        for heading, blocks in _markdown_sections(text):
            prefix = f"{heading}\n\n" if heading else ""
            room = max(200, limit - len(prefix))
            for body in _pack(blocks, room):
                chunks.append(Chunk(text=(prefix + body)[:limit], heading=heading))
    elif kind == "code":
        chunks = [Chunk(text=c, heading=None) for c in _pack(_code_blocks(text), limit)]
    else:
        chunks = [Chunk(text=c, heading=None) for c in _pack(re.split(r"\n\s*\n", text), limit)]
    chunks = [c for c in chunks if c.text.strip()]
    for k, c in enumerate(chunks):
        c.position = k
    return kind, chunks


def read_source(value: Any) -> tuple[str, str | None]:
    """``(text, source)``: a :class:`Path` (or a one-line string naming an existing file) is read as UTF-8;
    anything else is the text itself."""
    path = None
    if isinstance(value, Path):
        path = value
    elif isinstance(value, str) and "\n" not in value and 0 < len(value) < 4096:
        try:
            if Path(value).is_file():
                path = Path(value)
        except (OSError, ValueError):
            path = None
    if path is None:
        if not isinstance(value, str):
            raise InvalidInputError(f"text_or_path must be text or a path, got {type(value).__name__}")
        return value, None
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise InvalidInputError(f"{path} is {size} bytes; documents are limited to {MAX_DOCUMENT_BYTES}")
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise FileAccessError(f"cannot read {path}: no such file") from exc
    except IsADirectoryError as exc:
        raise InvalidInputError(f"{path} is a folder: add its files (harness-memory add-doc does)") from exc
    except OSError as exc:
        raise FileAccessError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 text (byte {exc.start})") from exc
    return text, str(path.resolve())


_DOC_COLUMNS = (
    "id, uid, namespace, agent_id, scope, source, title, kind, content_hash, chunks, bytes, tags, metadata, "
    "created_at, updated_at"
)


def _row_to_doc(r) -> Document:
    return Document(
        id=r[0],
        uid=r[1],
        namespace=r[2],
        agent_id=r[3],
        scope=r[4],
        source=r[5],
        title=r[6],
        kind=r[7],
        content_hash=r[8],
        chunks=r[9],
        bytes=r[10],
        tags=json.loads(r[11]),
        metadata=json.loads(r[12]),
        created_at=datetime.fromtimestamp(r[13], tz=UTC),
        updated_at=datetime.fromtimestamp(r[14], tz=UTC),
    )


def _title(text: str, source: str | None) -> str:
    for line in text.splitlines()[:50]:
        h = _HEADING.match(line)
        if h:
            return h.group(2).strip()[:200]
    if source:
        return Path(source).name[:200] or source[:200]
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "untitled")
    return first[:80]


def add_document(
    store: MemoryStore,
    text_or_path: Any,
    *,
    title: Any = None,
    source: Any = None,
    namespace: Any = None,
    agent_id: Any = None,
    scope: Any = "global",
    tags: Any = (),
    metadata: Any = None,
    text_only: bool = False,
) -> DocumentReport:
    """``text_only``: ``text_or_path`` is text even when it names a file (REST: never read the server's files)."""
    core: Core = store._core
    s = core.settings
    if text_only:
        if not isinstance(text_or_path, str):
            raise InvalidInputError("text must be a string")
        text, file_source = text_or_path, None
    else:
        text, file_source = read_source(text_or_path)
    if "\x00" in text:
        raise InvalidInputError("a document must be text (it contains NUL characters)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError("the document is not valid Unicode text (lone surrogates)") from None
    if not text.strip():
        raise InvalidInputError("the document is empty")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise InvalidInputError(f"documents are limited to {MAX_DOCUMENT_BYTES} bytes")
    source = v.text(source, "source", max_bytes=4096).strip() if source is not None else file_source
    doc_hash = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    if source is None:
        source = f"text:{doc_hash[:32]}"
    title = v.text(title, "title", max_bytes=1000).strip() if title is not None else _title(text, file_source)
    if s.redact_secrets:  # a title (a document's first heading) and a source are stored and listed as given
        title, source = redact_text(title), redact_text(source)
    ns = v.ident(namespace, "namespace", optional=True) or s.namespace
    agent = v.ident(agent_id, "agent_id", optional=True) or "documents"
    sc = v.scope(scope)
    tag_list = v.tags(tags, max_tags=s.max_tags, max_len=s.max_tag_length)
    meta = v.metadata(metadata)
    limit = min(s.document_chunk_chars, s.max_content_bytes // 4)
    kind, chunks = chunk_text(text, source=file_source or source, limit=limit)
    if not chunks:
        raise InvalidInputError("the document has no text to index")
    b = core.backend
    existing = b.execute(
        f"SELECT {_DOC_COLUMNS} FROM documents WHERE namespace = ? AND agent_id = ? AND source = ?", (ns, agent, source)
    ).fetchone()
    doc = _row_to_doc(existing) if existing else None
    if (
        doc is not None
        and doc.content_hash == doc_hash
        and doc.title == title
        and doc.tags == tag_list
        and doc.scope == sc
        and doc.metadata == meta
    ):
        return DocumentReport(document=doc, unchanged=doc.chunks, skipped=True)
    uid = doc.uid if doc else uuid.uuid4().hex
    # (hash, occurrence) identifies a chunk across versions: an unchanged chunk keeps its memory
    occ: Counter[str] = Counter()
    keys = []
    for c in chunks:
        keys.append((c.hash, occ[c.hash]))
        occ[c.hash] += 1
    old: dict[tuple[str, int], int] = {}
    if doc is not None:
        for mid, chash, n in b.execute(
            "SELECT memory_id, chunk_hash, occurrence FROM document_chunks WHERE document_id = ?", (doc.id,)
        ):
            old[(chash, n)] = mid
    keep_scope = doc is not None and doc.scope == sc and doc.tags == tag_list
    new_idx = [k for k, key in enumerate(keys) if not (keep_scope and key in old)]
    items = [
        writes.prepare(
            core,
            chunks[k].text,
            type="document",
            agent_id=agent,
            scope=sc,
            namespace=ns,
            key=f"doc:{uid}:{keys[k][0][:24]}:{keys[k][1]}",
            tags=tag_list,
            importance=0.5,
            metadata={
                "document": uid,
                "title": title[:200],
                "source": source[:500],
                "position": k,
                "heading": chunks[k].heading,
            },
        )
        for k in new_idx
    ]
    vectors = core.embed([it.content for it in items]) if items else None  # never embed holding the lock
    writes.catch_up(core, vectors)  # nor load the vector index
    now = core.now()
    report_added = report_unchanged = report_removed = 0
    with b.write() as conn:
        if doc is None:
            doc_id = int(
                conn.execute(
                    "INSERT INTO documents(uid, namespace, agent_id, scope, source, title, kind, content_hash, chunks, bytes, "
                    "tags, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (
                        uid,
                        ns,
                        agent,
                        sc,
                        source,
                        title,
                        kind,
                        doc_hash,
                        len(chunks),
                        len(text.encode("utf-8")),
                        dumps(tag_list),
                        dumps(meta),
                        now,
                        now,
                    ),
                ).fetchone()[0]
            )
        else:
            doc_id = doc.id
            conn.execute(
                "UPDATE documents SET scope = ?, title = ?, kind = ?, content_hash = ?, chunks = ?, bytes = ?, "
                "tags = ?, metadata = ?, updated_at = ? WHERE id = ?",
                (
                    sc,
                    title,
                    kind,
                    doc_hash,
                    len(chunks),
                    len(text.encode("utf-8")),
                    dumps(tag_list),
                    dumps(meta),
                    now,
                    doc_id,
                ),
            )
        written = writes.write_many(core, items, writes.NO_VECTORS if vectors is None else vectors) if items else []
        mem_of = dict(zip(new_idx, (m.id for m in written)))
        reused = {k: old[keys[k]] for k in range(len(chunks)) if k not in mem_of}
        kept = set(reused.values()) | set(mem_of.values())  # a re-keyed chunk may be updated in place
        gone = [mid for mid in old.values() if mid not in kept]
        conn.execute("DELETE FROM document_chunks WHERE document_id = ?", (doc_id,))
        core.delete(gone)
        rows = []
        for k, c in enumerate(chunks):
            mid = mem_of.get(k, reused.get(k))
            rows.append((doc_id, k, mid, keys[k][0], keys[k][1], c.heading))
            if k in reused:
                conn.execute(
                    "UPDATE memories SET metadata = ? WHERE id = ?",
                    (
                        dumps(
                            {
                                "document": uid,
                                "title": title[:200],
                                "source": source[:500],
                                "position": k,
                                "heading": c.heading,
                            }
                        ),
                        mid,
                    ),
                )
        conn.executemany(
            "INSERT INTO document_chunks(document_id, position, memory_id, chunk_hash, occurrence, heading) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        report_added, report_unchanged, report_removed = len(mem_of), len(reused), len(gone)
        got = conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return DocumentReport(
        document=_row_to_doc(got), added=report_added, unchanged=report_unchanged, removed=report_removed
    )


def list_documents(core: Core, *, namespace: str | None, agent_id: str | None, limit: int) -> list[Document]:
    conds, params = [], []
    if namespace is not None:
        conds.append("namespace = ?")
        params.append(namespace)
    if agent_id is not None:
        conds.append("(agent_id = ? OR scope = 'global')")
        params.append(agent_id)
    where = " AND ".join(conds) or "1 = 1"
    rows = core.backend.execute(
        f"SELECT {_DOC_COLUMNS} FROM documents WHERE {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [_row_to_doc(r) for r in rows]


def forget_document(core: Core, document_id: int, *, agent_id: str | None) -> int:
    """Delete a document with its chunks (memories, index rows, vectors); return the chunks deleted."""
    with core.backend.write() as conn:
        row = conn.execute("SELECT agent_id, scope FROM documents WHERE id = ?", (document_id,)).fetchone()
        if row is None or (agent_id is not None and row[0] != agent_id):
            raise MemoryNotFoundError(
                f"no document with id {document_id}" + (f" of agent {agent_id!r}" if agent_id else "")
            )
        ids = [
            r[0] for r in conn.execute("SELECT memory_id FROM document_chunks WHERE document_id = ?", (document_id,))
        ]
        conn.execute("DELETE FROM document_chunks WHERE document_id = ?", (document_id,))
        n = core.delete(ids)
        conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))
    return n


# -- export / import ------------------------------------------------------------------------------
RECORD_KIND = "document"  # the "record" field of a document's line in a JSONL export
_RECORD_FIELDS = (
    "uid",
    "namespace",
    "agent_id",
    "scope",
    "source",
    "title",
    "kind",
    "content_hash",
    "chunks",
    "bytes",
    "tags",
    "metadata",
    "created_at",
    "updated_at",
)


def export_records(core: Core, *, namespace: str | None, agent_id: str | None) -> list[dict[str, Any]]:
    """Every document of the namespace / agent as an export record with its chunk list (each chunk
    named by its memory's uid: the chunk memories themselves are exported as memories)."""
    conds, params = [], []
    if namespace is not None:
        conds.append("d.namespace = ?")
        params.append(namespace)
    if agent_id is not None:
        conds.append("d.agent_id = ?")
        params.append(agent_id)
    where = " AND ".join(conds) or "1 = 1"
    cols = ", ".join(f"d.{c.strip()}" for c in _DOC_COLUMNS.split(","))
    out = []
    for r in core.backend.execute(f"SELECT {cols} FROM documents d WHERE {where} ORDER BY d.id", params).fetchall():
        rec = dict(zip(("id", *_RECORD_FIELDS), r))
        doc_id = rec.pop("id")
        rec["tags"], rec["metadata"] = json.loads(rec["tags"]), json.loads(rec["metadata"])
        rec["chunk_links"] = [
            list(x)
            for x in core.backend.execute(
                "SELECT c.position, m.uid, c.chunk_hash, c.occurrence, c.heading FROM document_chunks c "
                "JOIN memories m ON m.id = c.memory_id WHERE c.document_id = ? ORDER BY c.position",
                (doc_id,),
            )
        ]
        out.append({"record": RECORD_KIND, **rec})
    return out


def check_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A document record of an export, validated (raises InvalidInputError)."""
    unknown = sorted(set(rec) - set(_RECORD_FIELDS) - {"record", "chunk_links"})
    if unknown:
        raise InvalidInputError(f"unknown fields {unknown[:10]}")
    missing = [f for f in _RECORD_FIELDS if rec.get(f) is None]
    if missing:
        raise InvalidInputError(f"missing fields {missing}")
    if not isinstance(rec["uid"], str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", rec["uid"]):
        raise InvalidInputError("uid must be 1-64 characters of [A-Za-z0-9_-]")
    out = {
        "uid": rec["uid"],
        "namespace": v.ident(rec["namespace"], "namespace"),
        "agent_id": v.ident(rec["agent_id"], "agent_id"),
        "scope": v.scope(rec["scope"]),
        "source": v.text(rec["source"], "source", max_bytes=4096),
        "title": v.text(rec["title"], "title", max_bytes=4096),
        "kind": rec["kind"],
        "content_hash": v.text(rec["content_hash"], "content_hash", max_bytes=128),
        "chunks": v.count(rec["chunks"], "chunks"),
        "bytes": v.count(rec["bytes"], "bytes"),
        "tags": v.tags(rec["tags"], max_tags=1000, max_len=1000),
        "metadata": v.metadata(rec["metadata"]),
        "created_at": v.timestamp(rec["created_at"], "created_at"),
        "updated_at": v.timestamp(rec["updated_at"], "updated_at"),
    }
    if out["kind"] not in ("markdown", "code", "text"):
        raise InvalidInputError("kind must be 'markdown', 'code' or 'text'")
    links = rec.get("chunk_links") or []
    if not isinstance(links, list) or len(links) > 1_000_000:
        raise InvalidInputError("chunk_links must be a list")
    checked = []
    for ln in links:
        if not (
            isinstance(ln, list)
            and len(ln) == 5
            and isinstance(ln[1], str)
            and isinstance(ln[2], str)
            and (ln[4] is None or isinstance(ln[4], str))
        ):
            raise InvalidInputError("a chunk link is [position, memory uid, chunk hash, occurrence, heading]")
        checked.append(
            (
                v.count(ln[0], "position"),
                ln[1],
                ln[2][:128],
                v.count(ln[3], "occurrence"),
                None if ln[4] is None else ln[4][:1000],
            )
        )
    out["chunk_links"] = checked
    return out


def import_records(conn, records: list[dict[str, Any]]) -> int:
    """Insert or update documents (matched by uid) and their chunk links (chunks by memory uid;
    a chunk whose memory is not in the database is left out). Runs in the caller's transaction
    after the memories; returns the documents inserted or updated."""
    done = 0
    for r in records:
        row = conn.execute("SELECT id, updated_at FROM documents WHERE uid = ?", (r["uid"],)).fetchone()
        values = tuple(dumps(r[f]) if f in ("tags", "metadata") else r[f] for f in _RECORD_FIELDS[1:])
        if row is not None and row[1] == r["updated_at"]:
            continue
        if row is None:
            clash = conn.execute(
                "SELECT uid FROM documents WHERE namespace = ? AND agent_id = ? AND source = ?",
                (r["namespace"], r["agent_id"], r["source"]),
            ).fetchone()
            if clash is not None:
                raise InvalidInputError(f"document {r['uid']} has source {r['source']!r}, already used by {clash[0]}")
            cols = ", ".join(_RECORD_FIELDS)
            doc_id = int(
                conn.execute(
                    f"INSERT INTO documents({cols}) VALUES ({', '.join('?' * len(_RECORD_FIELDS))}) RETURNING id",
                    (r["uid"], *values),
                ).fetchone()[0]
            )
        else:
            doc_id = row[0]
            sets = ", ".join(f"{f} = ?" for f in _RECORD_FIELDS[1:])
            conn.execute(f"UPDATE documents SET {sets} WHERE id = ?", (*values, doc_id))
            conn.execute("DELETE FROM document_chunks WHERE document_id = ?", (doc_id,))
        for position, uid, chunk_hash, occurrence, heading in r["chunk_links"]:
            m = conn.execute("SELECT id FROM memories WHERE uid = ?", (uid,)).fetchone()
            if m is not None:
                conn.execute(
                    "INSERT INTO document_chunks(document_id, position, memory_id, chunk_hash, occurrence, "
                    "heading) VALUES (?, ?, ?, ?, ?, ?)",
                    (doc_id, position, m[0], chunk_hash, occurrence, heading),
                )
        done += 1
    return done
