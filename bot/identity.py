"""Who is speaking: nicks, services accounts, owners and admins.

On a network with accounts (the server offers IRCv3 account-tag or
account-notify) a program's owner is the sender's services account, and a
sender who is not logged in may only test: otherwise anyone could take a
logged-in player's nick and overwrite their programs.  Elsewhere the owner
is the nick.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hill import names
from hill.errors import HillError

ACCOUNT_CAPS = ("account-tag", "account-notify")


@dataclass(frozen=True)
class Sender:
    nick: str
    account: str | None  # None: not logged in (or not known to be)
    accounts: bool  # the network has accounts

    @property
    def identity(self) -> str:
        """The account on a network with accounts, else the nick."""
        return (self.account or "") if self.accounts else self.nick

    def owner(self, name: str) -> str:
        """The owner of this sender's program `name`, for a hill change;
        raises HillError (meant for the player) when they may not have one."""
        if self.accounts and self.account is None:
            raise HillError(
                "log in to your services account (NickServ) to change the hill; "
                "testing works without"
            )
        names.check(self.identity, name)
        return self.identity

    def tester(self, name: str) -> str:
        """The owner a test runs under: anyone may test."""
        owner = self.identity or self.nick
        names.check(owner, name)
        return owner

    def is_admin(self, admins: Iterable[str]) -> bool:
        identity = self.identity.lower()
        return bool(identity) and identity in {a.lower() for a in admins}


class AccountTracker:
    """Accounts of the nicks the bot has seen, from extended-join and
    account-notify, for servers that do not tag messages (account-tag)."""

    def __init__(self) -> None:
        self._accounts: dict[str, str | None] = {}

    def clear(self) -> None:
        self._accounts.clear()

    def set(self, nick: str, account: str | None) -> None:
        self._accounts[nick.lower()] = None if account in (None, "*", "0") else account

    def renamed(self, old: str, new: str) -> None:
        self._accounts[new.lower()] = self._accounts.pop(old.lower(), None)

    def forget(self, nick: str) -> None:
        self._accounts.pop(nick.lower(), None)

    def get(self, nick: str) -> str | None:
        return self._accounts.get(nick.lower())


def tag_value(tags: list[dict[str, str | None]] | None, key: str) -> str | None:
    """A message tag's value (IRCv3 message tags, as parsed by `irc`)."""
    for tag in tags or ():
        if tag["key"] == key:
            return tag["value"]
    return None
