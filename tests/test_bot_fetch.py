"""Programs given by URL: fetched from a real HTTP server on loopback, and
the refusals that keep the bot from being pointed at private addresses."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from sqlalchemy import select
from support import ircservers
from support.botharness import RUSH, bot_settings, run, running_bot
from support.httpserver import serve
from support.ircclient import IrcTestClient

from bot.fetch import fetch_program
from bot.ircd import Ngircd
from hill.errors import FetchError
from hill.store.tables import ProgramRow

ngircd = ircservers.ngircd  # the fixture

# A program far too long for one IRC line, with comments as players write them
LONG = "\n".join(
    [f"This line is a comment, number {i}, about the plan below." for i in range(60)]
    + ["(>)*9", "([-]>)*21"]
).encode()
MALFORMED = b"(>)*9\n([-]>)*21\n  [+\n"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def http_server() -> contextlib.AbstractAsyncContextManager[str]:
    """Serves /long, /malformed, /redirect (to /long), /huge; others are 404."""

    async def long(request: web.Request) -> web.Response:
        return web.Response(body=LONG)

    async def malformed(request: web.Request) -> web.Response:
        return web.Response(body=MALFORMED)

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound("/long")

    async def huge(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()  # no Content-Length: the limit must hold anyway
        await response.prepare(request)
        for _ in range(64):
            await response.write(b"+" * 4096)
        return response

    return serve({"/long": long, "/malformed": malformed, "/redirect": redirect, "/huge": huge})


def test_a_long_program_by_url(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(
        tmp_path, ngircd.port, fetch_allow_private=True, fetch_max_bytes=100_000
    )
    assert len(LONG) > 3000

    async def scenario() -> None:
        async with http_server() as url, running_bot(settings) as bot:
            nick = bot.client.nick
            ann = await IrcTestClient("ann").connect(ngircd.port)
            ann.say(nick, f"!bfjoust long {url}/redirect")
            assert (await ann.reply(nick)).startswith("New program ann.long: points 0.00")
            with bot.commands.hill.db.session() as session:
                row = session.scalars(select(ProgramRow).where(ProgramRow.name == "long")).one()
                assert row.code == LONG and row.status == "hill"
            ann.say(nick, f"!bfjoust-test bad {url}/malformed")
            assert (await ann.reply(nick)) == (
                "parse error at line 3, column 3: unmatched '[': no ']' closes it"
            )
            ann.say(nick, f"!bfjoust gone {url}/missing")
            assert await ann.reply(nick) == "the URL answered 404 Not Found"

    run(scenario())


def test_urls_refused(ngircd: Ngircd, tmp_path) -> None:
    # failed fetches do not count against the rate limit: 2 are enough
    settings = bot_settings(tmp_path, ngircd.port, fetch_max_bytes=10_000, rate_limit_per_user=2)

    async def scenario() -> None:
        async with http_server() as url, running_bot(settings) as bot:
            nick = bot.client.nick
            port = url.rsplit(":", 1)[1]
            ann = await IrcTestClient("ann").connect(ngircd.port)
            for code, answer in [
                (
                    f"{url}/long",
                    "127.0.0.1 is a private address: refused "
                    "(the hill's [irc] fetch_allow_private setting allows it)",
                ),
                (f"http://localhost:{port}/long", "is a private address"),
                (f"http://[::1]:{port}/long", "::1 is a private address: refused"),
                (f"http://[::ffff:127.0.0.1]:{port}/long", "is a private address: refused"),
                (f"http://10.1.2.3:{port}/long", "10.1.2.3 is a private address: refused"),
                ("http://169.254.169.254/latest", "169.254.169.254 is a private address"),
                ("ftp://example.org/warrior.bfjoust", "only http and https URLs are fetched"),
                ("file:///etc/passwd", "only http and https URLs are fetched, not file"),
            ]:
                ann.say(nick, f"!bfjoust-test x {code}")
                assert answer in await ann.reply(nick), code
            for name in ("a", "b"):  # none of the 8 refusals counted
                ann.say(nick, f"!bfjoust-test {name} {RUSH}")
                assert "test only" in await ann.reply(nick)
            ann.say(nick, f"!bfjoust-test c {RUSH}")
            assert (await ann.reply(nick)).startswith("you have made 2 submissions recently")
            assert (await asyncio.to_thread(bot.commands.hill.queries.standings)).size == 0

    run(scenario())


def test_fetch_limits() -> None:
    async def scenario() -> None:
        async with http_server() as url:
            fetch = dict(timeout=5.0, allow_private=True)
            assert await fetch_program(f"{url}/long", max_bytes=len(LONG), **fetch) == LONG
            with pytest.raises(FetchError, match="larger than 3000 bytes"):
                await fetch_program(f"{url}/long", max_bytes=3000, **fetch)  # Content-Length
            with pytest.raises(FetchError, match="larger than 100000 bytes"):
                await fetch_program(f"{url}/huge", max_bytes=100_000, **fetch)  # streamed
            with pytest.raises(FetchError, match="private address"):
                await fetch_program(
                    f"{url}/redirect", max_bytes=10**6, timeout=5.0, allow_private=False
                )

    run(scenario())
