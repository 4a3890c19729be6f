"""The request handlers: each page is an HTML view and a JSON twin of the same data.

`page(name, template)` registers both for one loader, a coroutine that
turns a request into the page's data (see pages.py), as the routes `name`
and `name-json`; urls.py builds every link from these names.  A loader
returns a `View` (builds.py: the state its data depends on, and how to
build it), so that the page is built once per state, off the event loop,
and kept compressed; or a plain dict, which is encoded (off the loop too)
at each request.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from hill import engine
from hill.errors import NotFound
from hill.rules.names import is_full_name
from hill.web import pages
from hill.web.analytics_reader import ANALYTICS
from hill.web.builds import Builds, Built, View, packed, respond
from hill.web.commits import HISTORY
from hill.web.ladder_reader import ladder_versions
from hill.web.render import PageContext, page_context, render, render_html
from hill.web.state import READER, HillReader, Snapshot
from hill.web.tournament_reader import TOURNAMENTS
from hill.web.trace_store import TraceStore
from hill.web.urls import PATHS

routes = web.RouteTableDef()
TRACES = web.AppKey("traces", TraceStore)
BUILDS = web.AppKey("builds", Builds)
Loader = Callable[[web.Request], Awaitable[View | dict[str, Any]]]
STATIC = Path(__file__).parent / "static"
# the files shipped, by their path under static/ (the Lab's in static/lab/)
STATIC_FILES = frozenset(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file())


def json_response(data: Any) -> web.Response:
    response = web.json_response(data, dumps=partial(json.dumps, separators=(",", ":")))
    response.enable_compression()
    return response


def json_bytes(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def page(name: str, template: str, table: web.RouteTableDef = routes) -> Callable[[Loader], Loader]:
    """Serve a loader's data as JSON at the path of `name-json` and through a
    template at the path of `name` (urls.PATHS; routes of `table`)."""

    def register(load: Loader) -> Loader:
        async def as_json(request: web.Request) -> web.Response:
            return await serve_page(request, await load(request), None)

        async def as_html(request: web.Request) -> web.Response:
            return await serve_page(request, await load(request), template)

        table.get(PATHS[f"{name}-json"], name=f"{name}-json")(as_json)
        table.get(PATHS[name], name=name)(as_html)
        return load

    return register


async def serve_page(
    request: web.Request, loaded: View | dict[str, Any], template: str | None
) -> web.Response:
    """A page's data as JSON (`template` None) or HTML: built once per state
    and kept (a View), or encoded now (a dict); either off the event loop."""
    context = page_context(request) if template else None
    builds = request.app[BUILDS]
    if not isinstance(loaded, View):
        return respond(request, await builds.once(partial(encoded, loaded, template, context)))
    key: tuple[Any, ...] = (request.path, tuple(sorted(request.query.items())), loaded.key)
    if context is not None:  # what the HTML takes from the request besides the data
        key = (*key, template, context.latest, context.clone_url)
    build = loaded.build
    built = await builds.get(key, lambda: encoded(build(), template, context))
    return respond(request, built)


def encoded(data: dict[str, Any], template: str | None, context: PageContext | None) -> Built:
    """The page's bytes, compressed (in a worker thread)."""
    if template is None or context is None:
        return packed(json_bytes(data), "application/json; charset=utf-8")
    return packed(render_html(template, data, context).encode(), "text/html; charset=utf-8")


def state_key(snap: Snapshot) -> tuple[Any, ...]:
    """What a page of one hill state depends on."""
    return ("state", snap.event.id if snap.event else None, snap.commit)


def reader(request: web.Request) -> HillReader:
    return request.app[READER]


def name_param(request: web.Request, key: str = "name") -> str:
    name = request.match_info.get(key) or request.query.get(key, "")
    if not is_full_name(name):
        raise NotFound(f"no program {name[:60]!r}")
    return name


def int_param(request: web.Request, key: str, text: str | None = None) -> int | None:
    """A number from the query's `key` (or `text`, a part of the path); None if absent."""
    text = request.query.get(key) if text is None else text
    if text is None or text == "":
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise NotFound(f"{key} must be a number, not {text[:20]!r}")
    return int(text)


async def snapshot(request: web.Request) -> Snapshot:
    """The hill state the request asks for (?event=N), by default the current one."""
    return await reader(request).snapshot(int_param(request, "event"))


@page("standings", "standings.html")
async def standings(request: web.Request) -> View:
    snap = await snapshot(request)
    return View(state_key(snap), partial(pages.standings, snap))


@page("matrix", "matrix.html")
async def matrix(request: web.Request) -> View:
    snap = await snapshot(request)
    return View(state_key(snap), partial(pages.matrix, snap))


@page("program", "breakdown.html")
async def breakdown(request: web.Request) -> dict[str, Any]:
    """A program in the state asked for; one that has left the hill (asked
    for in no state) as it stood last, with when and why it left."""
    name = name_param(request)
    snap = await snapshot(request)
    versions = await request.app[HISTORY].versions(name)
    if snap.standings.index(name) is None and "event" not in request.query and versions:
        return await departed(request, name, versions)
    data = pages.breakdown(snap, name)
    profile = await request.app[ANALYTICS].profile(snap, name)
    return {**data, "versions": versions, "departed": None, "profile": profile}


async def last_state(request: web.Request, name: str) -> Snapshot:
    """The last hill state a program was part of (NotFound: never on the
    hill, or its change is still being written)."""
    points = (await reader(request).history()).series(name)
    if not points:
        raise NotFound(f"{name} is not on the hill")
    return await reader(request).snapshot(points[-1].event)


async def departed(
    request: web.Request, name: str, versions: list[dict[str, Any]]
) -> dict[str, Any]:
    """The page of a program no longer on the hill: its last state there."""
    history = await reader(request).history()
    last = await last_state(request, name)
    ladder = await ladder_versions(request.app, name)
    left = pages.departure(history, name, versions, ladder)
    profile = await request.app[ANALYTICS].profile(last, name)
    data = pages.breakdown(last, name)
    return {**data, "versions": versions, "departed": left, "profile": profile}


@page("pair", "pair.html")
async def pair(request: web.Request) -> View:
    snap = await snapshot(request)
    left, right = name_param(request), name_param(request, "other")
    return View(state_key(snap), partial(pages.pair, snap, left, right))


@page("history", "history.html")
async def history(request: web.Request) -> View:
    hist = await reader(request).history()
    return View(hist.key, lambda: {**pages.history(hist), "names": hist.names})


@page("series", "series.html")
async def series(request: web.Request) -> View:
    name = name_param(request)
    hist = await reader(request).history()

    def build() -> dict[str, Any]:
        data = pages.series(hist, name)
        if not data["points"]:
            raise NotFound(f"{name} has never been on the hill")
        return data

    return View(hist.key, build)


def battle_params(request: web.Request, snap: Snapshot) -> tuple[str, str, int, str]:
    """left, right, tape, polarity; by default the top two programs on the shortest tape."""
    names = [e.program.full_name for e in snap.standings.entries]
    if not names:
        raise NotFound("the hill is empty")
    query = request.query
    left = name_param(request, "left") if "left" in query else names[0]
    right = name_param(request, "right") if "right" in query else names[min(1, len(names) - 1)]
    return left, right, *tape_and_polarity(request)


def tape_and_polarity(request: web.Request) -> tuple[int, str]:
    """The battle's tape length and polarity; by default the shortest tape, sieve."""
    tape = int_param(request, "tape")
    tape = engine.MIN_TAPE if tape is None else tape
    polarity = request.query.get("polarity", engine.POLARITIES[0])
    if tape not in engine.TAPE_LENGTHS or polarity not in engine.POLARITIES:
        raise NotFound("tape lengths are 10 to 30, polarities sieve and kettle")
    return tape, polarity


# a battle of any two programs ever submitted, by their code hashes (e.g. a
# tournament's, which may have left the hill): ?left_code=H&right_code=H
CODE_KEYS = ("left_code", "right_code")


def by_code(request: web.Request) -> bool:
    return any(key in request.query for key in CODE_KEYS)


async def code_battle_params(
    request: web.Request,
) -> tuple[tuple[str, str], list[str], int, str]:
    """A battle given by code hashes: the hashes, the programs' names (their
    latest; NotFound for an unknown code), tape length and polarity."""
    left, right = (request.query.get(key, "") for key in CODE_KEYS)
    hashes = (left, right)
    names = await request.app[TOURNAMENTS].names(hashes)
    return hashes, names, *tape_and_polarity(request)


async def code_battle(request: web.Request) -> dict[str, Any]:
    """The battle viewer's page for a battle given by code hashes: the
    programs' names, and how their stored joust scored it."""
    hashes, names, tape, polarity = await code_battle_params(request)
    scored = await request.app[TOURNAMENTS].outcome(*hashes, tape, polarity)
    return {
        **pages.battle_setup(names[0], names[1], tape, polarity),
        "left_code": hashes[0],
        "right_code": hashes[1],
        "scored": scored,
    }


@routes.get(PATHS["battle-json"], name="battle-json")
async def trace(request: web.Request) -> web.Response:
    """One piece of a battle (see trace_pieces.py): the one holding cycle ?from=."""
    if by_code(request):  # a piece needs the codes only, not their stored joust
        hashes, _, tape, polarity = await code_battle_params(request)
    else:
        snap = await snapshot(request)
        left, right, tape, polarity = battle_params(request, snap)
        hashes = (snap.entry(left).program.code_hash, snap.entry(right).program.code_hash)
    at = int_param(request, "from") or 0
    try:
        piece = await request.app[TRACES].piece(*hashes, tape, polarity, at)
    except IndexError:
        raise NotFound(f"the battle ends before cycle {at}") from None
    return gzipped_json(request, piece)


def gzipped_json(request: web.Request, body: bytes) -> web.Response:
    """Stored gzipped JSON as it is (every browser takes gzip), or unpacked."""
    headers = {"Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        headers["Content-Encoding"] = "gzip"
    else:
        body = gzip.decompress(body)  # a piece: at most a few hundred KB
    return web.Response(body=body, content_type="application/json", headers=headers)


@routes.get(PATHS["battle"], name="battle")
async def battle(request: web.Request) -> web.Response:
    if by_code(request):
        return render(request, "battle.html", await code_battle(request))
    snap = await snapshot(request)
    return render(request, "battle.html", pages.battle(snap, *battle_params(request, snap)))


@routes.get(PATHS["source"], name="source")
async def source_text(request: web.Request) -> web.Response:
    """The program's code exactly as submitted; text/plain, never rendered as HTML."""
    snap = await snapshot(request)
    code = await reader(request).code(snap, name_param(request))
    response = web.Response(body=code, content_type="text/plain", charset="utf-8")
    response.enable_compression()
    return response


@routes.get(PATHS["source-json"], name="source-json")
async def source_json(request: web.Request) -> web.Response:
    snap = await snapshot(request)
    name = name_param(request)
    return json_response(pages.source(snap, name, await reader(request).code(snap, name)))


@routes.get(PATHS["static"], name="static")
async def static(request: web.Request) -> web.StreamResponse:
    """The stylesheet, scripts and icon: only the files shipped, by exact name."""
    file = request.match_info["file"]
    if file not in STATIC_FILES:
        raise NotFound(f"no static file {file[:60]!r}")
    return web.FileResponse(STATIC / file, headers={"Cache-Control": "public, max-age=600"})
