"""HTML through Jinja2 templates (templates/), every value escaped
(programs' names and summaries are user input); the pictures drawn on the
server (charts/) are the templates' globals."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import jinja2
from aiohttp import web
from markupsafe import Markup, escape

from hill import engine
from hill.rules.contests import time_left
from hill.web.charts import analytics as analytics_charts
from hill.web.charts.bump import bump_chart
from hill.web.charts.lines import error_bars, line_chart
from hill.web.state import READER
from hill.web.urls import Urls, clone_url

env = jinja2.Environment(
    loader=jinja2.PackageLoader("hill.web", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


MINUS = "\u2212"  # a true minus sign, as wide as the plus


def signed(value: float, digits: int | None = None) -> str:
    """+3, 0 or minus 3 (with `digits`: +3.00, 0.00, minus 3.00)."""
    form = "g" if digits is None else f".{digits}f"
    text = format(abs(value), form)
    if float(text) == 0:
        return text
    return f"+{text}" if value > 0 else f"{MINUS}{text}"


def shade(margin: int) -> str:
    """The CSS class of a joust score: w1..w6 (wins), l1..l6 (losses), or t (tie)."""
    if margin == 0:
        return "t"
    level = min(6, 1 + (abs(margin) - 1) * 6 // engine.BATTLES)
    return f"{'w' if margin > 0 else 'l'}{level}"


def when(iso_time: str) -> str:
    """2026-11-22T19:35:27Z as 2026-11-22 19:35 UTC."""
    return iso_time[:16].replace("T", " ") + " UTC"


def breakable(name: str) -> Markup:
    """A program's name, escaped, that may break after its dots and
    underscores on a narrow screen (`<wbr>`), rather than anywhere."""
    return Markup(re.sub(r"([._])", r"\1<wbr>", str(escape(name))))


def outcome_word(outcome: int) -> str:
    return {1: "win", 0: "tie", -1: "loss"}[outcome]


def outcome_symbol(outcome: int) -> str:
    return {1: "W", 0: "·", -1: "L"}[outcome]


env.filters.update(
    when=when,
    signed=signed,
    shade=shade,
    outcome=outcome_word,
    symbol=outcome_symbol,
    breakable=breakable,
    left=time_left,
)
env.globals.update(
    chart=line_chart,
    error_bars=error_bars,
    bump_chart=bump_chart,
    battles=engine.BATTLES,
    max_cycles=engine.MAX_CYCLES,
    shade=shade,
    # the analytics' pictures (charts/analytics.py)
    heat_map=analytics_charts.heat_map,
    heat_high=analytics_charts.heat_high,
    heat_tip=analytics_charts.heat_tip,
    decoy_tip=analytics_charts.decoy_tip,
    duel_tip=analytics_charts.duel_tip,
    decoy_words=analytics_charts.decoy_words,
    results_chart=analytics_charts.results_chart,
    duels_chart=analytics_charts.duels_chart,
    duel_legend=analytics_charts.duel_legend,
    family_legend=analytics_charts.family_legend,
    cycles_tick=analytics_charts.cycles_tick,
    cells_markup=analytics_charts.cells_markup,
)


@dataclass(frozen=True)
class PageContext:
    """What a page's HTML takes from its request besides its data: its path,
    the state it was asked for (`asked`, the ?event= if any), the current
    state (`latest`), this very page in the current state (`now`) and the
    URL that clones the hill's history."""

    path: str
    asked: int | None
    latest: int | None
    now: str
    clone_url: str


def page_context(request: web.Request) -> PageContext:
    return PageContext(
        path=request.path,
        asked=_asked_state(request),
        latest=request.app[READER].latest,
        now=_in_current_state(request),
        clone_url=clone_url(request),
    )


def render_html(template: str, data: dict[str, Any], context: PageContext) -> str:
    """The template with the page's dict as `data` and its links: `url` in
    the state the page shows, `nav` (the site's menu) in the state it was
    asked for, whether that state is no longer the current one (`past`),
    and the context's `now`, `path`, `asked` and `clone_url`.  Needs no
    request: pages are rendered in worker threads (builds.py)."""
    event = data.get("event")
    return env.get_template(template).render(
        data=data,
        path=context.path,
        url=Urls(event["id"] if event else None),
        nav=Urls(context.asked),
        asked=context.asked,
        past=bool(event and event["id"] != context.latest),
        now=context.now,
        clone_url=context.clone_url,
    )


def render(
    request: web.Request, template: str, data: dict[str, Any], status: int = 200
) -> web.Response:
    """A small page rendered at once (errors, the upload form, the battle
    viewer): render_html in the request's context."""
    html = render_html(template, data, page_context(request))
    response = web.Response(text=html, content_type="text/html", status=status)
    response.enable_compression()
    return response


def _in_current_state(request: web.Request) -> str:
    """This page's URL without its ?event=."""
    query = [(k, v) for k, v in request.query.items() if k != "event"]
    return str(request.rel_url.with_query(query))


def _asked_state(request: web.Request) -> int | None:
    """The ?event=N the page was asked for, so that its menu stays in that state."""
    event = request.query.get("event", "")
    return int(event) if event.isascii() and event.isdigit() and len(event) <= 12 else None
