"""The web report in a real headless Chromium: what a player sees and clicks.

Set WEB_SCREENSHOTS=DIR to save a PNG of every page, desktop and phone sized.
"""

from __future__ import annotations

import os
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support.webhill import (
    Server,
    console_errors,
    css,
    load,
    longest_battle,
    reference_programs,
    shared_server,
)

from hill import engine

SIZES = {"desktop": (1366, 900), "phone": (390, 844)}


@pytest.fixture(scope="module")
def served() -> Server:
    return shared_server()


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def signed(value: int) -> str:
    return str(int(value) - 256 if value > 127 else int(value))


def test_standings_show_the_hill(browser: webdriver.Chrome, served: Server) -> None:
    standings = served.hill.queries.standings()
    load(browser, served.url + "/")
    rows = css(browser, "#standings tbody tr")
    assert len(rows) == 47
    top = standings.entries[0]
    first = rows[0]

    def cell(selector: str) -> str:
        return first.find_element(By.CSS_SELECTOR, selector).text

    assert cell("td.rank") == "1"
    assert top.program.name in cell("td.program")
    assert cell("td.owner") == top.program.owner
    assert cell("td.net") == f"+{top.points:.2f}"
    markov = css(browser, "#standings tbody tr:first-child td.ranking")
    assert [c.text for c in markov] == [f"{top.scores['markov']:.2f}"]
    ranking = css(browser, "#standings th.ranking")[0]
    assert "markov" in ranking.text.lower() and "★" in ranking.text
    # every column has its own label (the net points are not a second "points");
    # the statistics' columns are hidden until asked for (test_web_ladder.py)
    labels = [th.text for th in css(browser, "#standings thead tr:last-child th:not(.stat)")]
    assert len(labels) == len(set(labels)) == 12
    link = first.find_element(By.CSS_SELECTOR, "td.program a.source")
    assert link.get_attribute("href").endswith(
        f"/source/{quote(top.program.full_name)}?event={served.hill.queries.latest_state()[0]}"
    )
    assert console_errors(browser) == []


def column(driver: webdriver.Chrome, index: int) -> list[str]:
    """The standings' column `index` as shown, top to bottom (sort keys where given)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#standings tbody tr'),"
        " (row) => row.cells[arguments[0]].dataset.value ?? row.cells[arguments[0]].innerText)",
        index,
    )


def header(driver: webdriver.Chrome, label: str):
    return next(
        th for th in css(driver, "#standings thead tr:last-child th") if th.text.startswith(label)
    )


def test_sorting_by_a_column(browser: webdriver.Chrome, served: Server) -> None:
    load(browser, served.url + "/")
    net = header(browser, "NET")
    index = int(net.get_attribute("cellIndex"))
    net.find_element(By.TAG_NAME, "button").click()
    values = [float(v) for v in column(browser, index)]
    assert values == sorted(values, reverse=True) and values != [
        float(v) for v in column(browser, index)[::-1]
    ]
    assert net.get_attribute("aria-sort") == "descending"
    net.find_element(By.TAG_NAME, "button").click()
    assert [float(v) for v in column(browser, index)] == sorted(values)
    program = header(browser, "PROGRAM")
    program.find_element(By.TAG_NAME, "button").click()
    names = [n.lower() for n in column(browser, int(program.get_attribute("cellIndex")))]
    assert names == sorted(names)
    header(browser, "RANK").find_element(By.TAG_NAME, "button").click()
    assert [int(v) for v in column(browser, 0)] == list(range(1, 48))
    # points order is not rank order on this hill, so the sort did something
    assert values != [e.points for e in served.hill.queries.standings().entries]


def test_a_matrix_click_opens_the_pair(browser: webdriver.Chrome, served: Server) -> None:
    standings = served.hill.queries.standings()
    load(browser, served.url + "/matrix")
    a, b = 2, 6  # rows and columns in rank order
    cell = css(browser, "#matrix tbody tr")[a].find_elements(By.CSS_SELECTOR, "td")[b]
    margin = standings.margin(a, b)
    left, right = standings.entries[a].program.full_name, standings.entries[b].program.full_name
    ActionChains(browser).move_to_element(cell).perform()
    info = css(browser, "#matrix-info")[0].text
    assert f"{left} vs {right}" in info and info.endswith("click for the 42 battles")
    assert cell.get_attribute("class").startswith("w" if margin > 0 else "l" if margin else "t")
    cell.find_element(By.TAG_NAME, "a").click()
    WebDriverWait(browser, 10).until(lambda d: "/vs/" in d.current_url)
    path = urllib.parse.urlparse(browser.current_url).path
    assert urllib.parse.unquote(path) == f"/program/{left}/vs/{right}"
    score = css(browser, "#pair-score")[0].text.replace("\u2212", "-")
    assert int(score) == margin
    cells = css(browser, "#battles a.cell")
    assert len(cells) == 42
    expected = ["W" if o == 1 else "L" if o == -1 else "·" for o in standings.outcomes[a, b]]
    assert [c.text for c in cells] == expected
    assert console_errors(browser) == []


def test_the_battle_viewer_plays_the_engines_battle(
    browser: webdriver.Chrome, served: Server
) -> None:
    standings = served.hill.queries.standings()
    a, b, tape, polarity = 0, 1, 12, "kettle"
    left, right = standings.entries[a].program, standings.entries[b].program
    codes = dict(reference_programs())
    battle = engine.trace(
        engine.compile_program(codes[left.name]),
        engine.compile_program(codes[right.name]),
        tape,
        polarity,
    )
    assert battle.outcome != 0 and battle.cycles > 10  # a decisive battle
    # from the pair's page, through the link of that battle
    load(browser, f"{served.url}/program/{quote(left.full_name)}/vs/{quote(right.full_name)}")
    link = next(
        c
        for c in css(browser, "#battles a.cell")
        if c.get_attribute("title").startswith(f"tape {tape} {polarity}:")
    )
    link.click()
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready")
    )
    assert css(browser, "#cycles")[0].text == str(battle.cycles)
    for _ in range(3):
        browser.find_element(By.ID, "step").click()
    assert browser.find_element(By.ID, "cycle").text == "3"
    values = [v.text for v in css(browser, "#tape .v")]
    assert values == [signed(v) for v in battle.tapes[3]]
    markers = [c.text for c in css(browser, "#tape .p.l")]
    assert markers.index("▼") == battle.left_pointer[3]
    mark = css(browser, "#left-source mark")[0].text
    assert mark == chr(left_code := codes[left.name][battle.left_source[3]]) and left_code
    assert browser.find_element(By.ID, "outcome").text == ""
    # the overview: the pointers drawn where the engine had them, halfway through
    x = 480
    k = round(x * battle.cycles / 959)
    band = 120 // tape
    pixel = browser.execute_script(
        "return Array.from(document.getElementById('overview').getContext('2d')"
        ".getImageData(arguments[0], arguments[1], 1, 1).data)",
        x,
        int(battle.right_pointer[k]) * band,
    )
    assert pixel == [234, 88, 12, 255]  # orange, the right program's pointer
    # a window of the source, not the whole (300 KB for space_hotel)
    assert len(codes[right.name]) > 100_000
    assert len(browser.find_element(By.ID, "right-source").text) < 2000
    browser.find_element(By.ID, "end").click()
    assert browser.find_element(By.ID, "cycle").text == str(battle.cycles)
    assert browser.find_element(By.ID, "outcome").text == battle.summary()
    final = [v.text for v in css(browser, "#tape .v")]
    assert final == [signed(v) for v in battle.tapes[-1]]
    # a click on the overview goes to that cycle
    overview = browser.find_element(By.ID, "overview")
    ActionChains(browser).move_to_element(overview).click().perform()
    middle = int(browser.find_element(By.ID, "cycle").text)
    assert abs(middle - battle.cycles / 2) <= battle.cycles / 100 + 1
    # seeking with the slider
    browser.execute_script(
        "const s = document.getElementById('seek'); s.value = 5;"
        "s.dispatchEvent(new Event('input'));"
    )
    assert browser.find_element(By.ID, "cycle").text == "5"
    assert [v.text for v in css(browser, "#tape .v")] == [signed(v) for v in battle.tapes[5]]
    assert console_errors(browser) == []


def test_a_battle_of_100000_cycles_loads_fast(browser: webdriver.Chrome, served: Server) -> None:
    left, right, tape, polarity, battle = longest_battle(served.hill.queries.standings())
    start = time.perf_counter()
    load(
        browser,
        f"{served.url}/battle?left={quote(left)}&right={quote(right)}"
        f"&tape={tape}&polarity={polarity}",
    )
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready")
    )
    print(f"{battle.cycles} cycles: viewer ready in {time.perf_counter() - start:.2f} s")
    browser.find_element(By.ID, "end").click()
    # the last piece is fetched when it is wanted
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "viewer").get_attribute("data-loading") is None
    )
    assert browser.find_element(By.ID, "cycle").text == str(battle.cycles)
    assert browser.find_element(By.ID, "outcome").text == battle.summary()
    assert [v.text for v in css(browser, "#tape .v")] == [signed(v) for v in battle.tapes[-1]]
    # only the pieces looked at came: the first and the last
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter((e) => e.name.includes('/api/trace')).map((e) => e.name)"
    )
    assert len(fetched) == 2 and fetched[1].endswith("&from=100000"), fetched
    # seek into a piece not yet there, then step across into the next one
    browser.execute_script(
        "const s = document.getElementById('seek'); s.value = 19995;"
        "s.dispatchEvent(new Event('input'));"
    )
    for cycle in (19995, *range(19996, 20006)):
        if cycle > 19995:
            browser.find_element(By.ID, "step").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_element(By.ID, "viewer").get_attribute("data-loading") is None
        )
        assert browser.find_element(By.ID, "cycle").text == str(cycle)
        assert [v.text for v in css(browser, "#tape .v")] == [
            signed(v) for v in battle.tapes[cycle]
        ], cycle
        markers = [c.text for c in css(browser, "#tape .p.r")]
        assert markers.index("▲") == battle.right_pointer[cycle]
    assert console_errors(browser) == []


def test_history_opens_past_states_and_charts(browser: webdriver.Chrome, served: Server) -> None:
    load(browser, served.url + "/history")
    rows = css(browser, "#history tbody tr")
    assert len(rows) == 47
    first = rows[-1]
    name = first.find_element(By.CSS_SELECTOR, ".what a").text
    first.find_element(By.CSS_SELECTOR, "td a").click()
    WebDriverWait(browser, 10).until(lambda d: "event=" in d.current_url)
    assert len(css(browser, "#standings tbody tr")) == 1
    assert "A past state." in browser.find_element(By.CLASS_NAME, "state").text
    load(browser, f"{served.url}/history/{quote(name)}")
    line = css(browser, ".rank-chart polyline")[0].get_attribute("points")
    assert len(line.split()) == 47
    assert len(css(browser, ".score-chart circle")) == 47
    assert console_errors(browser) == []


def pages(served: Server) -> dict[str, str]:
    standings = served.hill.queries.standings()
    top, second = (quote(e.program.full_name) for e in standings.entries[:2])
    return {
        "standings": "/",
        "matrix": "/matrix",
        "breakdown": f"/program/{top}",
        "pair": f"/program/{top}/vs/{second}",
        "battle": f"/battle?left={top}&right={second}&tape=20&polarity=sieve",
        "history": "/history",
        "chart": f"/history/{top}",
        "ladder": "/ladder",
        "not-found": "/program/nobody.nothing",
    }


@pytest.mark.parametrize("size", SIZES)
def test_every_page_fits_and_runs_cleanly(
    browser: webdriver.Chrome, served: Server, size: str
) -> None:
    """No script or CSP error, and no sideways scrolling of the page itself
    (wide tables scroll inside their own box)."""
    shots = os.environ.get("WEB_SCREENSHOTS")
    browser.set_window_size(*SIZES[size])
    try:
        for name, path in pages(served).items():
            load(browser, served.url + path)
            if name == "battle":
                WebDriverWait(browser, 20).until(
                    lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready")
                )
            errors = console_errors(browser)
            if name == "not-found":
                assert len(errors) == 1 and "404" in errors[0]
            else:
                assert errors == [], name
            overflow = browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, (name, size, overflow)
            if shots:
                Path(shots).mkdir(parents=True, exist_ok=True)
                browser.save_screenshot(str(Path(shots) / f"{size}-{name}.png"))
    finally:
        browser.set_window_size(*SIZES["desktop"])


# Where elements are drawn, measured against the viewport and the box that
# clips them (a table scrolls sideways inside its own box).
BOXES = """
const clip = (el) => {
  const box = el.closest('.scroll');
  const right = box ? box.getBoundingClientRect().right : window.innerWidth;
  return Math.min(right, window.innerWidth);
};
const inView = (el) => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.left >= 0 && r.right <= clip(el) + 0.5;
};
"""


def in_view(driver: webdriver.Chrome, selector: str) -> list[bool]:
    """For each element the selector finds: drawn wholly within what can be
    seen without scrolling sideways."""
    return driver.execute_script(
        BOXES + "return Array.from(document.querySelectorAll(arguments[0]), inView);", selector
    )


def shown(driver: webdriver.Chrome, selector: str) -> bool:
    return driver.execute_script(
        "const el = document.querySelector(arguments[0]);"
        "return el !== null && el.getBoundingClientRect().height > 0;",
        selector,
    )


@pytest.fixture
def phone(browser: webdriver.Chrome) -> Iterator[webdriver.Chrome]:
    browser.set_window_size(*SIZES["phone"])
    assert browser.execute_script("return window.innerWidth") == SIZES["phone"][0]
    yield browser
    browser.set_window_size(*SIZES["desktop"])


def test_a_phone_shows_the_scores_and_says_the_rest_scrolls(
    phone: webdriver.Chrome, served: Server
) -> None:
    load(phone, served.url + "/")
    for column in ("td.rank", "td.program a:first-child", "td.net", "td.ranking"):
        assert all(in_view(phone, f"#standings tbody tr {column}")), column
    # the other columns are there, beyond the edge, and a hint says so
    assert not in_view(phone, "#standings tbody tr:first-child td.owner")[0]
    assert shown(phone, ".scroll-hint") and all(in_view(phone, ".scroll-hint"))
    # the hint scrolls the table's own box, never the page
    assert phone.execute_script("return document.documentElement.scrollWidth") <= 390
    # on a desktop, everything fits and there is nothing to hint at
    phone.set_window_size(*SIZES["desktop"])
    load(phone, served.url + "/")
    assert all(in_view(phone, "#standings thead tr:last-child th:not(.stat)"))
    assert not shown(phone, ".scroll-hint")


def test_a_phone_shows_whole_names_in_the_matrix(phone: webdriver.Chrome, served: Server) -> None:
    load(phone, served.url + "/matrix")
    names = [e.program.full_name for e in served.hill.queries.standings().entries]
    links = css(phone, "#matrix th.name a")
    assert [link.text.replace("\n", "") for link in links] == names
    assert all(in_view(phone, "#matrix th.name a"))
    # nothing cut: every name's cell holds all of it
    assert phone.execute_script(
        "return Array.from(document.querySelectorAll('#matrix tbody th.name'),"
        " (th) => th.scrollWidth <= th.clientWidth && th.scrollHeight <= th.clientHeight)"
    ) == [True] * len(names)


@pytest.mark.parametrize("tape", [12, 30])
@pytest.mark.parametrize("size", SIZES)
def test_the_tape_shows_both_flags(
    browser: webdriver.Chrome, served: Server, size: str, tape: int
) -> None:
    browser.set_window_size(*SIZES[size])
    try:
        load(browser, f"{served.url}/battle?tape={tape}&polarity=kettle")
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready")
        )
        cells = css(browser, "#tape .c")
        assert len(cells) == tape
        flags = in_view(browser, "#tape .c.flag")
        assert flags == [True, True], (size, tape)
        assert all(in_view(browser, "#tape .c"))  # and every cell between
    finally:
        browser.set_window_size(*SIZES["desktop"])
