"""The tournament pages: /tournaments and /tournament/ID with their JSON twins,
the crosstable's sample battles and thumbnails, the battle viewer by code
hashes, the reality show's bump chart, and a phone's view in Chromium.

A real hill of 7 reference programs in SQLite, its tournaments made and
played by the tournament service (hill.tournament_service), served by the
real server.  Set WEB_SCREENSHOTS=DIR to save PNGs of the pages.
"""

from __future__ import annotations

import io
import os
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support.webhill import (
    Server,
    build_hill,
    console_errors,
    fetch_battle,
    get,
    load,
    reference_programs,
    same_battle,
)

from hill import engine
from hill.engine import code_hash
from hill.store import records
from hill.web.battles import thumbnail
from hill.web.charts import bump as bump_chart
from hill.web.server import SECURITY_HEADERS
from hill.web.tournaments.data import sample_battle
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

SWISS_CRITERIA = ["score", "buchholz", "neustadtl", "cumulative", "opp_cumulative", "wins"]
SWISS_COLUMNS = [*SWISS_CRITERIA, "draws", "losses", "byes"]
ROUND_ROBIN_COLUMNS = ["wins", "draws", "losses", "score", "points", "win_share"]


class Stop(Exception):
    """Stops a tournament mid-way, as a crash would."""


@dataclass
class Site:
    hill: Hill
    server: Server
    round_robin: int
    swiss: int
    running: int  # a Swiss stopped mid-way (after 4 matches)

    @property
    def url(self) -> str:
        return self.server.url

    def view(self, tournament_id: int) -> records.TournamentView:
        view = records.tournament(self.hill.db, tournament_id)
        assert view is not None
        return view


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    hill = build_hill(tmp_path_factory.mktemp("hill") / "var", reference_programs()[:7])
    service = HillTournaments(hill)
    round_robin = service.create("round-robin", "hill", started_by="alice")
    service.run(round_robin)
    swiss = service.create("swiss", "hill", seed=3)
    service.run(swiss)
    running = service.create("swiss", "hill", seed=5)

    def crash(done: int, _total: int) -> None:
        if done >= 4:
            raise Stop

    with pytest.raises(Stop):
        service.run(running, crash)
    server = Server(hill)
    yield Site(hill, server, round_robin, swiss, running)
    server.stop()
    hill.close()


def query(**params: object) -> str:
    return urllib.parse.urlencode(params)


# pure parts, worked by hand


def test_the_sample_battle_is_the_first_that_went_the_matchs_way() -> None:
    outcomes = [0, -1, 1, 1, -1]
    assert sample_battle(outcomes, 5) == 2  # a won: its first win
    assert sample_battle(outcomes, -3) == 1  # a lost: its first loss
    assert sample_battle(outcomes, 0) == 0  # a draw: its first tie
    assert sample_battle([1, -1, 0], 0) == 2
    assert sample_battle([1, -1, 1, -1], 0) == 0  # a draw without ties: the first battle
    assert sample_battle(None, 7) == 0  # no stored joust
    # the same battle from the other side
    flipped = [-o for o in outcomes]
    assert sample_battle(flipped, -5) == sample_battle(outcomes, 5)


def test_bump_chart_of_three() -> None:
    """a, b, c; b beats a once c is gone; b wins."""
    stages = [["a", "b", "c"], ["b", "a"], ["b"]]
    chart = bump_chart.bump_chart(stages)
    x1, x2, x3 = 190, 226, 262  # NAMES_WIDTH + (stage - 1) * STEP_X (36)
    y1, y2, y3 = 24, 44, 64  # TOP + (rank - 1) * 20
    lines = {line.name: line for line in chart.lines}
    assert lines["a"].points == ((x1, y1), (x2, y2))
    assert lines["b"].points == ((x1, y2), (x2, y1), (x3, y1))
    assert lines["c"].points == ((x1, y3),)
    assert [lines[n].eliminated_at for n in "abc"] == [2, 3, 1]
    assert [lines[n].first_rank for n in "abc"] == [1, 2, 3]
    assert lines["b"].path == "190,44 226,24 262,24"
    assert lines["b"].end == (x3, y1)
    assert (chart.width, chart.height) == (x3 + 16, y3 + 10)
    assert chart.stage_ticks == ((x1, 1), (x2, 2), (x3, 3))
    assert chart.rank_ticks == ((y1, 1), (y2, 2), (y3, 3))
    assert chart.name_x == 182
    assert len({line.color for line in chart.lines}) == 3
    assert bump_chart.eliminations(stages) == [
        {"stage": 1, "name": "c", "place": 3},
        {"stage": 2, "name": "a", "place": 2},
        {"stage": 3, "name": "b", "place": 1},
    ]


def test_thumbnail_columns_and_shades() -> None:
    assert thumbnail.cell_columns(10).tolist() == [x // 6 for x in range(60)]
    assert thumbnail.cell_columns(30)[[0, 1, 2, 59]].tolist() == [0, 0, 1, 29]
    values = np.array([0, 1, 127, 128, 129, 255], dtype=np.uint8)
    # signed: 0, 1, 127, -128, -127, -1
    assert thumbnail.shades(values).tolist() == [255, 254, 57, 55, 57, 254]


# the JSON twins


def test_the_list_and_its_twin(site: Site) -> None:
    data = get(site.url + "/api/tournaments").json()["tournaments"]
    assert [t["id"] for t in data] == [site.running, site.swiss, site.round_robin]
    by_id = {t["id"]: t for t in data}
    rr, running = by_id[site.round_robin], by_id[site.running]
    assert rr["format"] == "round-robin" and rr["pool"] == "hill" and rr["entrants"] == 7
    assert rr["ended"] == "complete" and not rr["running"]
    assert rr["matches_committed"] == rr["matches_expected"] == 21
    assert rr["winner"] == site.view(site.round_robin).result["standings"][0]["name"]
    assert running["running"] and running["ended"] is None and running["winner"] is None
    summary = site.view(site.running).summary
    assert running["matches_committed"] == summary.matches_committed >= 3
    assert running["matches_expected"] == 9 and running["rounds_planned"] == 3
    page = get(site.url + "/tournaments")
    assert page.status == 200
    for t in data:
        assert f'href="/tournament/{t["id"]}"' in page.text
    assert "running" in page.text and "round-robin" in page.text


def test_a_round_robin_twin_is_the_result_unchanged_with_its_summary(site: Site) -> None:
    view = site.view(site.round_robin)
    data = get(f"{site.url}/api/tournament/{site.round_robin}").json()
    assert data["result"] == view.result
    assert data["programs"] == view.programs
    assert data["started_by"] == "alice"
    for field in ("id", "format", "pool", "entrants", "rounds_played", "matches_committed"):
        assert data[field] == getattr(view.summary, field)
    table = data["crosstable"]
    names = [row["name"] for row in view.result["standings"]]
    assert table["names"] == names
    margins = {(m["a"], m["b"]): m["margin"] for m in view.result["rounds"][0]["matches"]}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            cell = table["rows"][i][j]
            if i == j:
                assert cell is None
                continue
            assert cell["margin"] == margins.get((a, b), -margins.get((b, a), 0))
            assert table["rows"][j][i] == {**cell, "margin": -cell["margin"]}
    assert [e["name"] for e in data["eliminations"]] == [
        stage[-1] for stage in view.result["reality_show"]
    ]
    assert data["thumbnails"] and data["bump_chart"]


def test_each_sample_battle_went_the_way_of_its_match(site: Site) -> None:
    """Played again by the engine: the sample battle is the joust's first
    battle that went the match's way (its winner's, or a tie for a draw), or
    its first battle when none did."""
    view = site.view(site.round_robin)
    data = get(f"{site.url}/api/tournament/{site.round_robin}").json()
    codes = {code_hash(code): code for _, code in reference_programs()[:7]}
    compiled = {h: engine.compile_program(code) for h, code in codes.items()}
    matches = view.result["rounds"][0]["matches"]
    for match, sample in zip(matches, data["samples"][0], strict=True):
        left, right = compiled[view.programs[match["a"]]], compiled[view.programs[match["b"]]]
        outcomes = engine.joust(left, right).outcomes
        way = int(np.sign(match["margin"]))
        first = outcomes.index(way) if way in outcomes else 0
        assert (sample["tape"], sample["polarity"]) == engine.battle_config(first), (match, sample)
        battle = engine.trace(left, right, sample["tape"], sample["polarity"])
        assert battle.outcome == outcomes[first], (match, sample)


def test_a_swiss_twin_has_rounds_byes_and_every_criterion(site: Site) -> None:
    view = site.view(site.swiss)
    data = get(f"{site.url}/api/tournament/{site.swiss}").json()
    assert data["result"] == view.result and data["crosstable"] is None
    rounds = data["result"]["rounds"]
    assert len(rounds) == 3 and all(r["bye"] for r in rounds)  # 7 entrants: a bye a round
    assert [len(s) for s in data["samples"]] == [len(r["matches"]) for r in rounds]
    page = get(f"{site.url}/tournament/{site.swiss}").text
    for column in SWISS_COLUMNS:
        assert f"crit-{column}" in page, column
    for r in rounds:
        assert f'id="round-{r["number"]}"' in page
        bye = html_name(r["bye"])
        assert re.search(rf"bye: {re.escape(bye)}", page), r["bye"]


def html_name(name: str) -> str:
    """A name as `breakable` writes it."""
    return re.sub(r"([._])", r"\1<wbr>", name)


def test_a_running_tournament_shows_its_progress(site: Site) -> None:
    summary = site.view(site.running).summary
    assert summary.running and 0 < summary.matches_committed < summary.matches_expected
    page = get(f"{site.url}/tournament/{site.running}").text
    text = re.sub(r"<[^>]+>", "", page)
    assert f"Round {summary.rounds_played} of {summary.rounds_planned}" in text
    assert f"{summary.matches_committed} of {summary.matches_expected} matches committed" in text
    assert f'<progress max="9" value="{summary.matches_committed}"' in page


@pytest.mark.parametrize(
    ("path", "kind", "says"),
    [
        ("/tournament/999", "text/html", "there is no tournament 999"),
        ("/api/tournament/999", "application/json", "there is no tournament 999"),
        ("/tournament/abc", "text/html", "no tournament"),
        ("/tournament/-1", "text/html", "no tournament"),
        ("/tournament/1e3", "text/html", "no tournament"),
        ("/api/tournament/%C2%B2", "application/json", "no tournament"),
        ("/thumbnail", "text/html", "no code hash"),
        ("/thumbnail?" + query(left_code="0" * 64, right_code="1" * 64), "text/html", "no program"),
        ("/battle?" + query(left_code="<b>", right_code="x"), "text/html", "no code hash"),
        ("/api/trace?" + query(left_code="f" * 64, right_code="f" * 64), "application/json", ""),
    ],
)
def test_unknown_tournaments_and_codes_get_a_clear_404(
    site: Site, path: str, kind: str, says: str
) -> None:
    reply = get(site.url + path)
    assert reply.status == 404, path
    assert reply.headers["Content-Type"].startswith(kind)
    assert says in reply.text and "Traceback" not in reply.text


# battles by code hash


def sample_of(site: Site) -> tuple[str, str, int, str]:
    """The first crosstable cell's battle: left and right code, tape, polarity."""
    data = get(f"{site.url}/api/tournament/{site.round_robin}").json()
    names = data["crosstable"]["names"]
    cell = data["crosstable"]["rows"][0][1]
    left, right = data["programs"][names[0]], data["programs"][names[1]]
    return left, right, cell["tape"], cell["polarity"]


def test_the_thumbnail_is_a_picture_of_the_battle(site: Site) -> None:
    left, right, tape, polarity = sample_of(site)
    reply = get(
        f"{site.url}/thumbnail?"
        + query(left_code=left, right_code=right, tape=tape, polarity=polarity)
    )
    assert reply.status == 200 and reply.headers["Content-Type"] == "image/png"
    assert "immutable" in reply.headers["Cache-Control"]
    image = Image.open(io.BytesIO(reply.body))
    assert image.format == "PNG" and image.size == (60, 48) and image.mode == "RGB"
    pixels = np.asarray(image)
    # the first row is the tape at the start: both flags at 128 (dark), the
    # rest zero (white), the left pointer on cell 0, the right one on the last
    columns = thumbnail.cell_columns(tape)
    first = pixels[0]
    assert tuple(first[0]) == thumbnail.LEFT
    assert tuple(first[59]) == thumbnail.RIGHT
    assert tuple(first[1]) == (55, 55, 55)  # the left flag, beside its pointer
    middle = (columns > 0) & (columns < tape - 1)
    assert (first[middle] == 255).all()
    # the same picture the engine's battle makes
    codes = {code_hash(code): code for _, code in reference_programs()[:7]}
    battle = engine.trace(
        engine.compile_program(codes[left]), engine.compile_program(codes[right]), tape, polarity
    )
    assert np.array_equal(pixels, thumbnail.thumbnail_pixels(battle))


def test_the_battle_viewer_by_code_hashes(site: Site) -> None:
    left, right, tape, polarity = sample_of(site)
    params = query(left_code=left, right_code=right, tape=tape, polarity=polarity)
    codes = {code_hash(code): code for _, code in reference_programs()[:7]}
    expected = engine.trace(
        engine.compile_program(codes[left]), engine.compile_program(codes[right]), tape, polarity
    )
    assert same_battle(fetch_battle(f"{site.url}/api/trace?{params}"), expected)
    page = get(f"{site.url}/battle?{params}")
    assert page.status == 200
    names = {code_hash(code): name for name, code in reference_programs()[:7]}
    assert f"esohill.{names[left]}" in page.text and f"esohill.{names[right]}" in page.text
    assert f'data-left-source="/code/{left}"' in page.text
    assert f"/api/trace?left_code={left}" in page.text.replace("&amp;", "&")
    # the joust as stored scored this battle
    assert "their joust scored this battle as a" in page.text


def test_a_battle_by_code_outlives_the_programs_stay_on_the_hill(tmp_path: Path) -> None:
    programs = reference_programs()[:3]
    hill = build_hill(tmp_path / "var", programs)
    hill.withdraw("esohill", programs[0][0])
    server = Server(hill)
    try:
        left, right = code_hash(programs[0][1]), code_hash(programs[1][1])
        params = query(left_code=left, right_code=right, tape=12, polarity="kettle")
        page = get(f"{server.url}/battle?{params}")
        assert page.status == 200 and f"esohill.{programs[0][0]}" in page.text
        assert get(f"{server.url}/thumbnail?{params}").status == 200
        assert get(f"{server.url}/api/trace?{params}").json()["tape_length"] == 12
        # addressed by name, the withdrawn program is not on the hill
        name_params = query(left=f"esohill.{programs[0][0]}", right=f"esohill.{programs[1][0]}")
        assert get(f"{server.url}/battle?{name_params}").status == 404
        # no tournament yet: the list says so
        assert "No tournament yet" in get(f"{server.url}/tournaments").text
        assert get(f"{server.url}/api/tournaments").json() == {"tournaments": []}
    finally:
        server.stop()
        hill.close()


# in Chromium


def screenshot(driver: webdriver.Chrome, name: str) -> None:
    folder = os.environ.get("WEB_SCREENSHOTS")
    if folder:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        width = driver.execute_script("return window.innerWidth")
        driver.set_window_size(width, min(height + 100, 6000))
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


@pytest.mark.parametrize("size", [(1366, 900), (390, 844)], ids=["desktop", "phone"])
def test_pages_fit_the_screen(browser: webdriver.Chrome, site: Site, size) -> None:
    for name, path in [
        ("tournaments", "/tournaments"),
        ("round-robin", f"/tournament/{site.round_robin}"),
        ("swiss", f"/tournament/{site.swiss}"),
        ("running", f"/tournament/{site.running}"),
    ]:
        browser.set_window_size(*size)
        load(browser, site.url + path)
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 0, (path, size, overflow)
        assert console_errors(browser) == [], path
        screenshot(browser, f"tournament-{name}-{size[0]}")
    browser.set_window_size(1366, 900)


def test_the_crosstable_shows_every_battle_picture_and_scrolls_in_its_box_on_a_phone(
    browser: webdriver.Chrome, site: Site
) -> None:
    browser.set_window_size(390, 844)
    try:
        load(browser, f"{site.url}/tournament/{site.round_robin}")
        assert browser.execute_script(
            "const box = document.getElementById('crosstable').closest('.scroll');"
            " return box.scrollWidth > box.clientWidth"
        )
        images = browser.find_elements(By.CSS_SELECTOR, "#crosstable img")
        assert len(images) == 7 * 6
        assert all(img.get_attribute("loading") == "lazy" for img in images)
        for img in images:  # lazy: each comes as it is scrolled to
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
        WebDriverWait(browser, 30).until(
            lambda d: d.execute_script(
                "return Array.from(document.querySelectorAll('#crosstable img'))"
                ".every((i) => i.complete && i.naturalWidth === 60 && i.naturalHeight === 48)"
            )
        )
        # each cell links to its battle, which the viewer plays
        link = browser.find_element(By.CSS_SELECTOR, "#crosstable td a")
        href = link.get_attribute("href")
        assert "/battle?left_code=" in href
        load(browser, href)
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "cycles").text not in ("", "…")
        )
        assert console_errors(browser) == []
    finally:
        browser.set_window_size(1366, 900)


def test_standings_sort_and_the_bump_chart_draws_every_program(
    browser: webdriver.Chrome, site: Site
) -> None:
    load(browser, f"{site.url}/tournament/{site.round_robin}")
    headers = [
        h.get_attribute("class").split("crit-")[1].split()[0]
        for h in browser.find_elements(By.CSS_SELECTOR, "#standings th[class*='crit-']")
    ]
    assert headers == ROUND_ROBIN_COLUMNS
    losses = browser.find_element(By.CSS_SELECTOR, "#standings th.crit-losses button")
    losses.click()  # most losses first
    cells = browser.find_elements(By.CSS_SELECTOR, "#standings tbody td.crit-losses")
    values = [int(c.text) for c in cells]
    assert values == sorted(values, reverse=True)
    assert (
        browser.find_element(By.CSS_SELECTOR, "#standings th.crit-losses").get_attribute(
            "aria-sort"
        )
        == "descending"
    )
    lines = browser.find_elements(By.CSS_SELECTOR, "#bump-chart polyline")
    assert len(lines) == 7
    eliminated = browser.find_elements(By.CSS_SELECTOR, "ol.eliminations li")
    stages = site.view(site.round_robin).result["reality_show"]
    assert len(eliminated) == 7
    assert stages[-1][0] in eliminated[-1].text.replace("\n", "")


def test_every_tournament_answer_sends_the_security_headers(site: Site) -> None:
    left, right, tape, polarity = sample_of(site)
    battle = query(left_code=left, right_code=right, tape=tape, polarity=polarity)
    paths = [
        "/tournaments",
        "/api/tournaments",
        f"/tournament/{site.round_robin}",
        f"/api/tournament/{site.swiss}",
        f"/thumbnail?{battle}",
        f"/battle?{battle}",
        f"/api/trace?{battle}",
        "/static/tournament.css",
        "/static/tournament.js",
        "/tournament/0",
    ]
    for path in paths:
        reply = get(site.url + path)
        assert reply.status == (404 if path.endswith("/0") else 200), path
        for header, value in SECURITY_HEADERS.items():
            assert reply.headers.get(header) == value, (path, header)
