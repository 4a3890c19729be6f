"""Benchmark: the bot's output pacing on the three servers networks run.

For each server (InspIRCd as `make run` configures it, ngircd and
ircd-hybrid, all on loopback) a real bot at the default pace (1 line a
second after a burst of 4, as config.example.toml has it):

- flood: one player writes 1000 `!bfjoust-test` submissions in one write, then
  1000 cheap commands; another player asks `!bfjoust-rank` at once (the
  first answer) and then every second: the wait of each answer;
- burst: 200 new clients on the prober's host each ask `!bfjoust-help`
  (600 lines of answer); the prober asks throughout: the wait of each;
- drain: 600 lines queued; lines sent a second over `--drain` seconds, and
  the bot's disconnections.

Prints figures per server, asserts nothing (tests/test_bot_flood.py,
test_bot_burst.py and test_bot_drain.py assert, in lines rather than
seconds):

    .venv/bin/python bench/pacing.py [--servers inspircd,ngircd,hybrid]
        [--runs flood,burst,drain] [--drain 60]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.botharness import CHANNEL, RUSH, bot_settings, running_bot
from support.ircclient import IrcTestClient
from support.ircservers import start_hybrid
from support.pacing import crowd_asks_help, lines_from

from bot.app import HillBot
from bot.ircd import free_port, launch_keeper, start_ngircd, stop_keeper
from hill.writers.hill import Hill

FLOOD = 1000
BURST = 200
BACKLOG = 600
PROBES = 8
GUARD = 60.0  # seconds: no answer by then is none


@contextlib.contextmanager
def server(name: str, directory: Path) -> Iterator[int]:
    """The server's port while it runs."""
    port = free_port()
    if name == "inspircd":  # make run's: bot.ircd's configuration, under its keeper
        launch_keeper(directory, "127.0.0.1", port, [CHANNEL])
        try:
            yield port
        finally:
            stop_keeper(directory)
    elif name == "ngircd":
        ngircd = start_ngircd(directory, port, [CHANNEL])
        try:
            yield port
        finally:
            ngircd.stop()
    else:
        hybrid = start_hybrid(directory)
        try:
            yield hybrid.port
        finally:
            hybrid.stop()


async def ask(prober: IrcTestClient, nick: str, target: str) -> float:
    """Seconds from a `!bfjoust-rank` to its answer."""
    started = time.monotonic()
    prober.say(target, "!bfjoust-rank ann.rush")
    await prober.reply(nick, "ann.rush: rank", timeout=GUARD)
    return time.monotonic() - started


async def probe(prober: IrcTestClient, nick: str) -> list[float]:
    waits = []
    for i in range(PROBES):
        waits.append(await ask(prober, nick, (CHANNEL, nick)[i % 2]))
        await asyncio.sleep(1.0)
    return waits


def figures(what: str, first: float, waits: list[float]) -> str:
    return (
        f"  {what}: first answer {first:.2f} s; then max {max(waits):.2f} s, "
        f"median {statistics.median(waits):.2f} s ({', '.join(f'{w:.2f}' for w in waits)})"
    )


@contextlib.asynccontextmanager
async def bot(port: int, data: Path) -> AsyncIterator[HillBot]:
    settings = bot_settings(data, port, messages_per_second=1.0, burst=4)
    hill = Hill(settings.hill)
    hill.challenge("ann", "rush", RUSH.encode())
    async with running_bot(settings, hill) as hillbot:
        yield hillbot


async def flood(port: int, data: Path) -> str:
    async with bot(port, data) as hillbot:
        nick = hillbot.client.nick
        flooder = await IrcTestClient("flooder").connect(port)
        prober = await IrcTestClient("prober").connect(port)
        await flooder.join(CHANNEL)
        await prober.join(CHANNEL)
        flooder.send(  # tests: ircd-hybrid offers account-notify without services
            "\r\n".join(f"PRIVMSG {CHANNEL} :!bfjoust-test w{i} {RUSH}" for i in range(FLOOD))
        )
        first = await ask(prober, nick, CHANNEL)
        said = figures("flood of submissions", first, await probe(prober, nick))
        commands = ["!bfjoust-rank ann.rush", "!bfjoust-help", "!bfjoust-nonsense"]
        flooder.send("\r\n".join(f"PRIVMSG {nick} :{commands[i % 3]}" for i in range(FLOOD)))
        first = await ask(prober, nick, nick)
        said += "\n" + figures("flood of commands", first, await probe(prober, nick))
        return said + f"\n  bot connections: {hillbot.client.connections}"


async def burst(port: int, data: Path) -> str:
    host = "127.0.0.2"
    async with bot(port, data) as hillbot:
        nick = hillbot.client.nick
        prober = await IrcTestClient("prober").connect(port, host=host)
        await prober.join(CHANNEL)
        crowd = await crowd_asks_help(port, host, BURST, nick)
        first = await ask(prober, nick, CHANNEL)
        waits = await probe(prober, nick)
        helped = lines_from(nick, crowd)
        return (
            figures(f"{BURST} new clients of the prober's host ask for help", first, waits)
            + f"; the crowd got {helped} lines meanwhile"
        )


async def drain(port: int, data: Path, seconds: float) -> str:
    async with bot(port, data) as hillbot:
        client = hillbot.client
        watcher = await IrcTestClient("watcher").connect(port)
        await watcher.join(CHANNEL)
        backlog = client.outbox.backlog
        first, started = backlog.sent, time.monotonic()
        for i in range(BACKLOG):
            client.say(CHANNEL, f"line {i} " + "x" * 200, recipient=f"player{i % 40}")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await watcher.expect(lambda m: m.text.startswith(f"line {BACKLOG - 1} "), seconds)
        took = time.monotonic() - started
        sent = backlog.sent - first
        return (
            f"  drain: {sent} of {BACKLOG} lines in {took:.0f} s ({sent / took:.2f} a second), "
            f"bot connections: {client.connections}"
        )


async def bench(name: str, runs: list[str], drain_seconds: float) -> None:
    print(f"{name}:", flush=True)
    scenarios: dict[str, Callable[[int, Path], object]] = {
        "flood": flood,
        "burst": burst,
        "drain": lambda port, data: drain(port, data, drain_seconds),
    }
    for run in (scenarios[name] for name in runs):
        with tempfile.TemporaryDirectory() as tmp, server(name, Path(tmp) / "ircd") as port:
            try:
                print(await run(port, Path(tmp) / "hill"), flush=True)  # type: ignore[misc]
            finally:
                while IrcTestClient.connected:
                    await IrcTestClient.connected.pop().close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--servers", default="inspircd,ngircd,hybrid")
    parser.add_argument("--runs", default="flood,burst,drain")
    parser.add_argument("--drain", type=float, default=60.0, help="seconds the drain is watched")
    args = parser.parse_args()
    for name in args.servers.split(","):
        asyncio.run(bench(name, args.runs.split(","), args.drain))


if __name__ == "__main__":
    main()
