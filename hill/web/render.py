"""HTML through Jinja2 templates, every value escaped (programs' names and
summaries are user input)."""

from __future__ import annotations

from typing import Any

import jinja2
from aiohttp import web

from hill import engine
from hill.web.charts import line_chart
from hill.web.state import READER

env = jinja2.Environment(
    loader=jinja2.PackageLoader("hill.web", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


MINUS = "\u2212"  # a true minus sign, as wide as the plus


def signed(value: float) -> str:
    """+3, 0 or minus 3."""
    return f"+{value:g}" if value > 0 else f"{MINUS}{-value:g}" if value < 0 else "0"


def shade(margin: int) -> str:
    """The CSS class of a joust score: w1..w6 (wins), l1..l6 (losses), or t (tie)."""
    if margin == 0:
        return "t"
    level = min(6, 1 + (abs(margin) - 1) * 6 // engine.BATTLES)
    return f"{'w' if margin > 0 else 'l'}{level}"


def when(iso_time: str) -> str:
    """2026-11-22T19:35:27Z as 2026-11-22 19:35 UTC."""
    return iso_time[:16].replace("T", " ") + " UTC"


def outcome_word(outcome: int) -> str:
    return {1: "win", 0: "tie", -1: "loss"}[outcome]


def outcome_symbol(outcome: int) -> str:
    return {1: "W", 0: "·", -1: "L"}[outcome]


env.filters.update(
    when=when, signed=signed, shade=shade, outcome=outcome_word, symbol=outcome_symbol
)
env.globals["chart"] = line_chart
env.globals["battles"] = engine.BATTLES  # of a joust


def render(
    request: web.Request, template: str, data: dict[str, Any], status: int = 200
) -> web.Response:
    """The template with the page's dict as `data`, the ?event= it was asked
    for, and whether the state it shows is no longer the current one."""
    event = data.get("event")
    html = env.get_template(template).render(
        data=data,
        path=request.path,
        event_query=_event_query(request),
        past=bool(event) and event["id"] != request.app[READER].latest,
    )
    response = web.Response(text=html, content_type="text/html", status=status)
    response.enable_compression()
    return response


def _event_query(request: web.Request) -> str:
    """`?event=N` when the page was asked for a state, so its links stay in it."""
    event = request.query.get("event", "")
    return f"?event={event}" if event.isascii() and event.isdigit() else ""
