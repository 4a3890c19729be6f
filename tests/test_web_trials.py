"""A `-test` trial's page (its full result, marked as a test, kept for a
while, then 410 Gone), the page of a program that left the hill (its last
state, when and why it left, its versions), and the notices the writer
leaves for owners whose program left without their doing."""

from __future__ import annotations

import datetime as dt
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update
from support.webhill import Server, get

from hill import engine
from hill.config import HillSettings
from hill.store.notices import NoticeBook
from hill.store.tables import TrialPage
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder

RUSH = b"(>)*9([-]>)*21"
TRAIL = b">(+)*10>(-)*10(>)*6([+]>)*21"
IDLE = b"+>-<+>-<"
CLEAR = b"(>)*8([-]>)*21"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A hill of three that has seen a push-off, a removal and a test."""
    hill = Hill(HillSettings(data_dir=tmp_path_factory.mktemp("var"), size=3), jobs=2)
    hill.challenge("carol", "idle", IDLE)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("dave", "clear", CLEAR)
    hill.challenge("bob", "trail", TRAIL)  # pushes off carol.idle
    server = Server(hill)
    yield server
    server.stop()


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def test_a_test_links_its_full_result_kept_for_a_while(served: Server) -> None:
    hill = served.hill
    report = hill.challenge("erin", "probe", RUSH + b"+", test_only=True)
    token = report.page
    assert token and len(token) == 22
    # the answer names the worst opponents, as -rank does, and links the page
    assert "; test only, the hill is unchanged; " in report.summary
    assert "worst against: " in report.summary or "loses to no one" in report.summary
    data = get(f"{served.url}/api/test/{token}").json()
    assert data["program"] == "erin.probe"
    assert data["trial"]["owner"] == "erin" and data["trial"]["token"] == token
    assert data["event"]["kind"] == "test" and data["event"]["summary"] == report.summary
    # the same breakdown as a program's: every opponent it met (the hill but
    # the one it would push off), 42 outcomes each
    hill_names = {e.program.full_name for e in hill.queries.standings().entries}
    met = {o["program"] for o in data["opponents"]}
    assert met == hill_names - {data["event"]["displaced"]} and len(met) == 2
    for opponent in data["opponents"]:
        assert len(opponent["outcomes"]) == engine.BATTLES
        assert engine.classic_line(opponent["outcomes"]) == opponent["line"]
    expires = dt.datetime.fromisoformat(data["trial"]["expires"].rstrip("Z"))
    assert dt.timedelta(hours=23) < expires - dt.datetime.now(dt.UTC).replace(tzinfo=None)
    page = get(f"{served.url}/test/{token}")
    assert page.status == 200
    assert 'id="trial-note"' in page.text and "kept until" in page.text
    # each battle opens in the viewer, by the two programs' code
    strips = len(re.findall(r'<a class="cell [a-z]+" href="/battle\?left_code=', page.text))
    assert strips == engine.BATTLES * len(data["opponents"])
    # expired: gone, and said so
    with hill.db.transaction() as session:
        past = dt.datetime(2020, 1, 1)
        session.execute(update(TrialPage).where(TrialPage.token == token).values(expires_at=past))
    gone = get(f"{served.url}/api/test/{token}")
    assert gone.status == 410 and "expired" in gone.json()["error"]
    assert get(f"{served.url}/test/{token}").status == 410


def test_expired_test_pages_are_forgotten_as_the_web_starts_and_at_each_new_test(
    tmp_path: Path,
) -> None:
    """A page says "expired" (410) for a day after it expires, then is
    deleted: when the web report starts (a hill where nobody tests any more
    keeps none for long), and when the writer opens a new one."""
    hill = Hill(HillSettings(data_dir=tmp_path / "var", size=3), jobs=2)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("dave", "clear", CLEAR)
    long_ago, lately, live = (
        hill.challenge("erin", f"probe{i}", RUSH + b"+" * (i + 1), test_only=True).page
        for i in range(3)
    )
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)

    def expire(token: str | None, at: dt.datetime) -> None:
        with hill.db.transaction() as session:
            session.execute(update(TrialPage).where(TrialPage.token == token).values(expires_at=at))

    def kept() -> set[str]:
        with hill.db.session() as session:
            return set(session.scalars(select(TrialPage.token)))

    expire(long_ago, now - dt.timedelta(days=2))
    expire(lately, now - dt.timedelta(hours=1))
    assert kept() == {long_ago, lately, live}
    server = Server(hill)  # the web starts
    try:
        assert kept() == {lately, live}
        assert get(f"{server.url}/api/test/{long_ago}").status == 404
        assert get(f"{server.url}/api/test/{lately}").status == 410
        assert get(f"{server.url}/api/test/{live}").status == 200
        expire(lately, now - dt.timedelta(days=2))
        newest = hill.challenge("erin", "probe9", RUSH + b"-", test_only=True).page
        assert kept() == {live, newest}
        assert get(f"{server.url}/api/test/{lately}").status == 404
    finally:
        server.stop()
        hill.close()


@pytest.mark.parametrize(
    "token", ["x" * 22, "short", "%3Cscript%3E", "a" * 400, "..%2F..%2Fetc%2Fpasswd"]
)
def test_unknown_test_pages_are_404(served: Server, token: str) -> None:
    reply = get(f"{served.url}/api/test/{token}")
    assert reply.status == 404 and reply.json()["status"] == 404
    assert get(f"{served.url}/test/{token}").status == 404


def test_a_program_that_left_keeps_its_page(served: Server) -> None:
    data = get(f"{served.url}/api/breakdown/carol.idle").json()
    left = data["departed"]
    assert left["reason"] == "pushed off" and left["by"] == "bob.trail"
    assert left["event"]["kind"] == "challenge" and left["event"]["program"] == "bob.trail"
    # its last state: the one before bob.trail arrived, where it stood with the others
    assert left["last_state"] == left["event"]["id"] - 1 == data["event"]["id"]
    assert [v["status"] for v in data["versions"]] == ["left"]
    assert {o["program"] for o in data["opponents"]} == {"alice.rush", "dave.clear"}
    assert left["ladder"] == []  # the ladder has not run on this hill
    # how it played then, on the page and on its own
    profile = get(f"{served.url}/api/profile/carol.idle").json()
    assert profile["event"]["id"] == left["last_state"] and profile["jousts"] == 2
    assert data["profile"] == {k: v for k, v in profile.items() if k != "event"}
    page = get(f"{served.url}/program/carol.idle").text
    assert 'id="departed-note"' in page
    pusher = f'pushed off by <a href="/program/bob.trail?event={left["event"]["id"]}">bob.trail</a>'
    assert pusher in page  # as it stood when it pushed carol.idle off
    assert 'id="ladder-none"' in page  # says it is not on the ladder yet
    # a program on the hill says it is not departed; one never seen is a 404
    assert get(f"{served.url}/api/breakdown/alice.rush").json()["departed"] is None
    for name in ("nobody.here", "erin.probe"):  # a test is no program of the hill
        assert get(f"{served.url}/api/breakdown/{quote(name)}").status == 404
    # asked in a state it was not part of: a 404, as before
    state = served.hill.queries.latest_state()[0]
    assert get(f"{served.url}/api/breakdown/carol.idle?event={state}").status == 404


def test_a_program_that_left_keeps_its_ladder_standing(served: Server) -> None:
    ArchiveLadder(served.hill).step()  # the ladder rates every program seen
    left = get(f"{served.url}/api/breakdown/carol.idle").json()["departed"]
    [version] = left["ladder"]
    assert version["version"] == 1 and version["name"] == "carol.idle@1"
    assert not version["on_hill"] and 1 <= version["rank"] <= 4  # of the four (a test is none)
    page = get(f"{served.url}/program/carol.idle").text
    assert 'id="ladder-standing"' in page and 'id="ladder-none"' not in page
    assert f'<td class="num">{version["rank"]}</td>' in page


def test_owners_are_left_notices_when_others_make_their_program_leave(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path, size=2), jobs=2)
    hill.challenge("carol", "idle", IDLE)
    hill.challenge("carol", "rush", RUSH)
    hill.challenge("carol", "clear", CLEAR)  # pushes off one of her own: no notice
    book = NoticeBook(hill.db)
    assert book.pending() == []
    hill.challenge("bob", "trail", TRAIL)
    pushed = book.pending()
    assert [(n.owner, n.reason, n.by) for n in pushed] == [("carol", "pushed off", "bob.trail")]
    hill.remove("bob.trail", "admin")
    removed = book.pending()[-1]
    assert (removed.program, removed.reason, removed.by) == ("bob.trail", "removed", "admin")
    book.mark_sent(pushed[0].id)
    assert [n.id for n in book.pending()] == [removed.id]
