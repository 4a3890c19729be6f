"""Who is speaking: nicks, services accounts, owners and admins.

On a network with accounts (the server offers IRCv3 account-tag or
account-notify) a program's owner is the sender's services account, and a
sender who is not logged in may only test: otherwise anyone could take a
logged-in player's nick and overwrite their programs.  Elsewhere the owner
is the nick.

IRC compares nicks (and services accounts) without case, by the server's
CASEMAPPING, so every comparison here folds case the same way; a sender is
mapped onto the spelling the hill already has for them, so one person always
owns programs under one name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from hill.errors import HillError
from hill.rules import names

ACCOUNT_CAPS = ("account-tag", "account-notify")
DEFAULT_CASEMAPPING = "rfc1459"  # what a server means when it says nothing

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_CASEMAPS = {
    "ascii": str.maketrans(_UPPER, _UPPER.lower()),
    # Scandinavian: [ ] \ are the capitals of { } |, and ~ of ^ (but not in strict)
    "rfc1459": str.maketrans(_UPPER + "[]\\~", _UPPER.lower() + "{}|^"),
    "strict-rfc1459": str.maketrans(_UPPER + "[]\\", _UPPER.lower() + "{}|"),
}


def casefold(text: str, casemapping: str = DEFAULT_CASEMAPPING) -> str:
    """`text` in lower case as the server's CASEMAPPING has it (an unknown
    mapping is taken as rfc1459, the default)."""
    return text.translate(_CASEMAPS.get(casemapping.lower(), _CASEMAPS[DEFAULT_CASEMAPPING]))


@dataclass(frozen=True)
class Sender:
    """The sender of a message, as far as the bot can vouch for them."""

    nick: str
    account: str | None  # None: not logged in (or not confirmed to be)
    accounts: bool  # the network has accounts
    userhost: str = ""  # user@host of the connection the message came from
    casemapping: str = DEFAULT_CASEMAPPING
    signed_in: bool = False  # proved [irc] admin_secret on this connection (bot/admins.py)

    def fold(self, text: str) -> str:
        return casefold(text, self.casemapping)

    @property
    def identity(self) -> str:
        """The account on a network with accounts, else the nick."""
        return (self.account or "") if self.accounts else self.nick

    @property
    def group(self) -> str:
        """Whose share of the hill a request takes: the account where there
        is one, else the host (`host_of`): the ident of `user@host` is the
        user's to choose, so one host may open many connections."""
        if self.account:
            return "account " + self.fold(self.account)
        if self.userhost:
            return "host " + host_of(self.userhost)
        return "nick " + self.fold(self.nick)

    @property
    def key(self) -> str:
        """Whose limits a request counts against: the account, else the
        connection (user@host), which a nick change does not reset."""
        if self.account:
            return "account " + self.fold(self.account)
        if self.userhost:
            return "connection " + self.userhost.lower()
        return "nick " + self.fold(self.nick)

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

    def same(self, one: str, other: str) -> bool:
        """Whether two nicks (or accounts) are the same to the server."""
        return self.fold(one) == self.fold(other)

    def spelling(self, owner: str, owners: Collection[str]) -> str:
        """`owner` as the hill already spells it (`owners`; an exact match
        first, for a hill that has several), else as given."""
        if owner in owners:
            return owner
        return next((known for known in sorted(owners) if self.same(known, owner)), owner)

    def is_admin(self, admins: Iterable[str]) -> bool:
        """On a network with accounts: an account of `admins`.  Elsewhere a
        nick is anyone's to take: the sender proved the operator's secret on
        this connection (bot/admins.py), and is one of `admins` if any are named."""
        admins = tuple(admins)
        if self.accounts:
            return bool(self.account) and any(self.same(self.account or "", a) for a in admins)
        listed = not admins or any(self.same(self.nick, a) for a in admins)
        return self.signed_in and listed


def host_of(userhost: str) -> str:
    """The host of `user@host`, in lower case, as what one machine or one
    subscriber holds: an IPv6 address stands for its /64 (one subscriber's
    network, where any number of addresses is as easy to take as idents)."""
    host = userhost.rpartition("@")[2].lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # a name, or a cloak
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def tag_value(tags: list[dict[str, str | None]] | None, key: str) -> str | None:
    """A message tag's value (IRCv3 message tags, as parsed by `irc`)."""
    for tag in tags or ():
        if tag["key"] == key:
            return tag["value"]
    return None
