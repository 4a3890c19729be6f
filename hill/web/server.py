"""The web report: an aiohttp application serving the hill's pages and JSON API.

`create_app` makes it: the readers each concern reads the hill through
(attached to the app, closed with it), the error pages (errors become
4xx/5xx answers, never a traceback), the security headers, and the one
table of routes (routes.py).  `start_web` runs it on the bot's event loop;
`run_web` (`bfjoust web`) runs it alone.  hill/web/__init__.py is the map of
the package.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestPayloadError

from hill.config import HillSettings, IrcSettings, Settings, WebSettings
from hill.errors import BadRequest, Busy, NotFound, StorageError
from hill.layout import DataFolder
from hill.logs import Trouble, configure_logging
from hill.store.queries import HillQueries
from hill.store.requests import RequestBook
from hill.store.uploads import UploadLinks
from hill.web import changes
from hill.web.analytics.reader import ANALYTICS, AnalyticsReader
from hill.web.battles.store import TRACES, TraceStore
from hill.web.builds import BUILDS, Builds, json_response
from hill.web.connections import (
    ConnectionGuard,
    connection_limit,
    quiet_loop_errors,
    server_options,
)
from hill.web.history.commits import HISTORY, HistoryPages
from hill.web.history.git_http import GIT, GitHttp
from hill.web.lab.views import LAB, lab_settings
from hill.web.operations import health
from hill.web.pages.ladder import LADDER, LadderReader
from hill.web.reader_thread import attach
from hill.web.render import render
from hill.web.requestlog import AccessLog, note_bad_request, quiet_client_errors, unreadable
from hill.web.routes import ROUTES
from hill.web.state import READER, HillReader
from hill.web.tournaments.contests import CONTESTS, ContestReader
from hill.web.tournaments.reader import TOURNAMENTS, TournamentReader
from hill.web.trials.views import TRIALS, TrialReader
from hill.web.uploads.views import UPLOADS, Uploads
from hill.web.urls import PUBLIC_URL

log = structlog.get_logger(__name__)

# Everything from this origin only; no inline script or style, so that
# nothing a player submits can ever run in a reader's browser (WebAssembly
# may be compiled: the Lab's engine, static/lab/engine.wasm, from this origin).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
        "img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


# paths that answer text, errors included
TEXT_PATHS = ("/source/", "/code/", "/hill.git/")
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
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Proper error pages (JSON under /api/), never a traceback; a malformed
    request is a 4xx with its reason, on one line of the log."""
    try:
        return await handler(request)
    except NotFound as error:
        return error_page(request, 404, str(error))
    except BadRequest as error:
        note_bad_request(request, str(error))
        return error_page(request, error.status, str(error))
    except (RequestPayloadError, HttpProcessingError) as error:  # a body aiohttp cannot read
        reason = f"the request's body is malformed: {unreadable(error)}"
        note_bad_request(request, reason)
        return error_page(request, 400, reason)
    except ConnectionResetError:  # the client left mid-request: nobody reads an answer
        note_bad_request(request, "the client closed the connection before the whole request")
        return error_page(request, 400, "the request was cut short")
    except Busy as error:
        response = error_page(request, 503, str(error))
        response.headers["Retry-After"] = str(error.retry_after)
        return response
    except web.HTTPException as error:
        if error.status < 400:
            raise
        message = "no such page" if error.status == 404 else error.reason
        return error_page(request, error.status, message)
    except StorageError as error:  # the disk full, say: one log line per interval
        STORAGE.struck(error.trouble)
        response = error_page(request, 503, f"{error.trouble}: try again in a few minutes")
        response.headers["Retry-After"] = str(STORAGE_RETRY_SECONDS)
        return response
    except Exception:
        log.exception(f"error serving {request.path_qs}")
        return error_page(request, 500, "something went wrong on the hill's side")


async def security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


def create_app(
    queries: HillQueries,
    hill: HillSettings,
    settings: WebSettings,
    *,
    queue_size: int = IrcSettings.queue_size,
    guard: ConnectionGuard | None = None,
) -> web.Application:
    """The application on the hill that `queries` reads; `queue_size` bounds
    the requests waiting, uploads included (an upload is a request for the
    bot, written in the request book: the hill itself is only read);
    `guard` (serve()'s) learns which connections are serving."""
    quiet_client_errors()
    middlewares = [errors] if guard is None else [guard.middleware, errors]
    app = web.Application(middlewares=middlewares)
    app[PUBLIC_URL] = settings.public_url
    repository = DataFolder(hill.data_dir).repository
    attach(app, READER, HillReader(queries))
    attach(app, HISTORY, HistoryPages(queries, repository))
    traces = TraceStore(
        queries.code_of_hash,
        workers=settings.trace_workers,
        queue=settings.trace_queue,
        cache_bytes=settings.trace_cache_mb << 20,
    )
    attach(app, TRACES, traces)
    builds = Builds(settings.page_workers, settings.page_queue, settings.page_cache_mb << 20)
    attach(app, BUILDS, builds)
    attach(app, LADDER, LadderReader(queries.db))
    attach(app, TOURNAMENTS, TournamentReader(queries.db))
    attach(app, TRIALS, TrialReader(queries))
    attach(app, ANALYTICS, AnalyticsReader(queries.db))
    attach(app, CONTESTS, ContestReader(queries.db))
    app[UPLOADS] = Uploads(
        UploadLinks(queries.db), RequestBook(queries.db), hill.max_program_bytes, queue_size
    )
    changes.setup(app, queries.db.path)
    app[LAB] = lab_settings(queries, hill)
    app[GIT] = GitHttp(repository)
    health.setup(app, queries.db, hill.data_dir, settings.stuck_request_seconds)
    app.add_routes(ROUTES)
    app.on_response_prepare.append(security_headers)
    app.on_startup.append(_clear_expired_tests)
    return app


async def _clear_expired_tests(app: web.Application) -> None:
    await app[TRIALS].clear_expired()


class Serving:
    """The web report listening on its socket(s): `addresses`, and
    `cleanup()` to stop (the listening socket, then every connection)."""

    def __init__(
        self, runner: web.AppRunner, listening: asyncio.Server, guard: ConnectionGuard
    ) -> None:
        self.runner = runner
        self.listening = listening
        self.guard = guard

    @property
    def app(self) -> web.Application:
        return self.runner.app

    @property
    def addresses(self) -> list[Any]:
        return [sock.getsockname() for sock in self.listening.sockets]

    async def cleanup(self) -> None:
        self.listening.close()
        self.guard.report()
        await self.runner.cleanup()


async def start_web(
    queries: HillQueries,
    hill: HillSettings,
    settings: WebSettings,
    *,
    queue_size: int = IrcSettings.queue_size,
) -> Serving:
    """Serve on settings.bind:settings.port on the running loop, with the
    connections bounded (connections.py); the caller does `await
    serving.cleanup()`."""
    loop = asyncio.get_running_loop()
    quiet_loop_errors(loop)
    guard = ConnectionGuard(connection_limit(settings.max_connections))
    app = create_app(queries, hill, settings, queue_size=queue_size, guard=guard)
    runner = web.AppRunner(app, access_log_class=AccessLog, **server_options(settings.idle_seconds))
    await runner.setup()
    assert runner.server is not None
    guard.server = runner.server  # (it exists once the runner is set up)
    try:
        listening = await loop.create_server(
            guard.protocol, settings.bind, settings.port, backlog=BACKLOG
        )
    except BaseException:
        await runner.cleanup()
        raise
    log.info(f"web report on {settings.url} (at most {guard.limit} connections)")
    return Serving(runner, listening, guard)


# connections the kernel holds before they are accepted, and so those accepted
# at most in one turn of the event loop before the ones they replace are
# closed: within connections.RESERVE
BACKLOG = 64


def run_web(settings: Settings, ready: Any = None) -> None:
    """`bfjoust web`: serve the pages alone until Ctrl-C or SIGTERM.  It reads
    the hill (no lock, no migration, no git write) and writes only the upload
    requests the bot plays; HillError if the hill's database is missing or
    of another schema.  `ready(url)` is called once it listens (default: a
    line on stdout)."""
    configure_logging()  # on stderr until the hill is known to be there and readable
    queries = HillQueries.open(settings.hill.data_dir, settings.hill.ranking)
    configure_logging(folder=settings.hill.data_dir, name="web", create=False)
    try:
        asyncio.run(_serve_until_stopped(queries, settings, ready or _say_ready))
    finally:
        queries.close()


def _say_ready(url: str) -> None:
    print(f"The hill is on the web at {url} (Ctrl-C stops it)", flush=True)


async def _serve_until_stopped(queries: HillQueries, settings: Settings, ready: Any) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    serving = await start_web(
        queries, settings.hill, settings.web, queue_size=settings.irc.queue_size
    )
    try:
        ready(settings.web.url)
        await stop.wait()
    finally:
        await serving.cleanup()
