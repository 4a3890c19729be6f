"""The durable request book, the upload links and the runner that plays the
requests, on a real hill (SQLite file, git repository)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, select

import hill.store.archive
import hill.store.records  # noqa: F401  (and the tournaments')
from bot.runner import MAX_ATTEMPTS, Answer, Runner
from hill.config import HillSettings, IrcSettings, Settings, WebSettings
from hill.errors import LinkRefused, QueueFull
from hill.rules.events import EventKind
from hill.rules.requests import Outcome, answer_text
from hill.store.database import schema_revision
from hill.store.requests import RequestBook, finish
from hill.store.tables import Base, Event, Request
from hill.store.uploads import UploadLinks
from hill.web.urls import Urls
from hill.writers import hill as writers_hill
from hill.writers.hill import Hill

RUSH = b"(>)*9([-]>)*21"
TRAIL = b">(+)*10>(-)*10(>)*6([+]>)*21"
URL = "https://hill.example.org/"
program_url = Urls(site=URL).program


def make_hill(tmp_path: Path) -> Hill:
    return Hill(HillSettings(data_dir=tmp_path / "var"), jobs=1)


def ask(book: RequestBook, command: str = "challenge", limit: int = 10, **fields: object) -> int:
    values = {
        "nick": "alice",
        "channel": "#bfjoust",
        "origin": "irc",
        "command": command,
        "owner": "alice",
        "name": "rush",
        "code": RUSH,
        **fields,
    }
    return book.add(limit=limit, **values).id


def test_the_models_match_the_migrations(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    with hill.db.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    assert hill.db.revision() == schema_revision()


def test_requests_wait_in_order_and_a_full_queue_refuses(tmp_path: Path) -> None:
    book = RequestBook(make_hill(tmp_path).db)
    first, second = ask(book, limit=2), ask(book, limit=2, name="two")
    with pytest.raises(QueueFull):
        ask(book, limit=2, name="three")
    assert book.last_id() == second  # the refused one left nothing behind
    assert book.next_open().id == first  # type: ignore[union-attr]
    started = book.start(first)
    assert (started.state, started.attempts) == ("running", 1)
    ask(book, limit=2, name="three")  # the running one no longer waits
    assert book.next_open().id == first  # type: ignore[union-attr]  # cut off: played again first
    assert book.waiting_before(second) == 1


def test_a_request_is_done_in_the_transaction_of_its_hill_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hill = make_hill(tmp_path)
    book = RequestBook(hill.db)
    request = ask(book)

    def killed_before_commit(session: object, request_id: int, outcome: Outcome) -> None:
        finish(session, request_id, outcome)  # type: ignore[arg-type]
        raise KeyboardInterrupt  # the process dies before the commit

    with monkeypatch.context() as patch:
        patch.setattr(writers_hill, "finish", killed_before_commit)
        with pytest.raises(KeyboardInterrupt):
            hill.challenge("alice", "rush", RUSH, request=request)
    # neither the hill change nor the request's end were written
    assert hill.queries.standings().size == 0 and hill.queries.events() == []
    assert book.get(request).state == "queued"

    hill.challenge("alice", "rush", RUSH, request=request)
    done = book.get(request)
    answer = done.answer
    assert done.state == "done" and answer is not None and answer.program == "alice.rush"
    assert answer_text(answer, program_url).startswith("New program alice.rush: ")
    assert [e.kind for e in hill.queries.events()] == ["join"]


def test_answers_say_new_or_updated_and_link_the_program() -> None:
    new = Outcome("a.b: points 1", EventKind.JOIN, "a.b", True)
    assert (
        answer_text(new, program_url)
        == "New program a.b: points 1. https://hill.example.org/program/a.b"
    )
    pushed = Outcome("a.b: ...; pushed off c.d", EventKind.CHALLENGE, "a.b", True)
    assert answer_text(pushed, program_url).startswith(
        "New program a.b: ...; pushed off c.d. https://"
    )
    update = Outcome("x[1].y: rank 2/5 (+1)", EventKind.UPDATE, "x[1].y", True)
    assert answer_text(update, program_url) == (
        "Updated x[1].y: rank 2/5 (+1). https://hill.example.org/program/x%5B1%5D.y"
    )
    test = Outcome("a.b: ...; test only", EventKind.TEST, None, False)
    assert answer_text(test, program_url) == "a.b: ...; test only"


def test_upload_links_work_once_before_they_expire(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    links = UploadLinks(hill.db)
    issue = dict(nick="bob", channel=None, owner="bob", name="long", test_only=False)
    token = links.issue(**issue, valid_seconds=60)  # type: ignore[arg-type]
    assert len(token) >= 32
    with sqlite3.connect(tmp_path / "var" / "hill.sqlite3") as db:
        stored = db.execute("SELECT token_hash FROM upload_links").fetchall()
    assert token not in repr(stored)  # only its hash is kept

    state = links.state(token)
    assert state is not None and state.request is None and not state.expired
    assert links.state(token + "x") is None
    with pytest.raises(LinkRefused) as refused:
        links.redeem("not-a-token", RUSH, limit=10)
    assert refused.value.status == 404

    # a full queue leaves the link unused
    book = RequestBook(hill.db)
    ask(book, limit=1)
    with pytest.raises(QueueFull):
        links.redeem(token, RUSH, limit=1)
    assert links.state(token).request is None  # type: ignore[union-attr]

    request = links.redeem(token, TRAIL, limit=10)
    assert (request.nick, request.channel, request.owner, request.name) == (
        "bob",
        None,
        "bob",
        "long",
    )
    assert (request.origin, request.command, request.code) == ("web", "challenge", TRAIL)
    with pytest.raises(LinkRefused) as refused:
        links.redeem(token, RUSH, limit=10)
    assert refused.value.status == 409
    assert links.state(token).request.id == request.id  # type: ignore[union-attr]

    short = links.issue(**issue, valid_seconds=0.3)  # type: ignore[arg-type]
    time.sleep(0.4)
    assert links.state(short).expired  # type: ignore[union-attr]
    with pytest.raises(LinkRefused) as refused:
        links.redeem(short, RUSH, limit=10)
    assert refused.value.status == 410 and "expired" in str(refused.value)


class Answers:
    """What the runner hands over for IRC: (nick, channel, text), in order;
    each is 'written' at once, as the IRC client does when connected."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str | None, str]] = []
        self.new = asyncio.Event()

    def __call__(self, request: Request, answer: Answer, on_sent: Callable[[], None]) -> None:
        self.sent.append((request.nick, request.channel, answer.line))
        on_sent()
        self.new.set()

    async def wait_for(self, count: int) -> list[tuple[str, str | None, str]]:
        async with asyncio.timeout(30):
            while len(self.sent) < count:
                self.new.clear()
                await self.new.wait()
        return self.sent


@contextlib.asynccontextmanager
async def running(hill: Hill, answers: Answers, refunds: list[str]):  # type: ignore[no-untyped-def]
    settings = Settings(
        hill=hill.settings, irc=IrcSettings(queue_size=5), web=WebSettings(public_url=URL)
    )
    runner = Runner(hill, settings, answers, refunds.append)
    await runner.start()
    try:
        yield runner
    finally:
        await runner.close()


def delivered(hill: Hill) -> list[bool]:
    with hill.db.session() as session:
        return list(session.scalars(select(Request.delivered).order_by(Request.id)))


def test_the_runner_plays_in_order_answers_and_marks_delivered(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    answers, refunds = Answers(), []

    async def scenario() -> None:
        async with running(hill, answers, refunds) as runner:
            fields = dict(nick="alice", channel="#c", origin="irc", owner="alice")
            await runner.submit(**fields, command="challenge", name="rush", code=RUSH)
            await runner.submit(**fields, command="test", name="bad", code=b"[")
            await runner.submit(**fields, command="challenge", name="rush", code=TRAIL)
            await runner.submit(**fields, command="withdraw", name="rush", code=None)
            sent = await answers.wait_for(4)
            await asyncio.sleep(0.2)  # the delivery marks are written off the loop
        texts = [text for _, _, text in sent]
        assert texts[0].startswith("New program alice.rush: ")
        assert texts[1].startswith("parse error at line 1, column 1")
        assert texts[2].startswith("Updated alice.rush: ")
        assert texts[3] == "alice.rush withdrawn; 0 programs left on the hill"
        assert refunds == ["alice"]  # the parse error does not count
        assert delivered(hill) == [True] * 4

    asyncio.run(scenario())


def test_after_a_restart_answers_say_what_happened(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    book = RequestBook(hill.db)
    # left by a crash: an answer stored but not sent, a request cut off while
    # played, one still queued, and one the bot died playing every time
    answered = ask(book, nick="ann", channel=None, owner="ann", name="rush")
    hill.challenge("ann", "rush", RUSH, request=answered)
    cut_off = ask(book, nick="ben", owner="ben", name="trail", code=TRAIL)
    book.start(cut_off)
    ask(book, nick="cy", channel=None, owner="cy", name="t", command="test", origin="web")
    doomed = ask(book, nick="dan", owner="dan", name="boom")
    for _ in range(MAX_ATTEMPTS):
        book.start(doomed)
    answers, refunds = Answers(), []

    async def scenario() -> None:
        async with running(hill, answers, refunds):
            await answers.wait_for(4)
            await asyncio.sleep(0.2)

    asyncio.run(scenario())
    ann, ben, cy, dan = answers.sent
    assert ann[:2] == ("ann", None)
    assert ann[2].startswith("your submission ann.rush was played before the bot restarted: ")
    assert ann[2].endswith(
        f"New program ann.rush: points 0.00, score 1000.00, rank 1/1. {URL}program/ann.rush"
    )
    assert ben[:2] == ("ben", "#bfjoust")
    assert ben[2].startswith(
        "your submission ben.trail was being played when the bot restarted: New program ben.trail:"
    )
    assert cy[2].startswith("your test upload cy.t was still queued when the bot restarted: cy.t: ")
    assert dan[2] == (
        "your submission dan.boom was being played when the bot restarted: "
        f"not played: the bot stopped {MAX_ATTEMPTS} times while playing it"
    )
    # each played once: ann's change is not made again
    with hill.db.session() as session:
        joins = session.scalar(select(func.count()).where(Event.kind.in_(("join", "challenge"))))
    assert joins == 2  # ann.rush and ben.trail; dan.boom never
    assert delivered(hill) == [True] * 4
