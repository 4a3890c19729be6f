"""The web report: an aiohttp application serving the hill's pages and JSON API.

`start_web` runs it on the bot's event loop; `run_web` (`bfjoust web`) runs
it alone.  Layout: state.py reads the hill (cached, one state at a time),
api.py shapes each page's data, views.py maps URLs to them, render.py and
templates/ make the HTML, static/ holds the CSS and the plain JS.
"""

from __future__ import annotations

import logging

from aiohttp import web

from hill.config import IrcSettings, Settings, WebSettings
from hill.logs import configure_logging
from hill.requests import RequestBook
from hill.service import Hill
from hill.uploads import UploadLinks
from hill.web import upload
from hill.web.git_http import GitHttp
from hill.web.render import render
from hill.web.state import READER, HillReader, NotFound
from hill.web.views import json_response, routes

log = logging.getLogger(__name__)

# Everything from this origin only; no inline script or style, so that
# nothing a player submits can ever run in a reader's browser.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def error_page(request: web.Request, status: int, message: str) -> web.Response:
    if request.path.startswith("/api/"):
        response = json_response({"error": message, "status": status})
        response.set_status(status)
        return response
    return render(request, "error.html", {"status": status, "message": message}, status=status)


@web.middleware
async def errors(request: web.Request, handler: web.Handler) -> web.StreamResponse:
    """Proper error pages (JSON under /api/), never a traceback."""
    try:
        return await handler(request)
    except NotFound as error:
        return error_page(request, 404, str(error))
    except web.HTTPException as error:
        if error.status < 400:
            raise
        message = "no such page" if error.status == 404 else error.reason
        return error_page(request, error.status, message)
    except Exception:
        log.exception("error serving %s", request.path_qs)
        return error_page(request, 500, "something went wrong on the hill's side")


async def security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


def create_app(
    hill: Hill, settings: WebSettings, *, queue_size: int = IrcSettings.queue_size
) -> web.Application:
    """The application; `queue_size` bounds the requests waiting, uploads included."""
    app = web.Application(middlewares=[errors])
    app[READER] = HillReader(hill)
    app[upload.UPLOADS] = upload.Uploads(
        UploadLinks(hill.db), RequestBook(hill.db), hill.settings.max_program_bytes, queue_size
    )
    app.add_routes(routes)
    app.add_routes(upload.routes)
    app.add_routes(GitHttp(hill.settings.data_dir / "hill-repo").routes())
    app.on_response_prepare.append(security_headers)
    return app


async def start_web(
    hill: Hill, settings: WebSettings, *, queue_size: int = IrcSettings.queue_size
) -> web.AppRunner:
    """Serve on settings.bind:settings.port on the running loop; the caller
    does `await runner.cleanup()`."""
    runner = web.AppRunner(create_app(hill, settings, queue_size=queue_size))
    await runner.setup()
    await web.TCPSite(runner, settings.bind, settings.port).start()
    log.info("web report on %s", settings.url)
    return runner


def run_web(settings: Settings) -> None:
    """`bfjoust web`: serve the pages alone until Ctrl-C or SIGTERM."""
    configure_logging()
    hill = Hill(settings.hill)
    print(f"The hill is on the web at {settings.web.url} (Ctrl-C stops it)", flush=True)
    try:
        web.run_app(
            create_app(hill, settings.web, queue_size=settings.irc.queue_size),
            host=settings.web.bind,
            port=settings.web.port,
            print=None,
        )
    finally:
        hill.close()
