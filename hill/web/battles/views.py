"""The battle viewer: its page (`/battle`, two programs of a hill state,
or any two programs ever submitted by their code hashes: a tournament's,
which may have left the hill), its battle in pieces (`/api/trace`:
pieces.py) and `/thumbnail`, the small picture of a battle given by its
programs' code hashes (PNG: thumbnail.py).  Battles are traced by
store.py, under bounds.
"""

from __future__ import annotations

import gzip
from typing import Any

from aiohttp import web

from hill import engine
from hill.errors import NotFound
from hill.web.battles.store import TRACES
from hill.web.builds import IMMUTABLE
from hill.web.params import int_param, name_param, snapshot
from hill.web.render import render
from hill.web.state import Snapshot, event
from hill.web.tournaments.reader import TOURNAMENTS

TAPES = list(engine.TAPE_LENGTHS)
# a battle of any two programs ever submitted, by their code hashes (e.g. a
# tournament's, which may have left the hill): ?left_code=H&right_code=H
CODE_KEYS = ("left_code", "right_code")


def battle_data(snap: Snapshot, left: str, right: str, tape: int, polarity: str) -> dict[str, Any]:
    """The battle viewer's page: who, on which tape, and the outcome the hill scored."""
    a, b = snap.index(left), snap.index(right)
    i = engine.battle_index(tape, polarity)
    return {
        **battle_setup(left, right, tape, polarity),
        "event": event(snap.event),
        "programs": [e.program.full_name for e in snap.standings.entries],
        "scored": int(snap.standings.outcomes[a, b, i]),
    }


def battle_setup(left: str, right: str, tape: int, polarity: str) -> dict[str, Any]:
    """What every battle viewer's page says, in a hill state or not (by code:
    no event, no list of the hill's programs)."""
    return {
        "event": None,
        "programs": [],
        "left": left,
        "right": right,
        "tape": tape,
        "polarity": polarity,
        "tapes": TAPES,
        "polarities": list(engine.POLARITIES),
    }


def battle_params(request: web.Request, snap: Snapshot) -> tuple[str, str, int, str]:
    """left, right, tape, polarity; by default the top two programs on the shortest tape."""
    names = [e.program.full_name for e in snap.standings.entries]
    if not names:
        raise NotFound("the hill is empty")
    query = request.query
    left = name_param(request, "left") if "left" in query else names[0]
    right = name_param(request, "right") if "right" in query else names[min(1, len(names) - 1)]
    return left, right, *tape_and_polarity(request)


def tape_and_polarity(request: web.Request) -> tuple[int, str]:
    """The battle's tape length and polarity; by default the shortest tape, sieve."""
    tape = int_param(request, "tape")
    tape = engine.MIN_TAPE if tape is None else tape
    polarity = request.query.get("polarity", engine.POLARITIES[0])
    if tape not in engine.TAPE_LENGTHS or polarity not in engine.POLARITIES:
        raise NotFound("tape lengths are 10 to 30, polarities sieve and kettle")
    return tape, polarity


def by_code(request: web.Request) -> bool:
    return any(key in request.query for key in CODE_KEYS)


async def code_battle_params(
    request: web.Request,
) -> tuple[tuple[str, str], list[str], int, str]:
    """A battle given by code hashes: the hashes, the programs' names (their
    latest; NotFound for an unknown code), tape length and polarity."""
    left, right = (request.query.get(key, "") for key in CODE_KEYS)
    hashes = (left, right)
    names = await request.app[TOURNAMENTS].names(hashes)
    return hashes, names, *tape_and_polarity(request)


async def code_battle(request: web.Request) -> dict[str, Any]:
    """The battle viewer's page for a battle given by code hashes: the
    programs' names, and how their stored joust scored it."""
    hashes, names, tape, polarity = await code_battle_params(request)
    scored = await request.app[TOURNAMENTS].outcome(*hashes, tape, polarity)
    return {
        **battle_setup(names[0], names[1], tape, polarity),
        "left_code": hashes[0],
        "right_code": hashes[1],
        "scored": scored,
    }


async def trace(request: web.Request) -> web.Response:
    """One piece of a battle (pieces.py): the one holding cycle ?from=."""
    if by_code(request):  # a piece needs the codes only, not their stored joust
        hashes, _, tape, polarity = await code_battle_params(request)
    else:
        snap = await snapshot(request)
        left, right, tape, polarity = battle_params(request, snap)
        hashes = (snap.entry(left).program.code_hash, snap.entry(right).program.code_hash)
    at = int_param(request, "from") or 0
    try:
        piece = await request.app[TRACES].piece(*hashes, tape, polarity, at)
    except IndexError:
        raise NotFound(f"the battle ends before cycle {at}") from None
    return gzipped_json(request, piece)


def gzipped_json(request: web.Request, body: bytes) -> web.Response:
    """Stored gzipped JSON as it is (every browser takes gzip), or unpacked."""
    headers = {"Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        headers["Content-Encoding"] = "gzip"
    else:
        body = gzip.decompress(body)  # a piece: at most a few hundred KB
    return web.Response(body=body, content_type="application/json", headers=headers)


async def battle(request: web.Request) -> web.Response:
    if by_code(request):
        return render(request, "battle.html", await code_battle(request))
    snap = await snapshot(request)
    return render(request, "battle.html", battle_data(snap, *battle_params(request, snap)))


async def thumbnail(request: web.Request) -> web.Response:
    """The battle's picture (thumbnail.py): tape across, time down."""
    hashes, _, tape, polarity = await code_battle_params(request)  # NotFound: no such code
    png = await request.app[TRACES].thumbnail(*hashes, tape, polarity)
    return web.Response(body=png, content_type="image/png", headers={"Cache-Control": IMMUTABLE})
