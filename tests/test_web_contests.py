"""The contest pages: /contests and /contest/NAME with their JSON twins
(nothing of an open contest's code, in any answer; once played the
standings with shares and controls, the crosstable, the reality show and
the recompute command), the battle viewer on a contest's entries, and the
pages in a real headless Chromium at desktop and phone widths, their
countdowns ticking.

A real hill of 5 reference programs in SQLite with four contests (open,
closed and being played, played, void), made by the contests' writer.
Set WEB_SCREENSHOTS=DIR to save PNGs of the pages.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support.webhill import (
    Server,
    build_hill,
    console_errors,
    get,
    load,
    reference_programs,
)

from hill.engine import code_hash
from hill.rules.requests import RequestKind
from hill.store.requests import RequestBook
from hill.web.changes import CHANGES
from hill.web.tournaments import pieces
from hill.writers.hill import Hill, play_request
from hill.writers.tournaments import HillTournaments

# entries: programs the hill has not seen, each in one contest
CODES = [code for _, code in reference_programs()[5:15]]
SIZES = {"desktop": (1366, 900), "phone": (390, 844)}


@dataclass
class Site:
    hill: Hill
    server: Server
    entries: dict[str, dict[str, bytes]]  # contest -> owner -> code

    @property
    def url(self) -> str:
        return self.server.url


def enter(hill: Hill, contest: str, owner: str, code: bytes, heard: dt.datetime) -> None:
    book = RequestBook(hill.db)
    kind = RequestKind.CONTEST_ENTER
    asked = book.add(limit=99, nick=owner, channel=None, origin="irc", created_at=heard,
                     command=kind, owner=owner, name=contest, code=code)  # fmt: skip
    play_request(hill, book.start(asked.id))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    hill = build_hill(tmp_path_factory.mktemp("hill") / "var", reference_programs()[:5])
    entries = {
        "spring": {"alice": CODES[0], "bob": CODES[1]},
        "summer": {f"p{i}_{'x' * 20 * (i == 3)}": CODES[2 + i] for i in range(5)},
        "autumn": {"carol": CODES[7]},
        "winter": {"dave": CODES[8], "erin": CODES[9]},
    }
    for name, title in (("spring", "Spring <b>joust</b>"), ("summer", "Summer"),
                        ("autumn", "Autumn"), ("winter", "Winter")):  # fmt: skip
        controls = {"floor": b">(+)*5[-]"} if name == "summer" else {}
        view = hill.contests.create(name, "+1h", by="carol", title=title, controls=controls)
        for owner, code in entries[name].items():
            enter(hill, name, owner, code, view.created_at)
        if name != "spring":
            view = hill.contests.close(name, by="carol")
        if name == "summer":
            HillTournaments(hill).run(view.tournament_id)
            hill.contests.finish(name)
    server = Server(hill)
    yield Site(hill, server, entries)
    server.stop()
    hill.close()


def test_the_list_and_its_twin(site: Site) -> None:
    listed = get(f"{site.url}/api/contests").json()["contests"]
    assert {c["name"]: c["state"] for c in listed} == {
        "spring": "open", "summer": "played", "autumn": "void", "winter": "closed"
    }  # fmt: skip
    spring = next(c for c in listed if c["name"] == "spring")
    assert 3500 < spring["seconds_left"] <= 3600 and spring["entrants"] == 2
    assert next(c for c in listed if c["name"] == "summer")["winner"] is not None


def test_an_open_contest_shows_its_entrants_never_their_code(site: Site) -> None:
    page = get(f"{site.url}/api/contest/spring").json()
    assert page["state"] == "open" and page["tournament"] is None
    assert [(e["owner"], e["code_hash"]) for e in page["entries"]] == [
        ("alice", None), ("bob", None)
    ]  # fmt: skip
    html = get(f"{site.url}/contest/spring").text
    for code in site.entries["spring"].values():
        digest = code_hash(code)
        assert digest not in html and digest not in str(page)
        assert get(f"{site.url}/code/{digest}").status == 404
        assert get(f"{site.url}/battle?left_code={digest}&right_code={digest}").status == 404
    assert "Spring &lt;b&gt;joust&lt;/b&gt;" in html  # a title is text, escaped


def test_a_played_contest_has_its_standings_crosstable_show_and_recompute(site: Site) -> None:
    page = get(f"{site.url}/api/contest/summer").json()
    players = site.entries["summer"]
    rows = page["standings"]
    assert {r["name"] for r in rows} == {*players, "control.floor"}
    control = next(r for r in rows if r["control"])
    assert control["place"] is None and control["name"] == "control.floor"
    places = [r["place"] for r in rows if not r["control"]]
    assert places[0] == 1 and places == sorted(places)
    assert round(sum(r["win_share"] for r in rows), 6) in (0.0, 100.0)
    assert page["tournament"]["entrants"] == [*sorted(players), "control.floor"]
    assert page["winner"] == next(r["name"] for r in rows if r["place"] == 1)
    assert page["crosstable"]["names"] == [r["name"] for r in rows]
    assert len(page["tournament"]["reality_show"]) == 6
    assert page["recompute"]["folder"] == "hill/contests/summer"
    assert page["recompute"]["command"].startswith(
        "bfjoust tournament run --names stem --format round-robin --json "
    )
    for owner, code in players.items():  # public once closed, and playable by code
        entry = next(e for e in page["entries"] if e["owner"] == owner)
        assert entry["code_hash"] == code_hash(code)
        assert get(f"{site.url}/code/{entry['code_hash']}").body == code
    left, right = (code_hash(code) for code in list(players.values())[:2])
    battle = get(f"{site.url}/battle?left_code={left}&right_code={right}&tape=12&polarity=kettle")
    assert battle.status == 200 and "in contest summer" in battle.text
    # its entrants' strategy map (docs/analytics.md), from the contest's own jousts
    tournament = page["tournament_id"]
    assert f"/tournament/{tournament}/strategy" in get(f"{site.url}/contest/summer").text
    strategy = get(f"{site.url}/api/tournament/{tournament}/strategy").json()
    assert sorted(strategy["programs"]) == sorted(r["name"] for r in rows)
    margins = {(m["a"], m["b"]): m["margin"]
               for m in page["tournament"]["rounds"][0]["matches"]}  # fmt: skip
    order = strategy["programs"]
    assert all(strategy["margins"][order.index(a)][order.index(b)] == margin
               for (a, b), margin in margins.items())  # fmt: skip


def test_a_big_contests_tournament_is_read_in_counts_and_from_its_table(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A contest whose tournament is big (more entrants than
    pieces.PAGED_ENTRANTS, lowered here) follows its progress by a few
    counts and, once played, shows its programs and elimination order from
    the tournament's table (read once per settled result), its crosstable
    and sample battles on the tournament's own pages."""
    small = get(f"{site.url}/api/contest/summer").json()
    closed = get(f"{site.url}/api/contest/winter").json()
    monkeypatch.setattr(pieces, "PAGED_ENTRANTS", 2)
    big = get(f"{site.url}/api/contest/summer").json()
    assert big["progress"] == small["progress"]
    assert big["progress"]["matches_committed"] == big["progress"]["matches_expected"] == 15
    assert get(f"{site.url}/api/contest/winter").json()["progress"] == closed["progress"]
    for same in ("standings", "programs", "eliminations", "tournament"):
        assert big[same] == small[same], same
    assert big["samples"] is None and big["crosstable"] is None and big["thumbnails"] is False
    assert small["samples"] and small["crosstable"]
    html = get(f"{site.url}/contest/summer")
    assert html.status == 200 and "too many for a crosstable on a page" in html.text
    tournament = get(f"{site.url}/api/tournament/{big['tournament_id']}").json()
    assert tournament["paged"] and tournament["pieces"]["crosstable"]


def test_a_closed_and_a_void_contest_say_where_they_stand(site: Site) -> None:
    winter = get(f"{site.url}/api/contest/winter").json()
    assert winter["state"] == "closed" and winter["progress"]["matches_expected"] == 1
    assert "being played" in get(f"{site.url}/contest/winter").text
    autumn = get(f"{site.url}/api/contest/autumn").json()
    assert autumn["state"] == "void" and autumn["tournament"] is None
    assert "a contest needs 2 entries or more, it had 1" in get(f"{site.url}/contest/autumn").text
    assert get(f"{site.url}/contest/nowhere").status == 404
    assert get(f"{site.url}/api/contest/no.such").json()["status"] == 404


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
def test_the_pages_fit_the_screen_and_run_cleanly(
    browser: webdriver.Chrome, site: Site, size: str
) -> None:
    browser.set_window_size(*SIZES[size])
    try:
        for path in ("/contests", "/contest/spring", "/contest/summer", "/contest/winter",
                     "/contest/autumn"):  # fmt: skip
            load(browser, site.url + path)
            overflow = browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, (path, size, overflow)
            assert console_errors(browser) == [], path
            screenshot(browser, f"contest{path.replace('/', '-')}-{size}")
    finally:
        browser.set_window_size(*SIZES["desktop"])


def test_the_countdowns_tick_and_say_closed_at_the_time(
    browser: webdriver.Chrome, site: Site
) -> None:
    load(browser, f"{site.url}/contests")
    countdown = browser.find_element(By.CSS_SELECTOR, "#open-contests .countdown")
    first = countdown.text
    assert re.fullmatch(r"00:5\d:\d\d", first), first
    WebDriverWait(browser, 5).until(lambda _: countdown.text != first)
    browser.get("about:blank")  # (the list would reload for the new contest meanwhile)
    site.hill.contests.create("soon", "+3s", by="carol")
    load(browser, f"{site.url}/contest/soon")
    ticking = browser.find_element(By.CSS_SELECTOR, "#state .countdown")
    assert re.fullmatch(r"00:00:0[0-3]", ticking.text), ticking.text
    WebDriverWait(browser, 10).until(lambda d: shown(d, "#state .closing-note"))
    closing = browser.find_element(By.ID, "state").text
    assert closing.startswith("CLOSING Closed to entries at ") and "left" not in closing
    assert "over" in browser.find_element(By.CSS_SELECTOR, "#state .countdown").get_attribute(
        "class"
    )
    assert console_errors(browser) == []


def test_the_played_page_marks_the_control_and_links_every_battle(
    browser: webdriver.Chrome, site: Site
) -> None:
    load(browser, f"{site.url}/contest/summer")
    rows = browser.find_elements(By.CSS_SELECTOR, "#contest-standings tbody tr")
    assert len(rows) == 6
    control = browser.find_element(By.CSS_SELECTOR, "#contest-standings tr.control")
    assert control.find_element(By.CSS_SELECTOR, "td.rank").text == "\N{EN DASH}"
    assert "control" in control.find_element(By.CSS_SELECTOR, "td.program").text
    assert rows[0].find_element(By.CSS_SELECTOR, "td.rank").text == "1"
    assert rows[0].find_element(By.CSS_SELECTOR, "td.share").text.endswith("%")
    cells = browser.find_elements(By.CSS_SELECTOR, "#crosstable td a")
    assert len(cells) == 6 * 5 and all("/battle?left_code=" in c.get_attribute("href")
                                       for c in cells)  # fmt: skip
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bump-chart polyline")) == 6
    command = browser.find_element(By.ID, "recompute-command").text
    assert command.startswith("git clone http://") and "cd hill/contests/summer" in command


def screenshot(driver: webdriver.Chrome, name: str) -> None:
    import os

    folder = os.environ.get("WEB_SCREENSHOTS")
    if folder:
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def test_the_history_shows_the_contests_commits(site: Site) -> None:
    """A contest's publications in /history, its feed and the commit pages:
    named, linked to the contest, their files listed, the hill unchanged."""
    changes = get(f"{site.url}/api/history").json()["changes"]
    published = [c for c in changes if c["contest"] == "summer"]
    assert [c["kind"] for c in published] == ["contest-results", "contest-entries"]
    assert "contest summer" in get(f"{site.url}/history").text
    feed = get(f"{site.url}/history.atom").text
    assert "Publishing the entries of contest summer" in feed
    assert "Publishing the results of contest summer" in feed
    entries = published[1]
    data = get(f"{site.url}/api/commit/{entries['commit']}").json()
    assert data["commit"]["title"] == "Publishing the entries of contest summer"
    assert data["commit"]["message"].endswith(f"\n\nContest: summer\nHill-Event: {entries['id']}\n")
    assert data["programs"] == []  # no program of the hill changed
    assert sorted(f["path"] for f in data["other_files"]) == sorted(
        [f"contests/summer/{owner}.bfjoust" for owner in site.entries["summer"]]
        + ["contests/summer/control.floor.bfjoust"]
    )
    assert {m["move"] for m in data["standings"]["moves"]} == {"same"}
    page = get(f"{site.url}/commit/{entries['commit']}").text
    assert "publishes a contest&#39;s files" in page and "/contest/summer" in page


def mark(driver: webdriver.Chrome) -> None:
    """Mark the page in the browser: a reload forgets the mark."""
    driver.execute_script("window.stillHere = true")


def marked(driver: webdriver.Chrome) -> bool:
    return driver.execute_script("return window.stillHere === true")


def held(site: Site) -> int:
    """How many asks the web report holds now, waiting for a change."""
    return site.server.runner.app[CHANGES].waiting


def asks(driver: webdriver.Chrome, path: str) -> int:
    """How many times this page has asked its JSON twin at `path`."""
    return driver.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter((e) => new URL(e.name).pathname === arguments[0]).length",
        path,
    )


def shown(driver: webdriver.Chrome, selector: str) -> bool:
    found = driver.find_elements(By.CSS_SELECTOR, selector)
    return bool(found) and found[0].is_displayed()


def test_a_contest_page_follows_its_contest_and_never_reloads_in_a_loop(
    browser: webdriver.Chrome, site: Site
) -> None:
    """Past its closing time but not closed yet (the bot still playing the
    entries heard before it, or down), the page says so and waits, its ask
    of the twin held by the server until the contest moves, without
    reloading; closed, it reloads once and follows the tournament's
    progress in place; a state it already reloaded for but did not get (a
    stale page) makes it say "reload" instead of looping."""
    hill = site.hill
    view = hill.contests.create("dusk", "+6s", by="carol")
    for owner, (_, code) in zip(("fay", "gil"), reference_programs()[15:17], strict=True):
        enter(hill, "dusk", owner, code, view.created_at)
    twin = "/api/contest/dusk"
    load(browser, f"{site.url}/contest/dusk")
    mark(browser)
    assert not shown(browser, ".closing-note") and shown(browser, ".before-close")
    WebDriverWait(browser, 10).until(lambda d: shown(d, ".closing-note"))
    assert not shown(browser, ".before-close")  # the countdown and how to enter
    WebDriverWait(browser, 15, 0.2).until(lambda _: held(site) >= 1)  # its ask waits
    assert asks(browser, twin) == 0 and marked(browser), "answered while nothing moved"
    assert hill.contests.view("dusk").open

    view = hill.contests.close("dusk", by="carol")
    WebDriverWait(browser, 20, 0.2).until(lambda d: not marked(d))
    load(browser, browser.current_url)  # settled after the reload
    state = browser.find_element(By.ID, "state").text
    assert "being played" in state and "0 of 1 matches" in state
    mark(browser)
    # asked with the state it shows, told the progress at once, then held
    WebDriverWait(browser, 15, 0.2).until(lambda d: asks(d, twin) == 1 and held(site) >= 1)
    assert marked(browser), "reloaded while the tournament is still being played"

    # the page has reloaded for "played" already, and came back without it: no loop
    browser.execute_script("sessionStorage.setItem(arguments[0], 'dusk:played')",
                           "contest-reload:/contest/dusk")  # fmt: skip
    HillTournaments(hill).run(view.tournament_id)
    hill.contests.finish("dusk")
    WebDriverWait(browser, 20, 0.2).until(lambda d: shown(d, ".reload-note"))
    assert marked(browser)
    browser.find_element(By.CSS_SELECTOR, ".reload-note a").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "contest-standings"))
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-watch]")  # played: nothing to follow
    assert console_errors(browser) == []


def test_the_list_follows_its_contests_through_the_close(
    browser: webdriver.Chrome, site: Site
) -> None:
    hill = site.hill
    view = hill.contests.create("dawn", "+3s", by="carol")
    enter(hill, "dawn", "hal", reference_programs()[17][1], view.created_at)
    load(browser, f"{site.url}/contests")
    mark(browser)
    countdown = "#open-contests a[href$='/contest/dawn']"
    row = browser.find_element(By.CSS_SELECTOR, countdown).find_element(By.XPATH, "../..")
    WebDriverWait(browser, 10).until(lambda _: row.find_element(By.CLASS_NAME, "countdown").text
                                     == "closed")  # fmt: skip
    WebDriverWait(browser, 15, 0.2).until(lambda _: held(site) >= 1)  # its ask waits
    assert asks(browser, "/api/contests") == 0 and marked(browser), "answered while nothing moved"
    hill.contests.close("dawn", by="carol")  # one entry: void
    WebDriverWait(browser, 20, 0.2).until(lambda d: not marked(d))
    load(browser, browser.current_url)
    played = browser.find_element(By.ID, "played-contests").text
    assert "dawn" in played and "void" in played
    assert not browser.find_elements(By.CSS_SELECTOR, countdown)
    assert console_errors(browser) == []
