"""The history's pages: a commit (`/commit/SHA`, JSON `/api/commit/SHA`), a
version's code by its hash (`/code/HASH`, text/plain) and the Atom feed of
the hill's changes (`/history.atom`).  Their data is commits.py's; the
versions of a program are shown on its page (pages/views.breakdown).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.web.builds import BUILDS, IMMUTABLE, Built, packed, respond
from hill.web.history.commits import HISTORY
from hill.web.history.feed import atom_feed
from hill.web.params import reader
from hill.web.urls import Urls, site_url


async def commit(request: web.Request) -> dict[str, Any]:
    timeline = await reader(request).history()
    return await request.app[HISTORY].commit(timeline, request.match_info["sha"])


async def code(request: web.Request) -> web.Response:
    """A version's code exactly as submitted; text/plain, never rendered as HTML."""
    body = await request.app[HISTORY].code(request.match_info["hash"])
    response = web.Response(
        body=body, content_type="text/plain", charset="utf-8", headers={"Cache-Control": IMMUTABLE}
    )
    response.enable_compression()
    return response


async def feed(request: web.Request) -> web.Response:
    """The Atom feed, built once per state of the history (builds.py)."""
    timeline = await reader(request).history()
    site = site_url(request).rstrip("/")

    def build() -> Built:
        url = Urls()
        body = atom_feed(
            timeline.changes,
            site + "/",
            site + url.feed(),
            lambda sha: site + url.commit(sha),
            site + url.history(),
        )
        return packed(body, "application/atom+xml; charset=utf-8")

    built = await request.app[BUILDS].get(("feed", site), build, timeline.key)
    return respond(request, built)
