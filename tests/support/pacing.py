"""Probing the bot's pace: a player asks `!bfjoust-rank` while others load
the bot, and each wait is measured in seconds and in the bot's own lines
(tests/test_bot_flood.py, tests/test_bot_burst.py, bench/pacing.py)."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from bot.app import HillBot
from support.ircclient import IrcTestClient

GOAL = 2.0  # seconds: every probe should be answered within this (printed)
# what the tests assert, in the bot's lines from the moment an answer is
# queued to its last, included (a loaded machine stretches the seconds, not
# the turns): a player who asks while another floods is next (1), on the
# crowd's own host after one of the crowd's (2)
TURN = 2  # the median probe
BOUND = 3  # every probe
REPLY_GUARD = 60.0  # seconds: no answer by then is none (a failure guard, not a goal)
PROBES = 15
PROBE_EVERY = 1.0  # seconds between probes (within the prober's own command rate)
CONNECT_AT_ONCE = 10  # ngircd listens with a backlog of 10


Waits = list[tuple[float, int]]  # each answer's wait: seconds, and the bot's lines


async def probe(
    prober: IrcTestClient,
    hillbot: HillBot,
    targets: list[str],
    probes: int = PROBES,
) -> Waits:
    """The wait from each `!bfjoust-rank` to its answer, asked in turn in
    each of `targets` (a channel, or the bot in private)."""
    waits = []
    for i in range(probes):
        wait = Wait(hillbot, prober.nick)
        prober.say(targets[i % len(targets)], "!bfjoust-rank ann.rush")
        try:
            await prober.reply(hillbot.client.nick, "ann.rush: rank", timeout=REPLY_GUARD)
        except TimeoutError:
            raise NoAnswer(wait.story(prober, i)) from None
        waits.append(wait.over())
        await asyncio.sleep(PROBE_EVERY)
    return waits


class NoAnswer(AssertionError):
    """A probe had no answer within REPLY_GUARD seconds (what was known of
    it in the message)."""


class Wait:
    """A wait from now, for the answer to `nick`'s next command: in seconds
    from now, and in the lines the bot sends from the moment the answer is
    queued (what comes before is not the pacing's: the server reading the
    command, ngircd at its own pace, and the bot playing it; the burst may
    go out meanwhile)."""

    def __init__(self, hillbot: HillBot, nick: str) -> None:
        self.outbox, self.client = hillbot.client.outbox, hillbot.client
        self.started, self.queued = time.monotonic(), -1
        self.added = False  # whether the outbox took the answer
        self.add_text = self.outbox.add_text

        def add_text(*args: Any, recipient: str = "", **kwargs: Any) -> bool:
            if self.queued < 0 and recipient == nick:
                self.queued = self.outbox.backlog.sent
                self.added = self.add_text(*args, recipient=recipient, **kwargs)
                return self.added
            return self.add_text(*args, recipient=recipient, **kwargs)

        self.outbox.add_text = add_text  # type: ignore[method-assign]

    def story(self, prober: IrcTestClient, index: int) -> str:
        """What became of a probe with no answer, for the failure's message."""
        backlog = self.outbox.backlog
        if self.queued < 0:
            fate = "never queued"
        elif not self.added:
            fate = "the outbox had no room for it"
        else:
            waits = any(prober.nick in recipients for recipients in backlog._waiting.values())
            fate = f"queued {backlog.sent - self.queued} lines ago, " + (
                "still waiting" if waits else "sent or dropped since"
            )
        return (
            f"probe {index} had no answer in {REPLY_GUARD:.0f} s: {fate}; "
            f"{len(self.outbox)} lines wait, {backlog.sent} sent, "
            f"{self.client.connections} connection(s); "
            f"the prober's last lines: {[m.raw for m in prober.lines[-3:]]}"
        )

    def over(self) -> tuple[float, int]:
        del self.outbox.add_text  # the class's again
        assert self.queued >= 0, "no answer was queued"
        return time.monotonic() - self.started, self.outbox.backlog.sent - self.queued


def figures(what: str, waits: Waits) -> str:
    seconds = [s for s, _ in waits]
    return (
        f"{what}: {len(waits)} probes answered in "
        f"max {max(seconds):.2f} s, median {statistics.median(seconds):.2f} s "
        f"({', '.join(f'{s:.2f} s/{n}' for s, n in waits)} lines)"
    )


def most_lines(waits: Waits) -> int:
    return max(lines for _, lines in waits)


def median_lines(waits: Waits) -> float:
    return statistics.median(lines for _, lines in waits)


async def crowd_asks_help(port: int, host: str, count: int, nick: str) -> list[IrcTestClient]:
    """`count` new clients of `host` (each an ident of its own) connect and
    each asks the bot `nick` for `!bfjoust-help` once."""
    crowd: list[IrcTestClient] = []
    for start in range(0, count, CONNECT_AT_ONCE):
        crowd += await asyncio.gather(
            *(
                IrcTestClient(f"crowd{i}").connect(port, user=f"c{i}", host=host)
                for i in range(start, min(start + CONNECT_AT_ONCE, count))
            )
        )
    for client in crowd:
        client.say(nick, "!bfjoust-help")
    return crowd


def lines_from(nick: str, clients: list[IrcTestClient]) -> int:
    """The lines `clients` got from `nick`."""
    return sum(1 for c in clients for m in c.lines if m.nick == nick)
