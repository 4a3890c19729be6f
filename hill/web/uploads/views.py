"""The upload form: a program too long for an IRC line, pasted or chosen as a
file, through the one-time link the bot gave (`!bfjoust-upload`, see
hill/store/uploads.py).

The token in the URL is the only credential and it is enough: unguessable,
bound to the player who asked, short-lived and good for one upload, so a
page elsewhere cannot forge a submission (no other CSRF token is needed).
A good upload becomes a request in the request book; the bot plays it and
this page shows the answer, reloading itself (a Refresh header, no script)
until it is there: each reload is held until the request moves (the hill's
bell, hill/web/changes.py), so the page changes when the answer comes, not
on an interval.  Nothing is used up by a bad upload: too large, empty,
malformed or a full queue leave the link as it was, but failed posts are
counted against the link: after FAILURES_ALLOWED of them it no longer works
(the player asks the bot for a new one), so nobody can post junk on a link
without end.  The form's body is read and parsed with bounds (form.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hill.errors import BadUpload, HillError, LinkRefused, NotFound, QueueFull, StorageError
from hill.logs import Trouble
from hill.rules.events import iso_utc
from hill.rules.programs import check_program
from hill.rules.requests import OPEN, answer_text
from hill.store.requests import RequestBook
from hill.store.uploads import LinkState, UploadLinks
from hill.threads import LRU, Threads
from hill.web.changes import CHANGES
from hill.web.render import render
from hill.web.requestlog import note_bad_request
from hill.web.uploads.form import read_form
from hill.web.urls import Urls, site_url

FAILURES_ALLOWED = 10  # failed posts on one link, then it no longer works
TOO_MANY = "too many failed uploads on this link: it no longer works; ask the bot for a new one"
_THREAD = Threads(1, "web-upload")  # the links read and written in the order asked


@dataclass(frozen=True)
class Uploads:
    """What the form needs: the links, the book, and the limits; and the
    failed posts of each link (by token, the last few thousand links)."""

    links: UploadLinks
    book: RequestBook
    max_bytes: int  # the hill's max_program_bytes
    queue_size: int  # requests that may wait ([irc] queue_size)
    failures: LRU[str, int] = field(default_factory=lambda: LRU(4096))
    trouble: Trouble = field(default_factory=lambda: Trouble("the upload form"))  # the storage's

    def failed(self, token: str) -> bool:
        """Count a failed post on the link; True once it has had too many."""
        count = (self.failures.get(token) or 0) + 1
        self.failures.put(token, count)
        return count >= FAILURES_ALLOWED


UPLOADS = web.AppKey("uploads", Uploads)


def _uploads(request: web.Request) -> Uploads:
    return request.app[UPLOADS]


async def _state(request: web.Request) -> LinkState:
    state = await _THREAD.run(_uploads(request).links.state, request.match_info["token"])
    if state is None:
        raise NotFound("there is no such upload link: ask the bot for a new one")
    return state


def _asked(request: web.Request, state: LinkState) -> dict[str, Any] | None:
    """The link's request as the page shows it: where it stands, and once
    finished its answer in words (as the bot says it) and its program."""
    asked = state.request
    if asked is None:
        return None
    outcome = asked.answer
    if outcome is None:
        return {"state": asked.state, "answer": None, "program": None}
    urls = Urls(site=site_url(request))
    answer = answer_text(outcome, urls.program, urls.test)
    return {"state": asked.state, "answer": answer, "program": outcome.program}


def _shown(state: LinkState, waiting: int) -> str:
    """What the page shows of the upload, as its reload says it saw it."""
    return f"{state.request.state}.{waiting}" if state.request is not None else "form"


def _page(
    request: web.Request, state: LinkState, status: int = 200, waiting: int = 0, **extra: Any
) -> web.Response:
    link = state.link
    data = {
        "program": link.name if link.contest else link.full_name,  # or the contest's name
        "contest": link.contest,
        "test_only": link.test_only,
        "expires": iso_utc(link.expires_at),
        "max_bytes": _uploads(request).max_bytes,
        "error": None,
        "code": "",
        "request": _asked(request, state),
        "waiting": waiting,
        "expired": state.expired,
        **extra,
    }
    response = render(request, "upload.html", data, status=status)
    response.headers["Cache-Control"] = "no-store"
    if state.request is not None and state.request.state in OPEN:
        # asked again at once, held until it moves (hill/web/changes.py)
        response.headers["Refresh"] = f"0; url={request.path}?seen={_shown(state, waiting)}"
    return response


async def show(request: web.Request) -> web.Response:
    """The form, or what became of the upload; with `?seen=` (the page's
    reload), once it is no longer what the browser saw."""

    async def read() -> tuple[str, tuple[LinkState, int]]:
        state = await _state(request)
        asked = state.request
        waiting = 0
        if asked is not None and asked.state in OPEN:
            waiting = await _THREAD.run(_uploads(request).book.waiting_before, asked.id)
        return _shown(state, waiting), (state, waiting)

    state, waiting = await request.app[CHANGES].after(request.query.get("seen"), read)
    if state.request is None and state.expired:
        return _page(request, state, 410, error="this link has expired: ask the bot for a new one")
    return _page(request, state, waiting=waiting)


async def upload(request: web.Request) -> web.Response:
    state = await _state(request)
    if state.request is not None:
        return _page(request, state, 409, error="this link has been used already: each works once")
    if state.expired:
        return _page(request, state, 410, error="this link has expired: ask the bot for a new one")
    uploads = _uploads(request)
    token = request.match_info["token"]
    code = b""
    try:
        code = await read_program(request, uploads.max_bytes)
        await _THREAD.run(check_program, code, uploads.max_bytes)
        await _THREAD.run(uploads.links.redeem, token, code, limit=uploads.queue_size)
    except (BadUpload, LinkRefused, HillError) as error:
        status = getattr(error, "status", 400)
        note_bad_request(request, str(error))
        if status != 409 and uploads.failed(token):
            await _THREAD.run(uploads.links.expire, token)
            return _page(request, state, 429, error=TOO_MANY, expired=True)
        return _page(request, state, status, error=str(error), code=_text(code))
    except QueueFull:
        busy = "the hill is busy: the queue is full; try again in a minute"
        return _page(request, state, 503, error=busy, code=_text(code))
    except StorageError as error:  # the disk full, say: the link is not used up
        uploads.trouble.struck(error.trouble)
        kept = "nothing was recorded and the link still works; send it again later"
        told = f"{error.trouble}: {kept}"
        return _page(request, state, 503, error=told, code=_text(code))
    uploads.trouble.cleared()
    raise web.HTTPSeeOther(request.path)


async def read_program(request: web.Request, max_bytes: int) -> bytes:
    """The program from the form: the chosen file, or the pasted text (its
    line ends as the browser sent them, CR LF, made LF again)."""
    fields = await read_form(request, max_bytes)
    pasted = fields.get("code", b"").replace(b"\r\n", b"\n")
    chosen = fields.get("file", b"")
    if pasted.strip() and chosen:
        raise BadUpload("paste the program or choose a file, not both")
    code = chosen or pasted
    if not code.strip():
        raise BadUpload("the program is empty: paste it or choose its file")
    return code  # its size is checked with its syntax (check_program)


def _text(code: bytes) -> str:
    """Pasted code shown again in the form after a refusal (escaped there)."""
    return code.decode("utf-8", errors="replace") if len(code) <= 65536 else ""
