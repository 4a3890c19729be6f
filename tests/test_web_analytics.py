"""The analytics on the web: a program's profile on its page and as
/api/profile/NAME, the strategy maps (/strategy, a test's, a tournament's)
with their JSON twins, checked against the engine's own statistics; the
pages while old jousts still wait for theirs; bad input; and what a player
sees in a real headless Chromium, desktop and phone."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from sqlalchemy import delete
from support.webhill import (
    Server,
    build_hill,
    console_errors,
    css,
    get,
    load,
    reference_programs,
    shared_server,
)

from hill import engine
from hill.analytics.battles import own_side
from hill.engine.arena import oriented
from hill.store.tables import JoustStats
from hill.web.analytics import data as analytics_pages
from hill.writers.backfill import StatsBackfill
from hill.writers.tournaments import HillTournaments

PROFILE_KEYS = {
    "event", "program", "code", "jousts", "waiting", "tapes", "heat", "decoys", "duels",
    "losses", "problems", "alike",
}  # fmt: skip
STRATEGY_KEYS = {
    "event", "pool", "size", "shown", "method", "programs", "ranks", "families", "linkage",
    "dendrogram", "margins", "duels", "waiting", "complete",
}  # fmt: skip


@pytest.fixture(scope="module")
def served() -> Server:
    return shared_server()


LEAVER = f"esohill.{reference_programs()[6][0]}"  # taken off the small hill


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, int, str]]:
    """Seven programs, a round robin of them, a test, then one of the seven
    taken off the hill (it keeps its page)."""
    hill = build_hill(tmp_path_factory.mktemp("small") / "var", reference_programs()[:7])
    service = HillTournaments(hill)
    tournament = service.create("round-robin", "hill", started_by="alice")
    service.run(tournament)
    code = reference_programs()[10][1]
    trial = hill.challenge("bob", "probe", code, test_only=True).page
    assert trial is not None
    hill.remove(LEAVER, "admin")
    server = Server(hill)
    yield server, tournament, trial
    server.stop()
    hill.close()


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def test_a_profile_is_the_engines_statistics_from_the_programs_side(served: Server) -> None:
    standings = served.hill.queries.standings()
    me = standings.entries[3].program
    data = get(f"{served.url}/api/profile/{quote(me.full_name)}").json()
    assert set(data) == PROFILE_KEYS
    assert data["program"] == me.full_name and data["code"] == me.code_hash
    assert data["jousts"] == standings.size - 1 and data["waiting"] == []
    assert data["tapes"] == list(engine.TAPE_LENGTHS)
    # recomputed here from the engine: its heat, its cycles, its losses
    codes = dict(reference_programs())
    program = engine.compile_program(codes[me.name])
    heat = np.zeros((21, 30))
    for entry, duel in zip(
        [e for e in standings.entries if e.program.id != me.id], data["duels"], strict=True
    ):
        other = engine.compile_program(codes[entry.program.name])
        # as the hill keeps it: from the side of the lower code hash
        left = oriented(me.code_hash, entry.program.code_hash)[1] > 0
        result = engine.joust(*((program, other) if left else (other, program)), stats=True)
        cycles, mine, _, _ = own_side(result.records, left=left)
        assert duel["program"] == entry.program.full_name and duel["rank"] == entry.rank
        assert (duel["low"], duel["high"]) == (int(cycles.min()), int(cycles.max()))
        assert duel["median"] == pytest.approx(float(np.median(cycles)), abs=0.05)
        heat += mine[:21] + mine[21:]  # sieve and kettle, by tape length
    for i, (row, tape) in enumerate(zip(data["heat"], engine.TAPE_LENGTHS, strict=True)):
        assert len(row) == tape
        assert row == pytest.approx((heat[i, :tape] / heat[i].sum()).tolist(), abs=1e-4)
        assert len(data["decoys"]["by_tape"][i]) == tape
        assert all(0 <= v <= 128 for v in data["decoys"]["by_tape"][i])
    assert len(data["decoys"]["cells"]) == engine.MAX_TAPE
    index = standings.index(me.full_name)
    lost = int((standings.outcomes[index] == -1).sum())
    total = data["losses"]["total"]
    assert total["flag"] + total["off_tape"] == lost
    for cause in ("flag", "off_tape", "tied_limit"):
        assert sum(map(sum, data["losses"][cause].values())) == total[cause]
    # problem opponents: those it loses most to, each with a battle it lost
    worst = sorted(
        (int((standings.outcomes[index, j] == -1).sum()), j)
        for j in range(standings.size)
        if j != index
    )
    assert data["problems"][0]["lost"] == max(w for w, _ in worst)
    for problem in data["problems"]:
        j = standings.index(problem["program"])
        assert problem["lost"] == int((standings.outcomes[index, j] == -1).sum())
        sample = engine.battle_index(problem["sample"]["tape"], problem["sample"]["polarity"])
        assert standings.outcomes[index, j, sample] == -1
    assert len(data["alike"]) == analytics_pages.ALIKE
    assert data["alike"] == sorted(data["alike"], key=lambda a: a["distance"])


def test_the_program_page_shows_how_it_plays(served: Server) -> None:
    name = served.hill.queries.standings().entries[0].program.full_name
    breakdown = get(f"{served.url}/api/breakdown/{quote(name)}").json()
    profile = get(f"{served.url}/api/profile/{quote(name)}").json()
    assert breakdown["profile"] == {k: v for k, v in profile.items() if k != "event"}
    page = get(f"{served.url}/program/{quote(name)}").text
    assert 'id="how-it-plays"' in page and page.count("<rect") > 2 * 400  # two heat maps
    assert 'id="decoy-words"' in page and "problems" in page


def test_the_strategy_map_orders_the_hill_by_its_dendrogram(served: Server) -> None:
    standings = served.hill.queries.standings()
    data = get(f"{served.url}/api/strategy").json()
    assert set(data) == STRATEGY_KEYS
    n = standings.size
    names = [e.program.full_name for e in standings.entries]
    assert sorted(data["programs"]) == sorted(names) and data["complete"]
    assert data["method"] == {
        "features": ["heat", "decoys", "duels"],
        "linkage": "average",
        "metric": "cosine",
    }
    at = [names.index(p) for p in data["programs"]]
    assert data["ranks"] == [i + 1 for i in at]
    margins = standings.margins()
    for r, a in enumerate(at):
        for c, b in enumerate(at):
            assert data["margins"][r][c] == (None if a == b else int(margins[a, b]))
            assert data["duels"][r][c] == data["duels"][c][r]
            assert (data["duels"][r][c] is None) == (a == b)
    # scipy's linkage over positions in `programs`: n - 1 merges, the last of all
    linkage = np.array(data["linkage"])
    assert linkage.shape == (n - 1, 4) and linkage[-1, 3] == n
    assert np.all(np.diff(linkage[:, 2]) >= -1e-9)  # average linkage merges upward
    assert len(data["families"]) == n and max(data["families"]) >= 2
    assert len(data["dendrogram"]["icoord"]) == n - 1
    # one pair's median duel length, from the engine
    codes = dict(reference_programs())
    a, b = (standings.entries[names.index(p)].program for p in data["programs"][:2])
    (low, _), _ = oriented(a.code_hash, b.code_hash)
    first, second = (a, b) if low == a.code_hash else (b, a)
    left, right = (engine.compile_program(codes[x.name]) for x in (first, second))
    cycles = own_side(engine.joust(left, right, stats=True).records, True)[0]
    assert data["duels"][0][1] == pytest.approx(float(np.median(cycles)), abs=0.05)
    page = get(f"{served.url}/strategy").text
    assert page.count('class="link"') == 2 * (n - 1)  # the dendrogram beside both matrices
    assert page.count("<rect") >= 2 * n * (n - 1)


def test_a_test_and_a_tournament_have_their_maps(small: tuple[Server, int, str]) -> None:
    server, tournament, trial = small
    test_map = get(f"{server.url}/api/test/{trial}/strategy").json()
    assert "bob.probe" in test_map["programs"] and test_map["pool"] == "test"
    profile = get(f"{server.url}/api/test/{trial}").json()["profile"]
    assert profile["program"] == "bob.probe" and profile["jousts"] == 7
    page = get(f"{server.url}/test/{trial}").text
    assert "/battle?left_code=" in page and 'id="how-it-plays"' in page
    data = get(f"{server.url}/api/tournament/{tournament}/strategy").json()
    detail = get(f"{server.url}/api/tournament/{tournament}").json()
    standings = [row["name"] for row in detail["result"]["standings"]]
    assert sorted(data["programs"]) == sorted(standings) and data["pool"] == "tournament"
    assert data["ranks"] == sorted(data["ranks"], key=data["ranks"].index)
    for r, a in enumerate(data["programs"]):  # the margins of their matches
        for c, b in enumerate(data["programs"]):
            if a != b:
                match = next(
                    m
                    for round_ in detail["result"]["rounds"]
                    for m in round_["matches"]
                    if {m["a"], m["b"]} == {a, b}
                )
                sign = 1 if match["a"] == a else -1
                assert data["margins"][r][c] == sign * match["margin"]
    assert f"/tournament/{tournament}/strategy" in get(f"{server.url}/tournament/{tournament}").text
    assert get(f"{server.url}/tournament/{tournament}/strategy").status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/profile/nobody.here",
        "/api/profile/%3Cscript%3E",
        "/api/profile/" + "a" * 3000,
        "/api/profile/esohill.ais523_omnipotence?event=abc",
        "/api/profile/esohill.ais523_omnipotence?event=999999",
        "/api/strategy?event=-1",
        "/api/tournament/999/strategy",
        "/api/tournament/abc/strategy",
        "/api/test/" + "x" * 22 + "/strategy",
        "/strategy?event=99999999999999",
    ],
)
def test_bad_input_gets_a_clear_4xx(served: Server, path: str) -> None:
    reply = get(served.url + path)
    assert 400 <= reply.status < 500, (path, reply.status)
    if path.startswith("/api/"):
        assert reply.json()["status"] == reply.status


def test_the_pages_wait_for_jousts_without_statistics(tmp_path: Path) -> None:
    hill = build_hill(tmp_path / "var", reference_programs()[:5])
    with hill.lock.transaction() as session:  # as a hill of before the statistics
        session.execute(delete(JoustStats))
    server = Server(hill)
    try:
        name = hill.queries.standings().entries[0].program.full_name
        waiting = get(f"{server.url}/api/profile/{quote(name)}").json()
        assert waiting["jousts"] == 0 and len(waiting["waiting"]) == 4
        assert waiting["heat"] is None and waiting["problems"] == []
        assert 'id="profile-waiting"' in get(f"{server.url}/program/{quote(name)}").text
        assert get(f"{server.url}/api/strategy").json()["programs"] == []
        assert "A map needs two programs" in get(f"{server.url}/strategy").text
        backfill = StatsBackfill(hill, jobs=1)
        backfill.work(3)  # some of them: the pages show what is in
        part = get(f"{server.url}/api/strategy").json()
        assert not part["complete"] and 0 < len(part["programs"]) <= 5
        while not backfill.work(64).done:
            pass
        done = get(f"{server.url}/api/profile/{quote(name)}").json()
        assert done["jousts"] == 4 and done["waiting"] == [] and done["heat"]
        assert get(f"{server.url}/api/strategy").json()["complete"]
    finally:
        server.stop()
        hill.close()


def test_a_big_pool_maps_its_first_programs(
    served: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(analytics_pages, "MAX_MAP", 10)
    state = served.hill.queries.latest_state()[0]  # a key of its own: not the cached map
    data = get(f"{served.url}/api/strategy?event={state}").json()
    assert (data["size"], data["shown"], len(data["programs"])) == (47, 10, 10)
    assert sorted(data["ranks"]) == list(range(1, 11))
    assert (
        "The map shows the first 10 of the 47" in get(f"{served.url}/strategy?event={state}").text
    )


# --- in a real browser -----------------------------------------------------


def overflow(driver: webdriver.Chrome) -> int:
    """How far the page scrolls sideways (0: it fits the window)."""
    return driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")


def screen_font(driver: webdriver.Chrome, element: object) -> float:
    """An SVG text's font size as drawn on the screen, in CSS pixels."""
    return driver.execute_script(
        "return parseFloat(getComputedStyle(arguments[0]).fontSize)"
        " * arguments[0].getScreenCTM().a",
        element,
    )


@pytest.mark.parametrize("size", [(1366, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_profile_reads_on_a_desktop_and_a_phone(
    browser: webdriver.Chrome, served: Server, size: tuple[int, int]
) -> None:
    name = served.hill.queries.standings().entries[1].program.full_name
    browser.set_window_size(*size)
    try:
        load(browser, f"{served.url}/program/{quote(name)}")
        assert console_errors(browser) == []
        assert overflow(browser) <= 0  # the page itself never scrolls sideways
        for figure in css(browser, "#how-it-plays ~ .profile-grid figure, figure.duel-chart"):
            svg = figure.find_element(By.TAG_NAME, "svg")
            # the duel chart, its names whole, scrolls in a box of its own when wider
            box = figure.find_elements(By.CSS_SELECTOR, ".scroll") or [svg]
            assert 0 < box[0].size["width"] <= size[0] and svg.size["height"] > 100
        heat = css(browser, "figure.heat svg")[0]
        cells = heat.find_elements(By.TAG_NAME, "rect")
        assert len(cells) == sum(engine.TAPE_LENGTHS)  # every cell of every tape length
        # a cell of the heat map is at least 6 px wide, even on a phone
        assert cells[0].size["width"] >= 6
        font = screen_font(browser, css(browser, "figure.duel-chart text.name")[0])
        assert font >= 9, font  # readable: the names of the duel chart
        # a problem opponent's lost battle opens in the viewer
        sample = css(browser, "table.problems a.sample")[0]
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", sample)
        WebDriverWait(browser, 20).until(  # its picture, drawn by the server
            lambda d: d.execute_script(
                "return arguments[0].querySelector('img').complete"
                " && arguments[0].querySelector('img').naturalWidth === 60",
                sample,
            )
        )
        href = sample.get_attribute("href")
        load(browser, href)
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "cycles").text not in ("", "…")
        )
        query = urllib.parse.parse_qs(urllib.parse.urlparse(href).query)
        profile = get(f"{served.url}/api/profile/{quote(name)}").json()
        first = profile["problems"][0]
        assert (query["left"], query["right"]) == ([name], [first["program"]])
        assert (query["tape"], query["polarity"]) == (
            [str(first["sample"]["tape"])],
            [first["sample"]["polarity"]],
        )
        browser.find_element(By.ID, "end").click()  # the battle's end: it lost it
        WebDriverWait(browser, 10).until(lambda d: "wins" in d.find_element(By.ID, "outcome").text)
        assert "right wins" in browser.find_element(By.ID, "outcome").text.lower()
        assert console_errors(browser) == []
    finally:
        browser.set_window_size(1366, 900)


@pytest.mark.parametrize("size", [(1366, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_strategy_map_reads_on_a_desktop_and_a_phone(
    browser: webdriver.Chrome, served: Server, size: tuple[int, int]
) -> None:
    browser.set_window_size(*size)
    try:
        load(browser, f"{served.url}/strategy")
        assert console_errors(browser) == []
        assert overflow(browser) <= 0  # the matrices scroll in their own boxes
        boxes = css(browser, "figure.strategy-chart .scroll")
        assert len(boxes) == 2
        wide = browser.execute_script(
            "return arguments[0].scrollWidth > arguments[0].clientWidth", boxes[0]
        )
        assert wide == (size[0] < 800)
        name = css(browser, "figure.results text.name")[0]
        font = screen_font(browser, name)
        assert font >= 10, font  # drawn 1:1: the names stay readable
        # the names show first, beside the dendrogram, on a phone too
        assert name.location["x"] + name.size["width"] <= size[0]
        # a cell opens the pair
        cell = css(browser, "figure.results a rect")[5]
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
        cell.click()
        WebDriverWait(browser, 10).until(lambda d: "/vs/" in d.current_url)
        load(browser, browser.current_url)
        assert len(css(browser, "#battles a.cell")) == engine.BATTLES
    finally:
        browser.set_window_size(1366, 900)


@pytest.mark.parametrize("size", [(1366, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_tests_page_and_a_departed_programs_read_on_a_desktop_and_a_phone(
    browser: webdriver.Chrome, small: tuple[Server, int, str], size: tuple[int, int]
) -> None:
    server, _, trial = small
    browser.set_window_size(*size)
    try:
        for path, note, badge in (
            (f"/test/{trial}", "trial-note", "test"),
            (f"/program/{quote(LEAVER)}", "departed-note", "left the hill"),
        ):
            load(browser, server.url + path)
            assert console_errors(browser) == []
            assert overflow(browser) <= 0, path
            said = browser.find_element(By.ID, note)  # marked as what it is, on screen
            assert said.is_displayed() and said.size["width"] <= size[0]
            assert css(browser, "h1 .kind")[0].text.lower() == badge
            heat = css(browser, "figure.heat svg")[0]  # how it plays, drawn
            assert 0 < heat.size["width"] <= size[0]
            assert len(heat.find_elements(By.TAG_NAME, "rect")) == sum(engine.TAPE_LENGTHS)
        # the departed program: why it left, and where it stands on the ladder
        assert "removed by admin" in browser.find_element(By.ID, "departed-note").text
        assert browser.find_element(By.ID, "ladder-standing").is_displayed()
        # a test's battle opens in the viewer, by the programs' code
        load(browser, f"{server.url}/test/{trial}")
        cell = css(browser, "a.cell")[0]  # the first battle against the first opponent
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
        cell.click()
        WebDriverWait(browser, 10).until(lambda d: "/battle?left_code=" in d.current_url)
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "cycles").text not in ("", "…")
        )
        assert console_errors(browser) == []
    finally:
        browser.set_window_size(1366, 900)
