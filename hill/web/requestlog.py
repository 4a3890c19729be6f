"""One log line per HTTP request, malformed ones included.

aiohttp logs a request it cannot parse (a request line over 8190 bytes, a
broken header) as an error with the whole traceback, from its
`aiohttp.server` logger, and then once more in the access log as "UNKNOWN /".
Anyone can send those, so they are the client's fault and worth one line:
the access log says "bad HTTP request" with aiohttp's reason, and the
traceback is dropped.
"""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_log import AccessLogger

REASON_CHARS = 120


class AccessLog(AccessLogger):
    """aiohttp's access log, with one short line for a request it could not parse."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        if _unparsed(request) and isinstance(response, web.Response):
            self.logger.warning(
                "bad HTTP request from %s: %s %s",
                request.remote,
                response.status,
                _reason(response),
            )
        else:
            super().log(request, response, time)


def _unparsed(request: web.BaseRequest) -> bool:
    """aiohttp stands a request it could not parse in as `UNKNOWN /`."""
    return request.method == "UNKNOWN" and request.raw_path == "/"


def _reason(response: web.Response) -> str:
    """aiohttp's message for the client, on one short line."""
    text = response.text or ""
    line = " ".join(text.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


class _DropClientErrors(logging.Filter):
    """Drops aiohttp's traceback of a request it could not parse (AccessLog reports it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, HttpProcessingError)


_FILTER = _DropClientErrors()


def quiet_client_errors() -> None:
    """Install the filter on aiohttp's server logger (once)."""
    logger = logging.getLogger("aiohttp.server")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
