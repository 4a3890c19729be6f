"""Commands coming in: who sent them, and whether to look at them at all.

In a channel only messages that start with the command prefix are for the
bot; in private, every message is (one without a command is answered with
how to use the bot).  Each
connection (user@host, which a nick change does not reset) passes a gate
first: `command_burst` commands at once, then `commands_per_minute`; the
rest are ignored without an answer, so that a flood costs the bot nothing
and delays no one else.  Then the sender's account, on a network with
accounts: the message's account tag where the server offers it, else what
the Roster knows of a nick the bot shares a channel with, else the answer
to a WHOIS: commands that need the account (those that change the hill)
await `Incoming.vouched()`, and only they cost a WHOIS.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

import structlog
from irc.client import Event, ServerConnection

from bot.absence import Absence
from bot.accounts import AccountLookup, Roster
from bot.admins import AdminLogins
from bot.connection import ServerLink
from bot.identity import Sender, tag_value
from bot.pastes import PasteJoiner, relayed_length
from bot.registration import Handler
from bot.throttle import CommandGate
from hill.rules.events import utcnow

log = structlog.get_logger(__name__)


def near_prefix(word: str, prefix: str) -> bool:
    """Whether `word` (before any '-') is the command prefix mistyped:
    `!bfjoustt`, `!bfjust`, `!BFjoust` ... (not the prefix itself)."""
    head = word.partition("-")[0].lower()
    prefix = prefix.lower()
    if head[:1] != prefix[:1] or head == prefix:  # `!` first, as anyone typing a command
        return False
    return difflib.SequenceMatcher(None, head, prefix).ratio() >= 0.88


@dataclass(frozen=True)
class Incoming:
    """A message to the bot: in a channel (channel set) or in private."""

    sender: Sender
    channel: str | None
    text: str
    # the sender with a confirmed account, where it is not confirmed yet
    confirm: Callable[[], Awaitable[Sender]] | None = None
    # when the bot heard it (naive UTC): a contest's entry counts if heard before the close
    heard: dt.datetime = field(default_factory=utcnow)
    # said while the bot was away, read from the server's history: `heard` is when it was said
    late: bool = False

    async def vouched(self) -> Incoming:
        """This message with its sender's account confirmed (by WHOIS, where
        the bot cannot see them); until then the sender counts as not
        logged in."""
        if self.confirm is None:
            return self
        return replace(self, sender=await self.confirm(), confirm=None)


class Intake:
    """Turns the server's messages into `Incoming` commands for `on_message`."""

    def __init__(
        self,
        link: ServerLink,
        roster: Roster,
        lookup: AccountLookup,
        admins: AdminLogins,
        absence: Absence,
        on_message: Callable[[Incoming], None],
        tell: Callable[[Incoming, str], None],
        refuse: Callable[[Incoming, str], None],
    ) -> None:
        self.link = link
        self.roster = roster
        self.lookup = lookup
        self.admins = admins
        self.absence = absence
        self.on_message = on_message
        self.prefix = link.settings.command.lower()
        # the commands whose third word on is a program (which a client may cut)
        self.program_words = {self.prefix + s for s in ("", "-test", "-enter")}
        self.pastes = PasteJoiner(link.settings.command, on_message, tell, refuse)
        self.gate = CommandGate(link.settings.commands_per_minute / 60, link.settings.command_burst)

    def handlers(self) -> dict[str, Handler]:
        return {"pubmsg": self._on_message, "privmsg": self._on_message}

    def whole(self, connection: ServerConnection, event: Event) -> None:
        """A message known whole (a multiline batch put together, bot.client):
        no client cut it, so it is never held for a continuation."""
        self._on_message(connection, event, whole=True)

    @staticmethod
    def _length(event: Event, text: str) -> int:
        """The line as the server relayed it, in bytes (bot.pastes)."""
        return relayed_length(str(event.source), "PRIVMSG", event.target, text)

    def is_command(self, text: str) -> bool:
        """Whether `text` is meant for the bot: it starts with the prefix, in
        any case, or with the prefix mistyped (`!bfjust`: told the command meant)."""
        stripped = text.lstrip()
        if stripped[: len(self.prefix)].lower() == self.prefix:
            return True
        first = stripped.split(maxsplit=1)
        return bool(first) and near_prefix(first[0], self.prefix)

    def _on_message(self, connection: ServerConnection, event: Event, whole: bool = False) -> None:
        nick, text = event.source.nick, (event.arguments or [""])[0]
        private = event.type == "privmsg"  # anything said to the bot is for it
        if not nick or self.link.is_me(nick):
            return
        late = None
        if self.absence.replaying(event):  # the channel's history, replayed as the bot joins
            late = self.absence.said_while_away(event)
            if late is None:
                return  # heard when it was said, or too old
        userhost = f"{event.source.user}@{event.source.host}"
        # a program a client cut into several lines (bot.pastes): the rest follows
        slot = (f"{self.link.fold(nick)}!{userhost.lower()}", "" if private else event.target)
        if self.pastes.holding(slot):
            if not (whole or self.is_command(text)):
                self.pastes.continues(slot, text, self._length(event, text))
                return
            self.pastes.end(slot)
        if not (private or self.is_command(text)):
            return
        if not self.gate.admit(userhost.lower()):
            if self.gate.ignored[userhost.lower()] == 1:  # once, not once a line
                log.warning("too many commands: ignoring them", nick=nick, userhost=userhost)
            return
        channel = None if private else event.target
        registration = self.link.registration

        signed_in = self.admins.holds(nick, userhost)

        def sender(account: str | None) -> Sender:
            accounts = registration.has_accounts
            return Sender(nick, account, accounts, userhost, self.link.casemapping, signed_in)

        async def confirm() -> Sender:
            return sender(await self.lookup.account(nick, userhost))

        if not registration.has_accounts:
            message = Incoming(sender(None), channel, text)
        elif "account-tag" in registration.enabled:
            message = Incoming(sender(tag_value(event.tags, "account")), channel, text)
        elif "account-notify" in registration.enabled and self.roster.known(nick):
            message = Incoming(sender(self.roster.account(nick)), channel, text)
        else:  # someone the bot cannot see: the server is asked when it matters
            message = Incoming(sender(None), channel, text, confirm)
        if late is not None:
            message = replace(message, heard=late, late=True)
        words = text.split(maxsplit=2)
        brings_code = bool(words) and words[0].lower() in self.program_words and len(words) >= 2
        code = words[2] if len(words) == 3 else ""
        may_be_cut = brings_code and not whole
        if not (may_be_cut and self.pastes.offer(message, slot, code, self._length(event, text))):
            self.on_message(message)
