"""Statistics where players look, and the all-time ladder's page, in a real
headless Chromium and as JSON: the standings' statistics columns behind a
switch, the program page's statistics with what each means, and /ladder
(/api/ladder) with its error-bar chart, on a desktop and at phone width."""

from __future__ import annotations

import asyncio
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from support.ladderhill import archive_hill, reference
from support.webhill import Server, console_errors, css, get, load, shared_server

from hill.rules.statistics import hill_statistics
from hill.store import archive
from hill.web.state import READER
from hill.writers.ladder import ArchiveLadder

DASH = "\N{EN DASH}"  # between the ends of an interval
SIZES = {"desktop": (1366, 900), "phone": (390, 844)}
HOSTILE_OWNER = "a[b]^{c}|`"  # every odd character an owner may hold
LONG_NAME = "x" * 48


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


@pytest.fixture(scope="module")
def ladder_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A hill of 10 that has seen 30 programs, a second version of one and
    a hostile name, with a few rounds of its ladder played."""
    hill = archive_hill(tmp_path_factory.mktemp("ladder"), count=30, size=10)
    name, _ = reference(1)[0]
    hill.challenge("ref", name, reference(1, start=40)[0][1])  # its version 2
    hill.challenge(HOSTILE_OWNER, LONG_NAME, reference(1, start=41)[0][1])
    ArchiveLadder(hill).step(120)
    server = Server(hill)
    yield server
    server.stop()
    hill.close()


def test_the_ladder_json_is_the_stored_standing(ladder_site: Server) -> None:
    board = archive.read_board(ladder_site.hill.db)
    assert board is not None
    data = get(ladder_site.url + "/api/ladder").json()
    ladder = data["ladder"]
    assert ladder["pool"] == board.pool == 32 and ladder["pairs"] == 32 * 31 // 2
    assert ladder["jousts_played"] == board.jousts and ladder["ladder_jousts"] == 120
    assert [r["name"] for r in ladder["ranking"]] == [r.version.label for r in board.rows]
    assert [r["rating"] for r in ladder["ranking"]] == [r.rating for r in board.rows]
    entries = ladder_site.hill.queries.standings().entries
    on_hill = {(e.program.full_name, e.program.code_hash) for e in entries}
    for row, stored in zip(ladder["ranking"], board.rows, strict=True):
        version = stored.version
        assert row["on_hill"] == ((version.full_name, version.code_hash) in on_hill)
        assert (row["program"], row["version"]) == (version.full_name, version.version)
        assert row["rating_low"] <= row["rating"] <= row["rating_high"]
    # each program's versions, in the order they came
    programs = {p["program"]: p["versions"] for p in data["programs"]}
    versions = programs[f"ref.{reference(1)[0][0]}"]
    assert [v["version"] for v in versions] == [1, 2]
    assert not versions[0]["on_hill"]  # the second replaced it, or it had left already
    assert sum(len(v) for v in programs.values()) == 32
    assert data["programs"][0]["program"] == ladder["ranking"][0]["program"]


def test_the_ladder_page_follows_a_new_standing(tmp_path: Path) -> None:
    hill = archive_hill(tmp_path, count=12, size=4)
    server = Server(hill)
    try:
        assert get(server.url + "/api/ladder").json() == {"ladder": None}
        page = get(server.url + "/ladder")
        assert page.status == 200 and "no standing yet" in page.text
        ladder = ArchiveLadder(hill)
        ladder.step(8)
        first = get(server.url + "/api/ladder").json()["ladder"]
        assert first["ladder_jousts"] == 8 and first["pool"] == 12
        ladder.step(8)
        second = get(server.url + "/api/ladder").json()["ladder"]
        assert second["ladder_jousts"] == 16
        assert second["jousts_played"] == first["jousts_played"] + 8
    finally:
        server.stop()
        hill.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_ladder_page_in_a_browser(
    browser: webdriver.Chrome, ladder_site: Server, size: str
) -> None:
    data = get(ladder_site.url + "/api/ladder").json()["ladder"]
    browser.set_window_size(*SIZES[size])
    try:
        load(browser, ladder_site.url + "/ladder")
        assert console_errors(browser) == []
        assert (
            browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            <= 0
        )
        # the chart: a bar per program, best first, each named in full in its tooltip
        bars = css(browser, ".ladder-chart g.bar")
        assert len(bars) == data["pool"]
        tips = [bar.find_element(By.TAG_NAME, "title").get_attribute("textContent") for bar in bars]
        for tip, row in zip(tips, data["ranking"], strict=True):
            assert tip.startswith(f"{row['rank']}. {row['name']}: rating {row['rating']:.2f}")
        names = [t.get_attribute("textContent") for t in css(browser, ".ladder-chart text.name")]
        hostile = next(i for i, r in enumerate(data["ranking"]) if r["program"].startswith("a["))
        assert names[hostile].startswith(f"{HOSTILE_OWNER}.{LONG_NAME}")  # whole, never cut
        assert f"{HOSTILE_OWNER}.{LONG_NAME}@1" in tips[hostile]
        # the interval is drawn around the rating: low <= rating <= high, across
        for bar in bars[:5]:
            line = bar.find_element(By.CSS_SELECTOR, "line.interval")
            dot = bar.find_element(By.TAG_NAME, "circle")
            low, high = float(line.get_attribute("x1")), float(line.get_attribute("x2"))
            assert low <= float(dot.get_attribute("cx")) <= high
        # readable: the chart's box fits the screen (the chart scrolls in it when
        # it is wider, with a hint that says so), its labels at least 10 px
        chart = browser.execute_script(
            "const svg = document.querySelector('.ladder-chart svg');"
            "const box = svg.closest('.scroll');"
            "const hint = svg.closest('.table-box').querySelector('.scroll-hint');"
            "const r = box.getBoundingClientRect();"
            "const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;"
            "return [r.left, r.right, scale,"
            " box.scrollWidth > box.clientWidth, hint.getBoundingClientRect().height > 0];"
        )
        label_px = 12 * chart[2]
        print(f"{size}: chart box {chart[1] - chart[0]:.0f} px wide, labels {label_px:.1f} px")
        assert chart[0] >= 0 and chart[1] <= SIZES[size][0] and label_px >= 10
        assert chart[3] == chart[4]  # scrolled only with the hint shown
        # the table: every program, in rank order, on-hill ones linked to their page
        rows = css(browser, "#ladder tbody tr")
        assert len(rows) == data["pool"]
        ranks = [int(r.find_element(By.CSS_SELECTOR, "td.rank").text) for r in rows]
        assert ranks == list(range(1, data["pool"] + 1))
        linked = css(browser, "#ladder td.program a")
        assert len(linked) == sum(r["on_hill"] for r in data["ranking"])
        assert css(browser, "ul.versions li")
    finally:
        browser.set_window_size(*SIZES["desktop"])


def test_standings_statistics_are_behind_a_switch(browser: webdriver.Chrome) -> None:
    served = shared_server()
    report = get(served.url + "/api/standings").json()
    load(browser, served.url + "/")

    def shown() -> list[bool]:
        return browser.execute_script(
            "return Array.from(document.querySelectorAll('#standings .stat'),"
            " (el) => el.getBoundingClientRect().width > 0)"
        )

    assert not any(shown())  # off by default
    browser.find_element(By.CSS_SELECTOR, "label.switch").click()
    assert all(shown())
    heads = [th.text for th in css(browser, "#standings thead tr:last-child th.stat")]
    assert heads == ["GB", "RANK (95%)", "TAPL", "TAZD", "PPRG"]
    for row, program in zip(css(browser, "#standings tbody tr"), report["programs"], strict=True):
        cells = [td.text for td in row.find_elements(By.CSS_SELECTOR, "td.stat")]
        st = program["stats"]
        rank = program["rank"]
        assert cells == [
            f"{st['games_behind']:.1f}",
            f"{rank} ({st['rank_low']}{DASH}{st['rank_high']})",
            f"{st['tapl']:.0f}",
            f"{st['tazd']:.0f}",
            f"{st['pprg']:.2f}",
        ]
    # the wider table says it scrolls, if it does
    overflows = browser.execute_script(
        "const s = document.querySelector('.scroll'); return s.scrollWidth > s.clientWidth + 1"
    )
    hint = css(browser, ".scroll-hint")[0].is_displayed()
    assert hint == overflows
    browser.find_element(By.CSS_SELECTOR, "label.switch").click()
    assert not any(shown())
    assert console_errors(browser) == []


def test_the_program_page_explains_each_statistic(browser: webdriver.Chrome) -> None:
    served = shared_server()
    standings = served.hill.queries.standings()
    stats = hill_statistics(standings.outcomes, standings.method)
    third = standings.entries[2].program.full_name
    api = get(f"{served.url}/api/breakdown/{quote(third)}").json()
    assert api["stats"] == stats.as_json(2)
    load(browser, f"{served.url}/program/{quote(third)}")
    items = css(browser, "dl.stats > div")
    terms = [item.find_element(By.TAG_NAME, "dt").text for item in items]
    assert terms == [
        "RANK (95% INTERVAL)", "BATTLES", "TAPL", "TAZD", "QOOA", "TAPLQ", "PPRG", "GAMES BEHIND",
    ]  # fmt: skip
    values = {
        t: i.find_element(By.CSS_SELECTOR, "dd").text for t, i in zip(terms, items, strict=True)
    }
    st = api["stats"]
    assert values["RANK (95% INTERVAL)"] == f"3 of 47 ({st['rank_low']}{DASH}{st['rank_high']})"
    assert values["BATTLES"] == (
        f"{st['wins']} won, {st['ties']} tied, {st['losses']} lost in 46 jousts"
    )
    assert values["TAPL"] == f"{st['tapl']:.1f}" and values["TAZD"] == f"{st['tazd']:.1f}"
    assert values["TAPLQ"] == f"{st['tapl'] * st['qooa']:.1f}"
    assert values["GAMES BEHIND"] == f"{st['games_behind']:.2f}"
    meanings = [item.find_element(By.CSS_SELECTOR, "dd.means").text for item in items]
    assert all(len(m.split()) >= 5 for m in meanings)  # a line each on what it says
    assert console_errors(browser) == []


def test_statistics_are_computed_once_per_hill_state() -> None:
    served = shared_server()
    reader = served.runner.app[READER]

    def snapshot():  # as a request would, on the server's loop
        return asyncio.run_coroutine_threadsafe(reader.snapshot(), served.loop).result(30)

    first = snapshot()
    assert "statistics" in vars(first)  # computed in the read threads, before any page
    computed = first.statistics
    get(served.url + "/api/standings")
    get(served.url + "/")
    assert snapshot() is first and first.statistics is computed
    assert re.fullmatch(r"\d+", str(len(computed.tapl)))
