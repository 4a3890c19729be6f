"""Pages built once per state, kept encoded and compressed; and the
answers every concern gives: a page and its JSON twin (`page`), JSON.

A page (HTML or its JSON twin) of one hill state, one ladder standing or
one tournament's progress is the same for everyone who asks until that
state changes, so it is built once and kept as gzipped bytes: a request
then costs a lookup and a write of those bytes (browsers take gzip; the
few clients that do not get it inflated).  A page's loader says what its
data depends on with a `View` (`key`: the state; `build()`: the data),
`serve_page` adds what the rendering depends on (the path and query, and
for HTML the state the reader asked for) and asks `Builds.get`, which
keeps one built page per path and query (cache.StateCache: a new state's
replaces the old one's).

`page(name, template, loader)` gives the two routes of one loader, a
coroutine that turns a request into the page's data: `name` (HTML through
`template`) and `name-json` (its JSON twin), at their urls.PATHS; routes.py
lists them with every other route.  A loader returns a `View`, so that
the page is built once per state, off the event loop, and kept
compressed; or a plain dict, which is encoded (off the loop too) at each
request.

Building (the data, the template or the JSON encoding, and the
compression) runs off the event loop, in `workers` threads, once per key
however many ask at the same time, at most `workers + queue` keys at once;
beyond that the answer is 503 with Retry-After (cache.BoundedWork).  The pages
kept are bounded by their compressed bytes (`cache_bytes`).  Each has an
ETag, so a reader that has it gets a 304.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from functools import partial
from typing import Any

from aiohttp import web

from hill.web.cache import BoundedWork, StateCache
from hill.web.render import PageContext, page_context, render_html
from hill.web.urls import PATHS

LEVEL = 6  # gzip's compression level
# for an answer that never changes (named by its content's hash, or a fixed hill state)
IMMUTABLE = "public, max-age=31536000, immutable"
INFLATE_LIMIT = 16 << 20  # bytes: a page bigger than this is only sent gzipped


@dataclass(frozen=True)
class View:
    """A page's data in one state: `key` names everything the data depends
    on (a state, a standing, a tournament's progress); `build()` makes it
    (called in a worker thread, once per key)."""

    key: Hashable
    build: Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Built:
    """A page ready to send: its body gzipped, its type, its ETag."""

    body: bytes
    content_type: str  # with its charset: text/html; charset=utf-8
    etag: str
    size: int  # uncompressed


def packed(body: bytes, content_type: str) -> Built:
    """A body compressed, with its ETag (in a worker thread)."""
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return Built(gzip.compress(body, LEVEL, mtime=0), content_type, etag, len(body))


class Builds:
    """The web report's built pages: at most `workers` built at once,
    `queue` more waiting, `cache_bytes` of them kept."""

    def __init__(self, workers: int = 2, queue: int = 32, cache_bytes: int = 64 << 20) -> None:
        self._work = BoundedWork(workers, queue, "web-build", "pages are being built")
        self._pages: StateCache[Hashable, Built] = StateCache(
            cache_bytes, size_of=lambda b: len(b.body)
        )

    def close(self) -> None:
        self._work.close()

    async def get(self, key: Hashable, build: Callable[[], Built], mark: Hashable = None) -> Built:
        """The page of `key` in the state `mark`: kept, or built (once) by
        `build()` in a worker (and kept in place of the page of another state)."""
        kept = self._pages.kept(key, mark)
        if kept is not None:
            return kept
        return await self._work.run((key, mark), build, partial(self._pages.keep, key, mark))

    async def once(self, build: Callable[[], Built]) -> Built:
        """A page that is not kept (its data may differ at each request),
        built under the same bounds."""
        return await self._work.run(object(), build)


def respond(request: web.Request, built: Built, status: int = 200) -> web.Response:
    """The page as stored (gzipped) or inflated for a client that takes no
    gzip; a 304 when the client has it already."""
    headers = {"Vary": "Accept-Encoding", "ETag": built.etag}
    if status == 200 and built.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    body = built.body
    if "gzip" in request.headers.get("Accept-Encoding", "") or built.size > INFLATE_LIMIT:
        headers["Content-Encoding"] = "gzip"
    else:
        body = gzip.decompress(body)
    headers["Content-Type"] = built.content_type
    return web.Response(body=body, status=status, headers=headers)


BUILDS = web.AppKey("builds", Builds)
Loader = Callable[[web.Request], Awaitable[View | dict[str, Any]]]


def json_response(data: Any) -> web.Response:
    response = web.json_response(data, dumps=partial(json.dumps, separators=(",", ":")))
    response.enable_compression()
    return response


def json_bytes(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def page(name: str, template: str, load: Loader) -> list[web.RouteDef]:
    """The routes of a loader's data: as JSON at the path of `name-json`,
    through `template` at the path of `name` (urls.PATHS)."""

    async def as_json(request: web.Request) -> web.Response:
        return await serve_page(request, await load(request), None)

    async def as_html(request: web.Request) -> web.Response:
        return await serve_page(request, await load(request), template)

    return [
        web.get(PATHS[f"{name}-json"], as_json, name=f"{name}-json"),
        web.get(PATHS[name], as_html, name=name),
    ]


async def serve_page(
    request: web.Request, loaded: View | dict[str, Any], template: str | None
) -> web.Response:
    """A page's data as JSON (`template` None) or HTML: built once per state
    and kept (a View), or encoded now (a dict); either off the event loop."""
    context = page_context(request) if template else None
    builds = request.app[BUILDS]
    if not isinstance(loaded, View):
        return respond(request, await builds.once(partial(encoded, loaded, template, context)))
    key: tuple[Any, ...] = (request.path, tuple(sorted(request.query.items())), template)
    mark: tuple[Any, ...] = (loaded.key,)
    if context is not None:  # what the HTML takes from the request besides the data
        key, mark = (*key, context.clone_url), (*mark, context.latest)
    build = loaded.build
    built = await builds.get(key, lambda: encoded(build(), template, context), mark)
    return respond(request, built)


def encoded(data: dict[str, Any], template: str | None, context: PageContext | None) -> Built:
    """The page's bytes, compressed (in a worker thread)."""
    if template is None or context is None:
        return packed(json_bytes(data), "application/json; charset=utf-8")
    return packed(render_html(template, data, context).encode(), "text/html; charset=utf-8")
