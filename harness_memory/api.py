"""The REST API (extra ``[api]``: FastAPI + uvicorn): ``harness-memory serve``.

Security model:
- Binding to a non-loopback address requires a token (``serve`` refuses to start otherwise).
- With ``api_tokens`` (token -> agent id), a request's bearer token decides its agent: the
  agent cannot be chosen by the caller. With a single ``api_token``, the agent comes from the
  ``X-Agent-Id`` header (all holders of the token are trusted alike). Without tokens (loopback
  only), the header decides, default ``anonymous``.
- Scope rules are enforced here: every call acts as that agent, so another agent's private
  memories are invisible (404), whatever ids a caller passes. ``stats`` counts only what the
  caller may see (its own memories and global ones, no other agent's id); task ids of
  ``select-technique`` and ``record-outcome`` are the caller's own: they are stored scoped to
  the caller's agent, so another agent's attempts on a task of the same name stay invisible.
- ``api_admin_token`` (agent from ``X-Agent-Id``, default ``admin``) sees every agent's stats
  and uses task ids unscoped.
- A malformed or non-ASCII ``Authorization`` header is a 401, like a wrong token.
- Request bodies over ``api_max_body_bytes`` get 413; ``limit`` is bounded; every error is JSON
  ``{"error": type, "detail": message}`` with a proper status code.
"""

import contextlib
import hashlib
import hmac
import logging
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, create_model
from starlette.exceptions import HTTPException as StarletteHTTPException

from .errors import HarnessMemoryError, InvalidInputError, MemoryNotFoundError, StorageError
from .settings import Settings
from .store import MemoryStore

__all__ = ["create_app", "LOOPBACK"]

log = logging.getLogger("harness_memory.api")

LOOPBACK = ("127.0.0.1", "::1", "localhost")
AGENT_ID = r"^[^\x00-\x1f\x7f]{1,200}$"


class _Body(BaseModel):
    """A request body: a field it does not define is an error (422), never dropped in silence (``ttl`` for
    ``ttl_seconds`` stored a memory without its expiry)."""

    model_config = ConfigDict(extra="forbid")


class RememberIn(_Body):
    content: str = Field(description="bounded by the store's max_content_bytes (a 4xx past it), not here")
    type: str = Field(max_length=40)
    scope: str = Field("agent", pattern="^(agent|global)$")
    namespace: str | None = Field(None, max_length=200)
    key: str | None = Field(None, max_length=200)
    task_signature: str | None = Field(None, max_length=1000)
    error: str | None = Field(None, max_length=262_144)
    tags: list[str] = Field(default_factory=list, description="bounded by the store's max_tags")
    importance: float = Field(0.5, ge=0, le=1)
    ttl_seconds: float | None = Field(None, gt=0, le=100 * 365 * 86400)
    metadata: dict[str, Any] | None = None
    session_id: str | None = Field(None, max_length=200)
    task_id: str | None = Field(None, max_length=200)
    thread_id: str | None = Field(None, max_length=200, description="an event of this thread (docs/episodes.md)")


class RecallIn(_Body):
    query: str = Field("", description="bounded by the store's max_content_bytes")
    namespace: str | None = Field(None, max_length=200)
    types: list[str] | None = Field(None, max_length=50)
    tags: list[str] | None = Field(None, description="bounded by the store's max_tags")
    task_signature: str | None = Field(None, max_length=1000)
    error: str | None = Field(None, max_length=262_144)
    include_global: bool = True
    min_relevance: float | None = Field(None, ge=0, le=1)
    min_confidence: float | None = Field(
        None,
        ge=0,
        le=1,
        description="keep only hits with at least this "
        "calibrated confidence (the injection gate is settings.confidence.inject_min)",
    )
    limit: int = Field(10, ge=1, le=100)
    thread_id: str | None = Field(None, max_length=200, description="only this thread's memories")


class ApplyIn(_Body):
    helpful: bool
    outcome: str | None = Field(None, max_length=16_384)
    session_id: str | None = Field(None, max_length=200)
    task_id: str | None = Field(None, max_length=200)


class SignIn(_Body):
    # a whole log is ordinary: the request body limit (api_max_body_bytes) is the bound
    text: str = Field(min_length=1, description="the error text or whole log")
    baseline: str | None = Field(None, description="the log of the last passing run of the same job")


# a task id is stored as "<task id>@<16 hex digits of the caller's agent id>" (see _scoped)
TASK_ID_MAX = 200 - 17


class SelectIn(_Body):
    task_id: str = Field(min_length=1, max_length=TASK_ID_MAX)
    error: str | None = Field(None, max_length=262_144)
    agent_type: str | None = Field(None, max_length=200)
    task_category: str | None = Field(None, max_length=200)
    techniques: list[str] | None = Field(None, min_length=1, max_length=50)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)


class OutcomeIn(_Body):
    task_id: str = Field(min_length=1, max_length=TASK_ID_MAX)
    technique: str = Field(min_length=1, max_length=200)
    success: bool
    error: str | None = Field(None, max_length=262_144)
    notes: str | None = Field(None, max_length=16_384)
    result: str | None = Field(None, pattern="^(fixed|failed|decomposed|escalated)$")
    agent_type: str | None = Field(None, max_length=200)
    task_category: str | None = Field(None, max_length=200)
    task_signature: str | None = Field(None, max_length=1000)
    namespace: str | None = Field(None, max_length=200)


class ToolCallIn(_Body):
    tool_name: str = Field(min_length=1, max_length=200)
    success: bool
    tool_type: str = Field("builtin", min_length=1, max_length=200)
    parameters: dict[str, Any] | list[Any] | None = None
    result: Any = None
    duration_ms: float | None = Field(None, ge=0)
    error: str | None = Field(None, max_length=262_144)
    namespace: str | None = Field(None, max_length=200)
    session_id: str | None = Field(None, max_length=200)
    task_id: str | None = Field(None, max_length=200)


class DocumentIn(_Body):
    text: str = Field(min_length=1, description="the document's text (never a server path)")
    title: str | None = Field(None, max_length=1000)
    source: str | None = Field(None, max_length=4096, description="its identity: the same source re-indexes")
    scope: str = Field("global", pattern="^(agent|global)$")
    namespace: str | None = Field(None, max_length=200)
    tags: list[str] = Field(default_factory=list, description="bounded by the store's max_tags")


class ReflectIn(_Body):
    thread_id: str | None = Field(None, max_length=200)
    namespace: str | None = Field(None, max_length=200)


def _error(status: int, kind: str, detail: Any) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": kind, "detail": detail})


@dataclass(frozen=True)
class Caller:
    agent_id: str
    admin: bool = False


def _scoped(caller: Caller, task_id: str) -> str:
    """The caller's own name for a task: one agent's task ids never meet another's."""
    if caller.admin:
        return task_id
    return f"{task_id}@{hashlib.sha256(caller.agent_id.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def _unscoped(caller: Caller, scoped: str, task_id: str, obj: Any) -> Any:
    """Replace the scoped task id by the caller's in a response."""
    if caller.admin or scoped == task_id:
        return obj
    if isinstance(obj, str):
        return obj.replace(scoped, task_id)
    if isinstance(obj, dict):
        return {k: _unscoped(caller, scoped, task_id, x) for k, x in obj.items()}
    if isinstance(obj, list):
        return [_unscoped(caller, scoped, task_id, x) for x in obj]
    return obj


def _same(given: bytes, expected: str | None) -> bool:
    return expected is not None and hmac.compare_digest(given, expected.encode("utf-8"))


def create_app(db: str, settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    store = MemoryStore(db, settings=settings)
    lock = threading.Lock()  # one connection: serialise requests on it
    tokens = dict(settings.api_tokens)
    single = settings.api_token
    admin = settings.api_admin_token
    boards: list[FastAPI] = []  # the dashboard, mounted below

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI):
        from .dashboard.app import warm_quietly

        # the dashboard's summary figures are read once in the background: the first visitor does not wait
        threads = [
            threading.Thread(target=warm_quietly, args=(b,), name="dashboard-warm-up", daemon=True) for b in boards
        ]
        for t in threads:
            t.start()
        yield
        for t in threads:
            t.join(timeout=60)
        store.close()

    app = FastAPI(title="harness-memory", version="1", description=__doc__, lifespan=lifespan)
    app.state.store = store

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > settings.api_max_body_bytes):
            return _error(413, "RequestTooLarge", f"bodies are limited to {settings.api_max_body_bytes} bytes")
        if size is None and request.method in ("POST", "PUT", "PATCH"):
            body = await request.body()
            if len(body) > settings.api_max_body_bytes:
                return _error(413, "RequestTooLarge", f"bodies are limited to {settings.api_max_body_bytes} bytes")
        return await call_next(request)

    @app.exception_handler(MemoryNotFoundError)
    async def not_found(_: Request, exc: MemoryNotFoundError):
        return _error(404, type(exc).__name__, str(exc))

    @app.exception_handler(InvalidInputError)
    async def bad_input(_: Request, exc: InvalidInputError):
        return _error(422, type(exc).__name__, str(exc))

    @app.exception_handler(StorageError)
    async def storage(_: Request, exc: StorageError):
        return _error(503, type(exc).__name__, "the database is unavailable (locked, read-only or unreadable)")

    @app.exception_handler(HarnessMemoryError)
    async def other(_: Request, exc: HarnessMemoryError):
        return _error(409, type(exc).__name__, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError):
        return _error(
            422,
            "ValidationError",
            [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", ""))} for e in exc.errors()],
        )

    @app.exception_handler(StarletteHTTPException)  # FastAPI's and Starlette's (400 unreadable body, 404, 405)
    async def http_error(_: Request, exc: StarletteHTTPException):
        return _error(exc.status_code, "HTTPError", exc.detail)

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception):  # a bug: no detail that could carry a caller's data
        log.error("internal error: %s", type(exc).__name__, exc_info=exc)
        return _error(500, "InternalError", "internal error")

    def caller(
        authorization: str | None = Header(None), x_agent_id: str | None = Header(None, pattern=AGENT_ID)
    ) -> Caller:
        if tokens or single or admin:
            if not authorization or authorization[:7].lower() != "bearer ":  # the scheme is case-insensitive
                raise HTTPException(401, "a bearer token is required")
            # headers arrive decoded as latin-1: compare bytes (compare_digest refuses non-ASCII str)
            given = authorization[7:].strip().encode("latin-1", "replace")
            found = None
            for tok, agent_id in tokens.items():  # every token is compared: no early exit
                if _same(given, tok):
                    found = Caller(agent_id)
            if _same(given, admin):
                found = Caller(x_agent_id or "admin", admin=True)
            elif _same(given, single):
                found = found or Caller(x_agent_id or "anonymous")
            if found is None:
                raise HTTPException(401, "invalid token")
            return found
        return Caller(x_agent_id or "anonymous")

    def agent(who: Caller = Depends(caller)) -> str:
        return who.agent_id

    def run(fn, *a, **kw):
        with lock:
            return fn(*a, **kw)

    p = "/api/memory"

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    # the registered memory types become an enum in the OpenAPI schema
    # (built at run time: typed as Any, which mypy accepts as a field type)
    type_name: Any = Literal[tuple(store.memory_types)]
    type_names: Any = list[type_name] | None
    Remember = create_model("Remember", __base__=RememberIn, type=(type_name, ...))
    Recall = create_model("Recall", __base__=RecallIn, types=(type_names, Field(None, max_length=50)))

    @app.post(f"{p}/remember", status_code=201)
    def remember(body: Remember, agent_id: str = Depends(agent)) -> dict[str, Any]:
        d = body.model_dump()
        ttl = d.pop("ttl_seconds")
        m = run(
            store.remember,
            d.pop("content"),
            agent_id=agent_id,
            ttl=None if ttl is None else timedelta(seconds=ttl),
            **d,
        )
        return m.model_dump(mode="json")

    @app.post(f"{p}/recall")
    def recall(body: Recall, agent_id: str = Depends(agent)) -> list[dict[str, Any]]:
        hits = run(store.recall, body.query, agent_id=agent_id, **body.model_dump(exclude={"query"}))
        return [
            {
                "score": h.score,
                "confidence": h.confidence,
                "explain": h.explain(),
                "memory": h.memory.model_dump(mode="json"),
            }
            for h in hits
        ]

    @app.get(f"{p}/stats")
    def stats(who: Caller = Depends(caller)) -> dict[str, Any]:
        st = run(store.stats, agent_id=None if who.admin else who.agent_id)
        st["access_log"] = dict(st["access_log"])
        return st

    @app.get(f"{p}/jobs")
    def jobs(agent_id: str = Depends(agent)) -> dict[str, Any]:
        return run(store.job_status)

    @app.get(p + "/{memory_id}")
    def get(memory_id: int, agent_id: str = Depends(agent)) -> dict[str, Any]:
        if memory_id <= 0 or memory_id >= 2**63:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        return run(store.get, memory_id, agent_id=agent_id).model_dump(mode="json")

    @app.delete(p + "/{memory_id}")
    def forget(memory_id: int, agent_id: str = Depends(agent)) -> dict[str, Any]:
        if memory_id <= 0 or memory_id >= 2**63:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        run(store.forget, memory_id, agent_id=agent_id)
        return {"deleted": memory_id}

    @app.post(p + "/{memory_id}/apply")
    def apply(memory_id: int, body: ApplyIn, agent_id: str = Depends(agent)) -> dict[str, Any]:
        if memory_id <= 0 or memory_id >= 2**63:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        return run(store.apply, memory_id, agent_id=agent_id, **body.model_dump()).model_dump(mode="json")

    @app.post(f"{p}/error-signature")
    def error_signature(body: SignIn, agent_id: str = Depends(agent)) -> dict[str, Any]:
        return run(store.error_signature, body.text, baseline=body.baseline).model_dump()

    @app.post(f"{p}/select-technique")
    def select_technique(body: SelectIn, who: Caller = Depends(caller)) -> dict[str, Any]:
        d = body.model_dump()
        task_id = d.pop("task_id")
        scoped = _scoped(who, task_id)
        got = run(store.select_technique, scoped, d.pop("error"), **d).model_dump()
        return _unscoped(who, scoped, task_id, got)

    @app.post(f"{p}/record-outcome", status_code=201)
    def record_outcome(body: OutcomeIn, who: Caller = Depends(caller)) -> dict[str, Any]:
        d = body.model_dump()
        task_id = d.pop("task_id")
        scoped = _scoped(who, task_id)
        got = run(
            store.record_outcome, scoped, d.pop("technique"), d.pop("success"), agent_id=who.agent_id, **d
        ).model_dump()
        return _unscoped(who, scoped, task_id, got)

    @app.post("/api/tool-calls", status_code=201)
    def log_tool_call(body: ToolCallIn, agent_id: str = Depends(agent)) -> dict[str, Any]:
        d = body.model_dump()
        return run(store.log_tool_call, d.pop("tool_name"), agent_id=agent_id, **d).model_dump(mode="json")

    @app.get("/api/tool-calls")
    def list_tool_calls(
        tool_name: str | None = None,
        task_id: str | None = None,
        success: bool | None = None,
        since: float | None = None,
        namespace: str | None = None,
        agent_id: str | None = None,
        limit: int = 100,
        who: Caller = Depends(caller),
    ) -> list[dict[str, Any]]:
        # an agent lists its own calls; the admin token any agent's (or every agent's)
        if not who.admin:
            agent_id = who.agent_id
        return [
            c.model_dump(mode="json")
            for c in run(
                store.tool_calls,
                agent_id=agent_id,
                tool_name=tool_name,
                task_id=task_id,
                success=success,
                since=since,
                namespace=namespace,
                limit=min(max(limit, 1), 1000),
            )
        ]

    @app.post("/api/documents", status_code=201)
    def add_document(body: DocumentIn, agent_id: str = Depends(agent)) -> dict[str, Any]:
        from . import documents

        d = body.model_dump()
        rep = run(documents.add_document, store, d.pop("text"), agent_id=agent_id, text_only=True, **d)
        return rep.model_dump(mode="json")

    @app.get("/api/documents")
    def list_documents(
        namespace: str | None = None, limit: int = 100, agent_id: str = Depends(agent)
    ) -> list[dict[str, Any]]:
        return [
            d.model_dump(mode="json")
            for d in run(store.documents, namespace=namespace, agent_id=agent_id, limit=min(max(limit, 1), 1000))
        ]

    @app.delete("/api/documents/{document_id}")
    def forget_document(document_id: int, agent_id: str = Depends(agent)) -> dict[str, Any]:
        if document_id <= 0 or document_id >= 2**63:
            raise MemoryNotFoundError(f"no document with id {document_id}")
        return {"deleted": document_id, "chunks": run(store.forget_document, document_id, agent_id=agent_id)}

    @app.post("/api/reflect")
    def reflect(body: ReflectIn, agent_id: str = Depends(agent)) -> list[dict[str, Any]]:
        # the caller's own episodes only; offline (a summariser is the server's configuration)
        return [m.model_dump(mode="json") for m in run(store.reflect, agent_id=agent_id, **body.model_dump())]

    from .dashboard import mount  # issue 13: the dashboard's pages, same token rules (docs/dashboard.md)

    boards.append(mount(app, store, settings, lock))
    return app
