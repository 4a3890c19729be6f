"""Pages built once per state, kept encoded and compressed.

A page (HTML or its JSON twin) of one hill state, one ladder standing or
one tournament's progress is the same for everyone who asks until that
state changes, so it is built once and kept as gzipped bytes: a request
then costs a lookup and a write of those bytes (browsers take gzip; the
few clients that do not get it inflated).  A page's loader says what its
data depends on with a `View` (`key`: the state; `build()`: the data),
views.page() adds what the rendering depends on (the path and query, and
for HTML the state the reader asked for) and asks `Builds.get`.

Building (the data, the template or the JSON encoding, and the
compression) runs off the event loop, in `workers` threads, once per key
however many ask at the same time, at most `workers + queue` keys at once;
beyond that the answer is 503 with Retry-After (bounded.py).  The pages
kept are bounded by their compressed bytes (`cache_bytes`).  Each has an
ETag, so a reader that has it gets a 304.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from hill.threads import LRU
from hill.web.bounded import BoundedWork

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
        self._pages: LRU[Hashable, Built] = LRU(cache_bytes, size_of=lambda b: len(b.body))

    def close(self) -> None:
        self._work.close()

    async def get(self, key: Hashable, build: Callable[[], Built]) -> Built:
        """The page of `key`: kept, or built (once) by `build()` in a worker."""
        built = self._pages.get(key)
        if built is None:
            built = await self._work.run(key, build, lambda b: self._pages.put(key, b))
        return built

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
