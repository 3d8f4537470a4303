"""The dashboard as an ASGI app (FastAPI), mounted at ``/dashboard`` by ``serve`` and by ``dashboard``.

Access follows the REST server's token rules:
- no token configured: open, but only to requests addressed to a loopback host name (the
  command refuses a non-loopback bind without a token; the Host check stops DNS rebinding);
- with ``api_token`` or ``api_admin_token`` configured, a request must present one of them:
  as a bearer token, as the ``hm_session`` cookie that ``POST /dashboard/login`` or a
  ``?token=`` link gives in exchange (the link then redirects to itself without the token),
  or be refused with a login page (401). Per-agent tokens (``api_tokens``) are refused (403):
  the dashboard shows every agent's memories.
The session cookie holds a random id, never the token; the uvicorn access log gets the
``token=`` value of a URL masked. Every write (a curator action) is a POST with a CSRF field
that must match the ``hm_csrf`` cookie (SameSite=Strict), after a confirmation page.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import threading
import time
from contextlib import AbstractContextManager, nullcontext
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..errors import (
    HarnessMemoryError,
    InvalidInputError,
    MemoryNotFoundError,
    StorageError,
)
from ..settings import Settings
from . import pages
from .html import e, page
from .queries import Queries

__all__ = ["LOOPBACK_HOSTS", "DashboardAccess", "create_dashboard", "mask_tokens", "mount"]

log = logging.getLogger("harness_memory.dashboard")

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "[::1]", "localhost")
SESSION_COOKIE = "hm_session"
CSRF_COOKIE = "hm_csrf"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000
MAX_FORM_BYTES = 1 << 20
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
_TOKEN_IN_URL = re.compile(r"([?&]token=)[^&\s\"]*")


def mask_tokens(text: str) -> str:
    """``token=...`` values of a URL replaced by ``***``."""
    return _TOKEN_IN_URL.sub(r"\1***", text)


class _MaskTokens(logging.Filter):
    """Masks ``?token=`` in uvicorn's access-log lines (the path is the third argument)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(mask_tokens(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = mask_tokens(record.msg)
        return True


def _install_log_mask() -> None:
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, _MaskTokens) for f in access.filters):
        access.addFilter(_MaskTokens())


class _Guarded:
    """The store, with every method call made under ``lock`` (the REST server's, which serialises calls on
    the store's one connection); attributes such as ``settings`` pass through."""

    def __init__(self, store: Any, lock: Any):
        self._store, self._lock = store, lock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not callable(value):
            return value
        lock = self._lock

        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return value(*args, **kwargs)

        return call


class DashboardAccess:
    """Who may see the dashboard: tokens, sessions and the loopback rule."""

    def __init__(self, settings: Settings):
        self.tokens = [t for t in (settings.api_token, settings.api_admin_token) if t]
        self.agent_tokens = bool(settings.api_tokens)
        self._sessions: dict[str, float] = {}
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return not self.tokens and not self.agent_tokens

    def valid_token(self, given: str | None) -> bool:
        if not given:
            return False
        b = given.encode("utf-8", "surrogatepass")
        ok = False
        for t in self.tokens:  # every token compared: no early exit
            ok |= hmac.compare_digest(b, t.encode("utf-8"))
        return ok

    def new_session(self) -> str:
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                self._sessions = {k: v for k, v in self._sessions.items() if v > now}
                while len(self._sessions) >= MAX_SESSIONS:
                    self._sessions.pop(next(iter(self._sessions)))
            self._sessions[sid] = now + SESSION_SECONDS
        return sid

    def valid_session(self, sid: str | None) -> bool:
        if not sid:
            return False
        with self._lock:
            exp = self._sessions.get(sid)
            if exp is None:
                return False
            if exp < time.monotonic():
                del self._sessions[sid]
                return False
            return True

    def end_session(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)


def _host_is_loopback(request: Request) -> bool:
    host = (request.headers.get("host") or "").lower()
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return name in LOOPBACK_HOSTS


def create_dashboard(
    store: Any, settings: Settings | None = None, *, lock: AbstractContextManager | threading.Lock | None = None
) -> FastAPI:
    """The dashboard pages for ``store`` (an open :class:`MemoryStore`), to mount at ``/dashboard``.

    ``lock`` serialises calls on the store's connection with the rest of the process (the REST
    server passes its own); reads run in one snapshot per page and never write."""
    settings = settings or store.settings
    access = DashboardAccess(settings)
    q = Queries(store, own_connection=True)
    guard = lock if lock is not None else threading.Lock()
    store = _Guarded(store, guard)  # every call on the store (recall, get, the actions) under the lock
    _install_log_mask()
    app = FastAPI(title="harness-memory dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    css = resources.files(__package__).joinpath("static", "dashboard.css").read_bytes()

    def root(request: Request) -> str:
        return request.scope.get("root_path", "").rstrip("/")

    def headers(resp: Response) -> Response:
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "same-origin"  # a same-origin form then sends its real Origin
        resp.headers["Cache-Control"] = "no-store"
        resp.headers["X-Frame-Options"] = "DENY"
        return resp

    def csrf_of(request: Request) -> tuple[str, bool]:
        got = request.cookies.get(CSRF_COOKIE)
        if got and re.fullmatch(r"[A-Za-z0-9_-]{20,100}", got):
            return got, False
        return secrets.token_urlsafe(24), True

    def html(
        request: Request,
        title: str,
        body: str,
        active: str,
        status: int = 200,
        started: float | None = None,
        csrf: tuple[str, bool] | None = None,
    ) -> Response:
        ms = None if started is None else (time.perf_counter() - started) * 1000
        resp = HTMLResponse(
            page(root(request), active, title, body, elapsed_ms=ms, logout=not access.open and status < 400),
            status_code=status,
        )
        tok, fresh = csrf or csrf_of(request)
        if fresh:
            resp.set_cookie(CSRF_COOKIE, tok, httponly=True, samesite="strict", path=root(request) or "/")
        return headers(resp)

    def login_page(request: Request, status: int, message: str) -> Response:
        body = (
            f'<p class="notice" role="alert">{e(message)}</p>'
            f'<form method="post" action="{e(root(request))}/login">'
            '<label class="block">token <input type="password" name="token" autocomplete="current-password" '
            "required autofocus></label>"
            f'<input type="hidden" name="next" value="{e(request.url.path)}">'
            '<button type="submit">Open the dashboard</button></form>'
        )
        return html(request, "Sign in", body, "", status=status)

    def denied(request: Request) -> Response | None:
        """None when the request may see the dashboard; else the refusal."""
        if access.open:
            if not _host_is_loopback(request):
                return html(
                    request,
                    "Refused",
                    "<p>Without a token the dashboard answers only on a loopback "
                    "address (127.0.0.1, ::1, localhost).</p>",
                    "",
                    status=403,
                )
            return None
        if not access.tokens:
            return html(
                request,
                "Refused",
                "<p>The dashboard shows every agent's memories: it needs "
                "HARNESS_MEMORY_API_TOKEN or HARNESS_MEMORY_API_ADMIN_TOKEN (per-agent tokens see one agent "
                "only).</p>",
                "",
                status=403,
            )
        auth = request.headers.get("authorization") or ""
        if auth[:7].lower() == "bearer " and access.valid_token(auth[7:].strip()):
            return None
        if access.valid_session(request.cookies.get(SESSION_COOKIE)):
            return None
        return login_page(request, 401, "This dashboard needs a token.")

    def session_response(request: Request, target: str) -> Response:
        resp = headers(RedirectResponse(target, status_code=303))
        resp.set_cookie(
            SESSION_COOKIE,
            access.new_session(),
            httponly=True,
            samesite="strict",
            path=root(request) or "/",
            max_age=SESSION_SECONDS,
        )
        return resp

    @app.middleware("http")
    async def gate(request: Request, call_next):
        path = request.url.path[len(root(request)) :] or "/"
        if path in ("/login", "/static/dashboard.css"):
            return await call_next(request)
        token = request.query_params.get("token")
        if token is not None and not access.open:
            if access.valid_token(token):  # exchange the link's token for a session, drop it from the URL
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                return session_response(request, request.url.path + (("?" + urlencode(rest)) if rest else ""))
            return login_page(request, 401, "That token is not valid.")
        refusal = denied(request)
        if refusal is not None:
            return refusal
        return await call_next(request)

    @app.exception_handler(MemoryNotFoundError)
    async def not_found(request: Request, exc: MemoryNotFoundError):
        return html(request, "Not found", f"<p>{e(exc)}</p>", "", status=404)

    @app.exception_handler(InvalidInputError)
    async def bad_input(request: Request, exc: InvalidInputError):
        return html(request, "Invalid input", f"<p>{e(exc)}</p>", "", status=422)

    @app.exception_handler(StorageError)
    async def storage(request: Request, exc: StorageError):
        return html(
            request,
            "Database unavailable",
            "<p>The database is unavailable (locked, read-only or unreadable). Try again.</p>",
            "",
            status=503,
        )

    @app.exception_handler(HarnessMemoryError)
    async def other(request: Request, exc: HarnessMemoryError):
        return html(request, "Refused", f"<p>{e(type(exc).__name__)}: {e(exc)}</p>", "", status=409)

    async def form(request: Request) -> dict[str, str]:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            raise InvalidInputError("the form is too large")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInputError("the form is not UTF-8") from None
        return {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}

    def weeks_param(request: Request, default: int) -> int:
        raw = request.query_params.get("weeks", "")
        return max(2, min(int(raw), 260)) if raw.isdigit() and len(raw) < 4 else default

    def render(request: Request, active: str, fn, *args: Any) -> Response:
        started = time.perf_counter()
        title, body = fn(*args)
        return html(request, title, body, active, started=started)

    def warm() -> None:
        """Read what the summary pages need once, so the first visitor does not wait for the past weeks."""
        pages.overview(q, "", pages.DEFAULT_WEEKS)
        pages.techniques(q, "", settings.prior_strength, pages.DEFAULT_WEEKS)
        pages.errors(q, "", 12)
        pages.maintenance(q, store, "", pages.DEFAULT_WEEKS)
        names = [n for n, _c in q.facets()["namespace"]]
        if names:  # the first recall loads the process's vector index: not the first searcher's wait
            store.recall("warm up", namespace=names[0], limit=1, record=False)

    app.state.warm = warm
    app.state.queries = q

    @app.get("/static/dashboard.css")
    def stylesheet() -> Response:
        resp = Response(css, media_type="text/css")
        resp.headers["Cache-Control"] = "max-age=3600"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        return resp

    @app.post("/login")
    async def login(request: Request) -> Response:
        data = await form(request)
        nxt = data.get("next") or "/"
        if not nxt.startswith(root(request) + "/") or nxt.startswith("//") or "\\" in nxt:
            nxt = root(request) + "/"
        if access.open:
            return headers(RedirectResponse(nxt, status_code=303))
        if not access.valid_token(data.get("token")):
            return login_page(request, 401, "That token is not valid.")
        return session_response(request, nxt)

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        access.end_session(request.cookies.get(SESSION_COOKIE))
        resp = headers(RedirectResponse(root(request) + "/", status_code=303))
        resp.delete_cookie(SESSION_COOKIE, path=root(request) or "/")
        return resp

    @app.get("/")
    def overview(request: Request) -> Response:
        return render(request, "", pages.overview, q, root(request), weeks_param(request, pages.DEFAULT_WEEKS))

    @app.get("/techniques")
    def techniques(request: Request) -> Response:
        return render(
            request,
            "techniques",
            pages.techniques,
            q,
            root(request),
            settings.prior_strength,
            weeks_param(request, pages.DEFAULT_WEEKS),
        )

    @app.get("/errors")
    def errors(request: Request) -> Response:
        return render(request, "errors", pages.errors, q, root(request), weeks_param(request, 12))

    @app.get("/errors/{sig}")
    def signature(request: Request, sig: str) -> Response:
        if len(sig) > 200:
            raise MemoryNotFoundError("no such error signature")
        started = time.perf_counter()
        title, body = pages.signature(
            q, root(request), sig, settings.prior_strength, weeks_param(request, pages.DEFAULT_WEEKS)
        )
        if not title:
            return html(request, "Not found", f"<p>No error signature {e(sig)} is recorded.</p>", "errors", 404)
        return html(request, title, body, "errors", started=started)

    @app.get("/maintenance")
    def maintenance(request: Request) -> Response:
        return render(
            request,
            "maintenance",
            pages.maintenance,
            q,
            store,
            root(request),
            weeks_param(request, pages.DEFAULT_WEEKS),
        )

    @app.get("/memories")
    def memories(request: Request) -> Response:
        params = {k: v[:1000] for k, v in request.query_params.items()}
        return render(request, "memories", pages.memories, q, store, root(request), params)

    def memory_id(raw: str) -> int:
        if not raw.isdigit() or len(raw) > 18 or int(raw) <= 0:
            raise MemoryNotFoundError(f"no memory with id {raw[:40]}")
        return int(raw)

    @app.get("/memories/{mid}")
    def memory(request: Request, mid: str) -> Response:
        csrf = csrf_of(request)
        done = request.query_params.get("done")
        notice = {
            "pin": "Pinned.",
            "unpin": "Unpinned.",
            "archive": "Archived.",
            "restore": "Restored.",
            "edit": "Saved a new version.",
        }.get(done or "")
        started = time.perf_counter()
        title, body = pages.memory(q, store, root(request), memory_id(mid), csrf[0], notice)
        return html(request, title, body, "memories", started=started, csrf=csrf)

    @app.get("/memories/{mid}/confirm/{action}")
    def confirm(request: Request, mid: str, action: str) -> Response:
        if action not in pages.ACTIONS:
            raise MemoryNotFoundError(f"no action {action[:40]!r}")
        csrf = csrf_of(request)
        title, body = pages.confirm(store, root(request), memory_id(mid), action, csrf[0])
        return html(request, title, body, "memories", csrf=csrf)

    @app.post("/memories/{mid}/{action}")
    async def act(request: Request, mid: str, action: str) -> Response:
        if action not in pages.ACTIONS:
            raise MemoryNotFoundError(f"no action {action[:40]!r}")
        data = await form(request)
        cookie = request.cookies.get(CSRF_COOKIE) or ""
        origin = request.headers.get("origin")
        if (
            not cookie
            or not hmac.compare_digest(cookie.encode(), (data.get("csrf") or "").encode())
            or (origin is not None and origin.split("://", 1)[-1] != request.headers.get("host"))
        ):
            return html(
                request,
                "Refused",
                "<p>The form is stale or came from another site: open the memory's page and try again.</p>",
                "memories",
                status=403,
            )
        ident = memory_id(mid)

        def run() -> str:
            # each a write through the public API (the store proxy takes the lock per call)
            if action == "pin":
                store.pin(ident, True)
            elif action == "unpin":
                store.pin(ident, False)
            elif action == "archive":
                store.archive(ident)
            elif action == "restore":
                store.restore(ident)
            elif action == "forget":
                store.forget(ident)
                return root(request) + "/memories?" + urlencode({"forgotten": ident})
            else:
                m = store.get(ident)
                if m.key is None:
                    raise InvalidInputError("only a keyed memory can be edited (a new version through its key)")
                store.remember(
                    data.get("content", ""),
                    type=m.type,
                    agent_id=m.agent_id,
                    scope=m.scope,
                    namespace=m.namespace,
                    key=m.key,
                    tags=m.tags,
                    importance=m.importance,
                    task_signature=m.task_signature,
                )
            return f"{root(request)}/memories/{ident}?done={action}"

        from starlette.concurrency import run_in_threadpool

        target = await run_in_threadpool(run)
        q.forget_cache()
        log.info("dashboard action %s on memory %s", action, ident)
        return headers(RedirectResponse(target, status_code=303))

    return app


def warm_quietly(board: FastAPI) -> None:
    """Fill the summary pages' caches (``board.state.warm``); a locked or unreadable database is
    only logged: the pages say so when visited."""
    try:
        board.state.warm()
    except HarnessMemoryError as exc:
        log.warning("dashboard warm-up skipped: %s", type(exc).__name__)


def mount(app: FastAPI, store: Any, settings: Settings, lock: Any = None) -> FastAPI:
    """Serve the dashboard under ``/dashboard`` of ``app`` (the REST server); returns the dashboard's app."""
    board = create_dashboard(store, settings, lock=lock if lock is not None else nullcontext())
    app.mount("/dashboard", board)
    return board
