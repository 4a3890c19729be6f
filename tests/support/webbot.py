"""A real `bfjoust bot` process with its web report, and what the web tests
do with it: wait for the pages, join as a player, ask for an upload link,
send raw HTTP, measure the bot's CPU and descriptors, time an IRC answer."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import time
import urllib.request
from pathlib import Path

from bot.ircd import free_port
from support.botharness import CHANNEL
from support.botprocess import BotProcess
from support.ircclient import IrcTestClient


def web_bot(
    folder: Path, irc_port: int, nick: str, *, hill: str = "", irc: str = "", web: str = ""
) -> tuple[BotProcess, str]:
    """A bot with its web report on a free port (not started); the site's URL."""
    port = free_port()
    bot = BotProcess(folder, irc_port, nick, hill=hill, irc=irc, web=f"port = {port}\n{web}")
    return bot, site(port)


def site(web_port: int) -> str:
    return f"http://127.0.0.1:{web_port}/"


def web_up(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


async def player(nick: str, port: int, bot: str) -> IrcTestClient:
    """A player in the channel, once the bot is there too."""
    client = await IrcTestClient(nick).connect(port)
    await client.join(CHANNEL)
    await client.expect(
        lambda m: (
            (m.command == "JOIN" and m.nick == bot)
            or (m.command == "353" and bot in m.text.split())
        ),
        30,
    )
    return client


async def upload_link(client: IrcTestClient, bot: str, target: str, args: str) -> str:
    """Ask for a link (in `target`); it comes in private, in a NOTICE."""
    client.say(target, f"!bfjoust-upload {args}")
    notice = await client.expect(
        lambda m: m.nick == bot and m.command == "NOTICE" and "/upload/" in m.text, 20
    )
    match = re.search(r"(http://\S+/upload/[A-Za-z0-9_-]{32,})", notice.text)
    assert match, notice.text
    return match[1]


async def rank_latency(client: IrcTestClient, bot: str, program: str, timeout: float) -> float:
    """How long the bot takes to answer `!bfjoust-rank program` in the channel."""
    started = time.monotonic()
    client.say(CHANNEL, f"!bfjoust-rank {program}")
    await client.reply(bot, program, timeout)
    return time.monotonic() - started


def raw_http(url: str, data: bytes, *, half_close: bool = False, timeout: float = 30) -> bytes:
    """Send bytes on a fresh connection (then, `half_close`, end our side);
    what the server answers before it closes."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as connection:
        connection.sendall(data)
        if half_close:
            connection.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return answer


def status_of(answer: bytes) -> int:
    """The status of a raw HTTP answer."""
    return int(answer.split(b"\r\n", 1)[0].split()[1])


def family(pid: int) -> list[int]:
    """A process and its descendants (the bot and its web report's process)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process and its descendants have used so far."""
    total = 0
    for member in family(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def descriptors(pid: int) -> int:
    """The file descriptors a process holds open."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


async def wait_for(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.1)
