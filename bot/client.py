"""The bot's IRC client: the pieces of the connection put together, the
channels it sits in, and the way answers go out.

The pieces, one concern each: bot.connection (connecting, staying
connected, the nick), bot.registration (CAP and SASL), bot.accounts (other
users' accounts where messages carry no account tag), bot.intake (which
messages are commands, the per-connection gate, the sender's account) and
bot.outbox (everything the bot says, paced as the server counts it, in
bot.penalty; what waits, in bot.backlog, in fair turns between hosts
and recipients).  Answers
wait in the outbox across disconnections and go out once the bot is back
in its channels.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import structlog
from irc.client import Event, ServerConnection, is_channel

from bot.absence import Absence
from bot.accounts import WHOX_TOKEN, AccountLookup, Roster
from bot.admins import AdminLogins
from bot.backlog import Kind
from bot.connection import ServerLink
from bot.identity import host_of, tag_value
from bot.intake import Incoming, Intake
from bot.outbox import Outbox
from bot.pastes import CONCAT, MULTILINE, Multiline
from bot.registration import WANTED_CAPS, Handler
from bot.text import fallback_source, text_budget
from hill.config import IrcSettings
from hill.rules.events import epoch_seconds

__all__ = ["Incoming", "IrcClient"]

log = structlog.get_logger(__name__)

REJOIN_DELAY = 2.0  # after a kick
BANNED_RETRY = 60.0  # after a refused join (ban, invite-only, full, key)
JOIN_WAIT = 5.0  # longest wait for joins before replies go out anyway
JOIN_REFUSALS = ("bannedfromchan", "inviteonlychan", "channelisfull", "badchannelkey")


class IrcClient:
    """The bot on one server: `run()` until `stop()`; `say()` and `reply()`."""

    def __init__(
        self,
        settings: IrcSettings,
        on_message: Callable[[Incoming], None],
        wanted_caps: tuple[str, ...] = (*WANTED_CAPS, MULTILINE),
        heard_path: Path | None = None,
    ) -> None:
        """`heard_path`: where the last moment the bot was known to listen is
        kept (bot.absence; None: nowhere)."""
        self.settings = settings
        self.link = ServerLink(settings, wanted_caps, self._on_connect)
        self.outbox = Outbox(self.link.meter)
        self.roster = Roster(self.link.fold, self.link.is_me)
        self.lookup = AccountLookup(self.link.fold, self.outbox.query)
        self.on_message = on_message
        self.admins = AdminLogins(settings.admin_secret, self.link.fold)
        # what it missed while away: read from the server's history, or said (bot.absence)
        self.absence = Absence(
            heard_path, lambda channel, text: self.say(channel, text), self.link.is_me
        )
        self.intake = Intake(
            self.link,
            self.roster,
            self.lookup,
            self.admins,
            self.absence,
            self._heard,
            tell=lambda message, text: self.reply(message, text),
            refuse=lambda message, text: self.reply(message, text, refusal=True),
        )
        self.ready = False  # registered and joined: replies may go out
        # the summary channel is joined too: a channel may refuse outsiders' messages
        wanted = (*settings.channels, settings.summary_channel)
        self.channels = tuple(dict.fromkeys(c for c in wanted if c))
        # the roster first: the handlers after it read what it knows
        self.link.add_handlers(self.roster.handlers(self._extended_join))
        self.link.add_handlers(self.lookup.handlers())
        self.link.add_handlers(self.admins.handlers())
        self.link.add_handlers(self.absence.handlers())
        # draft/multiline batches, put together before the intake
        self.multiline = MultilineMessages(self.intake)
        self.link.add_handlers(self.multiline.handlers())
        self.link.add_handlers(self._handlers())

    # --- what the rest of the bot (and the tests) read ---------------------

    @property
    def connection(self) -> ServerConnection:
        return self.link.connection

    @property
    def connections(self) -> int:
        return self.link.connections

    @property
    def nick(self) -> str:
        return self.link.nick

    @property
    def enabled(self) -> set[str]:
        return self.link.registration.enabled

    @property
    def has_accounts(self) -> bool:
        return self.link.registration.has_accounts

    @property
    def account(self) -> str | None:
        """The bot's own services account."""
        return self.link.registration.account

    def online(self, owner: str) -> str | None:
        """A nick in the bot's channels that is `owner` (the nick itself on a
        network without accounts, a nick logged in as that account on one
        with them), None if it sees none."""
        if not self.has_accounts:
            return owner if self.roster.shares(owner) else None
        return self.roster.nick_of(owner)

    def _extended_join(self) -> bool:
        return "extended-join" in self.enabled

    @property
    def joined(self) -> set[str]:
        """The channels the bot is in (folded)."""
        return self.roster.channels

    # --- running -----------------------------------------------------------

    async def run(self) -> None:
        """Stay connected until stop(), sending what the outbox holds."""
        sender = self.link.spawn(self.outbox.run(self._can_send, self.link.raw))
        try:
            await self.link.run()
        finally:
            sender.cancel()

    async def stop(self, message: str = "the hill is closing") -> None:
        await self.link.stop(message)

    def _on_connect(self) -> None:
        """A new connection: what the bot knew of the last one is gone."""
        self.ready = False
        self.roster.clear()
        self.lookup.clear()
        self.multiline.batches.clear()
        self.outbox.backlog.forget_queries()

    def _can_send(self) -> bool:
        return self.ready and self.link.is_connected()

    def _set_ready(self) -> None:
        if not self.ready and self.link.registration.registered:
            self.ready = True
            log.info("ready", nick=self.nick, joined=sorted(self.joined), queued=len(self.outbox))
            self.outbox.wakeup.set()

    def _heard(self, message: Incoming) -> None:
        """A command: its sender's answers will wait in their host's turn."""
        sender = message.sender
        if sender.userhost:
            self.outbox.backlog.locate(self.link.fold(sender.nick), host_of(sender.userhost))
        self.on_message(message)

    # --- what the bot says -------------------------------------------------

    def say(
        self,
        target: str,
        text: str | list[str],
        *,
        notice: bool = False,
        prefix: str = "",
        recipient: str = "",
        refusal: bool = False,
        on_sent: Callable[[], None] | None = None,
        asked: float | None = None,
    ) -> None:
        """Queue `prefix + text` for `target`, in as many lines as it takes
        (a list: paragraphs of one answer, each from a line of its own: they
        wait and give way together, bot.backlog); `recipient` is whom it is
        for (the outbox takes turns between them; default: the target),
        `refusal` marks an error or a limit (it gives way first when the
        outbox is full, and is dropped if it waits too long), `on_sent` is
        called once the last line is written to the server, and `asked` is
        when the request it answers was heard (time.time(); default: now)."""
        command = "NOTICE" if notice else "PRIVMSG"
        source = self.link.source or fallback_source(self.nick, self.settings.username)
        self.outbox.add_text(
            command,
            target,
            text,
            budget=text_budget(source, command, target),
            prefix=prefix,
            kind=Kind.REFUSAL if refusal else Kind.ANSWER,
            recipient=recipient,
            on_sent=on_sent,
            asked=asked,
        )

    def reply(
        self,
        message: Incoming,
        text: str | list[str],
        *,
        refusal: bool = False,
        on_sent: Callable[[], None] | None = None,
    ) -> None:
        """Answer in the channel, addressed to the sender, or in private by
        NOTICE (one heard late, from the server's history, says so); see
        say() for `refusal` and `on_sent`."""
        sender = message.sender
        if message.late:
            late = f"(heard late: you said it at {message.heard:%H:%M:%S} UTC) "
            text = late + text if isinstance(text, str) else [late + text[0], *text[1:]]
        self.say(
            message.channel or sender.nick,
            text,
            notice=not message.channel,
            prefix=f"{sender.nick}: " if message.channel else "",
            recipient=self.link.fold(sender.nick),  # the runner answers by nick too
            refusal=refusal,
            on_sent=on_sent,
            asked=epoch_seconds(message.heard),
        )

    # --- channels ----------------------------------------------------------

    def _handlers(self) -> dict[str, Handler]:
        return {
            "welcome": self._on_welcome,
            "join": self._on_join,
            "kick": self._on_kick,
            **{refusal: self._on_join_refused for refusal in JOIN_REFUSALS},
            "disconnect": self._on_disconnect,
        }

    def _on_welcome(self, connection: ServerConnection, event: Event) -> None:
        caps = sorted(self.enabled)
        log.info("registered", nick=self.nick, accounts=self.has_accounts, caps=caps)
        for channel in self.channels:
            self.link.send(f"JOIN {channel}")
        self.link.later(JOIN_WAIT, self._set_ready)

    def _on_join(self, connection: ServerConnection, event: Event) -> None:
        if not self.link.is_me(event.source.nick):
            return
        self.link.source = str(event.source)
        log.info("joined", channel=event.target)
        if self.has_accounts and "account-tag" not in self.enabled and self.link.whox:
            # who was already there, logged in as whom (later changes: account-notify)
            self.link.send(f"WHO {event.target} %tna,{WHOX_TOKEN}")
        if all(self.link.fold(c) in self.joined for c in self.channels):
            self._set_ready()

    def _on_kick(self, connection: ServerConnection, event: Event) -> None:
        if event.arguments and self.link.is_me(event.arguments[0]):
            channel = event.target
            log.warning("kicked", channel=channel, by=event.source.nick, reason=event.arguments[1:])
            self.link.later(REJOIN_DELAY, lambda: self.link.send(f"JOIN {channel}"))

    def _on_join_refused(self, connection: ServerConnection, event: Event) -> None:
        channel = event.arguments[0] if event.arguments else ""
        log.warning("cannot join", channel=channel, reason=event.type)
        if channel in self.channels:
            self.link.later(BANNED_RETRY, lambda: self.link.send(f"JOIN {channel}"))

    def _on_disconnect(self, connection: ServerConnection, event: Event) -> None:
        self.ready = False
        self.lookup.clear()


class MultilineMessages:
    """The intake's handlers, with the lines of an IRCv3 `draft/multiline`
    batch held back (bot.pastes.Multiline) and handed on as one message,
    known whole, once the batch ends."""

    def __init__(self, intake: Intake) -> None:
        self.intake = intake
        self.passed = intake.handlers()  # what a message outside any multiline batch goes to
        self.batches = Multiline()

    def handlers(self) -> dict[str, Handler]:
        return {**dict.fromkeys(self.passed, self._on_message), "batch": self._on_batch}

    def _on_message(self, connection: ServerConnection, event: Event) -> None:
        ref = tag_value(event.tags, "batch")
        if ref is None or not self.batches.holds(ref):
            self.passed[event.type](connection, event)
            return
        concat = any(tag["key"] == CONCAT for tag in event.tags or ())
        self.batches.add(ref, (event.arguments or [""])[0], concat)

    def _on_batch(self, connection: ServerConnection, event: Event) -> None:
        """`BATCH +ref draft/multiline TARGET` opens one, `BATCH -ref` ends
        it: its text goes to the intake as one message, with the opening
        line's source and tags (its time, its sender's account, an
        enclosing batch)."""
        ref, arguments = event.target or "", event.arguments
        if ref.startswith("+") and len(arguments) >= 2 and arguments[0] == MULTILINE:
            self.batches.open(ref[1:], arguments[1], event)
        elif ref.startswith("-") and (ended := self.batches.close(ref[1:])) is not None:
            target, opening, text = ended
            kind = "pubmsg" if is_channel(target) else "privmsg"
            self.intake.whole(connection, Event(kind, opening.source, target, [text], opening.tags))
