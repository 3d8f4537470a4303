"""HTML building blocks: the page frame, tables, tiles. Every stored string goes through :func:`e`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

__all__ = ["NAV", "day", "e", "link", "page", "qs", "seg", "short", "table", "tile", "when"]

NAV = [
    ("", "Overview"),
    ("techniques", "Techniques"),
    ("errors", "Errors"),
    ("memories", "Memories"),
    ("maintenance", "Maintenance"),
]


def e(value: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return escape("" if value is None else str(value), quote=True)


def short(text: str | None, n: int = 160) -> str:
    if text is None:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def when(ts: float | datetime | None) -> str:
    if ts is None:
        return "–"
    if not isinstance(ts, datetime):
        ts = datetime.fromtimestamp(float(ts), tz=UTC)
    return ts.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def day(ts: float | None) -> str:
    return "–" if ts is None else datetime.fromtimestamp(float(ts), tz=UTC).strftime("%Y-%m-%d")


def qs(**params: Any) -> str:
    """A query string of the non-empty parameters."""
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return ("?" + urlencode(kept)) if kept else ""


def link(root: str, path: str, text: str, **params: Any) -> str:
    return f'<a href="{e(root + "/" + path + qs(**params))}">{e(text)}</a>'


def seg(value: str) -> str:
    """A path segment (URL-quoted, then HTML-escaped by the caller through e())."""
    return quote(value, safe="")


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    caption: str | None = None,
    numeric: Sequence[int] = (),
    cls: str = "",
) -> str:
    """A table; cells are trusted HTML (escape with :func:`e` before)."""
    out = [f'<div class="tablewrap"><table class="{e(cls)}">']
    if caption:
        out.append(f"<caption>{e(caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f'<th scope="col"{" class=num" if i in numeric else ""}>{e(h)}</th>' for i, h in enumerate(headers))
        + "</tr></thead><tbody>"
    )
    n = 0
    for r in rows:
        n += 1
        out.append(
            "<tr>" + "".join(f"<td{' class=num' if i in numeric else ''}>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        )
    if not n:
        out.append(f'<tr><td colspan="{len(headers)}" class="empty">nothing yet</td></tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def tile(
    title: str, value: str, *, detail: str = "", verdict: str | None = None, ok: bool | None = None, chart: str = ""
) -> str:
    """A headline figure. ``verdict`` is said in words (and an icon), not by colour alone."""
    v = ""
    if verdict is not None:
        mark, cls = ("✔", "good") if ok else ("✘", "bad") if ok is False else ("•", "neutral")
        v = f'<p class="verdict {cls}"><span aria-hidden="true">{mark}</span> {e(verdict)}</p>'
    return (
        f'<section class="tile" aria-label="{e(title)}"><h3>{e(title)}</h3><p class="figure">{e(value)}</p>'
        f'{v}<p class="detail">{e(detail)}</p>{chart}</section>'
    )


def page(
    root: str, active: str, title: str, body: str, *, elapsed_ms: float | None = None, logout: bool = False
) -> str:
    nav = "".join(
        f'<a href="{e(root + "/" + path)}"{" aria-current=page" if path == active else ""}>{e(name)}</a>'
        for path, name in NAV
    )
    foot = f"rendered in {elapsed_ms:.0f} ms · " if elapsed_ms is not None else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{e(title)} · harness-memory</title>"
        f'<link rel="stylesheet" href="{e(root)}/static/dashboard.css">'
        '<link rel="icon" href="data:,">'
        "</head><body>"
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header><span class="brand">harness-memory</span><nav aria-label="pages">{nav}</nav>'
        + (
            f'<form class="logout" method="post" action="{e(root)}/logout"><button type="submit">Log out'
            "</button></form>"
            if logout
            else ""
        )
        + "</header>"
        f'<main id="main" tabindex="-1"><h1>{e(title)}</h1>{body}</main>'
        f"<footer>{e(foot)}times are UTC; weeks start on Monday; weeks before the current one are read at most "
        "every 10 minutes, the current week live</footer>"
        "</body></html>"
    )
