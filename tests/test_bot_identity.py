"""Who is speaking, as plain data: case folding by CASEMAPPING, owners'
spellings, whose limits a request counts against, and what the Roster
remembers of the nicks the bot shares a channel with (hand-worked cases)."""

from __future__ import annotations

from bot.accounts import Roster
from bot.identity import Sender, casefold


def test_casefold_by_casemapping() -> None:
    assert casefold("Nick[A]\\~") == "nick{a}|^"  # rfc1459, the default
    assert casefold("Nick[A]\\~", "rfc1459") == "nick{a}|^"
    assert casefold("Nick[A]\\~", "strict-rfc1459") == "nick{a}|~"
    assert casefold("Nick[A]\\~", "ascii") == "nick[a]\\~"
    assert casefold("Nick[A]", "RFC1459") == "nick{a}"
    assert casefold("ÉLAN", "ascii") == "Élan"  # ASCII letters only
    assert casefold("Nick[A]", "rfc7613") == "nick{a}"  # unknown: the default


def test_a_sender_gets_the_spelling_the_hill_has() -> None:
    carol = Sender("CAROL", None, False, "~carol@host")
    assert carol.spelling("CAROL", {"carol", "bob"}) == "carol"
    assert carol.spelling("CAROL", {"CAROL", "carol"}) == "CAROL"  # exact first
    assert carol.spelling("CAROL", {"bob"}) == "CAROL"  # new: as given
    braces = Sender("{x}", None, False)
    assert braces.spelling("{x}", {"[X]"}) == "[X]"  # the same nick in rfc1459
    ascii_braces = Sender("{x}", None, False, casemapping="ascii")
    assert ascii_braces.spelling("{x}", {"[X]"}) == "{x}"


def test_limits_follow_the_account_else_the_connection() -> None:
    assert Sender("mallory", None, False, "~m@host").key == "connection ~m@host"
    assert Sender("mallory2", None, False, "~m@HOST").key == "connection ~m@host"  # NICK
    assert Sender("ann", "Ann", True, "~a@host").key == "account ann"
    assert Sender("ann_", "ANN", True, "~x@elsewhere").key == "account ann"
    assert Sender("ann", None, True, "").key == "nick ann"


def test_shares_follow_the_account_else_the_host() -> None:
    assert Sender("m1", None, False, "~m1@10.0.0.1").group == "host 10.0.0.1"
    assert Sender("m2", None, False, "~other@10.0.0.1").group == "host 10.0.0.1"  # any ident
    assert Sender("ann", "Ann", True, "~a@10.0.0.1").group == "account ann"
    assert Sender("v6", None, False, "x@2001:DB8::5").group == "host 2001:db8::/64"
    assert Sender("v6b", None, False, "y@2001:db8::ffff:1").group == "host 2001:db8::/64"
    assert Sender("v4", None, False, "x@::ffff:10.0.0.1").group == "host 10.0.0.1"
    assert Sender("c", None, False, "x@User/Carol").group == "host user/carol"  # a cloak


def test_admins_and_same_fold_case() -> None:
    # without accounts a nick is anyone's: the operator's secret proved on this connection
    assert not Sender("Carol", None, False).is_admin(["carol"])
    assert Sender("Carol", None, False, signed_in=True).is_admin(["carol"])
    assert Sender("[op]", None, False, signed_in=True).is_admin(["{OP}"])
    assert not Sender("mallory", None, False, signed_in=True).is_admin(["carol"])
    assert Sender("anyone", None, False, signed_in=True).is_admin([])  # the secret alone
    assert not Sender("carol", None, True).is_admin(["carol"])  # not logged in
    assert Sender("x", "Carol", True).is_admin(["CAROL"])
    assert not Sender("carol", None, True, signed_in=True).is_admin(["carol"])


def _roster() -> Roster:
    return Roster(casefold, lambda nick: casefold(nick) == "hillbot")


def test_the_roster_trusts_only_nicks_in_a_shared_channel() -> None:
    roster = _roster()
    roster.add("#a", "hillbot")
    roster.add("#a", "Alice")
    assert roster.shares("alice") and not roster.known("alice")  # no account said yet
    roster.set_account("ALICE", "alice")
    assert roster.known("alice") and roster.account("alice") == "alice"
    roster.set_account("stranger", "bob")  # not in a channel: not kept
    assert not roster.known("stranger") and roster.account("stranger") is None
    roster.set_account("alice", "*")  # logged out
    assert roster.known("alice") and roster.account("alice") is None


def test_the_roster_forgets_what_it_can_no_longer_see() -> None:
    roster = _roster()
    for channel, nick, account in (
        ("#a", "alice", "alice"),
        ("#b", "alice", "alice"),
        ("#a", "bob", "bob"),
        ("#b", "carol", "carol"),
        ("#a", "dave", "dave"),
    ):
        roster.add(channel, nick)
        roster.set_account(nick, account)
    roster.remove("#a", "alice")  # still in #b: still seen
    assert roster.account("alice") == "alice"
    roster.remove("#b", "alice")  # parted (or kicked from) the last shared channel
    assert not roster.shares("alice") and roster.account("alice") is None
    roster.add("#a", "alice")  # back, with no account said yet: not trusted
    assert not roster.known("alice")
    roster.rename("bob", "Bobby")
    assert roster.account("bobby") == "bob" and not roster.shares("bob")
    roster.quit("bobby")
    assert not roster.shares("bobby") and roster.account("bobby") is None
    roster.remove("#b", "HILLBOT")  # the bot leaves #b: carol was seen only there
    assert roster.channels == {"#a"}
    assert not roster.shares("carol") and roster.account("carol") is None
    assert roster.account("dave") == "dave"
    roster.rename("dave", "alice")  # onto a nick it knew: the old entry goes
    assert roster.account("alice") == "dave"
