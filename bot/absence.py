"""What the bot missed while it was away, read or said when it is back.

A line said in a channel while the bot restarts (or while its link to the
server is down) reaches nobody, and its speaker used to hear nothing at
all.  The bot keeps the last moment it knew it was listening (any line from
the server: a message, a join, the server's PING) in the data folder,
written at most every SAVE_SECONDS while lines come and at a clean stop.
Where the server keeps a channel's history (InspIRCd's chanhistory, as
`make run`'s server does: a `chathistory` batch of the lines said, each
with its time, when the bot joins), the commands said after that moment
are played once, in order (`said_while_away` tells bot.intake which lines
of the history to play), and answered as heard late; elsewhere the bot
says in the channel which span it missed, so anyone whose command fell in
it knows to say it again.

May import: bot.identity (message tags), hill.rules.events; nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path

from irc.client import Event, ServerConnection

from bot.identity import tag_value
from hill.rules.events import utcnow

SAVE_SECONDS = 5.0  # the last moment heard is written at most this often
WORTH_SAYING = dt.timedelta(seconds=2)  # a shorter gap is a reconnection nobody noticed
HISTORY_SECONDS = 1.0  # after its join, a channel's history has come if it comes


def _utc(stamp: str | None) -> dt.datetime | None:
    """An IRCv3 server-time (`2026-11-27T20:22:51.000Z`) as naive UTC."""
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def _shown(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


class Absence:
    """The moment the bot was last known to listen (naive UTC), kept in
    `path`; the history the server replays, read; the span it missed told to
    each channel it joins whose history it did not get (`say(channel, text)`)."""

    def __init__(
        self, path: Path | None, say: Callable[[str, str], None], is_me: Callable[[str], bool]
    ) -> None:
        """`path`: where the last moment heard is kept (None: nowhere)."""
        self.path = path
        self.say = say
        self.is_me = is_me
        self.since = self._read()  # away since then (None: nothing known)
        self.last = self.since  # the last moment heard
        self._told: set[str] = set()  # channels told of the present absence
        self._saving: asyncio.TimerHandle | None = None
        self._replays: dict[str, str] = {}  # open chathistory batches: id -> channel
        self._replayed: set[str] = set()  # channels whose history the server replayed
        # per batch, the lines of each second so far (history times are whole seconds)
        self._in_batch: dict[str, dict[dt.datetime, int]] = {}
        # channel -> the newest history line played: its second, and its place in that second
        self._read_up_to: dict[str, tuple[dt.datetime, int]] = {}

    def _read(self) -> dt.datetime | None:
        if self.path is None:
            return None
        try:
            moment = dt.datetime.fromisoformat(json.loads(self.path.read_text())["listening"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return moment.replace(tzinfo=None)  # naive UTC (an offset was written once: +00:00)

    def handlers(self) -> dict[str, Callable[[ServerConnection, Event], None]]:
        return {
            "all_raw_messages": lambda c, e: self.heard(),
            "join": self._on_join,
            "disconnect": lambda c, e: self.lost(),
            "batch": self._on_batch,
        }

    def heard(self) -> None:
        """A line from the server: the bot was listening now."""
        self.last = utcnow()
        if self._saving is None:
            self._saving = asyncio.get_running_loop().call_later(SAVE_SECONDS, self.save)

    def lost(self) -> None:
        """The link is down: away from the last moment heard."""
        self.since, self._told = self.last, set()
        self.save()

    def save(self) -> None:
        """Write the last moment heard (atomically: a crash leaves the old one)."""
        if self._saving is not None:
            self._saving.cancel()
            self._saving = None
        if self.last is None or self.path is None:
            return
        with contextlib.suppress(OSError):  # a full disk: the gap will be said wider
            partial = self.path.with_suffix(".partial")
            partial.write_text(json.dumps({"listening": self.last.isoformat()}))
            os.replace(partial, self.path)

    def _on_batch(self, connection: ServerConnection, event: Event) -> None:
        """`BATCH +id chathistory #channel` ... `BATCH -id`: a channel's
        history, replayed by the server as the bot joins."""
        words = [event.target or "", *event.arguments]
        if len(words) >= 3 and words[0].startswith("+") and words[1].endswith("chathistory"):
            self._replays[words[0][1:]] = words[2]
            self._in_batch[words[0][1:]] = {}
            self._replayed.add(words[2].lower())
        elif words[0].startswith("-"):
            self._replays.pop(words[0][1:], None)
            self._in_batch.pop(words[0][1:], None)

    def replaying(self, event: Event) -> bool:
        """Whether `event` is a line of a channel's history, replayed."""
        return tag_value(event.tags, "batch") in self._replays

    def said_while_away(self, event: Event) -> dt.datetime | None:
        """For a line of a channel's replayed history: when it was said, if
        the bot did not hear it (after the last moment it knew it listened,
        and not played already); None for any other line of the history."""
        batch = tag_value(event.tags, "batch") or ""
        channel = self._replays.get(batch)
        said = _utc(tag_value(event.tags, "time"))
        if channel is None or said is None or self.since is None:
            return None
        seconds = self._in_batch.setdefault(batch, {})
        seconds[said] = place = seconds.get(said, 0) + 1  # several lines may share a second
        newest = self._read_up_to.get(channel.lower())
        if said <= self.since or (newest is not None and (said, place) <= newest):
            return None
        self._read_up_to[channel.lower()] = (said, place)
        return said

    def _on_join(self, connection: ServerConnection, event: Event) -> None:
        channel = event.target
        if not self.is_me(event.source.nick) or self.since is None or channel in self._told:
            return
        self._told.add(channel)
        since, back = self.since, utcnow()
        if back - since >= WORTH_SAYING:  # said once the history (if any) has come
            loop = asyncio.get_running_loop()
            loop.call_later(HISTORY_SECONDS, self._tell, channel, since, back)

    def _tell(self, channel: str, since: dt.datetime, back: dt.datetime) -> None:
        span = f"I was away from {_shown(since)} to {_shown(back)} UTC"
        if channel.lower() in self._replayed:
            self.say(channel, f"{span}; the server kept what was said: I answer it now")
        else:
            self.say(
                channel, f"{span}: a command said then was not heard; if you said one, say it again"
            )
