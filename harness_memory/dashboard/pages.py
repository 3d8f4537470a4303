"""The pages: each takes the queries (and the store for public-API reads) and returns ``(title, body)``.

Bodies are HTML strings; every stored value is escaped through :func:`html.e` or inside the
SVG helpers. Nothing here writes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..models import Memory, RecallHit
from . import svg
from .html import day, e, qs, seg, short, table, tile, when
from .queries import WEEK, MemoryFilter, Queries, nearest_rank, week_start
from .stats import change, hierarchical, pooled_root

__all__ = [
    "ACTIONS",
    "DEFAULT_WEEKS",
    "confirm",
    "errors",
    "maintenance",
    "memories",
    "memory",
    "overview",
    "signature",
    "techniques",
]

DEFAULT_WEEKS = 26
ACTIONS = {
    "pin": "Pin",
    "unpin": "Unpin",
    "archive": "Archive",
    "restore": "Restore",
    "forget": "Forget",
    "edit": "Edit content",
}


def _weeks(q: Queries, weeks: int) -> tuple[float, list[float]]:
    """The window's first second and its week starts (the current week last)."""
    now = q.now()
    last = week_start(now)
    xs = [last - WEEK * i for i in range(weeks - 1, -1, -1)]
    return xs[0], xs


def _ratio(num: float, den: float) -> float | None:
    return None if not den else num / den


def _span(values: Sequence[tuple[float, float]], n: int = 4) -> tuple[float | None, float | None]:
    """Pooled ratio of the first and of the last ``n`` weeks that have data: ``(num, den)`` pairs."""
    have = [(a, b) for a, b in values if b]
    if not have:
        return None, None
    first, last = have[:n], have[-n:]
    return (
        _ratio(sum(a for a, _ in first), sum(b for _, b in first)),
        _ratio(sum(a for a, _ in last), sum(b for _, b in last)),
    )


def _data_table(headers: Sequence[str], rows: list[Sequence[Any]], numeric: Sequence[int]) -> str:
    return (
        '<details class="data"><summary>the numbers</summary>'
        + table(headers, ([e(c) for c in r] for r in rows), numeric=numeric)
        + "</details>"
    )


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f} ms" if x < 10 else f"{x:,.0f} ms"


def _pct_change(c: float | None) -> str:
    if c is None:
        return "no trend yet"
    if c == 0:
        return "unchanged from the first weeks"
    return f"{'down' if c < 0 else 'up'} {abs(c) * 100:.0f}% from the first weeks"


# -- overview ---------------------------------------------------------------------------------
def overview(q: Queries, root: str, weeks: int = DEFAULT_WEEKS) -> tuple[str, str]:
    since, xs = _weeks(q, weeks)
    with q.snapshot():
        fails = q.weekly(q.weekly_failures, since)
        retries = q.weekly(q.weekly_retries, since)
        tech = q.weekly(q.weekly_techniques, since)
        helpf = q.weekly(q.weekly_helpfulness, since)
        lat = q.weekly(q.weekly_latency, since)  # past weeks cached, the current week live
        # the headline pools the last 4 weeks whatever the window (their samples: the only ones kept)
        recent_weeks = q.weekly(q.latency_samples, xs[-1] - 3 * WEEK)
        created = q.weekly(q.weekly_created, since)
        tot = q.totals()
    recent = sorted(x for _w, ms in recent_weeks for x in ms)
    lat_n, p50, p95 = (
        len(recent),
        nearest_rank(recent, 0.5) if recent else None,
        (nearest_rank(recent, 0.95) if recent else None),
    )
    by_type = [(w, t, n) for w, t, _a, n in created]
    by_agent = [(w, a, n) for w, _t, a, n in created]
    out = []

    # repeat-failure rate
    rate_pts = [(w, _ratio(r, n)) for w, n, r in fails]
    first, last = _span([(r, n) for _, n, r in fails])
    ch = change(first, last)
    t1 = tile(
        "Repeat-failure rate",
        svg.fmt_pct(last),
        detail=f"share of failures whose error signature an earlier task met; last 4 weeks, {_pct_change(ch)}",
        verdict=None if ch is None else ("target met: down 30% or more" if ch <= -0.3 else "target: down 30%"),
        ok=None if ch is None else ch <= -0.3,
        chart=svg.sparkline([r or 0 for _, r in rate_pts], label="repeat-failure rate per week"),
    )
    # retries per task
    rpt = [(w, _ratio(a, t)) for w, t, a, _f, _e in retries]
    f2, l2 = _span([(a, t) for _, t, a, _f, _e in retries])
    ch2 = change(f2, l2)
    t2 = tile(
        "Retries per task",
        "–" if l2 is None else f"{l2:.2f}",
        detail=f"interventions per task, last 4 weeks; {_pct_change(ch2)}",
        verdict=None if ch2 is None else ("fewer retries than at first" if ch2 < 0 else "not fewer retries yet"),
        ok=None if ch2 is None else ch2 < 0,
        chart=svg.sparkline([r or 0 for _, r in rpt], label="retries per task per week"),
    )
    # helpfulness
    hp = [(w, _ratio(h, a)) for w, a, h in helpf]
    _f3, l3 = _span([(h, a) for _, a, h in helpf])
    n_applied = sum(a for _, a, _h in helpf[-4:])
    t3 = tile(
        "Helpfulness of applied memories",
        svg.fmt_pct(l3),
        detail=f"apply() calls that said helpful, last 4 weeks ({n_applied:,} applied)",
        verdict=None if l3 is None else ("target met: 70% or more" if l3 >= 0.7 else "target: 70% or more"),
        ok=None if l3 is None else l3 >= 0.7,
        chart=svg.sparkline([r or 0 for _, r in hp], label="helpfulness per week"),
    )
    # technique success
    ts = [(w, _ratio(s, a)) for w, a, s, _x in tech]
    f4, l4 = _span([(s, a) for _, a, s, _x in tech])
    ch4 = change(f4, l4)
    t4 = tile(
        "Technique success rate",
        svg.fmt_pct(l4),
        detail=f"retries that fixed the task, last 4 weeks; {_pct_change(ch4)}",
        verdict=None if ch4 is None else ("up since the first weeks" if ch4 > 0 else "not up yet"),
        ok=None if ch4 is None else ch4 > 0,
        chart=svg.sparkline([r or 0 for _, r in ts], label="technique success rate per week"),
    )
    t5 = tile(
        "Recall latency p50 / p95",
        "–" if p95 is None else f"{_ms(p50)} / {_ms(p95)}",
        detail=f"recall() wall time from the access log, last 4 weeks ({_n(lat_n, 'recall')} recorded)",
        verdict=None if p95 is None else ("target met: p95 under 100 ms" if p95 < 100 else "target: under 100 ms"),
        ok=None if p95 is None else p95 < 100,
        chart=svg.sparkline([x[3] for x in lat], label="recall latency p95 per week"),
    )
    t6 = tile(
        "Memories",
        f"{tot['memories']:,}",
        detail=f"{tot['archived']:,} archived, {tot['pinned']:,} pinned; {_n(tot['agents'], 'agent')} in "
        f"{_n(tot['namespaces'], 'namespace')}; {_n(tot['attempts'], 'recorded retry', 'recorded retries')}",
    )
    out.append(f'<div class="tiles">{t1}{t2}{t3}{t4}{t5}{t6}</div>')

    out.append(
        '<h2>Repeat-failure rate per week</h2><p class="lead">Lower is better: the memory should stop '
        "the harness from meeting the same error in task after task.</p>"
    )
    out.append(
        svg.line_chart(
            [svg.Series("repeat-failure rate", rate_pts)],
            label="repeat-failure rate per week",
            y_fmt=svg.fmt_pct,
            y_max=1.0,
        )
    )
    out.append(
        _data_table(
            ["week", "failures", "repeated", "rate"],
            [(svg.week_label(w), n, r, svg.fmt_pct(_ratio(r, n))) for w, n, r in fails],
            (1, 2, 3),
        )
    )

    out.append(
        '<h2>Learning curve: retries per task</h2><p class="lead">Interventions per task, by the week the '
        "task first failed. A harness that learns needs fewer.</p>"
    )
    out.append(svg.line_chart([svg.Series("retries per task", rpt)], label="retries per task per week"))
    out.append(
        _data_table(
            ["week", "tasks", "retries", "fixed", "escalated", "retries per task"],
            [(svg.week_label(w), t, a, f, x, "–" if not t else f"{a / t:.2f}") for w, t, a, f, x in retries],
            (1, 2, 3, 4, 5),
        )
    )

    out.append(
        '<h2>Helpfulness and technique success</h2><p class="lead">The dashed line is the plan\'s target '
        "for helpfulness (70%).</p>"
    )
    out.append(
        svg.line_chart(
            [svg.Series("helpfulness of applied memories", hp), svg.Series("technique success rate", ts)],
            label="helpfulness of applied memories and technique success rate per week",
            y_fmt=svg.fmt_pct,
            y_max=1.0,
            target=(0.7, "target 70%"),
        )
    )
    out.append(
        _data_table(
            ["week", "applied", "helpful", "helpfulness"],
            [(svg.week_label(w), a, h, svg.fmt_pct(_ratio(h, a))) for w, a, h in helpf],
            (1, 2, 3),
        )
    )

    out.append(
        '<h2>Recall latency</h2><p class="lead">How long <code>recall()</code> took, as the harness saw '
        "it (embedding the query, searching, ranking), from the access log: the median and the 95th "
        "percentile of each week's recalls; the plan's target is under 100 ms (a dashed line once p95 "
        "comes near it).</p>"
    )
    out.append(
        svg.line_chart(
            [
                svg.Series("p50", [(w, p) for w, _n2, p, _p95, _m in lat]),
                svg.Series("p95", [(w, p) for w, _n2, _p50, p, _m in lat]),
            ],
            label="recall latency p50 and p95 per week",
            y_fmt=_ms,
            target=(100.0, "target 100 ms") if any(x[3] >= 25 for x in lat) else None,
        )
    )
    out.append(
        _data_table(
            ["week", "recalls", "p50", "p95", "max"],
            [(svg.week_label(w), n, _ms(a), _ms(b), _ms(c)) for w, n, a, b, c in lat],
            (1, 2, 3, 4),
        )
    )

    for _by, rows, title in (
        ("type", by_type, "Memories created per week, by type"),
        ("agent", by_agent, "Memories created per week, by agent"),
    ):
        out.append(f"<h2>{e(title)}</h2>")
        out.append(_stacked_weeks(rows, xs, label=title.lower()))
    return "Overview", "".join(out)


def _stacked_weeks(rows: list[tuple[float, str, int]], xs: list[float], *, label: str, top: int = 6) -> str:
    totals: dict[str, int] = defaultdict(int)
    cell: dict[tuple[float, str], int] = defaultdict(int)
    for _w, k, n in rows:
        totals[k] += n
    keep = [k for k, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    for w, k, n in rows:
        cell[(w, k if k in keep else "other")] += n
    names = keep + (["other"] if len(totals) > len(keep) else [])
    stacks = [(k, [cell[(w, k)] for w in xs]) for k in names]
    data = _data_table(
        ["week", *names],
        [(svg.week_label(w), *[cell[(w, k)] for k in names]) for w in xs if any(cell[(w, k)] for k in names)],
        range(1, len(names) + 1),
    )
    return svg.stacked_bars(xs, stacks, label=label) + data


# -- techniques -------------------------------------------------------------------------------
def techniques(q: Queries, root: str, prior_strength: float, weeks: int = DEFAULT_WEEKS) -> tuple[str, str]:
    since, _xs = _weeks(q, weeks)
    with q.snapshot():
        overall = q.ledger("global", limit=60)
        root_s, root_n = q.pooled()
        cats = q.categories(8)
        cat_rows = q.ledger("category", keys=[c for c, _ in cats], limit=400)
        selections = q.weekly(q.weekly_selections, since)
        tech_weeks = q.weekly(q.weekly_techniques, since)
    root_p = pooled_root(root_s, root_n)
    by_tech = {r["technique"]: r for r in overall}
    sel: dict[str, int] = defaultdict(int)
    for _w, t, n in selections:
        sel[t] += n
    out = [
        (
            f"<p class=\"lead\">The selector's estimate of each technique's chance of fixing an error: a Beta "
            f"posterior that starts from the pooled success rate of every technique ({svg.fmt_pct(root_p)}, "
            f"worth {prior_strength:g} observations) and is updated by the technique's own record. The dot is the "
            "posterior mean, the bar its central 90% credible interval: a short bar is a confident estimate, a long "
            "one says little evidence yet. The dashed line marks the pooled rate.</p>"
        )
    ]
    ests = []
    for r in overall:
        est = hierarchical([(r["successes"], r["failures"])], root=root_p, k=prior_strength)
        ests.append((r, est))
    ests.sort(key=lambda x: -x[1].mean)
    out.append("<h2>Every technique, overall</h2>")
    out.append(
        svg.interval_plot(
            [
                svg.Interval(r["technique"], est.mean, est.lo, est.hi, detail=f"{r['successes']}/{r['attempts']} fixed")
                for r, est in ests
            ],
            label="technique success estimates with 90% credible intervals",
            reference=(root_p, "pooled success rate"),
        )
    )
    out.append(
        table(
            [
                "technique",
                "fixed / tried",
                "raw rate",
                "estimate",
                "90% interval",
                f"selected (last {weeks} weeks)",
                "last used",
            ],
            (
                [
                    e(r["technique"]),
                    f"{r['successes']:,} / {r['attempts']:,}",
                    svg.fmt_pct(_ratio(r["successes"], r["attempts"])),
                    svg.fmt_pct(est.mean),
                    f"{svg.fmt_pct(est.lo)}–{svg.fmt_pct(est.hi)}",
                    f"{sel.get(r['technique'], 0):,}",
                    e(when(r["last_used"])),
                ]
                for r, est in ests
            ),
            numeric=(1, 2, 3, 5),
        )
    )

    out.append(
        "<h2>By error category</h2><p class=\"lead\">Each category's estimate borrows from the technique's "
        'overall record (the prior), then its record for that category.</p><div class="grid2">'
    )
    per_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in cat_rows:
        per_cat[r["error_key"]].append(r)
    for cat, n in cats:
        rows = []
        for r in per_cat.get(cat, []):
            g = by_tech.get(r["technique"], {"successes": 0, "failures": 0})
            est = hierarchical(
                [(g["successes"], g["failures"]), (r["successes"], r["failures"])], root=root_p, k=prior_strength
            )
            rows.append(
                svg.Interval(
                    r["technique"], est.mean, est.lo, est.hi, detail=f"{r['successes']}/{r['attempts']} fixed in {cat}"
                )
            )
        rows.sort(key=lambda i: -i.mean)
        out.append(
            f'<section><h3>{e(cat)} <span class="muted">({n:,} retries)</span></h3>'
            + svg.interval_plot(rows[:12], label=f"technique estimates for {cat} errors", width=460)
            + "</section>"
        )
    if not cats:
        out.append('<p class="empty">no retries with a categorised error yet.</p>')
    out.append("</div>")

    out.append("<h2>Escalations and retries per week</h2>")
    out.append(
        svg.line_chart(
            [
                svg.Series("retries", [(w, a) for w, a, _s, _x in tech_weeks]),
                svg.Series("fixed", [(w, s) for w, _a, s, _x in tech_weeks]),
                svg.Series("escalations", [(w, x) for w, _a, _s, x in tech_weeks]),
            ],
            label="retries, fixes and escalations per week",
        )
    )
    out.append(
        _data_table(
            ["week", "retries", "fixed", "escalations"],
            [(svg.week_label(w), a, s, x) for w, a, s, x in tech_weeks],
            (1, 2, 3),
        )
    )
    return "Techniques", "".join(out)


# -- errors -----------------------------------------------------------------------------------
def errors(q: Queries, root: str, weeks: int = 12) -> tuple[str, str]:
    since, xs = _weeks(q, weeks)
    with q.snapshot():
        top = q.summary(q.top_signatures, 30)
        sigs = [s["sig"] for s in top]
        trend = q.weekly(q.signature_weeks, since, tuple(sigs))
        fixes = q.fixes_for(sigs)
        techs = q.ledger("signature", keys=sigs, limit=600)
    best: dict[str, dict[str, Any]] = {}
    for r in techs:
        if r["successes"] and (r["error_key"] not in best or r["successes"] > best[r["error_key"]]["successes"]):
            best[r["error_key"]] = r
    rows = []
    for s in top:
        fx = fixes.get(s["sig"], [])
        fixed = "".join(
            f'<li><a href="{e(root)}/memories/{m["memory_id"]}">#{m["memory_id"]}</a> '
            f'{e(short(m["content"], 70))} <span class="muted">(worked {m["worked"]}×)</span></li>'
            for m in fx
        )
        b = best.get(s["sig"])
        if b:
            fixed += f"<li>technique <b>{e(b['technique'])}</b> fixed it {b['successes']}× of {b['attempts']}</li>"
        spark = svg.sparkline(
            [trend.get(s["sig"], {}).get(w, 0) for w in xs], label=f"{s['sig']}: retries per week, last {weeks} weeks"
        )
        rows.append(
            [
                f'<a href="{e(root)}/errors/{e(seg(s["sig"]))}"><code>{e(s["sig"])}</code></a>',
                e(s["category"] or "–"),
                f"<code>{e(short(s['template'], 90))}</code>",
                f"{s['tasks']:,}",
                f"{s['retries']:,}",
                f"{s['memories']:,}",
                spark,
                e(day(s["first_seen"])),
                e(day(s["last_seen"])),
                f'<ul class="plain">{fixed}</ul>' if fixed else '<span class="muted">nothing yet</span>',
            ]
        )
    body = (
        '<p class="lead">The error signatures met most often: by the tasks that met them and the memories '
        f"that carry them; their retries per week over the last {weeks} weeks; and what fixed them: linked fix "
        "memories (how often each worked) and the technique with the most fixes.</p>"
        + table(
            [
                "signature",
                "category",
                "template",
                "tasks",
                "retries",
                "memories",
                "trend",
                "first seen",
                "last seen",
                "what fixed it",
            ],
            rows,
            numeric=(3, 4, 5),
            cls="errors",
        )
    )
    return "Errors", body


def signature(q: Queries, root: str, sig: str, prior_strength: float, weeks: int = DEFAULT_WEEKS) -> tuple[str, str]:
    since, xs = _weeks(q, weeks)
    with q.snapshot():
        info = q.signature(sig)
        if info is None:
            return "", ""
        mems = q.signature_memories(sig)
        attempts = q.signature_attempts(sig)
        trend = q.weekly(q.signature_weeks, since, (sig,))[sig]
        fixes = q.fixes_for([sig], per_sig=20)[sig]
        sig_rows = q.ledger("signature", keys=[sig], limit=50)
        cat_rows = q.ledger("category", keys=[info["category"]] if info["category"] else [], limit=200)
        glob = q.ledger("global", limit=200)
        root_s, root_n = q.pooled()
    root_p = pooled_root(root_s, root_n)
    g = {r["technique"]: r for r in glob}
    c = {r["technique"]: r for r in cat_rows}
    ints = []
    for r in sig_rows:
        gr, cr = g.get(r["technique"]), c.get(r["technique"])
        est = hierarchical(
            [
                (gr["successes"], gr["failures"]) if gr else (0, 0),
                (cr["successes"], cr["failures"]) if cr else (0, 0),
                (r["successes"], r["failures"]),
            ],
            root=root_p,
            k=prior_strength,
        )
        ints.append(
            svg.Interval(
                r["technique"],
                est.mean,
                est.lo,
                est.hi,
                detail=f"{r['successes']}/{r['attempts']} fixed for this signature",
            )
        )
    ints.sort(key=lambda i: -i.mean)
    out = [
        table(
            ["signature", "category", "exception", "first seen", "last seen"],
            [
                [
                    f"<code>{e(info['sig'])}</code>",
                    e(info["category"] or "–"),
                    e(info["exception"] or "–"),
                    e(when(info["first_seen"])),
                    e(when(info["last_seen"])),
                ]
            ],
        ),
        f"<p>template: <code>{e(info['template'] or '–')}</code></p>",
        "<h2>Retries per week</h2>",
        svg.line_chart(
            [svg.Series("retries", [(w, trend.get(w, 0)) for w in xs])], label=f"retries per week for {sig}"
        ),
        "<h2>Techniques for this signature</h2>",
        svg.interval_plot(ints, label="technique estimates for this signature with 90% credible intervals"),
        "<h2>Fixes linked to it</h2>",
        table(
            ["memory", "fix", "worked", "did not", "helpful", "unhelpful"],
            (
                [
                    f'<a href="{e(root)}/memories/{f["memory_id"]}">#{f["memory_id"]}</a>',
                    e(short(f["content"], 200)),
                    str(f["worked"]),
                    str(f["failed"]),
                    str(f["helpful"]),
                    str(f["unhelpful"]),
                ]
                for f in fixes
            ),
            numeric=(2, 3, 4, 5),
        ),
        f'<h2>Memories with this signature <span class="muted">(latest {len(mems)})</span></h2>',
        _memory_table(root, mems),
        f'<h2>Attempts <span class="muted">(latest {len(attempts)})</span></h2>',
        table(
            ["when", "task", "technique", "result", "agent", "notes"],
            (
                [
                    e(when(a["attempted_at"])),
                    e(a["task_id"]),
                    e(a["technique"]),
                    _result(a["result"]),
                    e(a["agent_id"] or "–"),
                    e(short(a["notes"], 120)),
                ]
                for a in attempts
            ),
        ),
    ]
    return f"Error {sig}", "".join(out)


def _result(r: str) -> str:
    mark = {"fixed": "✔", "decomposed": "✔", "failed": "✘", "escalated": "⇪"}.get(r, "")
    return f'<span class="res res-{e(r)}"><span aria-hidden="true">{mark}</span> {e(r)}</span>'


# -- memories ---------------------------------------------------------------------------------
def _memory_table(root: str, mems: Sequence[Memory], hits: Sequence[RecallHit] | None = None) -> str:
    headers = ["id", "type", "agent", "scope", "namespace", "content", "tags", "relevance", "applied", "state"]
    if hits is not None:
        headers = ["score", "why (score by component)"] + headers
    rows = []
    for i, m in enumerate(mems):
        state = " ".join(x for x, on in (("archived", m.archived), ("pinned", m.pinned)) if on) or "live"
        row = [
            f'<a href="{e(root)}/memories/{m.id}">#{m.id}</a>',
            e(m.type),
            e(m.agent_id),
            e(m.scope),
            e(m.namespace),
            e(short(m.content)),
            e(", ".join(m.tags)),
            f"{m.relevance_score:.2f}",
            f"{m.times_successful}/{m.times_applied}",
            e(state),
        ]
        if hits is not None:
            h = hits[i]
            row = [f"{h.score:.3f}", _score_bar(h)] + row
        rows.append(row)
    return table(headers, rows, numeric=(0,) if hits is not None else (), cls="memories")


def score_parts(h: RecallHit) -> list[tuple[str, float]]:
    """Each channel's share of the final score: its weighted part of the match, times the same
    multiplier (relevance × prior factor) that turns the match into the score."""
    b = h.breakdown
    w = b.weights
    active = [
        (k, getattr(b, k), w.get(k, 0.0))
        for k in ("vector", "keyword", "tags", "signature")
        if getattr(b, k) is not None and w.get(k, 0.0) > 0
    ]
    total_w = sum(x[2] for x in active)
    scale = (b.score / b.match) if b.match > 0 else 0.0
    return [(k, (v * wt / total_w) * scale if total_w else 0.0) for k, v, wt in active]


def _score_bar(h: RecallHit) -> str:
    b = h.breakdown
    parts = score_parts(h)
    legend = ", ".join(f"{k} {v:.3f}" for k, v in parts)
    return (
        svg.score_bar(parts, b.score, label=f"score {b.score:.3f}: {legend}")
        + f'<div class="why">{e(legend)} · × relevance {b.relevance:.2f} × prior factor '
        f"(usefulness {b.usefulness:.2f}, recency {b.recency:.2f}, importance {b.importance:.2f})</div>"
    )


def _select(name: str, label: str, options: Sequence[tuple[str, str]], current: str | None) -> str:
    opts = "".join(
        f'<option value="{e(v)}"{" selected" if v == (current or "") else ""}>{e(t)}</option>' for v, t in options
    )
    return f'<label>{e(label)} <select name="{e(name)}">{opts}</select></label>'


def memories(q: Queries, store: Any, root: str, params: dict[str, str]) -> tuple[str, str]:
    text = params.get("q", "").strip()
    f = MemoryFilter(
        agent_id=params.get("agent") or None,
        memory_type=params.get("type") or None,
        scope=params.get("scope") or None,
        namespace=params.get("namespace") or None,
        tags=tuple(t.strip() for t in params.get("tags", "").split(",") if t.strip())[:8],
        archived={"live": False, "archived": True}.get(params.get("state", ""), None),
        pinned=True if params.get("state") == "pinned" else None,
    )
    with q.snapshot():
        facets = q.facets()
    # recall searches one namespace: the configured one, or else the one holding the most memories
    names = [n for n, _c in facets["namespace"]]
    default_ns = store.settings.namespace if store.settings.namespace in names or not names else names[0]
    form = (
        f'<form class="filters" method="get" action="{e(root)}/memories" role="search">'
        f'<label class="grow">search <input type="search" name="q" value="{e(text)}" '
        'placeholder="what went wrong, what fixed it…"></label>'
        + _select(
            "namespace",
            "namespace",
            [("", f"(default: {default_ns})" if text else "(any)")]
            + [(n, f"{n} ({c:,})") for n, c in facets["namespace"]],
            f.namespace,
        )
        + _select(
            "agent",
            "agent" if not text else "as seen by agent",
            [("", "(global memories only)" if text else "(any)")] + [(n, f"{n} ({c:,})") for n, c in facets["agent"]],
            f.agent_id,
        )
        + _select("type", "type", [("", "(any)")] + [(n, f"{n} ({c:,})") for n, c in facets["type"]], f.memory_type)
        + _select("scope", "scope", [("", "(any)"), ("agent", "agent"), ("global", "global")], f.scope)
        + f'<label>tags (all of) <input name="tags" value="{e(", ".join(f.tags))}" size="14" '
        'placeholder="a, b"></label>'
        + _select(
            "state",
            "state",
            [("", "(any)"), ("live", "live"), ("archived", "archived"), ("pinned", "pinned")],
            params.get("state"),
        )
        + '<button type="submit">Show</button></form>'
    )
    out = [form]
    gone = params.get("forgotten", "")
    if gone.isdigit() and len(gone) < 19:
        out.insert(0, f'<p class="notice" role="status">Forgot memory #{int(gone)}.</p>')
    if text:
        hits = store.recall(
            text,
            agent_id=f.agent_id,
            namespace=f.namespace or default_ns,
            types=[f.memory_type] if f.memory_type else None,
            tags=list(f.tags) or None,
            include_archived=f.archived is not False,
            limit=50,
            record=False,
        )
        hits = [
            h
            for h in hits
            if (f.scope is None or h.memory.scope == f.scope)
            and (f.archived is None or h.memory.archived == f.archived)
            and (f.pinned is None or h.memory.pinned == f.pinned)
            and set(f.tags) <= set(h.memory.tags)
        ]
        out.append(
            f'<p class="lead">{len(hits)} hits of the same hybrid recall the harness uses (recorded nowhere: '
            "a search here is not an access). "
            + (
                "Without an agent, recall sees global memories only; pick an agent to search as that agent."
                if f.agent_id is None
                else f"Searching as agent {e(f.agent_id)}: its own and global memories."
            )
            + "</p>"
        )
        out.append(
            '<p class="legend-line">Score bar: '
            + "".join(
                f'<span class="sw sw{i}"></span> {k} ' for i, k in enumerate(("vector", "keyword", "tags", "signature"))
            )
            + "— each channel's share of the final score.</p>"
        )
        out.append(_memory_table(root, [h.memory for h in hits], hits))
    else:
        before = params.get("before")
        before_id = int(before) if before and before.isdigit() and len(before) < 19 else None
        with q.snapshot():
            mems = q.browse(f, before=before_id, limit=50)
        out.append('<p class="lead">Newest first, 50 at a time.</p>')
        out.append(_memory_table(root, mems))
        if len(mems) == 50:
            keep = {k: v for k, v in params.items() if k not in ("before", "forgotten")}
            out.append(f'<p><a rel="next" href="{e(root)}/memories{e(qs(**keep, before=mems[-1].id))}">older →</a></p>')
    return "Memories", "".join(out)


def memory(q: Queries, store: Any, root: str, memory_id: int, csrf: str, notice: str | None = None) -> tuple[str, str]:
    m = store.get(memory_id)  # the public API: MemoryNotFoundError for an unknown id
    with q.snapshot():
        hist = q.history(memory_id)
        merges = q.merges(memory_id)
        access, counts = q.access(memory_id)
        members, patterns = q.pattern_links(memory_id)
        fixl = q.fix_links(memory_id)
    fields = m.model_dump(mode="json")
    content = fields.pop("content")
    out = []
    if notice:
        out.append(f'<p class="notice" role="status">{e(notice)}</p>')
    out.append(f'<blockquote class="content">{e(content)}</blockquote>')
    acts = (
        ["unpin" if m.pinned else "pin"]
        + (["restore"] if m.archived else [] if m.pinned else ["archive"])
        + ["forget"]
        + (["edit"] if m.key is not None else [])
    )
    out.append(
        '<p class="actions">'
        + " ".join(f'<a class="button" href="{e(root)}/memories/{m.id}/confirm/{a}">{e(ACTIONS[a])}</a>' for a in acts)
        + (
            ""
            if m.key is not None
            else ' <span class="muted">(content can be edited for keyed memories: a new '
            "version through remember(key=…))</span>"
        )
        + "</p>"
    )
    state = " ".join(x for x, on in (("archived", m.archived), ("pinned", m.pinned)) if on) or "live"
    out.append(
        table(
            [
                "agent",
                "scope",
                "namespace",
                "key",
                "tags",
                "relevance",
                "applied (helpful)",
                "state",
                "created",
                "updated",
            ],
            [
                [
                    e(m.agent_id),
                    e(m.scope),
                    e(m.namespace),
                    e(m.key or "–"),
                    e(", ".join(m.tags) or "–"),
                    f"{m.relevance_score:.2f}",
                    f"{m.times_applied} ({m.times_successful})",
                    e(state),
                    e(when(m.created_at)),
                    e(when(m.updated_at)),
                ]
            ],
        )
    )
    fields_html = table(
        ["field", "value"],
        ([e(k), e(json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v)] for k, v in fields.items()),
        cls="fields",
    )
    links = []
    if m.consolidated_into is not None:
        links.append(f'consolidated into <a href="{e(root)}/memories/{m.consolidated_into}">#{m.consolidated_into}</a>')
    links += [
        f'member of pattern <a href="{e(root)}/memories/{p}">#{p}</a> (similarity {s:.2f}): {e(short(c, 100))}'
        for p, s, c in patterns
    ]
    links += [
        f'pattern member <a href="{e(root)}/memories/{i}">#{i}</a> (similarity {s:.2f}): {e(short(c, 100))}'
        for i, s, c in members
    ]
    if m.error_signature:
        links.append(
            f'error signature <a href="{e(root)}/errors/{e(seg(m.error_signature))}">'
            f"<code>{e(m.error_signature)}</code></a>"
        )
    out.append(
        "<h2>Links</h2>"
        + ("<ul>" + "".join(f"<li>{x}</li>" for x in links) + "</ul>" if links else '<p class="muted">none</p>')
    )
    if fixl:
        out.append(
            "<h2>Errors it fixes</h2>"
            + table(
                ["signature", "category", "error", "worked", "did not", "helpful", "unhelpful"],
                (
                    [
                        f'<a href="{e(root)}/errors/{e(seg(x["error_signature"]))}"><code>{e(x["error_signature"])}</code></a>',
                        e(x["error_category"]),
                        e(short(x["error_message"], 120)),
                        str(x["worked"]),
                        str(x["failed"]),
                        str(x["helpful"]),
                        str(x["unhelpful"]),
                    ]
                    for x in fixl
                ),
                numeric=(3, 4, 5, 6),
            )
        )
    out.append(
        "<h2>History</h2>"
        + table(
            ["version", "content", "valid from", "valid until"],
            (
                [str(h["version"]), e(short(h["content"], 200)), e(when(h["valid_from"])), e(when(h["valid_until"]))]
                for h in hist
            ),
        )
    )
    out.append(
        "<h2>Merged duplicates</h2>"
        + table(
            ["kind", "similarity", "content", "agent", "when"],
            (
                [
                    e(x["kind"]),
                    f"{x['similarity']:.3f}",
                    e(short(x["content"], 160)),
                    e(x["agent_id"] or "–"),
                    e(when(x["merged_at"])),
                ]
                for x in merges
            ),
        )
    )
    out.append(
        "<h2>Access log</h2><p>"
        + (", ".join(f"{e(k)}: {v:,}" for k, v in sorted(counts.items())) or "none")
        + "</p>"
        + table(
            ["when", "access", "agent", "task", "helpful", "outcome", "score"],
            (
                [
                    e(when(a["timestamp"])),
                    e(a["access_type"]),
                    e(a["agent_id"] or "–"),
                    e(a["task_id"] or "–"),
                    {1: "yes", 0: "no"}.get(a["was_helpful"], "–"),
                    e(short(a["outcome"], 100)),
                    "–" if a["score"] is None else f"{a['score']:.3f}",
                ]
                for a in access
            ),
        )
    )
    out.append(f'<details class="data"><summary>every field</summary>{fields_html}</details>')
    return f"Memory #{m.id} ({m.type})", "".join(out)


def confirm(store: Any, root: str, memory_id: int, action: str, csrf: str) -> tuple[str, str]:
    m = store.get(memory_id)
    what = {
        "pin": "Pin this memory: decay and archiving will skip it.",
        "unpin": "Unpin this memory: decay and archiving apply to it again.",
        "archive": "Archive this memory: recall leaves it out and decay pauses on it; its content, counters "
        "and history stay, and Restore brings it back.",
        "restore": "Restore this archived memory: recall sees it again (relevance at least 0.5).",
        "forget": "Forget this memory for good: its row, index entries, history, merges, links and access log "
        "are deleted. This cannot be undone.",
        "edit": "Store a new version of this memory's content (the current one is kept in its history).",
    }[action]
    field = (
        f'<label class="block">content<textarea name="content" rows="8" required>{e(m.content)}</textarea></label>'
        if action == "edit"
        else ""
    )
    body = (
        f'<blockquote class="content">{e(short(m.content, 400))}</blockquote><p>{e(what)}</p>'
        f'<form method="post" action="{e(root)}/memories/{m.id}/{e(action)}">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">{field}'
        f'<button type="submit" class="{"danger" if action == "forget" else ""}">{e(ACTIONS[action])} '
        f'#{m.id}</button> <a href="{e(root)}/memories/{m.id}">cancel</a></form>'
    )
    return f"{ACTIONS[action]} memory #{m.id}?", body


# -- maintenance ------------------------------------------------------------------------------
def maintenance(q: Queries, store: Any, root: str, weeks: int = DEFAULT_WEEKS) -> tuple[str, str]:
    since, xs = _weeks(q, weeks)
    status = store.job_status()  # the public API: leases and the latest run of each job
    with q.snapshot():
        runs = q.job_runs(60)
        hist = q.summary(q.relevance_histogram, 10)
        created = q.weekly(q.weekly_created, since)
        before = q.memories_before(since)
        size = q.storage_bytes()
        tot = q.totals()
    per_week: dict[float, int] = defaultdict(int)
    for w, _t, _a, n in created:
        per_week[w] += n
    cum: list[tuple[float, float | None]] = []
    run = before
    for w in xs:
        run += per_week.get(w, 0)
        cum.append((w, run))
    if size is None:
        storage = tile("Storage", "–", detail="a server database: its size is the server's to report")
    elif "schema" in size:
        storage = tile(
            "Storage",
            f"{size['bytes'] / 1e6:,.1f} MB",
            detail=f"the tables of schema {size['schema']} with their indexes (pg_total_relation_size)",
        )
    else:
        mb = (size["database"] + size["wal"]) / 1e6
        storage = tile(
            "Storage",
            f"{mb:,.1f} MB",
            detail=f"database {size['database'] / 1e6:,.1f} MB + write-ahead log {size['wal'] / 1e6:,.1f} MB",
        )
    out = [
        '<div class="tiles">',
        tile(
            "Stored memories",
            f"{tot['memories']:,}",
            detail=f"{tot['archived']:,} archived, {tot['pinned']:,} pinned (exempt from decay)",
        ),
        storage,
        tile(
            "Leases held now",
            str(len(status["leases"])),
            detail=", ".join(f"{x['job']} by {x['holder']}" for x in status["leases"]) or "no job is running",
        ),
        "</div>",
        (
            '<h2>Decay: relevance of stored memories</h2><p class="lead">Decay lowers relevance over time; access '
            "raises it; the lowest are archived (hatched: archived).</p>"
        ),
        svg.stacked_bars(
            [lo for lo, _hi, _l, _a in hist],
            [("live", [live for *_x, live, _a in hist]), ("archived", [a for *_x, a in hist])],
            label="memories by relevance score",
            x_fmt=lambda v: f"{v:.1f}",
        ),
        "<h2>Growth</h2>",
        svg.line_chart([svg.Series("stored memories (created, still stored)", cum)], label="memories stored over time"),
        "<h2>Job runs</h2>",
        table(
            ["job", "status", "started", "seconds", "counts / error", "holder"],
            (
                [
                    e(r["job"]),
                    _status(r["status"]),
                    e(when(r["started_at"])),
                    "–" if r["finished_at"] is None else f"{r['finished_at'] - r['started_at']:.2f}",
                    e(r["error"] or _counts(r["counts"])),
                    e(r["holder"]),
                ]
                for r in runs
            ),
            numeric=(3,),
        ),
    ]
    return "Maintenance", "".join(out)


def _status(s: str) -> str:
    mark = {"ok": "✔", "failed": "✘", "skipped": "–", "running": "…"}.get(s, "")
    return f'<span class="res res-{e(s)}"><span aria-hidden="true">{mark}</span> {e(s)}</span>'


def _counts(raw: str | None) -> str:
    try:
        d = json.loads(raw or "{}")
    except ValueError:
        return raw or ""
    if not isinstance(d, dict):
        return str(d)
    return ", ".join(f"{k} {v}" for k, v in d.items() if k != "plan")
