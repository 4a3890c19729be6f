"""The upload form's body, read with bounds and parsed off the event loop.

A form post is hostile input of any shape: a body cut short, a multipart
without a boundary, curl's nested multipart (`-F 'code=(...'`: curl reads a
value that starts with `(` as the start of a multipart/mixed group and
sends no program at all), or a "bomb" of hundreds of thousands of tiny
parts.  So the body is read whole first, at most `body_limit` bytes within
`BODY_SECONDS` (cheap appends on the loop; a larger or slower one is
refused before any parsing), then parsed in a worker thread by the
`multipart` library's push parser, with its limits on the number of parts
and the size of their headers.  Every refusal is a BadUpload with a
one-line reason and a 4xx status.

The form has two fields, `code` (pasted text) and `file` (a chosen file);
other fields are skipped (an owner or a name added to the form is not ours
to take).
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError
from multipart import (
    MultipartError,
    MultipartSegment,
    ParserLimitReached,
    PushMultipartParser,
    parse_options_header,
)

from hill.errors import BadUpload
from hill.threads import Threads
from hill.web.requestlog import unreadable

CHUNK = 65536
BODY_SECONDS = 30.0  # to send the whole form
MAX_PARTS = 16  # the form has two fields; browsers add none
FIELDS = ("code", "file")
HEADER_BYTES = 4096  # of one part's headers
SLACK = 64 << 10  # the parts' headers and boundaries, beyond the program itself
CURL_HINT = (
    "the form's code field came as a nested multipart: curl reads -F 'code=(...' as the"
    " start of a group and does not send the program; use --form-string 'code=...'"
    " or -F 'file=@program.bfjoust'"
)

_PARSERS = Threads(1, "web-form")  # a form is parsed in this thread, never on the loop


def body_limit(max_bytes: int) -> int:
    """The largest form body taken for programs of at most `max_bytes`:
    pasted text may grow by its CRs, and a file may come beside it."""
    return 3 * max_bytes + SLACK


async def read_form(request: web.Request, max_bytes: int) -> dict[str, bytes]:
    """The form's `code` and `file` fields (absent ones missing); BadUpload
    for anything malformed, too large or too slow."""
    if request.content_type != "multipart/form-data":
        raise BadUpload("send the form as multipart/form-data", 415)
    boundary = parse_options_header(request.headers.get("Content-Type", ""))[1].get("boundary")
    if not boundary or len(boundary) > 70:
        raise BadUpload("the multipart form has no boundary (RFC 2046: 1 to 70 characters)")
    limit = body_limit(max_bytes)
    too_large = BadUpload(f"program too large: the limit is {max_bytes} bytes", 413)
    if (request.content_length or 0) > limit:
        raise too_large
    body = await _read_body(request, limit)
    if body is None:
        raise too_large
    return await _PARSERS.run(parse_form, body, boundary, max_bytes)


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    """The whole body (None past `limit` bytes); BadUpload if it is cut
    short or takes over BODY_SECONDS."""
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_SECONDS):
            while chunk := await request.content.read(CHUNK):
                body += chunk
                if len(body) > limit:
                    return None
    except TimeoutError:
        raise BadUpload(f"the form took over {BODY_SECONDS:g} s to send", 408) from None
    except RequestPayloadError as error:  # a chunked body cut or malformed
        raise BadUpload(f"the request's body is malformed: {unreadable(error)}") from None
    if request.content_length is not None and len(body) != request.content_length:
        raise BadUpload("the request's body is shorter than its Content-Length")
    return bytes(body)


def parse_form(body: bytes, boundary: str, max_bytes: int) -> dict[str, bytes]:
    """The `code` and `file` fields of a multipart/form-data body (in a
    worker thread); BadUpload if it is malformed."""
    fields: dict[str, bytearray] = {}
    current: bytearray | None = None
    try:
        with PushMultipartParser(
            boundary,
            content_length=len(body),
            max_header_size=HEADER_BYTES,
            max_segment_count=MAX_PARTS,
        ) as parser:
            for event in [*parser.parse(body), *parser.parse(b"")]:
                if isinstance(event, MultipartSegment):
                    current = _field(event, fields)
                elif event is None:
                    current = None
                elif current is not None:
                    current += event
    except ParserLimitReached:
        raise BadUpload(f"the form has too many parts: at most {MAX_PARTS}", 413) from None
    except MultipartError as error:
        raise BadUpload(f"the multipart form is malformed: {error}") from None
    if len(fields.get("file", b"")) > max_bytes:
        raise BadUpload(f"program too large: the limit is {max_bytes} bytes", 413)
    return {name: bytes(data) for name, data in fields.items()}


def _field(segment: MultipartSegment, fields: dict[str, bytearray]) -> bytearray | None:
    """Where a part's bytes go: its field's buffer, or nowhere (not ours)."""
    if segment.name not in FIELDS:
        return None
    if (segment.content_type or "").lower().startswith("multipart/"):
        raise BadUpload(CURL_HINT)
    if segment.name in fields:
        raise BadUpload(f"the form has two {segment.name} fields")
    fields[segment.name] = bytearray()
    return fields[segment.name]
