"""Commands coming in: who sent them, and whether to look at them at all.

Only messages that start with the command prefix are for the bot.  Each
connection (user@host, which a nick change does not reset) passes a gate
first: `command_burst` commands at once, then `commands_per_minute`; the
rest are ignored without an answer, so that a flood costs the bot nothing
and delays no one else.  Then the sender's account, on a network with
accounts: the message's account tag where the server offers it, else what
the Roster knows of a nick the bot shares a channel with, else the answer
to a WHOIS, awaited before the command runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog
from irc.client import Event, ServerConnection

from bot.accounts import AccountLookup, Roster
from bot.connection import ServerLink
from bot.identity import Sender, tag_value
from bot.registration import Handler
from bot.throttle import CommandGate

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Incoming:
    """A message to the bot: in a channel (channel set) or in private."""

    sender: Sender
    channel: str | None
    text: str


class Intake:
    """Turns the server's messages into `Incoming` commands for `on_message`."""

    def __init__(
        self,
        link: ServerLink,
        roster: Roster,
        lookup: AccountLookup,
        on_message: Callable[[Incoming], None],
    ) -> None:
        self.link = link
        self.roster = roster
        self.lookup = lookup
        self.on_message = on_message
        self.prefix = link.settings.command.lower()
        self.gate = CommandGate(link.settings.commands_per_minute / 60, link.settings.command_burst)

    def handlers(self) -> dict[str, Handler]:
        return {"pubmsg": self._on_message, "privmsg": self._on_message}

    def is_command(self, text: str) -> bool:
        """Whether `text` is meant for the bot: it starts with the prefix, in any case."""
        return text.lstrip()[: len(self.prefix)].lower() == self.prefix

    def _on_message(self, connection: ServerConnection, event: Event) -> None:
        nick, text = event.source.nick, (event.arguments or [""])[0]
        if not nick or self.link.is_me(nick) or not self.is_command(text):
            return
        userhost = f"{event.source.user}@{event.source.host}"
        if not self.gate.admit(userhost.lower()):
            log.info("command ignored: too many", nick=nick, userhost=userhost)
            return
        channel = event.target if event.type == "pubmsg" else None
        registration = self.link.registration

        def deliver(account: str | None) -> None:
            accounts = registration.has_accounts
            sender = Sender(nick, account, accounts, userhost, self.link.casemapping)
            self.on_message(Incoming(sender, channel, text))

        if not registration.has_accounts:
            deliver(None)
        elif "account-tag" in registration.enabled:
            deliver(tag_value(event.tags, "account"))
        elif "account-notify" in registration.enabled and self.roster.known(nick):
            deliver(self.roster.account(nick))
        else:  # someone the bot cannot see: ask the server, then deliver
            self.link.spawn(self._confirmed(nick, userhost, deliver))

    async def _confirmed(
        self, nick: str, userhost: str, deliver: Callable[[str | None], None]
    ) -> None:
        deliver(await self.lookup.account(nick, userhost))
