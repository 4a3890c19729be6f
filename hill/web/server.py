"""The web report: an aiohttp application serving the hill's pages and JSON API.

`start_web` runs it on the bot's event loop; `run_web` (`bfjoust web`) runs
it alone.  Layout: state.py reads the hill (cached, one state at a time),
pages.py shapes each page's data, views.py maps URLs to them, urls.py builds
the links, render.py and templates/ make the HTML, static/ holds the CSS and
the plain JS; trace_store.py and trace_pieces.py serve the battle viewer's
battles; history_views.py (on commits.py) the history's commit pages, code
and feed, git_http.py the repository to git clients; tournament_views.py the
tournaments, contest_views.py the contests; requestlog.py keeps the access
log to one line a request.
"""

from __future__ import annotations

import logging

from aiohttp import web

from hill.config import HillSettings, IrcSettings, Settings, WebSettings
from hill.errors import Busy, NotFound, storage_trouble
from hill.layout import DataFolder
from hill.logs import Trouble, configure_logging
from hill.store.queries import HillQueries
from hill.store.requests import RequestBook
from hill.store.uploads import UploadLinks
from hill.web import (
    analytics_views,
    contest_views,
    history_views,
    ladder_page,
    tournament_views,
    trial_views,
    upload,
)
from hill.web.commits import HISTORY, HistoryPages
from hill.web.git_http import GitHttp
from hill.web.render import render
from hill.web.requestlog import AccessLog, quiet_client_errors
from hill.web.state import READER, HillReader
from hill.web.trace_store import TraceStore
from hill.web.urls import PUBLIC_URL
from hill.web.views import TRACES, json_response, routes

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


# paths that answer text, errors included
TEXT_PATHS = ("/source/", "/code/")
# the hill's storage failing (the disk full, say), for every page of the process
STORAGE = Trouble("the web report")
STORAGE_RETRY_SECONDS = 60


def error_page(request: web.Request, status: int, message: str) -> web.Response:
    """The error in the kind of answer the path gives: JSON, text or a page."""
    if request.path.startswith("/api/"):
        response = json_response({"error": message, "status": status})
        response.set_status(status)
        return response
    if request.path.startswith(TEXT_PATHS):
        return web.Response(text=f"{status}: {message}\n", status=status, charset="utf-8")
    return render(request, "error.html", {"status": status, "message": message}, status=status)


@web.middleware
async def errors(request: web.Request, handler: web.Handler) -> web.StreamResponse:
    """Proper error pages (JSON under /api/), never a traceback."""
    try:
        return await handler(request)
    except NotFound as error:
        return error_page(request, 404, str(error))
    except Busy as error:
        response = error_page(request, 503, str(error))
        response.headers["Retry-After"] = str(error.retry_after)
        return response
    except web.HTTPException as error:
        if error.status < 400:
            raise
        message = "no such page" if error.status == 404 else error.reason
        return error_page(request, error.status, message)
    except Exception as error:
        trouble = storage_trouble(error)  # the disk full, say: one log line per interval
        if trouble is None:
            log.exception("error serving %s", request.path_qs)
            return error_page(request, 500, "something went wrong on the hill's side")
        STORAGE.struck(trouble)
        response = error_page(request, 503, f"{trouble}: try again in a few minutes")
        response.headers["Retry-After"] = str(STORAGE_RETRY_SECONDS)
        return response


async def security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


def create_app(
    queries: HillQueries,
    hill: HillSettings,
    settings: WebSettings,
    *,
    queue_size: int = IrcSettings.queue_size,
) -> web.Application:
    """The application on the hill that `queries` reads; `queue_size` bounds
    the requests waiting, uploads included (an upload is a request for the
    bot, written in the request book: the hill itself is only read)."""
    quiet_client_errors()
    app = web.Application(middlewares=[errors])
    app[READER] = HillReader(queries)
    app[PUBLIC_URL] = settings.public_url
    repository = DataFolder(hill.data_dir).repository
    app[HISTORY] = HistoryPages(queries, repository)
    app[TRACES] = TraceStore(
        queries.code_of_hash,
        workers=settings.trace_workers,
        queue=settings.trace_queue,
        cache_bytes=settings.trace_cache_mb << 20,
    )
    app[upload.UPLOADS] = upload.Uploads(
        UploadLinks(queries.db), RequestBook(queries.db), hill.max_program_bytes, queue_size
    )
    app.add_routes(routes)
    app.add_routes(upload.routes)
    ladder_page.setup(app, queries.db)
    tournament_views.setup(app, queries.db)
    trial_views.setup(app, queries)
    analytics_views.setup(app, queries.db)
    contest_views.setup(app, queries.db)
    app.add_routes(history_views.routes)
    app.add_routes(GitHttp(repository).routes())
    app.on_response_prepare.append(security_headers)
    app.on_cleanup.append(_close_threads)
    return app


async def _close_threads(app: web.Application) -> None:
    app[READER].close()
    app[TRACES].close()
    app[HISTORY].close()


async def start_web(
    queries: HillQueries,
    hill: HillSettings,
    settings: WebSettings,
    *,
    queue_size: int = IrcSettings.queue_size,
) -> web.AppRunner:
    """Serve on settings.bind:settings.port on the running loop; the caller
    does `await runner.cleanup()`."""
    runner = web.AppRunner(
        create_app(queries, hill, settings, queue_size=queue_size), access_log_class=AccessLog
    )
    await runner.setup()
    await web.TCPSite(runner, settings.bind, settings.port).start()
    log.info("web report on %s", settings.url)
    return runner


def run_web(settings: Settings) -> None:
    """`bfjoust web`: serve the pages alone until Ctrl-C or SIGTERM.  It reads
    the hill (no lock, no migration, no git write) and writes only the upload
    requests the bot plays; HillError if the hill's database is missing or
    of another schema."""
    configure_logging()
    queries = HillQueries.open(settings.hill.data_dir, settings.hill.ranking)
    print(f"The hill is on the web at {settings.web.url} (Ctrl-C stops it)", flush=True)
    try:
        web.run_app(
            create_app(queries, settings.hill, settings.web, queue_size=settings.irc.queue_size),
            host=settings.web.bind,
            port=settings.web.port,
            print=None,
            access_log_class=AccessLog,
        )
    finally:
        queries.close()
