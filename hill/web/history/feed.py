"""The Atom feed of the hill's changes (`/history.atom`), made by feedgen.

One entry per committed hill change, newest first: the commit's title,
the event's summary, its author (the player or admin who made it), a link
to the commit's page.  An entry's id is a UUID made from its commit's sha,
so it stays the same wherever the hill is served from (and a rebuilt
repository makes the same commits: same trees, messages and times).
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable, Sequence

from feedgen.feed import FeedGenerator

from hill.rules.changes import commit_title
from hill.store.queries import HillEvent

ENTRIES = 50
# characters XML 1.0 cannot hold (feedgen refuses them rather than drop them)
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
FEED_ID = uuid.uuid5(uuid.NAMESPACE_URL, "bfjoust-hill:history")


def _text(value: str) -> str:
    return NOT_XML.sub("\ufffd", value)


def _utc(time: dt.datetime) -> dt.datetime:
    return time.replace(tzinfo=dt.UTC)  # stored times are naive UTC


def title(change: HillEvent) -> str:
    return commit_title(change.kind, change.program, change.displaced, change.contest)


def atom_feed(
    changes: Sequence[HillEvent],
    site: str,
    feed_url: str,
    commit_url: Callable[[str], str],
    history_url: str,
) -> bytes:
    """The last ENTRIES committed changes of `changes` (oldest first), as
    Atom; the URLs absolute."""
    committed = [c for c in changes if c.commit][-ENTRIES:][::-1]
    feed = FeedGenerator()
    feed.id(FEED_ID.urn)
    feed.title("BF Joust hill: changes")
    feed.subtitle(f"Every change of the hill at {site}, each a commit of its git history")
    feed.link(href=feed_url, rel="self", type="application/atom+xml")
    feed.link(href=history_url, rel="alternate", type="text/html")
    feed.updated(_utc(committed[0].time) if committed else dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    for change in committed:
        assert change.commit is not None
        entry = feed.add_entry(order="append")
        entry.id(uuid.uuid5(uuid.NAMESPACE_URL, f"bfjoust-hill:commit:{change.commit}").urn)
        entry.title(_text(f"#{change.id} {title(change)}"))
        entry.summary(_text(change.summary))
        entry.author(name=_text(change.actor) or "hill")
        entry.link(href=commit_url(change.commit), rel="alternate", type="text/html")
        entry.updated(_utc(change.time))
        entry.published(_utc(change.time))
    return feed.atom_str(pretty=True)
