"""The dashboard's rendering: hostile text is shown as text, and a chart's geometry means what it shows.

The pages are built from the helpers of ``harness_memory.dashboard.html`` (frame, tables, tiles, links) and
the charts of ``harness_memory.dashboard.svg``. A reader relies on two things: stored text (a memory, a tag,
an agent, an error message) never becomes markup, and a chart's marks sit where their values say (a larger
value is drawn higher or longer, stacked parts add up, an axis starts at zero and ends at a round number
above the data). These tests read the rendered markup back with a parser, not its source.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta, timezone
from html.parser import HTMLParser

import pytest

from harness_memory.dashboard.html import NAV, day, e, link, page, qs, seg, short, table, tile, when
from harness_memory.dashboard.svg import (
    Interval,
    Series,
    fmt_num,
    fmt_pct,
    histogram,
    interval_plot,
    line_chart,
    score_bar,
    sparkline,
    stacked_bars,
    week_label,
)

HOSTILE = '<script>alert("x")</script><img src=x onerror=\'y\'> & "quoted"'
MONDAY = datetime(2026, 1, 5, tzinfo=UTC).timestamp()
WEEK = 7 * 86400


# -- reading markup back ------------------------------------------------------------------------------------------
class _Tree(HTMLParser):
    """Every start tag with its attributes, and the text inside each tag name."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._open: list[str] = []
        self.text_in: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop() == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open:
            self.text_in.setdefault(self._open[-1], []).append(data)


def parse(markup: str) -> _Tree:
    t = _Tree()
    t.feed(markup)
    t.close()
    return t


def tags(markup: str, name: str) -> list[dict[str, str | None]]:
    return [a for t, a in parse(markup).tags if t == name]


def svg(markup: str) -> ET.Element:
    """The chart as XML (an SVG must be well-formed), namespaces dropped."""
    root = ET.fromstring(markup)
    for el in root.iter():
        el.tag = el.tag.split("}")[-1]
    return root


def points(root: ET.Element) -> list[ET.Element]:
    return [el for el in root.iter() if el.get("class") == "pt"]


def f(el: ET.Element, name: str) -> float:
    return float(el.get(name) or "nan")


def assert_no_markup_from(markup: str, hostile: str = HOSTILE) -> None:
    """The hostile text's tags never appear as tags, only as text."""
    names = [t for t, _ in parse(markup).tags]
    assert "script" not in names and "img" not in names, markup
    assert "<script>" not in markup and "<img" not in markup


# -- html: text and attributes ------------------------------------------------------------------------------------
def test_escaping_turns_every_markup_character_into_text():
    out = e(HOSTILE)
    assert_no_markup_from(out)
    assert '"' not in out and "'" not in out  # safe inside either kind of quoted attribute
    assert "".join(parse(out).text) == HOSTILE  # and reads back as the same text
    assert e(None) == ""
    assert e(0) == "0" and e(2.5) == "2.5"


def test_short_collapses_whitespace_and_cuts_at_the_bound_with_an_ellipsis():
    assert short(None) == ""
    assert short("  a \n\t b  ") == "a b"
    assert short("x" * 160) == "x" * 160  # at the bound: kept whole
    cut = short("x" * 161)
    assert cut == "x" * 159 + "…" and len(cut) == 160  # one past it: cut to the bound
    assert short("abcdef", n=4) == "abc…"
    assert short("abcd", n=4) == "abcd"


def test_times_are_shown_in_utc_whatever_their_zone():
    ts = datetime(2026, 3, 4, 5, 6, tzinfo=UTC).timestamp()
    assert when(ts) == "2026-03-04 05:06 UTC"
    assert when(int(ts)) == "2026-03-04 05:06 UTC"
    east = datetime(2026, 3, 4, 7, 6, tzinfo=timezone(timedelta(hours=2)))
    assert when(east) == "2026-03-04 05:06 UTC"
    assert when(None) == "–"
    assert day(ts) == "2026-03-04"
    assert day(datetime(2026, 3, 4, 23, 59, tzinfo=UTC).timestamp()) == "2026-03-04"
    assert day(None) == "–"


def test_a_query_string_keeps_every_given_value_and_drops_only_the_empty_ones():
    assert qs() == ""
    assert qs(a=None, b="") == ""
    assert qs(q="a b&c", n=0) == "?q=a+b%26c&n=0"  # 0 is a value, not an empty one
    assert qs(flag=False) == "?flag=False"


def test_a_link_escapes_its_target_and_text():
    out = link("/dash", "memories", HOSTILE, q='"><b>x', agent=None)
    (a,) = tags(out, "a")
    assert a["href"] == "/dash/memories?q=%22%3E%3Cb%3Ex"
    assert "".join(parse(out).text) == HOSTILE
    assert_no_markup_from(out)
    assert tags(link("/d", "errors", "E"), "a")[0]["href"] == "/d/errors"


def test_a_path_segment_cannot_leave_its_segment():
    assert seg("a/b c?d#e") == "a%2Fb%20c%3Fd%23e"
    assert seg("../x") == "..%2Fx"
    assert seg("err_0a1b") == "err_0a1b"


# -- html: tables, tiles, the page frame --------------------------------------------------------------------------
def test_a_table_escapes_its_headers_caption_and_class_and_marks_numeric_columns():
    out = table(
        [HOSTILE, "count"],
        iter([["a", "1"], ["b", "2"]]),  # any iterable of rows, a generator included
        caption=HOSTILE,
        numeric=[1],
        cls='x" onclick="y',
    )
    assert_no_markup_from(out)
    t = parse(out)
    assert "".join(t.text_in["caption"]) == HOSTILE
    ths = [a for n, a in t.tags if n == "th"]
    assert [a.get("class") for a in ths] == [None, "num"]
    assert all(a["scope"] == "col" for a in ths)
    tds = [a for n, a in t.tags if n == "td"]
    assert [a.get("class") for a in tds] == [None, "num", None, "num"]
    assert t.text_in["td"] == ["a", "1", "b", "2"]
    (tab,) = tags(out, "table")
    assert tab["class"] == 'x" onclick="y' and "onclick" not in tab
    assert "nothing yet" not in out
    assert "<caption>" not in table(["a"], [["1"]])  # no caption, no empty element


def test_an_empty_table_says_so_across_all_its_columns():
    out = table(["a", "b", "c"], [])
    (td,) = tags(out, "td")
    assert td["colspan"] == "3" and td["class"] == "empty"
    assert "nothing yet" in "".join(parse(out).text)


@pytest.mark.parametrize(("ok", "mark", "cls"), [(True, "✔", "good"), (False, "✘", "bad"), (None, "•", "neutral")])
def test_a_tiles_verdict_is_said_by_an_icon_and_a_class_not_by_colour_alone(ok, mark, cls):
    out = tile(HOSTILE, HOSTILE, detail=HOSTILE, verdict=HOSTILE, ok=ok, chart="<svg></svg>")
    assert_no_markup_from(out)
    t = parse(out)
    (p,) = [a for n, a in t.tags if n == "p" and "verdict" in (a.get("class") or "")]
    assert p["class"] == f"verdict {cls}"
    assert t.text_in["span"] == [mark]
    assert "".join(t.text_in["h3"]) == HOSTILE
    assert tags(out, "section")[0]["aria-label"] == HOSTILE
    assert tags(out, "svg")  # the chart is markup the caller built


def test_a_tile_without_a_verdict_has_no_verdict_line():
    out = tile("Runs", "12", detail="last 4 weeks")
    assert "verdict" not in out and "✔" not in out and "✘" not in out
    t = parse(out)
    assert t.text_in["h3"] == ["Runs"]
    assert "".join(t.text) == "Runs12last 4 weeks"  # the title, the figure, the detail and nothing else
    assert "".join(parse(tile("Runs", "12")).text) == "Runs12"  # no detail given: an empty one
    assert [a.get("class") for n, a in t.tags if n == "p"] == ["figure", "detail"]


def test_the_page_frame_marks_the_current_page_and_escapes_the_title():
    out = page("/dash", "errors", HOSTILE, "<p>body</p>")
    assert_no_markup_from(out)
    t = parse(out)
    nav = [a for n, a in t.tags if n == "a" and a.get("href", "").startswith("/dash/")]  # type: ignore[union-attr]
    assert [a["href"] for a in nav] == ["/dash/" + p for p, _ in NAV]
    assert [a["href"] for a in nav if "aria-current" in a] == ["/dash/errors"]
    names = [x for x in t.text_in["a"] if x.strip()]
    assert names[1:] == ["Overview", "Techniques", "Errors", "Memories", "Maintenance"]  # after "Skip to content"
    assert "OverviewTechniquesErrorsMemoriesMaintenance" in "".join(t.text)  # nothing between the links
    assert [sorted(a) for a in nav] == [["href"]] * 2 + [["aria-current", "href"]] + [["href"]] * 2
    assert t.text_in["title"] == [f"{HOSTILE} · harness-memory"]
    assert "".join(t.text_in["h1"]) == HOSTILE
    assert "<p>body</p>" in out  # the body is the caller's markup
    assert not tags(out, "form")  # no log-out button unless asked
    assert "rendered in" not in out
    assert "".join(t.text_in["footer"]).startswith("times are UTC;")  # no render time: the footer starts here
    assert tags(out, "link")[0]["href"] == "/dash/static/dashboard.css"


def test_the_page_frame_offers_log_out_and_the_render_time_when_given():
    out = page('/d"x', "", "T", "", elapsed_ms=12.4, logout=True)
    (form,) = tags(out, "form")
    assert form["method"] == "post" and form["action"] == '/d"x/logout'
    assert "rendered in 12 ms · " in "".join(parse(out).text)
    current = [a["href"] for a in tags(out, "a") if "aria-current" in a]
    assert current == ['/d"x/']  # the overview is the page whose path is ""


# -- svg: numbers in words ----------------------------------------------------------------------------------------
def test_numbers_and_shares_are_written_for_reading():
    assert fmt_pct(None) == "–" and fmt_pct(0.256) == "26%" and fmt_pct(1) == "100%" and fmt_pct(0) == "0%"
    assert fmt_num(None) == "–"
    assert fmt_num(3.0) == "3" and fmt_num(1234) == "1,234" and fmt_num(0) == "0"
    assert fmt_num(2.5) == "2.50" and fmt_num(12345.678) == "12,345.68"
    assert week_label(MONDAY) == "Jan 05"


# -- svg: line charts ---------------------------------------------------------------------------------------------
def _axis(root: ET.Element) -> list[tuple[float, str]]:
    """The y-axis labels, bottom to top, with their heights."""
    out = [
        (f(t, "y"), t.text or "")
        for t in root.iter("text")
        if t.get("text-anchor") == "end" and t.get("class") == "axis"
    ]
    return sorted(out, reverse=True)


def test_a_line_charts_points_sit_where_their_values_say():
    s = Series("runs", [(MONDAY + i * WEEK, float(v)) for i, v in enumerate([10, 37, 0, 20])])
    root = svg(line_chart([s], label="runs per week"))
    pts = points(root)
    assert [float(p.get("data-value") or 0) for p in pts] == [10, 37, 0, 20]
    xs = [f(p, "cx") for p in pts]
    ys = [f(p, "cy") for p in pts]
    assert xs == sorted(xs) and xs[0] == 48.0 and xs[-1] == 640 - 28  # time runs left to right, edge to edge
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.11)  # weekly points evenly spaced
    # 37 * 1.05 rounds up to a top of 40: labels 0, 10, 20, 30, 40 from the bottom (y = 220 - 28) to the top
    axis = _axis(root)
    assert [t for _, t in axis] == ["0", "10", "20", "30", "40"]
    assert axis[0][0] == pytest.approx(220 - 28 + 4) and axis[-1][0] == pytest.approx(12 + 4)
    plot_h = 220 - 12 - 28
    for v, y in zip([10, 37, 0, 20], ys, strict=True):
        assert y == pytest.approx(12 + plot_h - v / 40 * plot_h, abs=0.06)  # higher value, higher on the chart
    (path,) = [el for el in root.iter("path") if el.get("class") == "series"]
    assert path.get("d", "").count("L") == 3  # one line through the four points
    titles = [p.find("title").text for p in pts]  # type: ignore[union-attr]
    assert titles[1] == "runs, Jan 12: 37"
    assert root.get("aria-label") == "runs per week" and root.get("role") == "img"
    assert not [el for el in root.iter("rect") if el.get("class") == "key"]  # one series: no legend


def test_a_line_charts_axis_rounds_up_to_a_round_number_above_the_data():
    for top_value, axis_top in [(0.9, "1"), (1.0, "2"), (1.7, "2"), (3.5, "4"), (7.0, "8"), (9.0, "10"), (95.0, "100")]:
        s = Series("v", [(MONDAY, top_value / 2), (MONDAY + WEEK, top_value)])
        labels = [t for _, t in _axis(svg(line_chart([s], label="v")))]
        assert labels[0] == "0" and labels[-1] == axis_top, (top_value, labels)
    zero = svg(line_chart([Series("v", [(MONDAY, 0.0), (MONDAY + WEEK, 0.0)])], label="v"))
    assert _axis(zero)[-1][1] == "1"  # nothing but zeros: an axis of 0 to 1, points on the floor
    assert {f(p, "cy") for p in points(zero)} == {220 - 28}


def test_a_line_chart_with_a_fixed_top_clips_larger_values_to_it_and_draws_the_target():
    s = Series("rate", [(MONDAY, 0.5), (MONDAY + WEEK, 1.5)])
    root = svg(line_chart([s], label="rate", y_max=1.0, y_fmt=fmt_pct, target=(0.25, HOSTILE)))
    pts = points(root)
    assert f(pts[1], "cy") == 12.0  # past the top: drawn at the top, its value still told
    assert pts[1].get("data-value") == "1.5"
    assert f(pts[0], "cy") == pytest.approx(12 + 180 / 2)
    (target,) = [el for el in root.iter("line") if el.get("class") == "target"]
    assert f(target, "y1") == f(target, "y2") == pytest.approx(12 + 180 * 0.75)
    # the target and the grid run across the whole plot, from the axis to the right margin
    for line in [target] + [el for el in root.iter("line") if el.get("class") == "grid"]:
        assert (f(line, "x1"), f(line, "x2")) == (48, 640 - 28)
    (tl,) = [el for el in root.iter("text") if "target-label" in (el.get("class") or "")]
    assert tl.text == HOSTILE  # the label is text inside the chart
    assert [t for _, t in _axis(root)] == ["0%", "25%", "50%", "75%", "100%"]


def test_a_target_above_the_data_raises_the_axis_to_show_it():
    s = Series("v", [(MONDAY, 1.0), (MONDAY + WEEK, 2.0)])
    root = svg(line_chart([s], label="v", target=(7.5, "goal")))
    assert _axis(root)[-1][1] == "8"
    (target,) = [el for el in root.iter("line") if el.get("class") == "target"]
    assert 12 <= f(target, "y1") < 12 + 180 * 0.1


def test_several_series_differ_by_marker_and_dash_and_have_an_escaped_legend():
    series = [Series(f"{HOSTILE}{i}", [(MONDAY, float(i + 1)), (MONDAY + WEEK, float(i + 2))]) for i in range(3)]
    out = line_chart(series, label=HOSTILE)
    assert_no_markup_from(out)
    root = svg(out)
    assert root.get("aria-label") == HOSTILE
    kinds = [p.tag for p in points(root)]
    assert kinds == ["circle", "circle", "rect", "rect", "path", "path"]
    dashes = [el.get("stroke-dasharray") for el in root.iter("path") if el.get("class") == "series"]
    assert len(set(dashes)) == 3
    legend = [t.text for t in root.iter("text") if t.get("class") == "legend"]
    assert legend == [s.name[:44] for s in series]
    keys = [el for el in root.iter() if el.get("class") == "key"]
    assert len(keys) == 3
    # the plot starts lower to leave the legend room: the top grid line sits at 28, not 12
    grid_top = min(f(el, "y1") for el in root.iter("line") if el.get("class") == "grid")
    assert grid_top == 28.0


def test_gaps_in_a_series_are_skipped_and_a_lone_point_sits_in_the_middle():
    s = Series("v", [(MONDAY, 4.0), (MONDAY + WEEK, None), (MONDAY + 2 * WEEK, 8.0)])
    pts = points(svg(line_chart([s], label="v")))
    assert [p.get("data-value") for p in pts] == ["4", "8"]
    lone = svg(line_chart([Series("v", [(MONDAY, 3.0)])], label="v"))
    (p,) = points(lone)
    assert f(p, "cx") == pytest.approx(48 + (640 - 48 - 28) / 2)
    assert not [el for el in lone.iter("path") if el.get("class") == "series"]  # one point: no line
    empty = line_chart([Series("v", [(MONDAY, None)])], label=HOSTILE)
    assert "no data yet" in empty and "<svg" not in empty
    assert_no_markup_from(empty)


def test_a_long_run_of_weeks_labels_at_most_eight_of_them():
    s = Series("v", [(MONDAY + i * WEEK, float(i)) for i in range(26)])
    root = svg(line_chart([s], label="v"))
    xlabels = [t for t in root.iter("text") if t.get("text-anchor") == "middle"]
    assert 6 <= len(xlabels) <= 8
    assert xlabels[0].text == "Jan 05"
    short_run = svg(line_chart([Series("v", [(MONDAY + i * WEEK, 1.0) for i in range(5)])], label="v"))
    assert len([t for t in short_run.iter("text") if t.get("text-anchor") == "middle"]) == 5


# -- svg: stacked bars, histograms, score bars, intervals, sparklines -------------------------------------------
def test_stacked_bars_stand_on_each_other_and_their_heights_add_up():
    xs = [MONDAY, MONDAY + WEEK, MONDAY + 2 * WEEK]
    stacks = [("ok", [3.0, 0.0, 6.0]), ("failed", [1.0, 2.0, 0.0]), (HOSTILE, [0.0, 2.0, 2.0])]
    out = stacked_bars(xs, stacks, label="outcomes")
    assert_no_markup_from(out)
    root = svg(out)
    bars = points(root)
    assert [b.get("data-value") for b in bars] == ["3", "1", "2", "2", "6", "2"]  # zeros draw nothing
    ph = 220 - 28 - 28
    top = 8.0  # the tallest stack is 6 + 2: the axis ends at 8
    assert [t for _, t in _axis(root)] == ["0", "2", "4", "6", "8"]
    floor = 28 + ph
    # the first week: 3 from the floor, 1 on top of it
    assert f(bars[0], "height") == pytest.approx(3 / top * ph, abs=0.06)
    assert f(bars[0], "y") + f(bars[0], "height") == pytest.approx(floor, abs=0.1)
    assert f(bars[1], "y") + f(bars[1], "height") == pytest.approx(f(bars[0], "y"), abs=0.1)
    assert f(bars[1], "height") == pytest.approx(1 / top * ph, abs=0.06)
    # bars advance left to right, one slot per week
    assert f(bars[0], "x") < f(bars[2], "x") < f(bars[4], "x")
    assert f(bars[2], "x") - f(bars[0], "x") == pytest.approx((640 - 48 - 12) / 3, abs=0.1)
    assert bars[5].find("title").text == f"{HOSTILE}, Jan 19: 2"  # type: ignore[union-attr]
    # the second and third series carry a hatch overlay as well as a colour
    overlays = [el.get("fill") for el in root.iter("rect") if (el.get("fill") or "").startswith("url(")]
    assert overlays == ["url(#hatch1)", "url(#hatch1)", "url(#hatch2)", "url(#hatch2)"]
    assert [t.text for t in root.iter("text") if t.get("class") == "legend"] == ["ok", "failed", HOSTILE[:44]]
    assert stacked_bars([], stacks, label="x").startswith('<p class="empty">')
    assert stacked_bars(xs, [], label="x").startswith('<p class="empty">')


def test_a_histograms_bars_are_as_tall_as_their_counts():
    bins = [(0.0, 0.5, 2), (0.5, 1.0, 8), (1.0, 1.5, 0)]
    root = svg(histogram(bins, label="ages"))
    bars = points(root)
    assert [b.get("data-value") for b in bars] == ["2", "8", "0"]
    ph = 200 - 12 - 28
    assert f(bars[1], "height") == pytest.approx(ph, abs=0.06)  # 8 is the top of the axis
    assert f(bars[0], "height") == pytest.approx(ph / 4, abs=0.06)
    assert f(bars[2], "height") == 0.0
    for b in bars:
        assert f(b, "y") + f(b, "height") == pytest.approx(12 + ph, abs=0.1)
    bw = (640 - 56 - 12) / 3
    for a, b in zip(bars, bars[1:], strict=False):  # side by side, a 2 px gap between neighbours
        assert f(b, "x") - f(a, "x") == pytest.approx(bw, abs=0.1)
        assert f(b, "x") - (f(a, "x") + f(a, "width")) == pytest.approx(2, abs=0.1)
    assert [t for y, t in _axis(root) if y < 200 - 8] == ["0", "2", "4", "6", "8"]  # the y axis
    assert bars[1].find("title").text == "0.5–1.0: 8"  # type: ignore[union-attr]
    bottom = [t.text for t in root.iter("text") if t.get("class") == "axis" and t.get("text-anchor") != "end"]
    assert bottom == ["0.0", "0.5", "1.0"] and [t.text for t in root.iter("text")][-1] == "1.5"
    assert histogram([(0, 1, 0)], label=HOSTILE) == f'<p class="empty">{e(HOSTILE)}: no data yet.</p>'
    assert histogram([], label="x").startswith('<p class="empty">')


def test_a_score_bars_segments_are_as_long_as_their_parts_and_touch():
    parts = [("semantic", 0.4), ("keyword", 0.25), ("none", 0.0), ("negative", -0.1), (HOSTILE, 0.1)]
    out = score_bar(parts, 0.75, label="score")
    assert_no_markup_from(out)
    root = svg(out)
    segs = points(root)
    assert [s.get("data-part") for s in segs] == ["semantic", "keyword", HOSTILE]  # nothing of width 0 or less
    assert [f(s, "width") for s in segs] == [128.0, 80.0, 32.0]
    assert [f(s, "x") for s in segs] == [0.0, 128.0, 208.0]
    assert segs[0].find("title").text == "semantic: 0.400 of the score 0.750"  # type: ignore[union-attr]
    # the second part carries a hatch overlay as well as a colour; the fifth is styled like the first
    overlays = [el.get("fill") for el in root.iter("rect") if (el.get("fill") or "").startswith("url(")]
    assert overlays == ["url(#hatch1)"]
    assert tags(out, "rect")[0]["class"] == "track" and tags(out, "rect")[0]["width"] == "320"


def test_an_interval_plot_places_means_and_intervals_on_zero_to_one():
    rows = [
        Interval("decomposition", 0.5, 0.25, 0.75, detail="12 runs", href='/d/t?x="><b>'),
        Interval("x" * 40, 0.9, 0.8, 1.4),
        Interval(HOSTILE, -0.2, -0.5, 0.1),
    ]
    out = interval_plot(rows, label="techniques", reference=(0.6, "baseline"))
    assert_no_markup_from(out)
    assert "<b>" not in out
    root = svg(out)
    pw = 640 - 210 - 16
    dots = points(root)
    assert [f(d, "cx") for d in dots] == [
        pytest.approx(210 + 0.5 * pw, abs=0.06),
        pytest.approx(210 + 0.9 * pw, abs=0.06),
        210.0,
    ]
    assert dots[0].get("data-lo") == "0.25" and dots[0].get("data-hi") == "0.75"
    cis = [el for el in root.iter("line") if el.get("class") == "ci"]
    assert f(cis[0], "x1") == pytest.approx(210 + 0.25 * pw, abs=0.06)
    assert f(cis[0], "x2") == pytest.approx(210 + 0.75 * pw, abs=0.06)
    assert f(cis[1], "x2") == 210 + pw  # clipped to the plot
    assert f(cis[2], "x1") == 210.0
    ys = [f(d, "cy") for d in dots]
    assert ys == [21.0, 43.0, 65.0]  # one row each, top to bottom in order
    assert root.get("viewBox") == f"0 0 640 {10 + 22 * 3 + 26}"
    (ref,) = [el for el in root.iter("line") if el.get("class") == "target"]
    assert f(ref, "x1") == f(ref, "x2") == pytest.approx(210 + 0.6 * pw, abs=0.06)
    grid = [el for el in root.iter("line") if el.get("class") == "grid"]
    assert len(grid) == 6
    for line in grid + [ref]:  # every vertical line spans the rows, down to the axis labels
        assert (f(line, "y1"), f(line, "y2")) == (10, 10 + 22 * 3 + 4)
    labels = [el for el in root.iter("text") if el.get("class") == "rowlabel"]
    (a,) = list(labels[0])
    assert a.tag == "a" and a.get("href") == '/d/t?x="><b>' and a.text == "decomposition"
    assert labels[1].text == "x" * 29 + "…" and not list(labels[1])
    assert labels[2].text == HOSTILE[:29] + "…"
    tip = dots[0].find("title").text  # type: ignore[union-attr]
    assert tip == "decomposition: 50% (90% interval 25%–75%) 12 runs"
    axis = [t.text for t in root.iter("text") if t.get("class") == "axis"]
    assert axis == ["0%", "20%", "40%", "60%", "80%", "100%"]
    assert interval_plot([], label="x").startswith('<p class="empty">')


def test_a_sparkline_ends_at_its_last_value_and_rises_with_it():
    root = svg(sparkline([0.0, 2.0, 4.0], label=HOSTILE))
    assert root.get("aria-label") == HOSTILE
    (dot,) = points(root)
    assert dot.get("data-value") == "4"
    assert f(dot, "cx") == 110 - 2 and f(dot, "cy") == 3.0  # the last and largest value: right edge, top
    (path,) = list(root.iter("path"))
    assert path.get("d") == "M2.0 21.0L55.0 12.0L108.0 3.0"  # zero on the floor, half way up, top
    assert dot.find("title").text == HOSTILE  # type: ignore[union-attr]
    lone = points(svg(sparkline([5.0], label="x")))
    assert f(lone[0], "cx") == 2 + (110 - 4) / 2
    flat = sparkline([0.0, 0.0], label=HOSTILE)
    assert "<svg" not in flat and "–" in flat
    assert_no_markup_from(flat)
    assert tags(flat, "span")[0]["aria-label"] == HOSTILE
    assert "<svg" not in sparkline([], label="x")


def test_every_text_reaching_a_chart_is_escaped():
    week = [(MONDAY, 1.0), (MONDAY + WEEK, 2.0)]
    charts = [
        line_chart([Series(HOSTILE, week), Series("b", week)], label=HOSTILE, target=(1.5, HOSTILE)),
        line_chart([Series("a", week)], label="a", x_fmt=lambda _: HOSTILE, y_fmt=lambda _: HOSTILE),
        stacked_bars([MONDAY], [(HOSTILE, [1.0])], label=HOSTILE, x_fmt=lambda _: HOSTILE),
        histogram([(0, 1, 3)], label=HOSTILE, x_fmt=lambda _: HOSTILE),
        score_bar([(HOSTILE, 0.5)], 0.5, label=HOSTILE),
        interval_plot(
            [Interval(HOSTILE, 0.5, 0.4, 0.6, detail=HOSTILE, href=HOSTILE)], label=HOSTILE, reference=(0.5, HOSTILE)
        ),
        sparkline([1.0, 2.0], label=HOSTILE),
    ]
    for out in charts:
        assert_no_markup_from(out)
        root = svg(out)  # still well-formed XML: nothing broke out of an attribute or element
        texts = [el.text or "" for el in root.iter()] + [v for el in root.iter() for v in el.attrib.values()]
        assert any(HOSTILE in t for t in texts)
    empties = [
        line_chart([], label=HOSTILE),
        stacked_bars([], [], label=HOSTILE),
        interval_plot([], label=HOSTILE),
        histogram([], label=HOSTILE),
    ]
    for out in empties:
        assert out == f'<p class="empty">{e(HOSTILE)}: no data yet.</p>'
    assert re.search("no data yet", empties[0])


def test_eight_series_have_eight_colours_and_only_valid_dash_patterns():
    series = [Series(f"s{i}", [(MONDAY, float(i + 1)), (MONDAY + WEEK, float(i + 2))]) for i in range(8)]
    root = svg(line_chart(series, label="v"))
    lines = [el for el in root.iter("path") if el.get("class") == "series"]
    assert len({el.get("stroke") for el in lines}) == 8
    dashes = [el.get("stroke-dasharray") or "" for el in lines]
    assert all(re.fullmatch(r"(\d+( \d+)*)?", d) for d in dashes), dashes  # a list of lengths, or solid
    assert len(set(dashes[:4])) == 4  # the first four differ by dash pattern as well as colour


def test_a_legends_entries_follow_each_other_without_overlapping():
    names = ["a", "a much longer series name", "b" * 60, "c"]
    for chart in (
        line_chart([Series(n, [(MONDAY, 1.0), (MONDAY + WEEK, 2.0)]) for n in names], label="v"),
        stacked_bars([MONDAY], [(n, [1.0]) for n in names], label="v"),
    ):
        root = svg(chart)
        texts = [t for t in root.iter("text") if t.get("class") == "legend"]
        xs = [f(t, "x") for t in texts]
        for i in range(len(names) - 1):
            # a name is at most 44 characters of about 7 px, and the next key leaves a gap after it
            shown = min(len(names[i]), 44)
            assert xs[i + 1] - xs[i] >= 7 * shown + 30, (chart[:40], i, xs)
            assert xs[i + 1] - xs[i] <= 7 * shown + 50
        # the key (a line sample, or a swatch for bars) is centred on the line of its name
        rows = {f(t, "y") - 4 for t in texts}
        swatches = [el for el in root.findall("rect") if el.get("class", "").startswith("key hatch")]
        samples = [el for el in root.findall("line") if el.get("class") is None]
        assert len(swatches + samples) == len(names)
        assert {f(k, "y") + f(k, "height") / 2 for k in swatches} | {f(k, "y1") for k in samples} == rows
