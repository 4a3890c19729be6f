"""What the bot missed while it was away, said when it is back.

A line said in a channel while the bot restarts (or while its link to the
server is down) reaches nobody, and its speaker used to hear nothing at
all.  The bot keeps the last moment it knew it was listening (any line from
the server: a message, a join, the server's PING) in the data folder,
written at most every SAVE_SECONDS while lines come and at a clean stop;
when it joins a channel again it says there which span it missed, so
anyone whose command fell in it knows to say it again.

May import: nothing of the bot or the hill (the irc library's events alone).
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

SAVE_SECONDS = 5.0  # the last moment heard is written at most this often
WORTH_SAYING = dt.timedelta(seconds=2)  # a shorter gap is a reconnection nobody noticed


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _shown(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


class Absence:
    """The moment the bot was last known to listen, kept in `path`; the
    span it missed told to each channel it joins (`say(channel, text)`)."""

    def __init__(
        self, path: Path, say: Callable[[str, str], None], is_me: Callable[[str], bool]
    ) -> None:
        self.path = path
        self.say = say
        self.is_me = is_me
        self.since = self._read()  # away since then (None: nothing known)
        self.last = self.since  # the last moment heard
        self._told: set[str] = set()  # channels told of the present absence
        self._saving: asyncio.TimerHandle | None = None

    def _read(self) -> dt.datetime | None:
        try:
            return dt.datetime.fromisoformat(json.loads(self.path.read_text())["listening"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def handlers(self) -> dict[str, Callable[[ServerConnection, Event], None]]:
        return {
            "all_raw_messages": lambda c, e: self.heard(),
            "join": self._on_join,
            "disconnect": lambda c, e: self.lost(),
        }

    def heard(self) -> None:
        """A line from the server: the bot was listening now."""
        self.last = _now()
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
        if self.last is None:
            return
        with contextlib.suppress(OSError):  # a full disk: the gap will be said wider
            partial = self.path.with_suffix(".partial")
            partial.write_text(json.dumps({"listening": self.last.isoformat()}))
            os.replace(partial, self.path)

    def _on_join(self, connection: ServerConnection, event: Event) -> None:
        channel = event.target
        if not self.is_me(event.source.nick) or self.since is None or channel in self._told:
            return
        self._told.add(channel)
        back = _now()
        if back - self.since >= WORTH_SAYING:
            self.say(
                channel,
                f"I was away from {_shown(self.since)} to {_shown(back)} UTC: a command said "
                "then was not heard; if you said one, say it again",
            )
