"""`!bfjoust-log [NAME]`: the hill's last changes, or a program's, each with
the link to its commit's page in the web report."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import Usage
from hill.rules import names
from hill.rules.changes import commit_title
from hill.store.queries import HillEvent, HillQueries
from hill.web.urls import Urls

SHOWN = 3
SHA_DIGITS = 12  # of a commit in its link (the page takes 7 or more)


@command("-log", "[NAME|OWNER.NAME]")
async def recent_changes(bot: Context, message: Incoming, args: str) -> None:
    if " " in args:
        raise Usage("a program's name, or nothing for the whole hill")
    who, site = message.sender.identity, bot.settings.web.url
    for line in await bot.read(log_lines, bot.hill.queries, args, who, site):
        bot.reply(message, line)


def log_lines(queries: HillQueries, words: str, identity: str, site: str) -> list[str]:
    """The lines of the answer, newest change first (blocking: SQLite).
    `words` names a program as other commands take it (NAME, the sender's
    own first, or OWNER.NAME); `site` is the web report's URL."""
    name = None
    if words:
        known = queries.submitted_names()
        name = known[names.choose(known, words, identity, "in the hill's history")]
    changes = queries.recent_changes(SHOWN, name)
    if not changes:
        return ["Nothing has happened on the hill yet."]
    urls = Urls(site=site)
    return [change_line(change, urls) for change in changes]


def change_line(change: HillEvent, urls: Urls) -> str:
    """`#12 2026-11-22 19:35 Adding alice.rush by alice: <summary> <link>`."""
    title = commit_title(change.kind, change.program, change.displaced, change.contest)
    link = urls.commit(change.commit[:SHA_DIGITS]) if change.commit else "(commit pending)"
    when = f"{change.time:%Y-%m-%d %H:%M}"
    return f"#{change.id} {when} {title} by {change.actor}: {change.summary} {link}"
