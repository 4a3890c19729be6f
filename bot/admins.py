"""Admins on a network without accounts: a secret only the operator holds.

Where services accounts vouch for people, an admin is one of `[irc] admins`'
accounts (bot/identity.py).  Elsewhere a nick is anyone's to take: whoever
took `root_admin` (or `ROOT_ADMIN`, the same nick to the server) the moment
the admin changed nick or left had the admin's rights.  So on such a
network the admin proves `[irc] admin_secret` in private
(`/msg BOT !bfjoust-admin SECRET`) and is the hill's admin on that
connection (nick and user@host) until that nick changes or quits where the
bot sees it, or `LOGIN_HOURS` pass, whichever comes first.

May import: nothing of the bot or the hill (the irc library's events alone).
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass

from irc.client import Event, ServerConnection

LOGIN_HOURS = 12.0
TRIES = 5  # wrong secrets from one connection before it must wait
TRY_AGAIN_SECONDS = 600.0


@dataclass
class _Login:
    userhost: str
    until: float


class AdminLogins:
    """Who proved the admin secret, on which connection; revoked when the
    nick changes or quits (the bot sees that in the channels it shares)."""

    def __init__(self, secret: str, fold: Callable[[str], str]) -> None:
        self.secret = secret
        self.fold = fold
        self._logins: dict[str, _Login] = {}  # folded nick -> its login
        self._wrong: dict[str, tuple[int, float]] = {}  # userhost -> (wrong tries, since)

    def holds(self, nick: str, userhost: str) -> bool:
        login = self._logins.get(self.fold(nick))
        if login is None or login.userhost != userhost.lower():
            return False
        if time.monotonic() >= login.until:
            del self._logins[self.fold(nick)]
            return False
        return True

    def try_secret(self, nick: str, userhost: str, given: str) -> str:
        """The answer to a login with `given`; grants it when it is the secret."""
        if not self.secret:
            return "no admin secret is set ([irc] admin_secret): this hill has no admin on IRC"
        key = userhost.lower()
        wrong, since = self._wrong.get(key, (0, 0.0))
        now = time.monotonic()
        if wrong >= TRIES and now - since < TRY_AGAIN_SECONDS:
            minutes = TRY_AGAIN_SECONDS / 60
            return f"too many wrong secrets from your connection: try again in {minutes:.0f} min"
        if not hmac.compare_digest(given.encode(), self.secret.encode()):
            self._wrong[key] = (1 if wrong >= TRIES else wrong + 1, now)
            return "that is not the admin secret"
        self._wrong.pop(key, None)
        self._logins[self.fold(nick)] = _Login(key, now + LOGIN_HOURS * 3600)
        return (
            f"you are the hill's admin as {nick} on this connection until you change nick "
            f"or quit, or for {LOGIN_HOURS:g} hours"
        )

    def revoke(self, nick: str) -> None:
        self._logins.pop(self.fold(nick), None)

    def handlers(self) -> dict[str, Callable[[ServerConnection, Event], None]]:
        return {
            "nick": lambda c, e: self.revoke(e.source.nick),
            "quit": lambda c, e: self.revoke(e.source.nick),
        }
