"""``harness-memory dashboard``: the pages on their own server (the REST API is not served)."""

from __future__ import annotations

import threading
from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from ..errors import ConfigurationError, DatabaseOpenError
from ..settings import Settings
from .app import LOOPBACK_HOSTS, create_dashboard, warm_quietly

__all__ = ["build_app", "check_bind", "dashboard_url"]


def check_bind(host: str, settings: Settings) -> None:
    """Refuse a non-loopback address without a token that opens the dashboard."""
    if host not in LOOPBACK_HOSTS and not (settings.api_token or settings.api_admin_token):
        raise ConfigurationError(
            f"refusing to serve the dashboard on {host} without a token: set "
            "HARNESS_MEMORY_API_TOKEN or HARNESS_MEMORY_API_ADMIN_TOKEN"
        )


def dashboard_url(host: str, port: int, settings: Settings) -> str:
    """The address to open; with a token, a ``?token=`` link (exchanged for a session cookie on first use)."""
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    url = f"http://{name}:{port}/dashboard/"
    token = settings.api_token or settings.api_admin_token
    return url + (f"?token={quote(token, safe='')}" if token else "")


def build_app(db: str | Path, settings: Settings, *, warm: bool = True) -> FastAPI:
    """A server with the dashboard at ``/dashboard`` (``/`` redirects there); its store closes on shutdown.

    With ``warm``, the summary pages' figures are read once in the background at start-up."""
    import contextlib

    from ..store import MemoryStore

    text = str(db)
    if "://" not in text and text != ":memory:" and not Path(text).exists():  # a file path: never create one
        raise DatabaseOpenError(
            f"no database at {text}: the dashboard shows an existing database (create one "
            f"with `harness-memory init --db {text}`)"
        )
    store = MemoryStore(db, settings=settings)
    board = create_dashboard(store, settings)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI):
        thread = (
            threading.Thread(target=warm_quietly, args=(board,), name="dashboard-warm-up", daemon=True)
            if warm
            else None
        )
        if thread is not None:
            thread.start()
        yield
        if thread is not None:
            thread.join(timeout=60)
        board.state.queries.close()
        store.close()

    app = FastAPI(title="harness-memory dashboard", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.store = store

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/dashboard/", status_code=307)

    app.mount("/dashboard", board)
    return app
