"""What a request asks for, read and checked once for every concern: a
program's full name, a number, a tournament's id, and the hill state
(?event=N, by default the current one, through state.py's reader).  A
malformed or unknown one is NotFound (a 404 with its reason).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.errors import NotFound
from hill.rules.names import is_full_name
from hill.web.state import READER, HillReader, Snapshot


def reader(request: web.Request) -> HillReader:
    return request.app[READER]


def name_param(request: web.Request, key: str = "name") -> str:
    name = request.match_info.get(key) or request.query.get(key, "")
    if not is_full_name(name):
        raise NotFound(f"no program {name[:60]!r}")
    return name


def int_param(request: web.Request, key: str, text: str | None = None) -> int | None:
    """A number from the query's `key` (or `text`, a part of the path); None if absent."""
    text = request.query.get(key) if text is None else text
    if text is None or text == "":
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise NotFound(f"{key} must be a number, not {text[:20]!r}")
    return int(text)


def tournament_id(request: web.Request) -> int:
    text = request.match_info["id"]
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise NotFound(f"no tournament {text[:20]!r}: tournaments are numbered 1, 2, 3 ...")
    return int(text)


async def snapshot(request: web.Request) -> Snapshot:
    """The hill state the request asks for (?event=N), by default the current one."""
    return await reader(request).snapshot(int_param(request, "event"))


def state_key(snap: Snapshot) -> tuple[Any, ...]:
    """What a page of one hill state depends on."""
    return ("state", snap.event.id if snap.event else None, snap.commit)


async def last_state(request: web.Request, name: str) -> Snapshot:
    """The last hill state a program was part of (NotFound: never on the
    hill, or its change is still being written)."""
    points = (await reader(request).history()).series(name)
    if not points:
        raise NotFound(f"{name} is not on the hill")
    return await reader(request).snapshot(points[-1].event)
