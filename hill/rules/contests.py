"""Contests' rules (docs/contests.md), as pure functions over plain data:
what a contest's name, title and closing time may be, where a contest
stands, which entries count, the news the channels hear and when, what a
contest publishes in the hill's history, and the command that recomputes
its result from a clone of that history.

An entry counts when its request was heard before the closing time
(`counts`): the time the hill heard it, not the time it was played.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from hill.errors import BadName, HillError
from hill.rules import names
from hill.rules.events import iso_utc

NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
RESERVED = frozenset({"create", "close"})  # words of `!bfjoust-contest`
TITLE_MAX = 200
FOLDER = "contests"  # in the hill's repository: contests/NAME/...
RESULTS = "results.json"
CONTROL = "control."  # a control entrant is control.NAME in the tournament
TRAILER = "Contest"  # the git trailer of a contest's commits: `Contest: NAME`
DEFAULT_FORMAT = "round-robin"
POOL = "contest "  # a contest's tournament's pool: "contest NAME"
MIN_ENTRIES = 2
RELATIVE = re.compile(r"\+(?:(\d{1,4})d)?(?:(\d{1,5})h)?(?:(\d{1,6})m)?(?:(\d{1,8})s)?")


class ContestState(StrEnum):
    """Where a contest stands."""

    OPEN = "open"  # taking entries until its closing time
    CLOSED = "closed"  # entries frozen and public; its tournament is being played
    PLAYED = "played"  # its tournament played, the results public
    VOID = "void"  # closed with fewer than MIN_ENTRIES entries: no tournament


class News(StrEnum):
    """What the channels hear of a contest, once each."""

    OPENED = "opened"
    DAY = "day"  # 24 hours left
    HOUR = "hour"  # 1 hour left
    CLOSED = "closed"
    RESULTS = "results"


REMINDERS = ((News.DAY, dt.timedelta(hours=24)), (News.HOUR, dt.timedelta(hours=1)))


def check_name(name: str) -> str:
    """The contest's name; BadName unless it is 1 to 32 letters, digits, '_' or '-'."""
    if not NAME.fullmatch(name):
        raise BadName(f"bad contest name {name[:40]!r}: 1 to 32 letters, digits, '_' or '-'")
    if name.lower() in RESERVED:
        raise BadName(f"{name!r} cannot name a contest: it is a word of the contest command")
    return name


def check_title(title: str, name: str) -> str:
    """The title, one line of printable text (the name when empty)."""
    title = " ".join("".join(c for c in title if c.isprintable()).split())
    if len(title) > TITLE_MAX:
        raise HillError(f"the title is too long: {len(title)} characters, at most {TITLE_MAX}")
    return title or name


# the longest a contest stays open: beyond it a deadline is surely a typo
LONGEST_OPEN = dt.timedelta(days=3660)


def _closing(text: str, now: dt.datetime) -> dt.datetime:
    relative = RELATIVE.fullmatch(text.strip())
    if relative and any(relative.groups()):
        days, hours, minutes, seconds = (int(part or 0) for part in relative.groups())
        delta = dt.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
        return now.replace(microsecond=0) + delta
    try:
        parsed = dt.datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise HillError(
            f"malformed closing time {text[:40]!r}: give a UTC time such as "
            f"2026-12-01T18:00Z, or a delay such as +2h30m"
        ) from None
    if parsed.tzinfo is not None:
        try:
            parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
        except OverflowError:  # before year 1 or after 9999 once in UTC
            return dt.datetime.max if parsed.year > 1 else dt.datetime.min
    return parsed.replace(microsecond=0)


def parse_closing(text: str, now: dt.datetime) -> dt.datetime:
    """The closing time `text` gives (naive UTC, to the second): an ISO 8601
    time (UTC unless it says its offset), or `+1d2h30m10s` from `now`;
    HillError when it is malformed or not in the future."""
    closes = _closing(text, now)
    if closes - now > LONGEST_OPEN:
        raise HillError(
            f"the closing time {text.strip()[:40]!r} is too far off: a contest closes "
            f"within {LONGEST_OPEN.days} days"
        )
    if closes <= now:
        raise HillError(
            f"the closing time {iso_utc(closes)} is in the past (it is {iso_utc(now)}): "
            f"a contest closes in the future"
        )
    return closes


def control_entrant(name: str) -> str:
    """A control's name in the tournament: control.NAME (NAME as a program's)."""
    if not names.NAME.fullmatch(name):
        raise BadName(f"bad control name {name[:60]!r}: use 1 to 48 letters, digits, '_' or '-'")
    return CONTROL + name


def is_control(entrant: str) -> bool:
    return entrant.startswith(CONTROL)  # owners hold no '.'


def control_name(entrant: str) -> str:
    """A control's name as the admin gave it (control.NAME without control.)."""
    return entrant.removeprefix(CONTROL)


def counts(heard: dt.datetime, closes: dt.datetime) -> bool:
    """Whether a request heard at `heard` is in time for a contest closing at `closes`."""
    return heard < closes


def late(name: str, closes: dt.datetime) -> str:
    """The refusal of an entry heard at or after the close."""
    return f"contest {name} closed at {iso_utc(closes)}: entries heard after that do not count"


def entrant_path(contest: str, entrant: str) -> str:
    """An entrant's file in the hill's repository: contests/NAME/OWNER.bfjoust."""
    return f"{folder(contest)}/{names.file_name(entrant)}"


def results_path(contest: str) -> str:
    return f"{folder(contest)}/{RESULTS}"


def results_file(result: Mapping[str, Any]) -> bytes:
    """The results file: the tournament's JSON exactly as `bfjoust tournament
    run --json` prints it over the contest's files."""
    return json.dumps(result).encode() + b"\n"


def pool_label(name: str) -> str:
    return POOL + name


def contest_of_pool(pool: str) -> str | None:
    """The contest whose tournament plays `pool` (None: a hill tournament)."""
    return pool.removeprefix(POOL) if pool.startswith(POOL) else None


def entrant_order(players: Collection[str], controls: Collection[str]) -> tuple[str, ...]:
    """The tournament's entrants: the players by name, then the controls."""
    return (*sorted(players), *sorted(controls))


def time_left(seconds: float) -> str:
    """`2 d 3 h`, `3 h 20 min`, `12 min 5 s`, `42 s` (rounded down)."""
    s = max(0, int(seconds))
    days, hours, minutes = s // 86400, s // 3600 % 24, s // 60 % 60
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {s % 60} s" if s % 60 else f"{minutes} min"
    return f"{s} s"


@dataclass(frozen=True)
class Reminder:
    """A reminder due now: what to say (`news`), and every reminder it
    stands for (a later one makes an earlier one missed meanwhile moot)."""

    news: News
    marks: tuple[News, ...]


def reminder_due(
    created: dt.datetime, closes: dt.datetime, now: dt.datetime, told: Collection[str]
) -> Reminder | None:
    """The reminder to send now, if one is due: 24 hours and 1 hour before
    the close, each once, and only for a contest announced before that mark."""
    if now >= closes:
        return None
    due = [
        news
        for news, before in REMINDERS
        if news not in told and closes - before <= now and closes - created > before
    ]
    return Reminder(due[-1], tuple(due)) if due else None


def next_moment(
    created: dt.datetime, closes: dt.datetime, now: dt.datetime, told: Collection[str]
) -> dt.datetime:
    """When an open contest next needs the clock: its next reminder due
    (see reminder_due), or its close."""
    later = [
        closes - before
        for news, before in REMINDERS
        if news not in told and closes - created > before and closes - before > now
    ]
    return min([*later, closes])


def folder(contest: str) -> str:
    """A contest's folder in the hill's repository."""
    return f"{FOLDER}/{contest}"


def recompute_command(result: Mapping[str, Any]) -> str:
    """The command that, run in a contest's folder of a clone of the hill's
    history, prints its results.json: `bfjoust tournament run` over its
    files, each entrant named by its file's stem (OWNER, control.NAME)."""
    words = ["bfjoust", "tournament", "run", "--names", "stem", "--format", result["format"]]
    if result.get("seed") is not None:
        words += ["--seed", str(result["seed"])]
    words.append("--json")
    files = [names.file_name(entrant) for entrant in result["entrants"]]
    if any(file.startswith("-") for file in files):  # an owner may begin with '-': a file still
        words.append("--")
    return shlex.join(words + files)


def entries_summary(
    contest: str, players: Sequence[str], controls: Sequence[str], void: str | None
) -> str:
    """The summary of a close: who entered, and what comes next."""
    count = f"{len(players)} entr{'y' if len(players) == 1 else 'ies'}"
    who = f" ({', '.join(players)})" if players else ""
    extra = f" and {len(controls)} control{'s' * (len(controls) != 1)}" if controls else ""
    if void:
        return f"contest {contest} closed with {count}{who}: {void}"
    return f"contest {contest} closed with {count}{who}{extra}; its tournament is played now"


def void_reason(players: int) -> str | None:
    """Why a contest with `players` entries has no tournament (None: it has one)."""
    if players >= MIN_ENTRIES:
        return None
    return f"no tournament: a contest needs {MIN_ENTRIES} entries or more, it had {players}"


def standings(rows: Sequence[Mapping[str, Any]], criteria: Sequence[str]) -> list[dict[str, Any]]:
    """A contest's standings from its tournament's (best first, as the
    format ranks them): each row with its `place` among the players (None
    for a control, which wins nothing), `control`, and `win_share`, its share
    of all match wins in %.  Players equal in every one of the format's
    `criteria` share a place."""
    total = sum(row["wins"] for row in rows)
    shown, seen, place, level = [], 0, 0, None
    for row in rows:
        control = is_control(row["name"])
        if not control:
            seen += 1
            key = tuple(row[c] for c in criteria)
            if key != level:
                place, level = seen, key
        shown.append(
            {
                **row,
                "place": None if control else place,
                "control": control,
                "win_share": 100 * row["wins"] / total if total else 0.0,
            }
        )
    return shown


def winners(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The players in first place of contest `standings` (several: a tie)."""
    return [row["name"] for row in rows if row["place"] == 1]


def results_summary(contest: str, shown: Sequence[Mapping[str, Any]]) -> str:
    """The summary of a contest's results (`shown`: its `standings`)."""
    first = winners(shown)
    rest = [row["name"] for row in shown if row["place"] not in (None, 1)]
    share = next((row["win_share"] for row in shown if row["place"] == 1), 0.0)
    if len(first) == 1:
        lead = f"winner {first[0]} with {share:.1f}% of the match wins"
    else:
        lead = f"first place shared by {', '.join(first)} ({share:.1f}% of the match wins each)"
    then = f"; then {', '.join(rest)}" if rest else ""
    return f"contest {contest} played: {lead}{then}"
