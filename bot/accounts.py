"""Other users' services accounts, where messages carry no account tag.

The server tells the bot about the people it shares a channel with, and no
one else: who is there as it joins (NAMES, and WHOX with accounts), who
joins later and as whom (extended-join), who logs in or out
(account-notify), renames, parts, is kicked or quits.  So the Roster keeps
an account only while the bot shares a channel with that nick, and forgets
it as soon as it could miss a change: the nick parts or is kicked from the
last shared channel, or the bot leaves a channel (what it learnt only there
goes with it).  Anyone else's account is confirmed with WHOIS
(AccountLookup) before their command runs; otherwise whoever took a nick
after its owner left could pass for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from irc.client import Event, ServerConnection

from bot.registration import Handler

log = structlog.get_logger(__name__)

WHOX_TOKEN = "152"  # marks the bot's own WHO queries
LOOKUP_TIMEOUT = 30.0  # seconds for a WHOIS answer
LOOKUP_SPACING = 5.0  # seconds between two WHOIS for one connection: commands meanwhile share one
MAX_LOOKUPS = 50  # WHOIS queries waiting at once; past that, not confirmed

Fold = Callable[[str], str]


def account_name(value: str | None) -> str | None:
    """An account as servers write it: `*` (and WHOX's `0`) is none."""
    return None if value in (None, "", "*", "0") else value


class Roster:
    """The bot's channels, who is in them, and those nicks' accounts."""

    def __init__(self, fold: Fold, is_me: Callable[[str], bool]) -> None:
        self.fold = fold  # the server's casemapping
        self.is_me = is_me
        self._members: dict[str, set[str]] = {}  # channel -> nicks (folded)
        self._accounts: dict[str, str | None] = {}  # nick -> account; absent: not known

    def clear(self) -> None:
        self._members.clear()
        self._accounts.clear()

    @property
    def channels(self) -> set[str]:
        """The channels the bot is in (folded)."""
        return set(self._members)

    def shares(self, nick: str) -> bool:
        key = self.fold(nick)
        return any(key in members for members in self._members.values())

    def known(self, nick: str) -> bool:
        """Whether the bot can vouch for `nick`'s account (or its absence)."""
        return self.shares(nick) and self.fold(nick) in self._accounts

    def account(self, nick: str) -> str | None:
        return self._accounts.get(self.fold(nick)) if self.shares(nick) else None

    def nick_of(self, account: str) -> str | None:
        """A nick the bot shares a channel with that is logged in as
        `account` (folded), None if it sees none."""
        wanted = self.fold(account)
        return next(
            (n for n, a in sorted(self._accounts.items()) if a and self.fold(a) == wanted),
            None,
        )

    def set_account(self, nick: str, account: str | None) -> None:
        """What the server says `nick` is logged in as (only kept for members)."""
        if self.shares(nick):
            self._accounts[self.fold(nick)] = account_name(account)

    def add(self, channel: str, nick: str) -> None:
        self._members.setdefault(self.fold(channel), set()).add(self.fold(nick))

    def remove(self, channel: str, nick: str) -> None:
        """`nick` left `channel` (the bot itself: the whole channel)."""
        if self.is_me(nick):
            gone = self._members.pop(self.fold(channel), set())
        else:
            gone = {self.fold(nick)}
            self._members.get(self.fold(channel), set()).discard(self.fold(nick))
        for key in gone:
            if not self.shares(key):
                self._accounts.pop(key, None)

    def quit(self, nick: str) -> None:
        key = self.fold(nick)
        for members in self._members.values():
            members.discard(key)
        self._accounts.pop(key, None)

    def rename(self, old: str, new: str) -> None:
        before, after = self.fold(old), self.fold(new)
        for members in self._members.values():
            if before in members:
                members.discard(before)
                members.add(after)
        self._accounts.pop(after, None)
        if before in self._accounts:
            self._accounts[after] = self._accounts.pop(before)

    # --- the server's events ---------------------------------------------

    def handlers(self, extended_join: Callable[[], bool]) -> dict[str, Handler]:
        def on_join(connection: ServerConnection, event: Event) -> None:
            nick = event.source.nick
            if self.is_me(nick):
                self._members.setdefault(self.fold(event.target), set())
                return
            self.add(event.target, nick)
            if event.arguments and extended_join():
                self.set_account(nick, event.arguments[0])

        return {
            "join": on_join,
            "namreply": self._on_names,
            "whospcrpl": self._on_whox,
            "part": lambda c, e: self.remove(e.target, e.source.nick),
            "kick": lambda c, e: self.remove(e.target, e.arguments[0]) if e.arguments else None,
            "quit": lambda c, e: self.quit(e.source.nick),
            "nick": lambda c, e: self.rename(e.source.nick, e.target),
            "account": lambda c, e: self.set_account(e.source.nick, e.target),
        }

    def _on_names(self, connection: ServerConnection, event: Event) -> None:
        # 353 me = #channel :@op +voiced nick
        if len(event.arguments) < 3:
            return
        prefixes = "".join(connection.features.prefix) or "@+"
        for name in event.arguments[2].split():
            self.add(event.arguments[1], name.lstrip(prefixes))

    def _on_whox(self, connection: ServerConnection, event: Event) -> None:
        # 354 me TOKEN nick account ("0": not logged in), for WHO #channel %tna
        if len(event.arguments) == 3 and event.arguments[0] == WHOX_TOKEN:
            self.set_account(event.arguments[1], event.arguments[2])


@dataclass
class _Whois:
    """One WHOIS under way: what the server has said so far."""

    answer: asyncio.Future[tuple[str, str | None]]  # (user@host, account)
    userhost: str = ""
    account: str | None = None


class AccountLookup:
    """Confirms nicks' accounts with WHOIS: one query per nick at a time,
    and for one connection at most one every LOOKUP_SPACING seconds (the
    commands that come meanwhile wait for it), so that a flood of commands
    costs a WHOIS now and then, not one each.  Answers are not kept: the
    nick may change hands as soon as the answer is in."""

    def __init__(self, fold: Fold, send: Callable[[str, str], None]) -> None:
        self.fold = fold
        self.send = send  # queues a line to the server, on behalf of a (folded) nick
        self._pending: dict[str, _Whois] = {}
        self._next: dict[str, float] = {}  # connection -> when its next WHOIS may go

    def clear(self) -> None:
        """The connection is gone: nothing will answer, and the commands
        that waited are dropped (their senders were on that connection)."""
        for query in self._pending.values():
            query.answer.cancel()
        self._pending.clear()

    async def account(self, nick: str, userhost: str) -> str | None:
        """The account of the connection `userhost` that holds `nick`; None
        when it is not logged in, or the nick has changed hands meanwhile."""
        key = self.fold(nick)
        query = self._pending.get(key)
        if query is None:
            if len(self._pending) >= MAX_LOOKUPS:
                log.warning("too many account lookups, not confirmed", nick=nick)
                return None
            query = self._pending[key] = _Whois(asyncio.get_running_loop().create_future())
            self._schedule(key, nick, userhost.lower(), query)
        try:
            found, account = await asyncio.wait_for(asyncio.shield(query.answer), LOOKUP_TIMEOUT)
        except TimeoutError:
            log.warning("no WHOIS answer, not confirmed", nick=nick)
            if self._pending.get(key) is query:
                del self._pending[key]
            return None
        return account if found and found.lower() == userhost.lower() else None

    def _schedule(self, key: str, nick: str, connection: str, query: _Whois) -> None:
        """Send the WHOIS now, or when this connection may have another."""
        now = asyncio.get_running_loop().time()
        if len(self._next) > MAX_LOOKUPS:
            self._next = {c: t for c, t in self._next.items() if t > now}
        at = max(now, self._next.get(connection, now))
        self._next[connection] = at + LOOKUP_SPACING

        def ask() -> None:
            if self._pending.get(key) is query:  # not answered or given up meanwhile
                self.send(key, f"WHOIS {nick}")

        asyncio.get_running_loop().call_at(at, ask)

    def handlers(self) -> dict[str, Handler]:
        return {
            "whoisuser": self._on_user,
            "whoisaccount": self._on_account,
            "endofwhois": self._on_end,
            "nosuchnick": self._on_end,
        }

    def _query(self, event: Event) -> _Whois | None:
        return self._pending.get(self.fold(event.arguments[0])) if event.arguments else None

    def _on_user(self, connection: ServerConnection, event: Event) -> None:
        # 311 me nick user host * :real name
        query = self._query(event)
        if query is not None and len(event.arguments) >= 3:
            query.userhost = f"{event.arguments[1]}@{event.arguments[2]}"

    def _on_account(self, connection: ServerConnection, event: Event) -> None:
        # 330 me nick account :is logged in as
        query = self._query(event)
        if query is not None and len(event.arguments) >= 2:
            query.account = account_name(event.arguments[1])

    def _on_end(self, connection: ServerConnection, event: Event) -> None:
        # 318 me nick :End of /WHOIS (401 me nick :No such nick, for one gone)
        query = self._query(event)
        if query is not None:
            del self._pending[self.fold(event.arguments[0])]
            if not query.answer.done():
                query.answer.set_result((query.userhost, query.account))
