"""The players' hill jobs as data: what can be asked (a kind), where a
request stands, and what it came to (an outcome), which the writer stores
with the change it made and the bot and the upload page say in words.

A hill-changing command is: a kind here, its change in the writer
(hill.writers.hill, with its line in PLAYS), its summary in
hill.rules.changes, and its command in bot/commands/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from hill.rules.events import EventKind


class RequestKind(StrEnum):
    """What a request asks of the hill."""

    CHALLENGE = "challenge"  # put a program on the hill
    TEST = "test"  # see where a program would rank
    WITHDRAW = "withdraw"  # an owner takes their program off
    REMOVE = "remove"  # an admin takes any program off
    RESCORE = "rescore"  # recompute the standings
    # a contest's entries (hill.rules.contests): `name` is the contest's
    CONTEST_ENTER = "contest-enter"  # an owner's entry (a new one replaces it)
    CONTEST_WITHDRAW = "contest-withdraw"  # an owner takes their entry back

    @property
    def plays_code(self) -> bool:
        """Whether it brings a program (refused before any joust if it is bad)."""
        return self in (RequestKind.CHALLENGE, RequestKind.TEST, RequestKind.CONTEST_ENTER)

    @property
    def contest(self) -> bool:
        """Whether it is about a contest's entry: its time heard decides
        whether it counts (hill.rules.contests), and its answer is private."""
        return self in (RequestKind.CONTEST_ENTER, RequestKind.CONTEST_WITHDRAW)

    def describe(self, name: str, upload: bool = False) -> str:
        """The request, as its asker would say it: "your submission alice.rush"."""
        via = " upload" if upload else ""
        return {
            RequestKind.CHALLENGE: f"your submission{via} {name}",
            RequestKind.TEST: f"your test{via} {name}",
            RequestKind.WITHDRAW: f"your withdrawal of {name}",
            RequestKind.REMOVE: f"your removal of {name}",
            RequestKind.RESCORE: "your rescore",
            RequestKind.CONTEST_ENTER: f"your{via} entry to contest {name}",
            RequestKind.CONTEST_WITHDRAW: f"your withdrawal from contest {name}",
        }[self]


class RequestState(StrEnum):
    """Where a request stands: queued, running while played, then done or failed."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


OPEN = (RequestState.QUEUED, RequestState.RUNNING)
FINISHED = (RequestState.DONE, RequestState.FAILED)


@dataclass(frozen=True)
class Outcome:
    """What a request came to: the change's summary (or the refusal), the
    event it made, the program it concerns, whether the hill changed (then
    it is told in the summary channel too), and a test's page (its token)."""

    summary: str
    event: EventKind | None = None  # None: refused, or an answer kept as text
    program: str | None = None
    changed: bool = False
    page: str | None = None  # a test's page: the token of its address

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        event = data.get("event")
        return cls(
            data["summary"],
            None if event is None else EventKind(event),
            data.get("program"),
            bool(data.get("changed")),
            data.get("page"),
        )


def answer_text(
    outcome: Outcome,
    program_url: Callable[[str], str],
    test_url: Callable[[str], str] | None = None,
) -> str:
    """A request's answer: a submission says whether the program is new or
    an update, and links its page (`program_url` of its full name); a test
    links its own page (`test_url` of its token)."""
    if outcome.event == EventKind.TEST and outcome.page and test_url is not None:
        return f"{outcome.summary}. Full result: {test_url(outcome.page)}"
    arrived = outcome.event in (EventKind.JOIN, EventKind.CHALLENGE)
    if arrived and outcome.program:
        return f"New program {outcome.summary}. {program_url(outcome.program)}"
    if outcome.event == EventKind.UPDATE and outcome.program:
        return f"Updated {outcome.summary}. {program_url(outcome.program)}"
    return outcome.summary
