"""`!bfjoust-contest [NAME]`: the open and recent contests, or one of them;
admins `!bfjoust-contest create NAME CLOSES [title]` and `... close NAME`
(docs/contests.md; bot/contests.py keeps their times and news)."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import HillError, Usage
from hill.rules import contests as rules
from hill.rules.contests import ContestState
from hill.rules.events import iso_utc, utcnow
from hill.store.contests import ContestView, contests
from hill.store.records import tournament
from hill.web.urls import Urls

RECENT = 3  # closed contests listed after the open ones


@command("-contest", "[NAME | create NAME CLOSES [title] | close NAME]")
async def contest_command(bot: Context, message: Incoming, args: str) -> None:
    words = args.split()
    urls = Urls(site=bot.settings.web.url)
    if words and words[0].lower() in rules.RESERVED:
        await _admin(bot, message, words)
    elif len(words) > 1:
        raise Usage("a contest's name, or nothing for the open and recent ones")
    elif words:
        view = await bot.read(bot.hill.contests.view, words[0])
        bot.reply(message, await bot.read(contest_line, bot, view))
    else:
        views = await bot.read(contests, bot.hill.db)
        bot.reply(message, listing(views, urls, bot.irc.command))


async def _admin(bot: Context, message: Incoming, words: list[str]) -> None:
    message = await message.vouched()
    sender = message.sender
    if not sender.is_admin(bot.irc.admins):
        doing = {"create": "creating", "close": "closing"}[words[0].lower()]
        raise HillError(f"{doing} a contest is for the hill's admins")
    urls = Urls(site=bot.settings.web.url)
    if words[0].lower() == "create":
        if len(words) < 3:
            raise Usage("create NAME CLOSES [title]: CLOSES in UTC, e.g. 2026-12-01T18:00Z or +2h")
        view = await bot.read(
            bot.hill.contests.create,
            words[1],
            words[2],
            by=sender.nick,
            title=" ".join(words[3:]),
            now=message.heard,
        )
        bot.contests.wake.set()  # the channels hear of it
        left = rules.time_left(view.seconds_left(utcnow()))
        bot.reply(
            message,
            f"Contest {view.name} created: it closes at {iso_utc(view.closes)} (in {left}). "
            f"Entries in private: {bot.irc.command}-enter {view.name} CODE. "
            f"{urls.contest(view.name)}",
        )
        return
    if len(words) != 2:
        raise Usage("close NAME")
    view = await bot.contests.close_contest(words[1], sender.nick, now=message.heard)
    bot.reply(message, await bot.read(contest_line, bot, view))


def listing(views: list[ContestView], urls: Urls, prefix: str) -> str:
    """The open contests and the last closed ones, in a line."""
    if not views:
        return f"No contest yet: admins announce one with {prefix}-contest create NAME CLOSES."
    now = utcnow()
    open_ = [
        f"{v.name} (closes {iso_utc(v.closes)}, in {rules.time_left(v.seconds_left(now))}, "
        f"{len(v.players)} entered)"
        for v in sorted((v for v in views if v.open), key=lambda v: v.closes)
    ]
    closed = [f"{v.name} ({_state(v)})" for v in views if not v.open][:RECENT]
    parts = []
    if open_:
        parts.append("Open: " + "; ".join(open_))
    if closed:
        parts.append("Recent: " + "; ".join(closed))
    return ". ".join(parts) + f". {urls.contests()}"


def _state(view: ContestView) -> str:
    if view.state == ContestState.PLAYED:
        return f"winner {view.winner}" if view.winner else "first place shared"
    if view.state == ContestState.VOID:
        return "void"
    return "closed, being played"


def contest_line(bot: Context, view: ContestView) -> str:
    """One contest in a line: its state, entrants (names only while open), link."""
    urls = Urls(site=bot.settings.web.url)
    head = f"Contest {view.name} ({view.title}, {view.format})"
    entrants = ", ".join(e.entrant for e in view.players) or "nobody yet"
    count = f"{len(view.players)} entr{'y' if len(view.players) == 1 else 'ies'}"
    if view.open:
        left = rules.time_left(view.seconds_left(utcnow()))
        what = f"open, closes {iso_utc(view.closes)} (in {left}); {count}: {entrants}"
    elif view.state == ContestState.VOID:
        what = f"closed at {iso_utc(view.closes)} with {count}: {view.void_reason}"
    elif view.state == ContestState.CLOSED:
        what = f"closed at {iso_utc(view.closes)} with {count} ({entrants}); {_progress(bot, view)}"
    else:
        shown = view.standings() or []
        places = [f"{row['place'] or '-'}. {row['name']} {row['win_share']:.1f}%" for row in shown]
        what = f"played: {', '.join(places)} (share of the match wins)"
    return f"{head}: {what}. {urls.contest(view.name)}"


def _progress(bot: Context, view: ContestView) -> str:
    played = tournament(bot.hill.db, view.tournament_id) if view.tournament_id else None
    if played is None:
        return "its tournament is being played"
    s = played.summary
    return f"its tournament is being played: {s.matches_committed} of {s.matches_expected} matches"
