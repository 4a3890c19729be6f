"""One log line per HTTP request, malformed ones included, and none for
the pictures and static files a page pulls in.

aiohttp logs a request it cannot parse (a request line over 8190 bytes, a
broken header) as an error with the whole traceback, from its
`aiohttp.server` logger, and then once more in the access log as "UNKNOWN /".
Anyone can send those, so they are the client's fault and worth one line:
the access log says "bad HTTP request" with aiohttp's reason, and the
traceback is dropped (and so is the one of a body it cannot read, which
the handler answered already).  A request whose body or form is malformed (the
handler calls `note_bad_request`) is one line too, with the reason it was
refused.  Static files and battle thumbnails (a tournament's crosstable
pulls in hundreds) are logged at DEBUG only.
"""

from __future__ import annotations

import logging
import re

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_log import AccessLogger
from aiohttp.web_protocol import RequestPayloadError

REASON_CHARS = 120
# what a page pulls in, and what a watchdog polls: logged at DEBUG
QUIET_PATHS = ("/static/", "/thumbnail", "/healthz", "/metrics")
BAD_REQUEST = web.RequestKey("bad_request", str)  # the request's key: why it was refused


def note_bad_request(request: web.BaseRequest, reason: str) -> None:
    """Say why a malformed request was refused: its access line gives the reason."""
    request[BAD_REQUEST] = reason


def unreadable(error: Exception) -> str:
    """Why aiohttp could not read a request's body, on one line (it says
    "400, message:" then the reason on a line of its own)."""
    return re.sub(r"^\d{3}, message: ", "", " ".join(str(error).split()))


class AccessLog(AccessLogger):
    """aiohttp's access log, with one short line for a request it could not
    parse or a malformed one, and static files and thumbnails at DEBUG."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        if _unparsed(request) and isinstance(response, web.Response):
            self.logger.warning(
                "bad HTTP request from %s: %s %s",
                request.remote,
                response.status,
                _reason(response),
            )
        elif BAD_REQUEST in request:
            self.logger.warning(
                "bad request from %s: %s %s: %s %s",
                request.remote,
                request.method,
                _short(request.path),
                response.status,
                _short(request[BAD_REQUEST]),
            )
        elif request.path.startswith(QUIET_PATHS):
            self.logger.debug("%s %s %s", request.method, request.path_qs, response.status)
        else:
            super().log(request, response, time)

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.WARNING)


def _unparsed(request: web.BaseRequest) -> bool:
    """aiohttp stands a request it could not parse in as `UNKNOWN /`."""
    return request.method == "UNKNOWN" and request.raw_path == "/"


def _reason(response: web.Response) -> str:
    """aiohttp's message for the client, on one short line."""
    return _short(response.text or "")


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


class _DropClientErrors(logging.Filter):
    """Drops aiohttp's traceback of a request it could not parse, or of a
    body it could not read (a gzip body that is not gzip: aiohttp meets it
    again when it drains the rest after the answer); AccessLog reports both."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, (HttpProcessingError, RequestPayloadError))


_FILTER = _DropClientErrors()


def quiet_client_errors() -> None:
    """Install the filter on aiohttp's server logger (once)."""
    logger = logging.getLogger("aiohttp.server")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
