"""Server-rendered SVG charts: no JavaScript, no network, colours from CSS variables.

Every chart is an ``<svg class="chart" role="img">`` with an ``aria-label`` summary; every
data point is an element of class ``pt`` carrying ``data-value`` and a ``<title>`` (the
browser's tooltip). Series differ by colour *and* by marker shape and dash pattern, so
colour is never the only cue. Every text that reaches a chart is escaped here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape

__all__ = [
    "Series",
    "fmt_num",
    "fmt_pct",
    "histogram",
    "interval_plot",
    "line_chart",
    "score_bar",
    "sparkline",
    "stacked_bars",
    "week_label",
]

# series styles: (css colour variable, dash pattern, marker)
STYLES = [
    ("--c1", "", "circle"),
    ("--c2", "6 3", "square"),
    ("--c3", "2 3", "triangle"),
    ("--c4", "10 3 2 3", "diamond"),
    ("--c5", "", "circle"),
    ("--c6", "6 3", "square"),
    ("--c7", "2 3", "triangle"),
    ("--c8", "10 3 2 3", "diamond"),
]


def fmt_pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def fmt_num(x: float | None) -> str:
    if x is None:
        return "–"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.2f}"


def week_label(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%b %d")


@dataclass
class Series:
    name: str
    points: list[tuple[float, float | None]] = field(default_factory=list)  # (x, y); y None: no data


def _marker(kind: str, x: float, y: float, colour: str, title: str, value: float) -> str:
    t = f"<title>{escape(title)}</title>"
    common = f'class="pt" data-value="{value:.6g}" fill="var({colour})" stroke="var(--bg)" stroke-width="1"'
    if kind == "square":
        return f'<rect {common} x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7">{t}</rect>'
    if kind == "triangle":
        return f'<path {common} d="M{x:.1f} {y - 4.5:.1f}L{x + 4.5:.1f} {y + 3.5:.1f}L{x - 4.5:.1f} {y + 3.5:.1f}Z">{t}</path>'
    if kind == "diamond":
        return f'<path {common} d="M{x:.1f} {y - 5:.1f}L{x + 5:.1f} {y:.1f}L{x:.1f} {y + 5:.1f}L{x - 5:.1f} {y:.1f}Z">{t}</path>'
    return f'<circle {common} cx="{x:.1f}" cy="{y:.1f}" r="4">{t}</circle>'


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 4, 8, 10):
        if v <= m * mag:
            return m * mag
    return 10 * mag


def _open(w: int, h: int, label: str, kind: str) -> str:
    return (
        f'<svg class="chart {kind}" role="img" aria-label="{escape(label)}" viewBox="0 0 {w} {h}" '
        f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">'
    )


def _legend(names: Sequence[str], x0: float, y: float, kind: str = "line") -> str:
    out, x = [], x0
    for i, name in enumerate(names):
        colour, dash, marker = STYLES[i % len(STYLES)]
        if kind == "line":
            out.append(
                f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 22:.1f}" y2="{y:.1f}" stroke="var({colour})" '
                f'stroke-width="2" stroke-dasharray="{dash}"/>'
            )
            out.append(_marker(marker, x + 11, y, colour, name, 0).replace('class="pt" ', 'class="key" '))
        else:
            out.append(
                f'<rect x="{x:.1f}" y="{y - 5:.1f}" width="22" height="10" fill="var({colour})" '
                f'class="key hatch{i % 4}"/>'
            )
        out.append(f'<text x="{x + 27:.1f}" y="{y + 4:.1f}" class="legend">{escape(name[:44])}</text>')
        x += 40 + 7 * min(len(name), 44)
    return "".join(out)


def line_chart(
    series: Sequence[Series],
    *,
    label: str,
    y_fmt: Callable[[float], str] = fmt_num,
    y_max: float | None = None,
    target: tuple[float, str] | None = None,
    width: int = 640,
    height: int = 220,
    x_fmt: Callable[[float], str] = week_label,
) -> str:
    """A time chart: one line per series, a marker per point, an optional dashed target line."""
    xs = sorted({x for s in series for x, y in s.points if y is not None})
    ys = [y for s in series for _, y in s.points if y is not None]
    if not xs:
        return f'<p class="empty">{escape(label)}: no data yet.</p>'
    top = y_max if y_max is not None else _nice_max(max(ys + ([target[0]] if target else [])) * 1.05)
    left, right, tp, bottom = 48, 28, 28 if len(series) > 1 else 12, 28
    pw, ph = width - left - right, height - tp - bottom
    x0, x1 = xs[0], xs[-1]

    def px(x: float) -> float:
        return left + (pw / 2 if x1 == x0 else (x - x0) / (x1 - x0) * pw)

    def py(y: float) -> float:
        return tp + ph - (min(y, top) / top) * ph if top else tp + ph

    out = [_open(width, height, label, "line")]
    for i in range(5):  # grid and y labels
        v = top * i / 4
        y = py(v)
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(y_fmt(v))}</text>')
    step = max(1, math.ceil(len(xs) / 8))
    for x in xs[::step]:
        out.append(
            f'<text class="axis" x="{px(x):.1f}" y="{height - 8}" text-anchor="middle">{escape(x_fmt(x))}</text>'
        )
    if target is not None:
        ty = py(target[0])
        out.append(f'<line class="target" x1="{left}" x2="{width - right}" y1="{ty:.1f}" y2="{ty:.1f}"/>')
        out.append(
            f'<text class="axis target-label" x="{width - right - 2}" y="{ty - 4:.1f}" text-anchor="end">'
            f"{escape(target[1])}</text>"
        )
    for i, s in enumerate(series):
        colour, dash, marker = STYLES[i % len(STYLES)]
        pts = [(x, y) for x, y in sorted(s.points) if y is not None]
        if len(pts) > 1:
            d = "M" + "L".join(f"{px(x):.1f} {py(y):.1f}" for x, y in pts)
            out.append(
                f'<path class="series" d="{d}" fill="none" stroke="var({colour})" stroke-width="2" '
                f'stroke-dasharray="{dash}"/>'
            )
        for x, y in pts:
            out.append(_marker(marker, px(x), py(y), colour, f"{s.name}, {x_fmt(x)}: {y_fmt(y)}", y))
    if len(series) > 1:
        out.append(_legend([s.name for s in series], left, 12))
    out.append("</svg>")
    return "".join(out)


def stacked_bars(
    xs: Sequence[float],
    stacks: Sequence[tuple[str, Sequence[float]]],
    *,
    label: str,
    width: int = 640,
    height: int = 220,
    x_fmt: Callable[[float], str] = week_label,
) -> str:
    """One bar per x, stacked by series (colour plus a hatch pattern per series)."""
    if not xs or not stacks:
        return f'<p class="empty">{escape(label)}: no data yet.</p>'
    totals = [sum(s[1][i] for s in stacks) for i in range(len(xs))]
    top = _nice_max(max(totals) or 1)
    left, right, tp, bottom = 48, 12, 28, 28
    pw, ph = width - left - right, height - tp - bottom
    bw = pw / len(xs)
    out = [_open(width, height, label, "bars"), _patterns()]
    for i in range(5):
        v = top * i / 4
        y = tp + ph - v / top * ph
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_num(v)}</text>')
    step = max(1, math.ceil(len(xs) / 8))
    for i, x in enumerate(xs):
        base: float = tp + ph
        for j, (name, vals) in enumerate(stacks):
            v = vals[i]
            if not v:
                continue
            h = v / top * ph
            colour = STYLES[j % len(STYLES)][0]
            out.append(
                f'<rect class="pt" data-value="{v:g}" x="{left + i * bw + 1:.1f}" y="{base - h:.1f}" '
                f'width="{max(bw - 2, 1):.1f}" height="{h:.1f}" fill="var({colour})">'
                f"<title>{escape(f'{name}, {x_fmt(x)}: {fmt_num(v)}')}</title></rect>"
            )
            if j % 4:
                out.append(
                    f'<rect x="{left + i * bw + 1:.1f}" y="{base - h:.1f}" width="{max(bw - 2, 1):.1f}" '
                    f'height="{h:.1f}" fill="url(#hatch{j % 4})" pointer-events="none"/>'
                )
            base -= h
        if i % step == 0:
            out.append(
                f'<text class="axis" x="{left + (i + 0.5) * bw:.1f}" y="{height - 8}" text-anchor="middle">'
                f"{escape(x_fmt(x))}</text>"
            )
    out.append(_legend([s[0] for s in stacks], left, 12, kind="bar"))
    out.append("</svg>")
    return "".join(out)


def _patterns() -> str:
    # hatch overlays so stacked series differ by texture as well as colour
    return (
        "<defs>"
        '<pattern id="hatch1" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="var(--bg)" stroke-width="1.5" stroke-opacity=".6"/></pattern>'
        '<pattern id="hatch2" width="5" height="5" patternUnits="userSpaceOnUse">'
        '<circle cx="2.5" cy="2.5" r="1" fill="var(--bg)" fill-opacity=".6"/></pattern>'
        '<pattern id="hatch3" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="var(--bg)" stroke-width="1.5" stroke-opacity=".6"/></pattern>'
        "</defs>"
    )


@dataclass
class Interval:
    label: str
    mean: float
    lo: float
    hi: float
    detail: str = ""
    href: str | None = None


def interval_plot(
    rows: Sequence[Interval],
    *,
    label: str,
    width: int = 640,
    row_h: int = 22,
    reference: tuple[float, str] | None = None,
) -> str:
    """A forest plot on [0, 1]: per row the posterior mean (a dot) and its credible interval (a bar)."""
    if not rows:
        return f'<p class="empty">{escape(label)}: no data yet.</p>'
    left, right, tp = 210, 16, 10
    pw = width - left - right
    height = tp + row_h * len(rows) + 26

    def px(v: float) -> float:
        return left + max(0.0, min(1.0, v)) * pw

    out = [_open(width, height, label, "intervals")]
    for i in range(6):
        v = i / 5
        out.append(f'<line class="grid" x1="{px(v):.1f}" x2="{px(v):.1f}" y1="{tp}" y2="{height - 22}"/>')
        out.append(f'<text class="axis" x="{px(v):.1f}" y="{height - 8}" text-anchor="middle">{fmt_pct(v)}</text>')
    if reference is not None:
        out.append(
            f'<line class="target" x1="{px(reference[0]):.1f}" x2="{px(reference[0]):.1f}" y1="{tp}" '
            f'y2="{height - 22}"><title>{escape(reference[1])}</title></line>'
        )
    for i, r in enumerate(rows):
        y = tp + row_h * i + row_h / 2
        text = escape(r.label if len(r.label) <= 30 else r.label[:29] + "…")
        if r.href:
            text = f'<a href="{escape(r.href)}">{text}</a>'
        out.append(f'<text class="rowlabel" x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{text}</text>')
        out.append(f'<line class="ci" x1="{px(r.lo):.1f}" x2="{px(r.hi):.1f}" y1="{y:.1f}" y2="{y:.1f}"/>')
        tip = f"{r.label}: {fmt_pct(r.mean)} (90% interval {fmt_pct(r.lo)}–{fmt_pct(r.hi)}) {r.detail}"
        out.append(
            f'<circle class="pt" data-value="{r.mean:.6g}" data-lo="{r.lo:.6g}" data-hi="{r.hi:.6g}" '
            f'cx="{px(r.mean):.1f}" cy="{y:.1f}" r="4.5" fill="var(--c1)" stroke="var(--bg)">'
            f"<title>{escape(tip)}</title></circle>"
        )
    out.append("</svg>")
    return "".join(out)


def histogram(
    bins: Sequence[tuple[float, float, int]],
    *,
    label: str,
    width: int = 640,
    height: int = 200,
    x_fmt: Callable[[float], str] = lambda v: f"{v:.1f}",
) -> str:
    """Bars over ``(lo, hi, count)`` bins."""
    if not bins or not any(b[2] for b in bins):
        return f'<p class="empty">{escape(label)}: no data yet.</p>'
    top = _nice_max(max(b[2] for b in bins))
    left, right, tp, bottom = 56, 12, 12, 28
    pw, ph = width - left - right, height - tp - bottom
    bw = pw / len(bins)
    out = [_open(width, height, label, "histogram")]
    for i in range(5):
        v = top * i / 4
        y = tp + ph - v / top * ph
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_num(v)}</text>')
    for i, (lo, hi, n) in enumerate(bins):
        h = n / top * ph
        out.append(
            f'<rect class="pt" data-value="{n}" x="{left + i * bw + 1:.1f}" y="{tp + ph - h:.1f}" '
            f'width="{max(bw - 2, 1):.1f}" height="{h:.1f}" fill="var(--c1)">'
            f"<title>{escape(f'{x_fmt(lo)}–{x_fmt(hi)}: {n:,}')}</title></rect>"
        )
        out.append(
            f'<text class="axis" x="{left + i * bw:.1f}" y="{height - 8}" text-anchor="middle">'
            f"{escape(x_fmt(lo))}</text>"
        )
    out.append(
        f'<text class="axis" x="{width - right}" y="{height - 8}" text-anchor="end">{escape(x_fmt(bins[-1][1]))}</text>'
    )
    out.append("</svg>")
    return "".join(out)


def score_bar(
    parts: Sequence[tuple[str, float]], total: float, *, label: str, width: int = 320, height: int = 18
) -> str:
    """A horizontal bar on [0, 1] whose stacked segments add up to ``total`` (the score)."""
    out = [
        _open(width, height, label, "scorebar"),
        _patterns(),
        f'<rect class="track" x="0" y="2" width="{width}" height="{height - 4}"/>',
    ]
    x = 0.0
    for j, (name, v) in enumerate(parts):
        w = max(0.0, v) * width
        if w <= 0:
            continue
        colour = STYLES[j % len(STYLES)][0]
        out.append(
            f'<rect class="pt" data-value="{v:.6g}" data-part="{escape(name)}" x="{x:.2f}" y="2" '
            f'width="{w:.2f}" height="{height - 4}" fill="var({colour})"><title>'
            f"{escape(f'{name}: {v:.3f} of the score {total:.3f}')}</title></rect>"
        )
        if j % 4:
            out.append(
                f'<rect x="{x:.2f}" y="2" width="{w:.2f}" height="{height - 4}" fill="url(#hatch{j % 4})" '
                'pointer-events="none"/>'
            )
        x += w
    out.append("</svg>")
    return "".join(out)


def sparkline(values: Sequence[float], *, label: str, width: int = 110, height: int = 24) -> str:
    """A tiny trend line (one point per bucket) for a table cell."""
    if not values or max(values) <= 0:
        return f'<span class="muted" aria-label="{escape(label)}">–</span>'
    top = max(values)
    n = len(values)

    def px(i: int) -> float:
        return 2 + (width - 4) * (i / (n - 1) if n > 1 else 0.5)

    def py(v: float) -> float:
        return height - 3 - v / top * (height - 6)

    d = "M" + "L".join(f"{px(i):.1f} {py(v):.1f}" for i, v in enumerate(values))
    return (
        _open(width, height, label, "spark")
        + f'<path d="{d}" fill="none" stroke="var(--c1)" stroke-width="1.5"/>'
        + f'<circle class="pt" data-value="{values[-1]:g}" cx="{px(n - 1):.1f}" cy="{py(values[-1]):.1f}" r="2.5" '
        f'fill="var(--c1)"><title>{escape(label)}</title></circle></svg>'
    )
